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
    assert "friedman-outliers" in out and "s_prime=" in out and "fit" in out and "mse_over_range" in out


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
    P = np.loadtxt(out, delimiter=",", skiprows=1)  # under a header row of the targets' names
    assert P.shape == (40, 2) and out.read_text().splitlines()[0] == "y0,y1"
    pr2 = runner.invoke(app, ["predict", str(model_path), files["test"], "--targets", "2"])
    assert pr2.exit_code == 0, pr2.output
    P2 = np.array([[float(v) for v in line.split(",")] for line in pr2.stdout.strip().splitlines()[1:]])
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
        (["--sketch-size", "0"], "--sketch-size 0"),  # the option as typed, not the Python parameter
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
    assert rep["model"]["params"]["lam"] == "auto" and rep["data"]["suggested_defaults_used"] == {}


def test_predict_reads_the_training_layout_and_names_the_layouts_it_takes(files):
    model_path = files["dir"] / "model.skf"
    _fit([files["train"], "--targets", "2", "--sketch-size", "20", "--model-out", str(model_path)])
    res = runner.invoke(app, ["predict", str(model_path), files["test"]])  # features then targets, no header
    assert res.exit_code == 0, res.output
    same = runner.invoke(app, ["predict", str(model_path), files["feat"]])
    assert res.stdout == same.stdout
    four = files["dir"] / "four.csv"
    np.savetxt(four, files["X"][:5, [0, 1, 2, 2]], delimiter=",")
    res = runner.invoke(app, ["predict", str(model_path), str(four)])
    assert res.exit_code == 2
    assert "has 4 columns; the model takes 3 feature columns or 5 columns (the 3 features, then the 2 targets)" \
        in res.stderr


def test_non_model_file_message_never_suggests_unpickling(tmp_path, files):
    import pickle

    bad = tmp_path / "bad.skf"
    bad.write_bytes(pickle.dumps({"a": 1}))
    res = runner.invoke(app, ["predict", str(bad), files["feat"]])
    assert res.exit_code == 2 and "not a readable skframe model file" in res.stderr
    assert "pickle" not in res.stderr.lower()


def test_seed_never_changes_the_embedded_data():
    from skframe.cli._options import FitOptions
    from skframe.cli.fit import load_data

    a = load_data(FitOptions(seed=0))
    b = load_data(FitOptions(seed=7))
    for u, v in zip(a[:4], b[:4]):
        np.testing.assert_array_equal(u, v)


def test_saved_model_remembers_missing_policy_targets_and_scaling(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(150, 3))
    Y = np.c_[np.sin(4 * X[:, 0]), X[:, 1] ** 2, X[:, 2]]
    D = np.c_[X, Y]
    D[:, :3][rng.random((150, 3)) < 0.05] = np.nan  # missing features only
    train, test = tmp_path / "train.csv", tmp_path / "test.csv"
    np.savetxt(train, D[:110], delimiter=",")
    np.savetxt(test, D[110:], delimiter=",")
    model_path = tmp_path / "m.skf"
    rep = json.loads(_fit([str(train), "--test", str(test), "--targets", "3", "--missing", "zero", "--scale",
                           "standard", "--kernel-param", "gamma=2", "--sketch-size", "20",
                           "--model-out", str(model_path), "--json"]).stdout)
    assert rep["metrics"]["rrmse_reference"] == "train"
    # no --targets, no --missing: the model's own (3 targets, missing=zero)
    ev = runner.invoke(app, ["evaluate", str(model_path), str(test), "--json"])
    assert ev.exit_code == 0, ev.output
    got = json.loads(ev.stdout)["metrics"]
    assert got["mse"] == pytest.approx(rep["metrics"]["mse"], rel=1e-12)
    assert got["arrmse"] == pytest.approx(rep["metrics"]["arrmse"], rel=1e-12)
    assert got["rrmse_reference"] == "train"
    # an explicit policy still wins
    ev = runner.invoke(app, ["evaluate", str(model_path), str(test), "--missing", "error"])
    assert ev.exit_code == 2 and "missing" in ev.stderr


def test_rrmse_uses_training_means(files):
    rep = json.loads(_fit([files["train"], "--test", files["test"], "--targets", "2", "--kernel-param", "gamma=2",
                           "--sketch", "none", "--lam", "1e-3", "--json"]).stdout)
    from skframe import SketchedKernelRidge

    X, Y = files["X"], files["Y"]
    P = SketchedKernelRidge(kernel_params={"gamma": 2}, sketch=None, lam=1e-3).fit(X[:120], Y[:120]).predict(X[120:])
    ref = Y[:120].mean(axis=0)
    expected = np.sqrt(((Y[120:] - P) ** 2).sum(axis=0) / ((Y[120:] - ref) ** 2).sum(axis=0))
    np.testing.assert_allclose(rep["metrics"]["rrmse"], expected, rtol=1e-10)
    assert rep["metrics"]["rrmse_reference"] == "train"


def test_format_option_reads_files_without_a_known_extension(files, tmp_path):
    odd = tmp_path / "train.data"
    odd.write_bytes(open(files["train"], "rb").read())
    res = runner.invoke(app, ["fit", str(odd), "--targets", "2", "--sketch-size", "20"])
    assert res.exit_code == 2 and "--format" in res.stderr
    _fit([str(odd), "--targets", "2", "--sketch-size", "20", "--format", "csv"])


def test_solver_param_passes_through(files):
    rep = json.loads(_fit([files["train"], "--targets", "2", "--sketch-size", "20", "--loss", "huber",
                           "--solver", "lbfgs", "--solver-param", "max_iter=3", "--json"]).stdout)
    assert rep["model"]["params"]["solver_params"] == {"max_iter": 3}


def test_model_out_is_written_atomically(files, monkeypatch):
    model_path = files["dir"] / "model.skf"
    model_path.write_bytes(b"previous model")
    real, calls = np.lib.format.write_array, []

    def interrupted(*args, **kwargs):  # a Ctrl-C in the middle of writing the model's arrays
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(np.lib.format, "write_array", interrupted)
    res = runner.invoke(app, ["fit", files["train"], "--targets", "2", "--sketch-size", "20",
                              "--model-out", str(model_path)])
    assert res.exit_code != 0  # click reports the interrupt as "Aborted!"
    assert model_path.read_bytes() == b"previous model"
    assert sorted(p.name for p in files["dir"].iterdir()) == ["feat.csv", "model.skf", "test.csv", "train.csv"]


def test_predict_out_is_written_atomically(files, monkeypatch):
    model_path, out = files["dir"] / "model.skf", files["dir"] / "pred.csv"
    _fit([files["train"], "--targets", "2", "--sketch-size", "20", "--model-out", str(model_path)])
    out.write_text("previous predictions\n")

    def boom(fh, *args, **kwargs):
        fh.write(b"1,2\n")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(np, "savetxt", boom)
    res = runner.invoke(app, ["predict", str(model_path), files["feat"], "--out", str(out)])
    assert res.exit_code == 2 and "No space left" in res.stderr
    assert out.read_text() == "previous predictions\n"
    assert sorted(p.name for p in files["dir"].iterdir()) == ["feat.csv", "model.skf", "pred.csv", "test.csv",
                                                               "train.csv"]
    monkeypatch.undo()
    npz = files["dir"] / "pred.npz"
    assert runner.invoke(app, ["predict", str(model_path), files["feat"], "--out", str(npz)]).exit_code == 0
    assert np.load(npz)["predictions"].shape == (40, 2)


def _readme_block(title):
    """The shell commands of the first bash block after ``title`` in README.md (continuations joined)."""
    import re
    import shlex
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```bash\n(.*?)```", text[text.index(title):], re.S).group(1)
    block = block.replace("\\\n", " ")
    parts = [part for line in block.splitlines() for part in line.split("&&")]
    commands = (shlex.split(part, comments=True) for part in parts)
    return [c for c in commands if c]  # a comment line is no command


def _write_arff(path, X, Y):
    lines = ["@relation small"] + [f"@attribute x{j} numeric" for j in range(X.shape[1])]
    lines += [f"@attribute y{j} numeric" for j in range(Y.shape[1])] + ["@data"]
    for row in np.c_[X, Y]:
        lines.append(",".join("?" if np.isnan(v) else repr(float(v)) for v in row))
    path.write_text("\n".join(lines) + "\n")


def test_readme_terminal_commands_run(tmp_path, monkeypatch):
    """The README's "At the terminal" commands, on small rf1-shaped files in a $SKFRAME_DATA stand-in."""
    import os

    rng = np.random.default_rng(0)
    X = rng.standard_normal((520, 6))
    Y = np.c_[[np.sin(X[:, j % 6]) + 0.1 * rng.standard_normal(520) for j in range(8)]].T
    X[rng.random(X.shape) < 0.01] = np.nan
    (tmp_path / "rf1").mkdir()
    _write_arff(tmp_path / "rf1" / "rf1-train.arff", X[:300], Y[:300])
    _write_arff(tmp_path / "rf1" / "rf1-test.arff", X[300:], Y[300:])
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SKFRAME_DATA", str(tmp_path))
    commands = _readme_block("## At the terminal")
    assert [c[:2] for c in commands] == [["skframe", "fit"], ["skframe", "predict"], ["skframe", "evaluate"]]
    for cmd in commands:
        res = runner.invoke(app, [os.path.expandvars(a) for a in cmd[1:]])
        assert res.exit_code == 0, (cmd, res.output)
    assert np.loadtxt(tmp_path / "predictions.csv", delimiter=",", skiprows=1).shape == (220, 8)


def test_readme_first_command_runs_on_the_embedded_data():
    (cmd,) = [c for c in _readme_block("# skframe") if c[:1] == ["skframe"]]
    res = runner.invoke(app, cmd[1:])
    assert res.exit_code == 0, res.output
    assert "friedman-outliers" in res.stdout and "mse_over_range" in res.stdout


def test_predict_never_drops_rows_unless_asked(tmp_path):
    rng = np.random.default_rng(2)
    D = np.c_[rng.uniform(size=(80, 3)), rng.uniform(size=80)]
    D[3, 0] = np.nan
    np.savetxt(tmp_path / "train.csv", D, delimiter=",")
    np.savetxt(tmp_path / "feat.csv", D[:10, :3], delimiter=",")
    model = tmp_path / "m.skf"
    _fit([str(tmp_path / "train.csv"), "--missing", "drop", "--sketch-size", "10", "--model-out", str(model)])
    res = runner.invoke(app, ["predict", str(model), str(tmp_path / "feat.csv")])
    assert res.exit_code == 2 and "missing" in res.stderr
    res = runner.invoke(app, ["predict", str(model), str(tmp_path / "feat.csv"), "--missing", "drop"])
    assert res.exit_code == 0 and len(res.stdout.splitlines()) == 1 + 9  # the header, then 9 rows


def test_replace_via_temp_path_keeps_the_old_file_and_the_permissions(tmp_path):
    import os
    import stat

    from skframe.cli._common import replace_via_temp_path as atomic_write

    target = tmp_path / "out.txt"
    target.write_text("old")

    def half(tmp):
        with open(tmp, "w") as fh:
            fh.write("new but incomplete")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError):
        atomic_write(target, half)
    assert target.read_text() == "old" and os.listdir(tmp_path) == ["out.txt"]

    def full(tmp):
        with open(tmp, "w") as fh:
            fh.write("new")

    os.chmod(target, 0o640)
    atomic_write(target, full)
    assert target.read_text() == "new" and os.listdir(tmp_path) == ["out.txt"]
    assert stat.S_IMODE(target.stat().st_mode) == 0o640  # a replaced file keeps its permissions
    fresh = tmp_path / "fresh.txt"
    atomic_write(fresh, full)
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o666 & ~mask


def test_model_defaults_pass_through(tmp_path):
    """Without --sketch-size / --fit-intercept the estimator's own defaults apply (auto size, centring)."""
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(60, 3))  # fewer rows than the old fixed default m = 100
    np.savetxt(tmp_path / "small.csv", np.c_[X, np.sin(3 * X[:, 0])], delimiter=",")
    rep = json.loads(_fit([str(tmp_path / "small.csv"), "--json"]).stdout)
    params = rep["model"]["params"]
    assert params["sketch_size"] == "auto" and params["fit_intercept"] is True
    assert 0 < rep["sketch"]["m"] <= 60
    rep = json.loads(_fit([str(tmp_path / "small.csv"), "--sketch-size", "20", "--no-fit-intercept", "--json"]).stdout)
    assert rep["model"]["params"]["sketch_size"] == 20 and rep["model"]["params"]["fit_intercept"] is False
    res = runner.invoke(app, ["fit", str(tmp_path / "small.csv"), "--sketch-size", "many"])
    assert res.exit_code == 2 and "--sketch-size 'many'" in res.stderr


def test_compute_options_pass_through_to_the_estimator(files):
    base = [files["train"], "--test", files["test"], "--targets", "2", "--kernel-param", "gamma=2", "--sketch",
            "subsample", "--sketch-size", "30", "--lam", "1e-4", "--json"]
    plain = json.loads(_fit(base).stdout)
    streamed = json.loads(_fit(base + ["--memory-budget", "50MB", "--dtype", "float64"]).stdout)
    assert streamed["model"]["params"]["memory_budget"] == "50MB"
    # the streamed fit is the same model: same test metrics
    np.testing.assert_allclose(streamed["metrics"]["rrmse"], plain["metrics"]["rrmse"], rtol=1e-6)
    single = json.loads(_fit(base + ["--dtype", "float32"]).stdout)
    assert single["model"]["params"]["dtype"] == "float32"
    np.testing.assert_allclose(single["metrics"]["rrmse"], plain["metrics"]["rrmse"], rtol=1e-3)


def test_impossible_memory_budget_and_missing_gpu_are_one_line_errors(files):
    res = runner.invoke(app, ["fit", files["train"], "--targets", "2", "--memory-budget", "1KB"])
    assert res.exit_code == 2 and "memory_budget" in res.output and "Traceback" not in res.output
    # CuPy is an optional extra: without it, asking for the GPU backend names the extra
    try:
        import cupy  # noqa: F401
    except ImportError:
        res = runner.invoke(app, ["fit", files["train"], "--targets", "2", "--backend", "cupy"])
        assert res.exit_code == 2 and ".[gpu]" in res.output
