"""lam="auto" of the classifier on a held-out share of the rows (lam_criterion="holdout"), and the rule of
lam_criterion="auto" that chooses among approximate leave-one-out, the held-out share and the k folds."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.metrics import log_loss

from skframe.models import SketchedKernelClassifier
from skframe.models._fit import Fit
from skframe.models.machine import _alo, _holdout
from skframe.models.machine._labels import row_codes


def _data(n=600, classes=2, seed=0):
    return make_classification(n, 5, n_informative=3, n_redundant=0, n_classes=classes, n_clusters_per_class=1,
                               flip_y=0.05, weights=[0.7] + [0.3 / (classes - 1)] * (classes - 1), random_state=seed)


def test_holdout_rows_are_a_stratified_seeded_share():
    X, y = _data(2000)
    Y = np.where(y[:, None] == 1, 1.0, -1.0)
    size = _holdout.holdout_size(2000)
    rows = _holdout.holdout_rows(Y, size)
    assert size == 1000 and rows.size == size and np.array_equal(rows, np.unique(rows))
    assert np.array_equal(rows, _holdout.holdout_rows(Y, size))  # the fixed seed: the same rows every time
    share = np.mean(row_codes(Y)[rows] == 1), np.mean(row_codes(Y) == 1)
    assert abs(share[0] - share[1]) < 0.002  # each class in its share of the rows
    assert _holdout.holdout_size(10**7) == _holdout.HOLDOUT_MAX and _holdout.holdout_size(100_000) == 10_000


@pytest.mark.parametrize("loss, classes", [("logistic", 2), ("multinomial", 3)])
def test_holdout_curve_is_the_held_out_loss_of_fits_without_those_rows(loss, classes):
    """Each λ's value is the mean log-loss of the held-out rows under the solution fitted with those rows at weight
    zero (solved here again from zero, to the solver's tight tolerance; the path stops at a looser one); the chosen
    λ is the curve's least; the calibration and the held-out report use the held-out rows' values."""
    X, y = _data(600, classes)
    est = SketchedKernelClassifier(loss=loss, lam="auto", lam_criterion="holdout", sketch_size=30, random_state=0,
                                   calibration="lapse" if loss == "logistic" else None)
    fit = Fit.of(est, X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit.run()
    info = est.fit_info_["lam"]
    held = fit.holdout["rows"]
    assert info["lam_criterion"] == "holdout" and held.size == 300 and info["folds"].startswith("one held-out share")
    assert info["chosen"] == info["grid"][int(np.argmin(info["curve"]))] == fit.holdout["lam"]
    weights = np.ones(y.size)
    weights[held] = 0.0
    solve, rep = fit.recipe.reweigh(weights), fit.represent()
    Z = np.asarray(rep.Z)[held]
    diffs = []
    for lam, value in zip(info["grid"], info["curve"]):
        W = np.asarray(solve(rep, fit.Yc, lam, None, fit.rngs[-1]).W)
        F = Z @ W + np.ravel(fit.offset)
        if loss == "logistic":
            P = 1.0 / (1.0 + np.exp(-F[:, 0]))
            P = np.column_stack([1.0 - P, P])
        else:
            P = np.exp(F - F.max(axis=1, keepdims=True))
            P /= P.sum(axis=1, keepdims=True)
        diffs.append(abs(value - log_loss(y[held], P, labels=np.unique(y))))
    assert max(diffs) < 1e-4  # the path's solves stop at a relative duality gap of 1e-6 (PATH_TOL), these at 1e-8
    assert est.held_out_["method"] == "held-out share" and est.held_out_["rows"] == held.size
    if loss == "logistic":
        assert est.calibration_["scores"] == "held-out share" and est.calibration_["rows"] == held.size


def test_auto_takes_leave_one_out_where_the_hessian_is_formed_else_the_held_out_share():
    X, y = _data(600)
    base = dict(loss="logistic", lam="auto", sketch_size=30, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        small = SketchedKernelClassifier(**base).fit(X, y).fit_info_["lam"]
        cg = SketchedKernelClassifier(**base, solver_params={"step": "cg"}).fit(X, y).fit_info_["lam"]
        kept = SketchedKernelClassifier(**base, cv_order="keep").fit(X, y).fit_info_["lam"]
        hinge = SketchedKernelClassifier(**dict(base, loss="hinge")).fit(X, y).fit_info_["lam"]
    assert small["lam_criterion"] == "alo" and "form the Hessian, which leave-one-out reuses" in small["criterion_rule"]
    assert cg["lam_criterion"] == "holdout" and "step='cg'" in cg["criterion_rule"]
    assert kept["lam_criterion"] == "kfold" and "cv_order='keep'" in kept["reason"]
    assert hinge["lam_criterion"] == "kfold" and "no Hessian" in hinge["criterion_rule"]


def test_auto_rule_follows_the_plan_for_many_rows():
    """The rule itself on the plan's numbers: many rows and features make Newton–CG, so the held-out share."""
    from skframe.plugin.toolbox import choose_newton_step

    assert choose_newton_step(100_000, 633, 1)[0] == "cg" and choose_newton_step(22_524, 301, 1)[0] == "direct"
    assert _alo.CRITERIA == ("auto", "alo", "holdout", "kfold")


def test_streamed_features_take_the_held_out_share_as_the_kept_ones_do():
    """Streamed features are not kept for leave-one-out's leverages: "auto" scores the held-out share, and the
    curve and the chosen λ equal those of the same held-out share with the features in memory."""
    X, y = _data(3000)
    kw = dict(loss="logistic", lam="auto", sketch_size=100, kernel_params={"gamma": 0.5}, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        streamed = SketchedKernelClassifier(memory_budget="4MB", **kw).fit(X, y)
        kept = SketchedKernelClassifier(lam_criterion="holdout", **kw).fit(X, y)
    assert streamed.representation_ == "streamed" and kept.representation_ == "in-memory"
    s, k = streamed.fit_info_["lam"], kept.fit_info_["lam"]
    assert s["lam_criterion"] == "holdout" and "features stream" in s["criterion_rule"]
    assert s["chosen"] == k["chosen"] and s["grid"] == k["grid"]
    np.testing.assert_allclose(s["curve"], k["curve"], rtol=1e-4)
    np.testing.assert_allclose(streamed.predict_proba(X[:50]), kept.predict_proba(X[:50]), rtol=1e-3, atol=1e-6)


def test_a_streamed_plan_that_keeps_the_features_skips_the_square_loss_sums(monkeypatch):
    """Where the plan streams the rows for the Newton solver, the representation makes no pass for the square loss's
    sums: the first solve forms the kept features and every λ of the path reuses them (where the budget keeps
    none, the plan says so, the sums are accumulated and every pass forms its blocks); the two models agree. The
    square loss still accumulates."""
    import skframe.compute.stream_problems as stream_problems
    import skframe.compute.streaming as streaming
    from skframe.models import SketchedKernelRidge

    calls = {"sums": 0, "kept": 0}
    accumulate, make = streaming.accumulate, stream_problems.make_feature_problem

    def counted_sums(*args, **kwargs):
        calls["sums"] += 1
        return accumulate(*args, **kwargs)

    def counted_kept(*args, **kwargs):
        calls["kept"] += 1
        return make(*args, **kwargs)

    monkeypatch.setattr(streaming, "accumulate", counted_sums)
    monkeypatch.setattr("skframe.compute.stream_fit.make_feature_problem", counted_kept)
    X, y = _data(3000)
    kw = dict(loss="logistic", lam="auto", lam_criterion="holdout", sketch_size=200, random_state=0,
              dtype="float64")  # (the default keeps the kernel block in float32: the models then differ by rounding)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kept = SketchedKernelClassifier(memory_budget="1GB", **kw).fit(X, y)
        assert calls == {"sums": 0, "kept": 1}  # one formation of the features for the whole path
        # 10 MB: the stream needs about 8 MB (m x m part, 2 213 sampled points, 64 rows), the features 4.8 MB more
        streamed = SketchedKernelClassifier(memory_budget="10MB", **kw).fit(X, y)
    assert kept.execution_["executor"] == streamed.execution_["executor"] == "streamed"
    assert kept.representation_ == "in-memory" and streamed.representation_ == "streamed"
    assert calls["sums"] == 1  # a plan that keeps no features accumulates the sums, as before
    assert kept.fit_info_["lam"]["chosen"] == streamed.fit_info_["lam"]["chosen"]
    np.testing.assert_allclose(kept.predict_proba(X[:50]), streamed.predict_proba(X[:50]), rtol=1e-6, atol=1e-9)
    SketchedKernelRidge(memory_budget="1GB", sketch_size=200, lam=1e-3, random_state=0).fit(X, y.astype(float))
    assert calls["sums"] == 2


@pytest.mark.parametrize("budget", [None, "2MB", "2MB, no kept features"])
def test_path_on_a_stratified_sample_above_path_rows(monkeypatch, budget):
    """Above PATH_ROWS rows the path runs on a stratified sample of them (its own held-out share within it): each
    λ's value is the held-out loss of the solution fitted on the sample's other rows, with the features of the fit
    (in memory; computed for the sample's rows where they stream; where the streamed plan keeps the kernel block,
    formed once before the path and its sample's rows read as two factors); the final fit uses every row."""
    monkeypatch.setattr(_holdout, "PATH_ROWS", 400)
    X, y = _data(1000, 3)
    if budget and budget.endswith("no kept features"):  # the plan keeps none: every pass forms its blocks
        monkeypatch.setattr("skframe.compute.stream_problems.kept_features_rows", lambda *args: None)
    est = SketchedKernelClassifier(loss="multinomial", lam="auto", lam_criterion="holdout", sketch_size=30,
                                   random_state=0, memory_budget=budget and budget[:3])
    fit = Fit.of(est, X, y)
    seen, features = [], _holdout._path_features

    def spy(*args):
        out = features(*args)
        seen.append((type(out[0]).__name__, getattr(args[1], "kept", None) is not None))
        return out

    monkeypatch.setattr(_holdout, "_path_features", spy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit.run()
    expected = {None: ("Representation", False), "2MB": ("_SampleFactors", True),
                "2MB, no kept features": ("Representation", False)}
    assert seen == [expected[budget]] and (est.execution_["executor"] == "in-memory") == (budget is None)
    if budget == "2MB":  # the kept block (float32 by default), formed before the path, the one the final fit read
        assert est.representation_ == "in-memory" and fit.represent().kept.dtype == np.float32
    elif budget:
        assert est.representation_ == "streamed" and fit.represent().kept is None
    info, held = est.fit_info_["lam"], fit.holdout["rows"]
    sample = _holdout.path_sample(fit.Y)
    assert sample.size == 400 and np.isin(held, sample).all() and held.size == _holdout.holdout_size(400)
    assert np.array_equal(sample, _holdout.path_sample(fit.Y))  # seeded: the same rows every time
    assert abs(np.mean(row_codes(fit.Y)[sample] == 0) - np.mean(row_codes(fit.Y) == 0)) < 0.01
    assert info["path"]["rows"] == 400 and "a sample of 400 (of 1000)" in info["reason"]
    train = np.setdiff1d(sample, held)
    weights = np.zeros(y.size)
    weights[train] = 1.0
    Z = fit.predict_rows(X)  # the fit's features of every row, on its sketch
    from skframe.models._core import Representation
    rep = Representation("sketch", Z)
    solve = fit.recipe.reweigh(weights)
    for lam, value in zip(info["grid"], info["curve"]):
        W = np.asarray(solve(rep, fit.Yc, lam, None, fit.rngs[-1]).W)
        F = Z[held] @ W + np.ravel(fit.offset)
        P = np.exp(F - F.max(axis=1, keepdims=True))
        P /= P.sum(axis=1, keepdims=True)
        assert abs(value - log_loss(y[held], P, labels=np.unique(y))) < 1e-4
    assert est.held_out_["rows"] == held.size and est.lam_path_[-1] == info["chosen"]
    assert est.solver_info_["relative_gap"] <= 1e-8  # the final fit: every row, the solver's own tolerance
