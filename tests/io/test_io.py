"""Tests of skframe.io: chunked and memory-mapped readers, atomic writes, header detection, encodings."""

import hashlib
import os

import numpy as np
import pytest
import scipy.sparse as sp

from skframe.exceptions import DataFormatError, InvalidParameterError, MissingValuesError
from skframe.io import atomic_write, iter_chunks, load_dataset, read_dataset, save_dataset


def _stack(chunks):
    Xs, Ys = zip(*chunks)
    X = sp.vstack(Xs).tocsr() if sp.issparse(Xs[0]) else np.vstack(Xs)
    return X, np.vstack(Ys)


def _dense(X):
    return X.toarray() if sp.issparse(X) else np.asarray(X)


@pytest.fixture
def csv_file(tmp_path, rng):
    A = np.round(rng.normal(size=(23, 5)), 6)
    lines = ["a,b,c,t1,t2"] + [",".join(repr(float(v)) for v in row) for row in A]
    lines[4] = lines[4].replace(repr(float(A[3, 1])), "?")
    lines[9] = lines[9].replace(repr(float(A[8, 4])), "")
    p = tmp_path / "d.csv"
    p.write_text("\n".join(lines) + "\n")
    return p


@pytest.fixture
def svm_file(tmp_path, rng):
    rows = []
    for i in range(17):
        idx = sorted(rng.choice(np.arange(1, 12), size=3, replace=False))
        feats = " ".join(f"{j}:{rng.normal():.5f}" for j in idx)
        if i == 5:
            feats += " 14:nan"
        rows.append(f"{rng.integers(0, 3)} {feats}")
    p = tmp_path / "d.svm"
    p.write_text("\n".join(rows) + "\n")
    return p


@pytest.mark.parametrize("rows", [1, 4, 7, 100])
@pytest.mark.parametrize("missing", ["zero", "mean", "drop"])
def test_csv_chunks_equal_whole_file(csv_file, rows, missing):
    whole = load_dataset(csv_file, targets=2, missing=missing)
    X, Y = _stack(list(iter_chunks(csv_file, rows=rows, targets=2, missing=missing)))
    np.testing.assert_allclose(X, whole.X, rtol=1e-14, atol=0)
    np.testing.assert_allclose(Y, whole.Y, rtol=1e-14, atol=0)
    assert all(c[0].shape[0] <= rows for c in iter_chunks(csv_file, rows=rows, targets=2, missing=missing))


@pytest.mark.parametrize("rows", [1, 5, 16, 50])
@pytest.mark.parametrize("missing", ["zero", "mean", "drop"])
def test_libsvm_chunks_equal_whole_file(svm_file, rows, missing):
    whole = load_dataset(svm_file, missing=missing, sparse=True)
    X, Y = _stack(list(iter_chunks(svm_file, rows=rows, missing=missing, sparse=True)))
    assert X.shape == whole.X.shape
    np.testing.assert_allclose(X.toarray(), whole.X.toarray(), rtol=1e-14, atol=0)
    np.testing.assert_array_equal(Y, whole.Y)


def test_chunks_missing_error_and_bad_arguments(csv_file, tmp_path):
    with pytest.raises(MissingValuesError, match=r"0-based: \[3\]"):
        list(iter_chunks(csv_file, rows=2, targets=2))
    with pytest.raises(InvalidParameterError, match="rows"):
        list(iter_chunks(csv_file, rows=0, targets=2))
    arff = tmp_path / "a.arff"
    arff.write_text("@relation r\n@attribute a numeric\n@attribute b numeric\n@data\n1,2\n")
    with pytest.raises(InvalidParameterError, match="iter_chunks reads"):
        list(iter_chunks(arff, rows=2))


def test_multilabel_libsvm_chunks_keep_the_label_set(tmp_path):
    p = tmp_path / "m.svm"
    p.write_text("1,3 1:1\n2 2:1\n 3:1\n5 1:2\n")
    whole = load_dataset(p)
    X, Y = _stack(list(iter_chunks(p, rows=1)))
    np.testing.assert_array_equal(Y, whole.Y)
    assert Y.shape == (4, 4)
    np.testing.assert_array_equal(_dense(X), _dense(whole.X))


def test_npy_memory_mapped_last_columns_are_targets(tmp_path, rng):
    A = rng.normal(size=(30, 6))
    p = tmp_path / "a.npy"
    np.save(p, A)
    ds = load_dataset(p, targets=2)
    assert isinstance(ds.X, np.memmap) or isinstance(getattr(ds.X, "base", None), np.memmap)
    assert not ds.X.flags.writeable
    np.testing.assert_array_equal(ds.X, A[:, :4])
    np.testing.assert_array_equal(ds.Y, A[:, 4:])
    X, Y = _stack(list(iter_chunks(p, rows=7, targets=2)))
    np.testing.assert_array_equal(X, A[:, :4])
    np.testing.assert_array_equal(Y, A[:, 4:])


def test_npy_pair_of_files_and_missing(tmp_path, rng):
    X = rng.normal(size=(10, 3))
    y = rng.normal(size=10)
    X[2, 1] = np.nan
    px, py = tmp_path / "X.npy", tmp_path / "y.npy"
    np.save(px, X)
    np.save(py, y)
    with pytest.raises(MissingValuesError):
        load_dataset(px, y_path=py)
    ds = load_dataset(px, y_path=py, missing="drop")
    assert ds.X.shape == (9, 3) and ds.Y.shape == (9, 1) and ds.missing_rows.tolist() == [2]
    np.testing.assert_array_equal(ds.Y[:, 0], np.delete(y, 2))
    np.save(py, y[:5])
    with pytest.raises(DataFormatError, match="one row per sample"):
        load_dataset(px, y_path=py, missing="zero")


def test_npy_bad_files(tmp_path):
    p = tmp_path / "s.npy"
    np.save(p, np.array(["a", "b"]))
    with pytest.raises(DataFormatError, match="dtype"):
        load_dataset(p)
    p.write_bytes(b"\x93NUMPY garbage")
    with pytest.raises(DataFormatError, match="not a readable"):
        load_dataset(p)
    np.save(p, np.ones(4))
    with pytest.raises(DataFormatError, match="2-D"):
        load_dataset(p)


# ----------------------------------------------------------------------------------- header detection
def test_mixed_first_row_is_an_error_naming_row_and_column(tmp_path):
    p = tmp_path / "m.csv"
    p.write_text("1,2,oops,4\n5,6,7,8\n")
    with pytest.raises(DataFormatError, match=r"line 1 \(first row\) column 3: 'oops'"):
        load_dataset(p)
    ds = load_dataset(p, header=True)  # the user says it is a header
    assert ds.feature_names == ["1", "2", "oops"] and ds.X.shape == (1, 3)


def test_all_text_first_row_is_a_header_and_numbers_are_data(tmp_path):
    p = tmp_path / "h.csv"
    p.write_text("a,b,y\n1,2,3\n")
    assert load_dataset(p).feature_names == ["a", "b"]
    p.write_text("1,?,3\n4,5,6\n")  # a missing marker does not make a header
    with pytest.raises(MissingValuesError):
        load_dataset(p)
    assert load_dataset(p, missing="zero").X.shape == (2, 2)


# ----------------------------------------------------------------------------------- encodings
@pytest.mark.parametrize("encoding, match", [("utf-16", "UTF-16"), ("latin-1", "not valid UTF-8")])
def test_wrong_encodings(tmp_path, encoding, match):
    p = tmp_path / "e.csv"
    p.write_bytes("é,b,y\n1,2,3\n".encode(encoding))
    with pytest.raises(DataFormatError, match=match):
        load_dataset(p)


def test_utf8_bom_and_crlf(tmp_path):
    p = tmp_path / "b.csv"
    p.write_bytes(b"\xef\xbb\xbfa,b\r\n1,2\r\n3,4\r\n")
    ds = read_dataset(p)
    assert ds.feature_names == ["a"] and ds.X.shape == (2, 1)


def test_huge_number_is_refused(tmp_path):
    p = tmp_path / "h.csv"
    p.write_text("1,2\n1e400,3\n")
    with pytest.raises(DataFormatError, match="line 2 column 1: '1e400' is infinite"):
        load_dataset(p)


# ----------------------------------------------------------------------------------- atomic writes
def test_atomic_write_interrupted_keeps_previous_file(tmp_path):
    p = tmp_path / "out.csv"
    p.write_text("old\n")
    with pytest.raises(RuntimeError):
        with atomic_write(p, "w") as fh:
            fh.write("partial")
            raise RuntimeError("interrupted")
    assert p.read_text() == "old\n"
    assert os.listdir(tmp_path) == ["out.csv"]  # no temporary file left


def test_save_dataset_is_atomic_and_round_trips(tmp_path, rng, monkeypatch):
    X, Y = rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    p = tmp_path / "d.npz"
    save_dataset(p, X, Y)
    before = p.read_bytes()

    import skframe.io.npy as npy_mod

    def broken(fh, *a):
        fh.write(b"half")
        raise OSError("disk full")

    monkeypatch.setattr(npy_mod, "write_npz", broken)
    with pytest.raises(OSError):
        save_dataset(p, X, Y)
    assert p.read_bytes() == before and sorted(os.listdir(tmp_path)) == ["d.npz"]
    monkeypatch.undo()
    ds = load_dataset(p, targets=2)
    np.testing.assert_array_equal(ds.X, X)


def test_readers_never_modify_inputs(csv_file, svm_file):
    digests = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in (csv_file, svm_file)}
    stats = {p: os.stat(p).st_mtime_ns for p in digests}
    load_dataset(csv_file, targets=2, missing="mean")
    list(iter_chunks(svm_file, rows=3, missing="drop"))
    for p, d in digests.items():
        assert hashlib.sha256(p.read_bytes()).hexdigest() == d and os.stat(p).st_mtime_ns == stats[p]


@pytest.mark.parametrize("block", [1, 2, 3, 7, 64])
def test_streamed_lines_do_not_depend_on_the_block_size(tmp_path, block):
    from skframe.io._common import iter_lines

    p = tmp_path / "t.csv"
    p.write_bytes("\ufeffnamé,b\r\n1,2\n\n3,€\nlast".encode("utf-8"))
    assert list(iter_lines(p, block=block)) == list(iter_lines(p)) == [
        (1, "namé,b"), (2, "1,2"), (3, ""), (4, "3,€"), (5, "last")]


def test_scan_file_matches_whole_read(csv_file, svm_file, tmp_path, rng):
    from skframe.io import scan_file

    for path, kw in ((csv_file, {"targets": 2}), (svm_file, {})):
        ds = load_dataset(path, missing="zero", **kw)
        info = scan_file(path, **kw)
        assert (info["n_rows"], info["n_features"], info["n_targets"]) == (ds.n_samples, ds.n_features, ds.n_targets)
    p = tmp_path / "a.npy"
    np.save(p, rng.normal(size=(9, 5)))
    assert scan_file(p, targets=2) == {"format": "npy", "n_rows": 9, "n_features": 3, "n_targets": 2}


def test_atomic_write_permissions(tmp_path):
    p = tmp_path / "new.txt"
    with atomic_write(p, "w") as fh:
        fh.write("x")
    umask = os.umask(0)
    os.umask(umask)
    assert (os.stat(p).st_mode & 0o777) == (0o666 & ~umask)
    os.chmod(p, 0o640)
    with atomic_write(p) as fh:
        fh.write(b"y")
    assert (os.stat(p).st_mode & 0o777) == 0o640 and p.read_bytes() == b"y"


def test_libsvm_chunks_all_have_one_type(tmp_path):
    p = tmp_path / "mix.svm"
    p.write_text("1 1:1 2:1 3:1\n0 1:1\n1 2:1 3:1\n0 40:1\n")  # dense first rows, sparse last
    kinds = {sp.issparse(X) for X, _ in iter_chunks(p, rows=2)}
    assert kinds == {True}
    assert {sp.issparse(X) for X, _ in iter_chunks(p, rows=2, sparse=False)} == {False}
