"""The checks of a table encoding read back from a file (:meth:`skframe.preprocessing.TableEncoder.from_dict`).

A model file keeps the encoding as data; a file edited by hand (or by anyone, checksums and all) must not give
a traceback, nor an encoder that fails later, at prediction time: every entry that :meth:`TableEncoder.to_dict`
could not have written is refused in one :class:`~skframe.exceptions.InvalidInputError` that names it.
"""

from __future__ import annotations

import math

from skframe.exceptions import InvalidInputError
from skframe.preprocessing.cells import COLUMN_TYPES
from skframe.preprocessing.dates import DATE_ORDER_TYPES, is_date_format

__all__ = ["check_encoding"]

_FIX = "not an encoding TableEncoder.to_dict writes (a file edited since): fit the model again"


def _refuse(what):
    raise InvalidInputError(f"table encoding: {what}; {_FIX}")


def _short(value):
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _check_params(params, param_names):
    if not isinstance(params, dict):
        _refuse(f"params is {_short(params)}, not a mapping")
    unknown = sorted(set(map(str, params)) - set(param_names))
    if unknown:
        _refuse(f"params names {', '.join(map(repr, unknown[:3]))}, not parameters of TableEncoder")
    m = params.get("max_categories", 100)
    if isinstance(m, bool) or not isinstance(m, int) or m < 1:
        _refuse(f"max_categories is {_short(m)}, not a whole number >= 1")
    share = params.get("identifier_share", 0.9)
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not math.isfinite(share):
        _refuse(f"identifier_share is {_short(share)}, not a number")
    types = params.get("column_types") or {}
    if not isinstance(types, dict) or not all(isinstance(k, str) and v in (*COLUMN_TYPES, *DATE_ORDER_TYPES)
                                              for k, v in types.items()):
        _refuse(f"column_types is {_short(types)}, not a mapping of names to column types")
    if params.get("row_index", "drop") not in ("drop", "keep"):
        _refuse(f"row_index is {_short(params.get('row_index'))}, not 'drop' or 'keep'")


def _check_column(k, c, kinds):
    if not isinstance(c, dict):
        _refuse(f"column {k} is {_short(c)}, not a mapping")
    name, kind = c.get("name"), c.get("type")
    if not isinstance(name, str):
        _refuse(f"column {k} is named {_short(name)}, not a text")
    if kind not in kinds:
        _refuse(f"column {name!r} has the type {_short(kind)}, not one of {', '.join(kinds)}")
    if not isinstance(c.get("reason"), str):
        _refuse(f"column {name!r} has the reason {_short(c.get('reason'))}, not a text")
    if kind == "categorical":
        cats = c.get("categories")
        if not isinstance(cats, list) or not cats or not all(isinstance(v, str) for v in cats):
            _refuse(f"column {name!r} has the categories {_short(cats)}, not a list of texts")
        if len(set(cats)) != len(cats):
            _refuse(f"column {name!r} names a category twice")
    if kind == "date" and not (isinstance(c.get("date_format"), str) and is_date_format(c["date_format"])):
        _refuse(f"column {name!r} has the date format {_short(c.get('date_format'))}, not one skframe reads")


def check_encoding(data, param_names, left_out):
    """Refuse ``data`` unless :meth:`TableEncoder.to_dict` could have written it (see the module docstring).

    Parameters
    ----------
    data : object
        The encoding read back.
    param_names : iterable of str
        The parameters of :class:`TableEncoder`.
    left_out : tuple of str
        The column types that give no feature.
    """
    if not isinstance(data, dict) or data.get("version") != 1 or not isinstance(data.get("columns"), list):
        raise InvalidInputError("not a table encoding saved by TableEncoder.to_dict (version 1, a list of columns); "
                                "fit the model again")
    _check_params(data.get("params", {}), param_names)
    kinds = (*COLUMN_TYPES, *left_out)
    names = set()
    for k, c in enumerate(data["columns"]):
        _check_column(k, c, kinds)
        if c["name"] in names:
            _refuse(f"column {c['name']!r} is named twice")
        names.add(c["name"])
