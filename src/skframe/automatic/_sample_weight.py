"""``skframe fit --sample-weight COLUMN``: one column of the training CSV file as the rows' weights.

The column is left out of the features (as ``--drop`` does) and read as numbers; the weights go to the
estimator's ``fit(X, y, sample_weight=...)`` (every skframe estimator takes them, the structured ones too:
``--task structured`` with a numeric table; molecule and graph files are refused, their readers taking every other
column as a target).
"""

from __future__ import annotations

import csv

import numpy as np

from skframe.exceptions import InvalidInputError, InvalidParameterError

__all__ = ["read_weight_column", "prepare_weights"]


def prepare_weights(opts):
    """Before the training file is read: leave the weight column out of the features; returns the column."""
    column = opts.sample_weight
    if column is None:
        return None
    if opts.train is None or not _is_table(opts):
        raise InvalidParameterError("--sample-weight reads a column of a CSV (any delimiter, compressed or not), "
                                    "Parquet or Arrow training file; give one (or fit in Python with "
                                    "model.fit(X, y, sample_weight=w))")
    if opts.missing == "drop":
        raise InvalidParameterError("--sample-weight cannot follow the rows --missing drop removes; use --missing "
                                    "error, zero or mean")
    opts.drop = list(opts.drop or []) + [column]
    return column


def _is_table(opts):
    from skframe.io.formats import resolve_format  # lazy: skframe.io loads SciPy

    try:
        return resolve_format(str(opts.train), opts.format) in ("csv", "parquet", "feather")
    except Exception:  # molecule and graph files have formats of their own
        return False


def read_weight_column(path, column):
    """The weights of column ``column`` (a header name, or a position from 1) of the CSV file ``path``."""
    with open(path, newline="", encoding="utf-8") as fh:
        rows = [r for r in csv.reader(fh) if r]
    header = rows[0]
    try:
        values = [float(v) for v in header]
        has_header = False
        del values
    except ValueError:
        has_header = True
    if column in header:
        j = header.index(column)
    elif column.isdigit() and 1 <= int(column) <= len(header):
        j = int(column) - 1
    else:
        raise InvalidParameterError(f"--sample-weight {column!r} names no column of {path} (columns: "
                                    f"{', '.join(header) if has_header else f'1 to {len(header)}'})")
    try:
        w = np.array([float(r[j]) for r in rows[1 if has_header else 0:]])
    except (ValueError, IndexError) as exc:
        raise InvalidInputError(f"--sample-weight {column!r}: every row of {path} needs a number there ({exc})") \
            from exc
    if not np.all(np.isfinite(w)) or np.any(w < 0) or not w.sum() > 0:
        raise InvalidInputError(f"--sample-weight {column!r}: the weights must be finite, non-negative, not all 0")
    return w
