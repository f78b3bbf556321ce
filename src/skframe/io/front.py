"""Reading and writing whole data files: :func:`load_dataset`, :func:`column_names`,
:func:`save_dataset`.

The readers' front also gives :func:`iter_chunks` and :func:`scan_file` (files read block
by block, :mod:`skframe.io.chunks`) and :data:`FORMATS` (:mod:`skframe.io.formats`), so that
every reader can be imported from here as from :mod:`skframe.io`."""

from __future__ import annotations

import os

import numpy as np
import scipy.sparse as sp

from skframe.exceptions import DataFormatError, InvalidInputError, InvalidParameterError
from skframe.io import arff, csv, libsvm, npy, table
from skframe.io._common import Dataset
from skframe.io.atomic import atomic_write
from skframe.io.chunks import iter_chunks, scan_file
from skframe.io.columns import column_choice, select_columns
from skframe.io.formats import FORMATS, check_file, check_options, final_x, resolve_format
from skframe.io.missing import check_means, handle_missing

__all__ = ["FORMATS", "load_dataset", "read_dataset", "iter_chunks", "scan_file", "save_dataset", "column_names"]


def _delimiter(path):
    """The delimiter of a text table's first lines (``","`` when it has none to tell: the CSV reader says why)."""
    try:
        return table.read_table_header(path, fmt="csv")[1]["delimiter"]
    except DataFormatError:
        return ","


def _npy_has_nan(X, Y, rows=65536):
    return any(np.isnan(X[i:i + rows]).any() or np.isnan(Y[i:i + rows]).any() for i in range(0, X.shape[0], rows))


def load_dataset(path, *, targets=1, fmt=None, missing="error", sparse="auto", header="auto", y_path=None,
                 means=None, columns=None, drop=None, target_columns=None):
    """Load a data file into a :class:`Dataset`.

    Formats (chosen from the extension, or forced with ``fmt``): ``csv`` (``.csv``, see
    :mod:`skframe.io.csv`), ``arff`` (``.arff``, dense or sparse Mulan rows, see
    :mod:`skframe.io.arff`), ``libsvm`` (``.svm``, ``.libsvm``, ``.svmlight``, see
    :mod:`skframe.io.libsvm`; ``targets`` is ignored), ``npz`` (``.npz``; ``targets`` is
    ignored except that ``targets=0`` allows a file without ``Y``) and ``npy``
    (``.npy``, memory-mapped, see :mod:`skframe.io.npy`). For CSV and ARFF the LAST
    ``targets`` columns are the targets.

    Parameters
    ----------
    path : str or path-like
        File to read (opened read-only; never modified).
    targets : int, default=1
        Number of target columns at the end of each row (``0 <= targets < n_columns``);
        ``0`` reads a features-only file (``Y`` then has shape ``(n, 0)``).
    fmt : {"csv", "npz", "npy", "arff", "libsvm", "svmlight"} or None
        Force the format instead of using the extension.
    missing : {"error", "zero", "mean", "drop"}, default="error"
        Missing-value policy, see :mod:`skframe.io.missing`.
    sparse : {"auto", True, False}, default="auto"
        ``"auto"``: sparse ARFF rows, LIBSVM files and sparse-stored NPZ give a CSR ``X``
        when its density is below 0.3 (else an ndarray); dense formats give an ndarray.
        ``True``: always CSR. ``False``: always a dense ndarray.
    header : {"auto", True, False}, default="auto"
        CSV only: whether the first row is a header (``"auto"``: when all its cells are text).
    y_path : str or path-like, optional
        ``npy`` only: a second ``.npy`` file holding the targets.
    means : ndarray or tuple (x_means, y_means), optional
        With ``missing="mean"``: the column means that fill the missing cells, e.g. those
        of the training data when reading new data for a fitted model (``x_means`` for the
        features, ``y_means`` for the targets; None for either means that file's own).
        Default: the file's own column means.
    columns : list of (str or int), or skframe.io.columns.Columns, optional
        The feature columns to keep, in this order, by name (CSV header, ARFF attribute,
        names stored in an NPZ archive) or position (from 0); default: every column that is
        neither a target nor dropped. Columns left out of a CSV or ARFF file are not parsed,
        so a column of text can be left out. A :class:`~skframe.io.columns.Columns` gives
        the whole choice at once.
    drop : list of (str or int), optional
        Columns to leave out.
    target_columns : list of (str or int), optional
        The target columns, in this order (instead of the last ``targets`` columns kept).
        Missing-value policies apply to the columns kept only.

    Returns
    -------
    Dataset

    Raises
    ------
    InvalidInputError
        The file does not exist or is a directory.
    DataFormatError
        Unknown extension, empty file, wrong encoding, malformed rows (with the line number).
    InvalidParameterError
        Bad ``targets``, ``fmt``, ``missing``, ``sparse`` or ``header``.
    MissingValuesError
        Missing values found and ``missing="error"``.

    Examples
    --------
    >>> ds = load_dataset("rf1-train.arff", targets=8, missing="zero")  # doctest: +SKIP
    >>> ds.n_missing, ds.missing_rows.size                              # doctest: +SKIP
    (1632, 60)
    """
    check_options(missing, sparse, header)
    choice = column_choice(columns, drop, target_columns)
    path = os.fspath(path)
    fmt = resolve_format(path, fmt)
    check_file(path)
    linenos = None
    if fmt == "npz":
        X, Y, fnames, tnames = npy.read_npz(path, 0 if choice is not None else targets)
        if choice is not None:
            X, Y, fnames, tnames = select_columns(X, Y, fnames, tnames, choice, path,
                                                  named=npy.npz_names(path) is not None)
    elif fmt == "npy":
        if y_path is not None:
            check_file(os.fspath(y_path))
        X, Y = npy.open_npy(path, targets if choice is None or y_path is not None else 0, y_path)
        fnames = [f"x{j}" for j in range(X.shape[1])]
        tnames = [f"y{j}" for j in range(Y.shape[1])]
        X, Y, fnames, tnames = select_columns(X, Y, fnames, tnames, choice, path, named=False,
                                              n_targets=None if y_path is not None else targets)
        if not _npy_has_nan(X, Y):
            X = sp.csr_matrix(X) if sparse is True else X
            return Dataset(X=X, Y=Y, feature_names=fnames, target_names=tnames, path=path, format=fmt, missing=missing)
        X, Y = np.array(X), np.array(Y)  # missing values: handled in memory
    elif fmt == "libsvm":
        X, Y, fnames, tnames, linenos = libsvm.read_libsvm(path)
        X, Y, fnames, tnames = select_columns(X, Y, fnames, tnames, choice, path, named=False)
    elif fmt in ("parquet", "feather") or (fmt == "csv" and header == "auto" and _delimiter(path) != ","):
        X, Y, fnames, tnames, linenos = table.read_numeric_table(path, targets, columns=choice, fmt=fmt)
    elif fmt == "csv":
        X, Y, fnames, tnames, linenos = csv.read_csv(path, targets, header, columns=choice)
    else:
        X, Y, fnames, tnames, linenos = arff.read_arff(path, targets, columns=choice)
    means = check_means(means, X, Y, path) if missing == "mean" else None
    X, Y, n_missing, rows = handle_missing(X, Y, missing, path, linenos, means=means)
    return Dataset(
        X=final_x(X, sparse),
        Y=np.ascontiguousarray(Y, dtype=np.float64),
        feature_names=list(fnames),
        target_names=list(tnames),
        path=path,
        format=fmt,
        n_missing=n_missing,
        missing_rows=np.asarray(rows, dtype=np.intp),
        missing=missing,
    )


#: Another name of :func:`load_dataset`.
read_dataset = load_dataset


def column_names(path, *, fmt=None, header="auto"):
    """The column names a data file gives, or None when it gives none.

    A CSV file's header row, an ARFF file's attributes, the names an NPZ archive stores
    (features then targets); LIBSVM and NPY files have no names. Only what holds the names
    is read (a CSV file's first row, an ARFF file's header).

    Examples
    --------
    >>> import os, tempfile
    >>> p = save_dataset(os.path.join(tempfile.mkdtemp(), "d.npz"), [[1.0, 2.0]], [3.0],
    ...                  feature_names=["a", "b"], target_names=["y"])
    >>> column_names(p)
    ['a', 'b', 'y']
    """
    path = os.fspath(path)
    fmt = resolve_format(path, fmt)
    check_file(path)
    if fmt in ("parquet", "feather") or (fmt == "csv" and header == "auto" and _delimiter(path) != ","):
        return table.read_table_header(path, fmt=fmt)[0]
    if fmt == "csv":
        return csv.read_header(path, header)
    if fmt == "arff":
        return arff.read_names(path)
    if fmt == "npz":
        return npy.npz_names(path)
    return None


def save_dataset(path, X, Y, *, fmt=None, feature_names=None, target_names=None):
    """Write inputs and targets (or predictions) to CSV or NPZ, atomically.

    CSV: one header row (``feature_names`` then ``target_names``, default ``x0..``,
    ``y0..``) then one row per sample, X columns first, 17 significant digits (exact
    float64 round trip); a sparse X is densified. NPZ: ``X`` (dense) or
    ``X_data``/``X_indices``/``X_indptr``/``X_shape`` (CSR), ``Y``, ``feature_names``,
    ``target_names`` — exactly what :func:`load_dataset` reads back. The file is written
    to a temporary file then renamed (:func:`skframe.io.atomic.atomic_write`): an
    interrupted write leaves any previous file intact.

    Parameters
    ----------
    path : str or path-like
        Destination; the format follows the extension (``.csv`` or ``.npz``) or ``fmt``.
    X : array-like, sparse matrix or None
        Inputs; ``None`` writes only ``Y`` (e.g. predictions).
    Y : array-like of shape (n_samples,) or (n_samples, n_targets)
    fmt : {"csv", "npz"} or None
    feature_names, target_names : list of str, optional

    Returns
    -------
    str
        The path written.
    """
    path = os.fspath(path)
    fmt = resolve_format(path, fmt)
    if fmt not in ("csv", "npz"):
        raise InvalidParameterError(f"save_dataset writes 'csv' or 'npz', not {fmt!r}; use a .csv or .npz path")
    Y = np.asarray(Y, dtype=np.float64)
    if Y.ndim == 1:
        Y = Y.reshape(-1, 1)
    if Y.ndim != 2:
        raise InvalidInputError(f"Y must be 1-D or 2-D, got shape {Y.shape}")
    if X is not None:
        if sp.issparse(X):
            X = sp.csr_matrix(X, dtype=np.float64)
        else:
            X = np.asarray(X, dtype=np.float64)
            if X.ndim == 1:
                X = X.reshape(-1, 1)
        if X.shape[0] != Y.shape[0]:
            raise InvalidInputError(
                f"X has {X.shape[0]} rows (shape {X.shape}) but Y has {Y.shape[0]} (shape {Y.shape})"
            )
    n_x = 0 if X is None else X.shape[1]
    fnames = list(feature_names) if feature_names is not None else [f"x{j}" for j in range(n_x)]
    tnames = list(target_names) if target_names is not None else [f"y{j}" for j in range(Y.shape[1])]
    if len(fnames) != n_x or len(tnames) != Y.shape[1]:
        raise InvalidInputError(
            f"{len(fnames)} feature names for {n_x} columns / {len(tnames)} target names for {Y.shape[1]} columns; "
            "give one name per column"
        )
    writer = npy.write_npz if fmt == "npz" else csv.write_csv
    if fmt == "csv":
        for nm in fnames + tnames:
            if "," in nm or "\n" in nm:
                raise InvalidInputError(f"column name {nm!r} contains a comma or newline; rename it for CSV output")
    with atomic_write(path, "wb") as fh:
        writer(fh, X, Y, fnames, tnames)
    return path
