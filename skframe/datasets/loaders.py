"""Reading and writing data files: CSV, NPZ, ARFF (Mulan) and LIBSVM / SVMlight.

:func:`load_dataset` returns a :class:`Dataset` with inputs ``X`` (ndarray or SciPy CSR
matrix), targets ``Y`` (always 2-D, shape ``(n, targets)``), names, and a record of how
missing values were handled. Files are only ever opened read-only.

Missing values (``?``, an empty field, ``NaN``) are never silently replaced: by default a
:class:`~skframe.exceptions.MissingValuesError` says how many there are and where, and the
caller chooses ``missing="zero"``, ``"mean"`` or ``"drop"`` (CLI: ``--missing``). The
reference code of seed 002 silently turned the 1 632 missing cells of rf1 into zeros;
``missing="zero"`` reproduces that on purpose.

:class:`FeatureScaler` / :func:`scale_features` standardise inputs and keep sparse
matrices sparse.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .._validation import as_float_array
from ..exceptions import (
    DataFormatError,
    InvalidInputError,
    InvalidParameterError,
    MissingValuesError,
    NotFittedError,
)

__all__ = [
    "Dataset",
    "load_dataset",
    "save_dataset",
    "FeatureScaler",
    "scale_features",
    "FORMATS",
    "MISSING_STRATEGIES",
]

#: File extensions recognised by :func:`load_dataset` and the format each one means.
FORMATS = {
    ".csv": "csv",
    ".npz": "npz",
    ".arff": "arff",
    ".svm": "libsvm",
    ".libsvm": "libsvm",
    ".svmlight": "libsvm",
}
_FMT_ALIASES = {"csv": "csv", "npz": "npz", "arff": "arff", "libsvm": "libsvm", "svmlight": "libsvm", "svm": "libsvm"}

#: Accepted values of ``missing=``.
MISSING_STRATEGIES = ("error", "zero", "mean", "drop")

_MISSING_TOKENS = frozenset({"?", "", "nan", "NaN", "NAN", "Nan"})
_SPARSE_DENSITY_THRESHOLD = 0.3
_MISSING_FIX = "use missing='zero'|'mean'|'drop' (CLI: --missing zero|mean|drop)"


# --------------------------------------------------------------------------------------
# The Dataset container
# --------------------------------------------------------------------------------------
@dataclass
class Dataset:
    """A loaded data set.

    Attributes
    ----------
    X : ndarray of shape (n_samples, n_features) or scipy.sparse.csr_matrix
        Inputs, float64.
    Y : ndarray of shape (n_samples, n_targets)
        Targets, float64; kept 2-D even with one target (see :attr:`y`).
    feature_names, target_names : list of str
        Column names (from the header / ARFF attributes, or generated ``x0``, ``y0``...).
    path : str or None
        File the data came from.
    format : str
        ``"csv"``, ``"npz"``, ``"arff"`` or ``"libsvm"``.
    n_missing : int
        Number of missing cells found (inputs and targets), whatever was done with them.
    missing_rows : ndarray of int
        0-based indices, in the file's data-row order, of the rows holding a missing cell.
    missing : str
        Strategy requested: ``"error"`` (then nothing was missing), ``"zero"``, ``"mean"``
        or ``"drop"`` (then ``missing_rows`` were removed from X and Y).
    """

    X: object
    Y: np.ndarray
    feature_names: list = field(default_factory=list)
    target_names: list = field(default_factory=list)
    path: str | None = None
    format: str = ""
    n_missing: int = 0
    missing_rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.intp))
    missing: str = "error"

    @property
    def y(self):
        """Targets as a 1-D array when there is one target, else the 2-D ``Y`` (possibly ``(n, 0)``)."""
        return self.Y[:, 0] if self.Y.shape[1] == 1 else self.Y

    @property
    def n_samples(self):
        return self.X.shape[0]

    @property
    def n_features(self):
        return self.X.shape[1]

    @property
    def n_targets(self):
        return self.Y.shape[1]

    @property
    def is_sparse(self):
        return sp.issparse(self.X)

    def __repr__(self):
        kind = "sparse" if sp.issparse(self.X) else "dense"
        name = os.path.basename(self.path) if self.path else None
        return (
            f"Dataset(path={name!r}, format={self.format!r}, n_samples={self.n_samples}, "
            f"n_features={self.n_features} ({kind}), n_targets={self.n_targets}, "
            f"n_missing={self.n_missing}, missing={self.missing!r})"
        )


# --------------------------------------------------------------------------------------
# small helpers
# --------------------------------------------------------------------------------------
def _name(path):
    return os.path.basename(str(path))


def _parse_number(tok):
    """Float value of a token, NaN for a missing marker; ValueError otherwise."""
    if tok in _MISSING_TOKENS:
        return math.nan
    value = float(tok)
    if math.isnan(value):  # e.g. "nan" spelled differently
        return math.nan
    if math.isinf(value):
        raise ValueError("infinite")
    return value


def _bad_token(path, lineno, tok, col=None, extra=""):
    where = f" column {col + 1}" if col is not None else ""
    try:
        what = "is infinite" if math.isinf(float(tok)) else "is not a number"
    except ValueError:
        what = "is not a number"
    return DataFormatError(
        f"{_name(path)}, line {lineno}{where}: {tok!r} {what}"
        f"{extra}; fix the value or mark it missing with '?' (then choose --missing zero|mean|drop)"
    )


def _read_lines(path):
    with open(path, "r", encoding="utf-8-sig", errors="replace") as fh:  # read-only
        return fh.read().splitlines()


def _check_targets(targets, n_columns, path):
    if isinstance(targets, bool) or not isinstance(targets, (int, np.integer)):
        raise InvalidParameterError(f"targets={targets!r} must be an integer (number of target columns at the end)")
    if targets < 0 or targets >= n_columns:
        raise InvalidParameterError(
            f"targets={targets} is impossible for {_name(path)} with {n_columns} columns; "
            f"choose 0 <= targets <= {n_columns - 1} so that at least one input column remains "
            "(the last `targets` columns are the targets, 0 for a features-only file; CLI: --targets)"
        )
    return int(targets)


def _split_quoted(line):
    """Split a comma-separated line whose fields may be quoted with ' or "."""
    out, buf, quote, i = [], [], None, 0
    while i < len(line):
        c = line[i]
        if quote:
            if c == "\\" and i + 1 < len(line):
                buf.append(line[i + 1])
                i += 2
                continue
            if c == quote:
                quote = None
            else:
                buf.append(c)
        elif c in "'\"":
            quote = c
        elif c == ",":
            out.append("".join(buf).strip())
            buf = []
        else:
            buf.append(c)
        i += 1
    out.append("".join(buf).strip())
    return out


def _unquote(s):
    s = s.strip()
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "'\"":
        return s[1:-1]
    return s


# --------------------------------------------------------------------------------------
# format readers: each returns (M, n_x, feature_names, target_names, line_of_row)
# where M holds X and Y side by side (dense ndarray or CSR with NaN for missing)
# or, for libsvm/npz, (X, Y, ...) directly.
# --------------------------------------------------------------------------------------
def _read_csv(path, targets, header):
    lines = _read_lines(path)
    rows, linenos = [], []
    names = None
    n_cols = None
    first = True
    for lineno, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        toks = _split_quoted(line) if ('"' in line or "'" in line) else [t.strip() for t in line.split(",")]
        if first:
            first = False
            if header == "auto":
                is_header = False
                for t in toks:
                    try:
                        float(t) if t not in _MISSING_TOKENS else None
                    except ValueError:
                        is_header = True
                        break
            else:
                is_header = bool(header)
            n_cols = len(toks)
            if is_header:
                names = [_unquote(t) for t in toks]
                continue
        if len(toks) != n_cols:
            raise DataFormatError(
                f"{_name(path)}, line {lineno}: {len(toks)} values but {n_cols} expected "
                f"(from the {'header' if names is not None else 'first row'}); fix the row"
            )
        vals = []
        for j, t in enumerate(toks):
            try:
                vals.append(_parse_number(t))
            except ValueError:
                raise _bad_token(path, lineno, t, j) from None
        rows.append(vals)
        linenos.append(lineno)
    if n_cols is None:
        raise DataFormatError(f"{_name(path)} is empty; a CSV file needs at least one row of numbers")
    if not rows:
        raise DataFormatError(f"{_name(path)} has a header but no data rows; add rows of numbers")
    targets = _check_targets(targets, n_cols, path)
    M = np.asarray(rows, dtype=np.float64)
    if names is None:
        names = [f"x{j}" for j in range(n_cols - targets)] + [f"y{j}" for j in range(targets)]
    n_x = n_cols - targets
    return M, n_x, names[:n_x], names[n_x:], np.asarray(linenos)


_ATTR_RE = re.compile(r"""^@attribute\s+('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|\S+)\s+(.+?)\s*$""", re.IGNORECASE)


def _arff_converter(type_str, path, lineno, attr_name):
    t = type_str.strip()
    low = t.lower()
    if low in ("numeric", "real", "integer"):
        return None  # plain numbers
    if t.startswith("{"):
        if not t.endswith("}"):
            raise DataFormatError(f"{_name(path)}, line {lineno}: nominal type of {attr_name!r} lacks its closing '}}'")
        values = [_unquote(v) for v in _split_quoted(t[1:-1])]
        mapping = {}
        try:
            for v in values:
                mapping[v] = float(v)
        except ValueError:
            # non-numeric categories are coded by their position in the declaration
            mapping = {v: float(k) for k, v in enumerate(values)}
        return mapping
    raise DataFormatError(
        f"{_name(path)}, line {lineno}: attribute {attr_name!r} has type {t!r}; only numeric/real/integer "
        "and nominal {...} attributes are supported; convert the column to numbers"
    )


def _arff_value(tok, conv, path, lineno, col):
    if conv is None:
        try:
            return _parse_number(tok)
        except ValueError:
            raise _bad_token(path, lineno, tok, col) from None
    if tok == "?":
        return math.nan
    v = conv.get(_unquote(tok))
    if v is None:
        raise DataFormatError(
            f"{_name(path)}, line {lineno} column {col + 1}: {tok!r} is not one of the declared nominal values "
            f"{sorted(conv)}; fix the value or the @attribute declaration"
        )
    return v


def _read_arff(path, targets):
    lines = _read_lines(path)
    names, convs = [], []
    data_start = None
    for lineno, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("%"):
            continue
        low = line.lower()
        if low.startswith("@relation"):
            continue
        if low.startswith("@attribute"):
            m = _ATTR_RE.match(line)
            if not m:
                raise DataFormatError(f"{_name(path)}, line {lineno}: malformed @attribute declaration {line[:80]!r}")
            name = _unquote(m.group(1))
            names.append(name)
            convs.append(_arff_converter(m.group(2), path, lineno, name))
            continue
        if low.startswith("@data"):
            data_start = lineno
            break
        raise DataFormatError(
            f"{_name(path)}, line {lineno}: unexpected header line {line[:80]!r}; "
            "expected @relation, @attribute or @data"
        )
    if not names and data_start is None:
        raise DataFormatError(f"{_name(path)} is empty or not an ARFF file (no @attribute and no @data section)")
    if data_start is None:
        raise DataFormatError(f"{_name(path)} has no @data section; add '@data' followed by the rows")
    if not names:
        raise DataFormatError(f"{_name(path)} declares no @attribute before @data")
    n_cols = len(names)
    targets = _check_targets(targets, n_cols, path)
    all_numeric = all(c is None for c in convs)

    dense_rows, dense_pos = [], []
    sp_rows, sp_cols, sp_vals, sparse_pos = [], [], [], []
    linenos = []
    r = 0
    for lineno in range(data_start + 1, len(lines) + 1):
        line = lines[lineno - 1].strip()
        if not line or line.startswith("%"):
            continue
        if line.startswith("{"):
            end = line.find("}")
            if end < 0:
                raise DataFormatError(f"{_name(path)}, line {lineno}: sparse row lacks its closing '}}'")
            body = line[1:end].strip()
            prev = -1
            if body:
                for item in body.split(","):
                    parts = item.split()
                    if len(parts) != 2:
                        raise DataFormatError(
                            f"{_name(path)}, line {lineno}: sparse entry {item.strip()!r} must be 'index value'"
                        )
                    try:
                        idx = int(parts[0])
                    except ValueError:
                        raise DataFormatError(
                            f"{_name(path)}, line {lineno}: sparse index {parts[0]!r} is not an integer"
                        ) from None
                    if idx < 0 or idx >= n_cols:
                        raise DataFormatError(
                            f"{_name(path)}, line {lineno}: sparse index {idx} is outside 0..{n_cols - 1} "
                            f"({n_cols} attributes declared); fix the index or the header"
                        )
                    if idx <= prev:
                        raise DataFormatError(
                            f"{_name(path)}, line {lineno}: sparse indices must be strictly increasing "
                            f"({idx} after {prev})"
                        )
                    prev = idx
                    v = _arff_value(parts[1], convs[idx], path, lineno, idx)
                    if v != 0.0:
                        sp_rows.append(r)
                        sp_cols.append(idx)
                        sp_vals.append(v)
            sparse_pos.append(r)
        else:
            toks = [t.strip() for t in line.split(",")] if ('"' not in line and "'" not in line) else _split_quoted(line)
            if len(toks) != n_cols:
                raise DataFormatError(
                    f"{_name(path)}, line {lineno}: {len(toks)} values but {n_cols} attributes are declared; fix the row"
                )
            if all_numeric:
                vals = []
                for j, t in enumerate(toks):
                    try:
                        vals.append(_parse_number(t))
                    except ValueError:
                        raise _bad_token(path, lineno, t, j) from None
            else:
                vals = [_arff_value(t, convs[j], path, lineno, j) for j, t in enumerate(toks)]
            dense_rows.append(vals)
            dense_pos.append(r)
        linenos.append(lineno)
        r += 1
    n = r
    if n == 0:
        raise DataFormatError(f"{_name(path)} has no data rows after @data")
    n_x = n_cols - targets

    if sparse_pos:
        # assemble everything as CSR (dense rows included), NaN marks missing
        if dense_rows:
            D = np.asarray(dense_rows, dtype=np.float64)
            rr, cc = np.nonzero(D != 0.0)  # NaN != 0 is True, so missing cells are kept
            sp_rows.extend(np.asarray(dense_pos)[rr].tolist())
            sp_cols.extend(cc.tolist())
            sp_vals.extend(D[rr, cc].tolist())
        M = sp.csr_matrix(
            (np.asarray(sp_vals, dtype=np.float64), (np.asarray(sp_rows, dtype=np.intp), np.asarray(sp_cols, dtype=np.intp))),
            shape=(n, n_cols),
        )
        M.sum_duplicates()
    else:
        M = np.asarray(dense_rows, dtype=np.float64)
    return M, n_x, names[:n_x], names[n_x:], np.asarray(linenos)


def _read_libsvm(path):
    lines = _read_lines(path)
    rows, cols, vals, labels, linenos = [], [], [], [], []
    multilabel = False
    r = 0
    min_idx = None
    for lineno, raw in enumerate(lines, start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        toks = line.split()
        if ":" in toks[0]:
            lab_tok, feats = "", toks  # no label at all: an empty label set
            multilabel = True
        else:
            lab_tok, feats = toks[0], toks[1:]
        if lab_tok == "":
            labs = []
        else:
            parts = lab_tok.split(",")
            if len(parts) > 1:
                multilabel = True
            labs = []
            for p in parts:
                try:
                    v = float(p)
                except ValueError:
                    raise DataFormatError(
                        f"{_name(path)}, line {lineno}: label {p!r} is not a number; "
                        "LIBSVM rows read 'label[,label2,...] index:value ...'"
                    ) from None
                if not math.isfinite(v):
                    raise DataFormatError(f"{_name(path)}, line {lineno}: label {p!r} is not finite")
                labs.append(v)
        seen = set()
        for item in feats:
            idx_s, sep, val_s = item.partition(":")
            if not sep:
                raise DataFormatError(
                    f"{_name(path)}, line {lineno}: {item!r} is not an 'index:value' pair; "
                    "LIBSVM rows read 'label[,label2,...] index:value ...'"
                )
            if idx_s == "qid":
                continue
            try:
                idx = int(idx_s)
            except ValueError:
                raise DataFormatError(f"{_name(path)}, line {lineno}: feature index {idx_s!r} is not an integer") from None
            if idx < 0:
                raise DataFormatError(f"{_name(path)}, line {lineno}: feature index {idx} is negative")
            if idx in seen:
                raise DataFormatError(f"{_name(path)}, line {lineno}: feature index {idx} appears twice")
            seen.add(idx)
            try:
                v = _parse_number(val_s)
            except ValueError:
                raise _bad_token(path, lineno, val_s, extra=f" (feature {idx})") from None
            min_idx = idx if min_idx is None else min(min_idx, idx)
            if v != 0.0:
                rows.append(r)
                cols.append(idx)
                vals.append(v)
        labels.append(labs)
        linenos.append(lineno)
        r += 1
    n = r
    if n == 0:
        raise DataFormatError(f"{_name(path)} is empty; a LIBSVM file needs rows 'label index:value ...'")
    cols = np.asarray(cols, dtype=np.intp)
    offset = 0 if (min_idx is None or min_idx == 0) else 1  # 1-based unless an index 0 appears
    cols -= offset
    n_features = int(cols.max()) + 1 if cols.size else (0 if min_idx is None else min_idx - offset + 1)
    if n_features == 0:
        raise DataFormatError(f"{_name(path)} has no features (no 'index:value' pairs)")
    X = sp.csr_matrix((np.asarray(vals, dtype=np.float64), (np.asarray(rows, dtype=np.intp), cols)), shape=(n, n_features))
    X.sum_duplicates()
    if multilabel:
        classes = sorted({v for labs in labels for v in labs})
        pos = {v: k for k, v in enumerate(classes)}
        Y = np.zeros((n, len(classes)))
        for i, labs in enumerate(labels):
            for v in labs:
                Y[i, pos[v]] = 1.0
        target_names = [str(int(c)) if float(c).is_integer() else repr(c) for c in classes]
        if not classes:
            raise DataFormatError(f"{_name(path)}: no row has a label")
    else:
        Y = np.asarray([labs[0] for labs in labels], dtype=np.float64).reshape(-1, 1)
        target_names = ["y"]
    feature_names = [str(j + offset) for j in range(n_features)]
    return X, Y, feature_names, target_names, np.asarray(linenos)


def _read_npz(path, targets=1):
    try:
        fh = np.load(path, allow_pickle=False)
    except Exception as exc:  # BadZipFile, OSError, ValueError ...
        raise DataFormatError(f"{_name(path)} is not a readable .npz archive ({exc}); write it with numpy.savez") from exc
    with fh:
        keys = set(fh.files)
        try:
            if "X" in keys:
                X = np.asarray(fh["X"])
                if X.dtype == object:
                    raise DataFormatError(f"{_name(path)}: X is an object array; store numbers")
                if X.ndim != 2:
                    raise DataFormatError(f"{_name(path)}: X has shape {X.shape}; a 2-D array is needed")
                X = X.astype(np.float64)
            else:
                pre = "X_" if "X_data" in keys else ""
                need = [pre + k for k in ("data", "indices", "indptr", "shape")]
                if not all(k in keys for k in need):
                    raise DataFormatError(
                        f"{_name(path)} has keys {sorted(keys)}; expected 'X' (dense) or "
                        "'X_data', 'X_indices', 'X_indptr', 'X_shape' (sparse CSR; 'data', 'indices', 'indptr', "
                        "'shape' as written by scipy.sparse.save_npz also work) and 'Y' or 'y'"
                    )
                fmt_key = pre + "format"
                layout = "csr"
                if fmt_key in keys:
                    layout = np.asarray(fh[fmt_key]).item()
                    layout = layout.decode() if isinstance(layout, bytes) else str(layout)
                cls = {"csr": sp.csr_matrix, "csc": sp.csc_matrix}.get(layout)
                if cls is None:
                    raise DataFormatError(f"{_name(path)}: sparse layout {layout!r} is not supported; store CSR or CSC")
                shape = tuple(int(s) for s in fh[pre + "shape"])
                try:
                    X = cls((fh[pre + "data"].astype(np.float64), fh[pre + "indices"], fh[pre + "indptr"]), shape=shape)
                    X = sp.csr_matrix(X)
                    X.check_format(full_check=True)
                except ValueError as exc:
                    raise DataFormatError(f"{_name(path)}: the sparse X arrays are inconsistent ({exc})") from exc
            ykey = "Y" if "Y" in keys else ("y" if "y" in keys else None)
            if ykey is None and targets == 0:
                ykey = "Y"
                Y = np.zeros((X.shape[0], 0))
            elif ykey is None:
                raise DataFormatError(f"{_name(path)} has keys {sorted(keys)} but no targets; store them under 'Y' or 'y'")
            else:
                Y = np.asarray(fh[ykey])
            if Y.dtype == object:
                raise DataFormatError(f"{_name(path)}: {ykey} is an object array; store numbers")
            Y = Y.astype(np.float64)
            if Y.ndim == 1:
                Y = Y.reshape(-1, 1)
            if Y.ndim != 2:
                raise DataFormatError(f"{_name(path)}: {ykey} has shape {Y.shape}; a 1-D or 2-D array is needed")
            fnames = [str(s) for s in fh["feature_names"]] if "feature_names" in keys else None
            tnames = [str(s) for s in fh["target_names"]] if "target_names" in keys else None
        except ValueError as exc:
            raise DataFormatError(f"{_name(path)}: cannot read the arrays ({exc})") from exc
    if X.shape[0] != Y.shape[0]:
        raise DataFormatError(f"{_name(path)}: X has {X.shape[0]} rows but {ykey} has {Y.shape[0]}; they must match")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise DataFormatError(f"{_name(path)}: X is empty (shape {X.shape})")
    if fnames is None or len(fnames) != X.shape[1]:
        fnames = [f"x{j}" for j in range(X.shape[1])]
    if tnames is None or len(tnames) != Y.shape[1]:
        tnames = [f"y{j}" for j in range(Y.shape[1])]
    return X, Y, fnames, tnames


# --------------------------------------------------------------------------------------
# missing values
# --------------------------------------------------------------------------------------
def _missing_masks(X, Y):
    """Per-row count of missing cells in X and in Y (NaN markers)."""
    if sp.issparse(X):
        bad = np.isnan(X.data)
        row_of = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
        per_row_x = np.bincount(row_of[bad], minlength=X.shape[0])
    else:
        per_row_x = np.isnan(X).sum(axis=1)
    per_row_y = np.isnan(Y).sum(axis=1)
    return per_row_x, per_row_y


def _impute(X, strategy):
    if sp.issparse(X):
        X = X.tocsr(copy=True)
        bad = np.isnan(X.data)
        if not bad.any():
            return X
        if strategy == "zero":
            X.data[bad] = 0.0
            X.eliminate_zeros()
            return X
        cols = X.indices
        n = X.shape[0]
        miss_per_col = np.bincount(cols[bad], minlength=X.shape[1])
        sums = np.bincount(cols[~bad], weights=X.data[~bad], minlength=X.shape[1])
        observed = n - miss_per_col  # implicit zeros are observed zeros
        means = np.divide(sums, observed, out=np.zeros_like(sums), where=observed > 0)
        X.data[bad] = means[cols[bad]]
        X.eliminate_zeros()
        return X
    X = X.copy()
    bad = np.isnan(X)
    if not bad.any():
        return X
    if strategy == "zero":
        X[bad] = 0.0
        return X
    observed = (~bad).sum(axis=0)
    sums = np.where(bad, 0.0, X).sum(axis=0)
    means = np.divide(sums, observed, out=np.zeros_like(sums), where=observed > 0)
    r, c = np.nonzero(bad)
    X[r, c] = means[c]
    return X


def _handle_missing(X, Y, strategy, path, linenos):
    per_x, per_y = _missing_masks(X, Y)
    per_row = per_x + per_y
    rows = np.flatnonzero(per_row)
    n_missing = int(per_row.sum())
    if n_missing == 0:
        return X, Y, 0, rows
    if strategy == "error":
        first = rows[:5].tolist()
        lines = ""
        if linenos is not None:
            lines = f", file lines {np.asarray(linenos)[rows[:5]].tolist()}"
        in_y = int(per_y.sum())
        ypart = f" ({in_y} of them in targets)" if in_y else ""
        raise MissingValuesError(
            f"{_name(path)} has {n_missing} missing values{ypart} ('?', empty or NaN) in {rows.size} rows "
            f"(first rows, 0-based: {first}{lines}); {_MISSING_FIX}"
        )
    if strategy == "drop":
        keep = per_row == 0
        if not keep.any():
            raise InvalidInputError(
                f"{_name(path)}: every row has a missing value, missing='drop' would leave no data; "
                "use missing='zero' or 'mean'"
            )
        X = X[keep]
        Y = Y[keep]
        if sp.issparse(X):
            X = sp.csr_matrix(X)
        return X, Y, n_missing, rows
    return _impute(X, strategy), _impute(Y, strategy), n_missing, rows


# --------------------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------------------
def _resolve_format(path, fmt):
    if fmt is not None:
        key = str(fmt).lower().lstrip(".")
        if key not in _FMT_ALIASES:
            raise InvalidParameterError(
                f"fmt={fmt!r} is not a known format; choose one of {sorted(set(_FMT_ALIASES))}"
            )
        return _FMT_ALIASES[key]
    ext = Path(path).suffix.lower()
    if ext not in FORMATS:
        raise DataFormatError(
            f"cannot tell the format of {_name(path)} from its extension {ext or '(none)'!r}; "
            f"use one of {sorted(FORMATS)} or pass fmt= (CLI: --format) with one of "
            f"{sorted(set(FORMATS.values()))}"
        )
    return FORMATS[ext]


def load_dataset(path, *, targets=1, fmt=None, missing="error", sparse="auto", header="auto"):
    """Load a data file into a :class:`Dataset`.

    Formats (chosen from the extension, or forced with ``fmt``):

    ``csv`` (``.csv``)
        Comma-separated numbers; the last ``targets`` columns are the targets. A header
        row is detected when the first row holds a non-numeric token (force with
        ``header=True/False``). Lines starting with ``#`` are skipped. ``?``, an empty
        field and ``NaN`` mark missing values.
    ``npz`` (``.npz``, read with ``allow_pickle=False``)
        Targets under ``Y`` (or ``y``; 1-D means one target). Dense inputs under ``X``;
        sparse inputs as CSR arrays ``X_data``, ``X_indices``, ``X_indptr``, ``X_shape``
        (or unprefixed ``data``, ``indices``, ``indptr``, ``shape`` [, ``format``] as
        written by :func:`scipy.sparse.save_npz`). Optional ``feature_names`` and
        ``target_names`` string arrays. NaN marks missing values. ``targets`` is ignored
        except that ``targets=0`` allows a file without ``Y``.
    ``arff`` (``.arff``, Mulan style)
        ``@attribute`` types numeric / real / integer and nominal ``{...}`` (numeric
        nominal values such as ``{0,1}`` keep their value, other categories are coded
        0, 1, ... in declaration order); names may be quoted; ``%`` starts a comment
        line. Rows are dense (``v1,v2,...``) or sparse (``{index value, ...}``, omitted
        values are 0). The LAST ``targets`` attributes are the targets (Mulan convention).
        ``?`` marks missing values.
    ``libsvm`` (``.svm``, ``.libsvm``, ``.svmlight``; ``fmt="svmlight"`` too)
        Rows ``label[,label2,...] index:value ...``; ``#`` starts a comment. Indices are
        1-based unless an index 0 occurs (then 0-based). With single labels, ``Y`` has
        one column holding the label; if any row has a comma-separated label list (or
        no label), ``Y`` is a binary indicator matrix over the sorted distinct labels.
        ``targets`` is ignored. ``qid:`` tokens are skipped.

    Parameters
    ----------
    path : str or path-like
        File to read (opened read-only; never modified).
    targets : int, default=1
        Number of target columns at the end of each CSV/ARFF row (``0 <= targets <
        n_columns``); ``0`` reads a features-only file (``Y`` then has shape ``(n, 0)``,
        e.g. for ``skframe predict``; a NPZ file may then lack ``Y``).
    fmt : {"csv", "npz", "arff", "libsvm", "svmlight"} or None
        Force the format instead of using the extension.
    missing : {"error", "zero", "mean", "drop"}, default="error"
        What to do with missing cells: raise :class:`MissingValuesError` (with counts,
        rows and the fix), replace by 0, replace by the column mean of the observed
        values (implicit zeros of sparse rows count as observed), or drop the rows.
        Applies to input and target cells alike.
    sparse : {"auto", True, False}, default="auto"
        ``"auto"``: sparse ARFF rows, LIBSVM files and sparse-stored NPZ give a CSR
        ``X`` when its density is below 0.3 (else an ndarray); dense formats give an
        ndarray. ``True``: always CSR. ``False``:
        always a dense ndarray (this can be large: bibtex is 3.7 % dense).
    header : {"auto", True, False}, default="auto"
        CSV only: whether the first row is a header.

    Returns
    -------
    Dataset

    Raises
    ------
    InvalidInputError
        The file does not exist or is a directory.
    DataFormatError
        Unknown extension, empty file, malformed rows (with the line number).
    InvalidParameterError
        Bad ``targets``, ``fmt``, ``missing`` or ``sparse``.
    MissingValuesError
        Missing values found and ``missing="error"``.

    Examples
    --------
    >>> ds = load_dataset("rf1-train.arff", targets=8, missing="zero")  # doctest: +SKIP
    >>> ds.n_missing, ds.missing_rows.size                              # doctest: +SKIP
    (1632, 60)
    """
    if missing not in MISSING_STRATEGIES:
        raise InvalidParameterError(f"missing={missing!r} is not a strategy; choose one of {list(MISSING_STRATEGIES)}")
    if not (sparse == "auto" or sparse is True or sparse is False):
        raise InvalidParameterError(f"sparse={sparse!r} must be 'auto', True or False")
    if header not in ("auto", True, False):
        raise InvalidParameterError(f"header={header!r} must be 'auto', True or False")
    path = os.fspath(path)
    fmt = _resolve_format(path, fmt)
    if not os.path.exists(path):
        raise InvalidInputError(f"data file {path!r} does not exist; check the path")
    if os.path.isdir(path):
        raise InvalidInputError(f"{path!r} is a directory; give the path of a data file")
    if os.path.getsize(path) == 0:
        raise DataFormatError(f"{_name(path)} is empty (0 bytes); give a file with data rows")

    linenos = None
    if fmt == "npz":
        X, Y, fnames, tnames = _read_npz(path, targets)
    elif fmt == "libsvm":
        X, Y, fnames, tnames, linenos = _read_libsvm(path)
    else:
        if fmt == "csv":
            M, n_x, fnames, tnames, linenos = _read_csv(path, targets, header)
        else:
            M, n_x, fnames, tnames, linenos = _read_arff(path, targets)
        if sp.issparse(M):
            X = M[:, :n_x].tocsr()
            Y = M[:, n_x:].toarray()
        else:
            X, Y = M[:, :n_x], M[:, n_x:]

    X, Y, n_missing, rows = _handle_missing(X, Y, missing, path, linenos)

    if sp.issparse(X):
        nnz_density = X.nnz / max(1, X.shape[0] * X.shape[1])
        if sparse is False or (sparse == "auto" and nnz_density >= _SPARSE_DENSITY_THRESHOLD):
            X = X.toarray()
        else:
            X = sp.csr_matrix(X, dtype=np.float64)
            X.sort_indices()
    elif sparse is True:
        X = sp.csr_matrix(X)
    if not sp.issparse(X):
        X = np.ascontiguousarray(X, dtype=np.float64)
    Y = np.ascontiguousarray(Y, dtype=np.float64)
    return Dataset(
        X=X,
        Y=Y,
        feature_names=list(fnames),
        target_names=list(tnames),
        path=path,
        format=fmt,
        n_missing=n_missing,
        missing_rows=np.asarray(rows, dtype=np.intp),
        missing=missing,
    )


def save_dataset(path, X, Y, *, fmt=None, feature_names=None, target_names=None):
    """Write inputs and targets (or predictions) to CSV or NPZ.

    CSV: one header row (``feature_names`` then ``target_names``, default ``x0..``,
    ``y0..``) then one row per sample, X columns first, 17 significant digits (exact
    float64 round trip); a sparse X is densified. NPZ: ``X`` (dense) or
    ``X_data``/``X_indices``/``X_indptr``/``X_shape`` (CSR), ``Y``, ``feature_names``,
    ``target_names`` — exactly what :func:`load_dataset` reads back.

    Parameters
    ----------
    path : str or path-like
        Destination; the format follows the extension (``.csv`` or ``.npz``) or ``fmt``.
        An existing file is overwritten.
    X : array-like, sparse matrix or None
        Inputs; ``None`` writes only ``Y`` (e.g. predictions).
    Y : array-like of shape (n_samples,) or (n_samples, n_targets)
        Targets or predictions.
    fmt : {"csv", "npz"} or None
    feature_names, target_names : list of str, optional

    Returns
    -------
    str
        The path written.
    """
    path = os.fspath(path)
    fmt = _resolve_format(path, fmt)
    if fmt not in ("csv", "npz"):
        raise InvalidParameterError(f"save_dataset writes 'csv' or 'npz', not {fmt!r}; use a .csv or .npz path")
    Y = np.asarray(Y, dtype=np.float64)
    if Y.ndim == 1:
        Y = Y.reshape(-1, 1)
    if Y.ndim != 2:
        raise InvalidInputError(f"Y must be 1-D or 2-D, got shape {Y.shape}")
    if X is not None:
        if sp.issparse(X):
            X = sp.csr_matrix(X, dtype=np.float64)
        else:
            X = np.asarray(X, dtype=np.float64)
            if X.ndim == 1:
                X = X.reshape(-1, 1)
        if X.shape[0] != Y.shape[0]:
            raise InvalidInputError(f"X has {X.shape[0]} rows (shape {X.shape}) but Y has {Y.shape[0]} (shape {Y.shape})")
    n_x = 0 if X is None else X.shape[1]
    fnames = list(feature_names) if feature_names is not None else [f"x{j}" for j in range(n_x)]
    tnames = list(target_names) if target_names is not None else [f"y{j}" for j in range(Y.shape[1])]
    if len(fnames) != n_x or len(tnames) != Y.shape[1]:
        raise InvalidInputError(
            f"{len(fnames)} feature names for {n_x} columns / {len(tnames)} target names for {Y.shape[1]} columns; "
            "give one name per column"
        )
    if fmt == "npz":
        arrays = {"Y": Y, "feature_names": np.asarray(fnames, dtype=str), "target_names": np.asarray(tnames, dtype=str)}
        if X is not None:
            if sp.issparse(X):
                arrays.update(X_data=X.data, X_indices=X.indices, X_indptr=X.indptr, X_shape=np.asarray(X.shape))
            else:
                arrays["X"] = X
        with open(path, "wb") as fh:
            np.savez(fh, **arrays)
        return path
    table = Y if X is None else np.hstack([X.toarray() if sp.issparse(X) else X, Y])
    for nm in fnames + tnames:
        if "," in nm or "\n" in nm:
            raise InvalidInputError(f"column name {nm!r} contains a comma or newline; rename it for CSV output")
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(",".join(fnames + tnames) + "\n")
        np.savetxt(fh, table, delimiter=",", fmt="%.17g")
    return path


# --------------------------------------------------------------------------------------
# scaling
# --------------------------------------------------------------------------------------
class FeatureScaler:
    """Standardise features with training statistics, keeping sparse matrices sparse.

    Dense input: ``(X - mean) / std``. Sparse input (``with_mean="auto"``): only
    ``X / std`` — centring would densify the matrix, and for distance-based kernels
    (Gaussian, Laplacian, ...) it is unnecessary because a shift cancels in
    ``||a - b||²``: ``||(a - μ)/σ - (b - μ)/σ||² = ||a/σ - b/σ||²``. It DOES change
    linear and polynomial kernels (``<a - μ, b - μ> ≠ <a, b>``), so use dense data with
    ``with_mean=True`` when centring matters there. Standard deviations are population
    ones (ddof = 0, like :class:`sklearn.preprocessing.StandardScaler`); zero-variance
    columns are left unscaled (scale 1).

    Parameters
    ----------
    method : {"standard", "none"}, default="standard"
        ``"none"`` makes :meth:`transform` return a copy unchanged.
    with_mean : {"auto", True, False}, default="auto"
        Subtract the mean; ``"auto"`` means True for dense and False for sparse input.
        ``True`` with sparse input is refused (it would densify).

    Attributes
    ----------
    mean_ : ndarray of shape (n_features,)
        Column means of the training data (subtracted only if ``with_mean_``).
    scale_ : ndarray of shape (n_features,)
        Column divisors (std, or 1 for constant columns and ``method="none"``).
    with_mean_ : bool
    n_features_in_ : int
    """

    def __init__(self, method="standard", *, with_mean="auto"):
        self.method = method
        self.with_mean = with_mean

    def fit(self, X, y=None):
        if self.method not in ("standard", "none"):
            raise InvalidParameterError(f"method={self.method!r} must be 'standard' or 'none'")
        if self.with_mean not in ("auto", True, False):
            raise InvalidParameterError(f"with_mean={self.with_mean!r} must be 'auto', True or False")
        X = as_float_array(X, "X")
        is_sparse = sp.issparse(X)
        if self.with_mean is True and is_sparse:
            raise InvalidParameterError(
                "with_mean=True would densify the sparse X; use with_mean='auto' (scale only: centring cancels "
                "in distance-based kernels) or pass X.toarray()"
            )
        d = X.shape[1]
        self.n_features_in_ = d
        self.with_mean_ = (not is_sparse) if self.with_mean == "auto" else bool(self.with_mean)
        if self.method == "none":
            self.mean_ = np.zeros(d)
            self.scale_ = np.ones(d)
            self.with_mean_ = False
            return self
        if is_sparse:
            from sklearn.utils.sparsefuncs import mean_variance_axis

            mean, var = mean_variance_axis(X, axis=0)
        else:
            mean, var = X.mean(axis=0), X.var(axis=0)
        std = np.sqrt(np.maximum(var, 0.0))
        constant = std <= 10 * np.finfo(np.float64).eps * np.maximum(1.0, np.abs(mean))
        self.mean_ = np.asarray(mean, dtype=np.float64)
        self.scale_ = np.where(constant, 1.0, std)
        return self

    def transform(self, X):
        if not hasattr(self, "scale_"):
            raise NotFittedError("this FeatureScaler is not fitted yet; call fit(X_train) first")
        X = as_float_array(X, "X")
        if X.shape[1] != self.n_features_in_:
            raise InvalidInputError(
                f"X has {X.shape[1]} features but the scaler was fitted on {self.n_features_in_}; "
                "use data from the same feature space"
            )
        if sp.issparse(X):
            if self.with_mean_:
                raise InvalidInputError("this scaler centres (fitted on dense data) and X is sparse; pass X.toarray()")
            return sp.csr_matrix(X @ sp.diags(1.0 / self.scale_))
        if self.with_mean_:
            return (X - self.mean_) / self.scale_
        return X / self.scale_

    def fit_transform(self, X, y=None):
        return self.fit(X).transform(X)


def scale_features(X_train, X_test=None, method="standard"):
    """Standardise ``X_train`` and ``X_test`` with the training statistics.

    Dense data are centred and divided by the column std; sparse data are only divided
    by the std and stay sparse (centring cancels in ``||a - b||²`` so distance-based
    kernels are unaffected; linear/polynomial kernels are — see :class:`FeatureScaler`).

    Returns
    -------
    X_train_scaled, X_test_scaled, scaler : array or CSR, array/CSR or None, FeatureScaler
        ``scaler.mean_`` and ``scaler.scale_`` hold the fitted statistics.
    """
    scaler = FeatureScaler(method).fit(X_train)
    return scaler.transform(X_train), (None if X_test is None else scaler.transform(X_test)), scaler
