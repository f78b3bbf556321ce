"""ARFF files (Weka / Mulan), dense and sparse rows.

``@attribute`` types numeric / real / integer and nominal ``{...}`` (numeric nominal
values such as ``{0,1}`` keep their value, other categories are coded 0, 1, ... in
declaration order); names may be quoted; ``%`` starts a comment line. Rows are dense
(``v1,v2,...``) or sparse (``{index value, ...}``, omitted values are 0, indices 0-based
and increasing) and may be mixed. The LAST ``targets`` attributes are the targets (the
Mulan convention for multi-label and multi-target files). ``?`` marks missing values.
"""

from __future__ import annotations

import math
import re

import numpy as np
import scipy.sparse as sp

from skframe.exceptions import DataFormatError
from skframe.io._common import (
    bad_token,
    check_targets,
    iter_lines,
    name_of,
    parse_number,
    parse_row,
    split_fields,
    split_quoted,
    unquote,
)
from skframe.limits import check

__all__ = ["read_arff", "read_names"]

_ATTR_RE = re.compile(r"""^@attribute\s+('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|\S+)\s+(.+?)\s*$""", re.IGNORECASE)


def _converter(type_str, path, lineno, attr_name):
    t = type_str.strip()
    if t.lower() in ("numeric", "real", "integer"):
        return None  # plain numbers
    if t.startswith("{"):
        if not t.endswith("}"):
            raise DataFormatError(
                f"{name_of(path)}, line {lineno}: nominal type of {attr_name!r} lacks its closing '}}'"
            )
        values = [unquote(v) for v in split_quoted(t[1:-1])]
        try:
            mapping = {v: parse_number(v) for v in values}
            if any(math.isnan(x) for x in mapping.values()):
                raise ValueError
        except ValueError:
            # non-numeric categories are coded by their position in the declaration
            mapping = {v: float(k) for k, v in enumerate(values)}
        return mapping
    # refused when the column is read (a column left out may have any type)
    return _Unsupported(DataFormatError(
        f"{name_of(path)}, line {lineno}: attribute {attr_name!r} has type {t[:40]!r}; only numeric/real/integer "
        f"and nominal {{...}} attributes are supported; convert the column to numbers, or leave it out with "
        f"`--drop {attr_name}` (in Python: drop=[{attr_name!r}])"
    ))


class _Unsupported:
    """The converter of an attribute whose type cannot be read: its error, raised if the column is kept."""

    def __init__(self, error):
        self.error = error


def _value(tok, conv, path, lineno, col, name=None):
    if conv is None:
        try:
            return parse_number(tok)
        except ValueError:
            raise bad_token(path, lineno, tok, col, name=name) from None
    if tok == "?":
        return math.nan
    v = conv.get(unquote(tok))
    if v is None:
        shown = sorted(conv)[:10]
        raise DataFormatError(
            f"{name_of(path)}, line {lineno} column {col + 1}: {tok[:40]!r} is not one of the declared nominal values "
            f"{shown}; fix the value or the @attribute declaration"
        )
    return v


def _header(lines, path):
    names, convs = [], []
    for lineno, raw in lines:
        line = raw.strip()
        if not line or line.startswith("%"):
            continue
        low = line.lower()
        if low.startswith("@relation"):
            continue
        if low.startswith("@attribute"):
            m = _ATTR_RE.match(line)
            if not m:
                raise DataFormatError(f"{name_of(path)}, line {lineno}: malformed @attribute declaration {line[:80]!r}")
            name = unquote(m.group(1))
            names.append(name)
            convs.append(_converter(m.group(2), path, lineno, name))
            continue
        if low.startswith("@data"):
            if not names:
                raise DataFormatError(f"{name_of(path)} declares no @attribute before @data")
            check("features", len(names), f"{name_of(path)}: the header")
            return names, convs
        raise DataFormatError(
            f"{name_of(path)}, line {lineno}: unexpected header line {line[:80]!r}; "
            "expected @relation, @attribute or @data"
        )
    if not names:
        raise DataFormatError(f"{name_of(path)} is empty or not an ARFF file (no @attribute and no @data section)")
    raise DataFormatError(f"{name_of(path)} has no @data section; add '@data' followed by the rows")


def _sparse_row(line, lineno, path, convs, n_cols, where=None, names=None):
    """Positions and values of a sparse row; ``where[j]``: the kept position of column j (-1: left out)."""
    end = line.find("}")
    if end < 0:
        raise DataFormatError(f"{name_of(path)}, line {lineno}: sparse row lacks its closing '}}'")
    if line[end + 1:].strip():
        raise DataFormatError(f"{name_of(path)}, line {lineno}: unexpected text after the sparse row's '}}'")
    body = line[1:end].strip()
    cols, vals = [], []
    prev = -1
    if not body:
        return cols, vals
    for item in body.split(","):
        parts = item.split()
        if len(parts) != 2:
            raise DataFormatError(
                f"{name_of(path)}, line {lineno}: sparse entry {item.strip()[:40]!r} must be 'index value'"
            )
        try:
            idx = int(parts[0])
        except ValueError:
            raise DataFormatError(
                f"{name_of(path)}, line {lineno}: sparse index {parts[0][:40]!r} is not an integer"
            ) from None
        if idx < 0 or idx >= n_cols:
            raise DataFormatError(
                f"{name_of(path)}, line {lineno}: sparse index {idx} is outside 0..{n_cols - 1} "
                f"({n_cols} attributes declared); fix the index or the header"
            )
        if idx <= prev:
            raise DataFormatError(
                f"{name_of(path)}, line {lineno}: sparse indices must be strictly increasing ({idx} after {prev})"
            )
        prev = idx
        if where is not None and where[idx] < 0:
            continue  # a column left out
        v = _value(parts[1], convs[idx], path, lineno, idx, names[idx] if names is not None else None)
        if v != 0.0:  # NaN != 0, so missing cells are kept
            cols.append(idx if where is None else int(where[idx]))
            vals.append(v)
    return cols, vals


def read_arff(path, targets=1, columns=None):
    """Read an ARFF file.

    Parameters
    ----------
    path : str
    targets : int, default=1
        Number of trailing target attributes (when ``columns`` names no targets).
    columns : skframe.io.columns.Columns, optional
        The attributes to keep as features and targets, by name or position; attributes
        left out are not parsed (they may have any type).

    Returns
    -------
    X, Y : ndarray or CSR, ndarray
        CSR inputs when any row is sparse, else dense; NaN marks missing cells.
    feature_names, target_names : list of str
    linenos : ndarray of int
        File line of each data row.
    """
    lines = iter_lines(path)
    names, convs = _header(lines, path)
    n_cols = len(names)
    if columns is None:
        targets = check_targets(targets, n_cols, path)
        kept = list(range(n_cols))
        n_x = n_cols - targets
    else:
        features, target_cols = columns.resolve(names, n_cols, targets, path)
        kept, n_x = features + target_cols, len(features)
    for j in kept:
        if isinstance(convs[j], _Unsupported):
            raise convs[j].error
    where = None
    if len(kept) != n_cols or kept != list(range(n_cols)):
        where = np.full(n_cols, -1, dtype=np.intp)
        where[kept] = np.arange(len(kept))
    all_numeric = all(convs[j] is None for j in kept)
    dense_rows, dense_pos = [], []
    sp_rows, sp_cols, sp_vals = [], [], []
    any_sparse = False
    linenos = []
    r = 0
    for lineno, raw in lines:
        line = raw.strip()
        if not line or line.startswith("%"):
            continue
        if line.startswith("{"):
            cols, vals = _sparse_row(line, lineno, path, convs, n_cols, where, names)
            sp_rows.extend([r] * len(cols))
            sp_cols.extend(cols)
            sp_vals.extend(vals)
            any_sparse = True
        else:
            toks = split_fields(line)
            if len(toks) != n_cols:
                raise DataFormatError(
                    f"{name_of(path)}, line {lineno}: {len(toks)} values but {n_cols} attributes are declared; "
                    "fix the row"
                )
            if all_numeric:
                vals = parse_row(toks, path, lineno, None if where is None else kept, names)
            else:
                vals = [_value(toks[j], convs[j], path, lineno, j, names[j]) for j in kept]
            dense_rows.append(vals)
            dense_pos.append(r)
        linenos.append(lineno)
        r += 1
    n = r
    if n == 0:
        raise DataFormatError(f"{name_of(path)} has no data rows after @data")
    width = len(kept)
    if any_sparse:
        if dense_rows:
            D = np.asarray(dense_rows, dtype=np.float64)
            rr, cc = np.nonzero(D != 0.0)
            sp_rows.extend(np.asarray(dense_pos)[rr].tolist())
            sp_cols.extend(cc.tolist())
            sp_vals.extend(D[rr, cc].tolist())
        M = sp.csr_matrix(
            (np.asarray(sp_vals, dtype=np.float64),
             (np.asarray(sp_rows, dtype=np.intp), np.asarray(sp_cols, dtype=np.intp))),
            shape=(n, width),
        )
        M.sum_duplicates()
        X, Y = M[:, :n_x].tocsr(), M[:, n_x:].toarray()
    else:
        M = np.asarray(dense_rows, dtype=np.float64).reshape(n, width)
        X, Y = M[:, :n_x], M[:, n_x:]
    chosen = [names[j] for j in kept]
    return X, Y, chosen[:n_x], chosen[n_x:], np.asarray(linenos)


def read_names(path):
    """The attribute names of an ARFF file (only its header is read)."""
    return _header(iter_lines(path), path)[0]
