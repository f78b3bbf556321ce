"""skframe fit names its target, refuses an identifier or too many classes before any fit, leaves a shuffled
index out and says when a classifier predicts one class only."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from skframe.cli import app
from skframe.cli import fit as fit_module
from tests.cli.test_cli_tables import _error  # one line on stderr, exit status 2

runner = CliRunner()


def _csv(path, header, rows):
    path.write_text(",".join(header) + "\n" + "\n".join(",".join(str(v) for v in r) for r in rows) + "\n")
    return path


def _cars(folder, n=40, seed=0, index="shuffled"):
    """A pandas-written table: a blank index column first (shuffled with the rows), then R's rownames, features,
    the price, and a make-and-model last (one per row)."""
    rng = np.random.default_rng(seed)
    weight = rng.uniform(1.0, 2.0, n)
    origin = rng.choice(["USA", "other"], n)
    price = 10 * weight + (origin == "USA") * 3 + rng.normal(scale=0.5, size=n)
    rows = [[i, i + 1, f"{weight[i]:.3f}", origin[i], f"{price[i]:.2f}", f"Make{i} Model{i}"] for i in range(n)]
    if index == "shuffled":
        rows = [rows[i] for i in rng.permutation(n)]
    return _csv(folder / "cars.csv", ["", "rownames", "Weight", "Origin", "Price", "Make"], rows)


@pytest.fixture
def no_fit(monkeypatch):
    """Any fit started fails the test: a refusal must come before it."""
    def refuse(*args, **kwargs):
        raise AssertionError("a fit was started")

    monkeypatch.setattr(fit_module, "fit_model", refuse)


def _json(*args):
    res = runner.invoke(app, [str(a) for a in args] + ["--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout[res.stdout.find("{"):])


def test_an_identifier_last_column_is_refused_in_one_line_without_a_fit(tmp_path, no_fit):
    line = _error("fit", _cars(tmp_path))
    assert "cars.csv: the last column 'Make' is not a target (40 distinct values in 40 rows: an identifier)" in line
    assert line.endswith("name the target with --target Price, --target Origin or --target Weight")


def test_a_numeric_identifier_last_column_is_refused(tmp_path, no_fit):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 2))
    rows = [[f"{a:.3f}", f"{b:.3f}", f"{a + b:.3f}", k] for (a, b), k in zip(X, rng.permutation(30) + 1)]
    line = _error("fit", _csv(tmp_path / "num.csv", ["a", "b", "y", "case"], rows))  # the numeric reader
    assert "the last column 'case' is not a target (whole numbers 1..30, each once (a row number)" in line
    assert "--target y" in line


def test_too_many_classes_are_refused_naming_the_flag(tmp_path, no_fit):
    rng = np.random.default_rng(2)
    rows = [[f"{v:.3f}", f"k{rng.integers(0, 8)}"] for v in rng.normal(size=60)]
    path = _csv(tmp_path / "k.csv", ["a", "kind"], rows)
    line = _error("fit", path, "--target", "kind", "--max-classes", "5")
    assert "the target column 'kind' cannot be fitted as classes (8 distinct values in 60 rows" in line
    assert "--max-classes 8" in line
    report = _json("fit", path, "--target", "kind", "--max-classes", "8", "--explain")  # the limit raised: no refusal
    assert report["data"]["target"] == {"names": ["kind"], "chosen": "--target", "classes": 8}


def test_the_report_names_the_target_and_leaves_a_shuffled_index_out(tmp_path):
    path = _cars(tmp_path)
    res = runner.invoke(app, ["fit", str(path), "--target", "Price", "--lam", "1e-3", "--seed", "0"])
    assert res.exit_code == 0, res.output
    assert "\ntarget     Price (--target)\n" in res.stdout
    report = _json("fit", path, "--target", "Price", "--lam", "1e-3", "--model-out", tmp_path / "m.skf")
    assert report["data"]["target"] == {"names": ["Price"], "chosen": "--target", "classes": None}
    types = {c["name"]: c["type"] for c in report["data"]["column_types"]}
    assert types == {"unnamed1": "index", "rownames": "index", "Weight": "numeric", "Origin": "categorical",
                     "Make": "text"}
    assert report["n_features"] == 3
    # a held-out file: its index is a subset of the training rows; the saved encoding leaves it out by name
    held = _csv(tmp_path / "held.csv", ["", "rownames", "Weight", "Origin", "Price", "Make"],
                [[7, 8, "1.5", "USA", "18.0", "X"], [3, 4, "1.2", "other", "12.0", "Y"]])
    res = runner.invoke(app, ["predict", str(tmp_path / "m.skf"), str(held)])
    assert res.exit_code == 0, res.output
    assert len(res.stdout.strip().splitlines()) >= 2


def test_a_one_class_classifier_is_reported(tmp_path):
    rng = np.random.default_rng(3)
    n = 100
    flag = np.where(np.arange(n) % 25 == 0, "yes", "no")  # 4 % yes, and features that tell nothing
    rows = [[f"{a:.3f}", f"{b:.3f}", f] for a, b, f in zip(rng.normal(size=n), rng.normal(size=n), flag)]
    path = _csv(tmp_path / "loan.csv", ["a", "b", "flag"], rows)
    res = runner.invoke(app, ["fit", str(path), "--lam", "1e-2", "--seed", "0"])
    assert res.exit_code == 0, res.output
    assert "\ntarget     flag (last column; 2 classes)\n" in res.stdout
    assert "warning    predicts only 'no' on the 20 held-out rows; balanced accuracy 0.50" in res.stdout
    assert "balanced_accuracy" in res.stdout
    report = _json("fit", path, "--lam", "1e-2", "--seed", "0")
    assert report["metrics"]["predicted_classes"] == {"no": 20}
    assert report["warnings"][0].startswith("predicts only 'no'")


def test_the_option_default_is_the_library_limit():
    from skframe.cli._options import FitOptions
    from skframe.preprocessing import DEFAULT_MAX_CLASSES

    assert FitOptions().max_classes == DEFAULT_MAX_CLASSES
