"""The square-loss cross-validation path against scikit-learn's GridSearchCV and plain NumPy formulas."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.metrics import check_scoring
from sklearn.model_selection import GridSearchCV, KFold

from skframe import SketchedKernelMachine, SketchedKernelRidge
from skframe.compute.execution import FoldThreads
from skframe.model_selection._paths_base import PathScores, r2_from_errors, scorer_kind
from skframe.model_selection._square_path import _fold_system, _membership_groups, square_loss_path
from tests.naive import naive_gaussian

LAMS = [1e-6, 1e-4, 1e-2]


def _data(n=90, d=3, outputs=1, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    y = np.sin(4 * X[:, 0]) + 0.1 * rng.normal(size=n)
    if outputs > 1:
        y = np.c_[y, X[:, 1] ** 2 + 0.05 * rng.normal(size=n)]
    return X, y


def _folds(X, k=4):
    return list(KFold(k, shuffle=True, random_state=0).split(X))


def _grid_search_splits(est, X, y, folds, lams, scoring=None):
    gs = GridSearchCV(est, {"lam": lams}, cv=folds, scoring=scoring).fit(X, y)
    return np.array([gs.cv_results_[f"split{k}_test_score"] for k in range(len(folds))])


@pytest.mark.parametrize("sketch", ["psr", "nystrom", "gaussian", None, "rff"])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("outputs", [1, 2])
def test_equals_grid_search(sketch, fit_intercept, outputs):
    X, y = _data(outputs=outputs)
    folds = _folds(X)
    est = SketchedKernelRidge(kernel_params={"gamma": 2.0}, sketch=sketch, sketch_size=25, random_state=0,
                              fit_intercept=fit_intercept)
    path = square_loss_path(est, X, y, folds, LAMS, check_scoring(est, None))
    assert isinstance(path, PathScores) and path.test_scores.shape == (4, 3) and not path.failed.any()
    np.testing.assert_allclose(path.test_scores, _grid_search_splits(est, X, y, folds, LAMS), rtol=0, atol=1e-8)


@pytest.mark.parametrize("scoring", ["neg_mean_squared_error", "neg_mean_absolute_error", "r2"])
def test_other_scorers_equal_grid_search(scoring):
    X, y = _data(outputs=2)
    folds = _folds(X)
    est = SketchedKernelRidge(kernel_params={"gamma": 2.0}, sketch="nystrom", sketch_size=20, random_state=1)
    path = square_loss_path(est, X, y, folds, LAMS, check_scoring(est, scoring))
    ref = _grid_search_splits(est, X, y, folds, LAMS, scoring)
    np.testing.assert_allclose(path.test_scores, ref, rtol=0, atol=1e-8)


def test_streamed_fit_equals_grid_search():
    X, y = _data()
    folds = _folds(X)
    # an explicit memory budget makes the model stream (sums, no n x m features)
    est = SketchedKernelRidge(kernel_params={"gamma": 2.0}, sketch="psr", sketch_size=20, random_state=0,
                              memory_budget="50MB")
    path = square_loss_path(est, X, y, folds, LAMS, check_scoring(est, None))
    np.testing.assert_allclose(path.test_scores, _grid_search_splits(est, X, y, folds, LAMS), rtol=0, atol=1e-8)


@pytest.mark.parametrize("sketch", ["psr", None])
def test_fold_predictions_equal_a_direct_fit(sketch):
    X, y = _data()
    train, test = _folds(X)[0]
    est = SketchedKernelRidge(kernel_params={"gamma": 2.0}, sketch=sketch, sketch_size=20, random_state=3)
    system = _fold_system(est, X, y, train, test, "predict", FoldThreads(jobs=1))[0]
    for lam in LAMS:
        direct = clone(est).set_params(lam=lam).fit(X[train], y[train]).predict(X[test])
        np.testing.assert_allclose(system.predictions(lam)[:, 0], direct, rtol=0, atol=1e-9)


def test_shared_sketch_equals_nystrom_formula():
    """One sketch drawn from all rows (as the refit draws it), every fold solved on it: the plain formula."""
    X, y = _data(n=80)
    folds = _folds(X)
    gamma, m = 2.0, 15
    est = SketchedKernelRidge(kernel_params={"gamma": gamma}, sketch="nystrom", sketch_size=m, random_state=0)
    path = square_loss_path(est, X, y, folds, LAMS, check_scoring(est, None), sketch_sharing="shared")
    assert path.info["sketch_sharing"] == "shared"
    landmarks = clone(est).fit(X, y).X_fit_  # the refit on all rows draws the shared sketch
    w, V = np.linalg.eigh(naive_gaussian(landmarks, landmarks, gamma))
    Phi = naive_gaussian(X, landmarks, gamma) @ (V / np.sqrt(w))  # Nystrom features K_XL K_LL^{-1/2}
    for k, (tr, te) in enumerate(folds):
        for j, lam in enumerate(LAMS):
            mean = y[tr].mean()
            W = np.linalg.solve(Phi[tr].T @ Phi[tr] + len(tr) * lam * np.eye(m), Phi[tr].T @ (y[tr] - mean))
            pred = Phi[te] @ W + mean
            r2 = 1 - ((y[te] - pred) ** 2).sum() / ((y[te] - y[te].mean()) ** 2).sum()
            assert path.test_scores[k, j] == pytest.approx(r2, abs=1e-8)


def test_shared_sketch_prediction_scorer_matches_sums():
    X, y = _data(n=80, outputs=2)
    folds = _folds(X)
    est = SketchedKernelRidge(kernel_params={"gamma": 2.0}, sketch="psr", sketch_size=15, random_state=0)
    sums = square_loss_path(est, X, y, folds, LAMS, check_scoring(est, "neg_mean_squared_error"),
                            sketch_sharing="shared")
    # the same metric through held-out predictions (a scorer the sums do not know)
    from sklearn.metrics import make_scorer, mean_squared_error

    by_pred = square_loss_path(est, X, y, folds, LAMS, make_scorer(lambda a, b: -mean_squared_error(a, b)),
                               sketch_sharing="shared")
    np.testing.assert_allclose(sums.test_scores, by_pred.test_scores, rtol=1e-10, atol=1e-12)


def test_membership_groups_partition_kfold_rows():
    folds = _folds(np.zeros((20, 1)))
    groups, train_of, test_of = _membership_groups(folds, 20)
    assert len(groups) == 4 and sorted(np.concatenate(groups).tolist()) == list(range(20))
    for k, (tr, te) in enumerate(folds):
        assert sorted(np.concatenate([groups[g] for g in train_of[k]]).tolist()) == sorted(tr.tolist())
        assert sorted(np.concatenate([groups[g] for g in test_of[k]]).tolist()) == sorted(te.tolist())


def test_refuses_what_it_cannot_shortcut():
    X, y = _data()
    folds = _folds(X)
    est = SketchedKernelRidge(sketch_size=10)
    with pytest.raises(NotImplementedError, match="callable"):
        square_loss_path(est, X, y, folds, LAMS, lambda model, X, y: 0.0)
    with pytest.raises(NotImplementedError):
        square_loss_path(SketchedKernelMachine(), X, y, folds, LAMS, check_scoring(est, None))


def test_failed_fold_is_recorded_not_raised():
    X, y = _data()
    folds = _folds(X)
    est = SketchedKernelRidge(kernel_params={"gamma": -1.0}, sketch_size=10)
    path = square_loss_path(est, X, y, folds, LAMS, check_scoring(est, None))
    assert path.failed.all() and len(path.errors) == 4 and "gamma" in path.errors[0]


def test_scorer_kind_and_r2_formula():
    est = SketchedKernelRidge()
    assert scorer_kind(check_scoring(est, None), est) == "r2"
    assert scorer_kind(check_scoring(est, "neg_mean_squared_error"), est) == "neg_mse"
    assert scorer_kind(check_scoring(est, "neg_median_absolute_error"), est) == "predict"
    assert scorer_kind(lambda *a: 0.0, est) is None
    from sklearn.metrics import r2_score

    y = np.array([[1.0, 2.0], [2.0, 2.0], [4.0, 2.0]])
    f = np.array([[1.5, 2.0], [2.0, 2.0], [3.0, 2.0]])
    sse = ((y - f) ** 2).sum(0)
    sst = ((y - y.mean(0)) ** 2).sum(0)
    assert r2_from_errors(sse, sst) == pytest.approx(r2_score(y, f))
    f[0, 1] = 2.5  # a constant output predicted wrongly scores 0, as scikit-learn's force_finite
    assert r2_from_errors(((y - f) ** 2).sum(0), sst) == pytest.approx(r2_score(y, f))
