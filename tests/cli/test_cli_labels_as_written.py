"""Class labels are the text written ("01" and "1" are two classes); --class-weight on a regression is refused."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from skframe.cli import app

runner = CliRunner()


def _table(tmp_path, text_feature=True, n=150, seed=0):
    """Labels "01", "1" and "2" by ranges of x (fixed seed); with a text feature or numbers only."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    labels = np.where(x < -0.5, "01", np.where(x < 0.5, "1", "2"))
    path = tmp_path / "codes.csv"
    head = "x,shop,y" if text_feature else "x,z,y"
    rows = [f"{x[i]:.4f}," + (f"{'ab'[i % 2]}," if text_feature else f"{rng.normal():.3f},") + labels[i]
            for i in range(n)]
    path.write_text(head + "\n" + "\n".join(rows) + "\n")
    return path, labels


def _fit(*args):
    res = runner.invoke(app, ["fit", *map(str, args), "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout[res.stdout.find("{"):])


@pytest.mark.parametrize("text_feature", [True, False])
@pytest.mark.parametrize("task", ["classification", "auto"])
def test_labels_01_and_1_stay_two_classes(tmp_path, text_feature, task):
    path, labels = _table(tmp_path, text_feature)
    model = tmp_path / "m.skf"
    report = _fit(path, "--task", task, "--model-out", model)
    assert sorted(map(str, report["metrics"]["classes"])) == ["01", "1", "2"], report["metrics"]
    res = runner.invoke(app, ["predict", str(model), str(path)])
    assert res.exit_code == 0, res.output
    predicted = res.stdout.split()[1:]
    assert set(predicted) <= {"01", "1", "2"} and "01" in predicted
    assert np.mean(np.array(predicted) == labels) > 0.8


def test_a_regression_reads_them_as_numbers(tmp_path):
    path, _ = _table(tmp_path)
    report = _fit(path, "--task", "regression")
    assert report["model"]["class"] == "SketchedKernelRidge" and "r2" in report["metrics"]


def test_class_weight_on_a_regression_is_refused_in_one_line(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 2))
    path = tmp_path / "reg.csv"
    np.savetxt(path, np.column_stack([X, X[:, 0] * 1.5]), delimiter=",", header="a,b,y", comments="", fmt="%.5f")
    for extra in ([], ["--task", "regression"]):
        res = runner.invoke(app, ["fit", str(path), "--class-weight", "balanced", *extra])
        lines = res.stderr.strip().splitlines()
        assert res.exit_code == 2 and len(lines) == 1, res.output
        assert lines[0].startswith("Error: --class-weight balanced applies to classification, and this fit is a "
                                   "regression") and "--task classification" in lines[0], lines
    path, _ = _table(tmp_path)  # a classification takes it
    assert _fit(path, "--task", "classification", "--class-weight", "balanced")["metrics"]["accuracy"] > 0.7
