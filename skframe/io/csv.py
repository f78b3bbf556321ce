"""CSV files of numbers: reading (whole file or in row chunks) and writing.

Comma-separated numbers, one sample per line; the last ``targets`` columns are the
targets. Lines starting with ``#`` and blank lines are skipped. ``?``, an empty field
and ``NaN`` mark missing values. Fields may be quoted with ``'`` or ``"``.

Header detection (``header="auto"``) is all-or-nothing: the first row is a header when
*every* cell is non-numeric; a first row that mixes numbers and text is an error that
names the row and column, so a data row is never silently taken for a header.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from skframe.exceptions import DataFormatError, InvalidInputError, InvalidParameterError
from skframe.io._common import (
    check_targets,
    is_number_or_missing,
    iter_lines,
    name_of,
    parse_row,
    split_fields,
    unquote,
)

__all__ = ["read_csv", "iter_csv", "write_csv"]


def _check_header_arg(header):
    if header not in ("auto", True, False):
        raise InvalidParameterError(f"header={header!r} must be 'auto', True or False")


def _is_header(toks, path, lineno, header):
    if header is not True and header is not False:
        text = [j for j, t in enumerate(toks) if not is_number_or_missing(t)]
        if not text:
            return False
        if len(text) == len(toks):
            return True
        j = text[0]
        shown = toks[j] if len(toks[j]) <= 40 else toks[j][:37] + "..."
        raise DataFormatError(
            f"{name_of(path)}, line {lineno} (first row) column {j + 1}: {shown!r} is not a number while other "
            f"cells of the row are; a header row must hold only names and a data row only numbers "
            "(fix the cell, or pass header=True / header=False)"
        )
    return bool(header)


def _rows(path, header):
    """Yield ``("header", names, lineno)`` at most once, then ``("row", values, lineno)``."""
    n_cols = None
    from_header = False
    for lineno, raw in iter_lines(path):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        toks = split_fields(line)
        if n_cols is None:
            n_cols = len(toks)
            if _is_header(toks, path, lineno, header):
                from_header = True
                yield "header", [unquote(t) for t in toks], lineno
                continue
        if len(toks) != n_cols:
            raise DataFormatError(
                f"{name_of(path)}, line {lineno}: {len(toks)} values but {n_cols} expected "
                f"(from the {'header' if from_header else 'first row'}); fix the row"
            )
        yield "row", parse_row(toks, path, lineno), lineno
    if n_cols is None:
        raise DataFormatError(f"{name_of(path)} is empty; a CSV file needs at least one row of numbers")


def _names(names, n_cols, targets):
    if names is None:
        names = [f"x{j}" for j in range(n_cols - targets)] + [f"y{j}" for j in range(targets)]
    n_x = n_cols - targets
    return names[:n_x], names[n_x:]


def read_csv(path, targets=1, header="auto"):
    """Read a whole CSV file.

    Returns
    -------
    X, Y : ndarray, ndarray
        Inputs and the last ``targets`` columns (NaN marks missing cells).
    feature_names, target_names : list of str
    linenos : ndarray of int
        File line of each data row.
    """
    _check_header_arg(header)
    rows, linenos, names = [], [], None
    for kind, vals, lineno in _rows(path, header):
        if kind == "header":
            names = vals
        else:
            rows.append(vals)
            linenos.append(lineno)
    if not rows:
        raise DataFormatError(f"{name_of(path)} has a header but no data rows; add rows of numbers")
    M = np.asarray(rows, dtype=np.float64)
    targets = check_targets(targets, M.shape[1], path)
    n_x = M.shape[1] - targets
    fnames, tnames = _names(names, M.shape[1], targets)
    return M[:, :n_x], M[:, n_x:], fnames, tnames, np.asarray(linenos)


def iter_csv(path, rows, targets=1, header="auto"):
    """Yield ``(X, Y, linenos, row_offset)`` blocks of at most ``rows`` data rows.

    Parsing is exactly that of :func:`read_csv`; memory holds one block at a time.
    """
    _check_header_arg(header)
    buf, lines, offset, n_x = [], [], 0, None
    for kind, vals, lineno in _rows(path, header):
        if kind == "header":
            continue
        if n_x is None:
            n_x = len(vals) - check_targets(targets, len(vals), path)
        buf.append(vals)
        lines.append(lineno)
        if len(buf) == rows:
            M = np.asarray(buf, dtype=np.float64)
            yield M[:, :n_x], M[:, n_x:], np.asarray(lines), offset
            offset += len(buf)
            buf, lines = [], []
    if buf:
        M = np.asarray(buf, dtype=np.float64)
        yield M[:, :n_x], M[:, n_x:], np.asarray(lines), offset
    elif n_x is None:
        raise DataFormatError(f"{name_of(path)} has a header but no data rows; add rows of numbers")


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
