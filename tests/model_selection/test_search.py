"""KernelSearchCV: scikit-learn's GridSearchCV numbers and results format, shortcuts, grids, errors."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import FitFailedWarning
from sklearn.metrics import make_scorer, mean_absolute_error
from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from skframe import SketchedKernelClassifier, SketchedKernelRidge
from skframe.exceptions import InvalidParameterError, NotFittedError
from skframe.model_selection import KernelSearchCV, default_param_grid
from skframe.model_selection._search_grid import median_gamma

GRID = {"kernel_params": [{"gamma": 0.5}, {"gamma": 3.0}], "lam": [1e-6, 1e-4, 1e-2]}


def _data(n=100, outputs=1, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 3))
    y = np.sin(4 * X[:, 0]) + 0.1 * rng.normal(size=n)
    if outputs > 1:
        y = np.c_[y, X[:, 1] ** 2]
    return X, y


def _assert_same_results(ours, ref, atol=1e-8):
    assert list(ours.cv_results_) == list(ref.cv_results_)
    for key, value in ref.cv_results_.items():
        mine = ours.cv_results_[key]
        if key == "params":
            assert mine == value
        elif key.startswith("param_"):
            assert mine.dtype == value.dtype and list(mine) == list(value) and (mine.mask == value.mask).all()
        elif key.endswith("test_score") and not key.startswith("rank"):
            np.testing.assert_allclose(mine, value, rtol=0, atol=atol)
        elif key == "rank_test_score":
            means = ref.cv_results_["mean_test_score"]
            if np.unique(np.round(means, 6)).size == means.size:  # no near-ties: the ranks must agree
                np.testing.assert_array_equal(mine, value)
    assert ours.best_params_ == ref.best_params_
    assert ours.best_score_ == pytest.approx(ref.best_score_, abs=atol)
    assert ours.n_splits_ == ref.n_splits_


@pytest.mark.parametrize("sketch", ["nystrom", "psr", "gaussian"])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_equals_grid_search_on_ridge(sketch, fit_intercept):
    X, y = _data()
    est = SketchedKernelRidge(sketch=sketch, sketch_size=25, random_state=0, fit_intercept=fit_intercept)
    cv = KFold(4, shuffle=True, random_state=1)
    ours = KernelSearchCV(est, GRID, cv=cv).fit(X, y)
    _assert_same_results(ours, GridSearchCV(est, GRID, cv=cv).fit(X, y))
    assert [b["path"] for b in ours.search_info_["blocks"]] == ["square_loss_path"] * 2
    assert ours.search_info_["blocks"][0]["lams"] == GRID["lam"]


def test_multi_output_and_exact_model():
    X, y = _data(n=60, outputs=2)
    for est in (SketchedKernelRidge(sketch="psr", sketch_size=20, random_state=0), SketchedKernelRidge(sketch=None)):
        ours = KernelSearchCV(est, GRID, cv=KFold(3)).fit(X, y)
        _assert_same_results(ours, GridSearchCV(est, GRID, cv=KFold(3)).fit(X, y))
        assert ours.predict(X).shape == y.shape


@pytest.mark.parametrize("scoring", ["neg_mean_absolute_error",
                                     make_scorer(mean_absolute_error, greater_is_better=False),
                                     lambda model, X, y: -float(np.abs(model.predict(X) - y).max())])
def test_custom_scorers(scoring):
    X, y = _data()
    est = SketchedKernelRidge(sketch="nystrom", sketch_size=20, random_state=0)
    ours = KernelSearchCV(est, GRID, cv=KFold(3), scoring=scoring).fit(X, y)
    _assert_same_results(ours, GridSearchCV(est, GRID, cv=KFold(3), scoring=scoring).fit(X, y))
    expected = "generic" if callable(scoring) and not hasattr(scoring, "_score_func") else "square_loss_path"
    assert ours.search_info_["blocks"][0]["path"] == expected
    assert ours.score(X, y) == pytest.approx(ours.scorer_(ours.best_estimator_, X, y))


def test_failing_grid_point_is_scored_error_score():
    X, y = _data()
    est = SketchedKernelRidge(sketch_size=20, random_state=0)
    grid = {"kernel_params": [{"gamma": 1.0}, {"gamma": -1.0}], "lam": [1e-4, 1e-2]}
    with pytest.warns(FitFailedWarning, match="failed"), pytest.warns(UserWarning, match="non-finite"):
        ours = KernelSearchCV(est, grid, cv=KFold(3)).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = GridSearchCV(est, grid, cv=KFold(3)).fit(X, y)
    _assert_same_results(ours, ref)
    assert np.isnan(ours.cv_results_["mean_test_score"][2:]).all()
    assert list(ours.cv_results_["rank_test_score"][2:]) == [3, 3]
    assert ours.search_info_["blocks"][1]["n_failed"] == 6
    with pytest.warns(FitFailedWarning):
        zero = KernelSearchCV(est, grid, cv=3, error_score=-7.0).fit(X, y)
    assert (zero.cv_results_["split0_test_score"][2:] == -7.0).all()
    with pytest.raises(InvalidParameterError, match="gamma"):
        KernelSearchCV(est, grid, cv=3, error_score="raise").fit(X, y)


def test_shorthand_kernel_parameters():
    X, y = _data()
    est = SketchedKernelRidge(kernel="polynomial", kernel_params={"degree": 2}, sketch="nystrom", sketch_size=20,
                              random_state=0)
    ours = KernelSearchCV(est, {"gamma": [0.5, 2.0], "lam": [1e-5, 1e-2]}, cv=KFold(3)).fit(X, y)
    full = {"kernel_params": [{"degree": 2, "gamma": 0.5}, {"degree": 2, "gamma": 2.0}], "lam": [1e-5, 1e-2]}
    ref = GridSearchCV(est, full, cv=KFold(3)).fit(X, y)
    np.testing.assert_allclose(ours.cv_results_["mean_test_score"], ref.cv_results_["mean_test_score"], atol=1e-8)
    assert list(ours.cv_results_["param_gamma"]) == [0.5, 0.5, 2.0, 2.0]
    assert ours.best_params_ == {"gamma": ref.best_params_["kernel_params"]["gamma"], "lam": ref.best_params_["lam"]}
    assert ours.best_estimator_.kernel_params == ref.best_params_["kernel_params"]  # merged with the own degree


def test_default_grid():
    X, y = _data()
    est = SketchedKernelRidge(sketch_size=20, random_state=0)
    grid = default_param_grid(est, X)
    g0 = median_gamma(X)
    D = ((X[:, None] - X[None]) ** 2).sum(-1)[np.triu_indices(len(X), 1)]
    assert g0 == pytest.approx(1 / np.median(D))
    assert [p["gamma"] for p in grid["kernel_params"]] == pytest.approx(g0 * np.logspace(-1, 1, 5))
    assert grid["lam"] == pytest.approx(np.logspace(-8, -2, 7))
    assert default_param_grid(SketchedKernelRidge(kernel="linear"), X) == {"lam": grid["lam"]}
    search = KernelSearchCV(est, cv=3).fit(X, y)
    assert len(search.cv_results_["params"]) == 35
    assert search.search_info_["default_grid"] and search.search_info_["gamma_heuristic"] == pytest.approx(g0)


def test_auto_sharing_shares_the_sketch_from_a_number_of_rows_on(monkeypatch):
    import skframe.model_selection.search as search_module

    X, y = _data()
    est = SketchedKernelRidge(sketch="nystrom", sketch_size=20, random_state=0)
    small = KernelSearchCV(est, GRID, cv=4).fit(X, y)  # the default: "auto", below the threshold
    assert small.search_info_["sketch_sharing"] == "fold"
    assert small.search_info_["blocks"][0]["info"]["sketch_sharing"] == "fold"
    monkeypatch.setattr(search_module, "SHARED_FROM_ROWS", len(X))
    large = KernelSearchCV(est, GRID, cv=4).fit(X, y)
    assert large.search_info_["sketch_sharing"] == "shared"
    assert large.search_info_["blocks"][0]["info"]["sketch_sharing"] == "shared"
    assert large.get_params()["sketch_sharing"] == "auto"  # the parameter is left as given


def test_shared_sketch_mode_runs_one_sketch_per_kernel_value():
    X, y = _data()
    est = SketchedKernelRidge(sketch="nystrom", sketch_size=20, random_state=0)
    search = KernelSearchCV(est, GRID, cv=4, sketch_sharing="shared").fit(X, y)
    block = search.search_info_["blocks"][0]
    assert block["path"] == "square_loss_path" and block["info"]["sketch_sharing"] == "shared"
    assert block["info"]["n_groups"] == 4
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()
    # the refit on all rows draws the shared sketch
    assert np.array_equal(search.best_estimator_.X_fit_,
                          clone(est).set_params(**search.best_params_).fit(X, y).X_fit_)


def test_best_estimator_equals_a_direct_fit():
    X, y = _data()
    est = SketchedKernelRidge(sketch="psr", sketch_size=20, random_state=0)
    search = KernelSearchCV(est, GRID, cv=3).fit(X, y)
    direct = clone(est).set_params(**search.best_params_).fit(X, y)
    np.testing.assert_array_equal(search.best_estimator_.coef_, direct.coef_)
    np.testing.assert_array_equal(search.predict(X), direct.predict(X))
    assert search.refit_time_ >= 0 and search.n_features_in_ == 3


def test_bad_input_raises_skframe_errors():
    X, y = _data(n=30)
    est = SketchedKernelRidge(sketch_size=10)
    for grid in ({}, [], {"lam": []}):
        with pytest.raises(InvalidParameterError, match="empty|non-empty"):
            KernelSearchCV(est, grid).fit(X, y)
    with pytest.raises(InvalidParameterError, match="lam must be a number > 0"):
        KernelSearchCV(est, {"lam": [1e-3, 0.0]}).fit(X, y)
    with pytest.raises(InvalidParameterError, match="lamda") as info:
        KernelSearchCV(est, {"lamda": [1e-3]}).fit(X, y)
    assert "lam" in str(info.value) and "sketch_size" in str(info.value) and "gamma" in str(info.value)
    with pytest.raises(InvalidParameterError, match="sketch_sharing"):
        KernelSearchCV(est, {"lam": [1e-3]}, sketch_sharing="global").fit(X, y)
    with pytest.raises(InvalidParameterError, match="several metrics"):
        KernelSearchCV(est, {"lam": [1e-3]}, scoring=["r2", "neg_mean_squared_error"]).fit(X, y)
    with pytest.raises(NotFittedError):
        KernelSearchCV(est, {"lam": [1e-3]}).predict(X)
    search = KernelSearchCV(est, {"lam": [1e-3]}, cv=3, refit=False).fit(X, y)
    with pytest.raises(NotFittedError, match="refit"):
        search.predict(X)


def test_progress_jobs_clone_and_pipelines():
    X, y = _data()
    est = SketchedKernelRidge(sketch="nystrom", sketch_size=20, random_state=0)
    calls = []
    one = KernelSearchCV(est, GRID, cv=3, progress=lambda done, total: calls.append((done, total))).fit(X, y)
    assert calls == [(3, 6), (6, 6)]
    two = KernelSearchCV(est, GRID, cv=3, n_jobs=2).fit(X, y)
    np.testing.assert_allclose(two.cv_results_["mean_test_score"], one.cv_results_["mean_test_score"], atol=1e-12)
    copy = clone(one)
    assert copy.get_params()["estimator__sketch_size"] == 20 and not hasattr(copy, "cv_results_")
    # inside a pipeline
    pipe = Pipeline([("scale", StandardScaler()), ("search", KernelSearchCV(est, GRID, cv=3))]).fit(X, y)
    assert pipe.predict(X).shape == (len(X),)
    # around a pipeline: no shortcut, GridSearchCV's numbers
    inner = Pipeline([("scale", StandardScaler()), ("ridge", est)])
    grid = {"ridge__lam": [1e-5, 1e-2]}
    ours = KernelSearchCV(inner, grid, cv=KFold(3)).fit(X, y)
    _assert_same_results(ours, GridSearchCV(inner, grid, cv=KFold(3)).fit(X, y))
    assert ours.search_info_["blocks"][0]["path"] == "generic"


def test_classifier_is_stratified_and_delegates():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=60) > 0, "a", "b")
    est = SketchedKernelClassifier(sketch_size=15, random_state=0)
    search = KernelSearchCV(est, {"lam": [1e-3, 1e-1]}, cv=3).fit(X, y)  # shuffled, stratified, the seed 0
    ref = GridSearchCV(est, {"lam": [1e-3, 1e-1]}, cv=StratifiedKFold(3, shuffle=True, random_state=0)).fit(X, y)
    assert search.search_info_["folds"] == "3 shuffled stratified folds (seed 0)"
    assert search.n_splits_ == 3 and list(search.classes_) == ["a", "b"]
    np.testing.assert_allclose(search.cv_results_["mean_test_score"], ref.cv_results_["mean_test_score"], atol=0.05)
    assert search.predict(X).shape == (60,) and search.decision_function(X).shape[0] == 60
