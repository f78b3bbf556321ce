"""Predictions far outside the training targets' range: the rule, stored with the fitted regression model.

A kernel ridge model returns to its intercept far from the data, but a small λ lets a row just outside the
training inputs (a data-entry error: one dimension 31.8 where the others are near 5) reach values many times the
largest training target. The rule is a range check: each output's prediction is flagged when it lies outside the
training targets' range ``[lo, hi]`` widened by ``widen`` times its span on each side,
``[lo - widen (hi - lo), hi + widen (hi - lo)]`` (:data:`WIDEN` = 0.5 by default). The range is stored at fit time
(``target_range_``, rows ``[lo, hi]`` by output) and saved with the model; :func:`clip_to_range` is an opt-in
clip to the range itself, never applied by default.
"""

from __future__ import annotations

import warnings

import numpy as np

from skframe.exceptions import SkframeWarning

__all__ = ["WIDEN", "LISTED", "ExtrapolationWarning", "target_range", "range_bounds", "out_of_range",
           "clip_to_range", "flag_predictions"]

#: the training range is widened by this many spans on each side before a prediction is flagged
WIDEN = 0.5
#: flagged rows listed (with their predictions) in a report; the count covers all of them
LISTED = 20


class ExtrapolationWarning(SkframeWarning):
    """Predictions far outside the training targets' range (rows listed in the message)."""


def target_range(Y):
    """``[[lo...], [hi...]]`` (2 x d) of the finite training targets ``Y`` (n x d), or None (Dask targets, none
    finite)."""
    if hasattr(Y, "compute"):
        return None
    Y = np.asarray(Y, dtype=np.float64)
    Y = Y.reshape(Y.shape[0], -1)
    finite = np.where(np.isfinite(Y), Y, np.nan)
    if Y.size == 0 or np.isnan(finite).all(axis=0).any():
        return None
    return np.vstack([np.nanmin(finite, axis=0), np.nanmax(finite, axis=0)])


def range_bounds(target_range_, widen=WIDEN):
    """``(low, high)`` per output: the range widened by ``widen`` times its span on each side."""
    lo, hi = np.asarray(target_range_, dtype=np.float64)
    span = hi - lo
    return lo - widen * span, hi + widen * span


def out_of_range(predictions, target_range_, widen=WIDEN, *, start=0, listed=LISTED):
    """The report of the predictions outside the widened training range.

    Parameters
    ----------
    predictions : array-like of shape (n,) or (n, d)
    target_range_ : array-like of shape (2, d)
        The fitted model's ``target_range_``.
    widen : float, default=WIDEN
    start : int, default=0
        The index of the first row (a block of a larger file).
    listed : int, default=LISTED
        The flagged rows listed; ``count`` covers all.

    Returns
    -------
    dict
        ``count`` (rows with any output outside), ``mask`` (bool, one per row), ``rows`` (indices from 0, at most
        ``listed``), ``values`` (their predictions, first output outside), ``low``/``high`` (the bounds by output),
        ``training_range`` and ``rule`` (a sentence).
    """
    F = np.asarray(predictions, dtype=np.float64)
    F = F.reshape(F.shape[0], -1)
    low, high = range_bounds(target_range_, widen)
    outside = (F < low) | (F > high)
    mask = outside.any(axis=1)
    rows = np.flatnonzero(mask)[:listed]
    first = outside[rows].argmax(axis=1)
    rng = np.asarray(target_range_, dtype=np.float64)
    return {"count": int(mask.sum()), "rows": [int(r) + int(start) for r in rows],
            "values": [float(F[r, j]) for r, j in zip(rows, first)], "mask": mask,
            "low": [float(v) for v in low], "high": [float(v) for v in high],
            "training_range": [[float(a), float(b)] for a, b in zip(rng[0], rng[1])], "widen": float(widen),
            "rule": f"outside the training targets' range widened by {widen:g} x its span on each side"}


def clip_to_range(predictions, target_range_):
    """The predictions clipped to the training targets' range (an opt-in; the model never clips by itself)."""
    F = np.asarray(predictions, dtype=np.float64)
    lo, hi = np.asarray(target_range_, dtype=np.float64)
    return np.clip(F, lo, hi) if F.ndim == 2 else np.clip(F, lo[0], hi[0])


def flag_predictions(estimator, predictions, *, warn=True, listed=LISTED, stacklevel=3):
    """The report of :func:`out_of_range` for a fitted regression ``estimator``'s ``predictions`` (rows from 0),
    or None for a model without a stored ``target_range_`` (a classifier, Dask targets); with ``warn``, one
    :class:`ExtrapolationWarning` counting and listing the flagged rows when there are any."""
    rng = getattr(estimator, "target_range_", None)
    if rng is None:
        return None
    flags = out_of_range(predictions, rng, listed=listed)
    if warn and flags["count"]:
        shown = ", ".join(f"{r} ({v:.4g})" for r, v in zip(flags["rows"], flags["values"]))
        more = f" and {flags['count'] - len(flags['rows'])} more" if flags["count"] > len(flags["rows"]) else ""
        warnings.warn(f"{flags['count']} prediction(s) {flags['rule']} ({flags['low'][0]:.4g} to "
                      f"{flags['high'][0]:.4g}), rows (from 0) {shown}{more}: far outside the training data; check "
                      "those rows for data-entry errors", ExtrapolationWarning, stacklevel=stacklevel)
    return flags
