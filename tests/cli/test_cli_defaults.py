"""The defaults a newcomer meets: multi-label files fitted as such (--task auto), features scaled when their
spreads differ (--scale auto), and a loss that fits one target saying so."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from skframe.cli import app

runner = CliRunner()
LABELS = ["sports", "politics", "science", "arts"]


def _fit(*args):
    res = runner.invoke(app, ["fit", *map(str, args), "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


@pytest.fixture(scope="module")
def labels(tmp_path_factory):
    """A multi-label CSV: 6 features, 4 label columns of 0/1 that depend on them."""
    d = tmp_path_factory.mktemp("labels")
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(240, 6))
    Y = np.c_[X[:, 0] > 0.5, X[:, 1] + X[:, 2] > 1.0, X[:, 3] > 0.7, X[:, 4] < 0.3].astype(float)
    header = ",".join([f"w{j}" for j in range(6)] + LABELS)
    for name, rows in (("train.csv", slice(0, 180)), ("test.csv", slice(180, 240))):
        np.savetxt(d / name, np.c_[X[rows], Y[rows]], delimiter=",", fmt="%.10g", header=header, comments="")
    return d


def test_zero_one_targets_over_several_columns_are_fitted_as_multi_label(labels, tmp_path):
    base = [labels / "train.csv", "--test", labels / "test.csv", "--target", ",".join(LABELS),
            "--sketch-size", "40", "--lam", "1e-4"]
    auto = _fit(*base, "--model-out", tmp_path / "m.skf")
    assert auto["task"] == "structured" and "multi-label" in auto["data"]["task_reason"]
    assert auto["metrics"]["example_based_f1"] > 0.5 and "hamming_loss" in auto["metrics"]
    # the same fit but for where the model went, the timings and the machine's free memory (the execution plan)
    same = ("data", "fit_seconds", "predict_seconds", "model_path", "execution")
    assert auto == _fit(*base, "--task", "structured") | {key: auto[key] for key in same if key in auto}
    numbers = _fit(*base, "--task", "regression")
    assert numbers["task"] == "regression" and "r2" in numbers["metrics"]
    res = runner.invoke(app, ["predict", str(tmp_path / "m.skf"), str(labels / "test.csv")])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[0] == ",".join(LABELS) and len(lines) == 61
    assert {float(v) for line in lines[1:] for v in line.split(",")} <= {0.0, 1.0}


def test_a_single_target_loss_names_the_fix(labels):
    res = runner.invoke(app, ["fit", str(labels / "train.csv"), "--targets", "4", "--loss", "hinge"])
    assert res.exit_code == 2
    msg = res.stderr.strip()
    assert len(msg.splitlines()) == 1
    assert "--loss hinge classifies one target column, but the data have 4 target columns" in msg
    assert "--target NAME" in msg and "--task structured" in msg
    one = _fit(labels / "train.csv", "--target", "politics", "--drop", "sports,science,arts", "--loss", "hinge",
               "--sketch-size", "40")
    assert one["task"] == "machine" and one["metrics"]["accuracy"] > 0.7
    res = runner.invoke(app, ["fit", str(labels / "train.csv"), "--targets", "4", "--quantiles", "0.1,0.9"])
    assert res.exit_code == 2 and "--quantiles fits the quantiles of one target" in res.stderr


@pytest.fixture(scope="module")
def spreads(tmp_path_factory):
    """Eight features spread from 0.01 to 20 000 wide, and the same features in [0, 1]."""
    d = tmp_path_factory.mktemp("spreads")
    rng = np.random.default_rng(1)
    Z = rng.uniform(size=(800, 8))
    y = 10 * np.sin(np.pi * Z[:, 0] * Z[:, 1]) + 20 * (Z[:, 2] - 0.5) ** 2 + 10 * Z[:, 3] + 5 * Z[:, 4]
    y = y + rng.normal(size=800)
    scales = np.array([1, 1000, 0.01, 50, 1, 20000, 0.1, 5])
    header = ",".join([f"f{j}" for j in range(8)] + ["y"])
    np.savetxt(d / "wide.csv", np.c_[Z * scales, y], delimiter=",", fmt="%.10g", header=header, comments="")
    np.savetxt(d / "unit.csv", np.c_[Z, y], delimiter=",", fmt="%.10g", header=header, comments="")
    return d


def test_features_of_different_spreads_are_standardised_by_default(spreads, tmp_path):
    common = ["--sketch", "psr", "--sketch-size", "60", "--lam", "1e-3"]  # a fixed λ: the scaling alone compared
    auto = _fit(spreads / "wide.csv", *common, "--model-out", tmp_path / "auto.skf")
    standard = _fit(spreads / "wide.csv", *common, "--scale", "standard", "--model-out", tmp_path / "std.skf")
    none = _fit(spreads / "wide.csv", *common, "--scale", "none")
    assert auto["data"]["scale"]["method"] == "standard" and "differ" in auto["data"]["scale"]["reason"]
    assert auto["metrics"] == standard["metrics"]
    assert auto["metrics"]["r2"] > none["metrics"]["r2"] + 0.3  # unscaled, the widest feature swamps the others
    outs = []
    for name in ("auto", "std"):  # the scaling is saved with the model and applied again by predict
        res = runner.invoke(app, ["predict", str(tmp_path / f"{name}.skf"), str(spreads / "wide.csv")])
        assert res.exit_code == 0, res.output
        outs.append(res.stdout)
    assert outs[0] == outs[1]


def test_features_of_alike_spreads_and_other_data_keep_their_scale(spreads, tmp_path):
    auto = _fit(spreads / "unit.csv", "--sketch-size", "60", "--kernel-param", "gamma=2")
    none = _fit(spreads / "unit.csv", "--sketch-size", "60", "--kernel-param", "gamma=2", "--scale", "none")
    assert auto["data"]["scale"]["method"] == "none" and "within" in auto["data"]["scale"]["reason"]
    assert auto["metrics"] == none["metrics"]  # a gamma chosen for the raw features keeps its meaning
    embedded = _fit("--sketch-size", "20")
    assert embedded["data"]["scale"]["method"] == "none" and "embedded" in embedded["data"]["scale"]["reason"]
    Z = np.loadtxt(spreads / "wide.csv", delimiter=",", skiprows=1)[:200]
    with open(tmp_path / "wide.svm", "w") as fh:
        for row in Z:
            fh.write(f"{float(row[-1])!r} " + " ".join(f"{j + 1}:{float(v)!r}" for j, v in enumerate(row[:-1]) if v)
                     + "\n")
    sparse = _fit(tmp_path / "wide.svm", "--sketch-size", "20")
    assert sparse["data"]["scale"]["method"] == "none" and "sparse" in sparse["data"]["scale"]["reason"]
    streamed = _fit(spreads / "wide.csv", "--sketch-size", "60", "--memory-budget", "4MB")
    assert streamed["data"]["streamed"]["spilled"] and streamed["data"]["scale"]["method"] == "standard"


def test_spread_ratio_against_the_plain_formula():
    from skframe.automatic.scaling import spread_ratio

    rng = np.random.default_rng(2)
    X = rng.normal(size=(1000, 4)) * [1.0, 3.0, 0.5, 7.0]
    X = np.c_[X, np.full(1000, 4.0)]  # a constant column does not count
    std = X[:, :4].std(axis=0)
    assert spread_ratio(X, rows=128) == pytest.approx(std.max() / std.min(), rel=1e-12)
    assert spread_ratio(X[:, :1]) == 1.0


def test_column_moments_in_blocks_against_the_plain_formula():
    from skframe.automatic.scaling import column_moments

    rng = np.random.default_rng(3)
    X = np.c_[rng.normal(size=(1001, 3)) * [1.0, 5.0, 0.2] + 100.0, np.full(1001, -2.5)]
    mean, std, constant = column_moments(X, rows=97)  # blocks that do not divide the rows
    np.testing.assert_allclose(mean, X.mean(axis=0), rtol=1e-13)
    np.testing.assert_allclose(std, X.std(axis=0), rtol=1e-10, atol=1e-13)
    assert constant.tolist() == [False, False, False, True]
