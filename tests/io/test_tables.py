"""Tables as people have them: compressed files by content, delimiters and decimal commas, Parquet and Arrow."""

import bz2
import gzip
import lzma

import numpy as np
import pytest

from skframe.exceptions import DataFormatError, InvalidParameterError
from skframe.io import column_names, load_dataset
from skframe.io.table import detect_delimiter, read_table, split_line


def _numbers(tmp_path, n=40, seed=0):
    rng = np.random.default_rng(seed)
    M = np.round(rng.normal(size=(n, 4)) * [1, 10, 100, 1000], 4)
    text = "a,b,c,y\n" + "".join(",".join(repr(float(v)) for v in row) + "\n" for row in M)
    path = tmp_path / "plain.csv"
    path.write_text(text)
    return path, text, M


@pytest.mark.parametrize("name, compress", [("d.csv.gz", gzip.compress), ("d.csv.bz2", bz2.compress),
                                            ("d.csv.xz", lzma.compress), ("data.bin", gzip.compress)])
def test_compressed_files_are_read_by_content(tmp_path, name, compress):
    plain, text, M = _numbers(tmp_path)
    path = tmp_path / name
    path.write_bytes(compress(text.encode()))
    ds, ref = load_dataset(path), load_dataset(plain)
    np.testing.assert_array_equal(ds.X, ref.X)
    np.testing.assert_array_equal(ds.Y, ref.Y)
    assert column_names(path) == ["a", "b", "c", "y"]
    assert read_table(path).info["compression"] == ("gzip" if "gz" in name or name.endswith(".bin") else
                                                    name.rsplit(".", 1)[1])


def test_a_corrupt_compressed_file_is_one_error(tmp_path):
    path = tmp_path / "bad.csv.gz"
    data = gzip.compress(bytes(range(256)) * 64)
    path.write_bytes(data[:len(data) // 2] + data[-8:])  # the middle cut out, the trailer kept
    with pytest.raises(DataFormatError, match="cannot be decompressed"):
        load_dataset(path)


@pytest.mark.parametrize("sep", [";", "\t", "|"])
def test_delimiters_and_decimal_commas(tmp_path, sep):
    plain, text, M = _numbers(tmp_path)
    decimal = "," if sep == ";" else "."
    body = text.replace(",", "\x00").replace(".", decimal).replace("\x00", sep)
    path = tmp_path / "sep.csv"
    path.write_text(body)
    table = read_table(path)
    assert table.info["delimiter"] == sep and table.info["decimal"] == decimal
    ds = load_dataset(path)
    np.testing.assert_array_equal(ds.X, load_dataset(plain).X)
    assert column_names(path) == ["a", "b", "c", "y"]


def test_delimiter_detection_and_quotes():
    assert detect_delimiter(["a;b;c", "1,5;2;3"]) == ";"
    assert detect_delimiter(["a,b", "1,2"]) == ","
    assert split_line('x;"a; b";3', ";") == ["x", "a; b", "3"]
    with pytest.raises(InvalidParameterError, match="delimiter"):
        read_table(__file__, delimiter=":", fmt="csv")


def test_a_row_with_too_many_fields_names_the_line_and_delimiter(tmp_path):
    path = tmp_path / "ragged.csv"
    path.write_text("a;b;y\n1;2;3\n1;2;3;4\n")
    with pytest.raises(DataFormatError, match=r"line 3: 4 fields but 3 expected .*semicolons"):
        read_table(path)


def test_parquet_and_feather_read_as_their_csv(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.feather as feather
    import pyarrow.parquet as pq

    plain, _, M = _numbers(tmp_path)
    table = pa.table({"a": M[:, 0], "b": M[:, 1], "c": M[:, 2], "y": M[:, 3]})
    pq.write_table(table, tmp_path / "d.parquet")
    feather.write_feather(table, tmp_path / "d.feather")
    ref = load_dataset(plain)
    for name in ("d.parquet", "d.feather"):
        ds = load_dataset(tmp_path / name)
        np.testing.assert_array_equal(ds.X, ref.X)
        np.testing.assert_array_equal(ds.Y, ref.Y)
        assert column_names(tmp_path / name) == ["a", "b", "c", "y"]
    (tmp_path / "noext").write_bytes((tmp_path / "d.parquet").read_bytes())
    assert read_table(tmp_path / "noext").info["format"] == "parquet"


def test_parquet_without_pyarrow_says_how_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv("SKFRAME_DISABLE_PYARROW", "1")
    path = tmp_path / "d.parquet"
    path.write_bytes(b"PAR1" + bytes(16) + b"PAR1")
    with pytest.raises(Exception, match="pyarrow"):
        read_table(path)


@pytest.mark.parametrize("token", ["NA", "N/A", "#N/A", "NULL", "?", ""])
def test_the_missing_markers_of_r_and_spreadsheets_are_missing_values(tmp_path, token):
    path = tmp_path / "t.csv"
    path.write_text(f"a,b,y\n1.5,{token},1\n2.5,3,2\n3.5,4,3\n")
    ds = load_dataset(path, targets=1, missing="mean")
    assert ds.n_missing == 1
    np.testing.assert_allclose(ds.X[0], [1.5, 3.5])


@pytest.mark.parametrize("first", ["", '""'])
def test_a_blank_first_header_cell_is_an_unnamed_index_column(tmp_path, first):
    # pandas' to_csv and R's write.csv write the row index first, under a blank name
    path = tmp_path / "indexed.csv"
    path.write_text(f"{first},a,b,y\n0,1.5,2.0,0\n1,2.5,3.0,1\n2,0.5,1.0,0\n")
    assert column_names(path) == ["unnamed1", "a", "b", "y"]
    ds = load_dataset(path)
    assert ds.feature_names == ["unnamed1", "a", "b"]
    np.testing.assert_array_equal(ds.X[:, 0], [0.0, 1.0, 2.0])
    assert read_table(path).names == ["unnamed1", "a", "b", "y"]


def test_two_blank_leading_header_cells_are_two_unnamed_index_columns(tmp_path):
    # a table read with its index and written again by pandas: two unnamed index columns, shuffled rows
    path = tmp_path / "twice.csv"
    path.write_text(",,rownames,a,y\n2,5,6,1.5,x\n0,3,4,2.5,y\n1,4,5,0.5,x\n")
    assert column_names(path) == ["unnamed1", "unnamed2", "rownames", "a", "y"]
    assert read_table(path).names == ["unnamed1", "unnamed2", "rownames", "a", "y"]
    taken = tmp_path / "taken.csv"  # a name the file already has is not given twice
    taken.write_text(",,unnamed2,y\n0,1,2,3\n1,2,3,4\n")
    assert column_names(taken) == ["unnamed1", "unnamed3", "unnamed2", "y"]


def test_a_blank_cell_elsewhere_in_the_first_row_is_still_not_a_header(tmp_path):
    path = tmp_path / "odd.csv"
    path.write_text("a,,y\n1,2,3\n")
    with pytest.raises(DataFormatError, match="line 1"):
        load_dataset(path)
    path.write_text(",1.5,2\n0,1,2\n")  # a blank first cell before numbers: data (a missing value), not a header
    assert column_names(path) is None


def test_split_line_strips_only_where_a_line_holds_white_space():
    """A line without white space is split as it is; any white space (a tab, a no-break space) still strips each
    field, as before."""
    assert split_line("1.5,2,abc", ",") == ["1.5", "2", "abc"]
    assert split_line(" 1.5 , 2,abc ", ",") == ["1.5", "2", "abc"]
    assert split_line("1\u00a0,2\t,x", ",") == ["1", "2", "x"]
    assert split_line("a b,c", ",") == ["a b", "c"]
