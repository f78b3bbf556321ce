"""CSV files of numbers: reading (whole file or in row chunks) and writing.

Comma-separated numbers, one sample per line; the last ``targets`` columns are the
targets. Lines starting with ``#`` and blank lines are skipped. ``?``, an empty field
and ``NaN`` mark missing values. Fields may be quoted with ``'`` or ``"``.

Header detection (``header="auto"``) is all-or-nothing: the first row is a header when
*every* cell is non-numeric (its leading cells may be blank: the unnamed row index pandas and R write, read as a
column named ``unnamed1``, then ``unnamed2``, ...); a first row that mixes numbers and text is an error that
names the row and column, so a data row is never silently taken for a header.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from skframe.exceptions import DataFormatError, InvalidInputError, InvalidParameterError
from skframe.io._common import (
    check_targets,
    header_names,
    is_number_or_missing,
    iter_lines,
    name_of,
    parse_row,
    split_fields,
    text_column_hint,
    unquote,
)
from skframe.io.columns import check_unique_names
from skframe.limits import check

__all__ = ["read_csv", "iter_csv", "read_header", "write_csv"]


def _check_header_arg(header):
    if header not in ("auto", True, False):
        raise InvalidParameterError(f"header={header!r} must be 'auto', True or False")


def _is_header(toks, path, lineno, header, positions=None):
    """Whether the first row is a header; ``positions(n_cols)`` gives the columns kept, or None."""
    if header is not True and header is not False:
        text = [j for j, t in enumerate(toks) if not is_number_or_missing(t)]
        if not text:
            return False
        if header_names(toks) is not None:  # every cell a name (the first may be blank: an unnamed index)
            return True
        kept = positions(len(toks)) if positions is not None else None
        if kept is not None and all(j not in kept for j in text):
            return False  # the text cells are in columns left out: a data row
        j = text[0]
        shown = toks[j] if len(toks[j]) <= 40 else toks[j][:37] + "..."
        raise DataFormatError(
            f"{name_of(path)}, line {lineno} (first row) column {j + 1}: {shown!r} is not a number while other "
            f"cells of the row are; a header row must hold only names and a data row only numbers "
            f"(fix the cell, or pass header=True / header=False){text_column_hint(toks[j], None, j)}"
        )
    return bool(header)


def _rows(path, header, select=None):
    """Yield ``("layout", (names, kept), lineno)`` once, then ``("row", values, lineno)`` per data row.

    ``names`` are the header's (None without a header); ``kept`` the positions parsed, in
    order (None: every column), from ``select(names, n_cols)``.
    """
    n_cols = None
    kept = None
    names = None
    for lineno, raw in iter_lines(path):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        toks = split_fields(line)
        if n_cols is None:
            n_cols = len(toks)
            check("features", n_cols, f"{name_of(path)}, line {lineno}: the first row")
            positions = getattr(select, "positions", None)
            is_header = _is_header(toks, path, lineno, header, positions)
            if is_header:
                names = header_names(toks) or [unquote(t) for t in toks]
                check_unique_names(names, path)
            kept = select(names, n_cols) if select is not None else None
            yield "layout", (names, kept), lineno
            if is_header:
                continue
        if len(toks) != n_cols:
            raise DataFormatError(
                f"{name_of(path)}, line {lineno}: {len(toks)} values but {n_cols} expected "
                f"(from the {'header' if names is not None else 'first row'}); fix the row"
            )
        yield "row", parse_row(toks, path, lineno, kept, names), lineno
    if n_cols is None:
        raise DataFormatError(f"{name_of(path)} is empty; a CSV file needs at least one row of numbers")


class _Select:
    """``select(names, n_cols)`` for :func:`_rows`: the kept positions (features then targets) of a choice."""

    def __init__(self, path, targets, columns):
        self.path, self.targets, self.columns = path, targets, columns
        self.n_x = None

    def __call__(self, names, n_cols):
        if self.columns is None:
            self.n_x = n_cols - check_targets(self.targets, n_cols, self.path)
            return None
        features, targets = self.columns.resolve(names, n_cols, self.targets, self.path)
        self.n_x = len(features)
        self.names = names
        return features + targets

    def positions(self, n_cols):
        """The kept positions of a choice made by position only (None otherwise), to tell data from a header."""
        if self.columns is None or not self.columns.by_position_only:
            return None
        features, targets = self.columns.resolve(None, n_cols, self.targets, self.path)
        return set(features + targets)


def _names(names, kept, n_cols, n_x):
    """Feature and target names of the kept columns (``x0``..., ``y0``... without a header)."""
    if names is None:
        n_t = (n_cols if kept is None else len(kept)) - n_x
        return [f"x{j}" for j in range(n_x)], [f"y{j}" for j in range(n_t)]
    chosen = names if kept is None else [names[j] for j in kept]
    return chosen[:n_x], chosen[n_x:]


def read_csv(path, targets=1, header="auto", columns=None):
    """Read a whole CSV file.

    Parameters
    ----------
    path : str
    targets : int, default=1
        Number of trailing target columns (when ``columns`` names no targets).
    header : {"auto", True, False}
    columns : skframe.io.columns.Columns, optional
        The columns to keep as features and targets, by name or position; columns left out
        are not parsed.

    Returns
    -------
    X, Y : ndarray, ndarray
        Inputs and targets (NaN marks missing cells).
    feature_names, target_names : list of str
    linenos : ndarray of int
        File line of each data row.
    """
    _check_header_arg(header)
    select = _Select(path, targets, columns)
    rows, linenos, layout = [], [], None
    for kind, vals, lineno in _rows(path, header, select):
        if kind == "layout":
            layout = vals
        else:
            rows.append(vals)
            linenos.append(lineno)
    names, kept = layout
    n_cols = len(names) if names is not None else None
    if not rows:
        raise DataFormatError(f"{name_of(path)} has a header but no data rows; add rows of numbers")
    M = np.asarray(rows, dtype=np.float64)
    n_x = select.n_x
    fnames, tnames = _names(names, kept, n_cols if n_cols is not None else M.shape[1], n_x)
    return M[:, :n_x], M[:, n_x:], fnames, tnames, np.asarray(linenos)


def iter_csv(path, rows, targets=1, header="auto", columns=None):
    """Yield ``(X, Y, linenos, row_offset)`` blocks of at most ``rows`` data rows.

    Parsing is exactly that of :func:`read_csv`; memory holds one block at a time.
    """
    _check_header_arg(header)
    select = _Select(path, targets, columns)
    buf, lines, offset, seen = [], [], 0, False
    for kind, vals, lineno in _rows(path, header, select):
        if kind == "layout":
            continue
        seen = True
        buf.append(vals)
        lines.append(lineno)
        if len(buf) == rows:
            M = np.asarray(buf, dtype=np.float64)
            yield M[:, :select.n_x], M[:, select.n_x:], np.asarray(lines), offset
            offset += len(buf)
            buf, lines = [], []
    if buf:
        M = np.asarray(buf, dtype=np.float64)
        yield M[:, :select.n_x], M[:, select.n_x:], np.asarray(lines), offset
    elif not seen:
        raise DataFormatError(f"{name_of(path)} has a header but no data rows; add rows of numbers")


def read_header(path, header="auto"):
    """The column names of a CSV file's header row, or None when its first row is data.

    Only the first row is read.
    """
    _check_header_arg(header)
    for kind, (names, _), _ in _rows(path, header):
        return names if kind == "layout" else None
    return None


def write_csv(fh, X, Y, feature_names, target_names):
    """Write a header row then one row per sample (X columns first), 17 significant digits.

    ``X`` may be None (only ``Y`` is written) or sparse (densified). Names containing a
    comma or a newline are refused.
    """
    for nm in list(feature_names) + list(target_names):
        if "," in nm or "\n" in nm:
            raise InvalidInputError(f"column name {nm!r} contains a comma or newline; rename it for CSV output")
    table = Y if X is None else np.hstack([X.toarray() if sp.issparse(X) else X, Y])
    fh.write((",".join(list(feature_names) + list(target_names)) + "\n").encode("utf-8"))
    np.savetxt(fh, table, delimiter=",", fmt="%.17g")
