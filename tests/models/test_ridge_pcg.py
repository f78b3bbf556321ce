"""SketchedKernelRidge over Nyström centres by conjugate gradients (models._fit_square), where the plan picks them:
the closed form's model to the residual, λ paths warm-started, lam="auto", save and load, the closed form kept
with sample weights, the automatic size grown past the sqrt(n) rule's cap, and scikit-learn's estimator checks."""

import numpy as np
import pytest
from sklearn.utils.estimator_checks import check_estimator

from skframe import SketchedKernelRidge
from skframe.compute import plan_rules, plan_square
from skframe.compute.plan_square import grown_auto_size
from skframe.exceptions import NotFittedError
from skframe.models import _fit_square
from skframe.persistence import load, save


@pytest.fixture
def low_threshold(monkeypatch):
    """The cost rule's conjugate-gradient branch from 30 centres (small data)."""
    monkeypatch.setattr(plan_square, "PCG_MIN_CENTRES", 30)


def _data(n=500, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    Y = np.column_stack([np.sin(6 * X[:, 0]) + 0.05 * rng.standard_normal(n), np.cos(4 * X[:, 1])])
    return X, Y


KW = dict(kernel_params={"gamma": 2.0}, sketch="subsample", sketch_size=40, random_state=0, backend="numpy")


def _closed(monkeypatch, **kw):
    monkeypatch.setattr(plan_square, "PCG_MIN_CENTRES", 10**6)
    return SketchedKernelRidge(**dict(KW, **kw))


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_pcg_equals_the_closed_form_two_targets(low_threshold, monkeypatch, fit_intercept):
    X, Y = _data()
    model = SketchedKernelRidge(**KW, lam=1e-3, fit_intercept=fit_intercept).fit(X, Y)
    assert model.representation_ == "centres" and model.solver_info_["residual"] <= _fit_square.PCG_TOL
    assert model.coef_.shape == (40, 2) and model.posterior_ is None
    closed = _closed(monkeypatch, lam=1e-3, fit_intercept=fit_intercept).fit(X, Y)
    assert closed.representation_ != "centres"
    np.testing.assert_array_equal(model.X_fit_, closed.X_fit_)
    np.testing.assert_allclose(model.predict(X), closed.predict(X), atol=1e-4)
    with pytest.raises(NotFittedError, match="conjugate gradients over its centres"):
        model.predict(X, return_std=True)


def test_lam_path_is_warm_started(low_threshold, monkeypatch):
    X, Y = _data(seed=1)
    lams = [1e-2, 5e-3, 1e-3]
    path = SketchedKernelRidge(**KW, lam=lams).fit(X, Y[:, 0])
    assert len(path.coef_path_) == 3 and path.representation_ == "centres"
    cold = SketchedKernelRidge(**KW, lam=1e-3).fit(X, Y[:, 0])
    assert path.n_iter_ <= cold.n_iter_  # the last point started from the previous one
    closed = _closed(monkeypatch, lam=lams).fit(X, Y[:, 0])
    for a, b in zip(path.coef_path_, closed.coef_path_):
        np.testing.assert_allclose(path.kernel_(X, path.X_fit_) @ a, closed.kernel_(X, closed.X_fit_) @ b, atol=1e-4)


def test_lam_auto_takes_the_closed_form_choice(low_threshold):
    X, Y = _data(seed=2)
    model = SketchedKernelRidge(**KW, lam="auto").fit(X, Y[:, 0])
    info = model.fit_info_["lam"]
    assert model.representation_ == "centres" and "conjugate gradients" in info["solver_note"]
    assert info["chosen"] == model.lam_path_[-1] >= info["closed_form_least"]
    assert info["centres_of_choice"] == 40
    i = int(np.argmin(np.abs(np.asarray(info["grid"]) - info["chosen"])))
    assert info["curve"][i] <= (1 + _fit_square.PCG_LAM_TIE) * min(info["curve"])


def test_save_and_load(low_threshold, tmp_path):
    X, Y = _data(seed=3)
    model = SketchedKernelRidge(**KW, lam=1e-3).fit(X, Y[:, 0])
    path = tmp_path / "pcg.skf"
    save(model, path)
    again = load(path)
    np.testing.assert_allclose(again.predict(X), model.predict(X), rtol=1e-12)


def test_sample_weights_and_sparse_keep_the_closed_form(low_threshold):
    import scipy.sparse as sp

    X, Y = _data(seed=4)
    w = np.linspace(0.5, 2.0, len(X))
    model = SketchedKernelRidge(**KW, lam=1e-3).fit(X, Y[:, 0], sample_weight=w)
    reason = model.execution_["reasons"]["square_solver"]
    assert reason.startswith("closed-form: sample weights are given") and model.representation_ != "centres"
    sparse = SketchedKernelRidge(**KW, lam=1e-3).fit(sp.csr_matrix(X), Y[:, 0])
    assert sparse.execution_["reasons"]["square_solver"].startswith("closed-form: the inputs are not one dense")


def test_grown_auto_size_is_off_by_default():
    assert grown_auto_size(10**6, 8 * 10**9, "numpy")[0] is None


def test_grown_auto_size_rule(monkeypatch):
    monkeypatch.setattr(plan_square, "PCG_AUTO_GROW", True)
    assert grown_auto_size(10**6, 8 * 10**9, "numpy")[0] == 8000
    assert grown_auto_size(4 * 10**6, 8 * 10**9, "numpy")[0] == 10_000
    assert grown_auto_size(250_000, 8 * 10**9, "numpy")[0] is None  # the sqrt(n) rule is 1000: not past its cap
    assert grown_auto_size(10**6, 8 * 10**9, "cupy")[0] is None
    m, why = grown_auto_size(10**6, 4 * 8 * 5000**2, "numpy")
    assert m == 5000 and "capped at 5000 by a quarter of the budget" in why
    assert grown_auto_size(10**6, 4 * 8 * 3000**2, "numpy")[0] is None  # under PCG_MIN_CENTRES


def test_the_fit_grows_its_auto_size(low_threshold, monkeypatch):
    """With the sqrt(n) rule's cap lowered to 20, 600 rows (rule: 49) grow to 4 x 49 centres solved by PCG."""
    monkeypatch.setattr(plan_square, "PCG_AUTO_GROW", True)
    for module in (plan_rules, plan_square, _fit_square):
        monkeypatch.setattr(module, "AUTO_MAX", 20)
    X, Y = _data(n=600, seed=5)
    model = SketchedKernelRidge(kernel_params={"gamma": 2.0}, sketch="subsample", lam=1e-3, random_state=0,
                                backend="numpy").fit(X, Y[:, 0])
    assert model.sketch_info_["m"] == 196 and model.representation_ == "centres"
    assert "grown to min(4 ceil(2 sqrt(n)), 10000) = 196" in model.sketch_info_["size_rule"]
    assert model.execution_["sketch_size"] == 196 and model.execution_["reasons"]["square_solver"].startswith("pcg")
    assert model.execution_plan(X, Y[:, 0]).sketch_size == 196  # the plan without fitting says the same
    weighted = SketchedKernelRidge(kernel_params={"gamma": 2.0}, sketch="subsample", lam=1e-3, random_state=0,
                                   backend="numpy").fit(X, Y[:, 0], sample_weight=np.ones(len(X)))
    assert weighted.sketch_info_["m"] == 20  # weights keep the closed form: no growth
    psr = SketchedKernelRidge(kernel_params={"gamma": 2.0}, lam=1e-3, random_state=0).fit(X, Y[:, 0])
    assert psr.sketch_info_["m"] == 20  # p-SR mixes its rows: no centres, no growth


_SKETCH_FROM_ROWS = "the sketch is drawn from the training rows (tests/models/test_estimator_checks.py)"


def test_sklearn_checks_on_the_pcg_path(monkeypatch):
    """scikit-learn's estimator checks with the conjugate-gradient branch from 5 centres (their small data)."""
    monkeypatch.setattr(plan_square, "PCG_MIN_CENTRES", 5)
    est = SketchedKernelRidge(sketch="subsample", kernel_params={"gamma": "scale"})
    X, Y = _data(n=60, seed=6)
    assert est.fit(X, Y[:, 0]).representation_ == "centres"
    check_estimator(est, expected_failed_checks={"check_sample_weight_equivalence_on_dense_data": _SKETCH_FROM_ROWS,
                                                 "check_sample_weight_equivalence_on_sparse_data": _SKETCH_FROM_ROWS})


def test_lam_paths_of_model_selection_read_features(low_threshold):
    """A search's λ path reads its folds' features (closed form); the refit runs over centres."""
    from skframe.model_selection import KernelSearchCV

    X, Y = _data(seed=7)
    search = KernelSearchCV(SketchedKernelRidge(**KW), {"lam": [1e-4, 1e-3, 1e-2]}, cv=3).fit(X, Y[:, 0])
    assert np.isfinite(search.best_score_) and search.best_estimator_.representation_ == "centres"


def test_the_cli_report_shows_the_pcg_outcome(low_threshold, tmp_path):
    """``skframe fit --json`` carries the solver's residual and passes; the summary prints one ``solver`` line."""
    import json

    from typer.testing import CliRunner

    from skframe.cli import app

    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 3))
    np.savetxt(tmp_path / "t.csv", np.c_[X, np.sin(X).sum(axis=1)], delimiter=",")
    args = ["fit", str(tmp_path / "t.csv"), "--sketch", "nystrom", "--sketch-size", "60", "--lam", "1e-3",
            "--kernel-param", "gamma=0.3", "--holdout", "0"]
    res = CliRunner().invoke(app, args + ["--json"])
    assert res.exit_code == 0, res.output
    solver = json.loads(res.stdout)["solver"]
    assert solver["solver"] == "pcg" and solver["residual"] <= solver["tol"] and solver["passes"] >= 1
    text = CliRunner().invoke(app, args).stdout
    line = [ln for ln in text.splitlines() if ln.startswith("solver ")][0]
    assert line.startswith("solver     pcg: relative residual")


def test_posterior_and_shared_folds_refuse_a_pcg_fit_naming_why(low_threshold):
    """Intervals that need the closed form's sums say the fit ran conjugate gradients, and name the fixes."""
    from skframe.exceptions import InvalidParameterError
    from skframe.uncertainty import ConformalRegressor, posterior_interval

    X, Y = _data()
    model = SketchedKernelRidge(**KW, lam=1e-3).fit(X, Y[:, 0])
    with pytest.raises(NotFittedError, match="conjugate gradients over its centres.*PCG_MIN_CENTRES"):
        posterior_interval(model, X[:3], 0.1)
    with pytest.raises(InvalidParameterError, match="conjugate gradients.*sketch_sharing='fold'"):
        ConformalRegressor(SketchedKernelRidge(**KW, lam=1e-3), cv=3, sketch_sharing="shared").fit(X, Y[:, 0])
    lo, hi = ConformalRegressor(SketchedKernelRidge(**KW, lam=1e-3), cv=3).fit(X, Y[:, 0]).predict_interval(X[:3])
    assert np.all(lo < hi)
