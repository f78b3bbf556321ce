"""From a raw table to numeric features: :class:`TableEncoder`.

Each column of a table is read as one of

``numeric``
    numbers (a missing cell stays NaN, for the missing-value policy that follows);
``categorical``
    text with few distinct values (at most ``max_categories``, and not nearly all distinct):
    one-hot encoded (one feature per category, a dictionary look-up per cell); a missing
    cell is a category of its own (``<missing>``); a category unseen at fit time gives a row of
    zeros and is counted (:attr:`TableEncoder.unknown_counts_`);
``date``
    dates or date-times (ISO ``2024-05-17``, ``2024-05-17 13:30:00``, or ``17/05/2024``,
    ``05/17/2024``, ``2024/05/17``, ``17.05.2024``, ``17 May 2024``... when every cell fits one of
    them; day or month first told by a day above 12, else day first, said in the column's reason; clock words
    such as ``today`` are never dates: :mod:`skframe.preprocessing.dates`): four numeric features, the days since
    1970-01-01 (fractional with a time of day), the year, the month and the weekday (0 = Monday); a missing date
    gives NaN in all four;
``text``
    free text (more distinct values than ``max_categories``) or identifier-like columns (nearly
    every value distinct): left out, with the reason recorded;
``empty``
    every cell missing: left out;
``index``
    a row index: a column named as one (a blank first header cell, ``Unnamed: 0``, ``rownames``, ``index``,
    ``id``, any case) whose integers increase strictly down the file, as pandas' ``to_csv`` and R's
    ``write.csv`` write first, are a permutation of ``0..n-1`` or ``1..n`` (the rows shuffled since), or are
    other whole numbers each seen once (row labels, such as R's row names that are case numbers); in a
    table without names (an array), a first column that is such a permutation of 10 rows or more: left out
    (``column_types={name: "numeric"}`` keeps it; ``x0`` for an array's first column).

Which column is the target, and whether its classes can be fitted, is decided by
:mod:`skframe.preprocessing.targets` (:func:`~skframe.preprocessing.targets.check_target`).

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

from skframe.preprocessing.table_encoder import (
    COLUMN_TYPES,
    MISSING_CATEGORY,
    TableEncoder,
    parse_column_types,
    table_problems,
)
from skframe.preprocessing.targets import (
    DEFAULT_MAX_CLASSES,
    check_target,
    identifier_reason,
    one_class_warning,
    predicted_counts,
    suggest_targets,
)

__all__ = ["TableEncoder", "COLUMN_TYPES", "MISSING_CATEGORY", "parse_column_types", "table_problems",
           "check_target", "identifier_reason", "suggest_targets", "one_class_warning", "predicted_counts",
           "DEFAULT_MAX_CLASSES"]
