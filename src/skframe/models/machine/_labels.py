"""Class labels, class and sample weights, and probabilities of the sketched kernel classifier."""

from __future__ import annotations

try:
    import resource
except ImportError:  # not POSIX: no address-space limit to read
    resource = None

import numpy as np

from skframe.compute.machine import available_memory
from skframe.compute.memory import format_bytes
from skframe.compute.plan_rules import DEFAULT_BUDGET_SHARE
from skframe.contract.tags import get_tags
from skframe.exceptions import InvalidInputError, InvalidParameterError
from skframe.limits import limit
from skframe.models._data import check_sample_weight
from skframe.models.machine._calibration import calibrated_probabilities

__all__ = ["encode_labels", "check_sample_weight", "class_row_weights", "class_probabilities", "row_codes",
           "class_work_bytes", "CLASS_ARRAYS"]

#: the n x K float64 arrays a fit of K class columns holds at once: the targets, the decision values, the solver's
#: iterates, multipliers and steps (ADMM keeps four), measured at about six on the default solvers
CLASS_ARRAYS = 6


def class_work_bytes(n, columns):
    """Bytes the per-class arrays of a fit of ``n`` rows and ``columns`` class columns take (:data:`CLASS_ARRAYS`)."""
    return CLASS_ARRAYS * 8 * int(n) * int(columns)


def _memory_room():
    """``(bytes, source)``: what a fit's per-class arrays may take: the fit plan's default budget (half the memory
    available), less where an address-space limit (``ulimit -v``) leaves less room."""
    avail, source = available_memory()
    room, why = int(avail * DEFAULT_BUDGET_SHARE), f"half the memory available ({source})"
    try:
        cap = resource.getrlimit(resource.RLIMIT_AS)[0]
        cap = None if cap == resource.RLIM_INFINITY else cap
        with open("/proc/self/status") as fh:
            size = next((int(line.split()[1]) * 1024 for line in fh if line.startswith("VmSize:")), None)
    except (AttributeError, OSError, ValueError):  # no resource module (not POSIX), no /proc
        cap = size = None
    if cap is not None and size is not None and cap - size < room:
        room, why = max(0, cap - size), f"the room under the address-space limit of {format_bytes(cap)}"
    return room, why


def check_class_work(n, columns, n_classes, max_classes):
    """Refuse, before the n x K targets are made, a fit whose per-class arrays (:func:`class_work_bytes`) would not
    fit in :func:`_memory_room`: one :class:`InvalidInputError` naming the class count, the estimate and the fixes."""
    need = class_work_bytes(n, columns)
    room, why = _memory_room()
    if need > room:
        given = f"max_classes={max_classes}" if max_classes is not None else "max_classes=None"
        raise InvalidInputError(
            f"y holds {n_classes} classes ({given}): a fit on {n} rows holds about {CLASS_ARRAYS} arrays of n x K "
            f"values ({CLASS_ARRAYS} x {n} x {columns} x 8 = {format_bytes(need)}), more than {format_bytes(room)}, "
            f"{why}; fit fewer classes (merge rare labels, or keep the frequent ones), or fewer rows, or run where "
            "more memory is free; numbers are fitted by a regressor")


def text_labels(y):
    """``y`` as a NumPy string array where it is a 1-D object array of Python strings (a table's text label column),
    else ``y`` itself.

    Sorting and comparing fixed-width strings runs in C: on 10^6 labels of 10 classes scikit-learn's
    ``check_classification_targets`` and ``np.unique`` took 0.14 s instead of 2.5 s (objects compared in Python).
    Strings ending in a NUL character stay objects (a fixed-width array drops trailing NULs).

    >>> text_labels(np.array(["b", "a"], dtype=object)).dtype.kind, text_labels(np.array([1, 2])).dtype.kind
    ('U', 'i')
    """
    y = np.asarray(y)
    if y.ndim != 1 or y.dtype != object or not all(isinstance(v, str) and not v.endswith("\x00") for v in y):
        return y
    return y.astype(str)


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
    check_class_work(codes.size, 1 if classes.size == 2 and not one_of_k else classes.size, classes.size,
                     max_classes)  # what the fit holds per class, bounded by the memory before it is allocated
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
