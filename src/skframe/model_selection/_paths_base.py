"""The result of a regularisation path scored by cross-validation.

A *path function* scores one group of a parameter grid (every parameter fixed except
``lam``) on every fold and every ``lam`` of the group::

    path(estimator, X, y, folds, lams, scorer) -> PathScores

``estimator`` carries the group's parameters (unfitted), ``folds`` is a list of
``(train, test)`` index arrays, ``lams`` a sequence of positive regularisation
parameters and ``scorer`` a scikit-learn scorer ``scorer(fitted, X_test, y_test)``.
A path function that cannot shortcut an option (an unsupported scorer, an estimator
option it does not know) raises ``NotImplementedError`` *before* doing any work;
the caller then fits every fold and ``lam`` from scratch.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from sklearn.base import RegressorMixin, is_regressor
from sklearn.metrics import check_scoring, mean_squared_error, r2_score
from sklearn.utils import RegressorTags, Tags, TargetTags, _safe_indexing

from skframe.contract.collections import is_collection, take
from skframe.deps import is_dask_collection
from skframe.exceptions import InvalidParameterError

__all__ = ["PathScores", "fold_rows", "scorer_kind", "r2_from_errors", "HeldOutPredictions", "check_lams",
           "refuse_dask", "point_message", "score_fold", "spread_times", "fail_fold", "record_fold"]


@dataclass
class PathScores:
    """Scores of one grid group over folds × ``lam`` values.

    Parameters
    ----------
    test_scores : ndarray of shape (n_folds, n_lams)
        Held-out score of each fold (row) and ``lam`` (column); the error score
        (NaN by default) where the point failed.
    fit_times : ndarray of shape (n_folds, n_lams)
        Seconds spent fitting, per point. Shared work (features, sums, one
        eigendecomposition per fold) is divided evenly among the ``lam`` values of
        the fold, so that the sum over a row is the fold's fitting time.
    score_times : ndarray of shape (n_folds, n_lams)
        Seconds spent scoring, per point (shared work divided the same way).
    failed : ndarray of bool, shape (n_folds, n_lams)
        Whether the point failed (its score is then meaningless).
    errors : list of str
        One message per failure, ``"fold k, lam=...: <exception>"``.
    info : dict
        Free-form facts about the path (the shortcut used, the duality gaps, ...).
    """

    test_scores: np.ndarray
    fit_times: np.ndarray
    score_times: np.ndarray
    failed: np.ndarray
    errors: list = field(default_factory=list)
    info: dict = field(default_factory=dict)

    def __post_init__(self):
        self.test_scores = np.asarray(self.test_scores, dtype=float)
        shape = self.test_scores.shape
        if self.test_scores.ndim != 2:
            raise ValueError(f"test_scores must be (n_folds, n_lams), got shape {shape}")
        self.fit_times = np.broadcast_to(np.asarray(self.fit_times, dtype=float), shape).copy()
        self.score_times = np.broadcast_to(np.asarray(self.score_times, dtype=float), shape).copy()
        self.failed = np.broadcast_to(np.asarray(self.failed, dtype=bool), shape).copy()
        self.errors = list(self.errors)
        self.info = dict(self.info)

    @classmethod
    def empty(cls, n_folds, n_lams):
        """A path with every point not yet scored (NaN scores, zero times, not failed).

        Parameters
        ----------
        n_folds, n_lams : int
            The shape of the arrays.

        Returns
        -------
        PathScores
        """
        shape = (int(n_folds), int(n_lams))
        return cls(np.full(shape, np.nan), np.zeros(shape), np.zeros(shape), np.zeros(shape, dtype=bool))

    @property
    def n_folds(self):
        """Number of folds (rows)."""
        return self.test_scores.shape[0]

    @property
    def n_lams(self):
        """Number of ``lam`` values (columns)."""
        return self.test_scores.shape[1]


# ----------------------------------------------------------------------------- helpers shared by path functions
def fold_rows(X, index):
    """The rows ``index`` of ``X`` (array, sparse matrix, data frame or input collection), as a fit receives them.

    The same selection scikit-learn's cross-validation makes (``sklearn.utils._safe_indexing``),
    and :func:`skframe.contract.collections.take` for an input collection.
    """
    if is_collection(X):
        return take(X, np.asarray(index))
    return _safe_indexing(X, index)


def scorer_kind(scorer, estimator):
    """What a scorer computes, for the path functions that score without predicting.

    Returns
    -------
    {"r2", "neg_mse", "predict"} or None
        ``"r2"``: the coefficient of determination (``scoring=None`` on a regressor whose
        ``score`` is scikit-learn's, or ``"r2"``); ``"neg_mse"``: ``"neg_mean_squared_error"``;
        ``"predict"``: another scikit-learn scorer that only calls ``predict`` (evaluate it
        with :class:`HeldOutPredictions`); None: anything else (a plain callable may use any
        attribute of the fitted model, so a shortcut must not guess).
    """
    if is_regressor(estimator) and isinstance(scorer, type(check_scoring(estimator))):  # scoring=None: its score
        return "r2" if type(estimator).score is RegressorMixin.score else None
    func = getattr(scorer, "_score_func", None)
    if func is None or getattr(scorer, "_response_method", None) != "predict":
        return None
    kwargs = getattr(scorer, "_kwargs", None)
    sign = getattr(scorer, "_sign", None)
    if kwargs == {} and func is r2_score and sign == 1:
        return "r2"
    if kwargs == {} and func is mean_squared_error and sign == -1:
        return "neg_mse"
    return "predict"


def r2_from_errors(sse, sst):
    """scikit-learn's ``r2_score`` (uniform average over outputs) from per-output sums of squares.

    ``sse[j] = sum_i (y_ij - f_ij)^2``, ``sst[j] = sum_i (y_ij - mean_j)^2``. An output with
    ``sst = 0`` scores 1 when predicted exactly, else 0 (scikit-learn's ``force_finite``).
    """
    sse = np.asarray(sse, dtype=float)
    sst = np.asarray(sst, dtype=float)
    out = np.ones_like(sse)
    nz = sst != 0
    out[nz] = 1.0 - sse[nz] / sst[nz]
    out[~nz & (sse != 0)] = 0.0
    return float(out.mean())


class HeldOutPredictions:
    """A stand-in fitted regressor whose ``predict`` returns predictions already computed for one input.

    A scikit-learn scorer that only calls ``predict`` (see :func:`scorer_kind`) scores it as it would
    score the fitted model: ``scorer(HeldOutPredictions(X_test, F), X_test, y_test)``.
    """

    _estimator_type = "regressor"

    def __init__(self, X, predictions):
        self._X = X
        self._predictions = predictions

    def __sklearn_tags__(self):
        tags = Tags(estimator_type="regressor", target_tags=TargetTags(required=True))
        tags.regressor_tags = RegressorTags()
        return tags

    def predict(self, X):
        if X is not self._X:
            raise ValueError("HeldOutPredictions only predicts the input it was built with")
        return self._predictions


# ----------------------------------------------------------------------------- what every path function shares
def check_lams(lams):
    """The λ values as a 1-D float array, each finite and > 0 (InvalidParameterError naming the bad one)."""
    values = np.atleast_1d(np.asarray(lams, dtype=float)).ravel()
    if values.size == 0:
        raise InvalidParameterError("lams is empty; give at least one regularisation value, e.g. [1e-3]")
    bad = values[~(np.isfinite(values) & (values > 0))]
    if bad.size:
        raise InvalidParameterError(f"lams contains {bad[0]!r}; every lam must be a finite value > 0, e.g. 1e-3")
    return values


def refuse_dask(X, y, what):
    """NotImplementedError for Dask data: a path function shares features held in memory."""
    if is_dask_collection(X) or is_dask_collection(y):
        raise NotImplementedError(f"{what}: Dask input is fitted on its cluster, one fit per point; "
                                  "the shared-feature path needs the data in memory")


def point_message(k, lam, exc):
    """The error line of a failed point: ``"fold k, lam=...: <exception>"``."""
    return f"fold {k}, lam={lam:g}: {type(exc).__name__}: {exc}"


def _score(scorer, model, X_te, y_te):
    t = time.perf_counter()
    value = float(scorer(model, X_te, y_te))
    return value, time.perf_counter() - t


def score_fold(out, k, lams, fitted, errors, scorer, held_out):
    """Score fold ``k``'s fitted points on ``held_out = (X_test, y_test)``; a point missing from ``fitted``
    fails with ``errors[j]``, as does one whose scorer raises."""
    X_te, y_te = held_out
    for j in range(len(lams)):
        if j not in fitted:
            out.failed[k, j] = True
            out.errors.append(point_message(k, lams[j], errors[j]))
            continue
        try:
            out.test_scores[k, j], out.score_times[k, j] = _score(scorer, fitted[j], X_te, y_te)
        except Exception as exc:
            out.failed[k, j] = True
            out.errors.append(point_message(k, lams[j], exc))


def spread_times(out, k, own, total):
    """Fit times of fold ``k``: each point's own seconds plus an equal share of the fold's shared work."""
    own = np.where(np.isfinite(own), own, 0.0)
    shared = max(total - float(own.sum()), 0.0)
    out.fit_times[k] = own + shared / own.size


def fail_fold(out, k, lams, errors, seconds):
    """Every point of fold ``k`` failed (``errors[j]`` or ``errors[None]`` the exception of point j)."""
    for j in range(len(lams)):
        out.failed[k, j] = True
        out.errors.append(point_message(k, lams[j], errors.get(j, errors[None])))
    out.fit_times[k] = seconds / len(lams)


def record_fold(out, k, lams, scores, error, seconds, *, name_non_finite):
    """Fold ``k``'s row of ``out``: its ``scores`` over ``lams``, or, when ``scores`` is None, every point failed
    with the message ``error``; ``seconds = (fit, score)`` of the fold, shared evenly among the ``lam`` values.

    A non-finite score marks its point failed; with ``name_non_finite`` an error line names it too.
    """
    fit_s, score_s = seconds
    out.fit_times[k] = fit_s / len(lams)
    out.score_times[k] = score_s / len(lams)
    if scores is None:
        out.failed[k] = True
        out.errors.append(error)
        return
    out.test_scores[k] = scores
    bad = ~np.isfinite(scores)
    out.failed[k] |= bad
    if name_non_finite:
        out.errors.extend(f"fold {k}, lam={lams[j]!r}: non-finite score" for j in np.flatnonzero(bad))
