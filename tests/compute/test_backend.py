"""skframe.compute.backend and skframe.core.engine: array namespaces, host/device moves, backend resolution and
engine selection."""

import sys
import types

import numpy as np
import pytest
import scipy.sparse as sp

from skframe.compute import backend
from skframe.core import engine
from skframe.exceptions import DependencyError, InvalidParameterError
from skframe.options import ComputeOptions


def test_numpy_namespace_and_moves():
    x = np.arange(4.0)
    assert backend.get_array_module(x) is np and not backend.is_cupy_array(x)
    assert backend.to_numpy([1, 2]).tolist() == [1, 2]
    S = sp.csr_matrix(np.eye(3))
    assert backend.to_numpy(S) is S
    assert backend.to_backend(x, "numpy") is x or np.array_equal(backend.to_backend(x, "numpy"), x)
    assert backend.resolve_backend(None) is np and backend.resolve_backend("NumPy") is np


def test_unknown_backend_names_the_choices():
    with pytest.raises(InvalidParameterError, match="numpy, cupy"):
        backend.resolve_backend("jax")


def test_cupy_missing_or_disabled_raises_dependency_error(monkeypatch):
    monkeypatch.setenv("SKFRAME_DISABLE_CUPY", "1")
    with pytest.raises(DependencyError, match="backend='cupy'"):
        backend.resolve_backend("cupy")


def _fake_cupy(n_devices):
    cupy = types.ModuleType("cupy")
    cupy.cuda = types.SimpleNamespace(runtime=types.SimpleNamespace(getDeviceCount=lambda: n_devices))
    cupy.asarray = lambda x: ("on-device", np.asarray(x))
    return cupy


def test_cupy_without_gpu_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(backend, "require", lambda name, feature=None: _fake_cupy(0))
    monkeypatch.setattr(backend, "_GPU_CHECKED", {})
    with pytest.raises(DependencyError, match="no GPU is visible"):
        backend.resolve_backend("cupy")


def test_cupy_with_a_gpu_resolves(monkeypatch):
    fake = _fake_cupy(1)
    monkeypatch.setattr(backend, "require", lambda name, feature=None: fake)
    monkeypatch.setattr(backend, "_GPU_CHECKED", {})
    assert backend.resolve_backend("cupy") is fake
    assert backend.to_backend(np.ones(2), "cupy")[0] == "on-device"


def test_cupy_arrays_are_recognised_by_their_type_module(monkeypatch):
    Fake = type("ndarray", (), {"__module__": "cupy._core.core", "get": lambda self: np.zeros(2)})
    fake = _fake_cupy(1)
    monkeypatch.setitem(sys.modules, "cupy", fake)
    x = Fake()
    assert backend.is_cupy_array(x)
    assert backend.get_array_module(x) is fake
    assert backend.to_numpy(x).tolist() == [0.0, 0.0]


def test_engine_selection(monkeypatch):
    monkeypatch.delenv("SKFRAME_DISABLE_NUMBA", raising=False)
    assert engine.select_engine() == ("numba" if engine.numba_enabled() else "numpy")
    assert engine.select_engine(ComputeOptions(backend="cupy")) == "cupy"
    assert engine.engine_module("skframe.core.sketching", engine="numpy") is None
    assert engine.engine_module("skframe.core.sketching", engine="cupy") is None  # no GPU engine written yet
    with pytest.raises(InvalidParameterError, match="engine"):
        engine.engine_module("skframe.core.sketching", engine="fortran")
    if engine.numba_enabled():
        assert engine.engine_module("skframe.core.sketching").__name__ == "skframe.core._sketching_numba"
    monkeypatch.setenv("SKFRAME_DISABLE_NUMBA", "1")
    assert engine.select_engine() == "numpy"
    assert engine.engine_module("skframe.core.sketching") is None


def test_small_problems_run_on_the_numpy_engine(monkeypatch):
    monkeypatch.delenv("SKFRAME_DISABLE_NUMBA", raising=False)
    monkeypatch.delenv("SKFRAME_NUMBA_MIN_WORK", raising=False)
    large = "numba" if engine.numba_enabled() else "numpy"
    assert engine.select_engine(work=engine.NUMBA_MIN_WORK - 1) == "numpy"
    assert engine.select_engine(work=engine.NUMBA_MIN_WORK) == large
    assert engine.select_engine(ComputeOptions(backend="cupy"), work=10) == "cupy"
    assert engine.select_engine() == large  # no size given: taken as large
    # the engine an options object carries (the execution plan's) wins over the size
    assert engine.select_engine(ComputeOptions(engine="numpy"), work=10**12) == "numpy"
    with pytest.raises(InvalidParameterError, match="engine='fortran'"):
        engine.select_engine(ComputeOptions(engine="fortran"))
    fixed = engine.planned(None, 10)
    assert fixed.engine == "numpy" and engine.planned(fixed, 10**12) is fixed
    monkeypatch.setenv("SKFRAME_NUMBA_MIN_WORK", "0")
    assert engine.select_engine(work=10) == large
    monkeypatch.setenv("SKFRAME_NUMBA_MIN_WORK", "lots")
    with pytest.raises(InvalidParameterError, match="SKFRAME_NUMBA_MIN_WORK"):
        engine.select_engine(work=10)


def test_the_engine_is_an_argument_down_to_the_kernel(monkeypatch):
    """The engine of an options object reaches the kernel's loops; no ambient state decides it."""
    from skframe.contract.protocols import kernel_block, takes_engine
    from skframe.contract.registry import get_kernel, get_sketch
    from skframe.core.sketching import draw_sketch, sketched_gram_products

    kernel = get_kernel("gaussian", gamma=0.4)
    seen = []
    original = type(kernel).__call__

    def spy(self, X, Y=None, *, dtype=None, engine=None):
        seen.append(engine)
        return original(self, X, Y, dtype=dtype, engine=engine)

    monkeypatch.setattr(type(kernel), "__call__", spy)
    assert takes_engine(kernel)
    X = np.random.default_rng(0).normal(size=(40, 3))
    R = draw_sketch(get_sketch("psr", size=5, p=0.3), 40, np.random.default_rng(1))
    sketched_gram_products(kernel, X, R, options=ComputeOptions(engine="numpy"))
    assert seen and set(seen) == {"numpy"}
    seen.clear()
    sketched_gram_products(kernel, X, R)  # no engine given: chosen once from n x s', passed down
    assert set(seen) == {"numpy"}
    kernel_block(kernel, X, X, engine="numpy")
    assert seen[-1] == "numpy"

    class Plain:  # a third-party kernel without the keyword is called without it
        def __call__(self, X, Y=None):
            return np.ones((len(X), len(X if Y is None else Y)))

    assert not takes_engine(Plain()) and kernel_block(Plain(), X, X, engine="numba").shape == (40, 40)


def test_lazy_module_imports_at_first_use():
    lazy = engine.lazy_module("json")
    assert "lazy module 'json'" in repr(lazy)
    assert lazy.dumps([1]) == "[1]"
    with pytest.raises(AttributeError):
        _ = lazy.__wrapped__


@pytest.mark.parametrize("sketch", ["psr", "gaussian", "subsample"])
def test_numpy_engine_products_equal_the_compiled_ones(sketch, monkeypatch):
    """A small fit's plain NumPy path (transposed block, SciPy product) against the compiled one and the formula."""
    from skframe.contract.registry import get_kernel, get_sketch
    from skframe.core.feature_map import kernel_times
    from skframe.core.sketching import draw_sketch, sketched_gram_products

    rng = np.random.default_rng(1)
    X = rng.normal(size=(70, 5))
    kernel = get_kernel("gaussian", gamma=0.4)
    params = {"size": 12, **({"p": 0.2} if sketch == "psr" else {})}
    R = draw_sketch(get_sketch(sketch, **params), 70, np.random.default_rng(2),
                    X=X, kernel=kernel)
    monkeypatch.setenv("SKFRAME_NUMBA_MIN_WORK", "0")
    KR1, RKR1 = sketched_gram_products(kernel, X, R, chunk_rows=16)
    P1 = kernel_times(kernel, X[:9], X[R.indices], np.ones((R.s_prime, 2)))
    monkeypatch.delenv("SKFRAME_NUMBA_MIN_WORK")
    KR0, RKR0 = sketched_gram_products(kernel, X, R, chunk_rows=16)
    P0 = kernel_times(kernel, X[:9], X[R.indices], np.ones((R.s_prime, 2)))
    K = np.exp(-0.4 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    Rd = R.toarray()
    np.testing.assert_allclose(KR0, K @ Rd.T, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(RKR0, Rd @ K @ Rd.T, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(KR0, KR1, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(RKR0, RKR1, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(P0, P1, rtol=1e-12)


def test_numpy_gaussian_block_split_over_threads_equals_one_pass(monkeypatch):
    """The plain engine splits large blocks by rows over the cores: same numbers, any split."""
    import skframe.core.threads as threads
    from skframe_kernels import _gram_numpy as g

    rng = np.random.default_rng(1)
    X, Y = rng.random((700, 5)), rng.random((300, 5))
    one_pass = np.empty((700, 300))
    monkeypatch.setattr(threads, "THREADED_ENTRIES", 10**12)
    g.sqeuclidean_exp_direct(X, Y.T, 0.3, one_pass)
    monkeypatch.setattr(threads, "THREADED_ENTRIES", 1)
    monkeypatch.setattr(threads, "available_cores", lambda: 3)
    split = np.empty_like(one_pass)
    g.sqeuclidean_exp_direct(X, Y.T, 0.3, split)
    np.testing.assert_array_equal(split, one_pass)
    d2 = ((X[:, None, :] - Y[None, :, :]) ** 2).sum(-1)
    np.testing.assert_allclose(split, np.exp(-0.3 * d2), rtol=1e-13)


def test_serial_blas_limits_blas_threads_inside_and_restores_them():
    threadpoolctl = pytest.importorskip("threadpoolctl")

    def blas_threads():
        return [p["num_threads"] for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"]

    before = blas_threads()
    with backend.serial_blas():
        assert all(t == 1 for t in blas_threads())
    with backend.serial_blas(enabled=False):
        assert blas_threads() == before
    assert blas_threads() == before


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs fork")
def test_numpy_gaussian_block_after_fork_does_not_hang(monkeypatch):
    """A process forked after a threaded block computes its own blocks (no dead thread pool)."""
    import multiprocessing

    import skframe.core.threads as threads
    from skframe_kernels import _gram_numpy as g

    monkeypatch.setattr(threads, "THREADED_ENTRIES", 1)
    monkeypatch.setattr(threads, "available_cores", lambda: 2)
    rng = np.random.default_rng(2)
    X, Y = rng.random((200, 3)), rng.random((50, 3))
    parent = np.empty((200, 50))
    g.sqeuclidean_exp_direct(X, Y.T, 0.5, parent)  # creates the pool
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(1) as pool:
        child = pool.apply_async(_child_block, (X, Y)).get(timeout=60)
    np.testing.assert_array_equal(child, parent)


def _child_block(X, Y):
    import skframe.core.threads as threads
    from skframe_kernels import _gram_numpy as g

    threads.THREADED_ENTRIES = 1
    threads.available_cores = lambda: 2
    out = np.empty((X.shape[0], Y.shape[0]))
    g.sqeuclidean_exp_direct(X, Y.T, 0.5, out)
    return out
