"""``skframe fit --task classification``, ``--class-weight``, the classification metrics and ``predict --proba``."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from skframe.cli import app

runner = CliRunner()
BASE = ["--kernel-param", "gamma=1", "--sketch-size", "30"]


def _write(path, X, y):
    np.savetxt(path, np.column_stack([X, y]), delimiter=",", fmt="%.10g")
    return str(path)


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    y3 = np.argmax(X @ np.array([[1.0, -1.0, 0.0], [0.0, 1.0, -1.0]]), axis=1)
    y2 = (y3 == 0).astype(int)
    return {k: (_write(tmp_path / f"{k}-train.csv", X[:150], y[:150]), _write(tmp_path / f"{k}-test.csv", X[150:],
                                                                             y[150:]))
            for k, y in (("binary", y2), ("three", y3))}


@pytest.mark.parametrize("kind,loss,n_classes,calibrated", [
    ("binary", "logistic", 2, ", calibrated: --calibration lapse"), ("three", "multinomial", 3, "")])
def test_task_classification_chooses_the_loss_and_reports_the_metrics(files, kind, loss, n_classes, calibrated):
    train, test = files[kind]
    res = runner.invoke(app, ["fit", train, "--test", test, "--task", "classification", *BASE, "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    reason = f"classification: {n_classes} classes, --loss {loss} (probabilities{calibrated})"
    assert out["data"]["task_reason"] == reason
    m = out["metrics"]
    for key in ("accuracy", "balanced_accuracy", "log_loss", "roc_auc"):
        assert 0 <= m[key] < 10
    assert m["accuracy"] > 0.85 and m["roc_auc"] > 0.9
    assert np.asarray(m["confusion_matrix"]).shape == (n_classes, n_classes)
    assert np.sum(m["confusion_matrix"]) == 50


def test_text_report_prints_the_confusion_matrix_and_class_weight(files):
    train, test = files["binary"]
    res = runner.invoke(app, ["fit", train, "--test", test, "--task", "classification", "--class-weight",
                              "balanced", *BASE])
    assert res.exit_code == 0, res.output
    line = next(s for s in res.output.splitlines() if "confusion_matrix" in s)
    assert "|" in line


def test_predict_proba_writes_one_column_per_class(files, tmp_path):
    train, test = files["three"]
    model = str(tmp_path / "m.skf")
    assert runner.invoke(app, ["fit", train, "--task", "classification", *BASE, "--model-out", model]).exit_code == 0
    res = runner.invoke(app, ["predict", model, test, "--targets", "1", "--proba"])
    assert res.exit_code == 0, res.output
    lines = res.output.strip().splitlines()
    assert lines[0].count(",") == 2 and len(lines) == 51
    P = np.array([[float(v) for v in s.split(",")] for s in lines[1:]])
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    labels = runner.invoke(app, ["predict", model, test, "--targets", "1"]).output.strip().splitlines()[1:]
    np.testing.assert_array_equal(np.argmax(P, axis=1), [int(float(v)) for v in labels])


def test_bad_combinations_exit_with_one_line(files, tmp_path):
    train, _ = files["binary"]
    res = runner.invoke(app, ["fit", train, "--task", "classification", "--loss", "huber"])
    assert res.exit_code != 0 and "classification loss" in res.output
    model = str(tmp_path / "h.skf")
    assert runner.invoke(app, ["fit", train, "--loss", "hinge", *BASE, "--model-out", model]).exit_code == 0
    res = runner.invoke(app, ["predict", model, train, "--targets", "1", "--proba"])
    assert res.exit_code != 0 and "--proba needs" in res.output


def test_tune_scores_log_loss(files):
    train, _ = files["binary"]
    res = runner.invoke(app, ["tune", train, "--task", "classification", "--kernel-param", "gamma=1", "--lam",
                              "1e-2,1e-3", "--sketch-size", "30", "--scoring", "neg_log_loss", "--cv", "3", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output[res.output.index("{"):])
    assert out["cv"]["scoring"] == "neg_log_loss" and out["model"]["params"]["loss"] == "logistic"
    assert -1 < out["best"]["score"] < 0


def test_auto_chooses_classification_for_few_integer_classes(files, tmp_path):
    train, test = files["three"]
    res = runner.invoke(app, ["fit", train, "--test", test, *BASE, "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["data"]["task_reason"].startswith("auto: 3 classes") and "log_loss" in out["metrics"]
    res = runner.invoke(app, ["fit", train, "--test", test, "--task", "regression", *BASE, "--json"])
    assert "log_loss" not in json.loads(res.output)["metrics"]
    png = tmp_path / "plots.png"
    res = runner.invoke(app, ["fit", train, "--test", test, *BASE, "--png", str(png), "--json"])
    assert res.exit_code == 0, res.output
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_sample_weight_column(tmp_path):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(120, 2))
    y = (X[:, 0] + 0.5 * rng.normal(size=120) > 0).astype(int)
    w = rng.integers(0, 3, size=120).astype(float)
    w[:2] = 1.0
    path = tmp_path / "w.csv"
    np.savetxt(path, np.column_stack([X, w, y]), delimiter=",", fmt="%.10g", header="a,b,w,y", comments="")
    # one lam for both: the weights fit as the rows repeated at a given lam, but lam="auto" leaves rows out, and a
    # left-out copy of a repeated row stays in the fit (its approximate leave-one-out value is optimistic)
    args = ["--task", "classification", "--kernel-param", "gamma=1", "--sketch", "none", "--lam", "1e-3", "--json"]
    weighted = json.loads(runner.invoke(app, ["fit", str(path), "--sample-weight", "w", *args]).output)
    assert weighted["n_features"] == 2
    rep = np.repeat(np.arange(120), w.astype(int))
    rpath = tmp_path / "r.csv"
    np.savetxt(rpath, np.column_stack([X[rep], y[rep]]), delimiter=",", fmt="%.10g", header="a,b,y", comments="")
    model = str(tmp_path / "r.skf")
    assert runner.invoke(app, ["fit", str(rpath), *args, "--model-out", model]).exit_code == 0
    wmodel = str(tmp_path / "w.skf")
    assert runner.invoke(app, ["fit", str(path), "--sample-weight", "w", *args, "--model-out", wmodel]).exit_code == 0
    new = tmp_path / "new.csv"
    np.savetxt(new, X[:20], delimiter=",", fmt="%.10g", header="a,b", comments="")
    p1 = runner.invoke(app, ["predict", model, str(new), "--proba"]).output
    p2 = runner.invoke(app, ["predict", wmodel, str(new), "--proba"]).output
    a = np.array([[float(v) for v in s.split(",")] for s in p1.strip().splitlines()[1:]])
    b = np.array([[float(v) for v in s.split(",")] for s in p2.strip().splitlines()[1:]])
    np.testing.assert_allclose(a, b, atol=1e-6)
    res = runner.invoke(app, ["fit", str(path), "--sample-weight", "w", "--missing", "drop", *args])
    assert res.exit_code != 0 and "--missing drop" in res.output


def test_tune_passes_the_sample_weight_column_to_every_fold(tmp_path):
    """`skframe tune --sample-weight w` searches with the weights (each fold fitted and scored with them, the
    best refitted with them): its scores equal KernelSearchCV's weighted search, not the unweighted one."""
    from skframe.model_selection import KernelSearchCV
    from skframe.models import SketchedKernelRidge

    rng = np.random.default_rng(5)
    X = rng.uniform(size=(90, 2))
    y = np.sin(4 * X[:, 0]) + 0.1 * rng.normal(size=90)
    w = rng.uniform(0.2, 3.0, size=90)
    path = tmp_path / "w.csv"
    np.savetxt(path, np.column_stack([X, w, y]), delimiter=",", fmt="%.12g", header="a,b,w,y", comments="")
    args = ["tune", str(path), "--sample-weight", "w", "--scale", "none", "--sketch", "none", "--kernel-param",
            "gamma=2", "--lam", "1e-4,1e-2", "--cv", "3", "--json"]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    report = json.loads(res.output)
    assert report["search_info"]["weighted"] is True
    est = SketchedKernelRidge(kernel_params={"gamma": 2.0}, sketch=None, lam=1e-3)
    from sklearn.model_selection import KFold

    ref = KernelSearchCV(est, {"lam": [1e-4, 1e-2]}, cv=KFold(3, shuffle=True, random_state=0)).fit(
        X, y, sample_weight=w)  # tune's folds: shuffled from --seed (0)
    np.testing.assert_allclose(report["scores"]["mean"], ref.cv_results_["mean_test_score"], rtol=1e-8)


def test_calibration_default_none_and_sigmoid(files, tmp_path):
    from skframe.persistence import load

    train, test = files["binary"]
    seen = {}
    for given in (None, "none", "sigmoid"):
        model = str(tmp_path / f"{given}.skf")
        extra = [] if given is None else ["--calibration", given]
        res = runner.invoke(app, ["fit", train, "--test", test, "--task", "classification", *BASE, *extra,
                                  "--model-out", model, "--json"])
        assert res.exit_code == 0, res.output
        seen[given] = getattr(load(model), "calibration_", None)
    assert seen[None]["method"] == "lapse" and seen["sigmoid"]["lapse"] == [0.0]
    assert seen["none"] is None


@pytest.mark.parametrize("args,message", [
    (["--loss", "multinomial", "--calibration", "lapse"], "--calibration lapse maps the scores of --loss logistic"),
    (["--loss", "hinge", "--calibration", "sigmoid"], "not --loss hinge"),
    (["--calibration", "isotonic"], "--calibration 'isotonic' is not one of none, sigmoid, lapse"),
])
def test_calibration_mistakes_exit_with_one_line(files, args, message):
    train, _ = files["binary"]
    res = runner.invoke(app, ["fit", train, "--task", "classification", *BASE, *args])
    assert res.exit_code != 0 and message in res.output
    assert "Traceback" not in res.output and len(res.output.strip().splitlines()) == 1
