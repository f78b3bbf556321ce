"""Choosing columns by name or position (skframe.io.columns) in every reader, and the hints for a column of text."""

import numpy as np
import pytest

from skframe.exceptions import DataFormatError, InvalidParameterError
from skframe.io import Columns, column_names, iter_chunks, load_dataset, save_dataset, scan_file
from skframe.io.columns import looks_like_smiles

ROWS = [[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0]]


@pytest.fixture
def headed(tmp_path):
    p = tmp_path / "h.csv"
    p.write_text("a,region,b,y\n1,north,2,3\n4,south,5,6\n7,east,8,9\n")
    return p


def test_drop_a_text_column_by_name_and_the_last_kept_column_is_the_target(headed):
    ds = load_dataset(headed, drop=["region"])
    assert ds.feature_names == ["a", "b"] and ds.target_names == ["y"]
    np.testing.assert_array_equal(ds.X, [[1, 2], [4, 5], [7, 8]])
    np.testing.assert_array_equal(ds.Y, [[3], [6], [9]])


def test_columns_and_target_columns_choose_and_order(headed):
    ds = load_dataset(headed, columns=["b", "a"], target_columns="y")
    assert ds.feature_names == ["b", "a"]
    np.testing.assert_array_equal(ds.X[:, 0], [2, 5, 8])
    ds = load_dataset(headed, columns="a", target_columns=["b", "y"])  # comma-separated text works too
    assert ds.feature_names == ["a"] and ds.target_names == ["b", "y"]
    np.testing.assert_array_equal(ds.Y, [[2, 3], [5, 6], [8, 9]])


def test_the_same_choice_in_blocks_and_scans(headed):
    whole = load_dataset(headed, drop="region")
    blocks = list(iter_chunks(headed, rows=2, drop="region"))
    np.testing.assert_array_equal(np.vstack([b[0] for b in blocks]), whole.X)
    np.testing.assert_array_equal(np.vstack([b[1] for b in blocks]), whole.Y)
    assert scan_file(headed, drop="region") == {"format": "csv", "n_rows": 3, "n_features": 2, "n_targets": 1}


def test_positions_from_zero_in_python_and_from_one_when_asked(tmp_path):
    p = tmp_path / "n.csv"
    np.savetxt(p, ROWS, delimiter=",")
    a = load_dataset(p, columns=[2, 0], target_columns=[3])
    b = load_dataset(p, columns=Columns(features=("3", "1"), targets=("4",), base=1))
    for ds in (a, b):
        np.testing.assert_array_equal(ds.X, [[3, 1], [7, 5], [11, 9]])
        np.testing.assert_array_equal(ds.Y, [[4], [8], [12]])


def test_a_text_column_of_a_file_without_header_can_be_dropped_by_position(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("1,north,2,3\n4,south,5,6\n")
    with pytest.raises(DataFormatError, match=r"--drop 2"):
        load_dataset(p)
    ds = load_dataset(p, drop=[1])
    np.testing.assert_array_equal(ds.X, [[1, 2], [4, 5]])


def test_messages_name_the_unknown_column_and_the_conflicts(headed, tmp_path):
    with pytest.raises(InvalidParameterError, match=r"no column named 'price'.*'a', 'region', 'b', 'y'"):
        load_dataset(headed, target_columns="price")
    with pytest.raises(InvalidParameterError, match=r"'y' is chosen as a feature but is a target"):
        load_dataset(headed, columns=["a", "y"], drop="region")
    with pytest.raises(InvalidParameterError, match=r"both a feature and dropped"):
        load_dataset(headed, columns=["a", "b"], drop=["a", "region"])
    with pytest.raises(InvalidParameterError, match=r"4 columns, at positions 0 to 3"):
        load_dataset(headed, drop=[7])
    p = tmp_path / "n.csv"
    np.savetxt(p, ROWS, delimiter=",")
    with pytest.raises(InvalidParameterError, match=r"no header row.*'a' is not one"):
        load_dataset(p, drop="a")


def test_a_text_cell_gets_the_drop_hint_and_the_smiles_hint_only_for_smiles(tmp_path):
    p = tmp_path / "r.csv"
    p.write_text("a,region,y\n1,north,3\n")
    with pytest.raises(DataFormatError) as err:
        load_dataset(p)
    msg = str(err.value)
    assert "column 2 ('region')" in msg and "--drop region" in msg and "SMILES" not in msg
    p.write_text("a,mol,y\n1,CCO,3\n")
    with pytest.raises(DataFormatError, match=r"--drop mol.*--inputs smiles --input-column mol"):
        load_dataset(p)


def test_looks_like_smiles():
    assert all(map(looks_like_smiles, ["CCO", "c1ccccc1", "C[C@H](N)C(=O)O", "[Na+].[Cl-]", "ClCCBr"]))
    assert not any(map(looks_like_smiles, ["north", "Paris", "high", "yes", "", "C C", "1.5e3", "category_3"]))


def test_arff_attributes_by_name_and_a_string_attribute_left_out(tmp_path):
    p = tmp_path / "d.arff"
    p.write_text("@relation r\n@attribute a numeric\n@attribute title string\n@attribute b numeric\n"
                 "@attribute 0 {0,1}\n@data\n1,'x y',2,1\n3,'z',4,0\n{0 5,2 6}\n")
    with pytest.raises(DataFormatError, match=r"'title' has type 'string'.*--drop title"):
        load_dataset(p)
    ds = load_dataset(p, drop="title")
    assert ds.feature_names == ["a", "b"] and ds.target_names == ["0"]
    np.testing.assert_array_equal(ds.X.toarray() if hasattr(ds.X, "toarray") else ds.X, [[1, 2], [3, 4], [5, 6]])
    ds = load_dataset(p, columns=["b"], target_columns="0", drop="title")  # "0" is a name here, not a position
    np.testing.assert_array_equal(ds.Y.ravel(), [1, 0, 0])
    assert column_names(p) == ["a", "title", "b", "0"]


def test_npz_npy_and_libsvm_files_choose_columns_too(tmp_path):
    X, Y = np.asarray(ROWS)[:, :3], np.asarray(ROWS)[:, 3:]
    save_dataset(tmp_path / "d.npz", X, Y, feature_names=["a", "b", "c"], target_names=["y"])
    ds = load_dataset(tmp_path / "d.npz", columns=["c", "a"])
    np.testing.assert_array_equal(ds.X, X[:, [2, 0]])
    assert column_names(tmp_path / "d.npz") == ["a", "b", "c", "y"]
    np.save(tmp_path / "d.npy", np.asarray(ROWS))
    ds = load_dataset(tmp_path / "d.npy", drop=[1])
    np.testing.assert_array_equal(ds.X, X[:, [0, 2]])
    np.testing.assert_array_equal(ds.Y, Y)
    blocks = list(iter_chunks(tmp_path / "d.npy", rows=2, drop=[1]))
    np.testing.assert_array_equal(np.vstack([b[0] for b in blocks]), X[:, [0, 2]])
    (tmp_path / "d.svm").write_text("4 1:1 2:2 3:3\n8 1:5 2:6 3:7\n")
    ds = load_dataset(tmp_path / "d.svm", drop=[0])
    np.testing.assert_array_equal(ds.X.toarray() if hasattr(ds.X, "toarray") else ds.X, [[2, 3], [6, 7]])
    assert column_names(tmp_path / "d.svm") is None and column_names(tmp_path / "d.npy") is None


def test_column_names_of_csv_files(tmp_path, headed):
    assert column_names(headed) == ["a", "region", "b", "y"]
    p = tmp_path / "n.csv"
    np.savetxt(p, ROWS, delimiter=",")
    assert column_names(p) is None


def test_missing_cells_in_a_dropped_column_do_not_count(tmp_path):
    p = tmp_path / "m.csv"
    p.write_text("a,b,y\n1,?,3\n4,5,6\n")
    ds = load_dataset(p, drop="b")
    assert ds.n_missing == 0 and ds.X.shape == (2, 1)
