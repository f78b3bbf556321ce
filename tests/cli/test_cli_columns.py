"""Columns at the command line: feature names kept with the model and matched by name, --columns/--drop/--target."""

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from skframe.cli import app

runner = CliRunner()
FIT = ["--sketch", "subsample", "--sketch-size", "40", "--kernel-param", "gamma=0.5", "--lam", "1e-4", "--seed", "1"]
NAMES = [f"f{j}" for j in range(8)]


def _csv(path, table, names=None):
    np.savetxt(path, table, delimiter=",", fmt="%.17g", comments="", header=",".join(names) if names else "")
    return str(path)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("columns")
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(300, 8))
    y = 10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2 + 10 * X[:, 3] + 5 * X[:, 4] - 8 * X[:, 7]
    new = rng.uniform(size=(25, 8))
    swap = [7, 1, 2, 3, 4, 5, 6, 0]  # f0 <-> f7
    files = {
        "train": _csv(d / "train.csv", np.c_[X, y], NAMES + ["price"]),
        "new": _csv(d / "new.csv", new, NAMES),
        "swapped": _csv(d / "swapped.csv", new[:, swap], [NAMES[j] for j in swap]),
        "renamed": _csv(d / "renamed.csv", new, [f"g{j}" for j in range(8)]),
        "extra": _csv(d / "extra.csv", np.c_[new, new[:, 0]], NAMES + ["id"]),
        "plain": _csv(d / "plain.csv", new),
        "plain_layout": _csv(d / "plain_layout.csv", np.c_[new, new[:, 0]]),
        "model": str(d / "model.skf"),
        "dir": d,
    }
    res = runner.invoke(app, ["fit", files["train"], *FIT, "--model-out", files["model"], "--json"])
    assert res.exit_code == 0, res.output
    return files


def _predict(*args):
    res = runner.invoke(app, ["predict", *map(str, args)])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    return lines[0], np.array([[float(v) for v in line.split(",")] for line in lines[1:]])


def _error(*args):
    res = runner.invoke(app, [*map(str, args)])
    assert res.exit_code == 2, res.output
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr
    return res.stderr


def test_the_model_file_keeps_the_feature_names(data):
    from skframe.persistence import load_bundle

    model, extra = load_bundle(data["model"])
    assert list(model.feature_names_in_) == NAMES and model.feature_names_in_.dtype == object
    assert extra["columns"]["target_names"] == ["price"] and extra["columns"]["n_file_columns"] == 9


def test_a_reordered_header_predicts_the_same(data, tmp_path):
    header, P = _predict(data["model"], data["new"])
    assert header == "price"
    _, Q = _predict(data["model"], data["swapped"])
    np.testing.assert_array_equal(Q, P)
    out = tmp_path / "p.csv"  # --out .csv streams the file block by block: the same matching
    assert runner.invoke(app, ["predict", data["model"], data["swapped"], "--out", str(out)]).exit_code == 0
    np.testing.assert_array_equal(np.loadtxt(out, delimiter=",", skiprows=1).reshape(-1, 1), P)
    assert out.read_text().splitlines()[0] == "price"


def test_a_wrong_header_is_refused_in_one_line(data):
    err = _error("predict", data["model"], data["renamed"])
    assert "lacks the model's feature column(s) f0, f1" in err and "not fitted on: g0, g1" in err
    err = _error("predict", data["model"], data["extra"])
    assert "not fitted on: id" in err and "--drop id" in err and "f0" in err
    _, P = _predict(data["model"], data["new"])
    _, Q = _predict(data["model"], data["extra"], "--drop", "id")
    np.testing.assert_array_equal(Q, P)


def test_files_without_header_features_only_or_the_training_layout(data):
    _, P = _predict(data["model"], data["new"])
    _, Q = _predict(data["model"], data["plain"])
    _, R = _predict(data["model"], data["plain_layout"])  # features then the target, as the training file
    np.testing.assert_array_equal(Q, P)
    np.testing.assert_array_equal(R, P)


def test_predicting_and_evaluating_on_the_training_file(data):
    _, P = _predict(data["model"], data["train"])  # its target column is known by name and left aside
    assert P.shape == (300, 1)
    res = runner.invoke(app, ["evaluate", data["model"], data["train"], "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["metrics"]["r2"] > 0.8


def test_the_test_file_is_matched_by_name(data, tmp_path):
    rng = np.random.default_rng(5)
    X = rng.uniform(size=(40, 8))
    y = X.sum(axis=1)
    swap = [3, 1, 2, 0, 4, 5, 6, 7]
    a = _csv(tmp_path / "a.csv", np.c_[X, y], NAMES + ["price"])
    b = _csv(tmp_path / "b.csv", np.c_[y, X[:, swap]], ["price"] + [NAMES[j] for j in swap])
    reps = [json.loads(runner.invoke(app, ["fit", data["train"], "--test", t, *FIT, "--json"]).stdout)
            for t in (a, b)]
    assert reps[0]["metrics"]["mse"] == reps[1]["metrics"]["mse"]


def test_drop_a_text_column_and_name_the_target(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(120, 3))
    regions = rng.choice(["north", "south"], size=120)
    rows = [f"{r},{a:.6f},{b:.6f},{c:.6f},{a + b:.6f}" for r, (a, b, c) in zip(regions, X)]
    train = tmp_path / "houses.csv"
    train.write_text("region,a,b,c,price\n" + "\n".join(rows) + "\n")
    res = runner.invoke(app, ["fit", str(train), *FIT, "--json"])  # the text column is read as categories
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["data"]["column_types"][0] == {
        "name": "region", "type": "categorical", "features": 2, "reason": "2 distinct values"}
    model = tmp_path / "m.skf"
    res = runner.invoke(app, ["fit", str(train), "--drop", "region", "--target", "price", *FIT, "--model-out",
                              str(model), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["n_features"] == 3
    _, P = _predict(model, train)  # region dropped at fit time is left out again, price is the target
    res = runner.invoke(app, ["evaluate", str(model), str(train), "--json"])
    assert res.exit_code == 0, res.output
    assert P.shape == (120, 1) and json.loads(res.stdout)["n_samples"] == 120
    smiles = tmp_path / "mols.csv"
    smiles.write_text("mol,a,y\nCCO,1,2\nc1ccccc1,2,3\n")
    assert "--inputs smiles --input-column mol" in _error("fit", smiles, *FIT)


def test_several_targets_repeated_or_comma_separated_and_features_chosen(tmp_path):
    rng = np.random.default_rng(2)
    X = rng.uniform(size=(150, 4))
    table = np.c_[X[:, :2], X.sum(axis=1), X[:, 2:], X[:, 0] - X[:, 3]]
    train = _csv(tmp_path / "t.csv", table, ["a", "b", "s", "c", "d", "diff"])
    reps = [json.loads(runner.invoke(app, ["fit", train, *args, *FIT, "--json"]).stdout)
            for args in (["--target", "s,diff"], ["--target", "s", "--target", "diff"],
                         ["--columns", "a,b,c,d", "--target", "s,diff"], ["--columns", "1,2,4,5", "--target", "3,6"])]
    assert all(rep["n_targets"] == 2 and rep["n_features"] == 4 for rep in reps)
    assert len({rep["metrics"]["mse"] for rep in reps}) == 1
    model = tmp_path / "m.skf"
    res = runner.invoke(app, ["fit", train, "--columns", "a,c", "--target", "s", *FIT, "--model-out", str(model)])
    assert res.exit_code == 0, res.output
    header, P = _predict(model, train)  # the columns not chosen at fit time are left aside again
    assert header == "s" and P.shape == (150, 1)
    err = _error("fit", train, "--target", "price", *FIT)
    assert "no column named 'price'" in err and "'diff'" in err


def test_positions_on_a_file_without_header(tmp_path):
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(150, 3))
    table = np.c_[X[:, 0], 99 * np.ones(150), X[:, 1:], X.sum(axis=1)]
    train = _csv(tmp_path / "t.csv", table)
    model = tmp_path / "m.skf"
    res = runner.invoke(app, ["fit", train, "--drop", "2", *FIT, "--model-out", str(model), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["n_features"] == 3
    header, P = _predict(model, train)  # the training layout: position 2 left out, the last column the target
    _, Q = _predict(model, _csv(tmp_path / "f.csv", X))
    assert header == "y0"
    np.testing.assert_array_equal(P[:5], Q[:5])


def test_model_files_saved_before_layouts_still_predict(tmp_path):
    here = Path(__file__).resolve().parents[1] / "data" / "saved_models"
    expected = np.load(here / "expected.npz")
    feats = _csv(tmp_path / "x.csv", expected["X_new"])
    header, P = _predict(here / "ridge_psr.skf", feats)
    assert header == ",".join(f"y{j}" for j in range(P.shape[1]))
    np.testing.assert_allclose(P.ravel(), np.ravel(expected["ridge_psr"]), rtol=1e-10, atol=1e-12)


def test_no_header_option(data):
    res = runner.invoke(app, ["predict", data["model"], data["new"], "--no-header"])
    assert res.exit_code == 0 and len(res.stdout.splitlines()) == 25


def test_the_header_of_quantile_and_class_predictions(tmp_path):
    rng = np.random.default_rng(4)
    X = rng.uniform(size=(120, 3))
    train = _csv(tmp_path / "t.csv", np.c_[X, X.sum(axis=1), X[:, 0] > 0.5], ["a", "b", "c", "total", "big"])
    for args, header in ((["--target", "total", "--drop", "big", "--quantiles", "0.1,0.5,0.9"],
                          "total@0.1,total@0.5,total@0.9"),
                         (["--target", "big", "--drop", "total", "--loss", "hinge"], "big")):
        model = tmp_path / "m.skf"
        # a given lam: the header is the point here, not the choice of lam (tests/cli/test_cli_lam_path.py)
        res = runner.invoke(app, ["fit", train, *args, "--sketch-size", "20", "--lam", "1e-3", "--model-out",
                                  str(model)])
        assert res.exit_code == 0, res.output
        got, P = _predict(model, train)
        assert got == header and P.shape[0] == 120


def test_target_names_the_target_of_a_smiles_file_too(tmp_path):
    rows = [("CCO", 0.5, 1), ("CCCO", 0.9, 2), ("CCCCO", 1.4, 3), ("c1ccccc1", 2.1, 4), ("CC(=O)O", -0.2, 5),
            ("CCN", 0.1, 6), ("OCCO", -1.0, 7), ("CCOC", 0.8, 8)]
    path = tmp_path / "mols.csv"
    path.write_text("smiles,logp,id\n" + "".join(f"{s},{y},{i}\n" for s, y, i in rows))
    common = [str(path), "--inputs", "smiles", "--kernel", "ngram", "--kernel-param", "n=2", "--sketch", "none",
              "--json"]
    reps = []
    for option in ("--target", "--target-field"):
        res = runner.invoke(app, ["fit", *common, option, "logp"])
        assert res.exit_code == 0, res.output
        reps.append(json.loads(res.stdout[res.stdout.index("{"):]))
    assert reps[0]["metrics"] == reps[1]["metrics"]
    res = runner.invoke(app, ["fit", *common, "--target", "logp", "--drop", "id"])
    assert res.exit_code == 2 and "--input-column" in res.stderr
