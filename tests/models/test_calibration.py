"""The logistic classifier's calibration: approximate leave-one-out values against exact refits, the fitted map,
its use in every prediction, errors, saving, and a search that keeps it."""

import numpy as np
import pytest
from sklearn.metrics import log_loss

from skframe.exceptions import InvalidParameterError
from skframe.model_selection import KernelSearchCV
from skframe.models import SketchedKernelClassifier
from skframe.models._fit import Fit
from skframe.models.machine import _calibration
from skframe.persistence import load, save


def _linear_data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.where(X @ np.array([1.5, -1.0, 0.5]) + 0.8 * rng.normal(size=n) > 0, "yes", "no")
    return X, y


def _exact_linear(lam, **kw):
    # the exact model of the linear kernel: penalised linear logistic regression, whose function space does not
    # depend on which rows are fitted (so an exact leave-one-out refit is comparable)
    return SketchedKernelClassifier(kernel="linear", sketch=None, loss="logistic", lam=lam,
                                    solver_params={"tol": 1e-12}, **kw)


def test_leave_one_out_values_match_exact_refits():
    X, y = _linear_data()
    n, lam = len(y), 1e-2
    fit = Fit.of(_exact_linear(lam), X, y)
    rows, S, T = _calibration.held_out_scores(fit, fit.solve(lam), lam)
    assert rows.tolist() == list(range(n))
    full = _exact_linear(lam).fit(X, y).decision_function(X)
    for i in range(0, n, 6):  # (1/n) sum_{j != i} l_j + lam/2 |w|^2 is the (n-1)-row fit at lam n / (n - 1)
        w = np.ones(n)
        w[i] = 0.0
        exact = _exact_linear(lam * n / (n - 1)).fit(X, y, sample_weight=w).decision_function(X[i:i + 1])[0]
        move = abs(exact - full[i])
        assert move > 1e-3  # leaving the row out moves its value: the test can fail
        # one Newton step from the full fit: within 7 % of the move here (the in-sample value is off by all of it)
        assert abs(S[i, 0] - exact) <= 0.1 * move
    assert np.array_equal(T[:, 0] > 0, y == "yes")


def test_the_solver_hessian_and_a_pass_over_the_rows_agree():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 2))
    y = (np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + 0.3 * rng.normal(size=300) > 0.8).astype(int)
    est = SketchedKernelClassifier(loss="logistic", lam=1e-4, sketch_size=40, random_state=0,
                                   kernel_params={"gamma": 0.5})
    fit = Fit.of(est, X, y)
    res = fit.solve(1e-4)
    assert res.hessian is not None and res.hessian.shape == (res.W.shape[0],) * 2
    assert res.info["reused_hessians"] >= 1  # the solver's last Hessian is a step or two behind W
    _, from_solver, T = _calibration.held_out_scores(fit, res, 1e-4)
    res.hessian = None  # now formed at W in one pass
    _, from_pass, _ = _calibration.held_out_scores(fit, res, 1e-4)
    inside = fit.represent().Z @ res.W
    shift = np.abs(from_pass - inside)
    assert shift.max() > 0.5
    assert np.all(np.abs(from_solver - from_pass) <= 0.05 * shift + 1e-9)  # 2 % of the shift at most here
    w, t = np.ones(len(y)), (T[:, 0] > 0).astype(float)
    np.testing.assert_allclose(_calibration.fit_map(from_solver[:, 0], t, w, "lapse"),
                               _calibration.fit_map(from_pass[:, 0], t, w, "lapse"), atol=5e-3)


def _flipped(n, flip, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = (X[:, 0] + np.sin(2 * X[:, 1]) > 0).astype(int)
    y = np.where(rng.random(n) < flip, 1 - y, y)
    return X, y


def test_lapse_rate_estimates_the_flipped_share_and_improves_held_out_log_loss():
    X, y = _flipped(3000, 0.10, seed=0)
    Xt, yt = _flipped(4000, 0.10, seed=1)
    kw = dict(loss="logistic", lam=1e-5, sketch_size=100, kernel_params={"gamma": 0.5}, random_state=0)
    raw = SketchedKernelClassifier(**kw).fit(X, y)
    cal = SketchedKernelClassifier(calibration="lapse", **kw).fit(X, y)
    info = cal.calibration_
    assert info["method"] == "lapse" and info["rows"] == 3000
    # 10 % of the labels flipped to the other class: P(label 1) = 0.1 + 0.8 P(true class 1), a lapse rate of 0.1
    assert 0.07 <= info["lapse"][0] <= 0.13
    assert log_loss(yt, cal.predict_proba(Xt)) < log_loss(yt, raw.predict_proba(Xt)) - 0.01
    platt = SketchedKernelClassifier(calibration="sigmoid", **kw).fit(X, y)
    assert platt.calibration_["lapse"] == [0.0]


def test_predictions_follow_the_map_and_stay_consistent():
    X, y = _flipped(400, 0.1, seed=2)
    labels = np.array(["cat", "dog"])[y]
    clf = SketchedKernelClassifier(loss="logistic", calibration="lapse", lam=1e-4, sketch_size=40,
                                   kernel_params={"gamma": 0.5}, random_state=0).fit(X, labels)
    f = clf._decision(X)[:, 0]
    a, b, eps = (clf.calibration_[k][0] for k in ("slope", "offset", "lapse"))
    np.testing.assert_allclose(clf.decision_function(X), a * f + b)
    P = clf.predict_proba(X)
    np.testing.assert_allclose(P[:, 1], eps + (1 - 2 * eps) / (1 + np.exp(-(a * f + b))), rtol=1e-12)
    assert np.array_equal(clf.predict(X), clf.classes_[np.argmax(P, axis=1)])
    np.testing.assert_allclose(np.exp(clf.predict_log_proba(X)), P)
    assert P.min() >= eps - 1e-15


def test_more_classes_calibrate_each_one_vs_rest_column():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(450, 2))
    y = np.array(["a", "b", "c"])[np.argmax(X @ rng.normal(size=(2, 3)) + 0.5 * rng.normal(size=(450, 3)), 1)]
    clf = SketchedKernelClassifier(loss="logistic", calibration="lapse", lam=1e-4, sketch_size=50,
                                   kernel_params={"gamma": 0.3}, random_state=0).fit(X, y)
    assert len(clf.calibration_["slope"]) == 3
    P = clf.predict_proba(X)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert np.array_equal(clf.predict(X), clf.classes_[np.argmax(P, axis=1)])
    assert clf.score(X, y) > 0.8


def test_zero_weights_calibrate_as_dropped_rows():
    X, y = _linear_data(80, seed=4)
    w = np.ones(80)
    w[::5] = 0.0
    a = _exact_linear(1e-2, calibration="lapse").fit(X, y, sample_weight=w).calibration_
    keep = w > 0
    b = _exact_linear(1e-2, calibration="lapse").fit(X[keep], y[keep]).calibration_
    for key in ("slope", "offset", "lapse"):
        np.testing.assert_allclose(a[key], b[key], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("loss", ["hinge", "multinomial", "square"])
def test_calibration_needs_the_logistic_loss(loss):
    X, y = _linear_data()
    with pytest.raises(InvalidParameterError, match="calibration='lapse'.*loss='logistic'"):
        SketchedKernelClassifier(loss=loss, calibration="lapse").fit(X, y)


def test_an_unknown_method_is_refused():
    X, y = _linear_data()
    with pytest.raises(InvalidParameterError, match="calibration"):
        SketchedKernelClassifier(loss="logistic", calibration="isotonic").fit(X, y)


def test_a_refit_without_calibration_drops_the_map(tmp_path):
    X, y = _linear_data(120, seed=5)
    clf = SketchedKernelClassifier(loss="logistic", calibration="lapse", sketch_size=30, random_state=0).fit(X, y)
    P = clf.predict_proba(X)
    path = save(clf, tmp_path / "m.skf")
    again = load(path)
    np.testing.assert_allclose(again.predict_proba(X), P)
    assert again.calibration_ == clf.calibration_
    clf.set_params(calibration=None).fit(X, y)
    assert not hasattr(clf, "calibration_")
    f = clf.decision_function(X)
    np.testing.assert_allclose(clf.predict_proba(X)[:, 1], 1 / (1 + np.exp(-f)))


def test_a_lambda_search_keeps_calibrated_models():
    X, y = _flipped(600, 0.1, seed=6)
    search = KernelSearchCV(SketchedKernelClassifier(loss="logistic", calibration="lapse", sketch_size=40,
                                                     kernel_params={"gamma": 0.5}, random_state=0),
                            {"lam": [1e-2, 1e-3, 1e-4]}, cv=3, scoring="neg_log_loss").fit(X, y)
    assert search.best_estimator_.calibration_["method"] == "lapse"
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))


def test_a_lapse_rate_few_rows_would_set_falls_back_to_the_sigmoid():
    X, y = _flipped(300, 0.0, seed=7)  # clean labels: no lapse rate the rows could tell
    kw = dict(loss="logistic", lam=1e-3, sketch_size=40, kernel_params={"gamma": 0.5}, random_state=0)
    lapse = SketchedKernelClassifier(calibration="lapse", **kw).fit(X, y).calibration_
    sigmoid = SketchedKernelClassifier(calibration="sigmoid", **kw).fit(X, y).calibration_
    assert lapse["lapse"] == [0.0] and lapse["method"] == "lapse"
    np.testing.assert_allclose(lapse["slope"], sigmoid["slope"])
    assert _calibration.MIN_LAPSE_ROWS == 10.0


def test_a_map_that_saves_nothing_on_held_out_scores_is_not_kept():
    from sklearn.datasets import load_breast_cancer
    from sklearn.preprocessing import StandardScaler

    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X[:400])
    y = y[:400]
    kw = dict(loss="logistic", lam=1e-4, kernel_params={"gamma": 1 / 30}, random_state=0)
    cal = SketchedKernelClassifier(calibration="lapse", **kw).fit(X, y)
    info = cal.calibration_
    assert info["kept"] == [False] and info["held_out_gain"][0]["z"] < _calibration.MIN_GAIN_Z
    assert (info["slope"], info["offset"], info["lapse"]) == ([1.0], [0.0], [0.0])
    raw = SketchedKernelClassifier(**kw).fit(X, y)
    np.testing.assert_allclose(cal.predict_proba(X), raw.predict_proba(X))
    Xf, yf = _flipped(3000, 0.10, seed=0)  # 10 % flipped labels on 3 000 rows: the map earns its place
    flipped = SketchedKernelClassifier(calibration="lapse", loss="logistic", lam=1e-5, sketch_size=100,
                                       kernel_params={"gamma": 0.5}, random_state=0).fit(Xf, yf).calibration_
    assert flipped["kept"] == [True] and flipped["held_out_gain"][0]["z"] > 2 * _calibration.MIN_GAIN_Z


def test_a_streamed_fit_calibrates_as_one_in_memory():
    X, y = _flipped(3000, 0.10, seed=8)
    kw = dict(loss="logistic", calibration="lapse", lam=1e-4, sketch_size=100, kernel_params={"gamma": 0.5},
              random_state=0)
    kept = SketchedKernelClassifier(**kw).fit(X, y)
    streamed = SketchedKernelClassifier(memory_budget="4MB", **kw).fit(X, y)
    assert kept.representation_ == "in-memory" and streamed.representation_ == "streamed"
    for key in ("slope", "offset", "lapse"):
        np.testing.assert_allclose(streamed.calibration_[key], kept.calibration_[key], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(streamed.predict_proba(X[:50]), kept.predict_proba(X[:50]), rtol=1e-4, atol=1e-7)
