"""``skframe fit`` ends every error of its classification, interval and plotting paths in one line.

Optional libraries are checked before any work (:func:`skframe.deps.check`); classification metrics are defined
whatever labels a test file holds (:func:`skframe.metrics.classifier_report`); infinite interval widths (too few
rows for the level) are reported, not formatted into a crash.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from typer.testing import CliRunner

from skframe.cli import app
from skframe.cli._options import FitOptions
from skframe.cli._outputs import fit_dependencies
from skframe.deps import check
from skframe.exceptions import DependencyError
from skframe.metrics import classifier_report
from skframe.uncertainty.state import max_finite_level

runner = CliRunner()
FAST = ["--kernel-param", "gamma=1", "--lam", "1e-3"]


def _csv(path, X, y, names):
    np.savetxt(path, np.column_stack([X, y]), delimiter=",", header=",".join(names), comments="", fmt="%.8g")
    return str(path)


def _one_line_error(res, *words):
    """The command failed with exit status 2 and one ``Error:`` line on stderr naming ``words``, no traceback."""
    assert res.exit_code == 2, (res.exit_code, res.output, res.exception)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), res.stderr
    for word in words:
        assert word in lines[0], (word, lines[0])
    assert "Traceback" not in res.output


@pytest.fixture
def classes(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 3))
    y = (X[:, 0] > 0).astype(int)
    Xt = rng.normal(size=(20, 3))
    yt = (Xt[:, 0] > 0).astype(int)
    yt[:3] = 2  # a class the training file never had
    single = y.copy()
    single[0] = 2  # a class of one row
    names = ["a", "b", "c", "y"]
    return {"train": _csv(tmp_path / "train.csv", X, y, names), "test": _csv(tmp_path / "test.csv", Xt, yt, names),
            "single": _csv(tmp_path / "single.csv", X, single, names)}


@pytest.fixture
def numbers(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 2))
    y = X.sum(axis=1) + 0.1 * rng.normal(size=60)
    return {"r60": _csv(tmp_path / "r60.csv", X, y, ["a", "b", "y"]),
            "r5": _csv(tmp_path / "r5.csv", X[:5], y[:5], ["a", "b", "y"])}


# -- optional libraries, checked before any work ---------------------------------------------------------------

def test_png_without_matplotlib_stops_before_the_fit(classes, tmp_path):
    model = tmp_path / "m.skf"
    code = ("import sys; sys.modules['matplotlib'] = None\nfrom skframe.cli import main\n"
            f"main(['fit', {classes['train']!r}, '--task', 'classification', '--png', {str(tmp_path / 'p.png')!r}, "
            f"'--model-out', {str(model)!r}])")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "SKFRAME_DEBUG": ""})
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "matplotlib is needed for --png" in lines[0] and "pip install" in lines[0]
    assert not model.exists() and proc.stdout == ""


@pytest.mark.parametrize("name,library,head", [("train.parquet", "pyarrow", b"PAR1"),
                                               ("train.csv.zst", "zstandard", b"\x28\xb5\x2f\xfd")])
def test_a_file_whose_reader_is_missing_stops_in_one_line(tmp_path, monkeypatch, name, library, head):
    path = tmp_path / name
    path.write_bytes(head + b"\0" * 64)
    monkeypatch.setitem(sys.modules, library, None)  # as if it were not installed
    res = runner.invoke(app, ["fit", str(path), "--model-out", str(tmp_path / "m.skf")])
    _one_line_error(res, f"{library} is needed for", name, "pip install")
    assert not (tmp_path / "m.skf").exists()


def test_fit_dependencies_name_what_each_option_needs():
    opts = FitOptions(png="p.png", model="dsokr", backend="cupy", dask_local=2, train="m.sdf")
    needed = [name for name, _ in fit_dependencies(opts)]
    assert needed == ["matplotlib", "rdkit", "torch", "cupy", "dask", "distributed"]
    assert fit_dependencies(FitOptions()) == []  # the embedded data, no plot


def test_check_names_the_library_and_its_install_command(monkeypatch):
    check([("numpy", "arrays")])
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(DependencyError, match=r"matplotlib is needed for --png but is not installed; install it "
                                              r"with pip install .*matplotlib"):
        check([("numpy", "arrays"), ("matplotlib", "--png")])
    monkeypatch.setenv("SKFRAME_DISABLE_NUMPY", "1")
    with pytest.raises(DependencyError, match="disabled by SKFRAME_DISABLE_NUMPY"):
        check([("numpy", "arrays")])


# -- classification: labels the training file never had, a class of one row ------------------------------------

def test_a_test_class_the_training_file_never_had_is_counted_not_a_crash(classes):
    res = runner.invoke(app, ["fit", classes["train"], "--test", classes["test"], "--task", "classification",
                              *FAST, "--json"])
    assert res.exit_code == 0, (res.output, res.exception)
    m = json.loads(res.stdout)["metrics"]
    assert m["unseen_classes"] == {"2": 3} and m["unseen_rows"] == 3
    assert m["accuracy"] <= 17 / 20  # the 3 rows of class 2 are errors
    assert np.sum(m["confusion_matrix"]) == 17 and 0 < m["roc_auc"] <= 1 and m["log_loss"] > 0
    text = runner.invoke(app, ["fit", classes["train"], "--test", classes["test"], "--task", "classification",
                               *FAST])
    assert text.exit_code == 0 and "unseen_classes     2=3" in text.stdout, text.output


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_a_class_of_one_row_with_the_default_holdout(classes, tmp_path, seed):
    png = tmp_path / "roc.png"
    res = runner.invoke(app, ["fit", classes["single"], "--task", "classification", *FAST, "--seed", str(seed),
                              "--png", str(png), "--json"])
    assert res.exit_code == 0, (res.output, res.exception)
    m = json.loads(res.stdout)["metrics"]
    assert 0 <= m["accuracy"] <= 1 and "roc_auc" in m and png.stat().st_size > 0


def test_classifier_report_computes_what_is_defined():
    P = np.array([[0.7, 0.2, 0.1], [0.2, 0.7, 0.1], [0.6, 0.3, 0.1], [0.1, 0.8, 0.1]])
    rep = classifier_report([0, 1, 0, 1], [0, 1, 0, 1], [0, 1, 2], P)  # two of the three classes present
    assert rep["roc_auc"] == 1.0 and rep["accuracy"] == 1.0 and "unseen_classes" not in rep
    rep = classifier_report(["x", "x"], ["a", "b"], ["a", "b"], P[:2, :2])  # no row of a known class
    assert rep["unseen_classes"] == {"x": 2} and rep["accuracy"] == 0.0 and "log_loss" not in rep
    assert rep["confusion_matrix"] == [[0, 0], [0, 0]] and rep["balanced_accuracy"] == 0.0


def test_an_interval_of_class_labels_is_refused_before_the_fit(classes):
    res = runner.invoke(app, ["fit", classes["train"], "--task", "classification", "--interval", "0.9", *FAST])
    _one_line_error(res, "--interval", "class labels")


# -- intervals: infinite widths ----------------------------------------------------------------------------------

def test_an_interval_level_too_high_for_the_rows_reports_infinite_widths(numbers, tmp_path):
    model = tmp_path / "m.skf"
    res = runner.invoke(app, ["fit", numbers["r60"], "--interval", "0.9999999999", "--model-out", str(model),
                              *FAST])
    assert res.exit_code == 0, (res.output, res.exception)
    line = next(s for s in res.stdout.splitlines() if s.startswith("interval"))
    assert "mean width inf" in line and "up to --interval 0.9836" in line, line
    assert model.exists()


@pytest.mark.parametrize("method", ["cv+", "split", "jackknife+", "cqr", "posterior"])
def test_any_interval_method_on_five_rows(numbers, method):
    res = runner.invoke(app, ["fit", numbers["r5"], "--interval", "0.9", "--interval-method", method, *FAST,
                              "--json"])
    assert res.exit_code == 0, (res.output, res.exception)
    iv = json.loads(res.stdout)["interval"]
    if method == "posterior":
        assert iv["mean_width"] > 0 and "infinite_rows" not in iv
    else:  # 5 rows (1 to 4 calibrating) cannot give finite 90% bounds
        assert iv["mean_width"] is None and iv["infinite_rows"] == 5 and iv["max_finite_level"] < 0.9
    text = runner.invoke(app, ["fit", numbers["r5"], "--interval", "0.9", "--interval-method", method, *FAST])
    assert text.exit_code == 0 and "Traceback" not in text.output, (text.output, text.exception)


def test_max_finite_level():
    scores = np.zeros((19, 1))
    assert max_finite_level({"method": "split", "scores": scores}) == 0.95
    assert max_finite_level({"method": "cqr", "scores": scores, "cqr_score": "asymmetric"}) == 0.9
    assert max_finite_level({"method": "cv+", "residuals": np.zeros((4, 1))}) == 0.8
    assert max_finite_level({"method": "posterior"}) is None
