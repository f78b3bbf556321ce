"""Approximate leave-one-out (ALO) values of the logistic and multinomial classifiers, and lam="auto" chosen by them."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification

from skframe.exceptions import InvalidParameterError
from skframe.models import SketchedKernelClassifier, _autotune
from skframe.models._fit import Fit
from skframe.models.machine import _alo, _calibration


def _exact_refit(Z, Y, loss, lam, c, W):
    """Newton's method from W on ``sum_i c_i l(z_i^T W, y_i) + (lam/2) ||W||^2`` (a row left out: c_i = 0)."""
    r, k = W.shape
    for _ in range(60):
        F = Z @ W
        grad = Z.T @ (loss.gradient(F, Y) * c[:, None]) + lam * W
        H = np.einsum("ia,i,ijl,ib->ajbl", Z, c, loss.hessian(F, Y), Z).reshape(r * k, r * k) + lam * np.eye(r * k)
        step = np.linalg.solve(H, grad.ravel()).reshape(r, k)
        W = W - step
        if np.abs(step).max() < 1e-12:
            break
    return W


@pytest.mark.parametrize("loss, n_classes", [("logistic", 2), ("logistic", 3), ("multinomial", 3),
                                             ("multinomial", 2)])
def test_alo_values_match_exact_refits(loss, n_classes):
    """Each row's ALO decision values against the solution refitted without the row (same features, same lam):
    the error is about 1% of how far the values move (median), and a small share of the largest move."""
    X, y = make_classification(300, 5, n_informative=3, n_redundant=0, n_classes=n_classes, n_clusters_per_class=1,
                               flip_y=0.05, random_state=0)
    lam = 1e-3
    fit = Fit.of(SketchedKernelClassifier(loss=loss, lam=lam, sketch_size=30, random_state=0,
                                          kernel_params={"gamma": 0.2}), X, y)
    Z, Y = np.asarray(fit.represent().Z), np.asarray(fit.Yc)
    res = fit.solve(lam)
    W = np.asarray(res.W)
    F = _alo.alo_decisions(Z, Y, W, fit.recipe.loss, lam, hessian=getattr(res, "hessian", None))
    n = Z.shape[0]
    errors, moves = [], []
    for i in range(0, n, 6):
        c = np.full(n, 1.0 / n)
        c[i] = 0.0
        f_out = Z[i] @ _exact_refit(Z, Y, fit.recipe.loss, lam, c, W)
        d = F[i] - f_out
        if loss == "multinomial":  # the values are defined up to a common shift: compare the log-odds
            d = d - d.mean()
        errors.append(np.abs(d).max())
        moves.append(np.abs(f_out - Z[i] @ W).max())
    errors, moves = np.array(errors), np.array(moves)
    assert np.median(errors) <= 0.03 * np.median(moves)
    assert errors.max() <= 0.2 * moves.max()


def test_alo_with_weights_is_the_weighted_refit():
    """Row weights: the left-out row's weight leaves the sum (a zero-weight row's ALO value is its fitted value)."""
    X, y = make_classification(200, 4, n_informative=2, n_redundant=0, random_state=1)
    w = np.random.default_rng(0).uniform(0.5, 2.0, size=200)
    w[3] = 0.0
    lam = 1e-3
    fit = Fit.of(SketchedKernelClassifier(loss="logistic", lam=lam, sketch_size=20, random_state=0), X, y,
                 sample_weight=w)
    Z, Y = np.asarray(fit.represent().Z), np.asarray(fit.Yc)
    W = np.asarray(fit.solve(lam).W)
    F = _alo.alo_decisions(Z, Y, W, fit.recipe.loss, lam, weights=w)
    assert F[3, 0] == pytest.approx(float(Z[3] @ W[:, 0]))
    c = w / w.sum()
    c[10] = 0.0
    f_out = Z[10] @ _exact_refit(Z, Y, fit.recipe.loss, lam, c, W)
    assert abs(F[10, 0] - f_out[0]) <= 0.05 * abs(f_out[0] - Z[10] @ W[:, 0]) + 1e-6


@pytest.mark.parametrize("seed, loss, n_classes", [(0, "logistic", 2), (1, "logistic", 2), (2, "multinomial", 3),
                                                   (3, "logistic", 3), (4, "multinomial", 4)])
def test_alo_lam_within_one_grid_step_of_kfold(seed, loss, n_classes):
    """On generated tables the ALO choice is within one step (a decade) of the k-fold search's."""
    X, y = make_classification(400, 6, n_informative=4, n_redundant=0, n_classes=n_classes, flip_y=0.1,
                               random_state=seed)
    chosen = {}
    for criterion in _alo.CRITERIA:
        est = SketchedKernelClassifier(loss=loss, lam="auto", lam_criterion=criterion, sketch_size=40,
                                       random_state=0).fit(X, y)
        chosen[criterion] = float(est.lam_path_[-1])
        assert est.fit_info_["lam"]["chosen"] == chosen[criterion]
    assert "approximate leave-one-out" in SketchedKernelClassifier(loss=loss, lam="auto", sketch_size=40,
                                                                   random_state=0).fit(X, y).fit_info_["lam"]["reason"]
    assert abs(np.log10(chosen["alo"]) - np.log10(chosen["kfold"])) <= 1.0 + 1e-9


@pytest.mark.parametrize("name", ["iris", "wine", "breast_cancer"])
def test_alo_lam_within_one_grid_step_of_kfold_on_bundled_tables(name):
    """On scikit-learn's bundled tables (standardised) the ALO choice of the default logistic fit is within one grid
    step (a decade) of the k-fold search's."""
    from sklearn import datasets
    from sklearn.preprocessing import StandardScaler

    X, y = getattr(datasets, f"load_{name}")(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    chosen = {}
    for criterion in _alo.CRITERIA:
        est = SketchedKernelClassifier(loss="logistic", lam="auto", lam_criterion=criterion, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a choice at the grid's end warns; compared all the same
            chosen[criterion] = float(est.fit(X, y).lam_path_[-1])
    assert abs(np.log10(chosen["alo"]) - np.log10(chosen["kfold"])) <= 1.0 + 1e-9


def test_path_starts_from_the_predicted_step_and_stops_at_the_first_rise():
    """The path's next start (a Newton step of the last Hessian shifted to the next lam) lies nearer that lam's
    solution than the last solution does; with noisy labels the ALO loss rises early and the path stops at the
    first rise, the smaller lam named as skipped; the path's looser tolerance is restored and the final fit certifies
    the solver's own."""
    X, y = make_classification(300, 5, n_informative=3, n_redundant=0, flip_y=0.6, random_state=3)
    est = SketchedKernelClassifier(loss="logistic", lam="auto", sketch_size=40, random_state=0)
    fit = Fit.of(est, X, y)
    Z, Y, loss = np.asarray(fit.represent().Z), np.asarray(fit.Yc), fit.recipe.loss
    res = fit.solve(1e-3)
    W, W_next = np.asarray(res.W), np.asarray(fit.solve(1e-4, res.W).W)
    H = _alo.hessian_of(Z, Y, W, loss, 1e-3, np.ones(Z.shape[0]), False)
    start = _alo._predicted(W, H, 1e-3, 1e-4, False)
    assert np.linalg.norm(start - W_next) < 0.2 * np.linalg.norm(W - W_next)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit.run()
    info = est.fit_info_["lam"]
    assert info["skipped"] and len(info["grid"]) == len(info["curve"])
    assert len(info["curve"]) + len(info["skipped"]) == len(_autotune.KFOLD_LAMS)
    assert len(info["curve"]) < 8 and info["curve"][-1] > info["curve"][-2]
    assert min(info["curve"]) == info["curve"][-2] and info["chosen"] == info["grid"][-2]
    assert "the path stopped after one rise of the loss" in info["reason"]
    assert info["path"]["tol"] == _alo.PATH_TOL and fit.recipe.solver.tol == 1e-8
    assert max(info["path"]["relative_gaps"]) <= _alo.PATH_TOL
    assert est.stop_reason_.startswith("converged") and "tol=1e-08" in est.stop_reason_


def test_hinge_and_kfold_take_the_folds():
    X, y = make_classification(150, 4, random_state=0)
    hinge = SketchedKernelClassifier(lam="auto", sketch_size=20, random_state=0).fit(X, y)
    assert "folds" in hinge.fit_info_["lam"]["reason"]
    assert "neither leave-one-out nor a held-out share: the loss has no Hessian" in hinge.fit_info_["lam"]["reason"]
    kfold = SketchedKernelClassifier(loss="logistic", lam="auto", lam_criterion="kfold", sketch_size=20,
                                     random_state=0).fit(X, y)
    assert "folds" in kfold.fit_info_["lam"]["folds"]
    with pytest.raises(InvalidParameterError, match="lam_criterion"):
        SketchedKernelClassifier(loss="logistic", lam="auto", lam_criterion="loo").fit(X, y)


def test_calibration_reuses_the_path_values():
    """With lam="auto" the calibration map is fitted on the chosen lambda's ALO values, which equal those it
    computes itself at that lambda (to the solver's tolerance: its solution and Hessian come from another start)."""
    X, y = make_classification(300, 5, flip_y=0.1, random_state=0)
    est = SketchedKernelClassifier(loss="logistic", lam="auto", sketch_size=30, random_state=0,
                                   calibration="sigmoid")
    fit = Fit.of(est, X, y)
    fit.run()
    assert fit.alo["lam"] == float(est.lam_path_[-1])
    rows, S, _ = _calibration.held_out_scores(fit, fit.solve(fit.alo["lam"]), fit.alo["lam"])
    assert np.array_equal(S, fit.alo["decisions"][rows])
    del fit.alo
    _, S_own, _ = _calibration.held_out_scores(fit, fit.solve(float(est.lam_path_[-1])), float(est.lam_path_[-1]))
    np.testing.assert_allclose(S, S_own, rtol=1e-3, atol=1e-3)
    assert est.calibration_["rows"] == rows.size


def test_held_out_metrics_of_the_one_fit():
    """held_out_: the metrics of every row's ALO probabilities (through the calibration map), close to those of a
    fresh test set; None with a fixed lam."""
    X, y = make_classification(1400, 6, n_informative=4, n_redundant=0, flip_y=0.05, random_state=2)
    labels = np.where(y == 1, "yes", "no")
    est = SketchedKernelClassifier(loss="logistic", lam="auto", sketch_size=60, random_state=0,
                                   calibration="lapse").fit(X[:1000], labels[:1000])
    held = est.held_out_
    assert held["method"] == "approximate leave-one-out" and held["rows"] == 1000
    assert held["lam"] == float(est.lam_path_[-1])
    assert np.sum(held["metrics"]["confusion_matrix"]) == 1000
    P = est.predict_proba(X[1000:])
    test_loss = float(-np.mean(np.log(P[np.arange(400), (labels[1000:] == "yes").astype(int)])))
    assert abs(held["metrics"]["log_loss"] - test_loss) < 0.05
    assert abs(held["metrics"]["accuracy"] - est.score(X[1000:], labels[1000:])) < 0.05
    assert SketchedKernelClassifier(loss="logistic", lam=1e-3, sketch_size=20).fit(X, y).held_out_ is None


def test_keep_calibrates_on_consecutive_folds_not_leave_one_out():
    """Rows in time order (cv_order="keep") are not exchangeable: the calibration map is fitted on the values of
    refits on the consecutive folds that leave each row out, which equal the classifier fitted on those rows."""
    X, y = make_classification(300, 5, flip_y=0.1, random_state=0)
    est = SketchedKernelClassifier(loss="logistic", lam=1e-3, sketch_size=30, random_state=0, calibration="sigmoid",
                                   cv_order="keep")
    fit = Fit.of(est, X, y)
    rows, S, T, words = _calibration.fold_scores(fit, 1e-3)
    assert words == "3 consecutive folds (file order kept)" and np.array_equal(rows, np.arange(300))
    np.testing.assert_array_equal(T[:, 0], np.where(y == 1, 1.0, -1.0))
    for held in (np.arange(0, 100), np.arange(200, 300)):
        train = np.setdiff1d(np.arange(300), held)
        own = SketchedKernelClassifier(loss="logistic", lam=1e-3, sketch_size=30, random_state=0).fit(X[train],
                                                                                                        y[train])
        np.testing.assert_allclose(S[held, 0], own.decision_function(X[held]), rtol=1e-6, atol=1e-6)
    est.fit(X, y)
    assert est.calibration_["scores"] == "3 consecutive folds (file order kept)"
    assert est.calibration_["rows"] == 300 and est.held_out_ is None
    shuffled = SketchedKernelClassifier(loss="logistic", lam=1e-3, sketch_size=30, random_state=0,
                                        calibration="sigmoid").fit(X, y)
    assert shuffled.calibration_["scores"] == "approximate leave-one-out"


def test_consecutive_parts_of_the_gain():
    s, t = np.linspace(-2, 2, 50), (np.arange(50) % 3 == 0).astype(float)
    gain, z = _calibration.held_out_gain(s, t, np.ones(50), "sigmoid", consecutive=True)
    assert np.isfinite(gain) and np.isfinite(z)
    assert (gain, z) != _calibration.held_out_gain(s, t, np.ones(50), "sigmoid")
