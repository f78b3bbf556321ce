"""The folds of every automatic choice: ``lam="auto"`` of the iterative losses and of the structured models,
``skframe tune`` and :class:`~skframe.model_selection.KernelSearchCV` given a number of folds.

By default the rows are shuffled from a seed before they are cut (``cv_order="shuffle"``), and a classifier's
folds are stratified: each fold holds every class in about its share of the rows (scikit-learn's
``StratifiedKFold(shuffle=True)``; ``KFold(shuffle=True)`` otherwise). A table stored sorted by class, by date
or by any other column then gives the folds a shuffled copy of it would. Where a class has fewer rows than
there are folds, stratification cannot put it in every fold: the folds are then shuffled, not stratified, and
their description says so. ``cv_order="keep"`` cuts consecutive blocks of rows in file order (``KFold``
without shuffling), for rows ordered in time.

:func:`fold_splitter` gives the scikit-learn splitter and a description of its folds (the "reason" a report
prints, e.g. "3 shuffled stratified folds (seed 0)"); :func:`default_folds` the (train, test) index pairs.
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import is_classifier
from sklearn.utils.multiclass import type_of_target

from skframe.exceptions import InvalidInputError, InvalidParameterError

__all__ = ["CV_ORDERS", "check_cv_order", "fold_seed", "fold_splitter", "default_folds", "fold_options",
           "search_splitter"]

#: the orders the folds may be cut in: rows shuffled from a seed, or kept in file order
CV_ORDERS = ("shuffle", "keep")


def check_cv_order(value, name="cv_order"):
    """``value`` lower-cased when it is one of :data:`CV_ORDERS`; else one :class:`InvalidParameterError`
    naming it (``name``: the parameter or option that gave it)."""
    text = value.lower() if isinstance(value, str) else None
    if text not in CV_ORDERS:
        raise InvalidParameterError(f"{name}={value!r}; use 'shuffle' (rows shuffled from the seed before the "
                                    "folds are cut; the default) or 'keep' (consecutive folds in file order, for "
                                    "rows ordered in time)")
    return text


def fold_seed(random_state):
    """``(seed, words)``: the integer seed the folds are shuffled with and how the report names it.

    An integer is used as given; None gives None (scikit-learn's unseeded shuffle); a ``RandomState`` or
    ``Generator`` gives one integer drawn from it.
    """
    if random_state is None:
        return None, "unseeded"
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        return int(random_state), f"seed {int(random_state)}"
    if isinstance(random_state, np.random.Generator):
        seed = int(random_state.integers(0, 2**31 - 1))
    elif isinstance(random_state, np.random.RandomState):
        seed = int(random_state.randint(0, 2**31 - 1))
    else:
        raise InvalidParameterError(f"random_state={random_state!r} cannot seed the folds; use an integer, a "
                                    "numpy RandomState or Generator, or None")
    return seed, f"seed {seed} drawn from the random_state"


def _stratifiable(labels, n_splits):
    """``(True, "")`` when every class of ``labels`` has at least ``n_splits`` rows, else ``(False, why)``."""
    classes, counts = np.unique(np.asarray(labels), return_counts=True)
    if classes.size < 2:
        return False, "one class"
    least = int(np.argmin(counts))
    if counts[least] >= n_splits:
        return True, ""
    label = classes[least].item() if isinstance(classes[least], np.generic) else classes[least]
    return False, f"class {label!r} has {int(counts[least])} rows, fewer than {n_splits} folds"


def fold_splitter(n_splits, *, labels=None, cv_order="shuffle", random_state=None):
    """``(splitter, description)``: the scikit-learn splitter of the default folds and a sentence naming them.

    Parameters
    ----------
    n_splits : int
        Number of folds (at least 2).
    labels : array-like of shape (n,), optional
        Class labels to stratify on (a classifier's ``y``); None for unstratified folds.
    cv_order : {"shuffle", "keep"}, default="shuffle"
        ``"shuffle"``: the rows shuffled from ``random_state`` before the cut (stratified with ``labels``, unless
        a class has fewer rows than folds); ``"keep"``: consecutive folds in file order.
    random_state : int, RandomState, Generator or None
        The seed of the shuffle (see :func:`fold_seed`).

    Returns
    -------
    splitter : sklearn.model_selection.KFold or StratifiedKFold
    description : str
        E.g. ``"3 shuffled stratified folds (seed 0)"`` or ``"3 consecutive folds (file order kept)"``.
    """
    from sklearn.model_selection import KFold, StratifiedKFold  # lazy: loaded with the first folds

    n_splits, cv_order = int(n_splits), check_cv_order(cv_order)
    if cv_order == "keep":
        return KFold(n_splits), f"{n_splits} consecutive folds (file order kept)"
    seed, words = fold_seed(random_state)
    if labels is not None:
        ok, why = _stratifiable(labels, n_splits)
        if ok:
            return (StratifiedKFold(n_splits, shuffle=True, random_state=seed),
                    f"{n_splits} shuffled stratified folds ({words})")
        return (KFold(n_splits, shuffle=True, random_state=seed),
                f"{n_splits} shuffled folds ({words}; not stratified: {why})")
    return KFold(n_splits, shuffle=True, random_state=seed), f"{n_splits} shuffled folds ({words})"


def default_folds(n, n_splits=3, *, labels=None, cv_order="shuffle", random_state=None):
    """``(folds, description)``: the (train, test) row indices of the default folds of ``n`` rows.

    The folds of :func:`fold_splitter` (same parameters), with at most ``n`` folds, each index array sorted
    (rows are read in file order, e.g. from a memory-mapped file).

    Returns
    -------
    folds : list of (ndarray, ndarray)
        Training and held-out row indices of each fold.
    description : str

    Examples
    --------
    >>> folds, words = default_folds(9, 3, labels=[0, 0, 0, 1, 1, 1, 2, 2, 2], random_state=0)
    >>> words
    '3 shuffled stratified folds (seed 0)'
    >>> [np.unique(test // 3).tolist() for _, test in folds]
    [[0, 1, 2], [0, 1, 2], [0, 1, 2]]
    >>> default_folds(4, 2, cv_order="keep")[0][0][1]
    array([0, 1])
    """
    n = int(n)
    if n < 2:
        raise InvalidInputError(f"{n} row(s) cannot be cut into folds; the automatic choice needs at least 2 rows "
                                "(give a fixed value instead, e.g. lam=1e-3)")
    splitter, description = fold_splitter(min(int(n_splits), n), labels=labels, cv_order=cv_order,
                                          random_state=random_state)
    if labels is not None:
        labels = np.asarray(labels)
    folds = [(np.sort(train), np.sort(test)) for train, test in splitter.split(np.zeros((n, 1)), labels)]
    return folds, description


def fold_options(estimator, Y=None):
    """The keywords of :func:`default_folds` for the automatic choices of ``estimator``: its ``cv_order``
    (``"shuffle"`` where it has none), its ``random_state``, and for a classifier the class of each row of the
    targets ``Y`` it fits (its ``_fold_labels(Y)``), to stratify on."""
    strata = getattr(estimator, "_fold_labels", None)
    return {"labels": None if strata is None or Y is None else strata(Y),
            "cv_order": getattr(estimator, "cv_order", "shuffle"),
            "random_state": getattr(estimator, "random_state", None)}


def search_splitter(n_splits, estimator, y=None, *, cv_order="shuffle", random_state=None):
    """``(splitter, description)`` of a cross-validated search given a number of folds: :func:`fold_splitter`,
    stratified on ``y`` for a classifier whose ``y`` is binary or multi-class (as scikit-learn's ``check_cv``), and
    seeded by ``random_state`` or, where that is None, by the estimator's integer ``random_state`` (a
    ``RandomState`` object of the estimator is left to its sketches)."""
    if random_state is None:
        own = getattr(estimator, "random_state", None)
        random_state = own if isinstance(own, numbers.Integral) and not isinstance(own, bool) else None
    labels = None
    if y is not None and is_classifier(estimator) and type_of_target(y) in ("binary", "multiclass"):
        labels = np.asarray(y)
    return fold_splitter(n_splits, labels=labels, cv_order=cv_order, random_state=random_state)
