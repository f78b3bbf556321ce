"""Reading the cells of a table column: missing markers, numbers, dates and date features, the columns of a table.

The pieces :class:`skframe.preprocessing.TableEncoder` is built from; every function is linear in the cells.
"""

from __future__ import annotations

import math
from datetime import datetime

import numpy as np

from skframe.exceptions import InvalidInputError
from skframe.io._common import _SMILES_ATOM, MISSING_TOKENS, looks_like_smiles

__all__ = ["text_cells", "parse_numbers", "date_format", "date_seconds", "date_features", "as_columns",
           "is_smiles_column", "DATE_FORMATS", "DATE_PARTS"]

#: The date formats read besides ISO 8601 (every cell of a column must fit one).
DATE_FORMATS = ("%d/%m/%Y", "%m/%d/%Y", "%Y/%m/%d", "%d.%m.%Y", "%Y-%m-%d %H:%M", "%d/%m/%Y %H:%M")
#: The features a date column becomes.
DATE_PARTS = ("days", "year", "month", "weekday")


def _is_missing(v):
    if v is None:
        return True
    if isinstance(v, float):
        return math.isnan(v)
    if isinstance(v, str):
        return v.strip() in MISSING_TOKENS
    try:
        return bool(np.isnat(v)) if isinstance(v, np.datetime64) else bool(v != v)
    except (TypeError, ValueError):
        return False


def text_cells(col):
    """The cells of a column as stripped text, and its missing mask."""
    col = np.asarray(col, dtype=object)
    missing = np.fromiter((_is_missing(v) for v in col), dtype=bool, count=col.shape[0])
    text = np.array([None if m else str(v).strip() for v, m in zip(col, missing)], dtype=object)
    return text, missing


def parse_numbers(text, missing):
    """Float values of text cells (NaN where missing or not a finite number) and the mask of bad cells."""
    out = np.full(text.shape[0], np.nan)
    bad = np.zeros(text.shape[0], dtype=bool)
    for i in np.flatnonzero(~missing):
        try:
            value = float(text[i])
        except ValueError:
            bad[i] = True
            continue
        if math.isinf(value):
            bad[i] = True
        else:
            out[i] = value
    return out, bad


def date_format(values):
    """``"iso"`` or a ``strptime`` format that reads every value, else None."""
    try:
        np.array(values, dtype="datetime64[s]")
        return "iso"
    except (ValueError, TypeError, OverflowError):
        pass
    for fmt in DATE_FORMATS:
        try:
            for v in values:
                datetime.strptime(v, fmt)
            return fmt
        except ValueError:
            continue
    return None


def date_seconds(text, missing, fmt):
    """Seconds since 1970-01-01 of date cells (NaN where missing or unreadable)."""
    out = np.full(text.shape[0], np.nan)
    present = np.flatnonzero(~missing)
    if fmt == "iso":
        for i in present:
            try:
                out[i] = np.datetime64(text[i], "s").astype(np.int64)
            except (ValueError, TypeError, OverflowError):
                pass
        return out
    epoch = datetime(1970, 1, 1)
    for i in present:
        try:
            out[i] = (datetime.strptime(text[i], fmt) - epoch).total_seconds()
        except ValueError:
            pass
    return out


def date_features(seconds):
    """Days since 1970-01-01, year, month and weekday (0 = Monday) of seconds since the epoch (NaN kept)."""
    ok = ~np.isnan(seconds)
    out = np.full((seconds.shape[0], 4), np.nan)
    out[:, 0] = seconds / 86400.0
    stamps = seconds[ok].astype(np.int64).astype("datetime64[s]")
    years = stamps.astype("datetime64[Y]")
    months = stamps.astype("datetime64[M]")
    days = stamps.astype("datetime64[D]").astype(np.int64)
    out[ok, 1] = years.astype(np.int64) + 1970
    out[ok, 2] = (months - years.astype("datetime64[M]")).astype(np.int64) + 1
    out[ok, 3] = (days + 3) % 7  # 1970-01-01 was a Thursday
    return out


def is_smiles_column(values):
    """True when every value reads as SMILES and most have two atoms or more (not codes such as ``S000123``)."""
    if not all(looks_like_smiles(v) for v in values):
        return False
    return sum(len(_SMILES_ATOM.findall(v)) >= 2 for v in values) * 2 > len(values)


def line_of(i, linenos):
    return f"line {int(linenos[i])}" if linenos is not None else f"row {int(i)}"


def as_columns(X, names=None):
    """``(names, columns)`` of a table: a skframe Table, a pandas DataFrame, a dict of columns or a 2-D array."""
    if hasattr(X, "names") and hasattr(X, "columns") and isinstance(X.columns, list):  # skframe.io.table.Table
        return [str(n) for n in X.names], list(X.columns)
    if hasattr(X, "columns") and hasattr(X, "iloc"):  # a pandas DataFrame
        return [str(c) for c in X.columns], [_pandas_column(X[c]) for c in X.columns]
    if isinstance(X, dict):
        return [str(k) for k in X], [np.asarray(v) for v in X.values()]
    A = np.asarray(X, dtype=object)
    if A.ndim != 2:
        raise InvalidInputError(f"a table must be 2-D (rows, columns); got shape {A.shape}")
    names = list(names) if names is not None else [f"x{j}" for j in range(A.shape[1])]
    return names, [A[:, j] for j in range(A.shape[1])]


def _pandas_column(series):
    kind = getattr(series.dtype, "kind", "O")
    if kind in "fiub":
        return series.to_numpy(dtype=np.float64, na_value=np.nan)
    if kind == "M":
        return series.to_numpy().astype("datetime64[s]")
    return series.astype(object).to_numpy()


# ------------------------------------------------------------------------------------------------ encoder
