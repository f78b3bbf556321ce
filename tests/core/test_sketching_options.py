"""skframe.core.sketching with ComputeOptions (block budget, float32), engines, input collections, kernel_times_mix."""

import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics.pairwise import rbf_kernel

from skframe.core.feature_map import build_feature_map, kernel_times
from skframe.core.sketching import draw_sketch, kernel_times_mix, sketched_gram_products
from skframe.options import ComputeOptions
from skframe_kernels import GaussianKernel
from skframe_sketches.sketches import (
    AccumulationSketch,
    CountSketch,
    GaussianSketch,
    PSparsifiedSketch,
    SubSampleSketch,
)
from tests.naive import ArrayRows, ArrayRowsRBF, naive_sketched_gram_products

SKETCHES = {
    "subsample": SubSampleSketch(7),
    "subsample-replace": SubSampleSketch(7, replace=True),
    "gaussian": GaussianSketch(7),
    "psr": PSparsifiedSketch(7, p=0.1),
    "accumulation": AccumulationSketch(7, n_terms=4),
    "countsketch": CountSketch(7),
}

#: float32 blocks against float64: relative to the largest entry (kernel values are <= 1)
FLOAT32_RTOL = 1e-5


@pytest.fixture
def data():
    return np.random.default_rng(0).normal(size=(45, 4))


def _draw(name, X, seed=5):
    return draw_sketch(SKETCHES[name], X.shape[0], np.random.default_rng(seed), X=X, kernel=GaussianKernel(0.3))


def _rel(a, b):
    return np.abs(np.asarray(a, dtype=float) - b).max() / max(np.abs(b).max(), 1e-300)


@pytest.mark.parametrize("name", sorted(SKETCHES))
@pytest.mark.parametrize("sparse", [False, True])
def test_numba_and_numpy_engines_agree(name, sparse, data, monkeypatch):
    monkeypatch.setenv("SKFRAME_NUMBA_MIN_WORK", "0")  # compiled engine even on this small problem
    X = sp.csr_matrix(data * (np.abs(data) > 0.5)) if sparse else data
    R = _draw(name, data)
    k = GaussianKernel(0.3)
    KR1, RKR1 = sketched_gram_products(k, X, R, chunk_rows=6)
    monkeypatch.setenv("SKFRAME_DISABLE_NUMBA", "1")
    KR0, RKR0 = sketched_gram_products(k, X, R, chunk_rows=6)
    Xd = X.toarray() if sparse else X
    KRn, RKRn = naive_sketched_gram_products(rbf_kernel(Xd, gamma=0.3), R.toarray())
    for a, b in ((KR1, KR0), (RKR1, RKR0), (KR0, KRn), (RKR0, RKRn)):
        assert _rel(a, b) < 1e-10


def test_sketching_imports_no_numba_when_disabled():
    code = "import sys, skframe.core.sketching, skframe_kernels.kernels; print('numba' in sys.modules)"
    env = {"SKFRAME_DISABLE_NUMBA": "1", "PATH": "", "PYTHONPATH": ":".join(sys.path)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("name", sorted(SKETCHES))
def test_float32_blocks_and_float64_accumulation(name, data):
    R = _draw(name, data)
    k = GaussianKernel(0.3)
    KR, RKR = sketched_gram_products(k, data, R)
    KR32, RKR32 = sketched_gram_products(k, data, R, options=ComputeOptions(dtype="float32", chunk_rows=8))
    assert KR32.dtype == np.float32 and RKR32.dtype == np.float64
    assert _rel(KR32, KR) < FLOAT32_RTOL and _rel(RKR32, RKR) < FLOAT32_RTOL
    np.testing.assert_array_equal(RKR32, RKR32.T)


def test_float32_feature_map(data):
    R = _draw("psr", data)
    opts = ComputeOptions(dtype="float32")
    fmap, Z32, _ = build_feature_map(GaussianKernel(0.3), data, R, options=opts)
    _, Z, _ = build_feature_map(GaussianKernel(0.3), data, R)
    assert Z32.dtype == np.float32
    assert _rel(Z32 @ Z32.T, Z @ Z.T) < 1e-4
    assert fmap.transform(data, options=opts).dtype == np.float32


def test_bad_dtype_is_refused(data):
    from skframe.exceptions import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="float16"):
        sketched_gram_products(GaussianKernel(0.3), data, _draw("psr", data), options=ComputeOptions(dtype="float16"))


@pytest.mark.parametrize("name", ["psr", "gaussian", "subsample"])
def test_block_budget_sets_the_chunks(name, data):
    R = _draw(name, data)
    done = []
    budget = GaussianKernel(0.3).block_bytes(10, R.s_prime)  # the kernel's estimate for ten rows
    KR, _ = sketched_gram_products(GaussianKernel(0.3), data, R, options=ComputeOptions(block_bytes=budget),
                                   progress=done.append)
    if name == "subsample":  # diagonal mix without explicit chunk rows: one kernel call
        assert done == [45]
    else:
        assert done == [10, 10, 10, 10, 5]
    assert _rel(KR, sketched_gram_products(GaussianKernel(0.3), data, R)[0]) < 1e-12


@pytest.mark.parametrize("name", sorted(SKETCHES))
def test_kernel_times_mix_is_one_chunk_of_KR(name, data):
    R = _draw(name, data)
    k = GaussianKernel(0.3)
    KR, _ = sketched_gram_products(k, data, R)
    X_sub = data[R.indices]
    np.testing.assert_allclose(kernel_times_mix(k, data[10:17], X_sub, R), KR[10:17], rtol=1e-12, atol=1e-14)
    out = np.full((7, R.m), np.nan)
    assert kernel_times_mix(k, data[3:10], X_sub, R, out=out) is out
    np.testing.assert_allclose(out, KR[3:10], rtol=1e-12, atol=1e-14)
    got32 = kernel_times_mix(k, data[:5], X_sub, R, ComputeOptions(dtype="float32"))
    assert got32.dtype == np.float32 and _rel(got32, KR[:5]) < FLOAT32_RTOL


@pytest.mark.parametrize("name", ["psr", "subsample", "gaussian"])
def test_input_collections_flow_through(name, data):
    R = _draw(name, data)
    KR, RKR = sketched_gram_products(ArrayRowsRBF(0.3), ArrayRows(data), R, chunk_rows=4)
    KR0, RKR0 = naive_sketched_gram_products(rbf_kernel(data, gamma=0.3), R.toarray())
    assert _rel(KR, KR0) < 1e-10 and _rel(RKR, RKR0) < 1e-10
    fmap, Z, _ = build_feature_map(ArrayRowsRBF(0.3), ArrayRows(data), R)
    assert isinstance(fmap.X_sub, ArrayRows)
    np.testing.assert_allclose(fmap.transform(ArrayRows(data), chunk_rows=7), Z, rtol=1e-10, atol=1e-12)


def test_kernel_times_uses_the_kernel_matvec(data):
    calls = []

    class Fused(GaussianKernel):
        def matvec(self, X, Y, W, options=None):
            calls.append(options)
            return super().matvec(X, Y, W, options)

    W = np.ones((5, 2))
    out = kernel_times(Fused(0.3), data, data[:5], W, chunk_rows=9)
    assert calls and calls[0].chunk_rows == 9
    np.testing.assert_allclose(out, rbf_kernel(data, data[:5], gamma=0.3) @ W, rtol=1e-12)


def test_feature_map_prepares_a_scale_kernel(data):
    X = data * 7.0
    R = _draw("psr", X)
    fmap, Z, _ = build_feature_map(GaussianKernel(), X, R)
    assert fmap.kernel.gamma == pytest.approx(1.0 / (X.shape[1] * X.var()))
    _, Z0, _ = build_feature_map(GaussianKernel(1.0 / (X.shape[1] * X.var())), X, R)
    np.testing.assert_allclose(Z, Z0, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(fmap.transform(X[:9], chunk_rows=2), Z[:9], rtol=1e-10, atol=1e-12)


def test_rows_within_budget_uses_the_kernel_estimate():
    from skframe.core.sketching import rows_within_budget

    class Plain:  # no block_bytes: the block itself
        def __call__(self, X, Y=None):
            return rbf_kernel(X, Y)

    opts = ComputeOptions(block_bytes=8000)
    assert rows_within_budget(Plain(), 100, opts) == 10
    assert rows_within_budget(Plain(), 100, opts.replace(dtype="float32")) == 20
    assert rows_within_budget(Plain(), 100, opts.replace(chunk_rows=3)) == 3
    k = GaussianKernel(0.3)
    assert rows_within_budget(k, 100, ComputeOptions(block_bytes=k.block_bytes(7, 100))) == 7
    assert rows_within_budget(k, 100, ComputeOptions(block_bytes=k.block_bytes(7, 100, 4), dtype="float32")) == 7
    assert rows_within_budget(k, 10**9, opts) == 1
