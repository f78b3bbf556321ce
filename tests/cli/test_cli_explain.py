"""``skframe fit --explain`` prints the execution plan without fitting; a fit reports the plan it followed."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from skframe.cli import app

runner = CliRunner()


@pytest.fixture
def train(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(150, 3))
    path = tmp_path / "train.csv"
    np.savetxt(path, np.c_[X, np.sin(4 * X[:, 0])], delimiter=",")
    npy = tmp_path / "train.npy"
    np.save(npy, np.c_[X, np.sin(4 * X[:, 0])])
    return {"csv": str(path), "npy": str(npy), "dir": tmp_path}


def _invoke(args):
    result = runner.invoke(app, ["fit", *args])
    assert result.exit_code == 0, result.output
    return result


def test_explain_prints_the_plan_and_fits_nothing(train):
    out = train["dir"] / "model.skf"
    res = _invoke([train["csv"], "--sketch-size", "20", "--explain", "--model-out", str(out)])
    assert "plan (nothing fitted)" in res.stdout
    for choice in ("executor", "backend", "engine", "memory_budget", "sketch_size", "chunk_rows", "blas_threads"):
        assert choice in res.stdout
    assert "in-memory" in res.stdout and "metrics" not in res.stdout and not out.exists()


def test_explain_json_has_the_plan_and_its_reasons(train):
    rep = json.loads(_invoke([train["csv"], "--sketch-size", "20", "--explain", "--json"]).stdout)
    ex = rep["execution"]
    assert ex["executor"] == "in-memory" and ex["backend"] == "numpy" and ex["sketch_size"] == 20
    assert ex["budget_source"] == "machine" and ex["reasons"]["executor"] and "metrics" not in rep
    given = json.loads(_invoke([train["csv"], "--memory-budget", "500MB", "--explain", "--json"]).stdout)
    assert given["execution"]["executor"] == "streamed" and given["execution"]["budget_source"] == "given"
    assert given["execution"]["memory_budget"] == 500 * 10**6


def test_explain_memory_mapped_file_streams(train):
    rep = json.loads(_invoke([train["npy"], "--explain", "--json"]).stdout)
    assert rep["execution"]["executor"] == "streamed" and "memory-mapped" in rep["execution"]["reasons"]["executor"]


def test_fit_report_carries_the_execution(train):
    rep = json.loads(_invoke([train["csv"], "--sketch-size", "20", "--json"]).stdout)
    assert rep["execution"]["executor"] == "in-memory" and rep["execution"]["sketch_size"] == 20
    text = _invoke([train["csv"], "--sketch-size", "20"]).stdout
    assert "execution  in-memory, numpy backend" in text


def test_explain_machine_loss(train):
    rep = json.loads(_invoke([train["csv"], "--loss", "huber", "--sketch-size", "20", "--explain", "--json"]).stdout)
    assert rep["execution"]["loss"] == "iterative" and rep["execution"]["keep_features"]


def test_default_sketch_follows_the_data_size(train, monkeypatch):
    rep = json.loads(_invoke([train["csv"], "--sketch-size", "20", "--json"]).stdout)
    assert rep["sketch"]["name"] == "psr" and "p-SR" in rep["data"]["default_sketch"]
    from skframe.compute import plan_rules

    monkeypatch.setattr(plan_rules, "NYSTROM_MIN_ROWS", 100)  # as if the file had more rows than the switch
    rep = json.loads(_invoke([train["csv"], "--sketch-size", "20", "--json"]).stdout)
    assert rep["sketch"]["name"] == "subsample" and "Nyström" in rep["data"]["default_sketch"]
    # sketch parameters are p-SR's: they keep p-SR; an explicit sketch is never replaced
    rep = json.loads(_invoke([train["csv"], "--sketch-size", "20", "--sketch-param", "p=0.05", "--json"]).stdout)
    assert rep["sketch"]["name"] == "psr"
    rep = json.loads(_invoke([train["csv"], "--sketch", "psg", "--sketch-size", "20", "--json"]).stdout)
    assert rep["sketch"]["name"] == "psg" and "default_sketch" not in rep["data"]
