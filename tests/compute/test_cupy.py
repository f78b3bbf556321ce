"""The GPU engine: its array-namespace code run with NumPy here, and on CuPy when a GPU is present."""

import numpy as np
import pytest

from skframe import deps
from skframe.compute._engine_cupy import DEVICE_FORMULAS, ArrayEngine, device_kernel_name
from skframe.compute.streaming import accumulate, chunk_sums, fit_sketched_ridge, get_engine
from skframe.core.sketching import draw_sketch
from skframe.exceptions import DependencyError, InvalidParameterError
from skframe.options import ComputeOptions
from skframe.plugin.registry import get_kernel, get_sketch
from skframe.plugin.tags import KernelTags
from tests.naive import naive_gaussian, naive_laplacian, naive_linear, naive_polynomial

KERNELS = [
    ("gaussian", {"gamma": 0.7}, lambda X, Y: naive_gaussian(X, Y, 0.7)),
    ("laplacian", {"gamma": 0.3}, lambda X, Y: naive_laplacian(X, Y, 0.3)),
    ("linear", {}, naive_linear),
    ("polynomial", {"gamma": 0.5, "coef0": 1.0, "degree": 2}, lambda X, Y: naive_polynomial(X, Y, 0.5, 1.0, 2)),
]


def _data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 3))
    return X, np.column_stack([np.sin(3 * X[:, 0]), X[:, 1]])


@pytest.mark.parametrize("name,params,naive", KERNELS)
def test_device_formulas_match_plain_ones(name, params, naive):
    X, _ = _data(50)
    kernel = get_kernel(name, **params)
    assert device_kernel_name(kernel) == name
    block = ArrayEngine(np).block(kernel, X, X[:20], np.float64)
    np.testing.assert_allclose(block, naive(X, X[:20]), rtol=1e-10, atol=1e-12)


def test_the_kernel_names_its_device_formula():
    """The engine asks the kernel's tags for its formula, never its registered or class name."""

    class GaussianKernel:  # a third party's kernel with a built-in's class name: no device formula
        params = {"gamma": 0.7}

        def __call__(self, X, Y=None):
            return X @ Y.T

    class Declared(GaussianKernel):  # any class may say it is a Gaussian kernel of params["gamma"]
        __skframe_tags__ = KernelTags(device_formula="gaussian")

    X, _ = _data(30)
    assert device_kernel_name(GaussianKernel()) is None
    with pytest.raises(InvalidParameterError, match="backend='numpy'"):
        ArrayEngine(np).block(GaussianKernel(), X, X[:5], np.float64)
    assert device_kernel_name(Declared()) == "gaussian"
    np.testing.assert_allclose(ArrayEngine(np).block(Declared(), X, X[:5], np.float64), naive_gaussian(X, X[:5], 0.7),
                               rtol=1e-10)


def test_fused_gaussian_hook_is_used():
    calls = []

    def fused(xn, yn, g, G):
        calls.append(G.shape)
        G[...] = np.exp(-g * np.maximum(xn + yn - 2 * G, 0))
        return G

    X, _ = _data(30)
    out = ArrayEngine(np, fused).block(get_kernel("gaussian", gamma=0.7), X, X[:5], np.float64)
    assert calls == [(30, 5)]
    np.testing.assert_allclose(out, naive_gaussian(X, X[:5], 0.7), rtol=1e-10)


@pytest.mark.parametrize("sketch", ["subsample", "psr"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_array_engine_accumulation_equals_cpu_engine(sketch, dtype, monkeypatch):
    """The GPU code path with NumPy as its namespace gives the CPU engine's fit."""
    X, Y = _data()
    kernel = get_kernel("gaussian", gamma=2.0)
    R = draw_sketch(get_sketch(sketch, size=25), len(X), np.random.default_rng(1), X=X, kernel=kernel)
    opts = ComputeOptions(chunk_rows=128, dtype=dtype)
    ref = fit_sketched_ridge(kernel, X, Y, R, 1e-3, options=opts)
    engine = ArrayEngine(np)
    monkeypatch.setattr("skframe.compute.streaming.get_engine", lambda options=None: engine)
    res = fit_sketched_ridge(kernel, X, Y, R, 1e-3, options=opts)
    tol = 1e-8 if dtype == "float64" else 5e-3  # float32: two roundings of an ill-conditioned solve
    pred_ref, pred = naive_gaussian(X, ref.X_sub, 2.0) @ ref.coef, naive_gaussian(X, res.X_sub, 2.0) @ res.coef
    np.testing.assert_allclose(pred, pred_ref, rtol=tol, atol=tol * np.abs(pred_ref).max())
    sums = accumulate(kernel, X, Y, X[R.indices], R.mix, options=opts, chunk_rows=100)
    assert sums.n == len(X)


def test_kernel_without_device_support_is_refused_on_the_device():
    class Opaque:  # its tags: the defaults, NumPy only
        def __call__(self, X, Y):
            return X @ Y.T

    X, Y = _data(20)
    with pytest.raises(InvalidParameterError, match="backend='numpy'"):
        ArrayEngine(np).block(Opaque(), X, X, np.float64)
    # ... and keeps working on the CPU engine
    part = chunk_sums(Opaque(), X, Y, X[:4], np.eye(4))
    assert part.n == 20
    assert "gaussian" in DEVICE_FORMULAS


def test_cupy_backend_without_cupy_names_the_extra(monkeypatch):
    monkeypatch.setenv("SKFRAME_DISABLE_CUPY", "1")
    with pytest.raises(DependencyError, match="cupy"):
        get_engine(ComputeOptions(backend="cupy"))
    with pytest.raises(InvalidParameterError, match="numpy"):
        get_engine(ComputeOptions(backend="tpu"))


def test_model_with_cupy_backend_without_cupy(monkeypatch):
    from skframe import SketchedKernelRidge

    monkeypatch.setenv("SKFRAME_DISABLE_CUPY", "1")
    X, Y = _data(100)
    with pytest.raises(DependencyError, match="cupy"):
        SketchedKernelRidge(sketch="subsample", sketch_size=10, backend="cupy").fit(X, Y)


def test_cpu_path_never_imports_cupy():
    import subprocess
    import sys

    code = ("import sys, numpy as np; from skframe.compute.streaming import fit_sketched_ridge, get_engine; "
            "get_engine(None); assert 'cupy' not in sys.modules, 'cupy imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


def _gpu_available():
    if not deps.available("cupy"):
        return False
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


@pytest.mark.skipif(not _gpu_available(), reason="needs CuPy and an NVIDIA GPU")
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_gpu_fit_equals_cpu_fit(dtype):
    X, Y = _data(5000)
    kernel = get_kernel("gaussian", gamma=2.0)
    R = draw_sketch(get_sketch("subsample", size=100), len(X), np.random.default_rng(1), X=X, kernel=kernel)
    cpu = fit_sketched_ridge(kernel, X, Y, R, 1e-3, options=ComputeOptions(dtype=dtype))
    gpu = fit_sketched_ridge(kernel, X, Y, R, 1e-3, options=ComputeOptions(dtype=dtype, backend="cupy"))
    assert gpu.info["backend"] == "cupy" and isinstance(gpu.coef, np.ndarray)
    pc, pg = naive_gaussian(X[:500], cpu.X_sub, 2.0) @ cpu.coef, naive_gaussian(X[:500], gpu.X_sub, 2.0) @ gpu.coef
    tol = 1e-7 if dtype == "float64" else 1e-3
    np.testing.assert_allclose(pg, pc, rtol=tol, atol=tol * np.abs(pc).max())
