"""The generic machinery of skframe.core.sketching against the dense formulas of tests/naive.py."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics.pairwise import rbf_kernel

from skframe.core.feature_map import build_feature_map, kernel_times
from skframe.core.sketching import SketchMatrix, default_chunk_rows, draw_sketch, sketched_gram_products
from skframe.exceptions import InvalidParameterError, PluginError
from skframe_sketches.sketches import (
    AccumulationSketch,
    CountSketch,
    GaussianSketch,
    LeverageScoreSketch,
    PSparsifiedSketch,
    SubSampleSketch,
)
from tests.naive import RBF, naive_sketched_gram_products

SKETCHES = {
    "subsample": SubSampleSketch(7),
    "subsample-replace": SubSampleSketch(7, replace=True),
    "leverage": LeverageScoreSketch(7, lam=1e-2),
    "gaussian": GaussianSketch(7),
    "psr": PSparsifiedSketch(7, p=0.1),
    "psg": PSparsifiedSketch(7, p=0.1, distribution="gaussian"),
    "accumulation": AccumulationSketch(7, n_terms=4),
    "countsketch": CountSketch(7),
}


def assert_rel_close(actual, expected, rtol=1e-10):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape
    scale = max(np.abs(expected).max(), 1e-300)
    err = np.abs(actual - expected).max() / scale
    assert err <= rtol, f"relative error {err:.3e} > {rtol:.0e}"


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    return rng.normal(size=(45, 4))


@pytest.mark.parametrize("chunk_rows", [None, 1, 7, 44, 1000])
@pytest.mark.parametrize("name", sorted(SKETCHES))
def test_sketched_gram_products_equal_dense(name, chunk_rows, data, engine):
    kern = RBF(0.3)
    R = draw_sketch(SKETCHES[name], data.shape[0], np.random.default_rng(5), X=data, kernel=kern)
    done = []
    KR, RKR = sketched_gram_products(kern, data, R, chunk_rows=chunk_rows, progress=done.append)
    KR0, RKR0 = naive_sketched_gram_products(kern(data, data), R.toarray())
    assert_rel_close(KR, KR0)
    assert_rel_close(RKR, RKR0)
    np.testing.assert_array_equal(RKR, RKR.T)
    assert sum(done) == data.shape[0]
    if chunk_rows == 7:
        assert len(done) == int(np.ceil(data.shape[0] / 7))


@pytest.mark.parametrize("name", ["psr", "gaussian", "subsample", "accumulation"])
@pytest.mark.parametrize("chunk_rows", [None, 4])
def test_sketched_gram_products_sparse_input(name, chunk_rows, engine):
    rng = np.random.default_rng(1)
    D = rng.normal(size=(40, 12)) * (rng.random((40, 12)) < 0.25)
    X = sp.csr_matrix(D)
    kern = RBF(0.2)
    R = draw_sketch(SKETCHES[name], 40, np.random.default_rng(2), X=X, kernel=kern)
    KR, RKR = sketched_gram_products(kern, X, R, chunk_rows=chunk_rows)
    KR0, RKR0 = naive_sketched_gram_products(kern(D, D), R.toarray())
    assert_rel_close(KR, KR0)
    assert_rel_close(RKR, RKR0)


def test_sketched_gram_products_wrong_n(data):
    R = SubSampleSketch(3).draw(10, np.random.default_rng(0))
    with pytest.raises(InvalidParameterError, match="n=10"):
        sketched_gram_products(RBF(1.0), data, R)


def test_kernel_is_only_evaluated_on_sampled_columns(data):
    calls = []

    class Counting(RBF):
        def __call__(self, X, Y=None):
            calls.append((X.shape[0], Y.shape[0]))
            return super().__call__(X, Y)

    R = PSparsifiedSketch(5, p=0.02).draw(data.shape[0], np.random.default_rng(0))
    sketched_gram_products(Counting(0.5), data, R)
    assert R.s_prime < data.shape[0]
    # every block is (chunk x s') or (s' x chunk), and the blocks cover n x s' entries once
    assert all(R.s_prime in shape for shape in calls)
    assert sum(a * b for a, b in calls) == data.shape[0] * R.s_prime


@pytest.mark.parametrize("chunk_rows", [None, 1, 6])
def test_kernel_times(chunk_rows, data):
    kern = RBF(0.4)
    W = np.random.default_rng(3).normal(size=(10, 2))
    out = kernel_times(kern, data, data[:10], W, chunk_rows=chunk_rows)
    assert_rel_close(out, kern(data, data[:10]) @ W)
    out1 = kernel_times(kern, data, data[:10], W[:, 0], chunk_rows=chunk_rows)
    assert_rel_close(out1, kern(data, data[:10]) @ W[:, 0])


def test_default_chunk_rows():
    assert default_chunk_rows(1) >= 1
    assert default_chunk_rows(10**9) == 1
    assert default_chunk_rows(1000) * 1000 <= 8_000_000


@pytest.mark.parametrize("name", ["psr", "gaussian", "subsample", "accumulation", "countsketch"])
def test_feature_map_reproduces_nystrom_gram(name, data, engine):
    """Z Z^T = K R^T (R K R^T)^+ R K and transform(X) = Z (El Ahmad et al., TMLR 2023, Prop. 1)."""
    kern = RBF(0.3)
    R = draw_sketch(SKETCHES[name], data.shape[0], np.random.default_rng(4), X=data, kernel=kern)
    fmap, Z, KR = build_feature_map(kern, data, R, chunk_rows=5)
    K = kern(data, data)
    Rd = R.toarray()
    KR0 = K @ Rd.T
    w, U = np.linalg.eigh(Rd @ K @ Rd.T)
    keep = w > w.max() * 1e-10
    P = (U[:, keep] / w[keep]) @ U[:, keep].T
    assert_rel_close(KR, KR0)
    assert_rel_close(Z @ Z.T, KR0 @ P @ KR0.T, rtol=1e-8)
    assert_rel_close(fmap.transform(data, chunk_rows=3), Z)
    assert fmap.rank == Z.shape[1] == int(keep.sum())
    np.testing.assert_allclose(Z.T @ np.linalg.pinv(K) @ Z, np.eye(fmap.rank), atol=1e-5)


def test_feature_map_zero_gram_raises(data):
    R = SketchMatrix(n=data.shape[0], indices=[0], mix=np.zeros((1, 1)))
    with pytest.raises(InvalidParameterError, match="zero"):
        build_feature_map(RBF(1.0), data, R)


def test_draw_sketch_checks_the_plugin_result():
    class Bad:
        def draw(self, n, rng, *, X=None, kernel=None):
            return np.eye(n)

    class WrongN:
        def draw(self, n, rng, *, X=None, kernel=None):
            return SketchMatrix(n=n + 1, indices=[0], mix=np.ones((1, 1)))

    with pytest.raises(PluginError, match="SketchMatrix"):
        draw_sketch(Bad(), 4, np.random.default_rng(0))
    with pytest.raises(PluginError, match="n=4"):
        draw_sketch(WrongN(), 4, np.random.default_rng(0))


def testdiagonal_of_mix_detected_only_for_subsampling(data):
    from skframe.core.sketching import diagonal_of_mix

    n = data.shape[0]
    R = draw_sketch(SubSampleSketch(7), n, np.random.default_rng(0))
    np.testing.assert_allclose(diagonal_of_mix(R.mix), np.full(7, np.sqrt(n / 7)))
    for name in ("psr", "gaussian", "accumulation", "countsketch"):
        R = draw_sketch(SKETCHES[name], n, np.random.default_rng(0), X=data, kernel=RBF(0.3))
        assert diagonal_of_mix(R.mix) is None


@pytest.mark.parametrize("name", sorted(SKETCHES))
@pytest.mark.parametrize("chunk_rows", [None, 5])
def test_sketched_gram_products_on_distinct_rows(name, chunk_rows):
    """Evaluating the kernel on the distinct rows only gives the same products."""
    from skframe.core.output_basis import unique_rows

    rng = np.random.default_rng(2)
    U = rng.normal(size=(12, 3))
    X = U[rng.integers(0, 12, size=45)]
    kern = RBF(0.3)
    R = draw_sketch(SKETCHES[name], 45, np.random.default_rng(5), X=X, kernel=kern)
    _, first, inverse = unique_rows(X)
    done = []
    KR, RKR = sketched_gram_products(kern, X, R, chunk_rows=chunk_rows, distinct=(first, inverse),
                                     progress=done.append)
    KR0, RKR0 = naive_sketched_gram_products(kern(X, X), R.toarray())
    assert_rel_close(KR, KR0)
    assert_rel_close(RKR, RKR0)
    assert sum(done) == 45


def test_tiled_numpy_sketch_product_on_threads_equals_the_dense_formula(monkeypatch):
    """Plain NumPy engine, thread-safe kernel: tiles of a few rows shared by 3 threads give K R^T exactly."""
    import skframe.core.block_engine as block_engine
    import skframe.core.threads as threads
    from skframe.contract.registry import get_kernel
    from skframe.contract.tags import get_tags

    monkeypatch.setenv("SKFRAME_NUMBA_MIN_WORK", str(10**12))
    monkeypatch.setattr(block_engine, "_TILE_ENTRIES", 50)
    monkeypatch.setattr(threads, "THREADED_ENTRIES", 1)
    monkeypatch.setattr(threads, "available_cores", lambda: 3)
    rng = np.random.default_rng(5)
    X = rng.normal(size=(301, 4))
    kernel = get_kernel("gaussian", gamma=0.3)
    assert get_tags(kernel).thread_safe
    R = PSparsifiedSketch(9, p=0.05).draw(301, np.random.default_rng(1))
    KR, RKR = sketched_gram_products(kernel, X, R)
    K = rbf_kernel(X, X, gamma=0.3)
    dense = R.toarray()
    assert_rel_close(KR, K @ dense.T, rtol=1e-13)
    assert_rel_close(RKR, dense @ K @ dense.T, rtol=1e-12)


def test_kernel_not_declared_thread_safe_is_called_from_one_thread(monkeypatch):
    import threading

    import skframe.core.block_engine as block_engine
    import skframe.core.threads as threads

    calls = []

    class Recording(RBF):
        def __call__(self, X, Y=None):
            calls.append(threading.current_thread() is threading.main_thread())
            return super().__call__(X, Y)

    monkeypatch.setenv("SKFRAME_NUMBA_MIN_WORK", str(10**12))
    monkeypatch.setattr(block_engine, "_TILE_ENTRIES", 50)
    monkeypatch.setattr(threads, "THREADED_ENTRIES", 1)
    monkeypatch.setattr(threads, "available_cores", lambda: 3)
    X = np.random.default_rng(6).normal(size=(120, 3))
    R = PSparsifiedSketch(5, p=0.1).draw(120, np.random.default_rng(2))
    KR, _ = sketched_gram_products(Recording(0.5), X, R)
    assert calls and all(calls)
    assert_rel_close(KR, RBF(0.5)(X, X) @ R.toarray().T, rtol=1e-12)
