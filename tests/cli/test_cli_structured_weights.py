"""`skframe fit --task structured --sample-weight COLUMN`: the weights reach the structured models' fit; molecule and
graph files, whose readers take every other column as a target, are refused in one line."""

import numpy as np
import pytest
from typer.testing import CliRunner

from skframe import load
from skframe.cli import app
from tests._structured_helpers import multilabel_data

runner = CliRunner()

ARGS = ["--targets", "4", "--task", "structured", "--input-sketch", "none", "--input-kernel-param", "gamma=0.1",
        "--output-kernel-param", "gamma=0.5", "--lam", "1e-3", "--scale", "none", "--holdout", "0", "--json"]


def _write(path, X, Y, w=None):
    names = [f"x{i}" for i in range(X.shape[1])] + ([] if w is None else ["w"]) + [f"y{i}" for i in range(Y.shape[1])]
    cols = [X] + ([] if w is None else [w[:, None]]) + [Y]
    np.savetxt(path, np.hstack(cols), delimiter=",", fmt="%.12g", header=",".join(names), comments="")


@pytest.mark.filterwarnings("ignore:X does not have valid feature names")  # a table's names, arrays here
def test_weight_column_equals_repeated_rows(tmp_path):
    X, Y = multilabel_data(n=80, L=4)
    w = np.random.default_rng(0).integers(0, 3, size=80).astype(float)
    w[0] = 1.0
    rep = np.repeat(np.arange(80), w.astype(int))
    _write(tmp_path / "w.csv", X, Y, w)
    _write(tmp_path / "r.csv", X[rep], Y[rep])
    for name, extra in (("w", ["--sample-weight", "w"]), ("r", [])):
        res = runner.invoke(app, ["fit", str(tmp_path / f"{name}.csv"), *ARGS, *extra, "--model-out",
                                  str(tmp_path / f"{name}.skf")])
        assert res.exit_code == 0, res.output
    weighted, repeated = load(tmp_path / "w.skf"), load(tmp_path / "r.skf")
    assert weighted.n_features_in_ == X.shape[1]  # the weight column is no feature
    np.testing.assert_allclose(weighted.decision_function(X), repeated.decision_function(X), atol=1e-8)


def test_dsokr_takes_the_weight_column(tmp_path):
    pytest.importorskip("torch")
    X, Y = multilabel_data(n=60, L=4)
    w = np.random.default_rng(1).uniform(0.5, 2.0, size=60)
    _write(tmp_path / "w.csv", X, Y, w)
    res = runner.invoke(app, ["fit", str(tmp_path / "w.csv"), *ARGS, "--sample-weight", "w", "--model", "dsokr",
                              "--epochs", "2", "--output-sketch-size", "10"])
    assert res.exit_code == 0, res.output


def test_molecule_files_refuse_the_weight_column(tmp_path):
    path = tmp_path / "mols.csv"
    path.write_text("smiles,w,y\nCCO,1,0.5\nCCN,2,0.1\nc1ccccc1,1,0.9\n", encoding="utf-8")
    res = runner.invoke(app, ["fit", str(path), "--inputs", "smiles", "--sample-weight", "w"])
    assert res.exit_code != 0
    lines = [line for line in res.output.strip().splitlines() if line]
    assert len(lines) == 1 and "--sample-weight" in lines[0] and "molecule and graph files" in lines[0]
    assert "Traceback" not in res.output


def test_tune_searches_the_structured_model_with_the_weights(tmp_path):
    import json

    X, Y = multilabel_data(n=60, L=4)
    w = np.random.default_rng(2).uniform(0.5, 2.0, size=60)
    _write(tmp_path / "w.csv", X, Y, w)
    res = runner.invoke(app, ["tune", str(tmp_path / "w.csv"), "--targets", "4", "--task", "structured",
                              "--input-sketch", "none", "--input-kernel-param", "gamma=0.1", "--output-kernel-param",
                              "gamma=0.5", "--scale", "none", "--lam", "1e-4,1e-2", "--cv", "3", "--sample-weight", "w",
                              "--json"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.output)
    assert report["task"] == "structured" and report["search_info"]["weighted"] is True
