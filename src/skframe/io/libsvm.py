"""LIBSVM / SVMlight files: reading, whole or in row chunks.

Rows read ``label[,label2,...] index:value ...``; ``#`` starts a comment; ``qid:``
tokens are skipped. Indices are 1-based unless an index 0 occurs anywhere in the file
(then 0-based). With single labels, ``Y`` has one column holding the label; if any row
has a comma-separated label list (or no label), ``Y`` is a binary indicator matrix over
the sorted distinct labels. The chunked reader first scans the file once for these
file-wide facts (index base, number of features, label set) so that every chunk is
parsed exactly as the whole file would be.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from skframe.exceptions import DataFormatError
from skframe.io._common import (
    EXACT_INTEGERS,
    MAX_INDEX,
    bad_token,
    inexact_integer,
    inexact_integer_message,
    iter_lines,
    name_of,
    parse_number,
)
from skframe.limits import check, limit

__all__ = ["read_libsvm", "iter_libsvm", "scan_libsvm"]

_SYNTAX = "LIBSVM rows read 'label[,label2,...] index:value ...'"


def _parse_line(line, lineno, path, max_index=MAX_INDEX):
    """``(labels, explicit_multilabel, indices, values)`` of one non-empty row.

    ``max_index``: the largest feature index accepted (the ``features`` limit of :mod:`skframe.limits`).
    """
    toks = line.split()
    if ":" in toks[0]:
        lab_tok, feats, multi = "", toks, True  # no label at all: an empty label set
    else:
        lab_tok, feats, multi = toks[0], toks[1:], False
    labs = []
    if lab_tok:
        parts = lab_tok.split(",")
        multi = len(parts) > 1
        for p in parts:
            try:
                v = float(p)
            except ValueError:
                raise DataFormatError(
                    f"{name_of(path)}, line {lineno}: label {p[:40]!r} is not a number; {_SYNTAX}"
                ) from None
            if not math.isfinite(v):
                raise DataFormatError(f"{name_of(path)}, line {lineno}: label {p[:40]!r} is not finite")
            if abs(v) >= EXACT_INTEGERS and (big := inexact_integer(p)) is not None:  # never rounded silently
                raise DataFormatError(inexact_integer_message(
                    f"{name_of(path)}, line {lineno} (label)", None, big,
                    fix="write class labels as small codes (0, 1, 2 ...) and keep their names apart"))
            labs.append(v)
    idxs, vals = [], []
    seen = set()
    for item in feats:
        idx_s, sep, val_s = item.partition(":")
        if not sep:
            raise DataFormatError(
                f"{name_of(path)}, line {lineno}: {item[:40]!r} is not an 'index:value' pair; {_SYNTAX}"
            )
        if idx_s == "qid":
            continue
        try:
            idx = int(idx_s)
        except ValueError:
            raise DataFormatError(
                f"{name_of(path)}, line {lineno}: feature index {idx_s[:40]!r} is not an integer"
            ) from None
        if idx < 0:
            raise DataFormatError(f"{name_of(path)}, line {lineno}: feature index {idx} is negative")
        if idx > max_index:  # checked before anything is sized by it (a name, an index array per column)
            check("features", idx, f"{name_of(path)}, line {lineno}: feature index {idx} says that the data")
            raise DataFormatError(
                f"{name_of(path)}, line {lineno}: feature index {idx} is larger than {MAX_INDEX}; fix the index"
            )
        if idx in seen:
            raise DataFormatError(f"{name_of(path)}, line {lineno}: feature index {idx} appears twice")
        seen.add(idx)
        try:
            v = parse_number(val_s)
        except ValueError:
            raise bad_token(path, lineno, val_s, extra=f" (feature {idx})") from None
        idxs.append(idx)
        vals.append(v)
    return labs, multi, idxs, vals


def _parsed_rows(path):
    max_index = min(MAX_INDEX, limit("features"))
    for lineno, raw in iter_lines(path):
        line = raw.split("#", 1)[0].strip()
        if line:
            yield (lineno, *_parse_line(line, lineno, path, max_index))


class _Layout:
    """File-wide facts: index base, number of features, single or multi-label, label set.

    ``parsed`` yields ``(lineno, labels, explicit_multilabel, indices, values)`` per row.
    """

    def __init__(self, path, parsed):
        self.n_rows = 0
        min_idx = max_idx = None
        multilabel = False
        classes = set()
        for _, labs, multi, idxs, _vals in parsed:
            self.n_rows += 1
            multilabel |= multi
            classes.update(labs)
            if idxs:
                lo, hi = min(idxs), max(idxs)
                min_idx = lo if min_idx is None else min(min_idx, lo)
                max_idx = hi if max_idx is None else max(max_idx, hi)
        if self.n_rows == 0:
            raise DataFormatError(f"{name_of(path)} is empty; a LIBSVM file needs rows 'label index:value ...'")
        if max_idx is None:
            raise DataFormatError(f"{name_of(path)} has no features (no 'index:value' pairs)")
        self.offset = 0 if min_idx == 0 else 1  # 1-based unless an index 0 appears
        self.n_features = max_idx - self.offset + 1
        self.multilabel = multilabel
        if multilabel:
            if not classes:
                raise DataFormatError(f"{name_of(path)}: no row has a label")
            self.classes = sorted(classes)
            self.target_names = [str(int(c)) if float(c).is_integer() else repr(c) for c in self.classes]
        else:
            self.classes = None
            self.target_names = ["y"]
        self.feature_names = [str(j + self.offset) for j in range(self.n_features)]

    def block(self, rows):
        """``(X, Y)`` of parsed rows ``[(lineno, labels, multi, indices, values), ...]``."""
        n = len(rows)
        r_idx = np.asarray([i for i, row in enumerate(rows) for _ in row[3]], dtype=np.intp)
        cols = np.asarray([j for row in rows for j in row[3]], dtype=np.intp) - self.offset
        vals = np.asarray([v for row in rows for v in row[4]], dtype=np.float64)
        keep = vals != 0.0  # NaN != 0: missing cells are kept
        X = sp.csr_matrix((vals[keep], (r_idx[keep], cols[keep])), shape=(n, self.n_features))
        X.sum_duplicates()
        if self.multilabel:
            pos = {v: k for k, v in enumerate(self.classes)}
            Y = np.zeros((n, len(self.classes)))
            for i, row in enumerate(rows):
                for v in row[1]:
                    Y[i, pos[v]] = 1.0
        else:
            Y = np.asarray([row[1][0] for row in rows], dtype=np.float64).reshape(-1, 1)
        return X, Y


def read_libsvm(path):
    """Read a whole LIBSVM file: ``(X (CSR), Y, feature_names, target_names, linenos)``."""
    rows = list(_parsed_rows(path))
    layout = _Layout(path, rows)
    X, Y = layout.block(rows)
    return X, Y, layout.feature_names, layout.target_names, np.asarray([row[0] for row in rows])


def scan_libsvm(path):
    """The file-wide layout (``n_rows``, ``n_features``, ``target_names``, ...) in one streaming pass."""
    return _Layout(path, _parsed_rows(path))


def iter_libsvm(path, rows):
    """Yield ``(X, Y, linenos, row_offset, layout)`` blocks of at most ``rows`` rows."""
    layout = scan_libsvm(path)
    buf, lines, offset = [], [], 0
    for row in _parsed_rows(path):
        buf.append(row)
        lines.append(row[0])
        if len(buf) == rows:
            X, Y = layout.block(buf)
            yield X, Y, np.asarray(lines), offset, layout
            offset += len(buf)
            buf, lines = [], []
    if buf:
        X, Y = layout.block(buf)
        yield X, Y, np.asarray(lines), offset, layout
