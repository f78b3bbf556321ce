"""One model, two doors: ``skframe fit FILE`` and ``skframe.fit_table`` (TableModel) on four tables give the same
predictions, the same decisions, and model files each side loads."""

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import skframe
from skframe.automatic import TableModel
from skframe.automatic.table_model import PARAMS, decisions
from skframe.cli import app
from tests.automatic._tables import TABLES, write

runner = CliRunner()

#: the decisions both doors must agree on
COMPARED = ("task", "target", "scale", "loss", "calibration", "lam", "gamma", "evaluated_on")


def _flags(options):
    out = []
    for key, value in options.items():
        out += [f"--{key.replace('_', '-')}", str(value)]
    return out


def _cli(*args):
    res = runner.invoke(app, [str(a) for a in args])
    assert res.exit_code == 0, res.output
    return res.output


@pytest.fixture(scope="module", params=sorted(TABLES))
def doors(request, tmp_path_factory):
    """Each table fitted through the command line and through TableModel with the same options."""
    folder = tmp_path_factory.mktemp(request.param)
    path, frame, target, options = write(request.param, folder)
    cli_file, py_file = folder / "cli.skf", folder / "py.skf"
    report = json.loads(_cli("fit", path, "--target", target, "--model-out", cli_file, "--json", *_flags(options)))
    model = skframe.fit_table(path, target=target, **options)
    model.save(py_file)
    return {"name": request.param, "path": path, "frame": frame, "target": target, "report": report,
            "model": model, "cli_file": cli_file, "py_file": py_file, "folder": folder}


def test_same_decisions(doors):
    cli, py = decisions(doors["report"]), doors["model"].decisions_
    for key in COMPARED:
        assert cli.get(key) == py.get(key), key
    assert doors["report"]["task"] == doors["model"].report_["task"]
    assert doors["report"]["metrics"].keys() == doors["model"].report_["metrics"].keys()


def test_same_predictions_and_files_load_on_both_sides(doors):
    model, path = doors["model"], doors["path"]
    from_cli = skframe.load(doors["cli_file"])  # the terminal's model, in Python
    assert isinstance(from_cli, TableModel)
    assert from_cli.decisions_["task"] == model.decisions_["task"]
    P, Q = model.predict(path), from_cli.predict(path)
    if P.dtype.kind in "fc":
        np.testing.assert_allclose(Q, P, rtol=1e-10, atol=1e-10)
    else:
        assert (Q == P).all()
    if hasattr(model.estimator_, "predict_proba"):
        np.testing.assert_allclose(from_cli.predict_proba(path), model.predict_proba(path), rtol=1e-10, atol=1e-10)
    # the Python model's file, used by the command line
    out = doors["folder"] / "py_predictions.csv"
    _cli("predict", doors["py_file"], path, "--out", out)
    written = pd.read_csv(out)[doors["target"]].to_numpy()
    if P.dtype.kind in "fc":
        np.testing.assert_allclose(written, np.ravel(P), rtol=1e-10, atol=1e-10)
    else:
        assert (written.astype(str) == np.ravel(P).astype(str)).all()
    evaluated = json.loads(_cli("evaluate", doors["py_file"], path, "--json"))
    assert evaluated["task"] == doors["report"]["task"]


def test_a_dataframe_gives_the_file_s_model(doors):
    """The same table as a DataFrame: the same decisions and predictions (numbers read from text or given)."""
    options = {k: v for k, v in TABLES[doors["name"]][1].items()}
    frame = doors["frame"].copy()
    if "day" in frame:
        frame["day"] = pd.to_datetime(frame["day"])
    model = TableModel(target=doors["target"], **options).fit(frame)
    for key in ("task", "scale", "loss", "calibration"):
        assert model.decisions_[key] == doors["model"].decisions_[key], key
    P, Q = doors["model"].predict(doors["path"]), model.predict(frame.drop(columns=[doors["target"]]))
    if P.dtype.kind in "fc":
        np.testing.assert_allclose(Q, P, rtol=1e-8, atol=1e-8)
    else:
        assert (Q == P).all()


def test_intervals_through_both_doors(tmp_path):
    path, _, target, options = write("dates_and_gaps", tmp_path)
    model = skframe.fit_table(path, target=target, **options)
    lower, upper = model.predict_interval(path)
    assert lower.shape == upper.shape == (120, 1) and (lower <= upper).all()
    model.save(tmp_path / "m.skf")
    out = tmp_path / "p.csv"
    _cli("predict", tmp_path / "m.skf", path, "--interval", "0.9", "--out", out)
    written = pd.read_csv(out)
    np.testing.assert_allclose(written[f"{target}_lower"], lower[:, 0], rtol=1e-10, atol=1e-10)
    assert model.decisions_["interval"]["level"] == 0.9


def test_the_parameters_are_the_fit_options_with_their_defaults():
    from dataclasses import MISSING, fields

    from skframe.automatic.options import TableOptions

    defaults = {f.name: f.default for f in fields(TableOptions) if f.default is not MISSING}
    own = TableModel().get_params()
    assert set(own) == set(PARAMS)
    for name in PARAMS:
        if name.endswith("_params"):  # TableOptions parses repeatable KEY=VALUE options into these dicts
            assert own[name] is None
            continue
        assert own[name] == defaults[name], name


def test_arrays_and_a_bare_estimator_file(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(80, 3)) * [1, 50, 0.1]
    y = X[:, 0] + X[:, 1] / 50 + 0.05 * rng.normal(size=80)
    model = TableModel(holdout=0).fit(X, y)
    assert model.decisions_["scale"]["method"] == "standard"
    assert model.predict(X).shape == (80,)
    skframe.save(model.estimator_, tmp_path / "bare.skf")
    assert not isinstance(skframe.load(tmp_path / "bare.skf"), TableModel)


def test_a_file_written_before_the_table_model_loads_as_one(tmp_path):
    """A model file of ``skframe fit`` from before TableModel (no ``options``, no ``decisions`` in its state)."""
    from skframe.automatic.table_model import save_state
    from skframe.persistence import load_bundle

    path, frame, target, _ = write("binary", tmp_path)
    _cli("fit", path, "--model-out", tmp_path / "new.skf", "--json")
    estimator, state = load_bundle(tmp_path / "new.skf")
    old = {k: v for k, v in state.items() if k not in ("options", "decisions")}
    save_state(estimator, old, tmp_path / "old.skf")
    model = skframe.load(tmp_path / "old.skf")
    assert isinstance(model, TableModel) and model.task_ == "machine" and model.report_ is None
    assert set(model.predict(frame.drop(columns=[target]))) <= {"yes", "no"}
    assert (model.predict(path) == skframe.load(tmp_path / "new.skf").predict(path)).all()
