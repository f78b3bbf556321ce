"""Which task a table's targets ask for, and the checks that go with it (the automatic model's first decision).

``task="auto"`` fits 0/1 labels over several columns as a multi-label problem (the structured task) when nothing
asks for a regression loss, a solver or a Dask cluster; one column of text labels, or of a few integers
(:data:`skframe.automatic.classification.AUTO_RULE`), as classes; other numbers by regression. Each decision is
returned with its reason (``opts.task_reason``), which the fit report prints.
"""

from __future__ import annotations

import numpy as np

from skframe.automatic.classification import (
    CLASSIFICATION_LOSSES,
    choose_loss,
    looks_like_classes,
    looks_like_labels,
    numbers_reason,
)
from skframe.contract.collections import is_collection
from skframe.exceptions import InvalidParameterError

__all__ = ["choose_task", "check_class_weight", "is_multilabel", "task_is_numeric", "targets_for_fit"]


def choose_task(opts, Y=None):
    """The task's name: ``structured``, ``machine`` or ``regression``; ``opts.task_reason`` says what decided.

    Parameters
    ----------
    opts : options
        The fit options (``task``, ``loss``, ``calibration``, the Dask options; ``uses_machine()``); ``opts.loss``
        is set to the classification loss chosen for class labels.
    Y : array-like, optional
        The training targets.
    """
    if opts.task == "structured":
        return "structured"
    if opts.task in ("classification", "auto") and Y is not None:  # class labels
        auto = opts.task == "auto" and (looks_like_labels(Y) or (not opts.uses_machine() and task_is_numeric(Y)
                                                                 and looks_like_classes(Y)))
        if opts.task == "classification" or auto:
            loss_reason = choose_loss(opts, Y)  # None when the loss named is a classification loss
            opts.task_reason = "; ".join(r for r in (auto, loss_reason) if r) or None
    if opts.uses_machine():
        return "machine"
    if opts.task == "auto" and Y is not None and is_multilabel(Y) and opts.dask_scheduler is None \
            and opts.dask_local is None:
        return "structured"
    if opts.task == "auto" and Y is not None and task_is_numeric(Y):
        opts.task_reason = numbers_reason(Y)
    return "regression"


def check_class_weight(opts, task, reason=None):
    """Refuse a ``class_weight`` on a fit that is not a classification (it would be ignored), in one line."""
    if opts.class_weight is None or (task == "machine" and (opts.loss or "").strip().lower() in CLASSIFICATION_LOSSES):
        return
    why = f" ({reason})" if reason else ""
    raise InvalidParameterError(f"--class-weight {opts.class_weight} applies to classification, and this fit is a "
                                f"{'regression' if task != 'structured' else 'structured fit'}{why}: leave "
                                "--class-weight out, or fit class labels with --task classification")


def is_multilabel(Y):
    """True when the targets are 0/1 labels over at least two columns (a multi-label problem)."""
    if len(getattr(Y, "shape", ())) != 2 or Y.shape[1] < 2 or not task_is_numeric(Y):
        return False
    Y = np.asarray(Y.toarray() if hasattr(Y, "toarray") else Y)
    return bool(np.isin(Y, (0.0, 1.0)).all())


def task_is_numeric(Y):
    """True when the targets are numbers whose means make sense (not class labels as text)."""
    if is_collection(Y):  # molecules or graphs
        return False
    return np.asarray(Y).dtype.kind in "fiub" if not hasattr(Y, "toarray") else True


def targets_for_fit(Y, task):
    """The targets as the estimator takes them: one column as a vector (except for the structured task)."""
    if len(Y.shape) < 2:  # a collection of outputs (molecules)
        return Y
    return Y[:, 0] if (Y.shape[1] == 1 and task != "structured") else Y
