"""The missing-value policy shared by every reader.

Missing cells (``?``, an empty field, ``NaN``) are never silently replaced. The policy
``missing=`` is one of

``"error"`` (default)
    raise :class:`~skframe.exceptions.MissingValuesError` with the number of missing
    cells, the rows holding them and the fix;
``"zero"``
    replace each missing cell by 0;
``"mean"``
    replace it by the mean of the observed values of its column (implicit zeros of
    sparse rows count as observed);
``"drop"``
    remove the rows holding a missing cell.

Inputs and targets are treated alike. Whatever the policy, the number of missing
cells and the 0-based rows holding them are reported (``Dataset.n_missing``,
``Dataset.missing_rows``).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from skframe.exceptions import InvalidInputError, InvalidParameterError, MissingValuesError
from skframe.io._common import name_of

__all__ = ["MISSING_STRATEGIES", "check_strategy", "ColumnMeans", "impute", "handle_missing", "missing_per_row",
           "column_means", "check_means"]

#: Accepted values of ``missing=``.
MISSING_STRATEGIES = ("error", "zero", "mean", "drop")

MISSING_FIX = "use missing='zero'|'mean'|'drop' (CLI: --missing zero|mean|drop)"


def check_strategy(missing):
    """Return ``missing`` if it is a known strategy, else raise :class:`InvalidParameterError`."""
    if missing not in MISSING_STRATEGIES:
        raise InvalidParameterError(f"missing={missing!r} is not a strategy; choose one of {list(MISSING_STRATEGIES)}")
    return missing


def _nan_per_row(A):
    if sp.issparse(A):
        A = sp.csr_matrix(A)
        bad = np.isnan(A.data)
        row_of = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
        return np.bincount(row_of[bad], minlength=A.shape[0])
    return np.isnan(A).sum(axis=1)


def missing_per_row(X, Y):
    """Per-row counts of missing (NaN) cells in ``X`` and in ``Y``."""
    return _nan_per_row(X), _nan_per_row(Y)


class ColumnMeans:
    """Running per-column sums and counts of observed values, block after block.

    ``update`` may be called on row blocks of one matrix (dense or CSR); :attr:`means`
    then equals the column means of the observed values of the whole matrix, which is
    what ``missing="mean"`` uses (so chunked and whole-file reads impute the same values).
    """

    def __init__(self, n_columns):
        self.sums = np.zeros(n_columns)
        self.observed = np.zeros(n_columns)

    def update(self, A):
        if sp.issparse(A):
            A = sp.csr_matrix(A)
            bad = np.isnan(A.data)
            cols = A.indices
            d = A.shape[1]
            self.sums += np.bincount(cols[~bad], weights=A.data[~bad], minlength=d)
            self.observed += A.shape[0] - np.bincount(cols[bad], minlength=d)
        else:
            bad = np.isnan(A)
            self.sums += np.where(bad, 0.0, A).sum(axis=0)
            self.observed += (~bad).sum(axis=0)
        return self

    @property
    def means(self):
        return np.divide(self.sums, self.observed, out=np.zeros_like(self.sums), where=self.observed > 0)


def column_means(A):
    """Column means of a numeric ndarray or sparse matrix (float64), else None (e.g. input collections).

    Saved with a model as the training means that ``missing="mean"`` fills new data with.
    With ``missing="mean"`` at fit time they equal the means of the observed training values
    (filling a column with its own mean does not change it).
    """
    if sp.issparse(A):
        return np.asarray(A.mean(axis=0), dtype=np.float64).ravel()
    if isinstance(A, np.ndarray) and A.ndim == 2 and A.dtype.kind in "fiub":
        return np.asarray(A.mean(axis=0), dtype=np.float64)
    return None


def check_means(means, X, Y, path):
    """Given ``means`` as ``(x_means, y_means)`` (or only the features' means) checked against the columns of X
    and Y; each may be None (then the file's own)."""
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
                f"{name_of(path)} has {A.shape[1]} {name} columns but {m.shape[0]} {name} means were given "
                "(those of the training data); check that it is the same kind of data and the number of targets"
            )
        out.append(m)
    return tuple(out)


def impute(A, strategy, means=None):
    """Copy of ``A`` with NaN cells replaced by 0 or by the column ``means``.

    Parameters
    ----------
    A : ndarray or sparse matrix
    strategy : {"zero", "mean"}
    means : ndarray of shape (n_columns,), optional
        Column means for ``"mean"``; default: those of ``A`` itself (:class:`ColumnMeans`).
    """
    if sp.issparse(A):
        A = sp.csr_matrix(A, copy=True)
        bad = np.isnan(A.data)
        if not bad.any():
            return A
        if strategy == "zero":
            A.data[bad] = 0.0
        else:
            m = ColumnMeans(A.shape[1]).update(A).means if means is None else means
            A.data[bad] = m[A.indices[bad]]
        A.eliminate_zeros()
        return A
    A = np.array(A, dtype=np.float64, copy=True)
    bad = np.isnan(A)
    if not bad.any():
        return A
    if strategy == "zero":
        A[bad] = 0.0
        return A
    m = ColumnMeans(A.shape[1]).update(A).means if means is None else means
    r, c = np.nonzero(bad)
    A[r, c] = m[c]
    return A


def handle_missing(X, Y, strategy, path, linenos=None, *, row_offset=0, means=None):
    """Apply the policy to ``X`` and ``Y`` (NaN marks missing cells).

    Parameters
    ----------
    X, Y : ndarray or CSR, ndarray
    strategy : {"error", "zero", "mean", "drop"}
    path : str
        File name for messages.
    linenos : array of int, optional
        File line of each row, for messages.
    row_offset : int, default=0
        Index of the first row in the file (chunked reading).
    means : tuple of two ndarrays, optional
        Column means of X and Y for ``"mean"`` (chunked reading); default: their own.

    Returns
    -------
    X, Y, n_missing, rows
        ``rows`` are the file's 0-based data rows holding a missing cell.
    """
    per_x, per_y = missing_per_row(X, Y)
    per_row = per_x + per_y
    local = np.flatnonzero(per_row)
    rows = local + row_offset
    n_missing = int(per_row.sum())
    if n_missing == 0:
        return X, Y, 0, rows
    if strategy == "error":
        lines = ""
        if linenos is not None:
            lines = f", file lines {np.asarray(linenos)[local[:5]].tolist()}"
        in_y = int(per_y.sum())
        ypart = f" ({in_y} of them in targets)" if in_y else ""
        raise MissingValuesError(
            f"{name_of(path)} has {n_missing} missing values{ypart} ('?', empty or NaN) in {rows.size} rows "
            f"(first rows, 0-based: {rows[:5].tolist()}{lines}); {MISSING_FIX}"
        )
    if strategy == "drop":
        keep = per_row == 0
        if not keep.any() and row_offset == 0 and means is None:
            raise InvalidInputError(
                f"{name_of(path)}: every row has a missing value, missing='drop' would leave no data; "
                "use missing='zero' or 'mean'"
            )
        X = X[keep]
        Y = Y[keep]
        if sp.issparse(X):
            X = sp.csr_matrix(X)
        return X, Y, n_missing, rows
    mx, my = (None, None) if means is None else means
    return impute(X, strategy, mx), impute(Y, strategy, my), n_missing, rows
