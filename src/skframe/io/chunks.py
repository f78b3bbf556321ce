"""Data files read block by block, for data larger than memory: :func:`iter_chunks` yields
``(X, Y)`` blocks of a CSV, LIBSVM or ``.npy`` file and :func:`scan_file` gives its shape,
both with the parsing, column choice and missing-value policy of
:func:`~skframe.io.load_dataset`."""

from __future__ import annotations

import os

import numpy as np
import scipy.sparse as sp

from skframe.exceptions import InvalidParameterError
from skframe.io import csv, libsvm, npy
from skframe.io._common import name_of
from skframe.io.columns import column_choice, select_columns
from skframe.io.formats import check_file, check_options, final_x, resolve_format
from skframe.io.missing import ColumnMeans, handle_missing

__all__ = ["iter_chunks", "scan_file"]

_STREAMED = ("csv", "libsvm", "npy")


def _blocks(path, fmt, rows, targets, header, y_path, choice=None):
    """Raw ``(X, Y, linenos, row_offset)`` blocks, NaN marking missing cells."""
    if fmt == "csv":
        yield from csv.iter_csv(path, rows, targets, header, columns=choice)
    elif fmt == "libsvm":
        for X, Y, lines, offset, layout in libsvm.iter_libsvm(path, rows):
            X, Y, _, _ = select_columns(X, Y, layout.feature_names, layout.target_names, choice, path, named=False)
            yield X, Y, lines, offset
    else:
        X, Y = npy.open_npy(path, targets if choice is None or y_path is not None else 0, y_path)
        for i in range(0, X.shape[0], rows):
            Xb, Yb = X[i:i + rows], Y[i:i + rows]
            if choice is not None:
                names = [f"x{j}" for j in range(Xb.shape[1] + Yb.shape[1])]
                Xb, Yb, _, _ = select_columns(Xb, Yb, names[:Xb.shape[1]], names[Xb.shape[1]:], choice, path,
                                              named=False, n_targets=None if y_path is not None else targets)
            yield Xb, Yb, None, i


def _streamed_file(path, fmt, y_path, what):
    """The path and format of a file ``what`` reads (CSV, LIBSVM or NPY), checked to be there."""
    path = os.fspath(path)
    fmt = resolve_format(path, fmt)
    if fmt not in _STREAMED:
        raise InvalidParameterError(
            f"{what} reads csv, libsvm and npy files, not {fmt!r} ({name_of(path)}); use load_dataset, "
            "or convert the file (e.g. save_dataset to .csv)"
        )
    check_file(path)
    if y_path is not None:
        check_file(os.fspath(y_path))
    return path, fmt


def iter_chunks(path, *, rows=10000, targets=1, fmt=None, missing="error", sparse="auto", header="auto", y_path=None,
                means=None, columns=None, drop=None, target_columns=None):
    """Read a CSV, LIBSVM or ``.npy`` file block by block: yield ``(X_chunk, Y_chunk)``.

    Each block holds at most ``rows`` rows; parsing and the missing-value policy are those
    of :func:`~skframe.io.load_dataset`, so concatenating the blocks gives the whole-file read
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
        As in :func:`~skframe.io.load_dataset` (``fmt`` in ``csv``, ``libsvm``, ``npy``).
    sparse : {"auto", True, False}, default="auto"
        ``"auto"``: LIBSVM blocks are CSR (every block has the same type, whatever its
        density), CSV and NPY blocks are dense; ``True`` / ``False`` force CSR / dense.
    means : tuple (feature_means, target_means), optional
        With ``missing="mean"``: fill with these means (e.g. a model's training means) instead
        of the file's own, and skip the extra pass; either entry may be None (then the file's).
    columns, drop, target_columns
        The columns kept, as in :func:`~skframe.io.load_dataset`.

    Yields
    ------
    X_chunk : ndarray or CSR matrix
    Y_chunk : ndarray of shape (n_rows, n_targets)
    """
    check_options(missing, sparse, header)
    choice = column_choice(columns, drop, target_columns)
    if isinstance(rows, bool) or not isinstance(rows, (int, np.integer)) or rows < 1:
        raise InvalidParameterError(f"rows={rows!r} must be a positive integer (rows per chunk)")
    path, fmt = _streamed_file(path, fmt, y_path, "iter_chunks")
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
            yield final_x(X, sparse), np.ascontiguousarray(Y, dtype=np.float64)


def scan_file(path, *, targets=1, fmt=None, header="auto", y_path=None, columns=None, drop=None,
              target_columns=None):
    """Shape of a CSV, LIBSVM or ``.npy`` file without holding it in memory.

    One streaming pass (CSV, LIBSVM; every row is parsed, so a malformed file fails here
    with the same error as :func:`~skframe.io.load_dataset`) or the array header (``.npy``).

    Returns
    -------
    dict
        ``{"format", "n_rows", "n_features", "n_targets"}`` (before any missing-value policy).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp(), "d.csv")
    >>> _ = p.write_text("a,b,y\\n1,2,3\\n4,5,6\\n")
    >>> scan_file(p)
    {'format': 'csv', 'n_rows': 2, 'n_features': 2, 'n_targets': 1}
    """
    path, fmt = _streamed_file(path, fmt, y_path, "scan_file")
    choice = column_choice(columns, drop, target_columns)
    if choice is None and fmt == "libsvm":
        layout = libsvm.scan_libsvm(path)
        n, d, t = layout.n_rows, layout.n_features, len(layout.target_names)
    elif choice is None and fmt == "npy":
        X, Y = npy.open_npy(path, targets, y_path)
        n, d, t = X.shape[0], X.shape[1], Y.shape[1]
    else:  # one pass over the rows
        n = d = t = 0
        for X, Y, _, _ in _blocks(path, fmt, 4096, targets, header, y_path, choice):
            n, d, t = n + X.shape[0], X.shape[1], Y.shape[1]
    return {"format": fmt, "n_rows": int(n), "n_features": int(d), "n_targets": int(t)}
