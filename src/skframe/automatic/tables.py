"""In-memory tables for the automatic model: a pandas DataFrame read as a table file would be.

:func:`frame_table` gives the :class:`skframe.io.table.Table` the readers take (one array per column): numbers
as float64 (missing as NaN), dates as ``datetime64``, everything else as objects (missing as None), as a Parquet
file's columns are read. The column types are then decided by :class:`skframe.preprocessing.TableEncoder`, as for
a file.
"""

from __future__ import annotations

import numpy as np

from skframe.io.table import Table

__all__ = ["frame_table", "array_table", "is_frame"]


def is_frame(data):
    """True for a pandas DataFrame (tested without importing pandas)."""
    return type(data).__name__ == "DataFrame" and hasattr(data, "columns") and hasattr(data, "iloc")


def _column(series):
    kind = series.dtype.kind
    if kind in "biuf":
        return series.to_numpy(dtype=np.float64, na_value=np.nan)
    if kind == "M":
        return series.to_numpy(dtype="datetime64[ns]")
    values = series.astype(object)
    return values.where(series.notna(), None).to_numpy(dtype=object)


def frame_table(frame, name="DataFrame"):
    """The :class:`~skframe.io.table.Table` of a DataFrame's columns (names as text; rows numbered from 2, as the
    lines of a file with a header, in messages)."""
    names = [str(c) for c in frame.columns]
    columns = [_column(frame.iloc[:, j]) for j in range(frame.shape[1])]
    n = int(frame.shape[0])
    return Table(names=names, columns=columns, linenos=np.arange(2, n + 2), info={"format": "dataframe"}, path=name)


def array_table(X, names):
    """The :class:`~skframe.io.table.Table` of an array of raw columns in the order of ``names`` (a column of
    numbers as float64, any other as objects)."""
    X = np.asarray(X, dtype=object)
    X = X.reshape(-1, 1) if X.ndim == 1 else X
    names = [str(n) for n in (names or [f"x{j + 1}" for j in range(X.shape[1])])]
    columns = []
    for j in range(X.shape[1]):
        try:
            columns.append(X[:, j].astype(np.float64))
        except (TypeError, ValueError):  # text cells: typed by the encoder
            columns.append(np.array([None if v is None else v for v in X[:, j]], dtype=object))
    n = int(X.shape[0])
    return Table(names=names, columns=columns, linenos=np.arange(2, n + 2), info={"format": "array"}, path="array")
