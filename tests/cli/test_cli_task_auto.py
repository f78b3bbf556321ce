"""``skframe fit --task auto``: which targets are class labels, which are numbers, and the report saying why.

Generated CSV files only: a year column (a many-valued integer target), 0/1 labels, text labels and a few-valued
integer column on few rows.
"""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from skframe.automatic.classification import AUTO_MAX_CLASSES, class_limit, looks_like_classes, numbers_reason
from skframe.cli import app

runner = CliRunner()
BASE = ["--kernel-param", "gamma=1", "--sketch-size", "30", "--lam", "1e-3"]


def _csv(path, X, y, fmt="%d"):
    lines = ["a,b,target"] + [f"{x[0]:.6f},{x[1]:.6f}," + (fmt % v if fmt else str(v)) for x, v in zip(X, y)]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _X(n, seed=0):
    return np.random.default_rng(seed).uniform(size=(n, 2))


def _fit(path, *extra):
    res = runner.invoke(app, ["fit", path, *BASE, *extra, "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def test_a_year_column_is_fitted_as_numbers_and_the_report_says_why(tmp_path):
    X = _X(500)
    year = np.tile(np.arange(1950, 2021), 8)[:500]  # 71 distinct whole numbers, each seen 7 or 8 times
    path = _csv(tmp_path / "year.csv", X, year)
    out = _fit(path)
    assert out["task"] == "regression" and out["model"]["class"] == "SketchedKernelRidge"
    assert "r2" in out["metrics"] and "accuracy" not in out["metrics"]
    reason = out["data"]["task_reason"]
    assert reason.startswith("auto: 71 distinct whole numbers in 500 rows") and "so numbers" in reason
    assert "--task classification" in reason
    text = runner.invoke(app, ["fit", path, *BASE])
    assert text.exit_code == 0, text.output
    assert any(line.startswith("task       regression (auto: 71 distinct") for line in text.output.splitlines())


def test_zero_one_labels_are_classes(tmp_path):
    X = _X(120)
    path = _csv(tmp_path / "binary.csv", X, (X[:, 0] > 0.5).astype(int))
    out = _fit(path)
    assert out["model"]["class"] == "SketchedKernelClassifier" and "accuracy" in out["metrics"]
    assert out["data"]["task_reason"].startswith("auto: 2 classes")


def test_text_labels_are_classes(tmp_path):
    X = _X(120)
    path = _csv(tmp_path / "text.csv", X, np.where(X[:, 1] > 0.5, "high", "low"), fmt=None)
    out = _fit(path)
    assert out["model"]["class"] == "SketchedKernelClassifier" and "accuracy" in out["metrics"]
    assert out["data"]["task_reason"].startswith("auto: 2 classes") and "no number in it" in out["data"]["task_reason"]


def test_few_values_on_few_rows_are_numbers_unless_task_classification_says(tmp_path):
    X = _X(60)
    y = np.minimum((X[:, 0] * 5).astype(int), 4)  # 5 distinct integers in 60 rows: more than one per 20 rows
    path = _csv(tmp_path / "grades.csv", X, y)
    auto = _fit(path)
    assert auto["task"] == "regression"
    assert auto["data"]["task_reason"].startswith("auto: 5 distinct whole numbers in 60 rows (class labels: at most 3")
    forced = _fit(path, "--task", "classification")
    assert forced["model"]["class"] == "SketchedKernelClassifier"
    assert forced["data"]["task_reason"].startswith("classification: 5 classes")
    assert np.asarray(forced["metrics"]["confusion_matrix"]).shape == (5, 5)


def test_floats_are_numbers_and_say_so(tmp_path):
    X = _X(100)
    out = _fit(_csv(tmp_path / "float.csv", X, X[:, 0] + 0.25, fmt="%.4f"))
    assert out["task"] == "regression" and "not whole numbers" in out["data"]["task_reason"]


def test_the_rule_in_numbers():
    assert [class_limit(n) for n in (10, 40, 59, 60, 100, 199, 200, 10_000)] == [2, 2, 2, 3, 5, 9, 10, 10]
    assert class_limit(10**6) == AUTO_MAX_CLASSES
    assert looks_like_classes(np.repeat([0, 1], 3)) is not None  # two classes on any number of rows
    assert looks_like_classes(np.array([True, False] * 5)) is not None
    assert looks_like_classes(np.repeat(np.arange(10), 20)) is not None  # 10 classes on 200 rows
    assert looks_like_classes(np.repeat(np.arange(10), 19)) is None  # on 190 rows: at most 9
    assert looks_like_classes(np.repeat(np.arange(11), 100)) is None  # more than 10
    assert looks_like_classes(np.repeat([1.0, 2.0, 3.0], 30)) is not None  # whole numbers written as floats
    assert looks_like_classes(np.r_[np.repeat([0, 1, 2], 30), 3]) is None  # a value seen once
    assert looks_like_classes(np.tile(np.arange(1950, 2021), 8)) is None  # years
    assert looks_like_classes(np.repeat([0, 1], 3)[:, None]) is not None  # one column
    assert looks_like_classes(np.zeros((10, 2))) is None
    assert "3 target columns" in numbers_reason(np.zeros((10, 3)))
    assert "a single value" in numbers_reason(np.ones(20))
    assert "seen once" in numbers_reason(np.r_[np.repeat([0, 1, 2], 30), 3])


@pytest.mark.parametrize("task", ["regression", "structured"])
def test_an_explicit_task_prints_no_auto_reason(tmp_path, task):
    X = _X(80)
    out = _fit(_csv(tmp_path / "y.csv", X, np.tile(np.arange(1950, 1970), 4)), "--task", task)
    assert "auto" not in (out["data"].get("task_reason") or "")
