"""The execution plan: its choices from given sizes, memory and devices, and the same numbers from every executor."""

import dataclasses
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from sklearn.utils import check_random_state

from skframe import SketchedKernelClassifier, SketchedKernelMachine, SketchedKernelRidge
from skframe.compute import plan as plan_mod
from skframe.compute import plan_rules
from skframe.compute.plan import DataShape, ExecutionPlan, Machine, available_memory, describe_data, plan_fit
from skframe.core.sketching import draw_sketch
from skframe.exceptions import InvalidParameterError, MemoryBudgetError
from skframe.models._base import resolve_kernel, resolve_sketch
from skframe.options import ComputeOptions
from skframe.plugin.api import SketchTags
from tests.tolerances import EPS64, assert_normwise_close, sketched_ridge_conditions, solve_rtol

GB = 10**9
BIG = Machine(memory_bytes=16 * GB, cores=2, memory_source="test")


class FakeSubsample:
    """A sketch that samples m points (s' = m)."""

    name = "subsample"

    def __init__(self, size):
        self.size = size


class FakePSR:
    """A p-sparsified sketch: s' = n (1 - (1 - p)^m)."""

    name = "psr"

    def __init__(self, size, p=None):
        self.size, self.p = size, p

    def resolved_p(self, n):
        return self.p if self.p is not None else min(1.0, 20.0 / n)


class FakeFeatures:
    """An explicit feature map: m may exceed n."""

    name = "rff"

    def __init__(self, size):
        self.size = size

    def __skframe_tags__(self):
        return SketchTags(feature_map=True)


def _plan(n, sketch=None, *, d=10, loss="square", machine=BIG, **options):
    sketch = FakeSubsample(min(n, 1000)) if sketch is None else sketch
    options.setdefault("backend", "auto")
    return plan_fit(DataShape(n=n, n_features=d), sketch=sketch, loss=loss, options=ComputeOptions(**options),
                    machine=machine)


# ----------------------------------------------------------------------------- the machine
def test_available_memory_reads_meminfo_and_a_cgroup_limit(tmp_path):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       32000000 kB\nMemAvailable:   20000000 kB\n")
    none = tmp_path / "none"
    assert available_memory(str(meminfo), str(none)) == (20000000 * 1024, "MemAvailable 20.5 GB")
    v2 = tmp_path / "v2"
    v2.mkdir()
    (v2 / "memory.max").write_text("8000000000\n")
    (v2 / "memory.current").write_text("1000000000\n")
    got, source = available_memory(str(meminfo), str(v2))
    assert got == 7 * GB and "cgroup limit 8 GB" in source
    (v2 / "memory.max").write_text("max\n")  # no limit: MemAvailable
    assert available_memory(str(meminfo), str(v2))[0] == 20000000 * 1024
    v1 = tmp_path / "v1"
    (v1 / "memory").mkdir(parents=True)
    (v1 / "memory" / "memory.limit_in_bytes").write_text("4000000000\n")
    (v1 / "memory" / "memory.usage_in_bytes").write_text("500000000\n")
    assert available_memory(str(meminfo), str(v1))[0] == 3_500_000_000


def test_detect_machine_without_gpu_probe():
    m = plan_mod.detect_machine()
    assert m.memory_bytes > 0 and m.cores >= 1 and not m.gpu and m.gpu_source == "not probed"


# ----------------------------------------------------------------------------- budget and executor
def test_default_budget_is_half_the_available_memory_and_a_given_one_wins():
    p = _plan(1000)
    assert p.memory_budget == 8 * GB and p.budget_source == "machine"
    assert "half the memory" in p.reasons["memory_budget"]
    p = _plan(1000, memory_budget="1GB")
    assert p.memory_budget == GB and p.budget_source == "given"


def test_small_square_fit_stays_in_memory_and_large_streams():
    small = _plan(2000, FakeSubsample(100))
    assert small.executor == "in-memory" and small.keep_features and small.blas_threads == 1
    assert "in-memory fit is faster" in small.reasons["executor"]
    n = plan_mod.STREAM_MIN_WORK // 1000
    large = _plan(n, FakePSR(1000))
    assert large.executor == "streamed" and not large.keep_features
    assert "at least as fast" in large.reasons["executor"]
    # a sketch sampling few points (s' = m) streams from a smaller n m; p-SR (s' >> m) not yet
    n = 4 * plan_mod.SAMPLED_STREAM_MIN_WORK // 300
    assert _plan(n, FakeSubsample(300)).executor == "streamed"
    assert _plan(n, FakePSR(300)).executor == "in-memory"


def test_square_fit_streams_when_the_in_memory_arrays_do_not_fit():
    tiny = Machine(memory_bytes=2 * 10**8, cores=2)
    p = _plan(50_000, FakeSubsample(500), machine=tiny)  # 2 n m 8 = 400 MB > 100 MB
    assert p.executor == "streamed" and "exceed the budget" in p.reasons["executor"]
    assert p.peak_bytes <= p.memory_budget


@pytest.mark.parametrize("data, options, executor, words", [
    (DataShape(n=5000, n_features=3, memory_mapped=True), {}, "streamed", "memory-mapped"),
    (DataShape(n=5000, n_features=3, dask=True, partition_rows=700), {}, "dask", "Dask"),
    (DataShape(n=5000, n_features=3), {"dtype": "float32"}, "streamed", "float32"),
    (DataShape(n=5000, n_features=3), {"memory_budget": "1GB"}, "streamed", "memory_budget"),
    (DataShape(n=5000, collection=True), {}, "in-memory", "collections"),
])
def test_executor_from_the_data_and_options(data, options, executor, words):
    p = plan_fit(data, sketch=FakeSubsample(50), options=ComputeOptions(**options), machine=BIG)
    assert p.executor == executor and words in p.reasons["executor"]


def test_exact_model_and_feature_maps_run_in_memory():
    p = _plan(500, sketch=None)
    p = plan_fit(DataShape(n=500, n_features=3), sketch=None, machine=BIG)
    assert p.executor == "in-memory" and p.sketch_size == 500 and "exact" in p.reasons["executor"]
    p = plan_fit(DataShape(n=500, n_features=3), sketch=FakeFeatures(800), machine=BIG)
    assert p.executor == "in-memory" and p.sketch_size == 800 and p.s_prime is None


def test_iterative_losses_keep_features_when_they_fit_else_recompute_them():
    p = _plan(10_000, FakeSubsample(200), loss="iterative")
    assert p.executor == "in-memory" and p.keep_features
    # the in-memory arrays (2 n m 8 = 3.2 GB) exceed 2 GB; the features (1.6 GB) fit: streamed, kept
    mid = Machine(memory_bytes=4 * GB, cores=2)
    p = _plan(200_000, FakeSubsample(1000), loss="iterative", machine=mid)
    assert p.executor == "streamed" and p.keep_features and "kept" in p.reasons["keep_features"]
    small = Machine(memory_bytes=2 * GB, cores=2)
    p = _plan(200_000, FakeSubsample(1000), loss="iterative", machine=small)
    assert p.executor == "streamed" and not p.keep_features and "recomputed" in p.reasons["keep_features"]



def test_kept_features_leave_room_in_the_budget_and_the_fit_keeps_what_the_plan_says():
    # 3 000 rows, r = 110: the 2.6 MB of features fit a 40 MB budget, but the stream's chunks alone were sized to
    # fill it: the plan said "kept" while the fit streamed them, and dual-cd (the hinge loss's solver) refused
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 5))
    y = (X[:, 0] + 0.3 * rng.normal(size=3000) > 0).astype(int)
    model = SketchedKernelClassifier(memory_budget="40MB", random_state=0).fit(X, y)  # hinge, dual-cd
    ex = model.execution_
    assert ex["executor"] == "streamed" and ex["keep_features"] and model.representation_ == "in-memory"
    assert ex["peak_bytes"] <= 40 * 10**6 and "kept" in ex["reasons"]["keep_features"]
    stream = plan_mod.plan_stream(3000, 110, 110, 5, 1, ComputeOptions(memory_budget="40MB"))
    rows = plan_mod.kept_features_rows(3000, 110, 8, 40 * 10**6, stream)
    assert rows is not None and stream.fixed_bytes + rows * stream.per_row_bytes + 3000 * 110 * 8 <= 40 * 10**6
    assert plan_mod.kept_features_rows(3000, 110, 8, stream.fixed_bytes + 3000 * 110 * 8, stream) is None


# ----------------------------------------------------------------------------- sketch size
def test_auto_size_follows_the_rule_capped_by_the_chosen_path():
    p = plan_fit(DataShape(n=10**6, n_features=10), sketch="subsample", machine=BIG)
    assert p.executor == "streamed" and p.sketch_size == 1000 and p.size_rule.startswith("auto")
    assert "capped" not in p.size_rule
    # a budget that holds no 1000 x 1000 sums: the size shrinks to what the streamed path holds
    p = plan_fit(DataShape(n=10**6, n_features=10), sketch="subsample",
                 options=ComputeOptions(memory_budget="20MB"), machine=BIG)
    assert 1 <= p.sketch_size < 1000 and "capped" in p.size_rule and p.peak_bytes <= 20 * 10**6
    assert plan_mod.auto_size_rule(4000) == 127 and plan_mod.auto_size_rule(50) == 50


def test_p_sparsified_sampled_points_enter_the_plan():
    p = plan_fit(DataShape(n=10**6, n_features=10), sketch=FakePSR(1000), machine=BIG)
    expected = 10**6 * (1 - (1 - 20e-6) ** 1000)
    assert abs(p.s_prime - expected) <= 1 and p.work == 10**6 * p.s_prime
    assert plan_mod.expected_columns(FakePSR(1000, p=1.0), 500) == 500


def test_an_impossible_budget_is_refused_before_allocating():
    with pytest.raises(MemoryBudgetError, match="memory_budget"):
        _plan(10**6, FakeSubsample(5000), memory_budget="10MB")


# ----------------------------------------------------------------------------- backend, engine, threads
def test_auto_backend_is_numpy_without_a_gpu():
    p = _plan(10**6, FakeSubsample(1000), machine=dataclasses.replace(BIG, gpu_source="CuPy is not installed"))
    assert p.backend == "numpy" and p.engine in ("numpy", "numba") and "CuPy is not installed" in p.reasons["backend"]
    with pytest.raises(InvalidParameterError, match="backend='tpu'"):
        _plan(1000, backend="tpu")


def test_auto_backend_takes_a_gpu_for_large_work_only():
    gpu = Machine(memory_bytes=16 * GB, cores=16, gpu=True, gpu_free_bytes=80 * GB, gpu_source="GPU 80 GB free")
    large = _plan(10**7, FakeSubsample(2000), machine=gpu)
    assert large.backend == "cupy" and large.engine == "cupy" and large.executor == "streamed"
    assert large.budget_source == "gpu" and large.memory_budget == 40 * GB
    assert large.chunk_rows > 32768  # from the device's memory, not the CPU block size
    assert large.compute_options().chunk_rows == large.chunk_rows
    small = _plan(2000, FakeSubsample(100), machine=gpu)
    assert small.backend == "numpy" and "transfer" in small.reasons["backend"]
    dask = plan_fit(DataShape(n=10**7, n_features=10, dask=True), sketch=FakeSubsample(2000), machine=gpu)
    assert dask.backend == "numpy" and dask.executor == "dask"
    assert _plan(10**7, FakeSubsample(2000), machine=gpu, backend="numpy").backend == "numpy"


def test_engine_and_blas_threads_from_the_size(monkeypatch):
    monkeypatch.delenv("SKFRAME_NUMBA_MIN_WORK", raising=False)
    small = _plan(2000, FakeSubsample(100))
    assert small.engine == "numpy" and small.blas_threads == 1
    large = _plan(10**6, FakeSubsample(1000))
    assert large.blas_threads == 2 and large.engine == ("numba" if plan_rules.numba_enabled() else "numpy")
    monkeypatch.setenv("SKFRAME_DISABLE_NUMBA", "1")
    assert _plan(10**6, FakeSubsample(1000)).engine == "numpy"


def test_compute_options_carry_the_plans_decisions():
    p = _plan(10**6, FakeSubsample(1000))
    o = p.compute_options()
    assert (o.engine, o.blas_threads, o.backend, o.dtype, o.memory_budget) == (
        p.engine, p.blas_threads, "numpy", "float64", p.memory_budget)
    # a model without a streamed path: in memory, the auto size capped by the in-memory arrays
    q = plan_fit(DataShape(n=10**6, n_features=10), sketch="subsample", machine=BIG, streamable=False)
    assert q.executor == "in-memory" and "no streamed path" in q.reasons["executor"]
    assert q.sketch_size < 1000 and "capped" in q.size_rule and q.peak_bytes <= q.memory_budget


@pytest.mark.parametrize("options", [{}, {"memory_budget": "50MB"}])
def test_the_fit_hands_the_plans_engine_to_the_kernel(options, monkeypatch):
    """No ambient state: the engine the plan chose is the argument every kernel block of the fit receives."""
    from skframe_kernels.kernels import GaussianKernel

    if not plan_rules.numba_enabled():
        pytest.skip("numba is not installed or disabled: the plan has no other engine to choose")
    seen, call = [], GaussianKernel.__call__

    def spy(self, X, Y=None, *, dtype=None, engine=None):
        seen.append(engine)
        return call(self, X, Y, dtype=dtype, engine=engine)

    monkeypatch.setattr(GaussianKernel, "__call__", spy)
    # a small fit would run on NumPy; a plan that says numba must reach the kernel as such
    monkeypatch.setattr(plan_rules, "choose_engine", lambda backend, work, **_: ("numba", "chosen by the test"))
    X, y = _data(300)
    model = SketchedKernelRidge(kernel_params={"gamma": 2.0}, sketch="psr", sketch_size=20, random_state=0,
                                **options).fit(X, y)
    assert model.execution_["engine"] == "numba" and seen and set(seen) == {"numba"}


def test_plan_is_frozen_and_its_dict_is_json():
    p = _plan(10**6, FakeSubsample(1000))
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.executor = "in-memory"
    d = json.loads(json.dumps(p.to_dict()))
    assert d["executor"] == "streamed" and set(d["reasons"]) >= {"executor", "backend", "engine", "chunk_rows",
                                                                "products", "blas_threads", "keep_features",
                                                                "memory_budget", "sketch_size"}
    assert any(line.startswith("executor") for line in p.explain())
    assert isinstance(p, ExecutionPlan)


def test_describe_data():
    X = np.zeros((7, 3))
    shape = describe_data(X, np.zeros((7, 2)))
    assert (shape.n, shape.n_features, shape.n_outputs, shape.memory_mapped, shape.dask) == (7, 3, 2, False, False)
    import scipy.sparse as sp

    assert describe_data(sp.csr_matrix(X)).sparse


def test_describe_memory_map(tmp_path):
    np.save(tmp_path / "X.npy", np.zeros((5, 2)))
    assert describe_data(np.load(tmp_path / "X.npy", mmap_mode="r")).memory_mapped


# ----------------------------------------------------------------------------- the CPU path never imports CuPy
@pytest.mark.blas_free
def test_cpu_path_never_imports_cupy(tmp_path):
    """A fit with backend='numpy' (and an auto fit with CuPy disabled) never imports CuPy, even when installed."""
    fake = tmp_path / "cupy"
    fake.mkdir()
    (fake / "__init__.py").write_text("raise RuntimeError('cupy was imported')\n")
    script = textwrap.dedent("""
        import sys
        import numpy as np
        from skframe import SketchedKernelRidge
        X = np.random.default_rng(0).uniform(size=(300, 3)); y = X[:, 0]
        m = SketchedKernelRidge(sketch_size=20, backend=sys.argv[1], random_state=0).fit(X, y)
        m.predict(X)
        assert "cupy" not in sys.modules, "cupy imported"
        print(m.execution_["backend"])
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", script, "numpy"], env=env, capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "numpy", out.stderr
    env["SKFRAME_DISABLE_CUPY"] = "1"
    out = subprocess.run([sys.executable, "-c", script, "auto"], env=env, capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "numpy", out.stderr


# ----------------------------------------------------------------------------- the same numbers from every executor
def _data(n=900, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    y = np.sin(4 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.05 * rng.normal(size=n)
    return X, y


def _tolerance(X, sketch, m, lam, gamma, seed):
    kernel = resolve_kernel("gaussian", {"gamma": gamma})
    rng = np.random.default_rng(check_random_state(seed).randint(0, 2**31 - 1))
    R = draw_sketch(resolve_sketch(sketch, m, None), X.shape[0], rng, X=X, kernel=kernel)
    kappa, _ = sketched_ridge_conditions(kernel, X, R, lam)
    return solve_rtol(kappa, EPS64)


@pytest.fixture(scope="module")
def dask_client():
    """A LocalCluster of two single-threaded worker processes (the workers do the partitions' sums)."""
    pytest.importorskip("dask.array")
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None,
                                  silence_logs=40) as cluster, distributed.Client(cluster) as client:
        yield client


@pytest.mark.parametrize("sketch", ["subsample", "psr"])
def test_every_executor_gives_the_same_predictions(sketch, dask_client, monkeypatch):
    """One small problem fitted in memory, streamed (a small budget; and by default past the crossover) and on
    a Dask cluster: the predictions agree within the bound the conditioning of the problem gives."""
    from skframe.compute.distributed import to_dask

    X, y = _data()
    kw = dict(kernel_params={"gamma": 2.0}, sketch=sketch, sketch_size=40, lam=1e-3, random_state=1)
    rtol = _tolerance(X, sketch, 40, 1e-3, 2.0, 1)
    ref = SketchedKernelRidge(**kw).fit(X, y)
    assert ref.execution_["executor"] == "in-memory" and ref.representation_ == "in-memory"
    budget = SketchedKernelRidge(memory_budget="50MB", **kw).fit(X, y)
    assert budget.execution_["executor"] == "streamed" and budget.representation_ == "accumulated"
    Xd, yd = to_dask(X, y, rows=250)
    dist = SketchedKernelRidge(**kw).fit(Xd, yd)
    assert dist.execution_["executor"] == "dask" and dist.execution_["backend"] == "numpy"
    assert dist.sketch_info_["partitions"] == 4
    # the same engine of the inner loops everywhere: the plan's, passed down as an argument
    assert ref.execution_["engine"] == budget.execution_["engine"] == dist.execution_["engine"]
    # with no flags, a size at or above the crossover streams
    monkeypatch.setattr(plan_rules, "STREAM_MIN_WORK", 1000)
    monkeypatch.setattr(plan_rules, "SAMPLED_STREAM_MIN_WORK", 1000)
    default = SketchedKernelRidge(**kw).fit(X, y)
    assert default.execution_["executor"] == "streamed" and "at least as fast" in default.execution_["reasons"][
        "executor"]
    for other in (budget, dist, default):
        assert_normwise_close(other.predict(X), ref.predict(X), rtol)


def test_iterative_loss_executors_agree():
    X, y = _data(500)
    kw = dict(kernel_params={"gamma": 2.0}, sketch="subsample", sketch_size=30, loss="huber", lam=1e-3,
              random_state=0)
    ref = SketchedKernelMachine(**kw).fit(X, y)
    assert ref.execution_["executor"] == "in-memory" and ref.execution_["loss"] == "iterative"
    kept = SketchedKernelMachine(memory_budget="100MB", **kw).fit(X, y)
    assert kept.execution_["executor"] == "streamed" and kept.execution_["keep_features"]
    np.testing.assert_allclose(kept.predict(X), ref.predict(X), rtol=1e-5, atol=1e-6)


def test_execution_is_saved_and_loaded(tmp_path):
    from skframe.persistence import load, reproducible_execution, save

    X, y = _data(300)
    model = SketchedKernelRidge(kernel_params={"gamma": 2.0}, sketch_size=20, random_state=0).fit(X, y)
    save(model, tmp_path / "m.skf")
    back = load(tmp_path / "m.skf")
    saved = reproducible_execution(model.execution_)  # the decisions, without the machine's measurements
    assert back.execution_ == saved and "machine" not in saved and saved["executor"] == "in-memory"
    assert json.loads(json.dumps(back.execution_)) == saved


def test_execution_plan_without_fitting():
    X, y = _data(300)
    model = SketchedKernelRidge(kernel_params={"gamma": 2.0}, random_state=0)
    plan = model.execution_plan(X, y)
    assert plan.executor == "in-memory" and plan.sketch_size == plan_mod.auto_size_rule(300)
    assert not hasattr(model, "execution_")
    huber = SketchedKernelMachine(loss="huber", sketch_size=20).execution_plan(X, y)
    assert huber.loss == "iterative"


def test_sparse_inputs_take_compiled_loops_on_smaller_problems():
    """SciPy's sparse products cost far more per kernel entry than the compiled CSR loops."""
    if not plan_rules.numba_enabled():
        pytest.skip("numba is not installed or disabled")
    limit = plan_rules.numba_min_work()
    work = limit // 2
    assert plan_rules.choose_engine("numpy", work)[0] == "numpy"
    engine, reason = plan_rules.choose_engine("numpy", work, sparse=True)
    assert engine == "numba" and "sparse" in reason
    assert plan_rules.choose_engine("numpy", limit // (2 * plan_rules.SPARSE_ENGINE_SHARE), sparse=True)[0] == "numpy"


def test_small_fits_never_ask_whether_there_is_a_gpu(monkeypatch):
    """Asking for a GPU imports CuPy (a quarter of a second where it is installed): a fit whose work is below
    ``GPU_MIN_WORK`` would run on the CPU anyway, so it never asks; a large one does."""
    from skframe.compute import machine as machine_mod

    asked = []
    monkeypatch.setattr(machine_mod, "_probe_gpu", lambda: asked.append(1) or (False, None, "no GPU here"))
    X = np.random.default_rng(0).uniform(size=(300, 3))
    model = SketchedKernelRidge(sketch="subsample", sketch_size=20).fit(X, X[:, 0])
    assert asked == [] and model.execution_["backend"] == "numpy"
    assert "below" in model.execution_["reasons"]["backend"]
    p = plan_fit(DataShape(n=10**7, n_features=10), sketch="subsample", sketch_size=2000)
    assert asked == [1] and p.backend == "numpy" and p.reasons["backend"] == "no GPU: no GPU here"


def test_newton_fits_stream_from_the_crossover_keeping_the_kernel_block(monkeypatch):
    # the rule: an iterative loss whose solver reads kept features as two factors (newton) streams from
    # STREAM_MIN_WORK kernel entries; other iterative solvers keep the in-memory executor
    opts = ComputeOptions(memory_budget=10**11)
    shape = DataShape(n=300_000, n_features=10)
    big = plan_rules.STREAM_MIN_WORK // 1000 + 1
    newton = plan_rules.choose_executor(shape, "sketch", "iterative", "numpy", "float64", None, big, 1000, 1000, opts,
                                        factored=True)
    other = plan_rules.choose_executor(shape, "sketch", "iterative", "numpy", "float64", None, big, 1000, 1000, opts)
    small = plan_rules.choose_executor(shape, "sketch", "iterative", "numpy", "float64", None, big // 2, 1000, 1000,
                                       opts, factored=True)
    assert newton[0] == "streamed" and "never forms the features" in newton[1]
    assert other[0] == small[0] == "in-memory"
    # through the estimators: the plan asks whether the fit's solver is newton
    X = np.random.default_rng(0).normal(size=(400, 3))
    y = (X[:, 0] > 0).astype(int)
    monkeypatch.setattr(plan_rules, "STREAM_MIN_WORK", 1000)
    kw = dict(kernel_params={"gamma": 0.5}, sketch="subsample", sketch_size=40, loss="logistic", lam=1e-3,
              random_state=0)
    streamed = SketchedKernelClassifier(**kw).fit(X, y)
    assert streamed.execution_["executor"] == "streamed" and "newton" in streamed.execution_["reasons"]["executor"]
    lbfgs = SketchedKernelClassifier(solver="lbfgs", **kw).execution_plan(X, y)
    assert lbfgs.executor == "in-memory"
    monkeypatch.setattr(plan_rules, "STREAM_MIN_WORK", 10**12)
    kept = SketchedKernelClassifier(**kw, dtype="float64").fit(X, y)  # in memory, the features formed
    assert kept.execution_["executor"] == "in-memory"
    exact = SketchedKernelClassifier(**kw, dtype="float64").fit(X, y)
    monkeypatch.setattr(plan_rules, "STREAM_MIN_WORK", 1000)
    both = SketchedKernelClassifier(**kw, dtype="float64").fit(X, y)  # streamed, the kernel block kept in float64
    assert both.execution_["executor"] == "streamed"
    np.testing.assert_allclose(both.predict_proba(X), exact.predict_proba(X), rtol=1e-6, atol=1e-8)
