"""Class labels, class and sample weights, and probabilities of the sketched kernel classifier."""

from __future__ import annotations

import numpy as np

from skframe.contract.tags import get_tags
from skframe.exceptions import InvalidInputError, InvalidParameterError
from skframe.limits import limit
from skframe.models._data import check_sample_weight
from skframe.models.machine._calibration import calibrated_probabilities

__all__ = ["encode_labels", "check_sample_weight", "class_row_weights", "class_probabilities", "row_codes"]


def encode_labels(y, one_of_k, max_classes=None):
    """``(classes, codes, Y)``: sorted classes, each row's class index and the ±1 targets the solver fits.

    Two classes give one column (+1 for ``classes[1]``) unless the loss is on one-of-K codes (``one_of_k``:
    the multinomial loss, K columns with one +1 per row); more classes give one column per class. More classes
    than ``max_classes`` (None: the ``classes`` limit of :mod:`skframe.limits`, ``SKFRAME_MAX_CLASSES``, 1 000)
    are refused before the n x K targets are made.
    """
    classes, codes = np.unique(y, return_inverse=True)
    codes = codes.ravel()
    if classes.size < 2:
        raise InvalidInputError(f"the classifier needs at least 2 classes in y, got 1 class ({classes[0]!r})")
    bound = limit("classes") if max_classes is None else max_classes
    if classes.size > bound:
        given = (f"max_classes={max_classes}" if max_classes is not None
                 else f"the limit of {bound} for max_classes=None (SKFRAME_MAX_CLASSES)")
        raise InvalidInputError(
            f"y holds {classes.size} classes, more than {given}: a fit makes an n x K table of targets "
            f"({codes.size} x {classes.size} x 8 = {codes.size * classes.size * 8} bytes here) and its cost "
            f"grows with the square of the class count; if they are genuine classes, raise max_classes (e.g. "
            f"max_classes={classes.size}; CLI: --max-classes {classes.size}); numbers are fitted by a regressor")
    if classes.size == 2 and not one_of_k:
        return classes, codes, np.where(codes == 1, 1.0, -1.0)[:, None]
    Y = -np.ones((codes.size, classes.size))
    Y[np.arange(codes.size), codes] = 1.0
    return classes, codes, Y


def row_codes(Y):
    """Each row's class index from the ±1 targets of :func:`encode_labels`."""
    return (Y[:, 0] > 0).astype(int) if Y.shape[1] == 1 else np.argmax(Y, axis=1)


def class_row_weights(class_weight, classes, codes):
    """Per-row weights of ``class_weight``: None, "balanced" (``n / (K n_c)``) or a dict class -> weight."""
    if class_weight is None:
        return None
    if isinstance(class_weight, str):
        if class_weight != "balanced":
            raise InvalidParameterError(f"class_weight={class_weight!r}: give None, 'balanced' or a dict")
        counts = np.bincount(codes, minlength=classes.size)
        per_class = codes.size / (classes.size * counts)
    else:
        unknown = [c for c in class_weight if not np.any(classes == c)]
        if unknown:
            raise InvalidParameterError(
                f"class_weight names classes {unknown!r} that are not in y (classes: {classes.tolist()!r})")
        per_class = np.array([float(class_weight.get(c, class_weight.get(_plain(c), 1.0))) for c in classes])
        if np.any(per_class < 0) or not np.all(np.isfinite(per_class)):
            raise InvalidParameterError("class_weight values must be finite and non-negative")
    return per_class[codes]


def _plain(c):
    return c.item() if isinstance(c, np.generic) else c


def class_probabilities(loss, F, calibration=None):
    """Probabilities of the classes (n, K) from the decision values F (one column for two classes), through the
    ``calibration`` map of :mod:`skframe.models.machine._calibration` when given."""
    if calibration is not None:
        P = calibrated_probabilities(np.asarray(F, dtype=np.float64), calibration)
    else:
        P = np.asarray(loss.probabilities(F), dtype=np.float64)
    if F.shape[1] == 1:  # P(classes_[1])
        return np.column_stack([1.0 - P[:, 0], P[:, 0]])
    if get_tags(loss, "loss").one_of_k:
        return P
    total = P.sum(axis=1, keepdims=True)  # one-vs-rest columns, normalised as scikit-learn's OneVsRestClassifier
    return np.where(total > 0, P / np.where(total > 0, total, 1.0), 1.0 / P.shape[1])
