"""The table encoder: see :mod:`skframe.preprocessing`."""

from __future__ import annotations

import re
import warnings

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from skframe.exceptions import DegenerateDataWarning, InvalidInputError, InvalidParameterError
from skframe.io._common import UNNAMED_FIRST
from skframe.preprocessing.cells import (
    COLUMN_TYPES,
    DATE_PARTS,
    as_columns,
    check_column_types,
    check_table_columns,
    date_features,
    date_seconds,
    distinct_text,
    is_smiles_column,
    line_of,
    parse_column_types,
    parse_numbers,
    plain_numbers,
    text_cells,
)
from skframe.preprocessing.dates import DATE_ORDER_TYPES, date_spec
from skframe.preprocessing.saved import check_encoding

__all__ = ["TableEncoder", "COLUMN_TYPES", "MISSING_CATEGORY", "parse_column_types", "table_problems"]

#: The category of a missing cell in a categorical column.
MISSING_CATEGORY = "<missing>"
_SHOWN = 3


#: Names under which a file's row index arrives: blank leading header cells (read as ``unnamed1``, ``unnamed2``),
#: pandas' unnamed index read back (``Unnamed: 0``), R's row names as some exporters write them (``rownames``,
#: ``row.names``, readr's ``...1``), and the usual names of a running number (``index``, ``id``); any case.
INDEX_NAMES = frozenset({"", UNNAMED_FIRST, "unnamed: 0", "rownames", "row.names", "...1", "index", "id"})
#: The types that give no feature (left out).
LEFT_OUT = ("text", "empty", "index")
#: The fewest rows for which a first column of a table without names is read as a row index by its values alone.
POSITIONAL_INDEX_ROWS = 10


def is_index_name(name):
    """Whether a column name is one a row index arrives under (:data:`INDEX_NAMES`, any case, pandas' ``Unnamed: K``
    or a blank leading header cell's ``unnamedK``)."""
    text = str(name).strip().lower()
    return text in INDEX_NAMES or bool(re.fullmatch(r"unnamed: \d+(\.\d+)?|unnamed\d+", text))


def _whole(values):
    v = np.asarray(values, dtype=np.float64)
    return v, bool(v.size and np.all(np.isfinite(v)) and np.all(v == np.round(v)))


def is_permutation(values):
    """Whether numbers are ``0..n-1`` or ``1..n`` in any order (a row index, perhaps after the rows were shuffled).

    >>> is_permutation([3, 1, 2]), is_permutation([0, 2, 1]), is_permutation([1, 2, 4])
    (True, True, False)
    """
    v, whole = _whole(values)
    if not whole or v.size < 2:
        return False
    start = v.min()
    return bool(start in (0.0, 1.0) and v.max() == start + v.size - 1 and np.unique(v).size == v.size)


def is_row_index(name, values, *, positional=False):
    """Whether a numeric column is a row index, by its name and its values.

    Named as one (:func:`is_index_name`): integers that increase strictly down the file (row numbers, or the
    numbers of the rows kept from a larger table, as a held-out file has them), a permutation of ``0..n-1`` or
    ``1..n`` in any order (:func:`is_permutation`: the index of a table whose rows were shuffled afterwards), or
    any whole numbers each seen once (row labels, as R's row names may be: case numbers).
    ``positional`` (the first column of a table without names): a permutation of at least
    :data:`POSITIONAL_INDEX_ROWS` rows.
    """
    v, whole = _whole(values)
    if positional:
        return v.size >= POSITIONAL_INDEX_ROWS and is_permutation(v)
    if not is_index_name(name) or v.size < 2 or not whole:
        return False
    return bool(np.unique(v).size == v.size)


def _numbers(name, values, forced, positional=False, row_index="drop"):
    """The spec of a column of numbers: ``numeric``, or ``index`` (left out) for an unforced row index (unless
    ``row_index="keep"``)."""
    if forced is None and row_index == "drop" and is_row_index(name, values, positional=positional):
        v = np.asarray(values, dtype=np.float64)
        what, since = ((f"row numbers {v[0]:.0f}..{v[-1]:.0f}", "") if np.all(np.diff(v) > 0) else
                       (f"a permutation of {v.min():.0f}..{v.max():.0f}", ", the rows reordered since")
                       if is_permutation(v) else (f"{v.size} distinct whole numbers", ", or row labels"))
        return {"name": name, "type": "index",
                "reason": f"{what} (a row index, as pandas' to_csv and R's write.csv write first{since}); left out, "
                          f"keep it with --column-types {name}=numeric"}
    return {"name": name, "type": "numeric", "reason": "numbers"}


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
    row_index : {"drop", "keep"}, default="drop"
        ``"drop"`` leaves out a column that is a row index (:func:`is_row_index`: named as one and holding row
        numbers, or an array's first column holding a permutation of them); ``"keep"`` reads it as numbers, as a
        precomputed kernel needs (its features are row numbers into its Gram matrix).

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

    def __init__(self, *, column_types=None, max_categories=100, identifier_share=0.9, row_index="drop"):
        self.column_types = column_types
        self.row_index = row_index
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
        return self._fit(X, linenos, None)

    def fit_transform(self, X, y=None, *, linenos=None):
        """:meth:`fit`, then :meth:`transform` of the same table, a column of numbers written as text read once."""
        self._fit(X, linenos, memo := {})
        return self._transform(X, linenos, memo)

    def _fit(self, X, linenos, memo):
        """:meth:`fit`; ``memo`` (a dict, or None) receives the parsed values of the numeric columns read from text."""
        memo = {} if memo is None else memo
        if not isinstance(self.max_categories, int) or self.max_categories < 1:
            raise InvalidParameterError(f"max_categories={self.max_categories!r} must be an integer >= 1")
        if self.row_index not in ("drop", "keep"):
            raise InvalidParameterError(f"row_index={self.row_index!r}; use 'drop' (row indexes left out) or 'keep'")
        names, cols = as_columns(X, getattr(X, "feature_names_in_", None))
        check_table_columns(len(names))
        # a table without names (an array): its first column is a row index by its values alone (is_row_index)
        positional = not (hasattr(X, "names") or hasattr(X, "iloc") or isinstance(X, dict)
                          or getattr(X, "feature_names_in_", None) is not None)
        overrides = check_column_types(self.column_types)
        known = set(names)
        unknown = [n for n in overrides if n not in known]
        if unknown:
            raise InvalidParameterError(f"column_types names {unknown[:_SHOWN]}, not columns of the table; "
                                        f"its columns are {names[:8]}")
        specs, problems = [], []
        for j, (name, col) in enumerate(zip(names, cols)):
            spec, problem = self._fit_column(name, col, overrides.get(name), linenos, positional and j == 0, memo)
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

    def _fit_column(self, name, col, forced, linenos, positional, memo):
        col = np.asarray(col)
        if col.dtype.kind in "fiub" and forced in (None, "numeric"):
            return _numbers(name, col, forced, positional, self.row_index), None
        if col.dtype.kind == "M" and forced in (None, "date", *DATE_ORDER_TYPES):
            return {"name": name, "type": "date", "reason": "dates", "date_format": "iso"}, None
        plain = plain_numbers(col) if forced in (None, "numeric") else None  # numbers written as text, at C speed
        if plain is not None:
            memo[name] = plain
            return _numbers(name, plain, forced, positional, self.row_index), None
        text, missing = text_cells(col)
        present = text[~missing]
        if present.size == 0:
            return {"name": name, "type": "empty", "reason": "every cell is missing; left out"}, None
        uniques = distinct_text(present)[0]  # no fixed-width copy: one long cell is not multiplied
        if forced == "text":
            return {"name": name, "type": "text", "reason": "text (forced); left out"}, None
        if forced == "categorical":
            return self._categorical(name, uniques, missing, "(forced)"), None
        values, bad = parse_numbers(text, missing, name=name, linenos=linenos)  # integers beyond 2**53 refused
        if not bad.any() and forced in (None, "numeric"):
            memo[name] = values
            return _numbers(name, values, forced, positional, self.row_index), None
        if forced == "numeric" or (forced is None and bad.sum() * 2 < present.size):
            rows = np.flatnonzero(bad)
            shown = ", ".join(f"{text[i]!r} ({line_of(i, linenos)})" for i in rows[:_SHOWN])
            return None, (f"column {name!r} holds numbers and {rows.size} cell(s) of text such as {shown}: fix "
                          f"them or mark them missing ('?' or empty), read the column as categories with "
                          f"--column-types {name}=categorical, or leave it out with --drop {name}")
        if forced is None and is_smiles_column(uniques):
            return None, (f"column {name!r} holds SMILES strings such as {uniques[0]!r}: read them as molecules "
                          f"with `--inputs smiles --input-column {name}` (in Python: "
                          f"skframe.graphs.GraphBatch.from_smiles), or as categories with --column-types "
                          f"{name}=categorical")
        spec, problem = date_spec(name, uniques, forced,  # dates: one format (skframe.preprocessing.dates)
                                  lambda v: f" ({line_of(int(np.flatnonzero(text == v)[0]), linenos)})")
        if spec is not None or problem is not None:
            return spec, problem
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
        # each categorical column's categories -> position; one-hot encoding is a dictionary look-up per cell,
        # linear in the cells whatever the number of columns (scikit-learn's encoder spends ~2 ms a column)
        self.category_index_ = [{v: k for k, v in enumerate(c["categories"])}
                                for c in self.columns_ if c["type"] == "categorical"]
        self.unknown_counts_ = {}

    # ---------------------------------------------------------------------------------------- transform
    def transform(self, X, *, linenos=None):
        """Numeric features of a table with the fitted columns (matched by name when the table has names).

        Returns
        -------
        ndarray of shape (n_rows, n_features_out), float64
            NaN marks a missing number or date.
        """
        return self._transform(X, linenos, None)

    def _transform(self, X, linenos, memo):
        """:meth:`transform`; ``memo``: the numeric columns' values :meth:`_fit` parsed from this same table."""
        check_is_fitted(self, "columns_")
        names, cols = as_columns(X, self.feature_names_in_)
        by_name = {n: c for n, c in zip(names, cols)}
        n_rows = len(cols[0]) if cols else 0
        blocks, problems, n_cats = [], [], 0
        for spec in self.columns_:
            name, kind = spec["name"], spec["type"]
            if kind in LEFT_OUT:
                continue
            if name not in by_name:
                raise InvalidInputError(f"the table lacks the column {name!r} the encoder was fitted on")
            col = np.asarray(by_name[name])
            if kind == "numeric":
                if col.dtype.kind in "fiub":
                    blocks.append(np.asarray(col, dtype=np.float64)[:, None])
                    continue
                if memo is not None and name in memo:  # parsed by the fit of this same table
                    blocks.append(np.asarray(memo[name], dtype=np.float64)[:, None])
                    continue
                plain = plain_numbers(col)  # numbers written as text, at C speed
                if plain is not None:
                    blocks.append(plain[:, None])
                    continue
                text, missing = text_cells(col)
                values, bad = parse_numbers(text, missing, name=name, linenos=linenos)
                if bad.any():  # new data: such a cell is no number, so a missing one (said, never silent)
                    rows = np.flatnonzero(bad)
                    shown = ", ".join(f"{text[i]!r} ({line_of(i, linenos)})" for i in rows[:_SHOWN])
                    warnings.warn(f"column {name!r} was numeric at fit time but holds {rows.size} cell(s) of text "
                                  f"such as {shown}: read as missing numbers", DegenerateDataWarning, stacklevel=2)
                    values = np.where(bad, np.nan, values)
                blocks.append(values[:, None])
            elif kind == "date":
                if col.dtype.kind == "M":
                    seconds = col.astype("datetime64[s]").astype(np.int64).astype(np.float64)
                    seconds[np.isnat(col)] = np.nan
                else:
                    text, missing = text_cells(col)
                    seconds, bad = date_seconds(text, missing, spec["date_format"])
                    if bad.any():  # new data: a cell that is no date of the fitted format is a missing date (said)
                        shown = ", ".join(f"{text[i]!r} ({line_of(i, linenos)})" for i in np.flatnonzero(bad)[:_SHOWN])
                        warnings.warn(f"column {name!r} was read as {spec['reason']} at fit time but holds "
                                      f"{int(bad.sum())} cell(s) that are not, such as {shown}: read as missing dates",
                                      DegenerateDataWarning, stacklevel=2)
                blocks.append(date_features(seconds))
            else:
                text, missing = text_cells(col)
                text[missing] = MISSING_CATEGORY
                index = self.category_index_[n_cats]
                n_cats += 1
                codes = np.fromiter((index.get(v, -1) for v in text), dtype=np.intp, count=text.shape[0])
                known = codes >= 0  # an unknown category: a row of zeros
                self.unknown_counts_[name] = int(codes.size - known.sum())
                block = np.zeros((codes.size, len(index)))
                block[np.flatnonzero(known), codes[known]] = 1.0
                blocks.append(block)
        if problems:
            raise table_problems(problems)
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
                out.extend(f"{spec['name']}.{p}" for p in DATE_PARTS)
        return np.asarray(out, dtype=object)

    @property
    def used_columns(self):
        """Names of the input columns that give features (not left out)."""
        return [c["name"] for c in self.columns_ if c["type"] not in LEFT_OUT]

    # ---------------------------------------------------------------------------------------- as data
    def to_dict(self):
        """The fitted encoding as JSON-serialisable data (see :meth:`from_dict`)."""
        check_is_fitted(self, "columns_")
        return {"version": 1, "params": {"max_categories": self.max_categories,
                                         "identifier_share": self.identifier_share, "row_index": self.row_index,
                                         "column_types": dict(self.column_types or {})},
                "columns": [dict(c) for c in self.columns_]}

    @classmethod
    def from_dict(cls, data):
        """The fitted encoder saved by :meth:`to_dict`; anything else is refused in one
        :class:`~skframe.exceptions.InvalidInputError` naming the entry (:mod:`skframe.preprocessing.saved`)."""
        check_encoding(data, cls().get_params(), LEFT_OUT)  # one line naming what no to_dict writes
        enc = cls(**data.get("params", {}))
        enc.columns_ = [dict(c) for c in data["columns"]]
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
