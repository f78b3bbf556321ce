"""A model file of a raw table edited with its checksums: its table encoding, its class labels (text), the
classifier's classes and calibration map are checked when it is loaded; each is refused in one line (exit 2, no
traceback), never a traceback, NaN probabilities or ``y0,y1`` headers with exit 0."""

import numpy as np
import pytest
from typer.testing import CliRunner

from skframe.cli import app
from skframe.persistence.file_format import describe_array, read_model_file, write_model_file

runner = CliRunner()


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    """A classifier of text labels on a table with a number, a category and day-first dates (fixed seed)."""
    folder = tmp_path_factory.mktemp("tampered")
    rng = np.random.default_rng(0)
    n = 120
    x = rng.normal(size=n)
    days = np.datetime64("2024-01-01") + rng.integers(0, 300, size=n)
    rows = []
    for i in range(n):
        d = days[i].astype(object)
        rows.append(f"{x[i]:.4f},{'ab'[i % 2]},{d.day:02d}/{d.month:02d}/{d.year},{'cat' if x[i] < 0 else 'dog'}")
    data = folder / "pets.csv"
    data.write_text("x,c,sold,y\n" + "\n".join(rows) + "\n")
    model = folder / "m.skf"
    res = runner.invoke(app, ["fit", str(data), "--model-out", str(model)])
    assert res.exit_code == 0, res.output
    return folder, model, data


def _encoding(manifest):
    return manifest["extra"]["__dict__"]["encoding"]["__dict__"]


def _column(manifest, k):
    return _encoding(manifest)["columns"]["__list__"][k]["__dict__"]


def _params(manifest):
    return _encoding(manifest)["params"]["__dict__"]


def _calibration(manifest):
    return manifest["model"]["state"]["__dict__"]["calibration_"]["__dict__"]


def _classes_key(manifest):
    return manifest["model"]["state"]["__dict__"]["classes_"]["__array__"]


def _set_classes(values):
    def edit(manifest, arrays):
        arrays[_classes_key(manifest)] = np.array(values)
    return edit


def _floats(*values):
    return {"__list__": [{"__float__": repr(float(v))} for v in values], "tuple": False}


EDITS = {
    # the table encoding (TableEncoder.from_dict, inside the load guard)
    "encoding not a mapping": (lambda m, a: m["extra"]["__dict__"].update(encoding="x"), "not a table encoding"),
    "encoding version 2": (lambda m, a: _encoding(m).update(version=2), "not a table encoding"),
    "columns not a list": (lambda m, a: _encoding(m).update(columns=5), "not a table encoding"),
    "params not a mapping": (lambda m, a: _encoding(m).update(params="x"), "params is 'x'"),
    "unknown param": (lambda m, a: _params(m).update(colour=1), "params names 'colour'"),
    "max_categories": (lambda m, a: _params(m).update(max_categories=-1), "max_categories is -1"),
    "column_types": (lambda m, a: _params(m).update(column_types={"__dict__": {"c": "weird"}}), "column_types"),
    "row_index": (lambda m, a: _params(m).update(row_index="maybe"), "row_index is 'maybe'"),
    "column not a mapping": (lambda m, a: _encoding(m)["columns"]["__list__"].__setitem__(0, 7), "column 0 is 7"),
    "name not text": (lambda m, a: _column(m, 0).update(name=5), "column 0 is named 5"),
    "unknown type": (lambda m, a: _column(m, 0).update(type="weird"), "the type 'weird'"),
    "no reason": (lambda m, a: _column(m, 0).pop("reason"), "the reason None"),
    "categories not a list": (lambda m, a: _column(m, 1).update(categories=5), "the categories 5"),
    "no categories": (lambda m, a: _column(m, 1).update(categories={"__list__": [], "tuple": False}),
                      "the categories []"),
    "a category twice": (lambda m, a: _column(m, 1).update(categories={"__list__": ["a", "a"], "tuple": False}),
                         "names a category twice"),
    "categories not text": (lambda m, a: _column(m, 1).update(categories={"__list__": [1, 2], "tuple": False}),
                            "the categories [1, 2]"),
    "date format": (lambda m, a: _column(m, 2).update(date_format="%Q"), "the date format '%Q'"),
    "no date format": (lambda m, a: _column(m, 2).pop("date_format"), "the date format None"),
    "a name twice": (lambda m, a: _column(m, 1).update(name="x"), "column 'x' is named twice"),
    # the class labels kept as text beside the model
    "one label": (lambda m, a: m["extra"]["__dict__"].update(classes={"__list__": ["cat"], "tuple": False}),
                  "its class labels ['cat'] are not the model's classes"),
    "labels swapped": (lambda m, a: m["extra"]["__dict__"].update(classes={"__list__": ["dog", "cat"],
                                                                             "tuple": False}),
                       "its class labels ['dog', 'cat'] are not the model's classes"),
    "labels not text": (lambda m, a: m["extra"]["__dict__"].update(classes={"__list__": [1, 2], "tuple": False}),
                        "are not a list of texts"),
    # the classifier's own state
    "a class twice": (_set_classes(["cat", "cat"]), "a class named twice"),
    "one class": (_set_classes(["cat"]), "not two labels or more"),
    "NaN slope": (lambda m, a: _calibration(m).update(slope=_floats("nan")), "a calibration slope [nan]"),
    "negative slope": (lambda m, a: _calibration(m).update(slope=_floats(-1.0)), "a calibration slope [-1.0]"),
    "lapse 0.9": (lambda m, a: _calibration(m).update(lapse=_floats(0.9)), "a calibration lapse [0.9]"),
    "three slopes": (lambda m, a: _calibration(m).update(slope=_floats(1, 1, 1)), "a calibration slope of 3"),
    "offset not numbers": (lambda m, a: _calibration(m).update(offset="x"), "a calibration offset"),
}


@pytest.mark.parametrize("command", ["predict", "evaluate", "predict --proba"])
@pytest.mark.parametrize("edit", sorted(EDITS))
def test_a_tampered_model_file_is_refused_in_one_line(fitted, edit, command):
    folder, model, data = fitted
    mutate, fragment = EDITS[edit]
    manifest, arrays = read_model_file(model)
    mutate(manifest, arrays)
    manifest["arrays"] = {k: describe_array(v) for k, v in arrays.items()}
    bad = folder / f"bad-{abs(hash((edit, command)))}.skf"
    write_model_file(bad, manifest, arrays)
    args = command.split() + [str(bad), str(data)]
    if command.startswith("predict"):
        args.insert(1, args.pop(1))  # predict [--proba] MODEL DATA: the option may come first
    res = runner.invoke(app, args)
    lines = res.stderr.strip().splitlines()
    assert res.exit_code == 2 and len(lines) == 1 and lines[0].startswith("Error: "), (res.exit_code, res.output)
    assert bad.name in lines[0] and fragment in lines[0] and "fit the model again" in lines[0], lines[0]
    assert res.exception is None or isinstance(res.exception, SystemExit)


def test_the_untouched_file_predicts(fitted):
    folder, model, data = fitted
    res = runner.invoke(app, ["predict", "--proba", str(model), str(data)])
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines()[0] == "y=cat,y=dog"
    assert not np.isnan(np.loadtxt(res.stdout.splitlines()[1:], delimiter=",")).any()
