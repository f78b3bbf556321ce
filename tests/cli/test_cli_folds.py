"""The folds of ``skframe fit --lam auto``, ``skframe tune`` and ``skframe select``: shuffled from ``--seed`` (and
stratified by class) by default, in file order with ``--cv-order keep``, and said in the report."""

import json

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.model_selection import KFold
from typer.testing import CliRunner

from skframe.cli import app
from skframe.model_selection import KernelSearchCV
from skframe.models import SketchedKernelRidge

runner = CliRunner()


@pytest.fixture(scope="module")
def iris(tmp_path_factory):
    """Iris as it is stored (sorted by class), text labels, and a test file of every tenth row."""
    where = tmp_path_factory.mktemp("folds")
    X, y = load_iris(return_X_y=True)
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    test = np.arange(y.size) % 10 == 0
    for name, rows in (("train.csv", ~test), ("test.csv", test)):
        lines = ["a,b,c,d,species"] + [",".join(f"{v:.1f}" for v in x) + f",{c}" for x, c in zip(X[rows],
                                                                                               names[rows])]
        (where / name).write_text("\n".join(lines) + "\n")
    return where


@pytest.fixture(scope="module")
def regression(tmp_path_factory):
    where = tmp_path_factory.mktemp("folds_reg")
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(90, 3))
    y = np.sin(4 * X[:, 0]) + X[:, 1] + 0.1 * rng.normal(size=90)
    np.savetxt(where / "train.csv", np.c_[X, y], delimiter=",", header="a,b,c,y", comments="", fmt="%.8f")
    return where, np.loadtxt(where / "train.csv", delimiter=",", skiprows=1)


def _run(*args):
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result


def _json(*args):
    out = _run(*args, "--json").stdout
    return json.loads(out[out.index("{"):])


def test_fit_on_a_table_sorted_by_class_uses_stratified_shuffled_folds(iris):
    common = ("fit", str(iris / "train.csv"), "--test", str(iris / "test.csv"), "--sketch-size", "40")
    alo = _json(*common)["chosen"]["lam"]  # the default: approximate leave-one-out, blind to the order of the rows
    assert alo["lam_criterion"] == "alo" and alo["folds"] == "none (approximate leave-one-out on all 135 rows)"
    assert "approximate leave-one-out loss" in alo["reason"] and "on all 135 rows" in alo["reason"]
    assert alo["chosen"] < 0.1 and alo["edge"] is None and alo["value"] < np.log(3)
    kfold = (*common, "--lam-criterion", "kfold")
    lam = _json(*kfold)["chosen"]["lam"]
    assert "3 shuffled stratified folds (seed 0)" in lam["reason"] and lam["folds"] == "3 shuffled stratified " \
        "folds (seed 0)"
    assert lam["lam_criterion"] == "kfold" and lam["chosen"] < 0.1 and lam["value"] < np.log(3)
    kept = _json(*common, "--cv-order", "keep")["chosen"]["lam"]  # rows in time order: folds, not leave-one-out
    assert kept["lam_criterion"] == "kfold" and "cv_order='keep'" in kept["reason"]
    assert kept["folds"] == "3 consecutive folds (file order kept)" and min(kept["curve"]) > np.log(3)
    assert kept["chosen"] == pytest.approx(0.1) and kept["edge"] == "upper"  # what the consecutive folds choose
    text = _run(*kfold, "--seed", "4").output
    assert any(line.startswith("lam ") and "3 shuffled stratified folds (seed 4)" in line
               for line in text.splitlines()), text
    bad = runner.invoke(app, [*common, "--lam-criterion", "loo"])
    assert bad.exit_code != 0 and "--lam-criterion 'loo' is not one of auto, alo, holdout, kfold" in bad.output
    assert "Traceback" not in bad.output


def test_fit_table_passes_the_criterion_to_the_classifier(iris):
    import skframe

    model = skframe.fit_table(iris / "train.csv", test=iris / "test.csv", sketch_size=40, lam_criterion="kfold")
    assert model.get_params()["lam_criterion"] == "kfold"
    assert model.estimator_.lam_criterion == "kfold"
    assert model.estimator_.fit_info_["lam"]["folds"] == "3 shuffled stratified folds (seed 0)"


def test_tune_shuffles_its_folds_by_default_and_says_so(regression):
    where, data = regression
    args = ("tune", str(where / "train.csv"), "--sketch", "psr", "--sketch-size", "20", "--scale", "none",
            "--cv", "3", "--kernel-param", "gamma=1", "--lam", "1e-6,1e-3")
    report = _json(*args)
    assert report["cv"]["order"] == "shuffle" and report["cv"]["folds"] == "3 shuffled folds (seed 0)"
    assert "shuffle=True" in report["cv"]["splitter"]
    est = SketchedKernelRidge(kernel_params={"gamma": 1.0}, sketch="psr", sketch_size=20, random_state=0)
    X, y = data[:, :3], data[:, 3]
    same = KernelSearchCV(est, {"lam": [1e-6, 1e-3]}, cv=KFold(3, shuffle=True, random_state=0)).fit(X, y)
    np.testing.assert_allclose(report["scores"]["mean"], same.cv_results_["mean_test_score"], rtol=1e-8)
    assert "x 3 shuffled folds (seed 0)" in _run(*args).output
    kept = _json(*args, "--cv-order", "keep")
    assert kept["cv"]["order"] == "keep" and kept["cv"]["folds"] == "3 consecutive folds (file order kept)"
    plain = KernelSearchCV(est, {"lam": [1e-6, 1e-3]}, cv=KFold(3)).fit(X, y)
    np.testing.assert_allclose(kept["scores"]["mean"], plain.cv_results_["mean_test_score"], rtol=1e-8)


def test_the_former_shuffle_flag_still_works_and_says_it_is_deprecated(regression):
    where, _ = regression
    args = ("tune", str(where / "train.csv"), "--sketch-size", "20", "--cv", "3", "--kernel-param", "gamma=1",
            "--lam", "1e-3")
    result = _run(*args, "--no-shuffle", "--json")
    assert "--no-shuffle is deprecated; use --cv-order keep" in result.stderr
    assert json.loads(result.stdout)["cv"]["order"] == "keep"
    assert json.loads(_run(*args, "--shuffle", "--json").stdout)["cv"]["order"] == "shuffle"
    bad = runner.invoke(app, [*args, "--shuffle", "--cv-order", "keep"])
    assert bad.exit_code != 0 and "contradicts --cv-order keep" in bad.output
    assert "Traceback" not in bad.output


def test_a_bad_order_is_one_line(regression):
    where, _ = regression
    for command in ("fit", "tune", "select"):
        result = runner.invoke(app, [command, str(where / "train.csv"), "--cv-order", "sorted"])
        assert result.exit_code != 0 and "--cv-order" in result.output and "Traceback" not in result.output, \
            (command, result.output)


def test_select_validates_on_the_last_rows_with_keep(tmp_path):
    from skframe.datasets.loaders import save_dataset
    from tests._structured_helpers import multilabel_data

    X, Y = multilabel_data(n=80, L=4)
    save_dataset(str(tmp_path / "train.csv"), X, Y)
    args = ("select", str(tmp_path / "train.csv"), "--targets", "4", "--sizes-x", "10", "--sizes-y", "5")
    assert _json(*args)["validation"] == "16 rows drawn at random (seed 0)"
    assert _json(*args, "--cv-order", "keep")["validation"] == "the last 16 rows (file order kept)"
    assert "validation  16 rows drawn at random (seed 0)" in _run(*args).output
