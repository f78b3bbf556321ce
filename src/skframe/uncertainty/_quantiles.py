"""Exact conformal quantiles in bounded memory.

Split conformal needs one order statistic of the calibration scores per target. CV+ and
jackknife+ (Barber, Candès, Ramdas and Tibshirani, "Predictive inference with the jackknife+",
Annals of Statistics 2021) need, for every test point x, the order statistics

    lower(x) = the floor(alpha (n + 1))-th smallest of   mu_{k(i)}(x) - R_i,   i = 1..n
    upper(x) = the ceil((1 - alpha) (n + 1))-th smallest of mu_{k(i)}(x) + R_i,

where ``R_i`` is the held-out absolute residual of training row i and ``mu_{k(i)}`` the model
fitted without the fold of row i. Written out, these are ``n_train x n_test`` numbers; they are
never formed here.

* **Few folds (CV+)**: the residuals of each fold are sorted once (O(n log n)). For a value t,
  the count of ``mu_k(x) - R_i <= t`` over fold k is a binary search in that fold's sorted
  residuals, so the count over all rows costs O(K log n) per test point. The order statistic is
  the smallest t whose count reaches the rank: a bisection over the float64 numbers (ordered as
  integers) finds it in at most 64 steps, and the result is snapped to the nearest value
  ``mu_k(x) -/+ R_i`` (an entry of the matrix, computed as the matrix would be: the counts compare
  ``R_i`` with ``mu_k(x) - t``, which may round differently by an ulp). Cost O(64 K log n) per test
  point and target, memory O(n + K c) for a chunk of c test rows.
* **Many folds (jackknife+, K = n)**: the values of a chunk of c test rows are formed
  (c x n, c chosen so the block stays under a byte budget) and the order statistic is taken with
  ``numpy.partition``: exact, O(n c) time and memory per chunk.
"""

from __future__ import annotations

import math

import numpy as np

from skframe.exceptions import InvalidParameterError

__all__ = ["lower_rank", "upper_rank", "split_quantile", "cqr_scores", "cqr_widening", "CQR_SCORES", "FoldResiduals"]

#: the CQR conformity scores: one two-sided score, or one score per side (:func:`cqr_scores`)
CQR_SCORES = ("symmetric", "asymmetric")

_SIGN = np.int64(-(2**63))
_MAG = np.int64(2**63 - 1)


def lower_rank(alpha, n):
    """``floor(alpha (n + 1))``: the rank of the lower bound (0 means an unbounded interval)."""
    return int(math.floor(alpha * (n + 1) + 1e-9))


def upper_rank(alpha, n):
    """``ceil((1 - alpha) (n + 1))``: the rank of the upper bound (above n means unbounded)."""
    return int(math.ceil((1.0 - alpha) * (n + 1) - 1e-9))


def split_quantile(scores, alpha):
    """The conformal quantile of calibration scores: the ``ceil((1 - alpha)(n + 1))``-th smallest per column.

    Parameters
    ----------
    scores : ndarray of shape (n,) or (n, d)
    alpha : float in (0, 1)

    Returns
    -------
    ndarray of shape (d,)
        ``inf`` where the rank exceeds n (too few calibration rows for that alpha).
    """
    S = np.asarray(scores, dtype=np.float64)
    S = S[:, None] if S.ndim == 1 else S
    n = S.shape[0]
    k = upper_rank(alpha, n)
    if k > n:
        return np.full(S.shape[1], np.inf)
    return np.partition(S, k - 1, axis=0)[k - 1]


def cqr_scores(q_lo, q_hi, y, kind):
    """The CQR calibration scores of rows with fitted quantiles ``q_lo``, ``q_hi`` and targets ``y`` (arrays (n, d)).

    * ``"symmetric"`` (Romano, Patterson and Candès): ``max(q_lo - y, y - q_hi)``, shape (n, d);
    * ``"asymmetric"`` (one score per side, the variant the same paper states): ``q_lo - y`` and
      ``y - q_hi`` stacked on a middle axis, shape (n, 2, d).
    """
    lo, hi = q_lo - y, y - q_hi
    if kind == "symmetric":
        return np.maximum(lo, hi)
    if kind == "asymmetric":
        return np.stack([lo, hi], axis=1)
    raise InvalidParameterError(f"cqr_score={kind!r}; use one of {', '.join(CQR_SCORES)}")


def cqr_widening(scores, alpha, kind):
    """``(c_lo, c_hi)`` (each (d,)): the CQR interval is ``[q_lo(x) - c_lo, q_hi(x) + c_hi]``.

    ``"symmetric"``: both are the ``ceil((1 - alpha)(n + 1))``-th smallest score (coverage ``>= 1 - alpha``).
    ``"asymmetric"``: each side's is the ``ceil((1 - alpha/2)(n + 1))``-th smallest of its own scores, so that
    each side misses with probability at most ``alpha/2`` and the interval covers with at least ``1 - alpha``
    (infinite below ``n = ceil(2 / alpha) - 1`` calibration rows, e.g. 19 for ``alpha = 0.1``).
    """
    S = np.asarray(scores, dtype=np.float64)
    if kind == "symmetric":
        q = split_quantile(S, alpha)
        return q, q
    if kind == "asymmetric":
        return split_quantile(S[:, 0], alpha / 2), split_quantile(S[:, 1], alpha / 2)
    raise InvalidParameterError(f"cqr_score={kind!r}; use one of {', '.join(CQR_SCORES)}")


def _keys(x):
    """float64 -> int64, increasing with the value (-0.0 and 0.0 share a key)."""
    b = np.ascontiguousarray(x, dtype=np.float64).view(np.int64)
    return np.where(b < 0, -(b & _MAG), b)


def _floats(k):
    """The inverse of :func:`_keys`."""
    k = np.asarray(k, dtype=np.int64)
    b = np.where(k < 0, (-k) | _SIGN, k)
    return b.view(np.float64)


class FoldResiduals:
    """The held-out residuals of one target, grouped by fold and sorted: what CV+ bounds need.

    Parameters
    ----------
    residuals : ndarray of shape (n,)
        Absolute held-out residuals ``R_i``.
    fold_of : ndarray of shape (n,) of int
        The fold (0..K-1) whose model left row i out.
    n_folds : int
    """

    def __init__(self, residuals, fold_of, n_folds):
        residuals = np.asarray(residuals, dtype=np.float64)
        fold_of = np.asarray(fold_of)
        self.n = residuals.size
        self.sorted = [np.sort(residuals[fold_of == k]) for k in range(n_folds)]
        self.values = residuals
        self.fold_of = fold_of

    def _count(self, P, t, sign):
        """#{i : P[k(i)] - R_i <= t} (sign=-1) or #{i : P[k(i)] + R_i <= t} (sign=+1) per test point."""
        count = np.zeros(t.shape[0], dtype=np.int64)
        for k, R in enumerate(self.sorted):
            if R.size == 0:
                continue
            if sign < 0:
                count += R.size - np.searchsorted(R, P[k] - t, side="left")
            else:
                count += np.searchsorted(R, t - P[k], side="right")
        return count

    def bisect(self, P, rank, sign):
        """The ``rank``-th smallest of ``P[k(i)] + sign R_i`` per test point, by bisection on the floats.

        ``P`` is (K, c): each fold model's prediction at c test points.
        """
        P = np.asarray(P, dtype=np.float64)
        Rmin = np.array([R[0] if R.size else np.inf for R in self.sorted])
        Rmax = np.array([R[-1] if R.size else -np.inf for R in self.sorted])
        has = np.isfinite(Rmin)
        Ph = P[has]
        if sign < 0:
            vmin, vmax = (Ph - Rmax[has, None]).min(axis=0), (Ph - Rmin[has, None]).max(axis=0)
        else:
            vmin, vmax = (Ph + Rmin[has, None]).min(axis=0), (Ph + Rmax[has, None]).max(axis=0)
        lo = _keys(vmin) - 1  # count(lo) = 0 < rank
        hi = _keys(vmax)  # count(hi) = n >= rank
        while True:
            open_ = hi > lo + 1
            if not open_.any():
                break
            mid = (lo >> 1) + (hi >> 1) + (lo & hi & 1)
            c = self._count(P, _floats(mid), sign)
            up = open_ & (c >= rank)
            hi = np.where(up, mid, hi)
            lo = np.where(open_ & ~up, mid, lo)
        return self._snap(P, _floats(hi), sign)

    def _snap(self, P, t, sign):
        """The value ``P[k] + sign R_i`` nearest to ``t`` (the bisection's float): an entry of the matrix itself."""
        best, gap = t.copy(), np.full(t.shape, np.inf)
        for k, R in enumerate(self.sorted):
            if R.size == 0:
                continue
            j = np.searchsorted(R, sign * (t - P[k]))
            for jj in (j - 1, j):
                v = P[k] + sign * R[np.clip(jj, 0, R.size - 1)]
                g = np.abs(v - t)
                closer = g < gap
                best, gap = np.where(closer, v, best), np.where(closer, g, gap)
        return best

    def partition(self, P, rank, sign, budget_bytes):
        """The same order statistic from the formed values, in chunks of test points (exact; O(n) per point)."""
        P = np.asarray(P, dtype=np.float64)
        c_total = P.shape[1]
        step = max(1, int(budget_bytes // (8 * max(self.n, 1))))
        out = np.empty(c_total)
        signed = sign * self.values
        for start in range(0, c_total, step):
            stop = min(c_total, start + step)
            V = P[self.fold_of, start:stop].T + signed  # (c, n)
            out[start:stop] = np.partition(V, rank - 1, axis=1)[:, rank - 1]
        return out

    def bounds(self, P, alpha, *, budget_bytes=64 * 2**20, method="auto"):
        """``(lower, upper)`` of CV+ / jackknife+ at the c test points whose fold predictions are ``P`` (K, c)."""
        if method == "auto":
            method = "bisect" if len(self.sorted) <= 64 else "partition"
        if method not in ("bisect", "partition"):
            raise InvalidParameterError(f"method={method!r}; use 'bisect', 'partition' or 'auto'")
        kl, ku = lower_rank(alpha, self.n), upper_rank(alpha, self.n)
        c = np.asarray(P).shape[1]
        if kl < 1:
            lower = np.full(c, -np.inf)
        elif method == "bisect":
            lower = self.bisect(P, kl, -1)
        else:
            lower = self.partition(P, kl, -1, budget_bytes)
        if ku > self.n:
            upper = np.full(c, np.inf)
        elif method == "bisect":
            upper = self.bisect(P, ku, +1)
        else:
            upper = self.partition(P, ku, +1, budget_bytes)
        return lower, upper
