"""The fused normal pass and the preconditioned conjugate gradients of the square loss over Nyström centres,
against plain NumPy: ``K.T @ (a K @ V + W)`` and the direct solution of ``(K^T K + n lam K_mm) alpha = K^T y``."""

import numpy as np
import pytest

from skframe import SketchedKernelRidge
from skframe.compute.fused import fused_capable, normal_pass
from skframe.contract.registry import get_kernel
from skframe.exceptions import InvalidInputError, InvalidParameterError
from skframe.options import ComputeOptions
from skframe_solvers.pcg import FalkonPreconditioner, NystromPCG

ENGINES = ["numpy", "numba"]


def _data(n=1500, d=3, m=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    y = np.sin(7 * X[:, 0]) * np.cos(4 * X[:, 1]) + 0.05 * rng.standard_normal(n)
    C = X[rng.choice(n, m, replace=False)]
    return X, y, C


def _gauss(X, C, gamma):
    return np.exp(-gamma * ((X[:, None, :] - C[None, :, :]) ** 2).sum(-1))


def _direct(K, Kmm, y, lam):
    n = K.shape[0]
    return np.linalg.lstsq(K.T @ K + n * lam * Kmm, K.T @ y, rcond=None)[0]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("a, with_w, cols", [(1.0, False, None), (-0.5, True, 2), (0.0, True, 1)])
def test_normal_pass_equals_plain_numpy(engine, a, with_w, cols):
    X, _, C = _data()
    rng = np.random.default_rng(1)
    V = rng.standard_normal(len(C) if cols is None else (len(C), cols))
    W = rng.standard_normal((len(X),) + V.shape[1:]) if with_w else None
    kernel = get_kernel("gaussian", gamma=2.5)
    K = _gauss(X, C, 2.5)
    ref = K.T @ (a * (K @ V) + (W if with_w else 0.0))
    out = normal_pass(kernel, X, C, V, W, a=a, options=ComputeOptions(engine=engine, chunk_rows=256))
    assert out.shape == ref.shape
    np.testing.assert_allclose(out, ref, rtol=1e-10, atol=1e-10 * np.abs(ref).max())


def test_normal_pass_other_kernels_run_blocked():
    X, _, C = _data(n=400, m=30)
    kernel = get_kernel("laplacian", gamma=0.7)
    assert not fused_capable(kernel, X) and fused_capable(get_kernel("gaussian", gamma=1.0), X)
    v = np.linspace(-1, 1, len(C))
    K = kernel(X, C)
    np.testing.assert_allclose(normal_pass(kernel, X, C, v, options=ComputeOptions(chunk_rows=64)), K.T @ (K @ v),
                               rtol=1e-10)


def test_preconditioner_inverts_falkon_approximation():
    X, _, C = _data(n=800, m=60)
    Kmm, n, m, lam = _gauss(C, C, 2.0), len(X), len(C), 1e-3
    pre = FalkonPreconditioner(Kmm.copy(), lam, n)
    B = pre.apply(np.eye(m))
    P = n / m * Kmm @ Kmm + n * lam * Kmm
    np.testing.assert_allclose(B.T @ P @ B, np.eye(m), atol=1e-6)
    np.testing.assert_allclose(pre.apply_t(np.eye(m)), B.T, atol=1e-8 * np.abs(B).max())
    np.testing.assert_allclose(pre.penalty(np.eye(m)), B.T @ (n * lam * Kmm) @ B, atol=1e-6)


@pytest.mark.parametrize("engine", ENGINES)
def test_pcg_equals_direct_nystrom_krr(engine):
    X, y, C = _data()
    lam, gamma = 1e-4, 3.0
    kernel = get_kernel("gaussian", gamma=gamma)
    K, Kmm = _gauss(X, C, gamma), _gauss(C, C, gamma)
    res = NystromPCG(tol=1e-9, max_passes=80).solve_centres(kernel, X, C, y, lam,
                                                            options=ComputeOptions(engine=engine))
    assert res.info["residual"] <= 1e-9 and res.stop_reason.startswith("relative residual")
    assert res.info["passes"] == res.n_iter + 1 and len(res.history) == res.n_iter + 1
    f_ref = K @ _direct(K, Kmm, y, lam)
    np.testing.assert_allclose(K @ res.W[:, 0], f_ref, atol=1e-6 * np.abs(f_ref).max())


def test_pcg_several_targets_and_warm_start():
    X, y, C = _data(seed=3)
    Y = np.column_stack([y, np.cos(3 * X[:, 2])])
    kernel = get_kernel("gaussian", gamma=3.0)
    K, Kmm = _gauss(X, C, 3.0), _gauss(C, C, 3.0)
    solver = NystromPCG(tol=1e-9, max_passes=80)
    first = solver.solve_centres(kernel, X, C, Y, 1e-3)
    for j in range(2):
        np.testing.assert_allclose(K @ first.W[:, j], K @ _direct(K, Kmm, Y[:, j], 1e-3), atol=1e-6)
    cold = solver.solve_centres(kernel, X, C, Y, 2e-3)
    warm = solver.solve_centres(kernel, X, C, Y, 2e-3, init=first.W)
    assert warm.info["residual"] <= 1e-9 and warm.n_iter <= cold.n_iter
    np.testing.assert_allclose(K @ warm.W, K @ cold.W, atol=1e-6)


def test_pcg_stops_at_max_passes_and_reports_residual():
    X, y, C = _data()
    res = NystromPCG(tol=1e-14, max_passes=5).solve_centres(get_kernel("gaussian", gamma=3.0), X, C, y, 1e-6)
    assert res.info["passes"] == 5 and res.n_iter == 4 and res.stop_reason == "5 passes over the rows"
    assert res.info["residual"] == res.history[-1] > 1e-14


def test_pcg_repeated_centres_get_jitter():
    X, y, C = _data(n=600, m=40)
    C = np.vstack([C, C[:5]])
    res = NystromPCG(tol=1e-6, max_passes=200).solve_centres(get_kernel("gaussian", gamma=3.0), X, C, y, 1e-3)
    assert res.info["jitter"] > 0 and np.isfinite(res.W).all()


def test_pcg_matches_the_direct_solver_of_the_model():
    X, y, _ = _data(n=1200, seed=5)
    lam = 1e-3
    model = SketchedKernelRidge(kernel_params={"gamma": 3.0}, sketch="subsample", sketch_size=100, lam=lam,
                                fit_intercept=False, random_state=0).fit(X, y)
    res = NystromPCG(tol=1e-10, max_passes=100).solve_centres(model.kernel_, X, model.X_fit_, y, lam)
    Xt = np.random.default_rng(9).uniform(size=(300, 3))
    direct = model.predict(Xt)
    np.testing.assert_allclose(model.kernel_(Xt, model.X_fit_) @ res.W[:, 0], direct, atol=1e-5)


@pytest.mark.parametrize("params, lam", [({"tol": 0}, 1e-3), ({"max_passes": 1}, 1e-3), ({}, 0.0), ({}, "x")])
def test_pcg_bad_parameters(params, lam):
    X, y, C = _data(n=100, m=10)
    with pytest.raises(InvalidParameterError):
        NystromPCG(**params).solve_centres(get_kernel("gaussian", gamma=1.0), X, C, y, lam)


def test_pcg_row_mismatch():
    X, y, C = _data(n=100, m=10)
    with pytest.raises(InvalidInputError, match="100 rows"):
        NystromPCG().solve_centres(get_kernel("gaussian", gamma=1.0), X, C, y[:50], 1e-3)


def test_plan_chooses_the_square_solver():
    from skframe.compute.plan import DataShape, Machine, plan_fit
    from skframe.compute.plan_square import PCG_MIN_CENTRES, cheaper_square_solver, choose_square_solver

    machine = Machine(memory_bytes=16 * 10**9, cores=2)
    big = plan_fit(DataShape(n=10**6, n_features=10), sketch="subsample", sketch_size=10**4, machine=machine)
    assert big.reasons["square_solver"].startswith("pcg: m = 10000 >= 4000 Nyström centres")
    auto = plan_fit(DataShape(n=10**6, n_features=10), sketch="subsample", sketch_size="auto", machine=machine)
    assert auto.reasons["square_solver"].startswith("closed-form") and auto.sketch_size == 1000
    psr = plan_fit(DataShape(n=10**5, n_features=10), sketch="psr", sketch_size=5000, machine=machine)
    assert psr.reasons["square_solver"].startswith("closed-form: the sketch does not sample")
    m = 2 * PCG_MIN_CENTRES
    # beyond m^2 memory: the low-rank preconditioner where it fits, else the closed form says neither fits
    solver, why = choose_square_solver(10**6, m, m, 8 * m * m - 1, "numpy")
    assert solver == "pcg" and "low-rank preconditioner" in why
    solver, why = choose_square_solver(10**6, m, m, 10**6, "numpy")
    assert solver == "closed-form" and why.startswith("neither the m x m preconditioner")
    assert cheaper_square_solver(10**6, m, m, 10**12, "cupy")[0] == "closed-form"
    assert choose_square_solver(10**6, m, m, 10**12, "numpy")[0] == "pcg"


def test_square_solver_reason_matches_the_fit(monkeypatch):
    """Where the cost rule picks conjugate gradients, the fit runs them over its centres (its reason, stop reason
    and solver_info_ say so) and predicts as the closed form over the same centres, to the residual."""
    from skframe.compute import plan_square

    monkeypatch.setattr(plan_square, "PCG_MIN_CENTRES", 30)  # the cost rule's branch on small data
    X, y, _ = _data(n=400, m=10)
    kw = dict(kernel_params={"gamma": 2.0}, sketch="subsample", sketch_size=40, lam=1e-3, random_state=0,
              backend="numpy")
    model = SketchedKernelRidge(**kw).fit(X, y)
    reason = model.execution_["reasons"]["square_solver"]
    assert reason.startswith("pcg: m = 40 >= 30") and model.representation_ == "centres"
    assert model.stop_reason_.startswith("relative residual") and model.solver_info_["solver"] == "pcg"
    assert model.solver_info_["residual"] <= 1e-7 and model.solver_info_["passes"] == model.n_iter_ + 1
    monkeypatch.setattr(plan_square, "PCG_MIN_CENTRES", 4000)
    closed = SketchedKernelRidge(**kw).fit(X, y)
    assert closed.stop_reason_ == "closed form (exact minimiser)"
    np.testing.assert_array_equal(closed.X_fit_, model.X_fit_)  # the same draw of centres
    np.testing.assert_allclose(model.predict(X), closed.predict(X), atol=1e-4 * np.abs(y).max())
