"""Reading the cells of a table column: missing markers, numbers, dates (:mod:`skframe.preprocessing.dates`), the
columns of a table.

The pieces :class:`skframe.preprocessing.TableEncoder` is built from; every function is linear in the cells.
"""

from __future__ import annotations

import math
import re

import numpy as np

from skframe.exceptions import DataFormatError, InvalidInputError, InvalidParameterError
from skframe.io._common import (
    _SMILES_ATOM,
    EXACT_INTEGERS,
    MISSING_TOKENS,
    inexact_integer,
    inexact_integer_message,
    looks_like_smiles,
)
from skframe.io.columns import check_unique_names
from skframe.limits import exceeded, limit
from skframe.preprocessing.dates import (
    DATE_FORMATS,
    DATE_ORDER_TYPES,
    DATE_PARTS,
    date_features,
    date_format,
    date_seconds,
)

__all__ = ["text_cells", "parse_numbers", "plain_numbers", "date_format", "date_seconds", "date_features", "as_columns",
           "is_smiles_column", "DATE_FORMATS", "DATE_PARTS", "COLUMN_TYPES", "parse_column_types",
           "check_column_types", "colliding_labels", "has_leading_zero", "distinct_text",
           "check_table_columns"]

#: The types a column may be given (``column_types=``, CLI ``--column-types``); besides, ``date-dmy`` and
#: ``date-mdy`` give dates read day first or month first (:mod:`skframe.preprocessing.dates`).
COLUMN_TYPES = ("numeric", "categorical", "date", "text")
_LEADING_ZERO = re.compile(r"[+-]?0\d")
_TYPES_NAMED = (f"TYPE one of {', '.join(COLUMN_TYPES)}, or date-dmy, date-mdy (dates day or month first); e.g. "
                "--column-types zip=categorical,sold=date")


def parse_column_types(items):
    """``{name: type}`` from ``name=type`` entries (comma-separated or repeated), checked.

    Examples
    --------
    >>> parse_column_types(["zip=categorical,sold=date"])
    {'zip': 'categorical', 'sold': 'date'}
    """
    out = {}
    for item in items or ():
        for part in str(item).split(","):
            if not part.strip():
                continue
            name, sep, kind = part.partition("=")
            kind = kind.strip().lower()
            if not sep or not name.strip() or kind not in (*COLUMN_TYPES, *DATE_ORDER_TYPES):
                raise InvalidParameterError(f"--column-types {part.strip()!r} must be NAME=TYPE with {_TYPES_NAMED}")
            out[name.strip()] = kind
    return out


def check_column_types(column_types):
    """``column_types`` as a dict ``{name: type}``, each type one of :data:`COLUMN_TYPES` or ``date-dmy``,
    ``date-mdy``; one :class:`InvalidParameterError` naming the first other."""
    out = dict(column_types or {})
    for name, kind in out.items():
        if kind not in (*COLUMN_TYPES, *DATE_ORDER_TYPES):
            raise InvalidParameterError(f"column_types gives column {name!r} the type {kind!r}; the types are "
                                        f"{', '.join((*COLUMN_TYPES, *DATE_ORDER_TYPES))}")
    return out


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


def check_table_columns(n_columns, where="the table"):
    """Refuse, before any per-column work, a table of more columns than the ``table_columns`` limit
    (``SKFRAME_MAX_TABLE_COLUMNS``, 65 536): each column is typed on its own (a fraction of a millisecond each, a
    minute for 10**5 columns). One :class:`~skframe.exceptions.InvalidInputError` naming the count and the fixes."""
    if n_columns > limit("table_columns"):
        raise InvalidInputError(exceeded("table_columns", n_columns, where) + "; or keep the columns needed (CLI: "
                                "--columns or --drop), or store numbers only (a numeric file is read whole)")


def distinct_text(values):
    """The distinct values of text cells, sorted as ``np.unique`` sorts them, and each cell's index among them.

    Linear in the characters held: no fixed-width copy is made (``np.unique`` on ``values.astype(str)`` sizes every
    cell as the longest one, 3.7 GiB for one cell of 50 000 characters among 20 000 short ones).

    >>> distinct_text(np.array(["b", "a", "b"], dtype=object))
    (['a', 'b'], array([1, 0, 1]))
    """
    cells = [str(v) for v in np.asarray(values, dtype=object).reshape(-1)]
    uniques = sorted(set(cells))
    index = {v: k for k, v in enumerate(uniques)}
    return uniques, np.fromiter((index[v] for v in cells), dtype=np.intp, count=len(cells))


#: distinct short cells :func:`parse_numbers` keeps the values of (a label column's few words, read once each)
_SEEN_SHORT = 4096


def plain_numbers(col):
    """The float values of a column whose cells are all text that ``float`` reads as numbers below ``2**53`` in
    magnitude (``"nan"`` spellings read as missing), at C speed; None where any cell is no such text (not a string,
    a missing marker such as ``""`` or ``"NA"``, a word, an infinite or a huge value) or every cell is missing: the
    cell-by-cell :func:`text_cells` and :func:`parse_numbers` then decide, and give the same values where this
    gives any (a cell ``float`` reads starts with a sign, a digit, a point, ``inf`` or ``nan``, as
    :func:`parse_numbers` asks). A column of 10^6 numbers written as text: about 0.1 s instead of 2-3 s.

    >>> plain_numbers(np.array(["1.5", " -2 ", "nan"], dtype=object)).tolist()
    [1.5, -2.0, nan]
    >>> plain_numbers(np.array(["1.5", "NA"], dtype=object)) is None
    True
    """
    col = np.asarray(col, dtype=object).reshape(-1)
    if col.size == 0 or set(map(type, col)) != {str}:  # (map in C: 0.02 s for 10^6 cells)
        return None
    try:
        values = col.astype(np.float64)
    except (ValueError, TypeError, OverflowError):
        return None
    finite = np.isfinite(values)
    if not finite.any() or np.isinf(values).any() or (np.abs(values[finite]) >= EXACT_INTEGERS).any():
        return None
    return values


def parse_numbers(text, missing, *, name=None, linenos=None):
    """Float values of text cells (NaN where missing or not a finite number) and the mask of bad cells.

    A cell that writes a whole number beyond +-2**53 (an identifier, a code), which float64 would round, raises one
    :class:`~skframe.exceptions.DataFormatError` naming the column ``name``, the value, its line (from ``linenos``,
    else its row) and the fixes: such a column is read as text (categories) or left out, never rounded silently.
    """
    out = np.full(text.shape[0], np.nan)
    bad = np.zeros(text.shape[0], dtype=bool)
    seen = {}  # each distinct cell parsed once: a long cell repeated in every row, a column of a few labels
    for i in np.flatnonzero(~missing):
        cell = text[i]
        value = seen.get(cell)
        if value is None:
            first = cell.lstrip()[:1]
            try:
                if first and not (first in "+-.iInN" or first.isdecimal()):  # no number starts so
                    raise ValueError(cell)
                value = float(cell)
            except ValueError:
                value = math.inf  # marks a bad cell, as an infinite value does
            if len(cell) > 64 or len(seen) < _SEEN_SHORT:  # past that many, short cells are parsed again
                seen[cell] = value
        if math.isinf(value):
            bad[i] = True
        else:
            if abs(value) >= EXACT_INTEGERS and (big := inexact_integer(cell)) is not None:
                where = f"column {name!r}, {line_of(i, linenos)}" if name is not None else line_of(i, linenos)
                raise DataFormatError(inexact_integer_message(where, name, big))
            out[i] = value
    return out, bad


def colliding_labels(text, missing, *, leading_zero=False):
    """Two cells written differently that read as one number (``"01"`` and ``"1"``), or None.

    Class labels are the text written: such a column of labels is read as text, where ``"01"`` and ``"1"`` are two
    classes. With ``leading_zero`` only a pair of which one is written with a leading zero counts (``"007"``, a
    code; ``"1.0"`` and ``"1"`` are one number), as the task is then not known to be a classification.

    >>> colliding_labels(np.array(["1", "01", "2"], dtype=object), np.zeros(3, bool))
    ('01', '1')
    """
    seen = {}
    for cell in sorted({str(v) for v in text[~missing]}):
        try:
            value = float(cell)
        except ValueError:
            return None
        other = seen.setdefault(value, cell)
        if other != cell and (not leading_zero or has_leading_zero(cell) or has_leading_zero(other)):
            return other, cell
    return None


def has_leading_zero(cell):
    """Whether a cell is a number written with a leading zero (``01``, ``-007``; not ``0`` or ``0.5``): a code."""
    return bool(_LEADING_ZERO.match(str(cell).strip()))


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
        names = [str(c) for c in X.columns]
        check_unique_names(names)  # columns are matched by name: one of two alike would be lost
        return names, [_pandas_column(X.iloc[:, j]) for j in range(len(names))]
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
