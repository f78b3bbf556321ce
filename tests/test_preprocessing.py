"""TableEncoder: column types, the encodings against plain NumPy formulas, problems in one message, saved as data."""

import json

import numpy as np
import pytest
from sklearn.pipeline import make_pipeline

from skframe.exceptions import InvalidInputError, InvalidParameterError
from skframe.preprocessing import MISSING_CATEGORY, TableEncoder, parse_column_types


def _table(n=60, seed=0):
    rng = np.random.default_rng(seed)
    city = rng.choice(["Paris", "Lyon", "Nice"], size=n).astype(object)
    city[::11] = ""  # missing categories
    days = rng.integers(0, 2000, size=n)
    sold = (np.datetime64("2019-03-01") + days).astype(str).astype(object)
    area = np.round(rng.uniform(20, 200, size=n), 2).astype(str).astype(object)
    area[5] = "?"
    ident = np.array([f"id{i:04d}" for i in range(n)], dtype=object)
    words = np.array([f"note {i} {rng.integers(10**6)}" for i in range(n)], dtype=object)
    X = np.column_stack([city, sold, area, ident, words])
    return X, days


def test_types_are_detected_and_reported():
    X, _ = _table()
    enc = TableEncoder().fit(X)
    assert [c["type"] for c in enc.columns_] == ["categorical", "date", "numeric", "text", "text"]
    assert enc.columns_[0]["categories"] == ["Lyon", "Nice", "Paris", MISSING_CATEGORY]
    assert "identifier-like" in enc.columns_[3]["reason"] and enc.used_columns == ["x0", "x1", "x2"]
    assert [r["features"] for r in enc.summary()] == [4, 4, 1, 0, 0]


def test_encoding_matches_plain_numpy_formulas():
    X, days = _table()
    enc = TableEncoder().fit(X)
    Z = enc.transform(X)
    assert Z.shape == (X.shape[0], 9)
    cats = ["Lyon", "Nice", "Paris", MISSING_CATEGORY]
    labels = np.where(X[:, 0] == "", MISSING_CATEGORY, X[:, 0])
    np.testing.assert_array_equal(Z[:, :4], (labels[:, None] == np.array(cats)[None, :]).astype(float))
    stamp = np.datetime64("2019-03-01") + days
    np.testing.assert_array_equal(Z[:, 4], (stamp - np.datetime64("1970-01-01")).astype(float))
    np.testing.assert_array_equal(Z[:, 5], [int(str(s)[:4]) for s in stamp])
    np.testing.assert_array_equal(Z[:, 6], [int(str(s)[5:7]) for s in stamp])
    import datetime

    np.testing.assert_array_equal(Z[:, 7], [datetime.date.fromisoformat(str(s)).weekday() for s in stamp])
    area = np.array([np.nan if a == "?" else float(a) for a in X[:, 2]])
    np.testing.assert_array_equal(Z[:, 8], area)
    assert list(enc.get_feature_names_out()[:5]) == ["x0=Lyon", "x0=Nice", "x0=Paris", f"x0={MISSING_CATEGORY}",
                                                     "x1.days"]


def test_unknown_categories_give_zeros_and_are_counted():
    X, _ = _table()
    enc = TableEncoder().fit(X)
    new = X[:4].copy()
    new[0, 0] = "Rennes"
    new[1, 0] = "Rennes"
    Z = enc.transform(new)
    assert np.all(Z[:2, :4] == 0) and enc.unknown_counts_ == {"x0": 2}


def test_saved_as_json_data_and_rebuilt_exactly():
    X, _ = _table()
    enc = TableEncoder(column_types={"x3": "categorical"}).fit(X)
    state = json.loads(json.dumps(enc.to_dict()))
    again = TableEncoder.from_dict(state)
    np.testing.assert_array_equal(again.transform(X), enc.transform(X))
    assert again.columns_ == enc.columns_ and again.columns_[3]["type"] == "categorical"


def test_every_problem_column_is_listed_in_one_message():
    X, _ = _table()
    mixed = X[:, 2].copy()
    mixed[3] = "twelve"
    bad_dates = X[:, 0]
    with pytest.raises(InvalidInputError) as info:
        TableEncoder(column_types={"b": "date"}).fit({"a": mixed, "b": bad_dates, "c": X[:, 1]},
                                                     linenos=np.arange(2, 62))
    msg = str(info.value)
    assert len(info.value.problems) == 2 and "2 problems" in msg and "\n" not in msg
    assert "'a' holds numbers and 1 cell(s) of text such as 'twelve' (line 5)" in msg
    assert "--column-types a=categorical" in msg and "'b' was given as dates" in msg


def test_overrides_are_checked():
    assert parse_column_types(["a=categorical", "b=date,c=text"]) == {"a": "categorical", "b": "date",
                                                                       "c": "text"}
    with pytest.raises(InvalidParameterError, match="NAME=TYPE"):
        parse_column_types(["a=colour"])
    with pytest.raises(InvalidParameterError, match="not columns"):
        TableEncoder(column_types={"nope": "text"}).fit(_table()[0])


def test_numeric_and_datetime_arrays_and_a_pipeline():
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import Ridge

    rng = np.random.default_rng(1)
    cols = {"n": rng.normal(size=40), "d": np.datetime64("2020-01-01") + rng.integers(0, 400, 40),
            "c": rng.choice(["a", "b"], size=40).astype(object)}
    enc = TableEncoder().fit(cols)
    assert [c["type"] for c in enc.columns_] == ["numeric", "date", "categorical"]
    as_text = {"n": cols["n"].astype(str).astype(object), "d": cols["d"].astype(str).astype(object), "c": cols["c"]}
    np.testing.assert_array_equal(enc.transform(as_text), enc.transform(cols))
    X, _ = _table()
    y = np.arange(X.shape[0], dtype=float)
    pipe = make_pipeline(TableEncoder(), SimpleImputer(), Ridge()).fit(X, y)
    assert pipe.predict(X).shape == y.shape


@pytest.mark.parametrize("name", ["unnamed1", "unnamed2", "Unnamed: 0", "rownames"])
@pytest.mark.parametrize("cells", ["numbers", "text"])
def test_a_row_index_is_left_out(name, cells):
    # the row numbers pandas and R write first (here every other row kept: still increasing integers)
    rows = np.arange(1, 41, 2)
    index = rows if cells == "numbers" else rows.astype(str).astype(object)
    X = {name: index, "a": np.linspace(0.0, 1.0, 20)}
    enc = TableEncoder().fit(X)
    assert [c["type"] for c in enc.columns_] == ["index", "numeric"]
    assert "row numbers 1..39" in enc.columns_[0]["reason"]
    assert enc.used_columns == ["a"]
    np.testing.assert_array_equal(enc.transform(X), X["a"][:, None])
    again = TableEncoder.from_dict(json.loads(json.dumps(enc.to_dict())))  # saved with a model
    np.testing.assert_array_equal(again.transform(X), X["a"][:, None])
    kept = TableEncoder(column_types={name: "numeric"}).fit(X)  # the override keeps it
    assert kept.columns_[0]["type"] == "numeric"


@pytest.mark.parametrize("name, values", [
    ("t", np.arange(20)),  # a counter under a feature's name: a feature (a time step, say)
    ("unnamed1", np.r_[np.arange(10), np.arange(10)]),  # not increasing: not row numbers
    ("rownames", np.linspace(0.0, 1.0, 20)),  # not integers
])
def test_columns_that_only_look_like_an_index_are_kept(name, values):
    enc = TableEncoder().fit({name: values, "a": np.ones(20)})
    assert enc.columns_[0]["type"] == "numeric"


def test_fit_transform_reads_numbers_written_as_text_once_with_the_same_values():
    """``fit_transform`` equals ``fit`` then ``transform`` on a table of text cells (plain numbers, numbers with a
    missing marker, a category, a number column forced categorical), and keeps no parsed column in the encoder."""
    import pickle

    import numpy as np

    from skframe.preprocessing import TableEncoder

    rng = np.random.default_rng(3)
    n = 500
    table = {"a": np.array([repr(float(v)) for v in rng.normal(size=n)], dtype=object),
             "b": np.array([("NA" if i % 7 == 0 else f"{i / 3:.4f}") for i in range(n)], dtype=object),
             "c": np.array([("x", "y", "z")[i % 3] for i in range(n)], dtype=object),
             "d": np.array([str(i % 4) for i in range(n)], dtype=object)}
    one = TableEncoder(column_types={"d": "categorical"}).fit(table).transform(table)
    enc = TableEncoder(column_types={"d": "categorical"})
    both = enc.fit_transform(table)
    np.testing.assert_array_equal(np.isnan(one), np.isnan(both))
    np.testing.assert_array_equal(np.nan_to_num(one), np.nan_to_num(both))
    names = list(enc.get_feature_names_out())
    assert np.isnan(both[0, names.index("b")]) and both[1, names.index("a")] == float(table["a"][1])
    state = pickle.dumps(enc)
    assert len(state) < 20_000 and not any(isinstance(v, dict) and "a" in v for v in vars(enc).values())
