"""The weighted outer product against its plain NumPy formula."""

import numpy as np
import pytest

from skframe.core.linalg import weighted_gram, weighted_outer


@pytest.mark.parametrize("case", ["positive", "zeros", "negative", "one_column", "float32"])
def test_weighted_outer_equals_the_plain_product(case):
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(300, 1 if case == "one_column" else 40))
    c = rng.uniform(0.0, 2.0, size=300)
    if case == "zeros":
        c[::3] = 0.0
    if case == "negative":  # an off-diagonal block of a multinomial Hessian: the general product
        c -= 1.0
    if case == "float32":
        Z = Z.astype(np.float32)
    got = weighted_outer(Z, c)
    want = Z.astype(np.float64).T @ (Z.astype(np.float64) * c[:, None])
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * np.abs(want).max())
    if case != "negative":  # syrk's mirrored triangle: exactly symmetric
        np.testing.assert_array_equal(got, got.T)


def test_weighted_gram_sums_its_blocks():
    rng = np.random.default_rng(1)
    Z, Y, w = rng.normal(size=(250, 12)), rng.normal(size=(250, 2)), rng.uniform(0.0, 3.0, size=250)
    blocks = [(s, Z[s:s + 64], Y[s:s + 64]) for s in range(0, 250, 64)]
    A, B = weighted_gram(blocks, w, 12, 2)
    np.testing.assert_allclose(A, Z.T @ (Z * w[:, None]), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(B, Z.T @ (Y * w[:, None]), rtol=1e-12, atol=1e-12)


def test_weighted_outer_of_no_rows_is_zero():
    assert np.array_equal(weighted_outer(np.zeros((0, 5)), np.zeros(0)), np.zeros((5, 5)))
