"""``skframe.load``: a model file as the object that was saved.

A file written by ``skframe fit --model-out`` or :meth:`skframe.automatic.TableModel.save` (an estimator with the
table state beside it) loads as a :class:`~skframe.automatic.TableModel`; a file written by :func:`skframe.save`
from a bare estimator loads as that estimator.
"""

from __future__ import annotations

import importlib

from skframe.persistence import load_bundle

__all__ = ["load", "is_table_state"]


def is_table_state(extra):
    """True when a model file's extra data is an automatic model's table state (it names the task)."""
    return isinstance(extra, dict) and "task" in extra


def load(path, *, max_bytes=None):
    """Load a model file saved by :func:`skframe.save`, ``skframe fit --model-out`` or ``TableModel.save``.

    Parameters
    ----------
    path : str or path-like
    max_bytes : int, optional
        Refuse files whose arrays declare more bytes in total.

    Returns
    -------
    TableModel or estimator
        A :class:`~skframe.automatic.TableModel` for the automatic model's files, else the estimator saved.
    """
    estimator, extra = load_bundle(path, max_bytes=max_bytes)
    if not is_table_state(extra):
        return estimator
    # the TableModel and its readers load only for its files: importing them costs the command line's modules
    table_model = importlib.import_module("skframe.automatic.table_model")
    return table_model.from_bundle(estimator, extra, path)
