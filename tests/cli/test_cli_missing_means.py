"""`--missing mean` at prediction time fills new data with the TRAINING means saved with the model."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from skframe.cli import app
from skframe.datasets import load_dataset
from skframe.exceptions import InvalidParameterError

runner = CliRunner()


@pytest.fixture
def data(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(90, 3))
    Y = np.c_[np.sin(3 * X[:, 0]), X[:, 1]]
    X_tr = X[:60].copy()
    X_tr[rng.random(X_tr.shape) < 0.1] = np.nan
    X_new = X[60:].copy()
    X_new[:, 1] *= 0.3  # the new file's own mean of this column differs from the training one
    X_new[::4, 1] = np.nan
    train, new, feats = tmp_path / "train.csv", tmp_path / "new.csv", tmp_path / "feats.csv"
    np.savetxt(train, np.c_[X_tr, Y[:60]], delimiter=",")
    np.savetxt(new, np.c_[X_new, Y[60:]], delimiter=",")
    np.savetxt(feats, X_new, delimiter=",")
    return {"dir": tmp_path, "train": str(train), "new": str(new), "feats": str(feats), "X_tr": X_tr, "X_new": X_new}


def _invoke(args):
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    return res


def test_predict_and_evaluate_fill_with_the_training_means(data):
    model = str(data["dir"] / "m.skf")
    _invoke(["fit", data["train"], "--targets", "2", "--missing", "mean", "--sketch", "none", "--scale", "standard",
             "--kernel-param", "gamma=1", "--lam", "1e-3", "--model-out", model, "--json"])
    train_means = np.nanmean(data["X_tr"], axis=0)

    from skframe.cli.model_commands import _apply_scaler, _load

    est, extra = _load(model)
    np.testing.assert_allclose(extra["train_feature_means"], train_means, rtol=1e-12)
    filled = np.where(np.isnan(data["X_new"]), train_means, data["X_new"])
    expected = est.predict(_apply_scaler(filled, extra))
    own = np.where(np.isnan(data["X_new"]), np.nanmean(data["X_new"], axis=0), data["X_new"])
    assert not np.allclose(est.predict(_apply_scaler(own, extra)), expected)  # the test can tell them apart

    for args in (["--missing", "mean"], []):  # explicit, or the policy saved at fit time
        out = data["dir"] / "p.csv"
        _invoke(["predict", model, data["feats"], "--out", str(out), *args])
        np.testing.assert_allclose(np.loadtxt(out, delimiter=",", skiprows=1), expected, rtol=1e-10, atol=1e-12)
    # evaluate reads the same filled features
    rep = json.loads(_invoke(["evaluate", model, data["new"], "--json"]).stdout)
    assert rep["n_samples"] == 30


def test_load_dataset_takes_given_means_and_checks_their_length(data):
    means = np.array([10.0, 20.0, 30.0])
    ds = load_dataset(data["feats"], targets=0, missing="mean", means=means)
    rows = np.isnan(data["X_new"][:, 1])
    assert np.all(ds.X[rows, 1] == 20.0)
    own = load_dataset(data["feats"], targets=0, missing="mean")
    np.testing.assert_allclose(own.X[rows, 1], np.nanmean(data["X_new"][:, 1]))
    with pytest.raises(InvalidParameterError, match="3 feature columns but 2 feature means"):
        load_dataset(data["feats"], targets=0, missing="mean", means=means[:2])
    zero = load_dataset(data["feats"], targets=0, missing="zero", means=means)  # means only matter for "mean"
    assert np.all(zero.X[rows, 1] == 0.0)
