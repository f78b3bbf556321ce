"""Ranking of candidates (structured prediction): rank of the true candidate, Hits@k, MRR, mean rank."""

from __future__ import annotations

import numpy as np

from skframe.exceptions import InvalidInputError, InvalidParameterError

__all__ = ["rank_of_true", "hits_at_k", "mean_reciprocal_rank", "mean_rank"]


def rank_of_true(scores, true_index, *, ties="average"):
    """1-based rank of the true candidate in each row of a score matrix (higher = better).

    Parameters
    ----------
    scores : array-like of shape (n_samples, n_candidates)
        Candidate scores; ``-inf`` may mark candidates that are not allowed for a sample.
    true_index : array-like of int, shape (n_samples,)
        Column of the true candidate for each sample.
    ties : {"average", "optimistic", "pessimistic"}, default="average"
        How candidates scoring exactly as the true one count: ``optimistic`` ranks the true
        one first among them, ``pessimistic`` last, ``average`` in the middle (the expected
        rank under random tie-breaking; may be a half-integer).

    Returns
    -------
    ndarray of shape (n_samples,)
        Ranks ≥ 1, to feed :func:`hits_at_k`, :func:`mean_reciprocal_rank`, :func:`mean_rank`.

    Examples
    --------
    >>> rank_of_true([[0.1, 0.9, 0.5], [3.0, 1.0, 2.0]], [2, 0])
    array([2., 1.])
    """
    S = np.asarray(scores, dtype=np.float64)
    if S.ndim != 2 or S.shape[0] == 0 or S.shape[1] == 0:
        raise InvalidInputError(f"scores must be a non-empty 2-D (samples × candidates) array, got shape {S.shape}")
    if np.isnan(S).any():
        raise InvalidInputError("scores contain NaN; use -inf for candidates that must never be chosen")
    idx = np.asarray(true_index)
    if idx.shape != (S.shape[0],) or not np.issubdtype(idx.dtype, np.integer):
        raise InvalidInputError(
            f"true_index has shape {np.shape(true_index)} (dtype {idx.dtype}) but scores has shape {S.shape}; "
            "give one integer column index per sample"
        )
    if np.any((idx < 0) | (idx >= S.shape[1])):
        raise InvalidInputError(f"true_index has values outside 0..{S.shape[1] - 1}")
    if ties not in ("average", "optimistic", "pessimistic"):
        raise InvalidParameterError(f"ties={ties!r} must be 'average', 'optimistic' or 'pessimistic'")
    s_true = S[np.arange(S.shape[0]), idx][:, None]
    greater = np.sum(S > s_true, axis=1).astype(np.float64)
    equal_others = np.sum(S == s_true, axis=1).astype(np.float64) - 1.0
    if ties == "optimistic":
        return 1.0 + greater
    if ties == "pessimistic":
        return 1.0 + greater + equal_others
    return 1.0 + greater + equal_others / 2.0


def _check_ranks(ranks):
    r = np.asarray(ranks, dtype=np.float64).ravel()
    if r.size == 0:
        raise InvalidInputError("ranks is empty; at least one sample is needed")
    if not np.all(np.isfinite(r)) or np.any(r < 1):
        raise InvalidInputError("ranks must be finite and >= 1 (1 = the true candidate is ranked first)")
    return r


def hits_at_k(ranks, k=1):
    """Fraction of samples whose true candidate is ranked within the top ``k``.

    Parameters
    ----------
    ranks : array-like of shape (n_samples,)
        1-based rank of the true candidate per sample (see :func:`rank_of_true`).
    k : int or sequence of int, default=1

    Returns
    -------
    float, or ndarray of shape (len(k),) when ``k`` is a sequence

    Examples
    --------
    >>> hits_at_k([1, 3, 2, 10], k=2)
    0.5
    """
    r = _check_ranks(ranks)
    ks = np.atleast_1d(np.asarray(k))
    if not np.issubdtype(ks.dtype, np.integer) or np.any(ks < 1):
        raise InvalidParameterError(f"k={k!r} must be a positive integer or a sequence of them")
    out = np.array([np.mean(r <= kk) for kk in ks])
    return float(out[0]) if np.ndim(k) == 0 else out


def mean_reciprocal_rank(ranks):
    """Mean of ``1 / rank`` of the true candidate (MRR).

    Parameters
    ----------
    ranks : array-like of shape (n_samples,)
        1-based ranks (see :func:`rank_of_true`).

    Returns
    -------
    float
        In (0, 1]; 1 when every true candidate is ranked first.

    Examples
    --------
    >>> mean_reciprocal_rank([1, 2, 4])
    0.5833333333333334
    """
    return float(np.mean(1.0 / _check_ranks(ranks)))


def mean_rank(ranks):
    """Mean 1-based rank of the true candidate (lower is better).

    Parameters
    ----------
    ranks : array-like of shape (n_samples,)
        The 1-based rank of each sample's true candidate, as :func:`rank_of_true` returns.

    Returns
    -------
    float
        At least 1; 1 when every true candidate is ranked first.

    Examples
    --------
    >>> mean_rank([1, 2, 6])
    3.0
    """
    return float(np.mean(_check_ranks(ranks)))
