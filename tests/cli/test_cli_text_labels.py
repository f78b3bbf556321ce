"""Class labels given as text in a table (``yes``/``no``, species names): fit, predict, ``--proba``, evaluate.

Generated data only: a binary comma-separated file, a three-species ``;``-separated gzip file and a Parquet file.
"""

import csv
import gzip
import io
import json

import numpy as np
import pytest
from typer.testing import CliRunner

from skframe.cli import app

runner = CliRunner()
BASE = ["--kernel-param", "gamma=0.5", "--sketch-size", "40"]
SPECIES = np.array(["setosa", "versicolor", "virginica"])


def _binary(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] > 0, "yes", "no")
    w = rng.uniform(0.5, 2.0, size=n)
    return X, y, w


def _write_csv(path, X, y, w=None, delimiter=",", names=("x1", "x2")):
    header = list(names) + (["weight"] if w is not None else []) + ["label"]
    rows = [[f"{a:.6f}" for a in x] + ([f"{w[i]:.4f}"] if w is not None else []) + [y[i]] for i, x in enumerate(X)]
    text = delimiter.join(header) + "\n" + "\n".join(delimiter.join(r) for r in rows) + "\n"
    if str(path).endswith(".gz"):
        with gzip.open(path, "wt", encoding="utf-8") as fh:
            fh.write(text)
    else:
        path.write_text(text)
    return str(path)


@pytest.fixture
def binary(tmp_path):
    X, y, w = _binary(240, 0)
    X_te, y_te, w_te = _binary(80, 1)
    return (_write_csv(tmp_path / "train.csv", X, y, w), _write_csv(tmp_path / "test.csv", X_te, y_te, w_te), y_te)


@pytest.fixture
def species(tmp_path):
    rng = np.random.default_rng(2)
    k = rng.integers(0, 3, size=240)
    X = rng.normal(size=(240, 2)) * 0.6 + np.stack([2.0 * k, -1.5 * k], axis=1)
    return _write_csv(tmp_path / "iris.csv.gz", X, SPECIES[k], delimiter=";", names=("sepal", "petal")), SPECIES[k]


def _fit(args):
    res = runner.invoke(app, ["fit", *args, *BASE, "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def _csv_rows(text):
    return list(csv.reader(io.StringIO(text)))


def test_binary_text_labels_fit_predict_proba_and_evaluate(binary, tmp_path):
    train, test, y_te = binary
    model = str(tmp_path / "m.skf")
    out = _fit([train, "--task", "classification", "--drop", "weight", "--model-out", model])
    m = out["metrics"]
    # lam="auto" by approximate leave-one-out: every training row's held-out prediction of the one fit, no refit
    assert out["evaluated_on"] == "approximate leave-one-out" and out["n_test"] == 240
    for key in ("accuracy", "balanced_accuracy", "log_loss", "roc_auc", "confusion_matrix"):
        assert key in m
    assert m["accuracy"] > 0.85 and m["roc_auc"] > 0.9 and m["classes"] == ["no", "yes"]
    assert np.sum(m["confusion_matrix"]) == 240 and np.asarray(m["confusion_matrix"]).shape == (2, 2)
    fixed = _fit([train, "--task", "classification", "--drop", "weight", "--lam", "1e-3"])
    assert fixed["evaluated_on"] == "holdout" and np.sum(fixed["metrics"]["confusion_matrix"]) == 48

    # predictions written as the original labels, saved to a file and read back
    pred_file = tmp_path / "pred.csv"
    res = runner.invoke(app, ["predict", model, test, "--out", str(pred_file)])
    assert res.exit_code == 0, res.output
    rows = _csv_rows(pred_file.read_text())
    assert rows[0] == ["label"] and {r[0] for r in rows[1:]} <= {"yes", "no"} and len(rows) == 81
    assert np.mean(np.array([r[0] for r in rows[1:]]) == y_te) > 0.85
    res = runner.invoke(app, ["predict", model, test])  # on stdout, the same labels
    assert _csv_rows(res.output) == rows
    npz = tmp_path / "pred.npz"
    assert runner.invoke(app, ["predict", model, test, "--out", str(npz)]).exit_code == 0
    with np.load(npz, allow_pickle=False) as saved:  # fixed-width strings: no pickle needed
        assert saved["predictions"].tolist() == [r[0] for r in rows[1:]] and saved["names"].tolist() == ["label"]

    res = runner.invoke(app, ["predict", model, test, "--proba"])
    assert res.exit_code == 0, res.output
    rows = _csv_rows(res.output)
    assert rows[0] == ["label=no", "label=yes"]
    P = np.array(rows[1:], dtype=float)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-9)

    # the classes are kept in the model file as data (a JSON list), and the model reloads them
    from skframe.persistence import load_bundle

    est, extra = load_bundle(model)
    assert extra["classes"] == ["no", "yes"] and list(est.classes_) == ["no", "yes"]

    res = runner.invoke(app, ["evaluate", model, test, "--json"])
    assert res.exit_code == 0, res.output
    ev = json.loads(res.output)["metrics"]
    assert ev["accuracy"] == pytest.approx(np.mean(np.array([r for r in _pred(model, test)]) == y_te))
    assert np.sum(ev["confusion_matrix"]) == 80


def _pred(model, test):
    res = runner.invoke(app, ["predict", model, test])
    return [r[0] for r in _csv_rows(res.output)[1:]]


def test_auto_chooses_classification_for_a_text_target_and_says_why(binary):
    train, test, _ = binary
    out = _fit([train, "--drop", "weight", "--test", test])
    assert out["evaluated_on"] == "test"
    reason = out["data"]["task_reason"]
    assert reason.startswith("auto: 2 classes") and "no number in it" in reason and "--loss logistic" in reason
    res = runner.invoke(app, ["fit", train, "--drop", "weight", *BASE])
    assert res.exit_code == 0, res.output
    assert "auto: 2 classes" in res.output
    hinge = _fit([train, "--drop", "weight", "--loss", "hinge", "--test", test])  # the SVM keeps the labels too
    assert hinge["metrics"]["classes"] == ["no", "yes"] and hinge["metrics"]["accuracy"] > 0.85


def test_three_species_semicolon_gzip(species, tmp_path):
    path, y = species
    model = str(tmp_path / "iris.skf")
    out = _fit([path, "--model-out", model])
    assert out["data"]["read"]["delimiter"] == ";" and out["data"]["read"]["compression"] == "gzip"
    m = out["metrics"]
    assert m["classes"] == list(SPECIES) and np.asarray(m["confusion_matrix"]).shape == (3, 3)
    assert m["accuracy"] > 0.8 and m["roc_auc"] > 0.9 and m["log_loss"] < 0.6
    assert "--loss multinomial" in out["data"]["task_reason"]
    res = runner.invoke(app, ["predict", model, path, "--proba"])
    assert res.exit_code == 0, res.output
    assert _csv_rows(res.output)[0] == [f"label={s}" for s in SPECIES]
    labels = _pred(model, path)
    assert set(labels) <= set(SPECIES) and np.mean(np.array(labels) == y) > 0.8
    res = runner.invoke(app, ["evaluate", model, path, "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["metrics"]["accuracy"] == pytest.approx(np.mean(np.array(labels) == y))


def test_parquet_gives_the_model_of_the_csv_file(binary, tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    train, test, _ = binary
    rows = _csv_rows(open(train).read())
    cols = list(zip(*rows[1:]))
    table = pa.table({name: (list(map(float, c)) if name != "label" else list(c)) for name, c in zip(rows[0], cols)})
    parquet = str(tmp_path / "train.parquet")
    pq.write_table(table, parquet)
    m_csv, m_pq = str(tmp_path / "c.skf"), str(tmp_path / "p.skf")
    a = _fit([train, "--sample-weight", "weight", "--model-out", m_csv])
    b = _fit([parquet, "--sample-weight", "weight", "--model-out", m_pq])
    assert a["metrics"]["accuracy"] == b["metrics"]["accuracy"]
    assert a["metrics"]["log_loss"] == pytest.approx(b["metrics"]["log_loss"], rel=1e-9)
    assert _pred(m_csv, test) == _pred(m_pq, test)


def test_sample_weight_column_changes_the_fit(binary):
    train, _, _ = binary
    plain = _fit([train, "--drop", "weight", "--holdout", "0"])
    weighted = _fit([train, "--sample-weight", "weight", "--holdout", "0"])
    assert plain["n_features"] == weighted["n_features"] == 2  # the weight column is not a feature
    assert plain["metrics"]["log_loss"] != weighted["metrics"]["log_loss"]
    assert weighted["evaluated_on"] == "train"


def test_unknown_labels_and_text_for_regression_give_one_line(binary, tmp_path):
    train, _, _ = binary
    model = str(tmp_path / "m.skf")
    assert runner.invoke(app, ["fit", train, "--drop", "weight", *BASE, "--model-out", model]).exit_code == 0
    bad = tmp_path / "bad.csv"
    bad.write_text("x1,x2,weight,label\n0.1,0.2,1,maybe\n0.3,0.1,1,yes\n")
    for args in (["evaluate", model, str(bad)], ["fit", train, "--drop", "weight", "--test", str(bad), *BASE]):
        res = runner.invoke(app, args)
        assert res.exit_code != 0
        err = res.output.strip()
        assert len(err.splitlines()) == 1 and "'maybe'" in err and "never saw" in err and "Traceback" not in err
    res = runner.invoke(app, ["fit", train, "--drop", "weight", "--task", "regression", *BASE])
    assert res.exit_code != 0
    assert "--task classification" in res.output and "missing number" not in res.output
    empty = tmp_path / "empty.csv"
    empty.write_text("x1,x2,label\n" + "".join(f"{i},{i % 3},{'yes' if i % 2 else 'no'}\n" for i in range(20))
                     + "5,1,\n")
    res = runner.invoke(app, ["fit", str(empty), "--task", "classification", *BASE])
    assert res.exit_code != 0 and "empty label" in res.output


def test_missing_drop_removes_the_rows_and_their_labels(tmp_path):
    X, y, _ = _binary(120, 3)
    rows = [f"{'' if i in (5, 50) else f'{x[0]:.5f}'},{x[1]:.5f},{y[i]}" for i, x in enumerate(X)]
    path = tmp_path / "gaps.csv"
    path.write_text("x1,x2,label\n" + "\n".join(rows) + "\n")
    out = _fit([str(path), "--missing", "drop", "--holdout", "0"])
    assert out["n_train"] == 118 and out["metrics"]["n_samples"] == 118
    assert out["metrics"]["accuracy"] > 0.85  # labels aligned with the rows kept
    err = runner.invoke(app, ["fit", str(path), *BASE])
    assert err.exit_code != 0 and "--missing" in err.output
