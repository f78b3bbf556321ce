"""lam="auto" of the square loss: k shuffled folds from sums of the fit's features, against plain NumPy k-fold;
a choice at an end of the grid; the training range that flags far-away predictions."""

import warnings

import numpy as np
import pytest

from skframe import SketchedKernelRidge
from skframe.models._autotune import LamAtEdgeWarning, choose_lam_square
from skframe.models._extrapolation import clip_to_range, out_of_range
from skframe.models._fit import Fit
from skframe.models._folds import default_folds
from skframe.models._square_cv import SQUARE_FOLDS, cv_curve, exact_fold_systems, fold_systems, group_sums

LAMS = [1e-6, 1e-4, 1e-2, 1.0]


def numpy_kfold(Z, Y, folds, lam, w=None):
    """Held-out mean squared error of ridge fits with an intercept (the training mean), fold by fold."""
    w = np.ones(len(Y)) if w is None else w
    sse, held = 0.0, 0.0
    for train, test in folds:
        ybar = (w[train] @ Y[train]) / w[train].sum()
        Zt = Z[train] * np.sqrt(w[train])[:, None]
        Yt = (Y[train] - ybar) * np.sqrt(w[train])[:, None]
        W = np.linalg.solve(Zt.T @ Zt + w[train].sum() * lam * np.eye(Z.shape[1]), Zt.T @ Yt)
        E = Z[test] @ W + ybar - Y[test]
        sse += float((w[test][:, None] * E * E).sum())
        held += w[test].sum() * Y.shape[1]
    return sse / held


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 3))
    Y = np.c_[np.sin(X[:, 0]), X[:, 1] ** 2] + 0.1 * rng.normal(size=(150, 2)) + 3.0
    return X, Y


def test_cv_from_group_sums_equals_numpy_kfold(data):
    X, Y = data
    Z = np.c_[X, np.tanh(X), np.ones(len(X))]
    folds, _ = default_folds(len(X), 5, random_state=0)
    got = cv_curve(fold_systems(group_sums(Z, Y, [t for _, t in folds])), LAMS)
    np.testing.assert_allclose(got, [numpy_kfold(Z, Y, folds, lam) for lam in LAMS], rtol=1e-8)


def test_weighted_cv_from_group_sums_equals_numpy_kfold(data):
    X, Y = data
    Z = np.c_[X, np.tanh(X)]
    w = np.random.default_rng(1).uniform(0.2, 2.0, len(X))
    folds, _ = default_folds(len(X), 4, random_state=3)
    got = cv_curve(fold_systems(group_sums(Z, Y, [t for _, t in folds], w)), LAMS)
    np.testing.assert_allclose(got, [numpy_kfold(Z, Y, folds, lam, w) for lam in LAMS], rtol=1e-8)


def test_exact_model_cv_equals_numpy_kfold(data):
    X, Y = data
    K = np.exp(-0.5 * ((X[:, None] - X[None]) ** 2).sum(-1))
    folds, _ = default_folds(len(X), 5, random_state=0)
    got = cv_curve(exact_fold_systems(K, Y, folds), [1e-3, 1e-1])
    want = []
    for lam in (1e-3, 1e-1):
        sse = 0.0
        for train, test in folds:
            ybar = Y[train].mean(axis=0)
            alpha = np.linalg.solve(K[np.ix_(train, train)] + len(train) * lam * np.eye(len(train)), Y[train] - ybar)
            sse += float(((K[np.ix_(test, train)] @ alpha + ybar - Y[test]) ** 2).sum())
        want.append(sse / Y.size)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_auto_lam_is_the_kfold_minimiser_on_the_fits_own_features(data):
    X, Y = data
    kw = dict(kernel_params={"gamma": 0.5}, sketch="subsample", sketch_size=30, random_state=0)
    model = SketchedKernelRidge(lam="auto", **kw).fit(X, Y)
    info = model.fit_info_["lam"]
    assert info["criterion"] == f"{SQUARE_FOLDS}-fold cv" and info["edge"] is None
    assert "shuffled folds (seed 0)" in info["folds"]
    Z = np.asarray(Fit.of(SketchedKernelRidge(lam="auto", **kw), X, Y).represent().Z)
    folds, _ = default_folds(len(X), SQUARE_FOLDS, random_state=0)
    lam = info["chosen"]
    assert info["value"] == pytest.approx(numpy_kfold(Z, Y, folds, lam), rel=1e-7)
    for other in (lam / 3, lam * 3):  # a minimum along the path
        assert numpy_kfold(Z, Y, folds, other) >= info["value"] - 1e-12


def test_gcv_is_still_available_as_a_criterion(data):
    X, Y = data
    fit = Fit.of(SketchedKernelRidge(kernel_params={"gamma": 0.5}, sketch_size=30, lam="auto", random_state=0), X, Y)
    lam, info = choose_lam_square(fit, criterion="gcv")
    assert info["criterion"] == "gcv" and info["chosen"] == lam and "folds" not in info


def test_a_choice_at_the_end_of_the_grid_is_extended_then_reported(data):
    X, _ = data
    noise = np.random.default_rng(5).normal(size=len(X))  # nothing to learn: the largest lam wins
    est = SketchedKernelRidge(kernel_params={"gamma": 0.5}, sketch_size=30, lam="auto", random_state=0)
    with pytest.warns(LamAtEdgeWarning, match="upper end"):
        est.fit(X, noise)
    info = est.fit_info_["lam"]
    assert info["edge"] == "upper" and "upper end of the grid" in info["reason"]
    assert max(info["grid"]) == pytest.approx(100.0)  # two decades beyond the grid's 1


def test_a_choice_inside_the_grid_is_not_warned_about(data):
    X, Y = data
    with warnings.catch_warnings():
        warnings.simplefilter("error", LamAtEdgeWarning)
        est = SketchedKernelRidge(kernel_params={"gamma": 0.5}, sketch_size=30, lam="auto", random_state=0).fit(X, Y)
    assert est.fit_info_["lam"]["edge"] is None


def test_streamed_fit_cross_validates_on_its_sketch(data):
    X, Y = data
    kw = dict(kernel_params={"gamma": 0.5}, sketch="subsample", sketch_size=30, lam="auto", random_state=0)
    a = SketchedKernelRidge(**kw).fit(X, Y)
    b = SketchedKernelRidge(**kw, memory_budget="20MB").fit(X, Y)
    assert b.representation_ == "accumulated" and "streamed" in b.fit_info_["lam"]["folds"]
    np.testing.assert_allclose(a.fit_info_["lam"]["curve"], b.fit_info_["lam"]["curve"], rtol=1e-7)


# ----------------------------------------------------------------------------- predictions outside the range
def _extrapolating_model():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(200, 2))
    y = X[:, 0] ** 2 + X[:, 1] + 0.01 * rng.normal(size=200)
    return X, y, SketchedKernelRidge(kernel_params={"gamma": 0.05}, sketch=None, lam=1e-10).fit(X, y)


def test_a_far_away_row_is_flagged_and_in_range_rows_are_not():
    X, y, model = _extrapolating_model()
    np.testing.assert_allclose(model.target_range_, [[y.min()], [y.max()]])
    rows = np.vstack([X[:20], [[0.0, 6.0]]])
    report = model.extrapolation_report(rows)
    assert report["count"] == 1 and report["rows"] == [20] and report["mask"].tolist() == [False] * 20 + [True]
    assert report["values"][0] > report["high"][0]
    span = y.max() - y.min()
    assert report["high"][0] == pytest.approx(y.max() + 0.5 * span)
    assert model.extrapolation_report(predictions=model.predict(X))["count"] == 0


def test_range_rule_and_clip_on_given_predictions():
    rng_ = np.array([[0.0, 10.0], [1.0, 20.0]])  # two outputs: [0, 1] and [10, 20]
    P = np.array([[0.5, 15.0], [1.6, 15.0], [0.5, 4.0], [-0.4, 25.0]])
    report = out_of_range(P, rng_, 0.5, start=100)
    assert report["count"] == 2 and report["rows"] == [101, 102] and report["values"] == [1.6, 4.0]
    np.testing.assert_allclose(clip_to_range(P, rng_), [[0.5, 15.0], [1.0, 15.0], [0.5, 10.0], [0.0, 20.0]])


def test_saved_and_loaded_model_keeps_the_range(tmp_path):
    from skframe.persistence import load, save

    X, _, model = _extrapolating_model()
    save(model, tmp_path / "m.skf")
    back = load(tmp_path / "m.skf")
    np.testing.assert_array_equal(back.target_range_, model.target_range_)
    rows = np.vstack([X[:3], [[0.0, 6.0]]])
    assert back.extrapolation_report(rows)["rows"] == [3]
