"""The λ paths of the kernel machines and of the structured models against fresh fits.

Each path point must score what ``clone(estimator).set_params(lam=lam).fit(X[train], y[train])``
scores (scikit-learn's ``GridSearchCV`` computation): within the certified bound of the module
docstring of :mod:`skframe.model_selection._paths` for the iterative machines, to rounding for the
structured models (a linear solve).
"""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.metrics import check_scoring
from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold

from skframe.contract.model_tags import ModelTags
from skframe.contract.registry import get_solver
from skframe.contract.tags import SolverTags
from skframe.exceptions import InvalidParameterError
from skframe.model_selection._paths import machine_path, structured_path
from skframe.model_selection._search_paths import path_function
from skframe.models import (
    JointQuantileRegressor,
    OutputKernelRegressor,
    SketchedKernelClassifier,
    SketchedKernelMachine,
    SketchedKernelRidge,
)
from tests.tolerances import EPS64, SAFETY

LAMS = [1e-2, 1e-1, 3e-2]  # not sorted: the path sorts them, the result keeps this order
TIGHT = {"tol": 1e-10}  # both the path and the fresh fits: the certified bound is then small


def _data(n=90, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 3))
    y = np.sin(3 * X[:, 0]) + X[:, 1] + 0.2 * rng.standard_t(3, size=n)
    return X, y


def _folds(X, y, classifier=False):
    splitter = StratifiedKFold(3, shuffle=True, random_state=0) if classifier else KFold(3, shuffle=True,
                                                                                         random_state=0)
    return list(splitter.split(X, y))


def _fresh(est, X, y, folds, lams, scorer):
    """Per fold and lam: the fitted fresh model and its held-out score (GridSearchCV's computation)."""
    models, scores = [], np.zeros((len(folds), len(lams)))
    for k, (tr, te) in enumerate(folds):
        row = []
        for j, lam in enumerate(lams):
            m = clone(est).set_params(lam=lam).fit(X[tr], y[tr])
            scores[k, j] = scorer(m, X[te], y[te])
            row.append(m)
        models.append(row)
    return models, scores


def _score_bound(est, models, X, y, folds, delta):
    """The certified bound on |path score - fresh score| of each point, from the prediction tolerance ``delta``.

    R^2: ``|MSE_a - MSE_b| <= delta (2 RMSE_b + delta)`` (triangle inequality on the RMSE),
    divided by the held-out variance; the joint pinball score: ``L delta`` with
    ``L = sqrt(sum_j max(tau_j, 1 - tau_j)^2)``; the accuracy: the share of held-out points
    whose fresh decision value is within ``delta`` of zero (only they can change class).
    """
    bound = np.zeros(delta.shape)
    for k, (_, te) in enumerate(folds):
        for j, m in enumerate(models[k]):
            d = delta[k, j]
            if isinstance(est, JointQuantileRegressor):
                q = m.quantiles_
                bound[k, j] = np.sqrt(np.sum(np.maximum(q, 1 - q) ** 2)) * d
            elif isinstance(est, SketchedKernelClassifier):
                bound[k, j] = np.mean(np.abs(m.decision_function(X[te])) <= d)
            else:
                yt = y[te]
                rmse = np.sqrt(np.mean((m.predict(X[te]) - yt) ** 2))
                bound[k, j] = yt.size * d * (2 * rmse + d) / np.sum((yt - yt.mean()) ** 2)
    return bound


MACHINES = {
    "huber": (SketchedKernelMachine(kernel_params={"gamma": 1.0}, sketch_size=25, loss="huber",
                                    loss_params={"kappa": 0.3}, random_state=0), False),
    "epsilon-svr": (SketchedKernelMachine(kernel_params={"gamma": 1.0}, sketch_size=25, loss="epsilon-svr",
                                          loss_params={"epsilon": 0.1}, random_state=0), False),
    "hinge": (SketchedKernelClassifier(kernel_params={"gamma": 1.0}, sketch_size=25, random_state=0), True),
    "quantile-exact": (JointQuantileRegressor((0.1, 0.5, 0.9), kernel_params={"gamma": 1.0}, sketch=None,
                                              random_state=0), False),
    "quantile-psr": (JointQuantileRegressor((0.1, 0.5, 0.9), kernel_params={"gamma": 1.0}, sketch="psr",
                                            sketch_size=25, random_state=0), False),
}


def _targets(classifier, X, y):
    return np.where(X[:, 0] * X[:, 1] > 0, "a", "b") if classifier else y


@pytest.mark.parametrize("name", list(MACHINES))
@pytest.mark.parametrize("solver_params", [None, TIGHT], ids=["default-tol", "tight-tol"])
@pytest.mark.parametrize("batched", [True, False], ids=["batched", "per-fold"])
def test_machine_path_equals_fresh_fits_within_the_certified_bound(name, solver_params, batched):
    est, classifier = MACHINES[name]
    est = clone(est).set_params(solver_params=solver_params)
    X, y = _data()
    y = _targets(classifier, X, y)
    folds = _folds(X, y, classifier)
    scorer = check_scoring(est)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a ConvergenceWarning would void the bound: none is expected here
        out = machine_path(est, X, y, folds, LAMS, scorer, batched=batched)
        models, ref = _fresh(est, X, y, folds, LAMS, scorer)
    assert not out.failed.any() and out.errors == []
    assert out.info["order"] == sorted(LAMS, reverse=True)
    assert out.info["shortcut"].startswith("every (fold, lam) problem") == batched
    assert out.info["converged"].all()
    tol = get_solver("dual-cd", **(solver_params or {})).tol
    assert np.all(out.info["relative_gap"] <= tol)
    delta = out.info["prediction_tolerance"]
    assert np.all(np.isfinite(delta)) and np.all(delta >= out.info["prediction_bound"])
    bound = _score_bound(est, models, X, y, folds, delta)
    assert np.all(np.abs(out.test_scores - ref) <= bound + 1e-12)
    if not batched:  # the largest lam starts where a fresh fit starts (same features, same solver Generator)
        first = int(np.argmax(LAMS))
        np.testing.assert_allclose(out.test_scores[:, first], ref[:, first], rtol=1e-10, atol=1e-12)
    if solver_params is not None:  # the bound shrinks with the gap: at 1e-10 it pins the scores down
        assert np.all(bound < 1e-2)
    assert out.fit_times.shape == out.score_times.shape == (3, len(LAMS))
    assert np.all(out.fit_times > 0) and np.all(out.score_times > 0)


def test_machine_path_fitted_models_match_fresh_predictions():
    """Held-out predictions of every path point are within the certified distance of a fresh fit's."""
    est = clone(MACHINES["quantile-psr"][0])
    X, y = _data()
    folds = _folds(X, y)[:1]
    captured = []

    def scorer(model, X_te, y_te):
        captured.append(model)
        return model.score(X_te, y_te)

    out = machine_path(est, X, y, folds, LAMS, scorer)
    (tr, te), = folds
    for model in captured:
        j = LAMS.index(model.lam)
        fresh = clone(est).set_params(lam=model.lam).fit(X[tr], y[tr])
        diff = np.linalg.norm(model.predict(X[te]) - fresh.predict(X[te]), axis=1).max()
        assert diff <= out.info["prediction_tolerance"][0, j]
        np.testing.assert_array_equal(model.intercept_, fresh.intercept_)
        assert model.lam_path_.tolist() == [model.lam]


class _FailingSolver:
    """dual-cd, except that it raises at one lam (a grid point whose fit fails)."""

    __skframe_tags__ = SolverTags(requires_dual=True, in_memory=True)
    name = "failing"

    def __init__(self, bad_lam=3e-2):
        self.bad_lam = bad_lam
        self.tol = 1e-4

    def solve(self, problem, loss, lam, *, M=None, rng=None, init=None, progress=None):
        if np.isclose(lam, self.bad_lam):
            raise np.linalg.LinAlgError(f"no solution at lam={lam}")
        return get_solver("dual-cd").solve(problem, loss, lam, M=M, rng=rng, init=init)


def test_machine_path_failed_points_are_marked_and_the_others_continue():
    est = clone(MACHINES["huber"][0]).set_params(solver=_FailingSolver())
    X, y = _data()
    folds = _folds(X, y)
    out = machine_path(est, X, y, folds, LAMS, check_scoring(est))
    bad = LAMS.index(3e-2)
    assert out.failed[:, bad].all() and not np.delete(out.failed, bad, axis=1).any()
    assert np.isnan(out.test_scores[:, bad]).all() and np.isfinite(np.delete(out.test_scores, bad, axis=1)).all()
    assert len(out.errors) == 3 and all("lam=0.03" in e and "LinAlgError" in e for e in out.errors)
    # the point after the failure (lam = 1e-2) still scores what a fresh fit scores, within the bound
    models, ref = _fresh(clone(MACHINES["huber"][0]), X, y, folds, LAMS, check_scoring(est))
    j = LAMS.index(1e-2)
    bound = _score_bound(est, models, X, y, folds, out.info["prediction_tolerance"])
    assert np.all(np.abs(out.test_scores[:, j] - ref[:, j]) <= bound[:, j] + 1e-12)


def test_machine_path_a_failing_fold_and_a_failing_scorer():
    X, y = _data()
    yc = np.where(X[:, 0] > 0, 1, 0)
    est = clone(MACHINES["hinge"][0])
    one_class = np.flatnonzero(yc == 1)
    folds = [(one_class, np.flatnonzero(yc == 0)), _folds(X, yc, True)[0]]  # fold 0 trains on one class only
    calls = []

    def scorer(model, X_te, y_te):
        calls.append(model.lam)
        if model.lam == 1e-1:
            raise ValueError("scorer refuses lam=0.1")
        return model.score(X_te, y_te)

    out = machine_path(est, X, yc, folds, LAMS, scorer)
    assert out.failed[0].all()  # the fit of fold 0 raised: every lam of the fold failed
    assert out.failed[1].tolist() == [False, True, False]
    assert sum("fold 0" in e for e in out.errors) == 3 and any("scorer refuses" in e for e in out.errors)


@pytest.mark.parametrize("est, reason", [
    (SketchedKernelMachine(loss="huber", solver="lbfgs"), "certified duality gap"),
    (SketchedKernelMachine(loss="epsilon-svr", solver="adam"), "certified duality gap"),
    (SketchedKernelRidge(), "not a sketched kernel machine"),
])
def test_machine_path_refuses_what_it_cannot_shortcut(est, reason):
    X, y = _data(30)
    with pytest.raises(NotImplementedError, match=reason):
        machine_path(est, X, y, _folds(X, y), LAMS, check_scoring(est))


def test_machine_path_closed_form_is_exact():
    est = SketchedKernelMachine(kernel_params={"gamma": 1.0}, sketch_size=25, loss="square", random_state=0)
    X, y = _data()
    folds = _folds(X, y)
    scorer = check_scoring(est)
    out = machine_path(est, X, y, folds, LAMS, scorer)
    _, ref = _fresh(est, X, y, folds, LAMS, scorer)
    np.testing.assert_allclose(out.test_scores, ref, rtol=1e-10)


def test_bad_lams():
    X, y = _data(30)
    est = MACHINES["huber"][0]
    for lams in ([], [1e-3, 0.0], [np.nan]):
        with pytest.raises(ValueError, match="lam"):
            machine_path(est, X, y, _folds(X, y), lams, check_scoring(est))


# ----------------------------------------------------------------------------- structured models
def _multilabel(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    W = rng.normal(size=(5, 6))
    Y = (X @ W + 0.5 * rng.normal(size=(n, 6)) > 0.5).astype(float)
    return X, Y


STRUCTURED = {
    "IOKR": {},
    "SIOKR-subsample": {"input_sketch": "subsample", "input_sketch_size": 40},
    "ISOKR": {"output_sketch": "psg", "output_sketch_size": 25},
    "SISOKR": {"input_sketch": "gaussian", "input_sketch_size": 40, "output_sketch": "psr",
               "output_sketch_size": 25},
    "SISOKR-2-draws": {"input_sketch": "psr", "input_sketch_size": 40, "output_sketch": "psr",
                       "output_sketch_size": 25, "n_draws": 2},
    "SIOKR-rff": {"input_sketch": "rff", "input_sketch_size": 40},
}
STRUCTURED_LAMS = [1e-3, 1e-1, 1e-2]


def _structured(name):
    return OutputKernelRegressor(input_kernel_params={"gamma": 0.2}, output_kernel_params={"gamma": 0.5},
                                 random_state=0, **STRUCTURED[name])


@pytest.mark.parametrize("name", list(STRUCTURED))
@pytest.mark.parametrize("scoring", [None, "f1_samples"])
def test_structured_path_equals_fresh_fits(name, scoring):
    est = _structured(name)
    X, Y = _multilabel()
    folds = _folds(X, Y)
    scorer = check_scoring(est, scoring=scoring)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # f1 of rows with no label
        out = structured_path(est, X, Y, folds, STRUCTURED_LAMS, scorer)
        _, ref = _fresh(est, X, Y, folds, STRUCTURED_LAMS, scorer)
    assert not out.failed.any()
    # the systems K + n lam I have condition number <= (||K|| + n lam) / (n lam) <= 1 + 1 / lam (k(x, x) = 1):
    # rounding moves the surrogate by <= SAFETY kappa eps relative; the decoded metric is then unchanged
    kappa = 1.0 + 1.0 / min(STRUCTURED_LAMS)
    rtol = SAFETY * kappa * EPS64
    assert rtol < 1e-8
    np.testing.assert_allclose(out.test_scores, ref, rtol=rtol, atol=rtol)
    assert np.all(out.info["rank"] > 0)


def test_model_tags_say_what_an_estimator_can_do():
    """Model selection and the intervals read these, never the class or its name."""
    from skframe.contract.model_tags import model_tags
    from skframe.exceptions import PluginError

    assert model_tags(SketchedKernelRidge()) == ModelTags(lam_path="square", posterior=True, shared_fold_sketch=True)
    assert model_tags(SketchedKernelMachine()) == ModelTags(lam_path="machine")
    assert model_tags(OutputKernelRegressor).lam_path == "structured"  # a class answers its class attribute
    assert model_tags(object()) == ModelTags()

    class Declared:
        def __skframe_model_tags__(self):
            return ModelTags(posterior=True)

    class Wrong:
        __skframe_model_tags__ = {"posterior": True}

    assert model_tags(Declared()).posterior and model_tags(Declared) == ModelTags()
    with pytest.raises(PluginError, match="Wrong.__skframe_model_tags__"):
        model_tags(Wrong())
    with pytest.raises(PluginError, match="lam_path='ridge'"):
        ModelTags(lam_path="ridge")


def test_structured_path_refuses_other_estimators():
    class Subclass(OutputKernelRegressor):  # fits otherwise: it declares no λ path of its own
        __skframe_model_tags__ = ModelTags()

    class Inherits(OutputKernelRegressor):
        pass

    assert path_function(Inherits())[1] == "structured_path"  # a subclass inherits its parent's capabilities
    assert path_function(Subclass()) == (None, "generic")
    X, Y = _multilabel(30)
    with pytest.raises(NotImplementedError, match="OutputKernelRegressor"):
        structured_path(Subclass(), X, Y, _folds(X, Y), STRUCTURED_LAMS, check_scoring(OutputKernelRegressor()))
    with pytest.raises(NotImplementedError, match="not a sketched kernel machine"):
        machine_path(_structured("IOKR"), X, Y, _folds(X, Y), STRUCTURED_LAMS, check_scoring(_structured("IOKR")))


def test_structured_path_failed_fold_and_scorer():
    X, Y = _multilabel(60)
    est = _structured("SIOKR-subsample").set_params(input_sketch_size=20)
    folds = [(np.arange(0), np.arange(10)), (np.arange(20, 60), np.arange(20))]  # fold 0: no training rows

    def scorer(model, X_te, Y_te):
        if model.lam == 1e-1:
            raise RuntimeError("no score at lam=0.1")
        return model.score(X_te, Y_te)

    out = structured_path(est, X, Y, folds, STRUCTURED_LAMS, scorer)
    assert out.failed[0].all()
    assert out.failed[1].tolist() == [False, True, False]
    assert np.isfinite(out.test_scores[1, [0, 2]]).all()


# ----------------------------------------------------------------------------- through the tuner
def test_kernel_search_cv_uses_the_paths_and_agrees_with_grid_search():
    search_mod = pytest.importorskip("skframe.model_selection.search")
    X, y = _data()
    folds = _folds(X, y)
    est = clone(MACHINES["quantile-psr"][0]).set_params(solver_params=TIGHT)
    grid = {"lam": LAMS}
    ours = search_mod.KernelSearchCV(est, grid, cv=folds, refit=False).fit(X, y)
    theirs = GridSearchCV(est, grid, cv=folds, refit=False).fit(X, y)
    blocks = ours.search_info_["blocks"]
    assert blocks and all(b["path"] == "machine_path" for b in blocks)
    out = machine_path(est, X, y, folds, LAMS, check_scoring(est))
    L = np.sqrt(np.sum(np.maximum(est.quantiles, 1 - np.asarray(est.quantiles)) ** 2))
    for k in range(len(folds)):
        diff = np.abs(ours.cv_results_[f"split{k}_test_score"] - theirs.cv_results_[f"split{k}_test_score"])
        assert np.all(diff <= L * out.info["prediction_tolerance"][k] + 1e-12)
    assert ours.best_params_ == theirs.best_params_

    est = _structured("SISOKR")
    Xs, Ys = _multilabel()
    folds = _folds(Xs, Ys)
    grid = {"lam": STRUCTURED_LAMS}
    ours = search_mod.KernelSearchCV(est, grid, cv=folds, refit=False).fit(Xs, Ys)
    theirs = GridSearchCV(est, grid, cv=folds, refit=False).fit(Xs, Ys)
    assert all(b["path"] == "structured_path" for b in ours.search_info_["blocks"])
    np.testing.assert_allclose(ours.cv_results_["mean_test_score"], theirs.cv_results_["mean_test_score"],
                               rtol=1e-8)
    assert ours.best_params_ == theirs.best_params_


def test_machine_path_without_warm_start_is_the_fresh_fit():
    est = clone(MACHINES["epsilon-svr"][0])
    X, y = _data()
    folds = _folds(X, y)
    scorer = check_scoring(est)
    out = machine_path(est, X, y, folds, LAMS, scorer, warm_start=False)
    _, ref = _fresh(est, X, y, folds, LAMS, scorer)
    assert out.info["warm_start"] is False
    np.testing.assert_allclose(out.test_scores, ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["IOKR", "ISOKR"])
def test_structured_path_long_grid_from_one_eigendecomposition(name):
    """From EIGH_COST_IN_CHOLESKYS values on, the exact input side is solved from one eigendecomposition."""
    from skframe.model_selection._paths import EIGH_COST_IN_CHOLESKYS

    est = _structured(name)
    X, Y = _multilabel(80)
    folds = _folds(X, Y)[:2]
    lams = np.logspace(-3, 0, EIGH_COST_IN_CHOLESKYS)
    scorer = check_scoring(est)
    out = structured_path(est, X, Y, folds, lams, scorer)
    _, ref = _fresh(est, X, Y, folds, lams, scorer)
    rtol = SAFETY * (1.0 + 1.0 / lams.min()) * EPS64
    np.testing.assert_allclose(out.test_scores, ref, rtol=rtol, atol=rtol)


# ----------------------------------------------------------------------------- the batched ADMM loop
def _batch_case(loss_name, loss_params, M=None, labels=False):
    """Two feature matrices of different sizes (rows and columns: the batch pads both), two lams each."""
    from skframe.contract.problems import ArrayProblem
    from skframe.contract.registry import get_loss
    from skframe_solvers._batched import BatchItem

    rng = np.random.default_rng(3)
    loss = get_loss(loss_name, **loss_params)
    solver = get_solver("admm", tol=1e-4)
    items, args = [], []
    for g, (n, r) in enumerate(((60, 6), (55, 4))):
        Z = rng.normal(size=(n, r))
        y = Z @ rng.normal(size=r) + 0.3 * rng.standard_t(3, size=n)
        y = np.sign(y) if labels else y
        Y = np.repeat(y[:, None], 1 if M is None else M.shape[0], axis=1)
        for lam in (1e-3, 1e-1):
            fp, dual = solver._dual_problem(ArrayProblem(Z, Y), loss, lam, M)
            items.append(BatchItem(fp, dual, g))
            args.append((ArrayProblem(Z, Y), loss, lam))
    return items, args


@pytest.mark.parametrize("case", ["pinball-joint", "epsilon-svr", "hinge", "huber"])
@pytest.mark.parametrize("products", ["float32", "float64"])
def test_batched_admm_certifies_every_problem_against_the_single_solver(case, products):
    """Every problem of the batch ends at a certified relative gap <= tol, and its point is within
    sqrt(2 gap / lam) of the optimum (lam-strong convexity), the optimum taken from the single-problem
    ADMM run to a 1e-10 gap."""
    from skframe.models.machine.quantile import quantile_matrix
    from skframe_solvers._batched import batched_admm
    from skframe_solvers._duality import relative_gap

    M = None
    if case == "pinball-joint":
        q = np.array([0.1, 0.5, 0.9])
        items, args = _batch_case("pinball", {"quantiles": q.tolist()}, M=quantile_matrix(q, 1.0))
        M = quantile_matrix(q, 1.0)
    elif case == "epsilon-svr":
        items, args = _batch_case("epsilon-svr", {"epsilon": 0.1})
    elif case == "hinge":
        items, args = _batch_case("hinge", {}, labels=True)
    else:
        items, args = _batch_case("huber", {"kappa": 0.3})
    sols = batched_admm(items, tol=1e-4, products=products)
    tight = get_solver("admm", tol=1e-10, max_iter=50000, products="float64")
    for item, sol, (problem, loss, lam) in zip(items, sols, args):
        fp = item.fp
        P, D, gap = sol["trace"][-1]
        assert gap <= 1e-4 and sol["n_iter"] >= 1
        assert P == pytest.approx(fp.objective(sol["V"]), rel=1e-12)
        # the certificate holds for the returned point: some feasible dual point is within the gap
        ref = tight.solve(problem, loss, lam, M=M)
        V_opt = fp.from_W(ref.W)
        P_opt = fp.objective(V_opt)
        assert P - P_opt <= (P - D) * (1 + 1e-6) + 1e-12
        assert np.linalg.norm(sol["V"] - V_opt) <= np.sqrt(2 * max(P - D, 0) / lam) * (1 + 1e-6) + 1e-9
        assert relative_gap(P, D) == pytest.approx(gap)


def test_batched_admm_empty_and_machine_path_default_is_batched():
    from skframe_solvers._batched import batched_admm

    assert batched_admm([]) == []
    est = clone(MACHINES["quantile-psr"][0])
    X, y = _data()
    folds = _folds(X, y)
    out = machine_path(est, X, y, folds, LAMS, check_scoring(est))
    assert out.info["shortcut"].startswith("every (fold, lam) problem")
    assert np.all(out.info["relative_gap"] <= 1e-4) and out.info["converged"].all()


def test_batched_solves_are_the_solvers_capability():
    """``solver.batchable`` says whether ``solve_batch`` applies; its results are the batched loop's, each a
    SolveResult certified as ``solve`` certifies it; a job whose set-up fails comes back as its exception."""
    from skframe.contract.problems import SolveResult
    from skframe.contract.registry import get_loss
    from skframe_solvers._batched import batched_admm

    assert get_solver("admm").batchable and get_solver("dual-cd").batchable
    assert not get_solver("admm", polish=True).batchable and not get_solver("dual-cd", method="epochs").batchable
    assert not getattr(get_solver("lbfgs"), "batchable", False)
    with pytest.raises(InvalidParameterError, match="batchable is False"):
        get_solver("admm", polish=True).solve_batch([])
    items, args = _batch_case("huber", {"kappa": 0.3})
    jobs = [(problem, loss, lam, None, item.group) for item, (problem, loss, lam) in zip(items, args)]
    jobs.append((args[0][0], get_loss("logistic"), 1e-2, None, 0))  # the logistic loss has no dual: refused
    results = get_solver("admm", tol=1e-4).solve_batch(jobs)
    direct = batched_admm(items, tol=1e-4, products="float32")
    for item, res, sol in zip(items, results, direct):
        assert isinstance(res, SolveResult) and res.info["batched"] and res.info["relative_gap"] <= 1e-4
        np.testing.assert_array_equal(res.W, item.fp.to_W(sol["V"]))
    assert isinstance(results[-1], InvalidParameterError)


def _orthogonal_case():
    """Features with orthogonal columns (``Z^T Z`` diagonal, as the exact model's ``U D^{1/2}``), the items of
    two groups interleaved (the batch sorts them by group and returns them in the given order)."""
    from skframe.contract.problems import ArrayProblem
    from skframe.contract.registry import get_loss
    from skframe.models.machine.quantile import quantile_matrix
    from skframe_solvers._batched import BatchItem

    rng = np.random.default_rng(5)
    q = np.array([0.2, 0.5, 0.8])
    M = quantile_matrix(q, 1.0)
    loss = get_loss("pinball", quantiles=q.tolist())
    solver = get_solver("admm", tol=1e-4)
    items, args = [], []
    feats = []
    for n, r in ((50, 7), (46, 5)):
        U, _ = np.linalg.qr(rng.normal(size=(n, r)))
        Z = U * np.sqrt(np.logspace(1, -4, r))  # orthogonal columns, decaying norms
        y = Z @ rng.normal(size=r) * 5 + 0.3 * rng.standard_t(3, size=n)
        feats.append((Z, np.repeat(y[:, None], M.shape[0], axis=1)))
    for lam in (1e-4, 1e-2):
        for g, (Z, Y) in enumerate(feats):
            fp, dual = solver._dual_problem(ArrayProblem(Z, Y), loss, lam, M)
            items.append(BatchItem(fp, dual, g))
            args.append((ArrayProblem(Z, Y), loss, lam))
    return items, args, M


@pytest.mark.parametrize("rho_start", ["residual", "fixed"])
def test_batched_admm_orthogonal_features_interleaved_groups(rho_start):
    """Orthogonal feature columns take the diagonal shortcut (no eigendecomposition); items given group by group
    interleaved come back in their order; with either initial penalty every point is certified and within
    sqrt(2 gap / lam) of the optimum of a single-problem ADMM run to a 1e-10 gap."""
    from skframe_solvers._batched import _rotated, batched_admm

    items, args, M = _orthogonal_case()
    rot = _rotated(items, np.finfo(np.float32).eps)
    assert all(np.array_equal(E, np.eye(E.shape[0])) for _, _, E, _ in rot.values())
    sols = batched_admm(items, tol=1e-4, rho_start=rho_start)
    tight = get_solver("admm", tol=1e-10, max_iter=50000, products="float64")
    for item, sol, (problem, loss, lam) in zip(items, sols, args):
        fp = item.fp
        P, D, gap = sol["trace"][-1]
        assert gap <= 1e-4
        assert P == pytest.approx(fp.objective(sol["V"]), rel=1e-12)
        V_opt = fp.from_W(tight.solve(problem, loss, lam, M=M).W)
        assert np.linalg.norm(sol["V"] - V_opt) <= np.sqrt(2 * max(P - D, 0) / lam) * (1 + 1e-6) + 1e-9


def test_batched_admm_start_penalty_follows_the_target_scale():
    """The residual-scaled initial penalty: the dual box width over the rms residual, so scaling the targets by c
    scales it by 1/c; a zero residual keeps the given rho."""
    from skframe.contract.registry import get_loss
    from skframe_solvers._batched import _start_penalty

    rng = np.random.default_rng(0)
    dual = get_loss("pinball", quantiles=[0.1, 0.9]).dual
    Y = rng.normal(size=(30, 2, 2))
    F = np.zeros_like(Y)
    F[:, 1] = Y[:, 1]  # the second problem starts at zero residual
    rowmask = np.ones((30, 2, 1))
    lower, upper = dual.bounds(Y.reshape(-1, 2))
    lower, upper = lower.reshape(Y.shape), upper.reshape(Y.shape)
    n = np.full(2, 30.0)
    rho = _start_penalty(0.1, "residual", "separable", dual, F, Y, rowmask, lower, upper, n)
    rms = np.sqrt(np.mean(Y[:, 0] ** 2))
    assert rho[0] == pytest.approx(np.mean(upper[:, 0] - lower[:, 0]) / rms)
    assert rho[1] == 0.1
    # the pinball loss's dual box [tau - 1, tau] does not depend on the targets
    rho3 = _start_penalty(0.1, "residual", "separable", dual, 3 * F, 3 * Y, rowmask, lower, upper, n)
    assert rho3[0] == pytest.approx(rho[0] / 3)
    assert np.all(_start_penalty(0.1, "fixed", "separable", dual, F, Y, rowmask, lower, upper, n) == 0.1)
