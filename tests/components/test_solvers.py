"""Solvers reach the optimum of the feature-map problem of a direct solver (1e-4 relative), new Solver contract."""

import numpy as np
import pytest
import scipy.optimize as sopt

from skframe.contract.problems import ArrayProblem, Problem, SolveResult
from skframe.contract.registry import get_loss, get_solver
from skframe.exceptions import InvalidInputError, InvalidParameterError
from tests import naive

LAM = 0.05


def _problem(rng, n=30, r=5, d=1, kind="reg"):
    Z = rng.normal(size=(n, r))
    W = rng.normal(size=(r, d))
    Y = Z @ W + 0.5 * rng.standard_t(2, size=(n, d))
    if kind == "clf":
        Y = np.where(Y > 0, 1.0, -1.0)
    return Z, Y


def _objective(name, params):
    ref = {
        "square": lambda F, Y: naive.loss_square(F, Y),
        "huber": lambda F, Y: naive.loss_huber(F, Y, params.get("kappa")),
        "epsilon-ridge": lambda F, Y: naive.loss_eps_l2(F, Y, params.get("epsilon")),
        "epsilon-svr": lambda F, Y: naive.loss_eps_l1(F, Y, params.get("epsilon")),
        "pinball": lambda F, Y: naive.loss_pinball(F, Y, params.get("quantiles")),
        "hinge": lambda F, Y: naive.loss_hinge(F, Y),
    }[name]
    return ref


def _smooth_reference(Z, Y, ref, lam, M):
    """scipy BFGS on the plain objective (numerical gradients, tight tolerance)."""
    r, d = Z.shape[1], Y.shape[1]

    def f(w):
        return naive.feature_map_objective(w.reshape(r, d), Z, Y, ref, lam, M)

    res = sopt.minimize(f, np.zeros(r * d), method="BFGS", options={"gtol": 1e-9})
    res = sopt.minimize(f, res.x, method="Nelder-Mead", options={"xatol": 1e-10, "fatol": 1e-14, "maxiter": 20000})
    return res.fun


def _qp_reference(Z, y, name, params, lam):
    """Exact optimum of the scalar piecewise-linear problem as a QP with slacks (SLSQP)."""
    n, r = Z.shape
    y = y[:, 0]
    # variables x = (w, xi); objective lam/2 |w|^2 + mean(xi)
    rows = []  # each constraint: a . x + b >= 0
    for i in range(n):
        e = np.zeros(n)
        e[i] = 1.0
        zi = Z[i]
        if name == "epsilon-svr":
            eps = params["epsilon"]
            rows += [(np.r_[-zi, e], y[i] + eps), (np.r_[zi, e], -y[i] + eps)]
        elif name == "pinball":
            t = params["quantiles"][0]
            rows += [(np.r_[t * zi, e], -t * y[i]), (np.r_[(t - 1) * zi, e], (1 - t) * y[i])]
        elif name == "hinge":
            rows += [(np.r_[y[i] * zi, e], -1.0)]
        rows += [(np.r_[np.zeros(r), e], 0.0)]
    A = np.array([a for a, _ in rows])
    b = np.array([c for _, c in rows])

    def fun(x):
        return 0.5 * lam * x[:r] @ x[:r] + x[r:].mean()

    def jac(x):
        return np.r_[lam * x[:r], np.full(n, 1.0 / n)]

    x0 = np.r_[np.zeros(r), np.abs(y) + 1.0]
    res = sopt.minimize(fun, x0, jac=jac, method="SLSQP",
                        constraints=[{"type": "ineq", "fun": lambda x: A @ x + b, "jac": lambda x: A}],
                        options={"ftol": 1e-14, "maxiter": 2000})
    # SLSQP may end with "positive directional derivative" at machine precision: check feasibility instead
    assert res.success or res.status == 8, res.message
    assert np.min(A @ res.x + b) > -1e-9
    return res.fun


def _rel(a, b):
    return abs(a - b) / abs(b)


M2 = np.array([[1.0, 0.6], [0.6, 1.0]])


@pytest.mark.parametrize("M", [None, M2], ids=["M=I", "M=quantile-like"])
def test_square_loss_all_solvers_match_closed_form(rng, M):
    Z, Y = _problem(rng, d=2)
    loss = get_loss("square")
    W_cf = get_solver("closed-form").solve(ArrayProblem(Z, Y), loss, LAM, M=M).W
    ref = naive.feature_map_objective(W_cf, Z, Y, naive.loss_square, LAM, M)
    # the closed form satisfies the optimality condition of the plain objective
    Mm = np.eye(2) if M is None else M
    grad = Z.T @ (Z @ W_cf @ Mm - Y) @ Mm / Z.shape[0] + LAM * W_cf @ Mm
    assert np.abs(grad).max() < 1e-10
    assert _rel(ref, _smooth_reference(Z, Y, naive.loss_square, LAM, M)) < 1e-6
    W_lb = get_solver("lbfgs", init="zeros").solve(ArrayProblem(Z, Y), loss, LAM, M=M).W
    assert _rel(naive.feature_map_objective(W_lb, Z, Y, naive.loss_square, LAM, M), ref) < 1e-8
    adam = get_solver("adam", init="zeros", epochs=3000, batch_size=30, learning_rate=0.05, tol=None)
    W_ad = adam.solve(ArrayProblem(Z, Y), loss, LAM, M=M, rng=0).W
    assert _rel(naive.feature_map_objective(W_ad, Z, Y, naive.loss_square, LAM, M), ref) < 1e-4


def test_closed_form_equals_ridge_formula(rng):
    Z, Y = _problem(rng, d=3)
    n = Z.shape[0]
    W = get_solver("closed-form").solve(ArrayProblem(Z, Y), get_loss("square"), LAM).W
    np.testing.assert_allclose(W, np.linalg.solve(Z.T @ Z + n * LAM * np.eye(Z.shape[1]), Z.T @ Y), rtol=1e-10)


@pytest.mark.parametrize("name,params", [("huber", {"kappa": 0.5}), ("epsilon-ridge", {"epsilon": 0.3})])
@pytest.mark.parametrize("M", [None, M2], ids=["M=I", "M=coupled"])
def test_smooth_losses_lbfgs_and_adam_reach_scipy_optimum(rng, name, params, M):
    Z, Y = _problem(rng, d=2)
    ref_fn = _objective(name, params)
    ref = _smooth_reference(Z, Y, ref_fn, LAM, M)
    loss = get_loss(name, **params)
    lb = get_solver("lbfgs")
    res = lb.solve(ArrayProblem(Z, Y), loss, LAM, M=M)
    assert _rel(naive.feature_map_objective(res.W, Z, Y, ref_fn, LAM, M), ref) < 1e-6
    assert res.stop_reason.startswith("converged") and res.n_iter >= 1 and len(res.history) >= 2
    assert 0 <= res.info["relative_gap"] < 1e-3  # certificate of the smooth loss at its optimum
    ad = get_solver("adam", epochs=3000, batch_size=30, learning_rate=0.02, tol=None)
    W = ad.solve(ArrayProblem(Z, Y), loss, LAM, M=M, rng=0).W
    assert _rel(naive.feature_map_objective(W, Z, Y, ref_fn, LAM, M), ref) < 1e-4


@pytest.mark.parametrize(
    "name,params,kind",
    [("epsilon-svr", {"epsilon": 0.2}, "reg"), ("epsilon-svr", {"epsilon": 0.0}, "reg"),
     ("pinball", {"quantiles": [0.3]}, "reg"), ("hinge", {}, "clf")],
)
def test_nonsmooth_losses_adam_reaches_qp_optimum(rng, name, params, kind):
    Z, Y = _problem(rng, kind=kind)
    ref = _qp_reference(Z, Y, name, params, LAM)
    ad = get_solver("adam", epochs=4000, batch_size=30, learning_rate=0.05, schedule="linear", tol=None)
    res = ad.solve(ArrayProblem(Z, Y), get_loss(name, **params), LAM, rng=0)
    got = naive.feature_map_objective(res.W, Z, Y, _objective(name, params), LAM)
    assert got >= ref - 1e-9 * abs(ref)  # nothing beats the exact optimum
    assert _rel(got, ref) < 1e-4
    assert len(res.history) == res.n_iter + 1 and "maximum number of epochs" in res.stop_reason
    # Adam reports how far it may be from the optimum: a duality gap, valid (>= true distance)
    assert "duality gap" in res.stop_reason
    assert res.info["dual"] <= ref + 1e-9 * abs(ref) and res.info["gap"] >= got - ref - 1e-12


def test_adam_is_reproducible_and_seed_dependent(rng):
    Z, Y = _problem(rng, n=200, d=2)
    loss = get_loss("epsilon-svr", epsilon=0.1)
    problem = ArrayProblem(Z, Y)
    W1, W2, W3 = (get_solver("adam", epochs=5, batch_size=16).solve(problem, loss, LAM, rng=s).W for s in (1, 1, 2))
    np.testing.assert_array_equal(W1, W2)
    assert not np.array_equal(W1, W3)


def test_adam_early_stopping_and_tol(rng):
    Z, Y = _problem(rng, n=200)
    loss = get_loss("epsilon-svr", epsilon=0.1)
    ad = get_solver("adam", epochs=500, batch_size=32, early_stopping=True, validation_fraction=0.2,
                    n_iter_no_change=3, tol=1e-2)
    res = ad.solve(ArrayProblem(Z, Y), loss, LAM, rng=0)
    assert res.n_iter < 500 and res.stop_reason.startswith("early stopping")
    ad = get_solver("adam", epochs=500, batch_size=32, tol=1e-2, n_iter_no_change=3)
    res = ad.solve(ArrayProblem(Z, Y), loss, LAM, rng=0)
    assert res.n_iter < 500 and res.stop_reason.startswith("converged")


def test_solver_errors(rng):
    Z, Y = _problem(rng)
    with pytest.raises(InvalidParameterError, match="only handles the square loss"):
        get_solver("closed-form").solve(ArrayProblem(Z, Y), get_loss("huber"), LAM)
    with pytest.raises(InvalidParameterError, match="smooth"):
        get_solver("lbfgs").solve(ArrayProblem(Z, Y), get_loss("hinge"), LAM)
    for bad in ({"epochs": 0}, {"learning_rate": -1.0}, {"validation_fraction": 1.0}, {"schedule": "cosine"}):
        with pytest.raises(InvalidParameterError):
            get_solver("adam", **bad)
    with pytest.raises(InvalidParameterError, match="lam"):
        get_solver("closed-form").solve(ArrayProblem(Z, Y), get_loss("square"), -1.0)


class StreamedProblem(Problem):
    """Features given only block by block (nothing in memory), as a memory-mapped problem would."""

    def __init__(self, Z, Y, chunk=7):
        self._Z, self._Y, self.chunk = Z, Y, chunk

    n = property(lambda self: self._Z.shape[0])
    r = property(lambda self: self._Z.shape[1])
    d = property(lambda self: self._Y.shape[1])

    def blocks(self, chunk_rows=None):
        step = chunk_rows or self.chunk
        for start in range(0, self.n, step):
            yield start, self._Z[start:start + step], self._Y[start:start + step]


@pytest.mark.parametrize("M", [None, M2], ids=["M=I", "M=coupled"])
def test_streamed_problem_lbfgs_closed_form_and_adam(rng, M):
    Z, Y = _problem(rng, d=2)
    loss = get_loss("huber", kappa=0.5)
    streamed, memory = StreamedProblem(Z, Y), ArrayProblem(Z, Y)
    a = get_solver("lbfgs").solve(streamed, loss, LAM, M=M)
    b = get_solver("lbfgs").solve(memory, loss, LAM, M=M)
    assert isinstance(a, SolveResult)
    np.testing.assert_allclose(a.W, b.W, rtol=1e-6, atol=1e-8)
    sq = get_loss("square")
    np.testing.assert_allclose(get_solver("closed-form").solve(streamed, sq, LAM, M=M).W,
                               get_solver("closed-form").solve(memory, sq, LAM, M=M).W, rtol=1e-10)
    adam = get_solver("adam", epochs=1500, batch_size=10, learning_rate=0.02, tol=None)
    ad = adam.solve(streamed, loss, LAM, M=M, rng=0)
    ref = naive.feature_map_objective(b.W, Z, Y, _objective("huber", {"kappa": 0.5}), LAM, M)
    assert _rel(naive.feature_map_objective(ad.W, Z, Y, _objective("huber", {"kappa": 0.5}), LAM, M), ref) < 1e-3
    with pytest.raises(InvalidInputError, match="in memory"):
        get_solver("adam", early_stopping=True).solve(streamed, loss, LAM)


def test_warm_start_init_is_used_and_solvers_keep_no_state(rng):
    Z, Y = _problem(rng, d=2)
    loss = get_loss("huber", kappa=0.5)
    lb = get_solver("lbfgs")
    first = lb.solve(ArrayProblem(Z, Y), loss, LAM)
    warm = lb.solve(ArrayProblem(Z, Y), loss, LAM, init=first.W)
    assert warm.n_iter <= 2 and _rel(warm.history[0], first.history[-1]) < 1e-10
    assert not [k for k in vars(lb) if k.endswith("_")]  # no fitted state on the solver
    with pytest.raises(InvalidParameterError, match="init has shape"):
        lb.solve(ArrayProblem(Z, Y), loss, LAM, init=np.zeros((2, 2)))


# ----------------------------------------------------------------------------- BLAS threads from the plan
def test_admm_applies_the_blas_threads_its_problem_carries(monkeypatch):
    import contextlib

    import skframe_solvers.admm as admm
    from skframe.models import SketchedKernelMachine

    asked = []

    def recording(serial=True):
        asked.append(serial)
        return contextlib.nullcontext()

    monkeypatch.setattr(admm, "serial_blas", recording)
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((60, 3)), rng.standard_normal(60)
    loss = get_loss("pinball", quantiles=[0.5])
    problem = ArrayProblem(X, y)
    assert problem.blas_threads is None  # a problem built outside a fit: BLAS is left as it is
    get_solver("admm", max_iter=20).solve(problem, loss, 0.1)
    problem.blas_threads = 1
    get_solver("admm", max_iter=20).solve(problem, loss, 0.1)
    assert asked == [False, True]
    asked.clear()
    SketchedKernelMachine(loss="pinball", loss_params={"quantiles": [0.5]}, solver="admm", sketch_size=10,
                          random_state=0).fit(X, y)
    assert asked == [True]  # one target column: the plan's rule gives the iterations one BLAS thread


def test_the_plan_gives_solvers_one_blas_thread_for_a_few_columns():
    from skframe.compute.plan_rules import SOLVER_SERIAL_COLUMNS, solver_blas_threads

    assert solver_blas_threads(SOLVER_SERIAL_COLUMNS, 4) == 1
    assert solver_blas_threads(SOLVER_SERIAL_COLUMNS + 1, 4) == 4


@pytest.mark.parametrize("loss_name,solver,d", [("logistic", "newton", 1), ("multinomial", "newton", 3),
                                                ("huber", "lbfgs", 1), ("hinge", "admm", 1)])
def test_kept_features_are_passed_in_bounded_blocks(monkeypatch, loss_name, solver, d):
    """A pass over kept features takes at most BLOCK_BYTES of rows at a time (the Newton Hessian scales a copy of
    each block by the rows' curvature): the solution is the one of a single block, to rounding."""
    from skframe_solvers import _problem

    rng = np.random.default_rng(0)
    Z = rng.normal(size=(240, 6))
    if loss_name in ("logistic", "hinge"):
        Y = np.where(Z[:, :1] + 0.3 * rng.normal(size=(240, 1)) > 0, 1.0, -1.0)
    elif loss_name == "multinomial":
        Y = 2 * np.eye(d)[np.argmax(Z[:, :d] + 0.3 * rng.normal(size=(240, d)), axis=1)] - 1
    else:
        Y = Z[:, :1] + 0.1 * rng.normal(size=(240, 1))
    loss = get_loss(loss_name)
    whole = get_solver(solver).solve(ArrayProblem(Z, Y), loss, 1e-2).W
    seen = []
    real = _problem.FeatureMapProblem.blocks

    def recording(self):
        for start, Zb, Yb in real(self):
            seen.append(Zb.shape[0])
            yield start, Zb, Yb

    monkeypatch.setattr(_problem, "BLOCK_BYTES", 8 * 6 * 50)  # 50 rows of 6 features
    monkeypatch.setattr(_problem.FeatureMapProblem, "blocks", recording)
    blocked = get_solver(solver).solve(ArrayProblem(Z, Y), loss, 1e-2).W
    assert seen and max(seen) <= 50
    np.testing.assert_allclose(blocked, whole, rtol=1e-7, atol=1e-9)
