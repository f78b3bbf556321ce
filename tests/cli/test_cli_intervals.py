"""``skframe fit --interval`` and ``skframe predict --interval``: coverage report, saved intervals, bounds columns."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from skframe.cli import app
from skframe.persistence import load_bundle
from skframe.uncertainty import interval_bounds

runner = CliRunner()


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(400, 2))
    Y = np.c_[np.sin(3 * X[:, 0]), X[:, 1]] + (0.1 + 0.3 * np.abs(X[:, 1:2])) * rng.normal(size=(400, 2))
    train, test, new = tmp_path / "train.csv", tmp_path / "test.csv", tmp_path / "new.csv"
    np.savetxt(train, np.c_[X[:250], Y[:250]], delimiter=",", header="a,b,y1,y2", comments="")
    np.savetxt(test, np.c_[X[250:], Y[250:]], delimiter=",", header="a,b,y1,y2", comments="")
    np.savetxt(new, X[250:260], delimiter=",", header="a,b", comments="")
    return str(train), str(test), str(new), tmp_path


def _ok(args):
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return result


@pytest.mark.parametrize("method", ["cv+", "split", "cqr", "posterior"])
@pytest.mark.filterwarnings("ignore:X does not have valid feature names")
def test_fit_reports_coverage_and_predict_writes_bounds(files, method):
    train, test, new, tmp = files
    model = str(tmp / f"m{method}.skf")
    args = ["fit", train, "--test", test, "--targets", "2", "--sketch-size", "30", "--kernel-param", "gamma=2",
            "--interval", "0.9", "--interval-method", method, "--model-out", model, "--json"]
    rep = json.loads(_ok(args).stdout)["interval"]
    assert rep["method"] == method and rep["evaluated_on"] == "test" and len(rep["per_target"]) == 2
    assert 0.75 <= rep["coverage"] <= 1.0 and rep["mean_width"] > 0
    out = _ok(["predict", model, new, "--interval", "0.8"]).stdout.splitlines()
    assert out[0] == "y1,y1_lower,y1_upper,y2,y2_lower,y2_upper"
    rows = np.array([[float(v) for v in line.split(",")] for line in out[1:]])
    assert rows.shape == (10, 6)
    # the columns are the saved model's predictions and the bounds of its saved intervals at 0.8
    est, extra = load_bundle(model)
    X = np.loadtxt(new, delimiter=",", skiprows=1)
    X = (X - extra["scaler"]["mean"]) / extra["scaler"]["scale"] if extra["scaler"] else X
    lower, upper = interval_bounds(extra["interval"], est, X, 0.8)
    np.testing.assert_allclose(rows[:, 1::3], lower, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(rows[:, 2::3], upper, rtol=1e-10, atol=1e-12)
    assert np.all(rows[:, 1::3] < rows[:, 2::3])
    # a narrower level gives narrower intervals
    wide = _ok(["predict", model, new, "--interval", "0.95", "--no-header"]).stdout.splitlines()
    wide = np.array([[float(v) for v in line.split(",")] for line in wide])
    assert np.all(wide[:, 2::3] - wide[:, 1::3] >= rows[:, 2::3] - rows[:, 1::3] - 1e-12)


def test_summary_and_png(files):
    pytest.importorskip("matplotlib")
    train, test, _, tmp = files
    png = tmp / "iv.png"
    out = _ok(["fit", train, "--test", test, "--targets", "2", "--sketch-size", "20", "--interval", "0.9",
               "--png", str(png)]).stdout
    assert "interval   0.9 cv+: coverage" in out and png.stat().st_size > 1000


@pytest.mark.parametrize("args, match", [
    (["--interval", "1.5"], "--interval 1.5"),
    (["--interval", "0.9", "--interval-method", "bootstrap"], "--interval-method 'bootstrap'"),
    (["--interval-method", "cqr"], "needs --interval"),
    (["--interval", "0.9", "--interval-method", "posterior", "--loss", "huber"], "posterior needs the square"),
    (["--interval", "0.9", "--interval-method", "cqr", "--cqr-score", "both"], "--cqr-score 'both'"),
    (["--interval", "0.9", "--cqr-score", "asymmetric"], "applies to CQR intervals only"),
])
def test_bad_interval_options_are_one_line_errors(files, args, match):
    train, _, _, _ = files
    result = runner.invoke(app, ["fit", train, "--targets", "2", "--sketch-size", "10", *args])
    assert result.exit_code != 0 and match in result.output and "Traceback" not in result.output


def test_predict_interval_needs_a_model_with_intervals(files):
    train, _, new, tmp = files
    _ok(["fit", train, "--targets", "2", "--sketch-size", "10", "--model-out", str(tmp / "plain.skf")])
    result = runner.invoke(app, ["predict", str(tmp / "plain.skf"), new, "--interval", "0.9"])
    assert result.exit_code != 0 and "holds no prediction intervals" in result.output
    assert "Traceback" not in result.output


@pytest.mark.filterwarnings("ignore:X does not have valid feature names")
def test_cqr_score_is_kept_in_the_model_file(files):
    train, test, new, tmp = files
    model = str(tmp / "asym.skf")
    rep = json.loads(_ok(["fit", train, "--test", test, "--targets", "2", "--sketch-size", "20", "--interval",
                          "0.9", "--interval-method", "cqr", "--cqr-score", "asymmetric", "--model-out", model,
                          "--json"]).stdout)["interval"]
    assert rep["cqr_score"] == "asymmetric" and 0.75 <= rep["coverage"] <= 1.0
    est, extra = load_bundle(model)
    state = extra["interval"]
    assert state["cqr_score"] == "asymmetric" and np.asarray(state["scores"]).shape[1:] == (2, 2)
    out = _ok(["predict", model, new, "--interval", "0.8", "--no-header"]).stdout.splitlines()
    rows = np.array([[float(v) for v in line.split(",")] for line in out])
    X = np.loadtxt(new, delimiter=",", skiprows=1)
    X = (X - extra["scaler"]["mean"]) / extra["scaler"]["scale"] if extra["scaler"] else X
    lower, upper = interval_bounds(state, est, X, 0.8)
    np.testing.assert_allclose(rows[:, 1::3], lower, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(rows[:, 2::3], upper, rtol=1e-10, atol=1e-12)
    symmetric = dict(state, cqr_score="symmetric", scores=np.asarray(state["scores"]).max(axis=1))
    assert not np.allclose(interval_bounds(symmetric, est, X, 0.8)[0], lower)  # the score changes the bounds
