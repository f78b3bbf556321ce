"""The bounded-memory conformal quantiles equal the order statistics of the full matrix."""

import numpy as np
import pytest

from skframe.uncertainty._quantiles import FoldResiduals, lower_rank, split_quantile, upper_rank
from tests.naive import naive_cv_plus


@pytest.mark.parametrize("K", [2, 5, 37])
@pytest.mark.parametrize("alpha", [0.1, 0.05, 0.5])
def test_bisection_and_partition_equal_the_sorted_matrix(K, alpha):
    rng = np.random.default_rng(K)
    n, c = 203, 57
    fold_of = rng.permutation(np.arange(n) % K)
    R = np.abs(rng.standard_t(3, size=n)) * 10.0 ** rng.uniform(-3, 3)
    P = rng.normal(size=(K, c)) * 100
    ref_lo, ref_hi = naive_cv_plus(P, R, fold_of, alpha)
    res = FoldResiduals(R, fold_of, K)
    for method in ("bisect", "partition"):
        lo, hi = res.bounds(P, alpha, method=method, budget_bytes=8 * n * 5)
        np.testing.assert_allclose(lo, ref_lo, rtol=1e-12, atol=1e-12 * np.abs(P).max())
        np.testing.assert_allclose(hi, ref_hi, rtol=1e-12, atol=1e-12 * np.abs(P).max())


def test_ties_negative_values_and_empty_folds():
    fold_of = np.array([0, 0, 1, 1, 1, 0, 3, 3])  # fold 2 is empty
    R = np.array([1.0, 1.0, 0.0, 2.0, 2.0, 0.5, 0.0, 3.0])
    P = np.array([[-1.0, 0.0, 5.0], [-2.0, -0.0, 1e-300], [9.0, 9.0, 9.0], [-3.0, 1.0, -1e300]])
    ref_lo, ref_hi = naive_cv_plus(P, R, fold_of, 0.3)
    lo, hi = FoldResiduals(R, fold_of, 4).bounds(P, 0.3, method="bisect")
    np.testing.assert_array_equal(lo, ref_lo)
    np.testing.assert_array_equal(hi, ref_hi)


def test_ranks_and_split_quantile():
    assert lower_rank(0.1, 9) == 1 and upper_rank(0.1, 9) == 9
    assert lower_rank(0.1, 8) == 0 and upper_rank(0.1, 8) == 9
    S = np.arange(1.0, 20.0)[::-1]
    assert split_quantile(S, 0.1)[0] == 18.0  # ceil(0.9 * 20) = 18th smallest
    assert np.isinf(split_quantile(S[:5], 0.1)[0])
    lo, hi = FoldResiduals(S[:5], np.zeros(5, int), 1).bounds(np.zeros((1, 2)), 0.1)
    assert np.all(np.isinf(lo)) and np.all(np.isinf(hi))
