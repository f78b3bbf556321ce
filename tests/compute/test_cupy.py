"""The GPU path: its array-namespace code run with NumPy and a fake device namespace here, and on CuPy
when a GPU is present (the tests marked below skip without one).

The fake namespace (:mod:`tests.fake_namespace`) refuses every implicit conversion to NumPy: a
fit that completes on it never brought a device array to the host except through the counted,
explicit copies, which are checked to be the results (weights, eigenvalues), never the data,
the kernel blocks or the m x m sums.
"""

import numpy as np
import pytest
from sklearn.utils import check_random_state

from skframe import deps
from skframe.compute import engines
from skframe.compute._engine_cupy import ArrayEngine, runs_on_device
from skframe.compute.stream_problems import StreamedFeatureProblem, block_loss_sums, feature_projection
from skframe.compute.streaming import accumulate, chunk_sums, fit_sketched_ridge, get_engine, sketch_gram
from skframe.contract.registry import get_kernel, get_loss, get_sketch
from skframe.contract.tags import KernelTags
from skframe.core.sketching import draw_sketch
from skframe.exceptions import DependencyError, InvalidInputError, InvalidParameterError
from skframe.models._base import resolve_kernel, resolve_sketch
from skframe.options import ComputeOptions
from tests.fake_namespace import FAKE, FakeArray, fake
from tests.naive import naive_gaussian, naive_laplacian, naive_linear, naive_polynomial
from tests.tolerances import EPS64, assert_normwise_close, sketched_ridge_conditions, solve_rtol

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


@pytest.fixture
def device(monkeypatch):
    """``backend="cupy"`` served by the engine on the fake device namespace (counters reset)."""
    engine = ArrayEngine(FAKE)
    monkeypatch.setattr(engines, "cupy_engine", lambda: engine)
    FAKE.reset()
    return engine


# ----------------------------------------------------------------- the kernels compute with their input's namespace
@pytest.mark.parametrize("name,params,naive", KERNELS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_builtin_kernels_compute_with_the_namespace_of_their_input(name, params, naive, dtype):
    X, _ = _data(50)
    kernel = get_kernel(name, **params)
    assert runs_on_device(kernel)  # the tags list "cupy": the engine calls the kernel with device arrays
    block = kernel(fake(X), fake(X[:20]), dtype=dtype)
    assert isinstance(block, FakeArray) and block.dtype == dtype
    tol = 1e-10 if dtype == np.float64 else 2e-5
    np.testing.assert_allclose(FAKE.asnumpy(block), naive(X, X[:20]), rtol=tol, atol=tol)
    # the engine asks the kernel: the same block through ArrayEngine, on the fake device and on NumPy
    np.testing.assert_allclose(FAKE.asnumpy(ArrayEngine(FAKE).block(kernel, fake(X), fake(X[:20]), dtype)),
                               naive(X, X[:20]), rtol=tol, atol=tol)
    np.testing.assert_allclose(ArrayEngine(np).block(kernel, X, X[:20], dtype), naive(X, X[:20]), rtol=tol, atol=tol)


def test_scale_bandwidth_and_refusals_on_device_arrays():
    X, _ = _data(40)
    scaled = get_kernel("gaussian")(fake(X), fake(X[:5]))
    np.testing.assert_allclose(FAKE.asnumpy(scaled), get_kernel("gaussian")(X, X[:5]), rtol=1e-12)
    with pytest.raises(InvalidInputError, match="same number of features"):
        get_kernel("linear")(fake(X), fake(X[:, :2]))
    with pytest.raises(InvalidInputError, match="NumPy arrays"):  # no device formula: a clear refusal
        get_kernel("cosine")(fake(X), fake(X))


def test_the_engine_asks_the_kernels_tags_never_its_name():
    class GaussianKernel:  # a third party's kernel with a built-in's class name and formula tag, host only
        __skframe_tags__ = KernelTags(device_formula="gaussian")
        params = {"gamma": 0.7}

        def __call__(self, X, Y=None):
            return X @ Y.T

    class OnDevice(GaussianKernel):  # lists "cupy": called with the device arrays themselves
        __skframe_tags__ = KernelTags(backends=("numpy", "cupy"))

    X, _ = _data(30)
    with pytest.raises(InvalidParameterError, match="backend='numpy'"):
        ArrayEngine(FAKE).block(GaussianKernel(), fake(X), fake(X[:5]), np.float64)
    out = ArrayEngine(FAKE).block(OnDevice(), fake(X), fake(X[:5]), np.float64)
    np.testing.assert_allclose(FAKE.asnumpy(out), X @ X[:5].T, rtol=1e-12)
    # on the host every kernel keeps working
    part = chunk_sums(GaussianKernel(), X, X[:, :1], X[:4], np.eye(4))
    assert part.n == 30


def test_the_fused_gaussian_is_built_once_per_process():
    from skframe_kernels._namespace import fused_gaussian

    X, _ = _data(30)
    fused_gaussian.cache_clear()
    FAKE.reset()
    for gamma in (0.7, 0.2):
        for _ in range(3):
            get_kernel("gaussian", gamma=gamma)(fake(X), fake(X[:5]))
    assert FAKE.kernels_built == ["skframe_gaussian_from_cross"]
    assert fused_gaussian(np) is None  # NumPy has no compiled elementwise kernels: the plain formula


def test_device_sketch_gram_equals_the_host_one():
    X, _ = _data(200)
    kernel = get_kernel("gaussian", gamma=2.0)
    for sketch in ("subsample", "psr", "gaussian"):
        R = draw_sketch(get_sketch(sketch, size=20), len(X), np.random.default_rng(1), X=X, kernel=kernel)
        X_sub = X[R.indices]
        G = ArrayEngine(FAKE).sketch_gram(kernel, X_sub, R.mix)
        np.testing.assert_allclose(FAKE.asnumpy(G), sketch_gram(kernel, X_sub, R.mix), rtol=1e-10, atol=1e-12)


# ----------------------------------------------------------------- the streamed fit and its solve on the device
@pytest.mark.parametrize("sketch", ["subsample", "psr"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_device_fit_equals_cpu_fit_and_leaves_only_results_on_the_host(sketch, dtype, device):
    X, Y = _data()
    kernel = get_kernel("gaussian", gamma=2.0)
    R = draw_sketch(get_sketch(sketch, size=25), len(X), np.random.default_rng(1), X=X, kernel=kernel)
    ref = fit_sketched_ridge(kernel, X, Y, R, 1e-3, options=ComputeOptions(chunk_rows=128, dtype=dtype))
    FAKE.reset()
    res = fit_sketched_ridge(kernel, X, Y, R, 1e-3, options=ComputeOptions(chunk_rows=128, dtype=dtype,
                                                                           backend="cupy"))
    assert res.info["backend"] == "array" and isinstance(res.coef, np.ndarray)
    tol = 1e-8 if dtype == "float64" else 5e-3  # float32: two roundings of an ill-conditioned solve
    pred_ref, pred = naive_gaussian(X, ref.X_sub, 2.0) @ ref.coef, naive_gaussian(X, res.X_sub, 2.0) @ res.coef
    np.testing.assert_allclose(pred, pred_ref, rtol=tol, atol=tol * np.abs(pred_ref).max())
    # copies to the host: the eigenvalues (twice: precision, result), U D^-1/2 for proj, the weights W
    m, r, d = R.m, res.proj.shape[1], Y.shape[1]
    assert FAKE.transfers <= m * r + 2 * r + r * d, "the sums or the data came back to the host"


def test_accumulation_on_the_device_keeps_its_sums_there(device):
    X, Y = _data(300)
    kernel = get_kernel("gaussian", gamma=2.0)
    R = draw_sketch(get_sketch("psr", size=15), len(X), np.random.default_rng(2), X=X, kernel=kernel)
    opts = ComputeOptions(chunk_rows=100, backend="cupy")
    sums = accumulate(kernel, X, Y, X[R.indices], R.mix, options=opts, device=True)
    assert isinstance(sums.C, FakeArray) and FAKE.transfers == 0
    C, b, kr = sums.products()  # computed on the device too
    assert isinstance(C, FakeArray) and FAKE.transfers == 0
    host = accumulate(kernel, X, Y, X[R.indices], R.mix, options=ComputeOptions(chunk_rows=100))
    for a, h in zip((C, b, kr), host.products()):
        np.testing.assert_allclose(FAKE.asnumpy(a), h, rtol=1e-10, atol=1e-10 * np.abs(h).max())


@pytest.mark.parametrize("sketch", ["subsample", "psr", "gaussian"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_banded_device_products_equal_the_host_sums(sketch, dtype, monkeypatch):
    """Bands of columns (a Fortran-ordered B built as the transpose of ``S k(X_sub, X_rows)``, one gemm per
    band to the last column) give the sums of one product, in both precisions and with every mix."""
    from skframe.compute._engine_cupy import _bands

    assert _bands(25, 5) == [(0, 5), (5, 10), (10, 15), (15, 20), (20, 25)] and _bands(2000, 1000)[-1] == (1000, 2000)
    assert sum(b - a for a, b in _bands(10_007, 1000)) == 10_007
    from skframe.compute._engine_cupy import GPU_BAND_WIDTH, GPU_BANDS_FROM

    gpu_rule = ArrayEngine(np, band_width=GPU_BAND_WIDTH, bands_from=GPU_BANDS_FROM)._band_width
    assert [gpu_rule(m) for m in (1000, 1999, 2000, 10_000)] == [0, 0, 500, 1000]  # the widths measured best
    X, Y = _data(300)
    kernel = get_kernel("gaussian", gamma=2.0)
    R = draw_sketch(get_sketch(sketch, size=25), len(X), np.random.default_rng(2), X=X, kernel=kernel)
    engine = ArrayEngine(FAKE, band_width=6)  # 25 columns: 4 bands of 6-7
    monkeypatch.setattr(engines, "cupy_engine", lambda: engine)
    calls = []
    real = ArrayEngine.syrk_add
    monkeypatch.setattr(ArrayEngine, "syrk_add", lambda self, C, B: calls.append(B.flags.f_contiguous) or
                        real(self, C, B))
    opts = dict(chunk_rows=100, dtype=dtype)
    sums = accumulate(kernel, X, Y, X[R.indices], R.mix, options=ComputeOptions(backend="cupy", **opts),
                      device=True)
    assert calls == [True, True, True]  # three chunks, each Fortran-ordered for the bands
    host = accumulate(kernel, X, Y, X[R.indices], R.mix, options=ComputeOptions(**opts))
    tol = 1e-10 if dtype == "float64" else 1e-5
    for a, h in zip(sums.products(), host.products()):
        np.testing.assert_allclose(FAKE.asnumpy(a), h, rtol=tol, atol=tol * np.abs(h).max())


def test_feature_gram_is_formed_on_the_device(device):
    """The ridge start of an iterative loss (``Z^T Z``, ``Z^T Y``) is summed where the features are computed:
    only the r x r and r x d sums come back to the host, not the n x r features."""
    X, Y = _data(400)
    kernel = get_kernel("gaussian", gamma=2.0)
    X_sub, proj = X[:30], np.random.default_rng(0).normal(size=(30, 12))
    host = StreamedFeatureProblem(kernel, X, Y, X_sub, proj, ComputeOptions(chunk_rows=150)).gram()
    FAKE.reset()
    on_device = StreamedFeatureProblem(kernel, X, Y, X_sub, proj, ComputeOptions(chunk_rows=150, backend="cupy"))
    A, B = on_device.gram()
    assert isinstance(A, np.ndarray) and FAKE.transfers <= 12 * 12 + 12 * 2
    for a, h in zip((A, B), host):
        np.testing.assert_allclose(a, h, rtol=1e-10, atol=1e-10 * np.abs(h).max())


def test_model_fit_with_the_gpu_backend_solves_on_the_device(device):
    """The estimator's streamed representation and its closed-form solve, on the fake device."""
    from skframe import SketchedKernelRidge

    X, Y = _data(800)
    params = dict(kernel_params={"gamma": 2.0}, sketch="subsample", sketch_size=40, lam=1e-4, random_state=0)
    ref = SketchedKernelRidge(**params, backend="numpy").fit(X, Y)
    model = SketchedKernelRidge(**params, backend="cupy").fit(X, Y)
    assert model.execution_["backend"] == "cupy" and model.sketch_info_["backend"] == "array"
    # device chunks as the plan sized them (from the device's memory, not the CPU block size)
    assert model.sketch_info_["chunk_rows"] == model.execution_["chunk_rows"]
    # U D^-1/2, eigenvalues, W, y sums, and the two m x m matrices the posterior variance keeps for
    # return_std (the system A, B and U D^-1/2 again): the n-row chunks never come back
    assert 0 < FAKE.transfers <= 3 * 40 * 40 + 2 * 40 + 4 * (40 * 2) + 2
    # another eigensolver and solve than the host's LAPACK ones, on an ill-conditioned R K R^T
    np.testing.assert_allclose(model.predict(X), ref.predict(X), rtol=1e-6, atol=1e-6 * np.abs(ref.predict(X)).max())


# ----------------------------------------------------------------- the iterative losses' passes on the device
def test_loss_pass_runs_on_the_device_and_equals_the_host_pass(device):
    X, Y = _data(500)
    kernel = get_kernel("gaussian", gamma=2.0)
    R = draw_sketch(get_sketch("subsample", size=30), len(X), np.random.default_rng(1))
    X_sub = X[R.indices]
    proj, _ = feature_projection(kernel, X_sub, R.mix)
    loss = get_loss("huber")
    host = StreamedFeatureProblem(kernel, X, Y, X_sub, proj, ComputeOptions(chunk_rows=128))
    FAKE.reset()
    dev = StreamedFeatureProblem(kernel, X, Y, X_sub, proj, ComputeOptions(chunk_rows=128, backend="cupy"))
    V = np.random.default_rng(3).normal(size=(proj.shape[1], 2))
    C = np.array([[1.0, 0.3], [0.0, 2.0]])
    (v1, g1), (v2, g2) = host.loss_pass(V, C, loss), dev.loss_pass(V, C, loss)
    assert v2 == pytest.approx(v1, rel=1e-10)
    np.testing.assert_allclose(g2, g1, rtol=1e-9, atol=1e-12)
    # per chunk only the rows x k products K (proj V) crossed, and the gradient once (s' x k)
    assert FAKE.transfers <= len(X) * 2 + proj.shape[0] * 2


def test_block_loss_sums_with_numpy_and_device_blocks():
    rng = np.random.default_rng(0)
    K, PV, C, Y = rng.uniform(size=(40, 7)), rng.normal(size=(7, 2)), np.eye(2), rng.normal(size=(40, 2))
    loss = get_loss("huber")
    F = (K @ PV) @ C
    total, KG = block_loss_sums(K, PV, C, Y, loss)
    assert total == pytest.approx(float(np.sum(loss.value(F, Y))))
    np.testing.assert_allclose(KG, K.T @ (loss.gradient(F, Y) @ C.T), rtol=1e-12)
    t2, KG2 = block_loss_sums(fake(K), fake(PV), C, Y, loss)
    assert t2 == pytest.approx(total, rel=1e-12) and isinstance(KG2, FakeArray)
    np.testing.assert_allclose(FAKE.asnumpy(KG2), KG, rtol=1e-12)


def test_machine_fit_with_the_gpu_backend_passes_on_the_device(device):
    from skframe.models import SketchedKernelMachine

    X, Y = _data(400)
    params = dict(loss="huber", kernel_params={"gamma": 2.0}, sketch="subsample", sketch_size=25, lam=1e-3,
                  random_state=0, solver="lbfgs")
    ref = SketchedKernelMachine(**params, backend="numpy").fit(X, Y[:, 0])
    model = SketchedKernelMachine(**params, backend="cupy").fit(X, Y[:, 0])
    assert model.representation_ == "streamed"  # the device recomputes its blocks each pass
    np.testing.assert_allclose(model.predict(X), ref.predict(X), rtol=1e-6, atol=1e-6)


# ----------------------------------------------------------------- errors and imports
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


@pytest.mark.blas_free
def test_cpu_path_never_imports_cupy():
    import subprocess
    import sys

    code = ("import sys, numpy as np; from skframe import SketchedKernelRidge; "
            "from skframe.compute.streaming import get_engine; get_engine(None); "
            "X = np.random.default_rng(0).uniform(size=(300, 3)); "
            "SketchedKernelRidge(sketch='subsample', sketch_size=20).fit(X, X[:, 0]).predict(X); "
            "assert 'cupy' not in sys.modules, 'cupy imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


# ----------------------------------------------------------------- on a real GPU
def _gpu_available():
    if not deps.available("cupy"):
        return False
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def gpu(test):
    """A test that needs CuPy and an NVIDIA GPU: marked ``gpu`` (benchmarks/gpu_check.sh), skipped without one."""
    return pytest.mark.gpu(pytest.mark.skipif(not _gpu_available(), reason="needs CuPy and an NVIDIA GPU")(test))


@gpu
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_gpu_fit_equals_cpu_fit(dtype):
    X, Y = _data(5000)
    kernel = get_kernel("gaussian", gamma=2.0)
    R = draw_sketch(get_sketch("subsample", size=100), len(X), np.random.default_rng(1), X=X, kernel=kernel)
    cpu = fit_sketched_ridge(kernel, X, Y, R, 1e-3, options=ComputeOptions(dtype=dtype))
    gpu_fit = fit_sketched_ridge(kernel, X, Y, R, 1e-3, options=ComputeOptions(dtype=dtype, backend="cupy"))
    assert gpu_fit.info["backend"] == "cupy" and isinstance(gpu_fit.coef, np.ndarray)
    pc = naive_gaussian(X[:500], cpu.X_sub, 2.0) @ cpu.coef
    pg = naive_gaussian(X[:500], gpu_fit.X_sub, 2.0) @ gpu_fit.coef
    tol = 1e-7 if dtype == "float64" else 1e-3
    np.testing.assert_allclose(pg, pc, rtol=tol, atol=tol * np.abs(pc).max())


@gpu
@pytest.mark.parametrize("name,params,naive", KERNELS)
def test_gpu_kernel_blocks_equal_the_plain_formulas(name, params, naive):
    import cupy

    X, _ = _data(300)
    block = get_kernel(name, **params)(cupy.asarray(X), cupy.asarray(X[:50]))
    assert isinstance(block, cupy.ndarray)
    np.testing.assert_allclose(cupy.asnumpy(block), naive(X, X[:50]), rtol=1e-10, atol=1e-12)


@gpu
def test_gpu_models_equal_cpu_models():
    from skframe import SketchedKernelRidge
    from skframe.models import SketchedKernelMachine

    # the tolerance comes from the conditioning: the GPU sums the n x m products in another order than
    # the CPU, an error that the solve amplifies by the condition numbers of the system and of R K R^T
    # (gamma = 2, m = 200, lam = 1e-4 give kappa(R K R^T) ~ 8e11: CPU fits in two chunk sizes differ by
    # 5e-8 there, the GPU by 3e-5, both within 50 kappa eps = 9e-3 -- a test that says little)
    X, Y = _data(20_000)
    gamma, m, lam = 10.0, 100, 1e-3
    params = dict(kernel_params={"gamma": gamma}, sketch="subsample", sketch_size=m, lam=lam, random_state=0)
    ref = SketchedKernelRidge(**params, backend="numpy").fit(X, Y)
    model = SketchedKernelRidge(**params, backend="cupy").fit(X, Y)
    assert model.execution_["backend"] == "cupy"
    kernel = resolve_kernel("gaussian", {"gamma": gamma})
    rng = np.random.default_rng(check_random_state(0).randint(0, 2**31 - 1))
    R = draw_sketch(resolve_sketch("subsample", m, None), X.shape[0], rng, X=X, kernel=kernel)
    assert np.array_equal(X[R.indices], ref.X_fit_)  # the same sketch as the models drew
    rtol = solve_rtol(max(sketched_ridge_conditions(kernel, X, R, lam)), EPS64)
    assert_normwise_close(model.predict(X), ref.predict(X), rtol)
    params.update(loss="huber", solver="lbfgs")
    ref = SketchedKernelMachine(**params, backend="numpy").fit(X, Y[:, 0])
    model = SketchedKernelMachine(**params, backend="cupy").fit(X, Y[:, 0])
    assert_normwise_close(model.predict(X), ref.predict(X), max(rtol, 1e-6))  # the solver stops on a 1e-6 scale


def test_device_solve_is_the_host_solve_also_for_an_indefinite_system():
    """The device solve decides as the host's: Cholesky for a definite system, the truncated eigendecomposition
    (minimum norm, negative rounding directions dropped) for one that rounding made indefinite."""
    from skframe.compute.backend import device_solve_psd
    from skframe.core.linalg import default_rtol, solve_psd

    rng = np.random.default_rng(0)
    Q, _ = np.linalg.qr(rng.normal(size=(30, 30)))
    B = rng.normal(size=(30, 2))
    for spectrum in (np.logspace(0, -6, 30), np.r_[np.logspace(0, -6, 27), -1e-9, -3e-10, 0.0]):
        A = (Q * spectrum) @ Q.T
        A = 0.5 * (A + A.T)
        host = solve_psd(A, B)
        out = device_solve_psd(FAKE, fake(A), fake(B), default_rtol(30))
        assert isinstance(out, FakeArray)
        np.testing.assert_allclose(FAKE.asnumpy(out), host, rtol=1e-6, atol=1e-8 * np.abs(host).max())
        assert np.abs(FAKE.asnumpy(out)).max() < 1e7  # an LU solve of the indefinite one gives ~1e10


def test_the_certificate_on_the_device_equals_the_host_certificate(device):
    """A GPU fit's duality gap is computed without bringing the n x r features to the host (the Dask problem's
    two passes): the same primal and dual objectives as the CPU fit's certificate."""
    from skframe.models import SketchedKernelMachine

    X, Y = _data(600)
    kw = dict(loss="huber", kernel_params={"gamma": 2.0}, sketch="subsample", sketch_size=30, lam=1e-3,
              random_state=0, solver="lbfgs", solver_params={"max_iter": 15}, memory_budget="3MB")
    host = SketchedKernelMachine(**kw).fit(X, Y[:, 0])
    FAKE.reset()
    dev = SketchedKernelMachine(backend="cupy", **kw).fit(X, Y[:, 0])
    assert dev.representation_ == "streamed"
    for key in ("primal", "dual", "gap"):
        assert dev.solver_info_[key] == pytest.approx(host.solver_info_[key], rel=1e-6, abs=1e-9), key
    assert FAKE.transfers < 30 * len(X), "the features came to the host"


@pytest.mark.parametrize("loss_name,outputs", [("huber", 1), ("huber", 2), ("epsilon-svr", 1), ("pinball", 1)])
def test_device_dual_pass_equals_the_solvers_certificate(loss_name, outputs, device):
    """At one primal point, the device's two-pass dual objective is the solvers' ``dual_from_primal`` (which
    forms the features on the host), for smooth, non-smooth and multi-output losses."""
    from skframe_solvers._duality import dual_from_primal
    from skframe_solvers._problem import FeatureMapProblem

    X, Y = _data(500)
    kernel = get_kernel("gaussian", gamma=2.0)
    R = draw_sketch(get_sketch("subsample", size=30), len(X), np.random.default_rng(1))
    proj, _ = feature_projection(kernel, X[R.indices], R.mix)
    loss, lam = get_loss(loss_name), 1e-2
    Yl = Y[:, :outputs]
    host = StreamedFeatureProblem(kernel, X, Yl, X[R.indices], proj, ComputeOptions(chunk_rows=128))
    dev = StreamedFeatureProblem(kernel, X, Yl, X[R.indices], proj, ComputeOptions(chunk_rows=128, backend="cupy"))
    assert host.dual_pass(np.zeros((proj.shape[1], 1)), np.eye(1), loss, lam) is None  # the CPU keeps its own
    fp = FeatureMapProblem(host, loss, lam)
    V = np.random.default_rng(3).normal(size=fp.shape) * 0.1
    reference = dual_from_primal(fp, V)[1]
    assert dev.dual_pass(V, fp.C, loss, lam) == pytest.approx(reference, rel=1e-9, abs=1e-12)


def test_weighted_fits_on_the_device_equal_the_cpu_fits(device):
    """Sample weights reach a GPU fit: the weighted intercept, the weighted closed form from the feature blocks."""
    from skframe import SketchedKernelRidge

    X, Y = _data(500)
    w = np.random.default_rng(4).integers(0, 3, size=500).astype(float)
    kw = dict(kernel_params={"gamma": 2.0}, sketch="subsample", sketch_size=25, lam=1e-3, random_state=0)
    ref = SketchedKernelRidge(**kw).fit(X, Y, sample_weight=w)
    dev = SketchedKernelRidge(backend="cupy", **kw).fit(X, Y, sample_weight=w)
    assert dev.execution_["backend"] == "cupy"
    np.testing.assert_allclose(dev.predict(X), ref.predict(X), rtol=1e-8, atol=1e-10)
