"""The core CLI commands through typer's CliRunner: fit, predict, evaluate, plugins, bad input."""

import hashlib
import json

import numpy as np
import pytest
from typer.testing import CliRunner

from skframe.cli import app

runner = CliRunner()


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(160, 3))
    Y = np.c_[np.sin(4 * X[:, 0]), X[:, 1] ** 2]
    train, test, feats = tmp_path / "train.csv", tmp_path / "test.csv", tmp_path / "feat.csv"
    np.savetxt(train, np.c_[X[:120], Y[:120]], delimiter=",")
    np.savetxt(test, np.c_[X[120:], Y[120:]], delimiter=",")
    np.savetxt(feats, X[120:], delimiter=",")
    return {"train": str(train), "test": str(test), "feat": str(feats), "dir": tmp_path, "X": X, "Y": Y}


def _fit(args):
    result = runner.invoke(app, ["fit", *args])
    assert result.exit_code == 0, result.output
    return result


def test_fit_json_reports_metrics_times_and_sketch(files):
    res = _fit([files["train"], "--test", files["test"], "--targets", "2", "--kernel-param", "gamma=2",
                "--sketch", "psr", "--sketch-size", "20", "--sketch-param", "p=0.05", "--lam", "1e-4", "--json"])
    rep = json.loads(res.stdout)
    for key in ("metrics", "fit_seconds", "predict_seconds", "n_train", "n_test", "sketch", "model"):
        assert key in rep
    assert rep["n_train"] == 120 and rep["n_test"] == 40
    assert len(rep["metrics"]["rrmse"]) == 2 and rep["metrics"]["arrmse"] < 1.0
    assert rep["sketch"]["m"] == 20 and rep["sketch"]["p"] == 0.05 and 0 < rep["sketch"]["s_prime"] <= 120


def test_fit_exact_matches_python_api(files):
    from skframe import SketchedKernelRidge
    from skframe.metrics import mse

    res = _fit([files["train"], "--test", files["test"], "--targets", "2", "--kernel-param", "gamma=2",
                "--sketch", "none", "--lam", "1e-3", "--json"])
    rep = json.loads(res.stdout)
    X, Y = files["X"], files["Y"]
    model = SketchedKernelRidge(kernel_params={"gamma": 2}, sketch=None, lam=1e-3).fit(X[:120], Y[:120])
    assert rep["metrics"]["mse"] == pytest.approx(mse(Y[120:], model.predict(X[120:])), rel=1e-10)
    assert rep["sketch"]["name"] == "none"


def test_fit_default_dataset_human_output():
    res = _fit(["--kernel", "gaussian", "--sketch", "psr", "--sketch-size", "20"])
    out = res.stdout
    assert "friedman-outliers" in out and "s_prime=" in out and "fit" in out and "relative_mse" in out


def test_model_roundtrip_predict_evaluate(files):
    model_path = files["dir"] / "model.skf"
    res = _fit([files["train"], "--test", files["test"], "--targets", "2", "--kernel-param", "gamma=2",
                "--sketch-size", "20", "--scale", "standard", "--model-out", str(model_path), "--json"])
    rep = json.loads(res.stdout)
    ev = runner.invoke(app, ["evaluate", str(model_path), files["test"], "--targets", "2", "--json"])
    assert ev.exit_code == 0, ev.output
    assert json.loads(ev.stdout)["metrics"]["mse"] == pytest.approx(rep["metrics"]["mse"], rel=1e-12)
    out = files["dir"] / "pred.csv"
    pr = runner.invoke(app, ["predict", str(model_path), files["feat"], "--out", str(out)])
    assert pr.exit_code == 0, pr.output
    P = np.loadtxt(out, delimiter=",")
    assert P.shape == (40, 2)
    pr2 = runner.invoke(app, ["predict", str(model_path), files["test"], "--targets", "2"])
    assert pr2.exit_code == 0, pr2.output
    P2 = np.array([[float(v) for v in line.split(",")] for line in pr2.stdout.strip().splitlines()])
    np.testing.assert_allclose(P, P2, rtol=1e-12)


def test_plugins_json_lists_components_with_distribution():
    res = runner.invoke(app, ["plugins", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    names = {(c["kind"], c["name"]) for c in data["components"]}
    assert ("kernel", "gaussian") in names and ("sketch", "psr") in names
    assert all(c["distribution"] and c["version"] for c in data["components"])
    human = runner.invoke(app, ["plugins"])
    assert human.exit_code == 0 and "kernels:" in human.stdout and "sketches:" in human.stdout


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["--kernel", "nosuchkernel"], "unknown kernel 'nosuchkernel'"),
        (["--sketch", "nosuchsketch"], "unknown sketch"),
        (["--sketch-size", "0"], "sketch_size=0"),
        (["--sketch-param", "p=1.5"], "p=1.5"),
        (["--sketch-param", "p=0"], "p=0"),
        (["--kernel-param", "gamma=-1"], "gamma"),
        (["--lam", "-1"], "lam"),
        (["--kernel-param", "gamma"], "KEY=VALUE"),
        (["--targets", "5"], "targets=5"),
        (["--scale", "weird"], "--scale"),
        (["--missing", "weird"], "--missing"),
    ],
)
def test_fit_bad_input_one_line_nonzero_exit(files, args, fragment):
    before = hashlib.sha256(open(files["train"], "rb").read()).hexdigest()
    res = runner.invoke(app, ["fit", files["train"], *args])
    assert res.exit_code != 0
    err = res.stderr.strip()
    assert len(err.splitlines()) == 1, err
    assert fragment in err
    assert "Traceback" not in res.output
    assert hashlib.sha256(open(files["train"], "rb").read()).hexdigest() == before


def test_bad_files(files, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("1,2,3\n4,5\n")
    for args in (["fit", str(tmp_path / "missing.csv")], ["fit", str(bad)],
                 ["predict", str(tmp_path / "nomodel.skf"), files["feat"]],
                 ["evaluate", files["train"], files["test"]]):
        res = runner.invoke(app, args)
        assert res.exit_code != 0, args
        assert len(res.stderr.strip().splitlines()) == 1, res.stderr


def test_nan_data_reports_missing_values(tmp_path):
    path = tmp_path / "nan.csv"
    path.write_text("1,2,3\n4,?,6\n7,8,9\n1,1,1\n")
    res = runner.invoke(app, ["fit", str(path), "--sketch", "none"])
    assert res.exit_code != 0 and "missing" in res.stderr
    ok = runner.invoke(app, ["fit", str(path), "--sketch", "none", "--missing", "mean", "--json"])
    assert ok.exit_code == 0, ok.output


def test_debug_env_shows_traceback(files, monkeypatch):
    monkeypatch.setenv("SKFRAME_DEBUG", "1")
    res = runner.invoke(app, ["fit", files["train"], "--kernel", "nosuchkernel"])
    assert res.exit_code != 0
    from skframe.exceptions import UnknownComponentError

    assert isinstance(res.exception, UnknownComponentError)


def test_every_option_has_help():
    for cmd in ("fit", "predict", "evaluate", "plugins"):
        res = runner.invoke(app, [cmd, "--help"])
        assert res.exit_code == 0, res.output
    import typer.main

    group = typer.main.get_command(app)
    for name, cmd in group.commands.items():
        for param in cmd.params:
            if getattr(param, "param_type_name", "") == "option" and param.name != "help":
                assert param.help, f"{name} {param.name} has no help"


def test_default_dataset_uses_published_hyperparameters_unless_given():
    rep = json.loads(_fit(["--sketch-size", "20", "--json"]).stdout)
    assert rep["model"]["params"]["kernel_params"] == {"gamma": 0.1}
    assert rep["model"]["params"]["lam"] == 1e-7
    assert rep["data"]["suggested_defaults_used"] == {"kernel_params": {"gamma": 0.1}, "lam": 1e-7}
    rep = json.loads(_fit(["--sketch-size", "20", "--kernel-param", "gamma=1", "--lam", "0.01", "--json"]).stdout)
    assert rep["model"]["params"]["kernel_params"] == {"gamma": 1} and rep["model"]["params"]["lam"] == 0.01
    assert rep["data"]["suggested_defaults_used"] == {}
    rep = json.loads(_fit(["--kernel", "laplacian", "--sketch-size", "20", "--json"]).stdout)
    assert rep["model"]["params"]["lam"] == 1e-3 and rep["data"]["suggested_defaults_used"] == {}


def test_predict_with_target_columns_suggests_targets(files):
    model_path = files["dir"] / "model.skf"
    _fit([files["train"], "--targets", "2", "--sketch-size", "20", "--model-out", str(model_path)])
    res = runner.invoke(app, ["predict", str(model_path), files["test"]])
    assert res.exit_code == 2
    assert "5 feature columns but the model was trained on 3; use --targets 2" in res.stderr


def test_non_model_file_message_never_suggests_unpickling(tmp_path, files):
    import pickle

    bad = tmp_path / "bad.skf"
    bad.write_bytes(pickle.dumps({"a": 1}))
    res = runner.invoke(app, ["predict", str(bad), files["feat"]])
    assert res.exit_code == 2 and "not a readable skframe model file" in res.stderr
    assert "pickle" not in res.stderr.lower()
