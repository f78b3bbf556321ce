"""Raw tables on the command line: typed columns, any format gives the same model, problems at once, --holdout."""

import gzip
import json

import numpy as np
import pytest
from typer.testing import CliRunner

from skframe.cli import app

runner = CliRunner()
CITIES = np.array(["Paris", "Lyon", "Nice", "Lille"])


def _ok(*args):
    res = runner.invoke(app, [str(a) for a in args])
    assert res.exit_code == 0, res.output
    return res


def _json(*args):
    out = _ok(*args, "--json").stdout
    return json.loads(out[out.find("{"):])


def _error(*args):
    res = runner.invoke(app, [str(a) for a in args])
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), res.stderr
    return lines[0]


def _rows(n, seed):
    rng = np.random.default_rng(seed)
    city = rng.choice(CITIES, size=n).astype(object)
    city[rng.uniform(size=n) < 0.05] = ""
    sold = (np.datetime64("2020-01-01") + rng.integers(0, 900, size=n)).astype(str)
    area = rng.uniform(20, 200, size=n)
    rooms = rng.integers(1, 7, size=n).astype(float)
    factor = np.array([{"Paris": 9.0, "Lyon": 5.0, "Nice": 6.0, "Lille": 3.0}.get(c, 5.0) for c in city])
    price = factor * area + 3.0 * rooms + rng.normal(scale=5.0, size=n)
    ids = [f"h{seed}-{i}" for i in range(n)]
    return {"id": ids, "city": city, "sold": sold, "area": area, "rooms": rooms, "price": price}


def _write(folder, name, cols, kind):
    names = list(cols)
    n = len(cols["price"])

    def cell(name, i, decimal="."):
        v = cols[name][i]
        return repr(float(v)).replace(".", decimal) if isinstance(v, float) else str(v)

    path = folder / name
    if kind == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        arrays = {k: pa.array([None if v == "" else v for v in cols[k]]) if k in ("id", "city") else
                  pa.array(np.asarray(cols[k], dtype="datetime64[D]")) if k == "sold" else pa.array(cols[k])
                  for k in names}
        pq.write_table(pa.table(arrays), path)
        return path
    sep, decimal = (";", ",") if kind == "semicolon" else (",", ".")
    text = sep.join(names) + "\n" + "".join(sep.join(cell(k, i, decimal) for k in names) + "\n" for i in range(n))
    if kind == "gzip":
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tables")
    train, test = _rows(240, 0), _rows(80, 1)
    test["city"][0] = "Rennes"  # a category the training file lacks
    kinds = {"csv": ".csv", "semicolon": ".semi.csv", "gzip": ".csv.gz"}
    try:
        import pyarrow  # noqa: F401

        kinds["parquet"] = ".parquet"
    except ImportError:
        pass
    files = {k: (_write(folder, "train" + ext, train, k), _write(folder, "test" + ext, test, k))
             for k, ext in kinds.items()}
    return folder, files


def test_columns_are_typed_and_reported(tables):
    _, files = tables
    rep = _json("fit", *files["csv"][:1], "--test", files["csv"][1])
    types = {c["name"]: (c["type"], c["features"]) for c in rep["data"]["column_types"]}
    assert types == {"id": ("text", 0), "city": ("categorical", 5), "sold": ("date", 4), "area": ("numeric", 1),
                     "rooms": ("numeric", 1)}
    assert rep["n_features"] == 11 and rep["evaluated_on"] == "test" and rep["metrics"]["r2"] > 0.9
    assert rep["data"]["unknown_categories_test"] == {"city": 1}
    out = _ok("fit", files["csv"][0], "--test", files["csv"][1]).stdout
    assert "identifier-like" in out and "categorical" in out and "delimiter=," in out


def test_every_format_gives_the_same_model(tables):
    folder, files = tables
    predictions = {}
    for kind, (train, test) in files.items():
        model = folder / f"{kind}.skf"
        rep = _json("fit", train, "--test", test, "--model-out", model)
        assert rep["data"]["read"]["format"] == ("parquet" if kind == "parquet" else "csv")
        out = _ok("predict", model, test).stdout.splitlines()
        predictions[kind] = np.array([float(v) for v in out[1:]])
        ev = _json("evaluate", model, test)
        assert ev["metrics"]["r2"] == pytest.approx(rep["metrics"]["r2"], rel=1e-12)
    assert files["semicolon"] and _json("fit", *files["semicolon"][:1])["data"]["read"]["decimal"] == ","
    for kind, P in predictions.items():
        np.testing.assert_array_equal(P, predictions["csv"], err_msg=kind)
    # a model fitted on one format predicts another: the encoding matches columns by name
    cross = _ok("predict", folder / "semicolon.skf", files["csv"][1]).stdout.splitlines()
    np.testing.assert_array_equal([float(v) for v in cross[1:]], predictions["csv"])


def test_unknown_categories_are_counted_at_prediction(tables):
    folder, files = tables
    model = folder / "unknown.skf"
    _ok("fit", files["csv"][0], "--model-out", model)
    res = runner.invoke(app, ["predict", str(model), str(files["csv"][1])])
    assert res.exit_code == 0 and "city: 1" in res.stderr
    assert _json("evaluate", model, files["csv"][1])["unknown_categories"] == {"city": 1}


def test_column_types_override_and_delimiter(tables):
    _, files = tables
    rep = _json("fit", files["csv"][0], "--column-types", "rooms=categorical,sold=text")
    types = {c["name"]: c["type"] for c in rep["data"]["column_types"]}
    assert types["rooms"] == "categorical" and types["sold"] == "text"
    err = _error("fit", files["csv"][0], "--column-types", "price=categorical")
    assert "not a feature column" in err
    err = _error("fit", files["semicolon"][0], "--delimiter", ",")  # decimal commas split the rows
    assert "line 2: 4 fields but 1 expected" in err and "--delimiter" in err
    assert _json("fit", files["semicolon"][0], "--delimiter", ";")["data"]["read"]["delimiter"] == ";"


def test_every_problem_is_listed_in_one_line(tmp_path):
    path = tmp_path / "bad.csv"
    rows = ["a,b,c,y"] + [f"{i if i != 4 else ''},{i % 3 if i != 7 else 'seven'},x{i % 2},{'high' if i % 2 else 1.5}"
                          for i in range(40)]
    path.write_text("\n".join(rows) + "\n")
    err = _error("fit", path)
    assert "3 problems" in err and "1 missing number(s) (in 'a'): choose --missing" in err
    assert "'b' holds numbers and 1 cell(s) of text such as 'seven' (line 9)" in err
    assert "target column 'y' holds text such as 'high' (line 3)" in err


def test_holdout_metrics_and_the_model_kept(tables):
    folder, files = tables
    train = files["csv"][0]
    rep = _json("fit", train, "--model-out", folder / "h.skf")
    assert rep["evaluated_on"] == "holdout" and rep["n_test"] == 48 and rep["data"]["holdout"]["rows"] == 48
    again = _json("fit", train, "--holdout", "0", "--model-out", folder / "all.skf")
    assert again["evaluated_on"] == "train" and again["n_test"] == 0
    assert rep["metrics"]["r2"] != again["metrics"]["r2"]
    p1 = _ok("predict", folder / "h.skf", files["csv"][1]).stdout
    p2 = _ok("predict", folder / "all.skf", files["csv"][1]).stdout
    assert p1 == p2  # the model kept is fitted on every row either way
    assert "held-out training rows" in _ok("fit", train).stdout
    assert _error("fit", train, "--holdout", "1.5").count("--holdout") == 1


@pytest.mark.parametrize("head, name", [("", "unnamed1"), ("rownames", "rownames")])
def test_the_row_index_pandas_writes_is_left_out(tmp_path, head, name):
    # DataFrame.to_csv() with its default index: a blank first header cell, then 0, 1, 2, ... down the rows (R's
    # row names as exported by some tools: "rownames"); the rows sorted by the target, so an index used as a
    # feature would predict it
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    y = np.sort(X[:, 0] + 0.1 * rng.normal(size=200))
    cells = zip(X[:, 0], X[:, 1], y)
    rows = "\n".join(f"{i},{float(a)!r},{float(b)!r},{float(t)!r}" for i, (a, b, t) in enumerate(cells))
    train = tmp_path / "train.csv"
    train.write_text(f"{head},a,b,y\n" + rows + "\n")
    new = tmp_path / "new.csv"
    new_rows = "\n".join(f"{i},{float(a)!r},{float(b)!r}" for i, (a, b) in enumerate(X[:5]))
    new.write_text(f"{head},a,b\n" + new_rows + "\n")
    model = tmp_path / "m.skf"
    rep = _json("fit", train, "--model-out", model, "--lam", "1e-3")
    types = {c["name"]: (c["type"], c["features"]) for c in rep["data"]["column_types"]}
    assert types == {name: ("index", 0), "a": ("numeric", 1), "b": ("numeric", 1)}
    assert rep["n_features"] == 2
    assert "row numbers 0..199" in _ok("fit", train, "--lam", "1e-3").stdout
    out = _ok("predict", model, new).stdout.splitlines()
    assert len(out) == 6  # a header and one prediction per row
    kept = _json("fit", train, "--column-types", f"{name}=numeric", "--lam", "1e-3")
    assert kept["n_features"] == 3


def test_a_table_whose_every_feature_is_left_out_says_so(tmp_path):
    path = tmp_path / "names.csv"
    path.write_text("name,y\n" + "\n".join(f"person{i},{i % 3}.5" for i in range(40)) + "\n")
    line = _error("fit", path)
    assert "no feature column is left to fit" in line and "name: identifier-like" in line
    assert "--column-types NAME=numeric" in line
