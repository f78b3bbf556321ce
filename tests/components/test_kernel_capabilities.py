"""Kernel capabilities: gamma="scale", prepare, matvec, block_bytes, float32, spectral samplers."""

import json

import numpy as np
import pytest
import scipy.sparse as sp

from skframe.exceptions import InvalidParameterError
from skframe.options import ComputeOptions
from skframe.plugin.api import get_tags, kernel_prepare
from skframe.plugin.toolbox import kernel_matvec
from skframe_kernels import (
    CosineKernel,
    GaussianKernel,
    GaussianTanimotoKernel,
    LaplacianKernel,
    LinearKernel,
    PolynomialKernel,
    TanimotoKernel,
)
from tests import naive


def _sparse_data(rng, n=40, d=7, density=0.3):
    return rng.standard_normal((n, d)) * 3.0 * (rng.random((n, d)) < density) + 0.5


@pytest.mark.parametrize(
    "cls, formula",
    [(GaussianKernel, naive.naive_scale_gamma_gaussian), (LaplacianKernel, naive.naive_scale_gamma_laplacian)],
)
def test_scale_gamma_matches_formula_dense_and_sparse(cls, formula, rng):
    X = rng.standard_normal((30, 5)) * 4.0 + 1.0
    k = cls()
    assert k.params == {"gamma": "scale"}
    prepared = k.prepare(X)
    assert prepared is not k and k.gamma == "scale"
    assert prepared.params["gamma"] == pytest.approx(formula(X), rel=1e-12)
    Xs = _sparse_data(rng) * (rng.random((40, 7)) < 0.4)
    assert cls().prepare(sp.csr_matrix(Xs)).gamma == pytest.approx(formula(Xs), rel=1e-12)
    assert prepared.prepare(X * 10) is prepared  # numeric gamma: prepare is a no-op


def test_scale_gamma_matches_sklearn_svc(rng):
    svm = pytest.importorskip("sklearn.svm")
    X = rng.standard_normal((25, 4)) * 2.0
    y = (X[:, 0] > 0).astype(int)
    svc = svm.SVC(gamma="scale").fit(X, y)
    assert GaussianKernel().prepare(X).gamma == pytest.approx(svc._gamma, rel=1e-12)


@pytest.mark.parametrize("cls", [GaussianKernel, LaplacianKernel, GaussianTanimotoKernel])
def test_scale_gamma_of_constant_data_is_one(cls):
    assert cls().prepare(np.full((6, 3), 2.5)).gamma == 1.0
    assert cls().prepare(sp.csr_matrix((6, 3))).gamma == 1.0


@pytest.mark.parametrize("variant", ["dot", "minmax"])
def test_gaussian_tanimoto_scale(variant, rng):
    X = (rng.random((20, 15)) < 0.4).astype(float)
    g = GaussianTanimotoKernel(variant=variant).prepare(X).gamma
    assert g == pytest.approx(naive.naive_scale_gamma_gaussian_tanimoto(X, variant), rel=1e-10)
    assert GaussianTanimotoKernel(variant=variant).prepare(sp.csr_matrix(X)).gamma == pytest.approx(g, rel=1e-12)


@pytest.mark.parametrize("cls", [GaussianKernel, LaplacianKernel, GaussianTanimotoKernel])
def test_unprepared_scale_kernel_uses_its_first_argument(cls, rng):
    X, Y = np.abs(rng.standard_normal((9, 4))), np.abs(rng.standard_normal((5, 4))) * 3
    k = cls()
    np.testing.assert_allclose(k(X, Y), k.prepare(X)(X, Y), rtol=1e-14)
    np.testing.assert_allclose(k(X), k.prepare(X)(X), rtol=1e-14)
    W = rng.standard_normal((5, 2))
    np.testing.assert_allclose(k.matvec(X, Y, W, ComputeOptions(chunk_rows=2)), k.prepare(X)(X, Y) @ W, rtol=1e-12)


def test_prepare_keeps_registry_identity_and_json_params(rng):
    from skframe.contract.registry import get_kernel, spec_of

    X = rng.standard_normal((10, 3))
    k = get_kernel("rbf")
    p = kernel_prepare(k, X)
    spec = spec_of("kernel", p)  # the registry knows the prepared copy by its class ("rbf" is an alias of "gaussian")
    assert spec.name == "gaussian" and isinstance(p.params["gamma"], float)
    assert spec.params["gamma"] == p.gamma
    rebuilt = GaussianKernel(**json.loads(json.dumps(p.params)))
    assert rebuilt == p and rebuilt != k


def test_bad_gamma_string_names_scale():
    with pytest.raises(InvalidParameterError, match="'scale'"):
        GaussianKernel(gamma="auto")
    with pytest.raises(InvalidParameterError, match="'scale'"):
        LaplacianKernel(gamma=-1.0)


MATVEC_KERNELS = [GaussianKernel(0.3), LaplacianKernel(0.2), LinearKernel(), PolynomialKernel(0.5, 1.0, 2),
                  CosineKernel(), TanimotoKernel(), GaussianTanimotoKernel(0.7)]


@pytest.mark.parametrize("k", MATVEC_KERNELS, ids=lambda k: type(k).__name__)
@pytest.mark.parametrize("chunk_rows", [None, 1, 4])
def test_matvec_matches_block_times_w(k, chunk_rows, rng):
    X, Y = np.abs(rng.standard_normal((23, 5))), np.abs(rng.standard_normal((11, 5)))
    W = rng.standard_normal((11, 3))
    ref = k(X, Y) @ W
    opts = ComputeOptions(chunk_rows=chunk_rows)
    np.testing.assert_allclose(k.matvec(X, Y, W, opts), ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(kernel_matvec(k, sp.csr_matrix(X), Y, W[:, 0], opts), ref[:, 0], rtol=1e-12, atol=1e-12)
    out32 = k.matvec(X, Y, W.astype(np.float32), ComputeOptions(dtype="float32", chunk_rows=chunk_rows))
    assert out32.dtype == np.float32
    np.testing.assert_allclose(out32, ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())


def test_matvec_respects_the_block_budget(rng, monkeypatch):
    k = GaussianKernel(0.5)
    X, Y = rng.standard_normal((50, 3)), rng.standard_normal((20, 3))
    seen = []
    orig = GaussianKernel.__call__

    def spy(self, A, B=None, **kw):
        seen.append(A.shape[0])
        return orig(self, A, B, **kw)

    monkeypatch.setattr(GaussianKernel, "__call__", spy)
    budget = k.block_bytes(7, 20)
    out = k.matvec(X, Y, np.ones(20), ComputeOptions(block_bytes=budget))
    assert max(seen) == 7 and sum(seen) == 50
    np.testing.assert_allclose(out, orig(k, X, Y).sum(axis=1), rtol=1e-12)


def test_block_bytes_counts_the_float32_copy():
    k = GaussianKernel(1.0)
    assert k.block_bytes(10, 20) >= 8 * 200
    assert k.block_bytes(10, 20, 4) == k.block_bytes(10, 20) + 4 * 200
    assert k.rows_per_block(20, ComputeOptions(block_bytes=k.block_bytes(9, 20))) == 9


def test_capability_flags():
    assert get_tags(LinearKernel()).is_linear and not get_tags(GaussianKernel()).is_linear
    assert not get_tags(PolynomialKernel(degree=1)).is_linear
    for k in MATVEC_KERNELS:  # the kernels with a formula for any array namespace also compute on CuPy arrays
        device = get_tags(k).device_formula is not None
        assert get_tags(k).backends == (("numpy", "cupy") if device else ("numpy",)) and get_tags(k).thread_safe
    assert not hasattr(LinearKernel(), "spectral_sampler") and not hasattr(TanimotoKernel(), "spectral_sampler")
    assert get_tags(GaussianKernel).spectral_sampler and not get_tags(LinearKernel()).spectral_sampler


@pytest.mark.parametrize("k", [GaussianKernel(0.4), LaplacianKernel(0.3)], ids=["gaussian", "laplacian"])
def test_spectral_sampler_approximates_the_kernel(k, rng):
    X = rng.standard_normal((6, 3)) * 0.7
    W = k.spectral_sampler(3, 200_000, np.random.default_rng(1))
    assert W.shape == (200_000, 3)
    b = np.random.default_rng(2).uniform(0, 2 * np.pi, 200_000)
    Z = naive.naive_rff_features(X, W, b)
    np.testing.assert_allclose(Z @ Z.T, k(X), atol=0.02)


def test_spectral_sampler_of_an_unprepared_kernel_asks_for_prepare(rng):
    with pytest.raises(InvalidParameterError, match="prepare"):
        GaussianKernel().spectral_sampler(3, 5, rng)
    assert GaussianKernel().prepare(rng.standard_normal((5, 3))).spectral_sampler(3, 5, rng).shape == (5, 3)


@pytest.mark.parametrize("d", [4, 50])  # direct differences / float32 BLAS cross term
@pytest.mark.parametrize("sparse", [False, True])
def test_float32_blocks_match_naive(d, sparse, rng, engine):
    X, Y = rng.standard_normal((40, d)), rng.standard_normal((130, d))
    k = GaussianKernel(0.5 / d)
    A, B = (sp.csr_matrix(X), sp.csr_matrix(Y)) if sparse else (X, Y)
    K32 = k(A, B, dtype=np.float32)
    assert K32.dtype == np.float32 and K32.shape == (40, 130)
    np.testing.assert_allclose(K32, naive.naive_gaussian(X, Y, 0.5 / d), rtol=0, atol=1e-6)
    S32 = k(A, dtype=np.float32)
    assert np.all(np.diag(S32) == 1.0)
    np.testing.assert_allclose(S32, naive.naive_gaussian(X, X, 0.5 / d), rtol=0, atol=1e-6)
    for other in (LaplacianKernel(0.3), TanimotoKernel()):  # rounded float64 blocks
        np.testing.assert_array_equal(other(A, B, dtype=np.float32), other(A, B).astype(np.float32))


def test_float32_exponential_tail():
    """Relative error <= 2e-7 (1 + |argument|) down to 1e-30 (the float32 rounding of the argument); 0 below."""
    Y = np.linspace(0.0, 8.3, 3000)[:, None]
    K = GaussianKernel(1.0)(np.zeros((1, 1)), Y, dtype=np.float32)[0].astype(float)
    ref = np.exp(-(Y[:, 0] ** 2))
    keep = ref > 1e-30
    bound = 2e-7 * (1.0 + Y[keep, 0] ** 2)
    assert np.all(np.abs(K[keep] - ref[keep]) / ref[keep] <= bound)
    assert GaussianKernel(1.0)(np.zeros((1, 1)), np.array([[20.0]]), dtype=np.float32)[0, 0] == 0.0


def test_precomputed_matvec_and_float32(rng):
    from skframe_kernels import PrecomputedKernel

    Z = rng.standard_normal((8, 3))
    k = PrecomputedKernel(gram=Z @ Z.T)
    ids, W = np.arange(8.0)[:, None], rng.standard_normal((3, 2))
    np.testing.assert_allclose(k.matvec(ids, ids[[1, 4, 6]], W, ComputeOptions(chunk_rows=3)),
                               (Z @ Z[[1, 4, 6]].T) @ W, rtol=1e-12)
    assert k(ids, dtype=np.float32).dtype == np.float32
