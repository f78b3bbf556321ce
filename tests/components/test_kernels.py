"""Built-in kernels (plugins/skframe_kernels) against the plain formulas of tests/naive.py."""

import json

import numpy as np
import pytest
import scipy.sparse as sp

import skframe_kernels._gram_ops as kmod
from skframe.exceptions import InvalidInputError, InvalidParameterError
from skframe.plugin.api import get_tags
from skframe_kernels import (
    CosineKernel,
    GaussianKernel,
    GaussianTanimotoKernel,
    LaplacianKernel,
    LinearKernel,
    PolynomialKernel,
    PrecomputedKernel,
    TanimotoKernel,
)
from tests import naive

RTOL = 1e-10

# (kernel factory, naive formula, needs non-negative data)
CASES = {
    "gaussian": (lambda: GaussianKernel(gamma=0.3), lambda X, Y: naive.naive_gaussian(X, Y, 0.3), False),
    "laplacian": (lambda: LaplacianKernel(gamma=0.2), lambda X, Y: naive.naive_laplacian(X, Y, 0.2), False),
    "linear": (LinearKernel, naive.naive_linear, False),
    "polynomial": (
        lambda: PolynomialKernel(gamma=0.5, coef0=1.5, degree=3),
        lambda X, Y: naive.naive_polynomial(X, Y, 0.5, 1.5, 3),
        False,
    ),
    "cosine": (CosineKernel, naive.naive_cosine, False),
    "tanimoto": (TanimotoKernel, naive.naive_tanimoto, False),
    "tanimoto-minmax": (lambda: TanimotoKernel(variant="minmax"), naive.naive_tanimoto_minmax, True),
    "gaussian-tanimoto": (
        lambda: GaussianTanimotoKernel(gamma=0.7),
        lambda X, Y: naive.naive_gaussian_tanimoto(X, Y, 0.7),
        False,
    ),
    "gaussian-tanimoto-minmax": (
        lambda: GaussianTanimotoKernel(gamma=0.7, variant="minmax"),
        lambda X, Y: naive.naive_gaussian_tanimoto(X, Y, 0.7, "minmax"),
        True,
    ),
}
NAMES = sorted(CASES)


def _data(rng, n, d, nonneg, density=0.4):
    """Sparse-ish data with a few all-zero rows (the 0/0 conventions are exercised)."""
    X = rng.standard_normal((n, d)) * (rng.random((n, d)) < density)
    if nonneg:
        X = np.abs(X) * 3.0
    X[::7] = 0.0
    return X


def _close(A, B):
    np.testing.assert_allclose(A, B, rtol=RTOL, atol=RTOL * max(1.0, np.abs(B).max()))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("d", [3, 45])  # 45 > DIRECT_MAX_FEATURES: the BLAS path of the Gaussian
def test_matches_naive_dense_and_sparse(name, d, rng, engine):
    factory, formula, nonneg = CASES[name]
    X, Y = _data(rng, 23, d, nonneg), _data(rng, 17, d, nonneg)
    k = factory()
    ref = formula(X, Y)
    K = k(X, Y)
    assert K.dtype == np.float64 and K.shape == (23, 17) and K.flags.c_contiguous
    _close(K, ref)
    _close(k(sp.csr_matrix(X), sp.csr_matrix(Y)), K)
    _close(k(sp.csr_matrix(X), Y), K)
    _close(k(X, sp.csr_matrix(Y)), K)


@pytest.mark.parametrize("name", NAMES)
def test_chunked_blocks_match_naive(name, rng, monkeypatch, engine):
    """A tiny chunk budget forces many row chunks in every sparse product."""
    monkeypatch.setattr(kmod, "GRAM_CHUNK_ELEMENTS", 50)
    factory, formula, nonneg = CASES[name]
    X, Y = _data(rng, 61, 6, nonneg), _data(rng, 13, 6, nonneg)
    ref = formula(X, Y)
    _close(factory()(sp.csr_matrix(X), sp.csr_matrix(Y)), ref)
    _close(factory()(sp.csr_matrix(X), Y), ref)


def test_direct_and_blas_gaussian_paths_agree(rng, monkeypatch, engine):
    X, Y = rng.standard_normal((40, 8)), rng.standard_normal((1100, 8))  # > one 512-column tile
    k = GaussianKernel(gamma=0.05)
    direct = k(X, Y)
    monkeypatch.setattr(kmod, "DIRECT_MAX_FEATURES", 0)
    _close(k(X, Y), direct)
    _close(direct, naive.naive_gaussian(X, Y, 0.05))


def test_gaussian_matches_sklearn(rng):
    from sklearn.metrics.pairwise import rbf_kernel

    X, Y = rng.standard_normal((30, 5)), rng.standard_normal((20, 5))
    _close(GaussianKernel(gamma=0.4)(X, Y), rbf_kernel(X, Y, gamma=0.4))


def test_exponential_tail_and_underflow():
    """Tiny kernel values keep full relative accuracy; deep underflow gives exactly 0."""
    X = np.array([[0.0], [0.0]])
    Y = np.array([[0.0], [1.0], [10.0], [26.0], [30.0], [1e3]])
    K = GaussianKernel(gamma=1.0)(X, Y)
    ref = np.exp(-(Y[:, 0] ** 2))
    keep = ref > 1e-300
    np.testing.assert_allclose(K[0, keep], ref[keep], rtol=1e-14)
    assert np.all(K[:, ~keep] < 1e-300) and K[0, -1] == 0.0


@pytest.mark.parametrize("name", NAMES)
def test_symmetric_psd_and_diag(name, rng, engine):
    factory, _, nonneg = CASES[name]
    X = _data(rng, 25, 4, nonneg, density=0.8)
    k = factory()
    K = k(X)
    np.testing.assert_allclose(K, K.T, rtol=1e-12, atol=1e-12)
    ev = np.linalg.eigvalsh(K)
    assert ev.min() >= -1e-8 * ev.max()
    _close(k.diag(X), np.diag(K))
    _close(k.diag(sp.csr_matrix(X)), np.diag(K))
    if get_tags(k).normalized:
        assert np.all(np.diag(K) == 1.0)


@pytest.mark.parametrize("name", NAMES)
def test_params_roundtrip_through_json(name):
    k = CASES[name][0]()
    params = json.loads(json.dumps(k.params))
    assert type(k)(**params) == k


def test_normalized_tags():
    for cls in (GaussianKernel, LaplacianKernel, CosineKernel, TanimotoKernel, GaussianTanimotoKernel):
        assert get_tags(cls).normalized and get_tags(cls()).normalized
    assert not get_tags(LinearKernel).normalized and not get_tags(PolynomialKernel()).normalized


@pytest.mark.parametrize(
    "factory, match",
    [
        (lambda: GaussianKernel(gamma=-1.0), r"gamma=-1\.0 .*bandwidth"),
        (lambda: GaussianKernel(gamma=0), "gamma=0"),
        (lambda: GaussianKernel(gamma="big"), "gamma='big'"),
        (lambda: GaussianKernel(gamma=float("nan")), "gamma=nan"),
        (lambda: LaplacianKernel(gamma=-2), "gamma=-2"),
        (lambda: PolynomialKernel(degree=0), "degree=0"),
        (lambda: PolynomialKernel(degree=2.5), "degree=2.5"),
        (lambda: PolynomialKernel(coef0=-1.0), "coef0=-1.0"),
        (lambda: PolynomialKernel(gamma=0.0), "gamma=0.0"),
        (lambda: TanimotoKernel(variant="jaccard"), "variant='jaccard'"),
        (lambda: GaussianTanimotoKernel(gamma=-0.5), "gamma=-0.5"),
        (lambda: PrecomputedKernel(gram=np.ones((2, 3))), r"\(2, 3\)"),
        (lambda: PrecomputedKernel(gram="/nonexistent/gram.npy"), "nonexistent"),
    ],
)
def test_bad_params_raise(factory, match):
    with pytest.raises(InvalidParameterError, match=match):
        factory()


@pytest.mark.parametrize("name", NAMES)
def test_bad_inputs_raise(name, rng):
    k = CASES[name][0]()
    X = np.abs(rng.standard_normal((5, 3)))
    bad = X.copy()
    bad[1, 2] = np.nan
    with pytest.raises(InvalidInputError, match="NaN"):
        k(bad, X)
    with pytest.raises(InvalidInputError, match="NaN"):
        k(X, sp.csr_matrix(bad))
    with pytest.raises(InvalidInputError, match="features"):
        k(X, np.ones((4, 2)))
    with pytest.raises(InvalidInputError, match="features"):
        k(sp.csr_matrix(X), sp.csr_matrix(np.ones((4, 2))))
    with pytest.raises(InvalidInputError):
        k(np.ones(3))


def test_minmax_rejects_negative_counts():
    with pytest.raises(InvalidInputError, match="non-negative"):
        TanimotoKernel(variant="minmax")(np.array([[1.0, -1.0]]))


def test_binary_fingerprints_tanimoto_is_jaccard(rng):
    X = (rng.random((12, 30)) < 0.3).astype(float)
    A = X.astype(bool)
    jac = np.array([[(a & b).sum() / max((a | b).sum(), 1) for b in A] for a in A])
    jac[np.ix_(~A.any(1), ~A.any(1))] = 1.0
    _close(TanimotoKernel()(X), jac)
    _close(TanimotoKernel(variant="minmax")(sp.csr_matrix(X)), jac)


def test_precomputed(tmp_path, rng):
    Z = rng.standard_normal((6, 3))
    G = Z @ Z.T
    k = PrecomputedKernel(gram=G)
    ia, ib = np.array([[3], [0], [5]]), np.array([[1, 9.0], [3, 9.0]])  # extra columns are ignored
    np.testing.assert_array_equal(k(ia, ib[:, :1]), G[np.ix_([3, 0, 5], [1, 3])])
    np.testing.assert_array_equal(k(ia), G[np.ix_([3, 0, 5], [3, 0, 5])])
    np.testing.assert_array_equal(k.diag(ia), G[[3, 0, 5], [3, 0, 5]])
    np.testing.assert_array_equal(k(sp.csr_matrix(ia.astype(float)), ib), G[np.ix_([3, 0, 5], [1, 3])])
    path = tmp_path / "gram.npy"
    np.save(path, G)
    kp = PrecomputedKernel(gram=str(path))
    assert kp.params == {"gram": str(path)}
    np.testing.assert_array_equal(kp(ia), k(ia))
    rebuilt = PrecomputedKernel(**json.loads(json.dumps(k.params)))
    np.testing.assert_array_equal(rebuilt(ia), k(ia))
    for bad in ([[6]], [[-1]], [[1.5]]):
        with pytest.raises(InvalidInputError, match="sample id"):
            k(np.array(bad, dtype=float))


def test_registry_finds_the_kernels():
    from skframe.contract.registry import get_kernel

    k = get_kernel("rbf", gamma=0.5)
    assert isinstance(k, GaussianKernel) and k.gamma == 0.5
    assert isinstance(get_kernel("gaussian"), GaussianKernel)
    expected = {
        "laplacian": LaplacianKernel,
        "linear": LinearKernel,
        "polynomial": PolynomialKernel,
        "cosine": CosineKernel,
        "tanimoto": TanimotoKernel,
        "gaussian-tanimoto": GaussianTanimotoKernel,
    }
    for name, cls in expected.items():
        assert isinstance(get_kernel(name), cls)
    assert isinstance(get_kernel("precomputed", gram=np.eye(2)), PrecomputedKernel)


# sparse path via X @ Y.T
_CROSS_NAMES = ["gaussian", "linear", "polynomial", "cosine", "tanimoto", "gaussian-tanimoto"]


@pytest.mark.parametrize("name", _CROSS_NAMES)
@pytest.mark.parametrize("tile", [None, 50, 1])  # one dense tile of Y.T / several / one row of Y per tile
@pytest.mark.parametrize("densify", [True, False])  # CSR x dense tiles, or scipy's sparse product
def test_sparse_cross_paths_match_naive(name, tile, densify, rng, monkeypatch, engine):
    """CSR x dense-tile kernels (both orientations, chunked tiles) and the scipy fallback against naive."""
    if tile is not None:
        monkeypatch.setattr(kmod, "DENSE_TILE_ELEMENTS", tile * 40)  # d = 40: `tile` rows of Y per tile
    monkeypatch.setattr(kmod, "DENSIFY_MIN_DENSITY", 0.0 if densify else 2.0)
    factory, formula, nonneg = CASES[name]
    k = factory()
    big, small = _data(rng, 300, 40, nonneg, density=0.1), _data(rng, 37, 40, nonneg, density=0.3)
    for X, Y in ((big, small), (small, big)):  # k(X_chunk, X_sub) and k(X_sub, X_chunk)
        ref = formula(X, Y)
        for A, B in ((sp.csr_matrix(X), sp.csr_matrix(Y)), (sp.csr_matrix(X), Y), (X, sp.csr_matrix(Y))):
            K = k(A, B)
            assert K.shape == ref.shape and K.flags.c_contiguous
            _close(K, ref)
    S = sp.csr_matrix(big)
    _close(k(S), formula(big, big))  # symmetric Gram of a sparse matrix


@pytest.mark.parametrize("name", _CROSS_NAMES)
@pytest.mark.parametrize("max_density", [0.0, 1.0])  # never / always treat a mostly-zero dense X as CSR
def test_mostly_zero_dense_input_as_csr_matches_naive(name, max_density, rng, monkeypatch, engine):
    monkeypatch.setattr(kmod, "SPARSIFY_MAX_DENSITY", max_density)
    factory, formula, nonneg = CASES[name]
    X, Y = _data(rng, 50, 60, nonneg, density=0.03), _data(rng, 29, 60, nonneg, density=0.5)
    k = factory()
    _close(k(X, Y), formula(X, Y))
    _close(k(X), formula(X, X))


def test_sparse_gaussian_with_chunked_tiles_on_skewed_columns(rng, monkeypatch, engine):
    """Long CSR rows (> 4 non-zeros, the unrolled sweep) and a tile boundary inside the output columns."""
    monkeypatch.setattr(kmod, "DENSE_TILE_ELEMENTS", 7 * 200)
    X = rng.standard_normal((90, 200)) * (rng.random((90, 200)) < rng.random(200) * 0.6)
    Y = rng.standard_normal((1500, 200)) * (rng.random((1500, 200)) < 0.2)  # > 1024 output columns per tile
    ref = naive.naive_gaussian(X, Y, 0.01)
    _close(GaussianKernel(gamma=0.01)(sp.csr_matrix(X), sp.csr_matrix(Y)), ref)
    monkeypatch.setattr(kmod, "DENSE_TILE_ELEMENTS", 1 << 23)
    _close(GaussianKernel(gamma=0.01)(sp.csr_matrix(X), sp.csr_matrix(Y)), ref)
    _close(GaussianKernel(gamma=0.01)(sp.csr_matrix(X), Y), ref)
