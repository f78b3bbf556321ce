"""From a raw table to numeric features: :class:`TableEncoder`.

Each column of a table is read as one of

``numeric``
    numbers (a missing cell stays NaN, for the missing-value policy that follows);
``categorical``
    text with few distinct values (at most ``max_categories``, and not nearly all distinct):
    one-hot encoded by scikit-learn's :class:`~sklearn.preprocessing.OneHotEncoder`; a missing
    cell is a category of its own (``<missing>``); a category unseen at fit time gives a row of
    zeros and is counted (:attr:`TableEncoder.unknown_counts_`);
``date``
    dates or date-times (ISO ``2024-05-17``, ``2024-05-17 13:30:00``, or ``17/05/2024``,
    ``05/17/2024``, ``2024/05/17``, ``17.05.2024`` when every cell fits one of them): four
    numeric features, the days since 1970-01-01 (fractional with a time of day), the year, the
    month and the weekday (0 = Monday); a missing date gives NaN in all four;
``text``
    free text (more distinct values than ``max_categories``) or identifier-like columns (nearly
    every value distinct): left out, with the reason recorded;
``empty``
    every cell missing: left out.

The detection can be overridden per column (``column_types={"zip": "categorical"}``). A
column that cannot be used as asked (numbers mixed with text, text given as numeric) is a
*problem*: :meth:`TableEncoder.fit` raises one :class:`~skframe.exceptions.InvalidInputError`
that lists every problem column with its fix.

The fitted encoding is data: :meth:`TableEncoder.to_dict` gives the column types, categories
and rules as JSON-serialisable values and :meth:`TableEncoder.from_dict` rebuilds the same
encoder (this is how ``skframe fit --model-out`` saves it: no pickle).

Examples
--------
>>> import numpy as np
>>> X = np.array([["Paris", "2024-01-15", "3.5"], ["Lyon", "2024-02-01", "?"],
...               ["Paris", "2023-12-31", "1.0"]], dtype=object)
>>> enc = TableEncoder().fit(X)
>>> [c["type"] for c in enc.columns_]
['categorical', 'date', 'numeric']
>>> enc.get_feature_names_out().tolist()
['x0=Lyon', 'x0=Paris', 'x1.days', 'x1.year', 'x1.month', 'x1.weekday', 'x2']
>>> enc.transform(X)[1].tolist()[:4]
[1.0, 0.0, 19754.0, 2024.0]
"""

from __future__ import annotations

import math
from datetime import datetime

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from skframe.exceptions import InvalidInputError, InvalidParameterError
from skframe.io._common import _SMILES_ATOM, MISSING_TOKENS, looks_like_smiles

__all__ = ["TableEncoder", "COLUMN_TYPES", "MISSING_CATEGORY", "parse_column_types"]

#: The types a column may be given (``column_types=``, CLI ``--column-types``).
COLUMN_TYPES = ("numeric", "categorical", "date", "text")
#: The category of a missing cell in a categorical column.
MISSING_CATEGORY = "<missing>"
_DATE_FORMATS = ("%d/%m/%Y", "%m/%d/%Y", "%Y/%m/%d", "%d.%m.%Y", "%Y-%m-%d %H:%M", "%d/%m/%Y %H:%M")
_DATE_PARTS = ("days", "year", "month", "weekday")
_SHOWN = 3


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
            if not sep or not name.strip() or kind not in COLUMN_TYPES:
                raise InvalidParameterError(
                    f"--column-types {part.strip()!r} must be NAME=TYPE with TYPE one of {', '.join(COLUMN_TYPES)} "
                    "(e.g. --column-types zip=categorical,sold=date)")
            out[name.strip()] = kind
    return out


# ------------------------------------------------------------------------------------------------ cells
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


def _text_of(col):
    """The cells of a column as stripped text, and its missing mask."""
    col = np.asarray(col, dtype=object)
    missing = np.fromiter((_is_missing(v) for v in col), dtype=bool, count=col.shape[0])
    text = np.array([None if m else str(v).strip() for v, m in zip(col, missing)], dtype=object)
    return text, missing


def _numbers(text, missing):
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


def _date_format(values):
    """``"iso"`` or a ``strptime`` format that reads every value, else None."""
    try:
        np.array(values, dtype="datetime64[s]")
        return "iso"
    except (ValueError, TypeError, OverflowError):
        pass
    for fmt in _DATE_FORMATS:
        try:
            for v in values:
                datetime.strptime(v, fmt)
            return fmt
        except ValueError:
            continue
    return None


def _seconds(text, missing, fmt):
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


def _date_features(seconds):
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


def _smiles_column(values):
    """True when every value reads as SMILES and most have two atoms or more (not codes such as ``S000123``)."""
    if not all(looks_like_smiles(v) for v in values):
        return False
    return sum(len(_SMILES_ATOM.findall(v)) >= 2 for v in values) * 2 > len(values)


def _line(i, linenos):
    return f"line {int(linenos[i])}" if linenos is not None else f"row {int(i)}"


def _as_columns(X, names=None):
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
class TableEncoder(TransformerMixin, BaseEstimator):
    """Turn a raw table (numbers, categories, dates, text) into numeric features.

    See the module docstring for the column types and the rules that choose them.

    Parameters
    ----------
    column_types : dict of str to str, optional
        ``{column name: type}`` overriding the detection (types: numeric, categorical, date, text).
    max_categories : int, default=100
        A text column with more distinct values is free text (left out).
    identifier_share : float, default=0.9
        A text column of at least 20 values whose distinct values are more than this share of
        its values is identifier-like (left out).

    Attributes
    ----------
    columns_ : list of dict
        Per input column: ``name``, ``type``, ``reason`` and, for categorical columns, ``categories``;
        for dates, ``date_format``.
    feature_names_in_ : ndarray of str
    n_features_in_ : int
    unknown_counts_ : dict
        Per categorical column, the cells of the last :meth:`transform` whose category was not seen at fit time.

    Examples
    --------
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.impute import SimpleImputer
    >>> from skframe import SketchedKernelRidge
    >>> X = [["a", "1.0"], ["b", "2.0"], ["a", "?"], ["b", "4.0"]] * 5
    >>> pipe = make_pipeline(TableEncoder(), SimpleImputer(), SketchedKernelRidge(sketch_size=5, random_state=0))
    >>> pipe.fit(X, [1.0, 2.0, 1.5, 4.0] * 5).predict([["c", "2.0"]]).shape
    (1,)
    """

    def __init__(self, *, column_types=None, max_categories=100, identifier_share=0.9):
        self.column_types = column_types
        self.max_categories = max_categories
        self.identifier_share = identifier_share

    # ---------------------------------------------------------------------------------------- fit
    def fit(self, X, y=None, *, linenos=None):
        """Choose each column's type and learn its categories.

        Parameters
        ----------
        X : skframe.io.table.Table, pandas.DataFrame, dict of columns or 2-D array-like of cells
        y : ignored
        linenos : array of int, optional
            File line of each row, for messages.

        Raises
        ------
        InvalidInputError
            One message listing every column that cannot be used as asked, and the fix for each
            (its ``problems`` attribute holds them one by one).
        """
        if not isinstance(self.max_categories, int) or self.max_categories < 1:
            raise InvalidParameterError(f"max_categories={self.max_categories!r} must be an integer >= 1")
        names, cols = _as_columns(X, getattr(X, "feature_names_in_", None))
        overrides = dict(self.column_types or {})
        known = set(names)
        unknown = [n for n in overrides if n not in known]
        if unknown:
            raise InvalidParameterError(f"column_types names {unknown[:_SHOWN]}, not columns of the table; "
                                        f"its columns are {names[:8]}")
        specs, problems = [], []
        for name, col in zip(names, cols):
            spec, problem = self._fit_column(name, col, overrides.get(name), linenos)
            specs.append(spec)
            if problem:
                problems.append(problem)
        if problems:
            raise table_problems(problems)
        self.columns_ = specs
        self.feature_names_in_ = np.asarray(names, dtype=object)
        self.n_features_in_ = len(names)
        self._build()
        return self

    def _fit_column(self, name, col, forced, linenos):
        col = np.asarray(col)
        if col.dtype.kind in "fiub" and forced in (None, "numeric"):
            return {"name": name, "type": "numeric", "reason": "numbers"}, None
        if col.dtype.kind == "M" and forced in (None, "date"):
            return {"name": name, "type": "date", "reason": "dates", "date_format": "iso"}, None
        text, missing = _text_of(col)
        present = text[~missing]
        if present.size == 0:
            return {"name": name, "type": "empty", "reason": "every cell is missing; left out"}, None
        values, bad = _numbers(text, missing)
        uniques = np.unique(present.astype(str)).tolist()
        if forced == "text":
            return {"name": name, "type": "text", "reason": "text (forced); left out"}, None
        if forced == "categorical":
            return self._categorical(name, uniques, missing, "(forced)"), None
        if not bad.any() and forced in (None, "numeric"):
            return {"name": name, "type": "numeric", "reason": "numbers"}, None
        if forced == "numeric" or (forced is None and bad.sum() * 2 < present.size):
            rows = np.flatnonzero(bad)
            shown = ", ".join(f"{text[i]!r} ({_line(i, linenos)})" for i in rows[:_SHOWN])
            return None, (f"column {name!r} holds numbers and {rows.size} cell(s) of text such as {shown}: fix "
                          f"them or mark them missing ('?' or empty), read the column as categories with "
                          f"--column-types {name}=categorical, or leave it out with --drop {name}")
        if forced is None and _smiles_column(uniques):
            return None, (f"column {name!r} holds SMILES strings such as {uniques[0]!r}: read them as molecules "
                          f"with `--inputs smiles --input-column {name}` (in Python: "
                          f"skframe.graphs.GraphBatch.from_smiles), or as categories with --column-types "
                          f"{name}=categorical")
        fmt = _date_format(uniques)
        if fmt is not None:
            return {"name": name, "type": "date", "reason": "dates" + (" (forced)" if forced else ""),
                    "date_format": fmt}, None
        if forced == "date":
            i = int(np.flatnonzero(~missing)[0])
            return None, (f"column {name!r} was given as dates but not every cell is one, e.g. {text[i]!r} "
                          f"({_line(i, linenos)}); dates read: ISO 2024-05-17, 17/05/2024, 05/17/2024, 2024/05/17, "
                          f"17.05.2024: fix the cells, or read it as categories with --column-types {name}=categorical")
        n_present = int(present.size)
        if n_present >= 20 and len(uniques) > self.identifier_share * n_present:
            return {"name": name, "type": "text", "reason": f"identifier-like ({len(uniques)} distinct values in "
                                                           f"{n_present}); left out"}, None
        if len(uniques) > self.max_categories:
            return {"name": name, "type": "text", "reason": f"free text ({len(uniques)} distinct values, more than "
                                                            f"{self.max_categories}); left out"}, None
        return self._categorical(name, uniques, missing, ""), None

    @staticmethod
    def _categorical(name, uniques, missing, note):
        cats = sorted(uniques) + ([MISSING_CATEGORY] if missing.any() else [])
        reason = f"{len(uniques)} distinct values" + (", missing as a category" if missing.any() else "")
        return {"name": name, "type": "categorical", "categories": cats, "reason": reason + (f" {note}" if note
                                                                                              else "")}

    def _build(self):
        from sklearn.preprocessing import OneHotEncoder  # lazy: scikit-learn's preprocessing sub-package

        cats = [c["categories"] for c in self.columns_ if c["type"] == "categorical"]
        self.onehot_ = None
        if cats:
            self.onehot_ = OneHotEncoder(categories=[np.asarray(c, dtype=object) for c in cats],
                                         handle_unknown="ignore", sparse_output=False, dtype=np.float64)
            self.onehot_.fit(np.asarray([[c[0] for c in cats]], dtype=object))
        self.unknown_counts_ = {}

    # ---------------------------------------------------------------------------------------- transform
    def transform(self, X, *, linenos=None):
        """Numeric features of a table with the fitted columns (matched by name when the table has names).

        Returns
        -------
        ndarray of shape (n_rows, n_features_out), float64
            NaN marks a missing number or date.
        """
        check_is_fitted(self, "columns_")
        names, cols = _as_columns(X, self.feature_names_in_)
        by_name = {n: c for n, c in zip(names, cols)}
        n_rows = len(cols[0]) if cols else 0
        blocks, cat_cells, problems = [], [], []
        for spec in self.columns_:
            name, kind = spec["name"], spec["type"]
            if kind in ("text", "empty"):
                continue
            if name not in by_name:
                raise InvalidInputError(f"the table lacks the column {name!r} the encoder was fitted on")
            col = np.asarray(by_name[name])
            if kind == "numeric":
                if col.dtype.kind in "fiub":
                    blocks.append(np.asarray(col, dtype=np.float64)[:, None])
                    continue
                text, missing = _text_of(col)
                values, bad = _numbers(text, missing)
                if bad.any():
                    rows = np.flatnonzero(bad)
                    shown = ", ".join(f"{text[i]!r} ({_line(i, linenos)})" for i in rows[:_SHOWN])
                    problems.append(f"column {name!r} was numeric at fit time but holds {rows.size} cell(s) of text "
                                    f"such as {shown}: fix them or mark them missing ('?' or empty)")
                blocks.append(values[:, None])
            elif kind == "date":
                if col.dtype.kind == "M":
                    seconds = col.astype("datetime64[s]").astype(np.int64).astype(np.float64)
                    seconds[np.isnat(col)] = np.nan
                else:
                    text, missing = _text_of(col)
                    seconds = _seconds(text, missing, spec["date_format"])
                blocks.append(_date_features(seconds))
            else:
                text, missing = _text_of(col)
                text[missing] = MISSING_CATEGORY
                cat_cells.append(text)
                known = set(spec["categories"])
                self.unknown_counts_[name] = int(sum(1 for v in text if v not in known))
                blocks.append(len(cat_cells) - 1)  # filled from the one-hot block below
        if problems:
            raise table_problems(problems)
        if cat_cells:
            onehot = self.onehot_.transform(np.stack(cat_cells, axis=1))
            edges = np.cumsum([0] + [len(c) for c in self.onehot_.categories_])
            blocks = [onehot[:, edges[b]:edges[b + 1]] if isinstance(b, int) else b for b in blocks]
        if not blocks:
            return np.zeros((n_rows, 0))
        return np.ascontiguousarray(np.hstack(blocks), dtype=np.float64)

    def get_feature_names_out(self, input_features=None):
        """Names of the output features: ``name`` (numbers), ``name=category``, ``name.days`` ``.year`` ``.month``
        ``.weekday`` (dates)."""
        check_is_fitted(self, "columns_")
        out = []
        for spec in self.columns_:
            if spec["type"] == "numeric":
                out.append(spec["name"])
            elif spec["type"] == "categorical":
                out.extend(f"{spec['name']}={c}" for c in spec["categories"])
            elif spec["type"] == "date":
                out.extend(f"{spec['name']}.{p}" for p in _DATE_PARTS)
        return np.asarray(out, dtype=object)

    @property
    def used_columns(self):
        """Names of the input columns that give features (not left out)."""
        return [c["name"] for c in self.columns_ if c["type"] not in ("text", "empty")]

    # ---------------------------------------------------------------------------------------- as data
    def to_dict(self):
        """The fitted encoding as JSON-serialisable data (see :meth:`from_dict`)."""
        check_is_fitted(self, "columns_")
        return {"version": 1, "params": {"max_categories": self.max_categories,
                                         "identifier_share": self.identifier_share,
                                         "column_types": dict(self.column_types or {})},
                "columns": [dict(c) for c in self.columns_]}

    @classmethod
    def from_dict(cls, data):
        """The fitted encoder saved by :meth:`to_dict`."""
        if not isinstance(data, dict) or data.get("version") != 1 or not isinstance(data.get("columns"), list):
            raise InvalidInputError("not a table encoding saved by TableEncoder.to_dict (version 1)")
        enc = cls(**data.get("params", {}))
        enc.columns_ = [dict(c) for c in data["columns"]]
        for c in enc.columns_:
            if c.get("type") not in COLUMN_TYPES + ("empty",):
                raise InvalidInputError(f"table encoding: unknown column type {c.get('type')!r}")
        enc.feature_names_in_ = np.asarray([c["name"] for c in enc.columns_], dtype=object)
        enc.n_features_in_ = len(enc.columns_)
        enc._build()
        return enc

    def summary(self):
        """One row per input column: ``(name, type, features, reason)``."""
        rows = []
        for c in self.columns_:
            n = {"numeric": 1, "categorical": len(c.get("categories", ())), "date": 4}.get(c["type"], 0)
            rows.append({"name": c["name"], "type": c["type"], "features": n, "reason": c["reason"]})
        return rows


def table_problems(problems):
    """One :class:`InvalidInputError` listing ``problems`` (one line each); ``.problems`` keeps the list."""
    head = (f"the table cannot be used as asked, {len(problems)} problems:" if len(problems) > 1
            else "the table cannot be used as asked:")
    err = InvalidInputError(head + " " + "; ".join(f"({k}) {p}" for k, p in enumerate(problems, 1)))
    err.problems = list(problems)
    return err
