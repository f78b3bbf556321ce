"""Which column of a table is the target, whether a model can be fitted on it, and whether a classifier learnt.

A table's last column is the target by default; public tables often end with something else: a case
identifier, a make and model, a row number. :func:`check_target` looks at the target column(s) *before*
any fit, and refuses in one :class:`~skframe.exceptions.InvalidInputError` (naming the column, why, and the
most plausible targets) when

* the target was not chosen (the last column) and it is an **identifier** (:func:`identifier_reason`): text
  of at least :data:`IDENTIFIER_ROWS` values, more than :data:`IDENTIFIER_SHARE` of them distinct (``93
  distinct values in 93 rows``); whole numbers, all distinct, that are a run ``a..a+n-1`` in any order (a
  row number, shuffled or not) or that sit in a column named as an identifier (``id``, ``case_id``,
  ``CaseID``, ``rownames``, ...); a row index (:func:`~skframe.preprocessing.table_encoder.is_row_index`);
* the target is fitted as **classes** (text labels, or ``--task classification``) and holds more than
  ``max_classes`` distinct values (:data:`DEFAULT_MAX_CLASSES`, 50). A classifier fits one column of
  coefficients per class, and its Newton solver forms ``K (K + 1) / 2`` weighted Gram products and ``n K^2``
  second derivatives per pass: the cost grows with the square of the class count ``K``, so that a column of
  thousands of distinct values would run for hours before any message. Fifty covers the label sets of
  tables (species, grades, states, letters) with a cost of the order of a regression on 50 targets;
  ``max_classes`` (``--max-classes N``) raises it, ``--task regression`` fits a numeric column as numbers.

The targets offered instead (:func:`suggest_targets`, at most :data:`N_SUGGESTED`) follow one
deterministic rule: among the other columns, leaving out row indexes, identifiers, constant columns and text
of more than ``max_classes`` values, first those named as targets usually are (:data:`TARGET_WORDS`, the
whole name, any case), then the others from the right of the table (public tables put the response last,
before any identifier appended to them). Only the last :data:`SUGGESTION_COLUMNS` columns and the named ones
are looked at, so that a wide table is not read twice.

After the fit, :func:`one_class_warning` says when a classifier predicts a single class on the rows it is
evaluated on: its accuracy is then the share of that class, and its balanced accuracy 1 / K.

Examples
--------
>>> import numpy as np
>>> names = ["age", "price", "case"]
>>> columns = [np.arange(30.0) % 7, np.linspace(1, 9, 30), np.array([f"C{i}" for i in range(30)], dtype=object)]
>>> try:
...     check_target(names, columns, [2])
... except Exception as exc:
...     print(exc)  # doctest: +NORMALIZE_WHITESPACE
the last column 'case' is not a target (30 distinct values in 30 rows: an identifier); name the target with
--target price or --target age
>>> check_target(names, columns, [1], chosen="--target")
{'names': ['price'], 'chosen': '--target', 'classes': None}
"""

from __future__ import annotations

import re

import numpy as np

from skframe.exceptions import InvalidInputError, InvalidParameterError
from skframe.preprocessing.cells import parse_numbers, text_cells
from skframe.preprocessing.table_encoder import is_index_name, is_row_index

__all__ = ["check_target", "identifier_reason", "suggest_targets", "one_class_warning", "predicted_counts",
           "DEFAULT_MAX_CLASSES", "IDENTIFIER_SHARE", "IDENTIFIER_ROWS", "TARGET_WORDS", "N_SUGGESTED"]

#: The most classes a target fitted as class labels may have (``max_classes``; the CLI's ``--max-classes``).
DEFAULT_MAX_CLASSES = 50
#: Text whose distinct values are more than this share of its values is an identifier ...
IDENTIFIER_SHARE = 0.9
#: ... when it has at least this many values (as :class:`~skframe.preprocessing.TableEncoder` leaves such
#: feature columns out); whole numbers all distinct are an identifier from this many values too.
IDENTIFIER_ROWS = 20
#: Names of columns that are usually the target (compared whole, any case), offered first.
TARGET_WORDS = frozenset({"target", "y", "label", "class", "outcome", "response", "price", "default", "survived",
                          "species", "diagnosis", "medv", "mpg", "sales", "salary", "wage", "status", "churn"})
#: The most targets offered in a refusal.
N_SUGGESTED = 3
#: Columns looked at from the right of the table for the offer (beside those named as targets).
SUGGESTION_COLUMNS = 200
_ID_NAME = re.compile(r"(^|[_.\- ])(id|key|code|uuid)$", re.IGNORECASE)
_CAMEL_ID = re.compile(r"[a-z](ID|Id)$")
_PLAIN = re.compile(r"[\w.\-]+")  # a name shown without quotes


class _Facts:
    """What the rules need of a column: its present values, how many are distinct, whether they are numbers."""

    def __init__(self, name, values):
        self.name = str(name)
        col = np.asarray(values)
        if col.dtype.kind in "fiub":
            v = col.astype(np.float64)
            self.numeric, present = True, v[~np.isnan(v)]
        else:
            text, missing = text_cells(col)
            numbers, bad = parse_numbers(text, missing, name=self.name)
            self.numeric = not bad.any()
            present = numbers[~missing] if self.numeric else text[~missing]  # objects: no fixed-width copy
        self.values = present
        self.n = int(present.size)
        self.distinct = (int(np.unique(present).size) if self.numeric else len(set(present.tolist()))) if self.n else 0
        self.whole = self.numeric and bool(self.n and np.all(np.isfinite(present))
                                           and np.all(present == np.round(present)))


def _id_named(name):
    return is_index_name(name) or bool(_ID_NAME.search(name.strip()) or _CAMEL_ID.search(name.strip()))


def identifier_reason(name, values):
    """Why a column is an identifier (see the module docstring), e.g. ``"93 distinct values in 93 rows: an
    identifier"``, or None.

    >>> identifier_reason("case", [f"C{i}" for i in range(25)])
    '25 distinct values in 25 rows: an identifier'
    >>> identifier_reason("n", np.random.default_rng(0).permutation(30) + 101)
    'whole numbers 101..130, each once (a row number): an identifier'
    >>> identifier_reason("y", [1.5, 2.5, 2.5] * 10) is None
    True
    """
    return _identifier(_Facts(name, values), values)


def _identifier(f, values):
    if f.n == 0:
        return None
    if f.numeric:
        if is_row_index(f.name, np.asarray(f.values)) and f.n == len(values):
            return f"row numbers ({f.distinct} distinct whole numbers in {f.n} rows, named {f.name!r}): a row index"
        if not f.whole or f.distinct != f.n or f.n < IDENTIFIER_ROWS:
            return None
        lo, hi = f.values.min(), f.values.max()
        if hi - lo + 1 == f.n:
            return f"whole numbers {lo:.0f}..{hi:.0f}, each once (a row number): an identifier"
        if _id_named(f.name):
            return f"{f.n} distinct whole numbers in {f.n} rows, named as an identifier: an identifier"
        return None
    if f.n >= IDENTIFIER_ROWS and f.distinct > IDENTIFIER_SHARE * f.n:
        return f"{f.distinct} distinct values in {f.n} rows: an identifier"
    return None


def _as_classes(f, task):
    """Whether the column is fitted as class labels: text (``--task auto`` or ``classification``), or any column
    with ``--task classification``."""
    return task == "classification" or (not f.numeric and task == "auto")


def _check_max_classes(max_classes):
    if isinstance(max_classes, bool) or not isinstance(max_classes, (int, np.integer)) or max_classes < 2:
        raise InvalidParameterError(f"max_classes={max_classes!r} must be a whole number >= 2 (the most classes "
                                    f"a classification target may have; default {DEFAULT_MAX_CLASSES})")
    return int(max_classes)


def suggest_targets(names, columns, exclude=(), *, max_classes=DEFAULT_MAX_CLASSES, k=N_SUGGESTED):
    """The names of at most ``k`` columns that are plausible targets, most plausible first (module docstring).

    Parameters
    ----------
    names : list of str
    columns : list of array-like
        The table's columns, in the order of ``names`` (raw cells or numbers).
    exclude : iterable of int
        Positions of columns not to offer (the refused target).
    max_classes : int, default=50
        Text columns of more distinct values are not offered.
    k : int, default=3
    """
    skip = set(exclude)
    n = len(names)
    looked = [j for j in range(n) if str(names[j]).strip().lower() in TARGET_WORDS]
    looked += [j for j in range(n - 1, max(-1, n - 1 - SUGGESTION_COLUMNS), -1) if j not in set(looked)]
    out = []
    for j in looked:
        if j in skip:
            continue
        f = _Facts(names[j], columns[j])
        if f.distinct < 2 or _identifier(f, columns[j]) is not None or (not f.numeric and f.distinct > max_classes):
            continue
        out.append(str(names[j]))
        if len(out) == k:
            break
    return out


def _offer(suggested):
    shown = ["--target " + (name if _PLAIN.fullmatch(name) else repr(name)) for name in suggested]
    if not shown:
        return "name the target with --target NAME"
    return "name the target with " + (shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1])


def check_target(names, columns, targets, *, chosen="last column", task="auto", max_classes=DEFAULT_MAX_CLASSES):
    """Refuse, before any fit, a target column that cannot be fitted (see the module docstring).

    Parameters
    ----------
    names : list of str
        The table's column names.
    columns : list of array-like
        Its columns (raw cells or numbers), in the order of ``names``.
    targets : list of int
        Positions (from 0) of the target columns.
    chosen : str, default="last column"
        How they were chosen, as the report says it: ``"last column"`` (or ``"last 2 columns"``) when nobody
        chose them (then an identifier is refused), else e.g. ``"--target"`` (then only the class limit applies).
    task : {"auto", "classification", "regression", "structured"}, default="auto"
        How the target will be fitted: text labels are classes under ``auto`` and ``classification``.
    max_classes : int, default=50
        The most classes a target fitted as class labels may have.

    Returns
    -------
    dict
        ``names`` (the target columns), ``chosen`` and ``classes`` (the class count of one target fitted as
        classes, else None): what a report says of the target.

    Raises
    ------
    InvalidInputError
        One line: the column, why, the most plausible targets (``--target NAME``) and the option that lifts the
        rule; ``.column`` and ``.suggestions`` hold the column's name and the names offered.
    """
    max_classes = _check_max_classes(max_classes)
    by_default = chosen.startswith("last")
    classes = None
    for j in targets:
        name, values = str(names[j]), columns[j]
        f = _Facts(name, values)
        where = f"the last column {name!r}" if by_default and len(targets) == 1 else f"the target column {name!r}"
        why = _identifier(f, values) if by_default else None
        fix = None
        if why is None and len(targets) == 1 and _as_classes(f, task):
            classes = f.distinct
            if f.distinct > max_classes:
                kind = "distinct values" if not f.numeric else "distinct numbers"
                why = (f"{f.distinct} {kind} in {f.n} rows: more classes than the limit of {max_classes}, and a "
                       "classifier's cost grows with the square of its classes")
                fix = f"raise the limit with --max-classes {f.distinct}" + (
                    ", or fit the numbers with --task regression" if f.numeric else "")
        if why is None:
            continue
        suggested = suggest_targets(names, columns, exclude=targets, max_classes=max_classes)
        what = "is not a target" if by_default else "cannot be fitted as classes"
        fix = f"{_offer(suggested)}" + (f"; or {fix}" if fix else "")
        err = InvalidInputError(f"{where} {what} ({why}); {fix}")
        err.column, err.suggestions = name, suggested
        raise err
    return {"names": [str(names[j]) for j in targets], "chosen": chosen, "classes": classes}


def predicted_counts(y_pred=None, *, classes=None, confusion_matrix=None):
    """``{label: count}`` of the predicted labels, most predicted first (labels as text): of ``y_pred``, or the
    column sums of a ``confusion_matrix`` whose columns are ``classes`` (as a classifier's report has them).

    >>> predicted_counts(["no", "yes", "no"]), predicted_counts(classes=[0, 1], confusion_matrix=[[5, 0], [2, 0]])
    ({'no': 2, 'yes': 1}, {'0': 7})
    """
    if y_pred is not None:
        labels, counts = np.unique(np.asarray(y_pred).reshape(-1), return_counts=True)
    else:
        labels, counts = np.asarray(classes), np.asarray(confusion_matrix, dtype=np.int64).sum(axis=0)
    order = np.argsort(-counts, kind="stable")
    return {_label(labels[i]): int(counts[i]) for i in order if counts[i] > 0}


def _label(value):
    value = value.item() if isinstance(value, np.generic) else value
    return f"{value:g}" if isinstance(value, float) else str(value)


def one_class_warning(predicted, balanced_accuracy=None, where="rows evaluated"):
    """A line saying that a classifier predicts one class only (``predicted``: :func:`predicted_counts`), or None.

    >>> one_class_warning({"no": 2000}, 0.5, "held-out rows")  # doctest: +NORMALIZE_WHITESPACE
    "predicts only 'no' on the 2000 held-out rows; balanced accuracy 0.50: the model learnt no rule that tells
    the classes apart (its accuracy is the share of 'no'); weigh the classes with --class-weight balanced, give
    features that tell them apart, or check that the target is the column meant"
    """
    if len(predicted) != 1:
        return None
    (label, count), = predicted.items()
    ba = "" if balanced_accuracy is None else f"; balanced accuracy {balanced_accuracy:.2f}"
    return (f"predicts only {label!r} on the {count} {where}{ba}: the model learnt no rule that tells the classes "
            f"apart (its accuracy is the share of {label!r}); weigh the classes with --class-weight balanced, give "
            "features that tell them apart, or check that the target is the column meant")
