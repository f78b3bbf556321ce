"""Reading and writing data files through one front: :func:`load_dataset`,
:func:`iter_chunks`, :func:`save_dataset`."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from skframe.exceptions import DataFormatError, InvalidInputError, InvalidParameterError
from skframe.io import arff, csv, libsvm, npy
from skframe.io._common import Dataset, name_of
from skframe.io.columns import Columns
from skframe.io.atomic import atomic_write
from skframe.io.missing import ColumnMeans, check_strategy, handle_missing

__all__ = ["FORMATS", "load_dataset", "read_dataset", "iter_chunks", "scan_file", "save_dataset", "column_names"]

#: File extensions recognised by :func:`load_dataset` and the format each one means.
FORMATS = {
    ".csv": "csv",
    ".npz": "npz",
    ".npy": "npy",
    ".arff": "arff",
    ".svm": "libsvm",
    ".libsvm": "libsvm",
    ".svmlight": "libsvm",
}
_ALIASES = {"csv": "csv", "npz": "npz", "npy": "npy", "arff": "arff", "libsvm": "libsvm", "svmlight": "libsvm",
            "svm": "libsvm"}
_SPARSE_DENSITY_THRESHOLD = 0.3


def _resolve_format(path, fmt):
    if fmt is not None:
        key = str(fmt).lower().lstrip(".")
        if key not in _ALIASES:
            raise InvalidParameterError(f"fmt={fmt!r} is not a known format; choose one of {sorted(set(_ALIASES))}")
        return _ALIASES[key]
    ext = Path(path).suffix.lower()
    if ext not in FORMATS:
        raise DataFormatError(
            f"cannot tell the format of {name_of(path)} from its extension {ext or '(none)'!r}; "
            f"use one of {sorted(FORMATS)} or pass fmt= (CLI: --format) with one of {sorted(set(FORMATS.values()))}"
        )
    return FORMATS[ext]


def _check_file(path):
    if not os.path.exists(path):
        raise InvalidInputError(f"data file {path!r} does not exist; check the path")
    if os.path.isdir(path):
        raise InvalidInputError(f"{path!r} is a directory; give the path of a data file")
    if os.path.getsize(path) == 0:
        raise DataFormatError(f"{name_of(path)} is empty (0 bytes); give a file with data rows")


def _final_x(X, sparse):
    if sp.issparse(X):
        density = X.nnz / max(1, X.shape[0] * X.shape[1])
        if sparse is False or (sparse == "auto" and density >= _SPARSE_DENSITY_THRESHOLD):
            return np.ascontiguousarray(X.toarray(), dtype=np.float64)
        X = sp.csr_matrix(X, dtype=np.float64)
        X.sort_indices()
        return X
    if sparse is True:
        return sp.csr_matrix(X)
    if isinstance(X, np.memmap):
        return X
    return np.ascontiguousarray(X, dtype=np.float64)


def _check_options(missing, sparse, header):
    check_strategy(missing)
    if not (sparse == "auto" or sparse is True or sparse is False):
        raise InvalidParameterError(f"sparse={sparse!r} must be 'auto', True or False")
    if header not in ("auto", True, False):
        raise InvalidParameterError(f"header={header!r} must be 'auto', True or False")


def _npy_has_nan(X, Y, rows=65536):
    return any(np.isnan(X[i:i + rows]).any() or np.isnan(Y[i:i + rows]).any() for i in range(0, X.shape[0], rows))


def _check_means(means, X, Y, path):
    """``means`` as ``(x_means, y_means)`` matching the columns of X and Y (each may be None)."""
    if means is None:
        return None
    mx, my = means if isinstance(means, tuple) else (means, None)
    out = []
    for name, m, A in (("feature", mx, X), ("target", my, Y)):
        if m is None or A.shape[1] == 0:
            out.append(None)
            continue
        m = np.asarray(m, dtype=np.float64).ravel()
        if m.shape[0] != A.shape[1]:
            raise InvalidParameterError(
                f"{os.path.basename(path)} has {A.shape[1]} {name} columns but {m.shape[0]} {name} means were given "
                "(those of the training data); check that it is the same kind of data and the number of targets"
            )
        out.append(m)
    return tuple(out)


def _choice(columns, drop, target_columns):
    """A :class:`~skframe.io.columns.Columns` from the readers' arguments, or None (the file's own layout)."""
    if isinstance(columns, Columns):
        if drop is not None or target_columns is not None:
            raise InvalidParameterError("give drop= and target_columns= inside the Columns object, not beside it")
        return columns
    return Columns.make(columns, drop, target_columns)


def _take(X, Y, positions):
    """Columns of ``[X | Y]`` at ``positions`` (from 0), X's kept sparse; a copy unless they are X's first ones."""
    d = X.shape[1]
    if positions == list(range(len(positions))) and len(positions) <= d:
        return X[:, : len(positions)]
    if all(j < d for j in positions):
        return X[:, positions]
    parts = []
    for j in positions:
        col = X[:, j:j + 1] if j < d else Y[:, j - d:j - d + 1]
        parts.append(col)
    if sp.issparse(X):
        return sp.hstack([sp.csr_matrix(c) for c in parts], format="csr") if parts else X[:, :0]
    return np.hstack([np.asarray(c, dtype=np.float64) for c in parts]) if parts else np.zeros((X.shape[0], 0))


def _select_read(X, Y, fnames, tnames, named, choice, path, n_targets=None):
    """Apply a column choice to a file read whole (NPZ, NPY, LIBSVM): X, Y, feature and target names.

    The columns are those of ``[X | Y]``; by default the last ``n_targets`` (Y's) are the targets.
    """
    if choice is None:
        return X, Y, fnames, tnames
    names = list(fnames) + list(tnames)
    n_targets = Y.shape[1] if n_targets is None else n_targets
    features, targets = choice.resolve(names if named else None, len(names), n_targets, path)
    Xs = _take(X, Y, features)
    Ys = np.asarray(_dense(_take(X, Y, targets)), dtype=np.float64).reshape(X.shape[0], len(targets))
    return Xs, Ys, [names[j] for j in features], [names[j] for j in targets]


def _npz_named(path):
    """True when an NPZ archive stores its column names."""
    with np.load(path, allow_pickle=False) as fh:
        return "feature_names" in fh.files


def _dense(A):
    return A.toarray() if sp.issparse(A) else A


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
    _check_options(missing, sparse, header)
    choice = _choice(columns, drop, target_columns)
    path = os.fspath(path)
    fmt = _resolve_format(path, fmt)
    _check_file(path)
    linenos = None
    if fmt == "npz":
        X, Y, fnames, tnames = npy.read_npz(path, 0 if choice is not None else targets)
        if choice is not None:
            X, Y, fnames, tnames = _select_read(X, Y, fnames, tnames, _npz_named(path), choice, path)
    elif fmt == "npy":
        if y_path is not None:
            _check_file(os.fspath(y_path))
        X, Y = npy.open_npy(path, targets if choice is None or y_path is not None else 0, y_path)
        fnames = [f"x{j}" for j in range(X.shape[1])]
        tnames = [f"y{j}" for j in range(Y.shape[1])]
        if choice is not None:
            X, Y, fnames, tnames = _select_read(X, Y, fnames, tnames, False, choice, path,
                                                None if y_path is not None else targets)
        if not _npy_has_nan(X, Y):
            X = sp.csr_matrix(X) if sparse is True else X
            return Dataset(X=X, Y=Y, feature_names=fnames, target_names=tnames, path=path, format=fmt, missing=missing)
        X, Y = np.array(X), np.array(Y)  # missing values: handled in memory
    elif fmt == "libsvm":
        X, Y, fnames, tnames, linenos = libsvm.read_libsvm(path)
        X, Y, fnames, tnames = _select_read(X, Y, fnames, tnames, False, choice, path)
    elif fmt == "csv":
        X, Y, fnames, tnames, linenos = csv.read_csv(path, targets, header, columns=choice)
    else:
        X, Y, fnames, tnames, linenos = arff.read_arff(path, targets, columns=choice)
    means = _check_means(means, X, Y, path) if missing == "mean" else None
    X, Y, n_missing, rows = handle_missing(X, Y, missing, path, linenos, means=means)
    return Dataset(
        X=_final_x(X, sparse),
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


def _blocks(path, fmt, rows, targets, header, y_path, choice=None):
    """Raw ``(X, Y, linenos, row_offset)`` blocks, NaN marking missing cells."""
    if fmt == "csv":
        yield from csv.iter_csv(path, rows, targets, header, columns=choice)
    elif fmt == "libsvm":
        for X, Y, lines, offset, layout in libsvm.iter_libsvm(path, rows):
            X, Y, _, _ = _select_read(X, Y, layout.feature_names, layout.target_names, False, choice, path)
            yield X, Y, lines, offset
    else:
        X, Y = npy.open_npy(path, targets if choice is None or y_path is not None else 0, y_path)
        for i in range(0, X.shape[0], rows):
            Xb, Yb = X[i:i + rows], Y[i:i + rows]
            if choice is not None:
                names = [f"x{j}" for j in range(Xb.shape[1] + Yb.shape[1])]
                Xb, Yb, _, _ = _select_read(Xb, Yb, names[:Xb.shape[1]], names[Xb.shape[1]:], False, choice, path,
                                            None if y_path is not None else targets)
            yield Xb, Yb, None, i


def iter_chunks(path, *, rows=10000, targets=1, fmt=None, missing="error", sparse="auto", header="auto", y_path=None,
                means=None, columns=None, drop=None, target_columns=None):
    """Read a CSV, LIBSVM or ``.npy`` file block by block: yield ``(X_chunk, Y_chunk)``.

    Each block holds at most ``rows`` rows; parsing and the missing-value policy are those
    of :func:`load_dataset`, so concatenating the blocks gives the whole-file read
    (``missing="drop"`` drops rows inside each block; ``missing="mean"`` makes one extra
    pass over the file first to compute the column means; ``missing="error"`` raises at
    the first block holding a missing cell). Only one block is in memory at a time (LIBSVM
    files are scanned once first for their index base, width and label set; ``.npy``
    files are memory-mapped and blocks are read-only views when nothing is missing).

    Parameters
    ----------
    path : str or path-like
    rows : int, default=10000
        Rows per block (the last block may be shorter; with ``missing="drop"`` blocks may be
        shorter and empty blocks are skipped).
    targets, fmt, missing, header, y_path
        As in :func:`load_dataset` (``fmt`` in ``csv``, ``libsvm``, ``npy``).
    sparse : {"auto", True, False}, default="auto"
        ``"auto"``: LIBSVM blocks are CSR (every block has the same type, whatever its
        density), CSV and NPY blocks are dense; ``True`` / ``False`` force CSR / dense.
    means : tuple (feature_means, target_means), optional
        With ``missing="mean"``: fill with these means (e.g. a model's training means) instead
        of the file's own, and skip the extra pass; either entry may be None (then the file's).
    columns, drop, target_columns
        The columns kept, as in :func:`load_dataset`.

    Yields
    ------
    X_chunk : ndarray or CSR matrix
    Y_chunk : ndarray of shape (n_rows, n_targets)
    """
    _check_options(missing, sparse, header)
    choice = _choice(columns, drop, target_columns)
    if isinstance(rows, bool) or not isinstance(rows, (int, np.integer)) or rows < 1:
        raise InvalidParameterError(f"rows={rows!r} must be a positive integer (rows per chunk)")
    path = os.fspath(path)
    fmt = _resolve_format(path, fmt)
    if fmt not in ("csv", "libsvm", "npy"):
        raise InvalidParameterError(
            f"iter_chunks reads csv, libsvm and npy files, not {fmt!r} ({name_of(path)}); use load_dataset, "
            "or convert the file (e.g. save_dataset to .csv)"
        )
    _check_file(path)
    if y_path is not None:
        _check_file(os.fspath(y_path))
    given = tuple(means) if means is not None else (None, None)
    means = None
    if missing == "mean" and all(m is not None for m in given):
        means = tuple(np.asarray(m, dtype=np.float64) for m in given)
    elif missing == "mean":
        mx = my = None
        for X, Y, _, _ in _blocks(path, fmt, rows, targets, header, y_path, choice):
            mx = mx or ColumnMeans(X.shape[1])
            my = my or ColumnMeans(Y.shape[1])
            mx.update(X)
            my.update(Y)
        means = (mx.means if given[0] is None else np.asarray(given[0], dtype=np.float64),
                 my.means if given[1] is None else np.asarray(given[1], dtype=np.float64))
    if sparse == "auto" and fmt == "libsvm":
        sparse = True
    for X, Y, lines, offset in _blocks(path, fmt, rows, targets, header, y_path, choice):
        X, Y, _, _ = handle_missing(X, Y, missing, path, lines, row_offset=offset, means=means or (None, None))
        if X.shape[0] == 0:
            continue
        if fmt == "npy" and not sp.issparse(X) and sparse is not True:
            yield X, Y
        else:
            yield _final_x(X, sparse), np.ascontiguousarray(Y, dtype=np.float64)


def scan_file(path, *, targets=1, fmt=None, header="auto", y_path=None, columns=None, drop=None,
              target_columns=None):
    """Shape of a CSV, LIBSVM or ``.npy`` file without holding it in memory.

    One streaming pass (CSV, LIBSVM; every row is parsed, so a malformed file fails here
    with the same error as :func:`load_dataset`) or the array header (``.npy``).

    Returns
    -------
    dict
        ``{"format", "n_rows", "n_features", "n_targets"}`` (before any missing-value policy).

    Examples
    --------
    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "d.csv")
    >>> _ = open(p, "w").write("a,b,y\\n1,2,3\\n4,5,6\\n")
    >>> scan_file(p)
    {'format': 'csv', 'n_rows': 2, 'n_features': 2, 'n_targets': 1}
    """
    path = os.fspath(path)
    fmt = _resolve_format(path, fmt)
    if fmt not in ("csv", "libsvm", "npy"):
        raise InvalidParameterError(f"scan_file reads csv, libsvm and npy files, not {fmt!r} ({name_of(path)})")
    _check_file(path)
    choice = _choice(columns, drop, target_columns)
    if choice is not None:
        n = d = t = 0
        for X, Y, _, _ in _blocks(path, fmt, 4096, targets, header, y_path, choice):
            n, d, t = n + X.shape[0], X.shape[1], Y.shape[1]
        return {"format": fmt, "n_rows": int(n), "n_features": int(d), "n_targets": int(t)}
    if fmt == "libsvm":
        layout = libsvm.scan_libsvm(path)
        n, d, t = layout.n_rows, layout.n_features, len(layout.target_names)
    elif fmt == "npy":
        if y_path is not None:
            _check_file(os.fspath(y_path))
        X, Y = npy.open_npy(path, targets, y_path)
        n, d, t = X.shape[0], X.shape[1], Y.shape[1]
    else:
        n = d = t = 0
        for X, Y, _, _ in csv.iter_csv(path, 4096, targets, header):
            n, d, t = n + X.shape[0], X.shape[1], Y.shape[1]
    return {"format": fmt, "n_rows": int(n), "n_features": int(d), "n_targets": int(t)}


def column_names(path, *, fmt=None, header="auto"):
    """The column names a data file gives, or None when it gives none.

    A CSV file's header row, an ARFF file's attributes, the names an NPZ archive stores
    (features then targets); LIBSVM and NPY files have no names. Only what holds the names
    is read (a CSV file's first row, an ARFF file's header).

    Examples
    --------
    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "d.csv")
    >>> _ = open(p, "w").write("a,b,y\\n1,2,3\\n")
    >>> column_names(p)
    ['a', 'b', 'y']
    """
    path = os.fspath(path)
    fmt = _resolve_format(path, fmt)
    _check_file(path)
    if fmt == "csv":
        return csv.read_header(path, header)
    if fmt == "arff":
        return arff.read_names(path)
    if fmt == "npz" and _npz_named(path):
        with np.load(path, allow_pickle=False) as fh:
            names = [str(s) for s in np.asarray(fh["feature_names"]).ravel()]
            if "target_names" in fh.files:
                names += [str(s) for s in np.asarray(fh["target_names"]).ravel()]
        return names
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
    fmt = _resolve_format(path, fmt)
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
