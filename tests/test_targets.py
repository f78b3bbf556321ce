"""Which column is the target (skframe.preprocessing.targets) and row indexes by their values (TableEncoder)."""

import json

import numpy as np
import pytest

from skframe.exceptions import InvalidInputError, InvalidParameterError
from skframe.preprocessing import TableEncoder, check_target, one_class_warning, predicted_counts, suggest_targets
from skframe.preprocessing.targets import identifier_reason


def _table(n=40, seed=0):
    rng = np.random.default_rng(seed)
    names = ["rooms", "Price", "colour", "note", "flat", "case"]
    columns = [rng.integers(1, 6, n).astype(float), rng.uniform(50, 500, n),
               rng.choice(["red", "blue"], n).astype(object), np.array([f"free text {i}" for i in range(n)], object),
               np.ones(n), np.array([f"C{1000 + i}" for i in range(n)], dtype=object)]
    return names, columns


# ------------------------------------------------------------------------------------------- index by values
@pytest.mark.parametrize("start", [0, 1])
def test_a_shuffled_first_column_of_an_array_is_a_row_index(start):
    rng = np.random.default_rng(0)
    n = 30
    X = np.column_stack([rng.permutation(n) + start, rng.normal(size=n), rng.normal(size=n)])
    enc = TableEncoder().fit(X)
    assert [c["type"] for c in enc.columns_] == ["index", "numeric", "numeric"]
    assert f"a permutation of {start}..{n - 1 + start}" in enc.columns_[0]["reason"]
    # a held-out part of the table: its index is a subset of the rows, not a permutation; still left out
    part = X[:7]
    np.testing.assert_array_equal(enc.transform(part), part[:, 1:])
    again = TableEncoder.from_dict(json.loads(json.dumps(enc.to_dict())))  # saved with a model
    np.testing.assert_array_equal(again.transform(part), part[:, 1:])
    assert TableEncoder(column_types={"x0": "numeric"}).fit(X).columns_[0]["type"] == "numeric"


@pytest.mark.parametrize("first", [
    np.r_[1, 2, 4, np.arange(5, 22)],  # a gap: not 1..n
    np.r_[np.arange(1, 10), 9.0, np.arange(11, 21)],  # a repeat
    np.arange(20) + 0.5,  # not whole numbers
])
def test_a_first_column_that_is_no_permutation_is_kept(first):
    X = np.column_stack([first, np.linspace(0, 1, first.size)])
    assert TableEncoder().fit(X).columns_[0]["type"] == "numeric"
    small = np.column_stack([np.arange(5), np.ones(5)])  # too few rows to tell by the values alone
    assert TableEncoder().fit(small).columns_[0]["type"] == "numeric"
    later = np.column_stack([np.linspace(0, 1, 20), np.random.default_rng(1).permutation(20)])
    assert TableEncoder().fit(later).columns_[1]["type"] == "numeric"  # only the first column of an array


@pytest.mark.parametrize("name", ["", "Unnamed: 0", "rownames", "ROWNAMES", "index", "ID", "Unnamed: 0.1"])
def test_a_named_index_is_left_out_in_any_row_order(name):
    rng = np.random.default_rng(2)
    X = {name: rng.permutation(25) + 1, "a": rng.normal(size=25)}
    enc = TableEncoder().fit(X)
    assert [c["type"] for c in enc.columns_] == ["index", "numeric"]
    assert "a permutation of 1..25" in enc.columns_[0]["reason"]


def test_a_named_column_of_distinct_whole_numbers_is_left_out():
    labels = np.random.default_rng(9).choice(10**6, 25, replace=False)  # R's row names as case numbers
    enc = TableEncoder().fit({"rownames": labels, "a": np.linspace(0, 1, 25)})
    assert enc.columns_[0]["type"] == "index" and "25 distinct whole numbers" in enc.columns_[0]["reason"]
    kept = TableEncoder().fit({"rownames": np.r_[labels[:-1], labels[0]], "a": np.linspace(0, 1, 25)})
    assert kept.columns_[0]["type"] == "numeric"  # a value seen twice: not row labels


# ------------------------------------------------------------------------------------------------- targets
def test_an_identifier_last_column_is_refused_with_plausible_targets():
    names, columns = _table()
    with pytest.raises(InvalidInputError) as err:
        check_target(names, columns, [5])
    msg = str(err.value)
    assert "the last column 'case' is not a target (40 distinct values in 40 rows: an identifier)" in msg
    # Price is named as targets are; then from the right: constant 'flat' and free text 'note' are not offered
    assert msg.endswith("name the target with --target Price, --target colour or --target rooms")
    assert err.value.column == "case" and err.value.suggestions == ["Price", "colour", "rooms"]
    # named on purpose (--target), an identifier is the user's choice: only the class limit applies
    assert check_target(names, columns, [5], chosen="--target", max_classes=40)["classes"] == 40


@pytest.mark.parametrize("values, name", [
    (np.random.default_rng(3).permutation(40) + 1.0, "n"),  # a shuffled row number
    (np.arange(1000.0, 1040.0), "x"),  # a running number from 1000
    (np.random.default_rng(4).choice(10**6, 40, replace=False).astype(float), "case_id"),  # named as an id
    (np.random.default_rng(4).choice(10**6, 40, replace=False).astype(float), "CaseID"),
])
def test_a_numeric_identifier_last_column_is_refused(values, name):
    names, columns = _table()
    with pytest.raises(InvalidInputError, match=f"the last column '{name}' is not a target .*an identifier"):
        check_target(names[:3] + [name], columns[:3] + [values], [3])
    assert check_target(names[:3] + [name], columns[:3] + [values], [3], task="regression",
                        chosen="--target")["names"] == [name]


def test_numbers_that_are_no_identifier_are_targets():
    rng = np.random.default_rng(5)
    prices = rng.choice(10**6, 40, replace=False).astype(float)  # all distinct whole numbers: prices in cents
    assert identifier_reason("price", prices) is None
    assert identifier_reason("y", rng.normal(size=40)) is None
    assert identifier_reason("code", np.arange(10.0)) is None  # too few rows to tell


def test_too_many_classes_are_refused_with_the_option_that_raises_the_limit():
    rng = np.random.default_rng(6)
    labels = rng.choice([f"k{i}" for i in range(12)], 200).astype(object)
    names, columns = ["a", "b", "label"], [rng.normal(size=200), rng.normal(size=200), labels]
    with pytest.raises(InvalidInputError, match=r"12 distinct values in 200 rows: more classes than the limit of "
                                                r"10.*--max-classes 12") as err:
        check_target(names, columns, [2], chosen="--target", max_classes=10)
    assert "cannot be fitted as classes" in str(err.value)
    assert check_target(names, columns, [2], max_classes=12)["classes"] == 12
    numbers = np.arange(200.0) % 60
    with pytest.raises(InvalidInputError, match="60 distinct numbers.*--task regression"):
        check_target(["a", "y"], [columns[0], numbers], [1], task="classification")
    assert check_target(["a", "y"], [columns[0], numbers], [1], task="auto")["classes"] is None  # numbers
    with pytest.raises(InvalidParameterError, match="max_classes=1"):
        check_target(names, columns, [2], max_classes=1)


def test_suggestions_skip_indexes_identifiers_and_look_from_the_right():
    rng = np.random.default_rng(7)
    names = ["rownames", "a", "b", "tag", "c"]
    columns = [rng.permutation(30) + 1, rng.normal(size=30), rng.normal(size=30),
               np.array([f"t{i}" for i in range(30)], dtype=object), rng.normal(size=30)]
    assert suggest_targets(names, columns, exclude=[4]) == ["b", "a"]
    assert suggest_targets(names, columns, exclude=[4], k=1) == ["b"]


def test_a_classifier_that_predicts_one_class_is_named():
    counts = predicted_counts(np.array(["no"] * 30))
    assert counts == {"no": 30}
    line = one_class_warning(counts, 0.5, "held-out rows")
    assert line.startswith("predicts only 'no' on the 30 held-out rows; balanced accuracy 0.50")
    assert "--class-weight balanced" in line
    assert one_class_warning(predicted_counts([1.0, 2.0, 2.0]), 0.7) is None
    assert predicted_counts([1.0, 2.0, 2.0]) == {"2": 2, "1": 1}


def test_the_classifier_refuses_more_classes_than_max_classes():
    from skframe.models import SketchedKernelClassifier

    X = np.random.default_rng(8).normal(size=(40, 2))
    y = np.arange(40) % 5
    with pytest.raises(InvalidInputError, match="y holds 5 classes, more than max_classes=3"):
        SketchedKernelClassifier(max_classes=3).fit(X, y)
    assert SketchedKernelClassifier(max_classes=5, sketch_size=10, random_state=0).fit(X, y).classes_.size == 5


def test_dates_written_day_first_are_read():
    X = {"d": np.array(["17/05/2024", "18/05/2024", "19/06/2024"], dtype=object)}
    days = TableEncoder().fit_transform(X)[:, 0]
    np.testing.assert_allclose(days - days[0], [0.0, 1.0, 33.0])


def test_row_index_keep_reads_a_row_number_column_as_numbers():
    """A precomputed kernel's features are row numbers: ``row_index="keep"`` reads them, ``"drop"`` leaves them out."""
    import numpy as np

    from skframe.preprocessing import TableEncoder

    table = {"id": np.arange(12.0)[::-1], "x": np.linspace(0, 1, 12)}
    assert TableEncoder().fit(table).used_columns == ["x"]
    kept = TableEncoder(row_index="keep").fit(table)
    assert kept.used_columns == ["id", "x"]
    assert TableEncoder.from_dict(kept.to_dict()).row_index == "keep"


def test_text_in_a_numeric_column_of_new_data_is_a_missing_number_said_in_a_warning():
    import numpy as np
    import pytest

    from skframe.exceptions import DegenerateDataWarning
    from skframe.preprocessing import TableEncoder

    enc = TableEncoder().fit({"cyl": np.array(["4", "6", "8", "4"], dtype=object), "x": np.arange(4.0)})
    with pytest.warns(DegenerateDataWarning, match="'rotary'.*read as missing"):
        Z = enc.transform({"cyl": np.array(["rotary", "6"], dtype=object), "x": np.arange(2.0)})
    assert np.isnan(Z[0, 0]) and Z[1, 0] == 6.0
