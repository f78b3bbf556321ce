"""dual-cd: dual coordinate ascent reaches the optimum certified by the duality gap.

Conversions to scikit-learn's liblinear estimators (no intercept). skframe minimises
``(lam/2) ||w||^2 + (1/n) sum_i l(z_i . w, y_i)``; liblinear minimises
``1/2 ||w||^2 + C sum_i L(z_i . w, y_i)``. Dividing liblinear's objective by ``C n``:

* ``LinearSVR(loss="epsilon_insensitive")``, ``LinearSVC(loss="hinge")``: ``L = l``, so
  ``C = 1 / (n lam)`` and ``objective_skframe = objective_liblinear / (C n)``;
* ``LinearSVR(loss="squared_epsilon_insensitive")``: ``L = max(|r| - eps, 0)^2 = 2 l`` for
  skframe's ``l = 1/2 max(|r| - eps, 0)^2``, so ``C = 1 / (2 n lam)``.
"""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC, LinearSVR

from skframe.contract.problems import ArrayProblem
from skframe.contract.registry import get_loss, get_solver
from skframe.contract.tags import get_tags
from skframe.exceptions import InvalidInputError, InvalidParameterError
from skframe.models import JointQuantileRegressor, SketchedKernelMachine
from tests import naive
from tests.components.test_solvers import M2, StreamedProblem, _objective, _qp_reference, _rel, _smooth_reference

LAM = 0.05
#: the three methods of dual-cd (coordinate epochs, Newton steps, ADMM splitting) each checked against
#: the independent references; "auto" picks one of them from the conditioning
METHODS = ["epochs", "newton", "admm"]


#: every built-in loss with a dual, as (name, params, kind of targets)
EVERY_LOSS = [("huber", {"kappa": 0.5}, "reg"), ("epsilon-svr", {"epsilon": 0.2}, "reg"),
              ("epsilon-ridge", {"epsilon": 0.2}, "reg"), ("pinball", {"quantiles": [0.3, 0.8]}, "reg"),
              ("hinge", {}, "clf")]


def _data(rng, n=60, r=6, d=1, kind="reg"):
    Z = rng.normal(size=(n, r))
    Y = Z @ rng.normal(size=(r, d)) + 0.5 * rng.standard_t(2, size=(n, d))
    if kind == "clf":
        Y = np.where(Y > 0, 1.0, -1.0)
    return Z, Y


def _fit(Z, Y, name, params, lam=LAM, M=None, **solver_params):
    solver = get_solver("dual-cd", **{"tol": 1e-10, "max_epochs": 20000, "max_newton_steps": 2000, **solver_params})
    return solver.solve(ArrayProblem(Z, Y), get_loss(name, **params), lam, M=M, rng=0)


def _obj(res, Z, Y, name, params, lam=LAM, M=None):
    return naive.feature_map_objective(res.W, Z, Y, _objective(name, params), lam, M)


@pytest.mark.parametrize("loss,name,params,factor", [
    ("epsilon_insensitive", "epsilon-svr", {"epsilon": 0.2}, 1.0),
    ("epsilon_insensitive", "epsilon-svr", {"epsilon": 0.0}, 1.0),
    ("squared_epsilon_insensitive", "epsilon-ridge", {"epsilon": 0.2}, 0.5),
])
@pytest.mark.parametrize("method", METHODS)
def test_matches_liblinear_svr(rng, loss, name, params, factor, method):
    Z, Y = _data(rng)
    n = Z.shape[0]
    C = factor / (n * LAM)  # see the module docstring
    svr = LinearSVR(loss=loss, epsilon=params["epsilon"], C=C, dual=True, fit_intercept=False, tol=1e-10,
                    random_state=0, max_iter=1_000_000).fit(Z, Y[:, 0])
    ref = naive.feature_map_objective(svr.coef_[:, None], Z, Y, _objective(name, params), LAM)
    res = _fit(Z, Y, name, params, method=method)
    assert res.info["method"] == method
    got = _obj(res, Z, Y, name, params)
    assert _rel(got, ref) < 1e-5
    assert got <= ref * (1 + 1e-7)  # at least as good as liblinear
    np.testing.assert_allclose(res.W[:, 0], svr.coef_, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("method", METHODS)
def test_matches_liblinear_svc_hinge(rng, method):
    Z, Y = _data(rng, kind="clf")
    n = Z.shape[0]
    svc = LinearSVC(loss="hinge", C=1.0 / (n * LAM), dual=True, fit_intercept=False, tol=1e-10, random_state=0,
                    max_iter=1_000_000).fit(Z, Y[:, 0])
    ref = naive.feature_map_objective(svc.coef_.T, Z, Y, naive.loss_hinge, LAM)
    res = _fit(Z, Y, "hinge", {}, method=method)
    got = _obj(res, Z, Y, "hinge", {})
    assert _rel(got, ref) < 1e-5 and got <= ref * (1 + 1e-7)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("tau", [0.5, 0.2, 0.9])
def test_pinball_matches_dense_qp(rng, tau, method):
    Z, Y = _data(rng, n=30, r=5)
    ref = _qp_reference(Z, Y, "pinball", {"quantiles": [tau]}, LAM)
    res = _fit(Z, Y, "pinball", {"quantiles": [tau]}, method=method)
    got = _obj(res, Z, Y, "pinball", {"quantiles": [tau]})
    assert got >= ref - 1e-9 * abs(ref) and _rel(got, ref) < 1e-5
    assert res.info["dual"] <= ref + 1e-9 * abs(ref)  # weak duality against an independent optimum


@pytest.mark.parametrize("M", [None, M2], ids=["M=I", "M=coupled"])
@pytest.mark.parametrize("name,params", [("huber", {"kappa": 0.5}), ("epsilon-ridge", {"epsilon": 0.3}),
                                         ("epsilon-svr", {"epsilon": 0.2}), ("pinball", {"quantiles": [0.3, 0.8]})])
def test_vector_outputs_match_scipy(rng, name, params, M):
    Z, Y = _data(rng, n=30, r=4, d=2)
    res = _fit(Z, Y, name, params, M=M)
    got = _obj(res, Z, Y, name, params, M=M)
    if name in ("huber", "epsilon-ridge"):  # smooth: BFGS + Nelder-Mead on the plain objective
        ref = _smooth_reference(Z, Y, _objective(name, params), LAM, M)
        assert _rel(got, ref) < 1e-5
    # weak duality: the certified lower bound is below the objective reached, gap tiny
    assert res.info["dual"] <= got * (1 + 1e-12) and res.info["relative_gap"] <= 1e-10


def _naive_dual(A, Z, Y, name, params, lam, M=None):
    """Dual objective from the conjugates written out by hand (independent of skframe_losses.duals)."""
    n, d = Y.shape
    M = np.eye(d) if M is None else M
    norms = np.linalg.norm(A, axis=1)
    if name == "huber":
        h = np.sum(A * Y, axis=1) - 0.5 * norms**2
        assert np.all(norms <= params["kappa"] + 1e-12)
    elif name == "epsilon-svr":
        h = np.sum(A * Y, axis=1) - params["epsilon"] * norms
        assert np.all(norms <= 1 + 1e-12)
    elif name == "pinball":
        t = np.asarray(params["quantiles"])
        assert np.all((A >= t - 1 - 1e-12) & (A <= t + 1e-12))
        h = np.sum(A * Y, axis=1)
    elif name == "hinge":
        assert np.all((A * Y >= -1e-12) & (A * Y <= 1 + 1e-12))
        h = np.sum(A * Y, axis=1)
    # W(A) = Z^T A / (lam n) (the stationarity condition), penalty (lam/2) tr(W M W^T)
    W = Z.T @ A / (lam * n)
    return float(np.mean(h) - 0.5 * lam * np.trace(W @ M @ W.T))


@pytest.mark.parametrize("name,params,kind,M", [("huber", {"kappa": 0.5}, "reg", None),
                                                ("epsilon-svr", {"epsilon": 0.1}, "reg", M2),
                                                ("pinball", {"quantiles": [0.3, 0.7]}, "reg", M2),
                                                ("hinge", {}, "clf", None)])
def test_gap_nonnegative_decreasing_and_independent_paths(rng, name, params, kind, M):
    from skframe_solvers._duality import dual_objective
    from skframe_solvers._problem import FeatureMapProblem

    Z, Y = _data(rng, n=80, r=6, d=2, kind=kind)
    res = _fit(Z, Y, name, params, lam=1e-2, M=M, tol=1e-6, init="zeros", method="epochs")
    gaps, duals = res.info["gap_history"], res.info["dual_history"]
    assert min(gaps) >= -1e-12 and gaps[-1] <= 1e-6 and gaps[-1] < gaps[0]
    assert np.all(np.diff(duals) >= -1e-12 * np.abs(duals[1:]))  # ascent: the dual never decreases
    assert res.stop_reason.startswith("converged") and res.info["epochs"] == len(gaps)
    # primal from the plain loss formula, dual from hand-written conjugates: same numbers as the solver's
    assert _rel(res.info["primal"], naive.feature_map_objective(res.W, Z, Y, _objective(name, params), 1e-2, M)) < 1e-10
    fp = FeatureMapProblem(ArrayProblem(Z, Y), get_loss(name, **params), 1e-2, M)
    A = np.random.default_rng(1).uniform(-0.2, 0.2, size=Y.shape)
    if kind == "clf":
        A = np.abs(A) * Y
    if name == "pinball":
        A = np.clip(A, np.array(params["quantiles"]) - 1, params["quantiles"])
    assert _rel(dual_objective(fp, A)[0], _naive_dual(A, Z, Y, name, params, 1e-2, M)) < 1e-10


@pytest.mark.parametrize("name,params,kind,M", [("epsilon-svr", {"epsilon": 0.1}, "reg", None),
                                                ("epsilon-ridge", {"epsilon": 0.1}, "reg", M2),
                                                ("huber", {"kappa": 0.3}, "reg", M2),
                                                ("pinball", {"quantiles": [0.2, 0.6]}, "reg", M2),
                                                ("hinge", {}, "clf", None)])
def test_numba_epochs_equal_numpy_reference(rng, name, params, kind, M):
    Z, Y = _data(rng, n=40, r=5, d=2, kind=kind)
    kw = dict(tol=1e-14, max_epochs=7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        a = _fit(Z, Y, name, params, M=M, engine="numba", **kw)
        b = _fit(Z, Y, name, params, M=M, engine="numpy", **kw)
    np.testing.assert_allclose(a.W, b.W, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(a.info["gap_history"], b.info["gap_history"], rtol=1e-8, atol=1e-14)


def test_block_solver_with_identity_equals_independent_fits(rng):
    Z, Y = _data(rng, n=50, r=5, d=3)
    params = {"quantiles": [0.2, 0.5, 0.8]}
    joint = _fit(Z, Y, "pinball", params, M=np.eye(3))
    for j, tau in enumerate(params["quantiles"]):
        single = _fit(Z, Y[:, [j]], "pinball", {"quantiles": [tau]})
        np.testing.assert_allclose(joint.W[:, j], single.W[:, 0], rtol=1e-4, atol=1e-6)


def test_joint_quantile_single_median_equals_median_regression(rng):
    X = rng.uniform(size=(120, 2))
    y = np.sin(3 * X[:, 0]) + 0.3 * rng.standard_t(3, size=120)
    common = dict(kernel_params={"gamma": 2.0}, sketch_size=20, lam=1e-3, random_state=0,
                  solver_params={"tol": 1e-9, "max_epochs": 20000})
    jq = JointQuantileRegressor(quantiles=[0.5], **common).fit(X, y)
    med = SketchedKernelMachine(loss="pinball", loss_params={"quantiles": [0.5]}, **common).fit(X, y)
    assert jq.solver_.name == med.solver_.name == get_tags(get_loss("pinball")).default_solver
    np.testing.assert_allclose(jq.predict(X)[:, 0], med.predict(X), rtol=1e-5, atol=1e-6)


def test_iteration_cap_warns_with_the_gap(rng):
    Z, Y = _data(rng)
    with pytest.warns(ConvergenceWarning, match="duality gap"):
        res = get_solver("dual-cd", tol=1e-12, max_epochs=2, init="zeros", method="epochs").solve(
            ArrayProblem(Z, Y), get_loss("epsilon-svr"), 1e-4, rng=0)
    assert res.stop_reason.startswith("reached the maximum number of epochs") and res.n_iter == 2
    assert res.info["relative_gap"] > 1e-12 and set(res.info) >= {"primal", "dual", "gap", "epochs"}
    for method, cap, unit in (("newton", "max_newton_steps", "newton_steps"), ("admm", "max_admm_iter", "iterations")):
        with pytest.warns(ConvergenceWarning, match=f"dual-cd reached .*{unit}.*raise {cap}"):
            get_solver("dual-cd", tol=1e-14, method=method, **{cap: 1}).solve(
                ArrayProblem(Z, Y), get_loss("epsilon-svr"), 1e-4, rng=0)


def test_warm_start_and_regularisation_path(rng):
    Z, Y = _data(rng)
    loss = get_loss("epsilon-svr", epsilon=0.1)
    solver = get_solver("dual-cd", tol=1e-6, max_epochs=20000, method="epochs")
    cold = solver.solve(ArrayProblem(Z, Y), loss, LAM, rng=0)
    again = solver.solve(ArrayProblem(Z, Y), loss, LAM, rng=0, init=cold.W)
    assert again.n_iter < cold.n_iter
    # a path from large to small lam, each fit started from the previous solution: every point reaches the
    # optimum that the cold start certifies (objectives within the certified gaps). The work is compared with a
    # margin: the gap is checked every few epochs and a rounding can move a stop by one check on either side,
    # so warm epochs within 10 % of cold (plus one check per point) is what any BLAS guarantees here.
    W, warm_epochs, cold_epochs = None, 0, 0
    lams = (1e-1, 5e-2, 2e-2, 1e-2)
    for lam in lams:
        r = solver.solve(ArrayProblem(Z, Y), loss, lam, rng=0, init=W)
        c = get_solver("dual-cd", tol=1e-6, max_epochs=20000, init="zeros", method="epochs").solve(
            ArrayProblem(Z, Y), loss, lam, rng=0)
        assert r.stop_reason.startswith("converged") and c.stop_reason.startswith("converged")
        params = {"epsilon": 0.1}
        obj_w, obj_c = (_obj(x, Z, Y, "epsilon-svr", params, lam=lam) for x in (r, c))
        assert abs(obj_w - obj_c) <= 2e-6 * max(abs(obj_w), abs(obj_c))
        W, warm_epochs, cold_epochs = r.W, warm_epochs + r.n_iter, cold_epochs + c.n_iter
    assert warm_epochs <= 1.1 * cold_epochs + 10 * len(lams)


def test_reproducible_and_no_state(rng):
    Z, Y = _data(rng, kind="clf")
    s = get_solver("dual-cd", tol=1e-3)
    a, b = (s.solve(ArrayProblem(Z, Y), get_loss("hinge"), LAM, rng=3) for _ in range(2))
    np.testing.assert_array_equal(a.W, b.W)
    assert not [k for k in vars(s) if k.endswith("_")]


def test_errors(rng):
    Z, Y = _data(rng)

    class NoDual:
        name = "mystery"

        def value(self, F, Y):
            return np.zeros(len(F))

    with pytest.raises(InvalidParameterError, match="dual"):
        get_solver("dual-cd").solve(ArrayProblem(Z, Y), NoDual(), LAM)
    with pytest.raises(InvalidInputError, match="in memory"):
        get_solver("dual-cd").solve(StreamedProblem(Z, Y), get_loss("huber"), LAM)
    with pytest.raises(InvalidInputError, match="-1 or \\+1"):
        get_solver("dual-cd").solve(ArrayProblem(Z, Y), get_loss("hinge"), LAM)
    for bad in ({"tol": 0}, {"max_epochs": 0}, {"engine": "gpu"}, {"init": "random"}):
        with pytest.raises(InvalidParameterError):
            get_solver("dual-cd", **bad)


def test_losses_declare_default_solver_and_dual():
    for name in ("huber", "epsilon-svr", "epsilon-ridge", "pinball", "hinge"):
        loss = get_loss(name)
        assert get_tags(loss).default_solver == "dual-cd" and loss.dual.structure in ("norm", "separable")
    assert get_tags(get_loss("square")).default_solver == "closed-form" and get_tags(get_loss("square")).square


@pytest.mark.parametrize("M", [None, M2], ids=["M=I", "M=coupled"])
@pytest.mark.parametrize("name,params,kind", EVERY_LOSS)
def test_admm_reaches_the_dual_cd_optimum(rng, name, params, kind, M):
    Z, Y = _data(rng, n=60, r=5, d=2, kind=kind)
    ref = _fit(Z, Y, name, params, M=M)  # dual-cd to a 1e-10 gap
    res = get_solver("admm", tol=1e-7, max_iter=20000).solve(ArrayProblem(Z, Y), get_loss(name, **params), LAM, M=M)
    got = _obj(res, Z, Y, name, params, M=M)
    assert res.stop_reason.startswith("converged") and 0 <= res.info["relative_gap"] <= 1e-7
    assert _rel(got, _obj(ref, Z, Y, name, params, M=M)) < 1e-6
    assert res.info["dual"] <= ref.info["primal"] * (1 + 1e-9)


def test_admm_small_lam_and_errors(rng):
    """lam n << 1 (dual-cd's slow regime: gap ~0.7 after 1000 epochs here): ADMM certifies the gap."""
    Z, Y = _data(rng, n=400, r=10)
    res = get_solver("admm").solve(ArrayProblem(Z, Y), get_loss("epsilon-svr", epsilon=0.1), 1e-5)
    assert res.stop_reason.startswith("converged") and res.info["relative_gap"] <= 1e-4
    with pytest.warns(ConvergenceWarning, match="duality gap"):
        get_solver("admm", max_iter=3, tol=1e-12).solve(ArrayProblem(Z, Y), get_loss("huber"), 1e-3)
    with pytest.raises(InvalidInputError, match="in memory"):
        get_solver("admm").solve(StreamedProblem(Z, Y), get_loss("huber"), LAM)
    for bad in ({"tol": 0}, {"max_iter": 0}, {"rho": -1.0}):
        with pytest.raises(InvalidParameterError):
            get_solver("admm", **bad)


@pytest.mark.parametrize("M", [None, M2], ids=["M=I", "M=coupled"])
@pytest.mark.parametrize("name,params,kind", EVERY_LOSS)
def test_newton_steps_reach_the_epochs_optimum(rng, name, params, kind, M):
    """method='newton' (smoothed semismooth Newton) and the coordinate epochs: same optimum, both certified."""
    Z, Y = _data(rng, n=60, r=5, d=2, kind=kind)
    ref = _fit(Z, Y, name, params, M=M, method="epochs")
    res = _fit(Z, Y, name, params, M=M, method="newton", tol=1e-8)
    assert res.stop_reason.startswith("converged") and res.info["method"] == "newton"
    assert -1e-12 <= res.info["relative_gap"] <= 1e-8 and res.info["newton_steps"] == len(res.info["gap_history"])
    got = _obj(res, Z, Y, name, params, M=M)
    assert _rel(got, _obj(ref, Z, Y, name, params, M=M)) < 1e-6
    assert _rel(res.info["primal"], got) < 1e-10  # the reported primal is the plain objective at W


def test_smoothed_dual_point_matches_the_loss(rng):
    """mu = 0 on a smooth loss: the smoothed value is the loss and alpha = -gradient; mu > 0 stays within mu R^2 / 2."""
    from skframe_solvers._newton import smoothed_dual_point

    F, Y = rng.normal(size=(50, 2)) * 2, rng.normal(size=(50, 2))
    for name, params in (("huber", {"kappa": 0.7}), ("epsilon-ridge", {"epsilon": 0.3})):
        loss = get_loss(name, **params)
        A, val, _, _ = smoothed_dual_point(loss.dual, Y - F, 0.0)
        np.testing.assert_allclose(val, loss.value(F, Y), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(A, -loss.gradient(F, Y), rtol=1e-12, atol=1e-12)
    mu = 0.05
    for name, params, radius2 in (("epsilon-svr", {"epsilon": 0.3}, 1.0),
                                  ("pinball", {"quantiles": [0.2, 0.9]}, 0.8**2 + 0.9**2)):
        loss = get_loss(name, **params)
        lo, hi = loss.dual.bounds(Y) if loss.dual.structure == "separable" else (None, None)
        _, val, _, _ = smoothed_dual_point(loss.dual, Y - F, mu, lo, hi)
        exact = loss.value(F, Y)
        assert np.all(val <= exact + 1e-12) and np.all(val >= exact - mu * radius2 / 2 - 1e-12)


def test_auto_method_small_lam_n_converges(rng):
    """lam n << 1: 'auto' takes Newton steps for Huber/ε-ridge when one regime holds >= 95 % of the samples
    at the start, else (and for ε-SVR/pinball) the ADMM splitting."""
    Z, Y = _data(rng, n=400, r=10)
    for name, params, method in (("huber", {"kappa": 100.0}, "newton"), ("huber", {"kappa": 0.1}, "admm"),
                                 ("epsilon-ridge", {"epsilon": 0.0}, "newton"),
                                 ("epsilon-ridge", {"epsilon": 1.0}, "admm"),
                                 ("epsilon-svr", {"epsilon": 0.1}, "admm"), ("pinball", {"quantiles": 0.3}, "admm")):
        res = get_solver("dual-cd").solve(ArrayProblem(Z, Y), get_loss(name, **params), 1e-6, rng=0)
        assert res.info["method"] == method and res.stop_reason.startswith("converged")
        assert -1e-12 <= res.info["relative_gap"] <= 1e-4
        primal = naive.feature_map_objective(res.W, Z, Y, _objective(name, params), 1e-6)
        assert _rel(res.info["primal"], primal) < 1e-10
    # the well-conditioned default problem keeps the coordinate epochs
    assert _fit(Z, Y, "huber", {"kappa": 1.0}, lam=1.0).info["method"] == "epochs"


def test_admm_polish_lands_on_the_optimum(rng):
    Z, Y = _data(rng, n=200, r=6)
    loss = get_loss("epsilon-svr", epsilon=0.2)
    ref = _fit(Z, Y, "epsilon-svr", {"epsilon": 0.2}, lam=1e-3, method="epochs")
    res = get_solver("admm", polish=True, tol=1e-9, max_iter=20000).solve(ArrayProblem(Z, Y), loss, 1e-3)
    assert res.stop_reason.startswith("converged") and -1e-12 <= res.info["relative_gap"] <= 1e-9
    assert _rel(_obj(res, Z, Y, "epsilon-svr", {"epsilon": 0.2}, lam=1e-3),
                _obj(ref, Z, Y, "epsilon-svr", {"epsilon": 0.2}, lam=1e-3)) < 1e-7


@pytest.mark.parametrize("name,params,kind", [("epsilon-svr", {"epsilon": 0.2}, "reg"),
                                              ("huber", {"kappa": 0.5}, "reg"),
                                              ("pinball", {"quantiles": 0.3}, "reg"), ("hinge", {}, "clf")])
def test_admm_one_output_loop_is_the_general_loop(rng, name, params, kind):
    """One output runs the in-place vector loop: the same iterates as the general (n, d) loop."""
    Z, Y = _data(rng, n=300, r=8, kind=kind)
    solver = get_solver("admm", tol=1e-8, max_iter=20000, products="float64")
    loss = get_loss(name, **params)
    fp, dual = solver._dual_problem(ArrayProblem(Z, Y), loss, 1e-4, None)
    fast = solver._iterate_scalar(fp, dual, None, None, None, "max_iter")
    general = solver._iterate(fp, dual, None, None, None, "max_iter")
    assert fast.n_iter == general.n_iter and fast.stop_reason.startswith("converged")
    np.testing.assert_allclose(fast.W, general.W, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(fast.info["gap_history"], general.info["gap_history"], rtol=1e-6, atol=1e-12)


@pytest.mark.parametrize("name,params", [("epsilon-svr", {"epsilon": 0.1}), ("pinball", {"quantiles": 0.7})])
def test_admm_float32_products_reach_the_certified_optimum(rng, name, params):
    """float32 products in the iterations: the gap is still certified in float64, the optimum is the same."""
    Z, Y = _data(rng, n=2000, r=20)
    loss = get_loss(name, **params)
    ref = _fit(Z, Y, name, params, lam=1e-3)  # dual-cd to a 1e-10 gap
    res = get_solver("admm", tol=1e-5, products="float32").solve(ArrayProblem(Z, Y), loss, 1e-3)
    assert res.stop_reason.startswith("converged") and 0 <= res.info["relative_gap"] <= 1e-5
    got = naive.feature_map_objective(res.W, Z, Y, _objective(name, params), 1e-3)
    best = naive.feature_map_objective(ref.W, Z, Y, _objective(name, params), 1e-3)
    assert _rel(res.info["primal"], got) < 1e-10  # the reported primal is the float64 objective at W
    assert 0 <= (got - best) / best <= 1e-5
    with pytest.raises(InvalidParameterError, match="products"):
        get_solver("admm", products="float16")


def test_admm_float32_products_hand_over_to_float64(rng, monkeypatch):
    """An uncertified float32 solve goes on with float64 products and a full check every check_every iterations."""
    from skframe_solvers.admm import ADMMSolver

    Z, Y = _data(rng, n=500, r=10)
    loss = get_loss("epsilon-svr", epsilon=0.1)

    def solve():
        return get_solver("admm", tol=1e-6, max_iter=4000, products="float32").solve(ArrayProblem(Z, Y), loss, 1e-4)

    screened = solve()
    monkeypatch.setattr(ADMMSolver, "FLOAT32_HANDOVER", 0.0)  # hand over after the first iteration
    handed = solve()
    for res in (screened, handed):
        assert res.stop_reason.startswith("converged") and 0 <= res.info["relative_gap"] <= 1e-6
    assert len(screened.info["gap_history"]) < screened.n_iter // 10  # screened: only the certified checks
    assert len(handed.info["gap_history"]) == handed.n_iter // 10  # float64: every check certified
    assert _rel(handed.info["primal"], screened.info["primal"]) < 1e-5
