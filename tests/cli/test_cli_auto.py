"""``skframe fit`` chooses λ (and, asked, γ) from the data by default and says so in one line; ``--lam`` fixes it."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from skframe.cli import app

runner = CliRunner()


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] ** 2 + 0.1 * rng.normal(size=200)
    train, test = tmp_path / "train.csv", tmp_path / "test.csv"
    np.savetxt(train, np.c_[X[:150], y[:150]], delimiter=",")
    np.savetxt(test, np.c_[X[150:], y[150:]], delimiter=",")
    return str(train), str(test)


def _fit(args):
    result = runner.invoke(app, ["fit", *args])
    assert result.exit_code == 0, result.output
    return result


def test_default_lam_is_chosen_by_kfold_cv_and_reported(files):
    train, test = files
    out = _fit([train, "--test", test, "--sketch-size", "40"]).output
    lines = [line for line in out.splitlines() if line.startswith("lam ")]
    assert len(lines) == 1 and "chosen: least held-out mean squared error of 5 shuffled folds" in lines[0], out
    assert "extrapolation    count=" in out  # predictions outside the widened training range (0 or more)
    rep = json.loads(_fit([train, "--test", test, "--sketch-size", "40", "--json"]).stdout)
    chosen = rep["chosen"]["lam"]
    assert rep["model"]["params"]["lam"] == "auto" and chosen["criterion"] == "5-fold cv" and chosen["edge"] is None
    assert len(chosen["curve"]) == len(chosen["grid"]) and rep["training"] is None
    assert rep["chosen"]["gamma"]["criterion"] == "5-fold cv"  # gamma="auto" is the command's default too
    flags = rep["metrics"]["extrapolation"]
    assert flags["count"] == len(flags["rows"]) and "mask" not in flags


def test_predictions_far_outside_the_training_range_are_listed(files, tmp_path):
    train, test = files
    model = str(tmp_path / "m.skf")
    _fit([train, "--holdout", "0", "--kernel-param", "gamma=0.05", "--lam", "1e-10", "--sketch-size", "40",
          "--model-out", model])
    far = tmp_path / "far.csv"
    np.savetxt(far, np.array([[0.0, 0.0, 0.0], [0.0, 5.0, 0.0]]), delimiter=",")  # 0.5 x1^2: beyond the range
    result = runner.invoke(app, ["predict", model, str(far)])
    assert result.exit_code == 0, result.output
    assert "note: 1 prediction(s) outside the training targets' range" in result.stderr and "rows 2 (" in result.stderr
    clipped = runner.invoke(app, ["predict", model, str(far), "--clip-range"])
    values = [float(v) for v in clipped.stdout.splitlines()[1:]]
    y = np.loadtxt(train, delimiter=",")[:, -1]
    assert max(values) <= y.max() + 1e-12 and "clipped to the training range" in clipped.stderr


def test_lam_option_fixes_it(files):
    train, test = files
    fixed = [train, "--test", test, "--sketch-size", "40", "--lam", "1e-3", "--kernel-param", "gamma=0.5"]
    rep = json.loads(_fit([*fixed, "--json"]).stdout)
    assert rep["model"]["params"]["lam"] == 1e-3 and rep["chosen"] is None
    assert rep["model"]["params"]["kernel_params"] == {"gamma": 0.5}
    out = _fit(fixed).output
    assert not any(line.startswith(("lam ", "gamma ")) for line in out.splitlines())
    rep = json.loads(_fit([train, "--test", test, "--sketch-size", "40", "--lam", "1e-3", "--json"]).stdout)
    assert set(rep["chosen"]) == {"gamma"}  # gamma chosen by default, lam fixed


def test_auto_gamma_from_the_command_line(files):
    train, test = files
    out = _fit([train, "--test", test, "--sketch-size", "40", "--kernel-param", "gamma=auto"]).output
    assert sum(line.startswith("gamma ") and "median heuristic" in line for line in out.splitlines()) == 1, out


def test_lipschitz_loss_lam_by_folds(files):
    train, test = files
    rep = json.loads(_fit([train, "--test", test, "--sketch-size", "40", "--loss", "huber", "--json"]).stdout)
    assert rep["chosen"]["lam"]["criterion"] == "3-fold held-out loss"


def test_gaussian_ard_learns_its_length_scales_by_default(files):
    train, test = files
    out = _fit([train, "--test", test, "--sketch-size", "40", "--kernel", "gaussian-ard"]).output
    lines = [line for line in out.splitlines() if line.startswith("relevance ")]
    assert len(lines) == 1 and ", x2=0.0" in lines[0].split("(")[0], out  # x2 is irrelevant: the least relevance
