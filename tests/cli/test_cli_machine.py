"""``skframe fit`` with Lipschitz losses, iterative solvers, output matrices and quantiles."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from skframe.cli import app

runner = CliRunner()


def _write(path, X, Y):
    np.savetxt(path, np.column_stack([X, Y]), delimiter=",", fmt="%.10g")
    return str(path)


@pytest.fixture
def regression_files(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(160, 3))
    y = np.sin(3 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.normal(size=160)
    return _write(tmp_path / "train.csv", X[:120], y[:120]), _write(tmp_path / "test.csv", X[120:], y[120:])


@pytest.fixture
def multi_files(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, size=(160, 3))
    Y = np.column_stack([np.sin(3 * X[:, 0]), X[:, 1] ** 2, X[:, 0] * X[:, 2]]) + 0.05 * rng.normal(size=(160, 3))
    np.savetxt(tmp_path / "adj.csv", np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]]), delimiter=",")
    return (_write(tmp_path / "mtrain.csv", X[:120], Y[:120]), _write(tmp_path / "mtest.csv", X[120:], Y[120:]),
            str(tmp_path / "adj.csv"))


@pytest.fixture
def classification_files(tmp_path):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(160, 2))
    y = np.where(X[:, 0] ** 2 + X[:, 1] ** 2 < 1.2, 1, -1)
    return _write(tmp_path / "ctrain.csv", X[:120], y[:120]), _write(tmp_path / "ctest.csv", X[120:], y[120:])


BASE = ["--kernel-param", "gamma=1", "--sketch", "psr", "--sketch-size", "30", "--json"]


def _fit(args):
    result = runner.invoke(app, ["fit", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.mark.parametrize(
    "extra",
    [
        ["--loss", "huber", "--loss-param", "kappa=1"],
        ["--loss", "epsilon-svr", "--loss-param", "epsilon=0.05", "--solver", "adam", "--epochs", "20",
         "--batch-size", "32"],
        ["--loss", "epsilon-ridge", "--loss-param", "epsilon=0.05", "--solver", "lbfgs", "--tol", "1e-8"],
        ["--loss", "pinball", "--loss-param", "quantiles=0.5", "--solver", "adam", "--epochs", "30",
         "--learning-rate", "0.02", "--early-stopping", "--validation-fraction", "0.2"],
        ["--loss", "square", "--solver", "adam", "--epochs", "10"],
    ],
    ids=["huber", "epsilon-svr", "epsilon-ridge", "pinball", "square-adam"],
)
def test_fit_losses(regression_files, extra):
    train, test = regression_files
    rep = _fit([train, "--test", test, *BASE, *extra])
    assert rep["model"]["class"] == "SketchedKernelMachine"
    m = rep["metrics"]
    for key in ("mse", "mae", "r2"):
        assert key in m
    assert m["r2"] > 0.5
    assert isinstance(m["stop_reason"], str)


def test_fit_hinge_reports_accuracy(classification_files):
    train, test = classification_files
    rep = _fit([train, "--test", test, *BASE, "--loss", "hinge", "--lam", "1e-4", "--epochs", "50"])
    assert rep["model"]["class"] == "SketchedKernelClassifier"
    assert rep["metrics"]["accuracy"] > 0.8 and "mse" in rep["metrics"]


def test_fit_quantiles(regression_files):
    train, test = regression_files
    rep = _fit([train, "--test", test, *BASE, "--quantiles", "0.9,0.1,0.5", "--output-matrix-param", "gamma=2",
                "--epochs", "50"])
    m = rep["metrics"]
    assert rep["model"]["class"] == "JointQuantileRegressor"
    assert m["quantiles"] == [0.1, 0.5, 0.9] and m["pinball"] > 0 and m["crossing"] >= 0 and "mse" in m


@pytest.mark.parametrize("om", [["--output-matrix", "identity"], ["--output-matrix", "covariance"],
                                ["--output-matrix", "graph", "--output-matrix-param", "mu=0.5"]])
def test_fit_output_matrices_multi_output(multi_files, om):
    train, test, adj = multi_files
    om = list(om) + (["--output-matrix-param", f"adjacency={adj}"] if "graph" in om else [])
    rep = _fit([train, "--test", test, "--targets", "3", *BASE, *om])
    m = rep["metrics"]
    assert rep["n_targets"] == 3 and len(m["rrmse"]) == 3 and m["arrmse"] < 0.6


def test_fit_default_data_huber_human_output():
    result = runner.invoke(app, ["fit", "--loss", "huber", "--loss-param", "kappa=100", "--sketch-size", "30"])
    assert result.exit_code == 0, result.output
    assert "SketchedKernelMachine" in result.output


@pytest.mark.parametrize(
    "extra,needle",
    [
        (["--loss", "hubber"], "unknown loss"),
        (["--loss", "huber", "--loss-param", "kappa=-1"], "kappa"),
        (["--loss", "huber", "--solver", "closed-form"], "square loss"),
        (["--loss", "hinge", "--solver", "lbfgs"], "smooth"),
        (["--solver", "simplex"], "unknown solver"),
        (["--loss", "epsilon-svr", "--solver", "adam", "--epochs", "0"], "epochs"),
        (["--loss", "epsilon-svr", "--solver", "adam", "--batch-size", "0"], "--batch-size 0"),
        (["--loss", "epsilon-svr", "--solver", "adam", "--learning-rate", "-1"], "--learning-rate -1"),
        (["--loss", "huber", "--solver", "lbfgs", "--tol", "-1"], "tol"),
        (["--loss", "huber", "--early-stopping"], "early-stopping"),
        (["--loss", "epsilon-svr", "--solver", "adam", "--early-stopping", "--validation-fraction", "1.5"],
         "validation_fraction"),
        (["--quantiles", "0.1,1.2"], "quantile"),
        (["--quantiles", "a,b"], "quantiles"),
        (["--output-matrix", "bogus"], "unknown output matrix"),
        (["--output-matrix", "graph"], "adjacency"),
        (["--output-matrix", "quantile", "--output-matrix-param", "gamma=1"], "quantile"),
    ],
)
def test_bad_inputs_fail_with_one_line(regression_files, extra, needle):
    train, test = regression_files
    result = runner.invoke(app, ["fit", train, "--test", test, "--sketch-size", "20", *extra])
    assert result.exit_code != 0
    out = result.output.strip()
    assert needle.lower() in out.lower(), out
    assert len(out.splitlines()) == 1, out
