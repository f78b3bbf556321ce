"""Dask: partitions reduced on a LocalCluster give the single-machine numbers; lost workers never change them."""

import os
import signal
import threading
import time

import numpy as np
import pytest

pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import dask.array as da  # noqa: E402

from skframe.compute.distributed import fit_sketched_ridge_dask  # noqa: E402
from skframe.compute.stream_problems import StreamedFeatureProblem, feature_projection  # noqa: E402
from skframe.compute.streaming import fit_sketched_ridge  # noqa: E402
from skframe.contract.registry import get_kernel, get_loss, get_sketch, get_solver  # noqa: E402
from skframe.core.sketching import draw_sketch  # noqa: E402
from skframe.exceptions import DistributedError, InvalidInputError  # noqa: E402
from skframe.options import ComputeOptions  # noqa: E402
from skframe_kernels.kernels import GaussianKernel  # noqa: E402
from tests.tolerances import EPS64, assert_normwise_close, sketched_ridge_conditions, solve_rtol  # noqa: E402

LAM = 1e-3


class SlowGaussian(GaussianKernel):
    """A Gaussian kernel that takes its time, so that a worker can be killed mid-fit."""

    def __call__(self, X, Y=None):
        time.sleep(0.15)
        return super().__call__(X, Y)


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None,
                                  silence_logs=40) as cluster, distributed.Client(cluster) as c:
        yield c


def _problem(n=1200, sketch="psr", seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 3))
    y = np.sin(4 * X[:, 0]) + X[:, 1] + 0.05 * rng.normal(size=n)
    kernel = get_kernel("gaussian", gamma=2.0)
    R = draw_sketch(get_sketch(sketch, size=30), n, np.random.default_rng(seed + 1), X=X, kernel=kernel)
    return X, y, kernel, R


@pytest.mark.parametrize("sketch", ["subsample", "psr"])
def test_dask_equals_single_machine(client, sketch):
    X, y, kernel, R = _problem(sketch=sketch)
    ref = fit_sketched_ridge(kernel, X, y, R, LAM)
    res = fit_sketched_ridge_dask(kernel, da.from_array(X, chunks=(250, 3)), da.from_array(y, chunks=250), R, LAM)
    assert res.info["backend"] == "dask" and res.info["partitions"] == 5
    # the partitions sum in another order than one machine: rounding bounded by the conditioning
    kappa, kappa_rkr = sketched_ridge_conditions(kernel, X, R, LAM)
    pred, pred_ref = kernel(X, res.X_sub) @ res.coef, kernel(X, ref.X_sub) @ ref.coef
    assert_normwise_close(pred, pred_ref, solve_rtol(kappa, EPS64))
    assert_normwise_close(res.coef, ref.coef, solve_rtol(kappa * kappa_rkr, EPS64))


def test_dask_float32_close(client):
    X, y, kernel, R = _problem()
    opts = ComputeOptions(dtype="float32")
    ref = fit_sketched_ridge(kernel, X, y, R, LAM)
    res = fit_sketched_ridge_dask(kernel, da.from_array(X, chunks=(400, 3)), y, R, LAM, options=opts)
    pred_ref, pred = kernel(X, ref.X_sub) @ ref.coef, kernel(X, res.X_sub) @ res.coef
    assert np.max(np.abs(pred - pred_ref)) < 1e-3 * np.max(np.abs(pred_ref))


def test_streamed_pass_leaves_dask_arrays_to_their_executor():
    X, y, kernel, R = _problem(200)
    with pytest.raises(InvalidInputError, match="fit_sketched_ridge_dask"):
        fit_sketched_ridge(kernel, da.from_array(X, chunks=(100, 3)), y, R, LAM)


def test_dask_iterative_loss_equals_single_machine(client):
    from skframe.compute.distributed import DaskFeatureProblem

    X, y, kernel, R = _problem(600)
    X_sub = X[R.indices]
    proj, _ = feature_projection(kernel, X_sub, R.mix)
    loss = get_loss("huber")
    local = StreamedFeatureProblem(kernel, X, y, X_sub, proj, ComputeOptions(chunk_rows=300))
    remote = DaskFeatureProblem(kernel, da.from_array(X, chunks=(300, 3)), da.from_array(y, chunks=300), X_sub, proj)
    V, C = np.random.default_rng(1).normal(size=(proj.shape[1], 1)), np.array([[1.5]])
    (v1, g1), (v2, g2) = local.loss_pass(V, C, loss), remote.loss_pass(V, C, loss)
    assert v2 == pytest.approx(v1, rel=1e-10)
    np.testing.assert_allclose(g2, g1, rtol=1e-9, atol=1e-12)
    assert remote.loss_pass(V, C, loss, gradient=False) == (pytest.approx(v1, rel=1e-10), None)
    solver = get_solver("lbfgs", max_iter=8, init="zeros")  # its passes are the partitions' map-reduce
    r1, r2 = solver.solve(local, loss, LAM), solver.solve(remote, loss, LAM)
    np.testing.assert_allclose(r2.W, r1.W, rtol=1e-8, atol=1e-10)


@pytest.mark.blas_free
def test_killed_worker_gives_same_model_or_clear_error(client):
    """A worker killed mid-fit: the partitions are recomputed (same model) or DistributedError is raised."""
    X, y, _, R = _problem(1600, sketch="subsample")
    kernel = SlowGaussian(gamma=2.0)
    opts = ComputeOptions(chunk_rows=160)
    ref = fit_sketched_ridge(get_kernel("gaussian", gamma=2.0), X, y, R, LAM, options=opts)
    pids = client.run(os.getpid)
    victim = sorted(pids.values())[0]

    def kill():
        time.sleep(0.6)
        os.kill(victim, signal.SIGKILL)

    killer = threading.Thread(target=kill)
    killer.start()
    Xd, yd = da.from_array(X, chunks=(160, 3)), da.from_array(y, chunks=160)
    try:
        res = fit_sketched_ridge_dask(kernel, Xd, yd, R, LAM, options=opts)
    except DistributedError as exc:
        assert "no model was produced" in str(exc)
    else:
        np.testing.assert_allclose(res.coef, ref.coef, rtol=1e-8, atol=1e-9 * np.abs(ref.coef).max())
    finally:
        killer.join()
    client.wait_for_workers(2, timeout=60)


def test_model_fits_dask_arrays(client):
    from skframe import SketchedKernelRidge

    X, y, _, _ = _problem(1000)
    params = dict(kernel_params={"gamma": 2.0}, sketch="subsample", sketch_size=30, lam=LAM, random_state=0)
    ref = SketchedKernelRidge(**params).fit(X, y)
    model = SketchedKernelRidge(**params).fit(da.from_array(X, chunks=(250, 3)), da.from_array(y, chunks=250))
    assert model.sketch_info_["backend"] == "dask" and model.n_features_in_ == 3
    np.testing.assert_allclose(model.coef_, ref.coef_, rtol=1e-8, atol=1e-10 * np.abs(ref.coef_).max())
    np.testing.assert_allclose(model.predict(X), ref.predict(X), rtol=1e-8, atol=1e-10)


def test_machine_fits_dask_arrays(client):
    from skframe.models import SketchedKernelMachine

    X, y, _, _ = _problem(600)
    params = dict(loss="huber", kernel_params={"gamma": 2.0}, sketch="subsample", sketch_size=30, lam=LAM,
                  random_state=0, solver="lbfgs")
    ref = SketchedKernelMachine(**params).fit(X, y)
    model = SketchedKernelMachine(**params).fit(da.from_array(X, chunks=(200, 3)), da.from_array(y, chunks=200))
    assert model.sketch_info_["representation"] == "streamed"  # passes are map-reduces; the client holds no rows
    np.testing.assert_allclose(model.predict(X), ref.predict(X), rtol=1e-8, atol=1e-10)


def test_weighted_fits_on_dask_arrays_equal_the_numpy_fits(client):
    """Sample weights travel to the Dask fits: the weighted intercept computed by the workers, the weighted closed
    form from one pass over the partitions' feature blocks, L-BFGS passes with the rows' weights; a loss whose
    intercept is a weighted median is refused with the fix."""
    from skframe import SketchedKernelRidge
    from skframe.exceptions import InvalidParameterError
    from skframe.models import SketchedKernelMachine

    X, y, _, _ = _problem(800)
    w = np.random.default_rng(7).integers(0, 3, size=800).astype(float)
    Xd, yd = da.from_array(X, chunks=(200, 3)), da.from_array(y, chunks=200)
    params = dict(kernel_params={"gamma": 2.0}, sketch="subsample", sketch_size=30, lam=LAM, random_state=0)
    for model in (SketchedKernelRidge(**params), SketchedKernelMachine(loss="square", solver="lbfgs", **params),
                  SketchedKernelMachine(loss="huber", solver="lbfgs", fit_intercept=False, **params)):
        ref = clone_of(model).fit(X, y, sample_weight=w)
        dist = clone_of(model).fit(Xd, yd, sample_weight=w)
        assert dist.execution_["executor"] == "dask"
        np.testing.assert_allclose(dist.predict(X), ref.predict(X), rtol=1e-8, atol=1e-10)
    with pytest.raises(InvalidParameterError, match="fit_intercept=False"):
        SketchedKernelMachine(loss="huber", solver="lbfgs", **params).fit(Xd, yd, sample_weight=w)


def clone_of(model):
    from sklearn.base import clone

    return clone(model)


def test_without_dask_a_clear_error(monkeypatch):
    from skframe.compute import distributed as dist
    from skframe.exceptions import DependencyError

    monkeypatch.setenv("SKFRAME_DISABLE_DASK", "1")
    with pytest.raises(DependencyError, match="SKFRAME_DISABLE_DASK"):
        dist.tree_reduce([1, 2])


@pytest.mark.blas_free
@pytest.mark.parametrize("levels", [[0.5], [0.0, 1.0], [0.1, 0.37], [0.9, 0.5]])
def test_column_quantiles_are_numpy_quantiles(client, levels):
    from skframe.compute.distributed import column_quantiles

    rng = np.random.default_rng(3)
    d = len(levels)
    Y = np.column_stack([rng.normal(size=5003), np.round(rng.uniform(size=5003), 1)][:d])  # ties in column 2
    Yd = da.from_array(Y, chunks=(700, d))
    expected = [np.quantile(Y[:, j], q) for j, q in enumerate(levels)]
    np.testing.assert_array_equal(column_quantiles(Yd, levels), expected)
    # narrowing over several passes (tiny bins and gathers) reaches the same order statistics
    np.testing.assert_array_equal(column_quantiles(Yd, levels, bins=4, gather=3), expected)
    one = da.from_array(np.array([[2.5]]), chunks=(1, 1))
    assert column_quantiles(one, [0.3]).tolist() == [2.5]


@pytest.mark.blas_free
def test_dask_targets_stay_on_the_cluster(client, monkeypatch):
    """y is checked and reduced by the workers: the client never computes an n-row array."""
    from skframe import SketchedKernelRidge
    from skframe.compute import distributed as dist

    X, y, _, _ = _problem(1000)
    Xd, yd = da.from_array(X, chunks=(250, 3)), da.from_array(y, chunks=250)
    real = dist._compute
    n_rows = []

    def watched(obj, retries):
        out = real(obj, retries)
        for a in out if isinstance(out, (tuple, list)) else [out]:
            if hasattr(a, "shape") and getattr(a, "ndim", 0) >= 1:
                n_rows.append(a.shape[0])
        return out

    monkeypatch.setattr(dist, "_compute", watched)
    params = dict(kernel_params={"gamma": 2.0}, sketch="subsample", sketch_size=30, lam=LAM, random_state=0)
    model = SketchedKernelRidge(**params).fit(Xd, yd)
    assert n_rows and max(n_rows) < 1000  # sampled points, sums: never the n = 1000 targets
    ref = SketchedKernelRidge(**params).fit(X, y)
    np.testing.assert_allclose(model.intercept_, ref.intercept_, rtol=1e-12)
    np.testing.assert_allclose(model.predict(X), ref.predict(X), rtol=1e-8, atol=1e-10)
    with pytest.raises(InvalidInputError, match="NaN or infinity"):
        SketchedKernelRidge(**params).fit(Xd, da.from_array(np.where(np.arange(1000) == 7, np.nan, y), chunks=250))


def test_dask_robust_intercept_is_the_median(client):
    from skframe.models import SketchedKernelMachine

    X, y, _, _ = _problem(601)
    params = dict(loss="huber", kernel_params={"gamma": 2.0}, sketch="subsample", sketch_size=30, lam=LAM,
                  random_state=0, solver="lbfgs", fit_intercept=True)
    model = SketchedKernelMachine(**params).fit(da.from_array(X, chunks=(200, 3)), da.from_array(y, chunks=200))
    assert model.intercept_.tolist() == [np.median(y)]
    ref = SketchedKernelMachine(**params).fit(X, y)
    np.testing.assert_allclose(model.predict(X), ref.predict(X), rtol=1e-8, atol=1e-10)


def test_sums_serve_unrelated_dask_targets(client):
    """Targets other than the accumulated ones (not a constant shift) get their own pass of the workers."""
    from skframe.compute.stream_fit import streamed_representation
    from skframe.options import ComputeOptions as Options

    X, y, kernel, _ = _problem(800)
    Xd, yd = da.from_array(X, chunks=(200, 3)), da.from_array(y[:, None], chunks=(200, 1))
    sketch = get_sketch("subsample", size=20)
    local = streamed_representation(X, y[:, None], kernel, sketch, np.random.default_rng(0), Options())
    remote = streamed_representation(Xd, yd, kernel, sketch, np.random.default_rng(0), Options())
    for other in (y[:, None] - 0.75, np.sin(y)[:, None]):  # a shift (no pass), then unrelated targets
        A1, B1 = local.problem(other).gram()
        A2, B2 = remote.problem(da.from_array(other, chunks=(200, 1))).gram()
        np.testing.assert_allclose(A2, A1, rtol=1e-10, atol=1e-12 * np.abs(A1).max())
        np.testing.assert_allclose(B2, B1, rtol=1e-9, atol=1e-10 * np.abs(B1).max())


@pytest.mark.blas_free
def test_dask_certificate_is_a_map_reduce(client, monkeypatch):
    """The duality gap of a Dask fit: the same dual point as one machine's, never streamed to the client."""
    from skframe.compute.distributed import DaskFeatureProblem
    from skframe_solvers._duality import dual_from_primal
    from skframe_solvers._problem import FeatureMapProblem

    X, y, kernel, R = _problem(600)
    X_sub = X[R.indices]
    proj, _ = feature_projection(kernel, X_sub, R.mix)
    local = StreamedFeatureProblem(kernel, X, y, X_sub, proj, ComputeOptions(chunk_rows=300))
    remote = DaskFeatureProblem(kernel, da.from_array(X, chunks=(300, 3)), da.from_array(y, chunks=300), X_sub, proj)

    def no_blocks(chunk_rows=None):
        raise AssertionError("the certificate brought feature blocks to the client")

    monkeypatch.setattr(remote, "blocks", no_blocks)
    V = np.random.default_rng(4).normal(size=(proj.shape[1], 1))
    for name in ("huber", "epsilon-svr"):  # a norm dual and a box (separable) dual
        loss = get_loss(name)
        fp = FeatureMapProblem(local, loss, LAM)
        assert remote.dual_pass(V, fp.C, loss, LAM) == pytest.approx(dual_from_primal(fp, V)[1], rel=1e-9)
    solver = get_solver("lbfgs", max_iter=8, init="zeros")
    r1, r2 = solver.solve(local, get_loss("huber"), LAM), solver.solve(remote, get_loss("huber"), LAM)
    assert r2.info["dual"] == pytest.approx(r1.info["dual"], rel=1e-9)
    assert r2.info["relative_gap"] == pytest.approx(r1.info["relative_gap"], rel=1e-6, abs=1e-12)


@pytest.mark.blas_free
def test_default_solvers_pass_over_dask_partitions(client):
    """A loss whose default solver needs the features in memory takes one that passes over the partitions."""
    from skframe.models import SketchedKernelMachine

    X, y, _, _ = _problem(400)
    params = dict(kernel_params={"gamma": 2.0}, sketch="subsample", sketch_size=20, lam=LAM, random_state=0)
    for loss, expected in (("huber", "lbfgs"), ("epsilon-svr", "adam")):
        model = SketchedKernelMachine(loss=loss, **params).fit(da.from_array(X, chunks=(200, 3)),
                                                              da.from_array(y, chunks=200))
        assert model.solver_spec_.name == expected and model.representation_ == "streamed"
        assert np.all(np.isfinite(model.predict(X)))
