"""``skframe fit --lam a,b,c``: a warm-started regularisation path with per-λ metrics; the last λ is kept."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from skframe.cli import app

runner = CliRunner()


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(150, 2))
    y = np.sin(4 * X[:, 0]) + 0.2 * rng.standard_t(2, size=150)
    train, test = tmp_path / "train.csv", tmp_path / "test.csv"
    np.savetxt(train, np.c_[X[:100], y[:100]], delimiter=",")
    np.savetxt(test, np.c_[X[100:], y[100:]], delimiter=",")
    return str(train), str(test), tmp_path


def _fit(args):
    result = runner.invoke(app, ["fit", *args])
    assert result.exit_code == 0, result.output
    return result


@pytest.mark.parametrize("loss", ["square", "huber", "epsilon-svr"])
def test_lam_path_reports_each_value_and_keeps_the_last(files, loss):
    train, test, tmp = files
    common = [train, "--test", test, "--loss", loss, "--sketch-size", "20", "--kernel-param", "gamma=3"]
    if loss != "square":
        common += ["--solver-param", "tol=1e-7", "--solver-param", "max_epochs=100000"]
    rep = json.loads(_fit([*common, "--lam", "1e-1,1e-2,1e-3", "--json", "--model-out", str(tmp / "m.npz")]).stdout)
    assert [row["lam"] for row in rep["lam_path"]] == [1e-1, 1e-2, 1e-3] and rep["lam_kept"] == 1e-3
    for row in rep["lam_path"]:
        assert "mse" in row["metrics"] and (row["objective"] is not None or loss == "square")
    assert rep["lam_path"][0]["metrics"]["mse"] != rep["lam_path"][-1]["metrics"]["mse"]
    # the kept model is the last λ: same metrics as a fit at that λ alone (to the solver's tolerance)
    single = json.loads(_fit([*common, "--lam", "1e-3", "--json"]).stdout)
    assert "lam_path" not in single and single["model"]["params"]["lam"] == 1e-3
    assert rep["metrics"]["mse"] == pytest.approx(single["metrics"]["mse"], rel=1e-3)
    assert rep["lam_path"][-1]["metrics"]["mse"] == pytest.approx(rep["metrics"]["mse"], rel=1e-12)
    assert "lam path" in _fit([*common, "--lam", "1e-1,1e-2"]).stdout


@pytest.mark.parametrize("value,match", [("1e-2,-1", "every lam must be > 0"), ("1e-2,abc", "comma-separated"),
                                         (",", "empty")])
def test_bad_lam_path_is_one_line_error(files, value, match):
    train, _, _ = files
    result = runner.invoke(app, ["fit", train, "--sketch-size", "10", "--lam", value])
    assert result.exit_code != 0 and match in result.output and "Traceback" not in result.output
