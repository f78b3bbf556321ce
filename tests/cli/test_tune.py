"""``skframe tune``: the grid from the options, the table, JSON, PNG, the saved best model, one-line errors."""

import json
import subprocess
import sys

import numpy as np
import pytest
from sklearn.model_selection import KFold
from typer.testing import CliRunner

from skframe.cli import app
from skframe.cli.tune import _Progress, parse_grid_values, parse_lam_grid
from skframe.exceptions import InvalidParameterError

runner = CliRunner()
HEADER = "x0,x1,x2,x3,y"


def _friedman(rng, n):
    X = rng.uniform(size=(n, 4))
    y = 10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2 + 10 * X[:, 3]
    return X, y + rng.normal(scale=0.5, size=n)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    where = tmp_path_factory.mktemp("tune")
    rng = np.random.default_rng(0)
    X, y = _friedman(rng, 120)
    Xt, yt = _friedman(rng, 60)
    np.savetxt(where / "train.csv", np.column_stack([X, y]), delimiter=",", header=HEADER, comments="", fmt="%.8f")
    np.savetxt(where / "test.csv", np.column_stack([Xt, yt]), delimiter=",", header=HEADER, comments="", fmt="%.8f")
    np.savetxt(where / "new.csv", Xt[:7], delimiter=",", header="x0,x1,x2,x3", comments="", fmt="%.8f")
    # the values as written (8 decimals), for the Python side
    X, y = np.loadtxt(where / "train.csv", delimiter=",", skiprows=1)[:, :4], \
        np.loadtxt(where / "train.csv", delimiter=",", skiprows=1)[:, 4]
    return where, X, y


SMALL = ["--sketch", "psr", "--sketch-size", "30", "--scale", "none", "--cv", "3"]


def _tune(where, *args):
    return runner.invoke(app, ["tune", str(where / "train.csv"), *SMALL, *args])


def _json(result):
    assert result.exit_code == 0, result.output
    return json.loads(result.output[result.output.index("{"):])


# ----------------------------------------------------------------------------- grids from the options
def test_log_range_is_inclusive_and_log_spaced():
    values = parse_lam_grid("1e-8:1e-2:7")
    assert np.allclose(values, np.logspace(-8, -2, 7), rtol=1e-12)
    assert values[0] == 1e-8 and values[-1] == 1e-2  # the ends exactly as written
    assert parse_lam_grid("1e-3:1:1") == [1e-3]
    assert parse_lam_grid("0.5, 1e-3:1e-1:3") == pytest.approx([0.5, 1e-3, 1e-2, 1e-1])


def test_kernel_values_lists_and_ranges():
    assert parse_grid_values([0.1, 1.0], "--kernel-param gamma") == [0.1, 1.0]
    assert parse_grid_values("1:100:3", "--kernel-param gamma") == pytest.approx([1.0, 10.0, 100.0])
    assert parse_grid_values([2, "1:100:3"], "--kernel-param gamma") == pytest.approx([2, 1.0, 10.0, 100.0])


@pytest.mark.parametrize("text, words", [
    ("1e-8:1e-2", "START:STOP:COUNT"),
    ("1e-8:1e-2:x", "COUNT"),
    ("1e-8:1e-2:0", "COUNT"),
    ("0:1e-2:3", "> 0"),
    ("0,1e-3", "must be > 0"),
    ("-1e-3", "must be > 0"),
    ("abc", "not a number"),
])
def test_bad_lam_grids_name_the_fix(text, words):
    with pytest.raises(InvalidParameterError, match="--lam") as err:
        parse_lam_grid(text)
    assert words in str(err.value)


def test_progress_advances_by_the_blocks_done():
    steps = []
    progress = _Progress(steps.append)
    for done in (1, 1, 3, 4):
        progress(done, 4)
    assert steps == [1, 2, 1]
    _Progress(None)(1, 4)  # no terminal: nothing to advance


# ----------------------------------------------------------------------------- the command
def test_table_marks_the_best_point(data):
    where = data[0]
    res = _tune(where, "--kernel-param", "gamma=0.3,3", "--lam", "1e-6:1e-2:3")
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    head = next(i for i, line in enumerate(lines) if "mean ± std" in line)
    assert "gamma" in lines[head] and "lam" in lines[head]
    rows = lines[head + 1: head + 7]
    assert len(rows) == 6 and sum(r.startswith(" *") for r in rows) == 1
    assert all("±" in r for r in rows)
    best = next(line for line in lines if line.startswith("best"))
    assert "gamma=" in best and "lam=" in best
    assert "metrics" not in res.output  # no --test: no test scores


def test_json_report_with_test_scores(data):
    where = data[0]
    report = _json(_tune(where, "--kernel-param", "gamma=0.3,3", "--lam", "1e-6,1e-3", "--test",
                         str(where / "test.csv"), "--json"))
    assert report["grid"]["columns"] == ["gamma", "lam"]
    assert report["grid"]["n_points"] == 4 and report["grid"]["n_blocks"] == 2
    assert report["grid"]["from_default"] == []
    assert len(report["scores"]["mean"]) == 4 and np.shape(report["scores"]["splits"]) == (4, 3)
    best = report["best"]
    assert best["score"] == pytest.approx(max(report["scores"]["mean"]))
    assert report["scores"]["rank"][best["index"]] == 1
    assert report["evaluated_on"] == "test" and report["metrics"]["r2"] > 0.5
    assert report["model"]["params"]["lam"] == best["params"]["lam"]
    assert report["timings"]["search_seconds"] >= 0 and report["cv"]["n_splits"] == 3


def test_default_grid_is_used_and_reported(data):
    where = data[0]
    report = _json(_tune(where, "--json"))
    assert set(report["grid"]["from_default"]) == {"kernel_params", "lam"}
    gammas = sorted({p["gamma"] for p in report["grid"]["points"]})
    assert len(gammas) == 5 and gammas[-1] / gammas[0] == pytest.approx(100)
    assert sorted({p["lam"] for p in report["grid"]["points"]}) == pytest.approx(np.logspace(-8, -2, 7))
    text = _tune(where, "--lam", "1e-4").output
    assert "defaults   kernel_params from the default grid" in text


def test_fixed_kernel_parameter_searches_lam_only(data):
    report = _json(_tune(data[0], "--kernel-param", "gamma=1", "--lam", "1e-6,1e-4,1e-2", "--json"))
    assert report["grid"]["columns"] == ["lam"] and report["grid"]["from_default"] == []
    assert report["model"]["params"]["kernel_params"] == {"gamma": 1}


def test_a_data_sets_suggested_gamma_is_searched_around():
    """The embedded data suggest gamma = 0.1; that is no user choice, so tune still searches gamma."""
    from types import SimpleNamespace

    from skframe.cli.tune import build_grid
    from skframe.models import SketchedKernelRidge

    model = SketchedKernelRidge(kernel_params={"gamma": 0.1})
    opts = SimpleNamespace(kernel_axes={}, lam_grid=[1e-3], gave_kernel_params=lambda: True,
                           **{name: None for name in ("kernel_params", "input_kernel_params",
                                                      "output_kernel_params")})
    proposed = {"kernel_params": [{"gamma": 0.5}, {"gamma": 5.0}], "lam": [1e-6]}
    grid, _, defaulted = build_grid(opts, model, lambda: proposed, gave_kernel=False)
    assert grid["kernel_params"] == [{"gamma": 0.5}, {"gamma": 5.0}] and defaulted == ["kernel_params"]
    grid, _, defaulted = build_grid(opts, model, lambda: proposed, gave_kernel=True)
    assert "kernel_params" not in grid and defaulted == []


def test_best_parameters_equal_the_python_search(data):
    """The command and KernelSearchCV called from Python on the same data agree (same splits: shuffled from the
    seed, 0 by default; same grid)."""
    from skframe.model_selection import KernelSearchCV
    from skframe.models import SketchedKernelRidge

    where, X, y = data
    report = _json(_tune(where, "--kernel-param", "gamma=0.1:10:3", "--lam", "1e-7:1e-1:4", "--json"))
    est = SketchedKernelRidge("gaussian", sketch="psr", sketch_size=30, lam=1e-3, random_state=0)
    grid = {"kernel_params": [{"gamma": g} for g in (0.1, 1.0, 10.0)], "lam": list(np.logspace(-7, -1, 4))}
    search = KernelSearchCV(est, grid, cv=KFold(3, shuffle=True, random_state=0)).fit(X, y)
    assert report["best"]["params"]["gamma"] == pytest.approx(search.best_params_["kernel_params"]["gamma"])
    assert report["best"]["params"]["lam"] == pytest.approx(search.best_params_["lam"])
    np.testing.assert_allclose(report["scores"]["mean"], search.cv_results_["mean_test_score"], rtol=1e-10)


def test_png_is_written(data, tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "cv.png"
    report = _json(_tune(data[0], "--kernel-param", "gamma=0.3,3", "--lam", "1e-6,1e-3", "--png", str(png),
                         "--json"))
    assert report["png"] == str(png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.filterwarnings("ignore:X does not have valid feature names")
def test_saved_best_model_loads_and_predicts(data, tmp_path):
    from skframe.persistence import load

    where = data[0]
    out = tmp_path / "best.skf"
    report = _json(_tune(where, "--kernel-param", "gamma=0.3,3", "--lam", "1e-6,1e-3", "--model-out", str(out),
                         "--json"))
    model = load(out)
    assert model.get_params()["lam"] == report["best"]["params"]["lam"]
    res = runner.invoke(app, ["predict", str(out), str(where / "new.csv")])
    assert res.exit_code == 0, res.output
    rows = res.output.strip().splitlines()[1:]  # under the header row
    new = np.loadtxt(where / "new.csv", delimiter=",", skiprows=1)
    np.testing.assert_allclose([float(r) for r in rows], model.predict(new), rtol=1e-12)


def test_shared_sketch_mode(data):
    report = _json(_tune(data[0], "--kernel-param", "gamma=1", "--lam", "1e-6,1e-3", "--sketch-sharing", "shared",
                         "--json"))
    assert report["cv"]["sketch_sharing"] == "shared" and np.isfinite(report["best"]["score"])


def test_joint_quantile_task(data):
    report = _json(_tune(data[0], "--quantiles", "0.1,0.5,0.9", "--kernel-param", "gamma=1", "--lam", "1e-4,1e-2",
                         "--json"))
    assert report["task"] == "machine" and report["model"]["class"] == "JointQuantileRegressor"
    assert report["grid"]["n_points"] == 2 and np.isfinite(report["best"]["score"])


def test_structured_task_searches_the_output_kernel(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(90, 4))
    Y = (X @ rng.normal(size=(4, 5)) + rng.normal(scale=0.5, size=(90, 5)) > 0.3).astype(int)
    np.savetxt(tmp_path / "ml.csv", np.column_stack([X, Y]), delimiter=",", fmt="%.6f")
    res = runner.invoke(app, ["tune", str(tmp_path / "ml.csv"), "--targets", "5", "--cv", "3", "--kernel-param",
                              "gamma=0.1,1", "--output-kernel-param", "gamma=0.5,2", "--lam", "1e-3", "--json"])
    report = _json(res)
    assert report["task"] == "structured"
    assert report["grid"]["columns"] == ["gamma", "output_gamma", "lam"] and report["grid"]["n_points"] == 4


# ----------------------------------------------------------------------------- errors: one line each
@pytest.mark.parametrize("args, words", [
    (["--lam", "1e-8:1e-2"], "START:STOP:COUNT"),
    (["--lam", "0,1e-3"], "--lam 0 must be > 0"),
    (["--kernel-param", "gamma=1:10"], "START:STOP:COUNT"),
    (["--kernel-param", "gamma=-1:1:3"], "START and STOP > 0"),
    (["--kernel-param", "width=1,2"], "accepted parameters: gamma"),
    (["--kernel-param", "gamma=-2,1"], "gamma=-2 is invalid"),
    (["--cv", "1"], "--cv 1 must be >= 2"),
    (["--sketch-sharing", "some"], "--sketch-sharing 'some'"),
    (["--output-kernel-param", "gamma=1,2"], "does not apply to SketchedKernelRidge"),
])
def test_errors_are_one_line(data, args, words):
    res = _tune(data[0], *args)
    assert res.exit_code == 2, res.output
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: ") and words in lines[0], res.output
    assert "Traceback" not in res.output


def test_subprocess_run(data):
    where = data[0]
    res = subprocess.run([sys.executable, "-m", "skframe", "tune", str(where / "train.csv"), *SMALL,
                          "--kernel-param", "gamma=1", "--lam", "1e-5:1e-3:3", "--json"],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    assert report["grid"]["n_points"] == 3 and report["model"]["params"]["kernel_params"] == {"gamma": 1}
