"""Ranking metrics of a structured model over candidate sets: Hits@k, MRR and mean rank in one pass."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from skframe.contract.collections import n_items, take
from skframe.exceptions import InvalidInputError, InvalidParameterError
from skframe.metrics import hits_at_k, mean_rank, mean_reciprocal_rank
from skframe.models.structured._candidates import CandidatePool
from skframe.options import DEFAULT_OPTIONS

__all__ = ["candidate_ranking", "true_candidate_index"]

# score entries per pass over the queries (32 MB of float64)
BLOCK_ENTRIES = 4_000_000


def _dense_rows(A):
    """Rows as a float64 array with -0.0 mapped to 0.0 (so that equal rows have equal bytes)."""
    A = A.toarray() if sp.issparse(A) else np.asarray(A)
    if A.ndim == 1:
        A = A[None, :]
    return np.ascontiguousarray(A, dtype=np.float64) + 0.0


def true_candidate_index(Y_true, candidates):
    """Position of each true output in its row's candidate set, ``-1`` where it is not a candidate.

    The ``true_index`` argument of :func:`candidate_ranking`, found by exact equality of
    the output vectors (whatever their dtypes: a uint8 candidate equals the float 1.0/0.0
    row). With duplicated candidates, the first position counts.

    Parameters
    ----------
    Y_true : array or sparse matrix of shape (n, d)
    candidates : array of shape (n_c, d), list of n arrays or CandidatePool
        A global set (e.g. ``model.candidates_``), one set per row, or a pool.

    Returns
    -------
    ndarray of int64, shape (n,)
    """
    Y = _dense_rows(Y_true)
    out = np.full(Y.shape[0], -1, dtype=np.int64)
    if isinstance(candidates, (list, tuple, CandidatePool)):
        if len(candidates) != Y.shape[0]:
            raise InvalidInputError(f"{len(candidates)} candidate sets for {Y.shape[0]} true outputs; give one per row")
        for i in range(Y.shape[0]):  # one small comparison per row, in the candidates' own dtype
            C = candidates.rows(i) if isinstance(candidates, CandidatePool) else candidates[i]
            C = C.toarray() if sp.issparse(C) else np.asarray(C)
            hit = np.flatnonzero((C == Y[i]).all(axis=1)) if C.shape[0] else []
            if len(hit):
                out[i] = hit[0]
        return out
    first = {}
    step = DEFAULT_OPTIONS.rows_per_block(Y.shape[1])
    for start in range(0, candidates.shape[0], step):  # float64 rows one block at a time
        block = _dense_rows(candidates[start : start + step])
        for j, row in enumerate(block):
            first.setdefault(row.tobytes(), start + j)
    for i, row in enumerate(Y):
        out[i] = first.get(row.tobytes(), -1)
    return out


def _ranks(scores, true_index, ties):
    """1-based rank of ``scores[true_index]`` in one row's scores (ties as in :func:`skframe.metrics.rank_of_true`)."""
    s_true = scores[true_index]
    greater = float(np.sum(scores > s_true))
    others = float(np.sum(scores == s_true)) - 1.0
    return 1.0 + greater + {"optimistic": 0.0, "pessimistic": others, "average": others / 2.0}[ties]


def candidate_ranking(model, X, candidates, true_index, *, ks=(1, 5, 10), ties="average"):
    """Rank of the true output among each row's candidates, summarised as Hits@k, MRR and mean rank.

    Scores come from ``model.decision_function`` in blocks of rows, so a
    :class:`CandidatePool` is embedded once for the whole evaluation.

    Parameters
    ----------
    model : fitted OutputKernelRegressor
    X : array-like, sparse matrix or InputCollection with n rows
    candidates : None, array, list of arrays or CandidatePool
        As in ``model.predict``.
    true_index : array-like of int, shape (n,)
        Position of the true output in row i's candidate set (its row of the global
        set, of the per-row array, or of the row's pool index list; see
        ``CandidatePool.local_index``). Rows with ``-1`` (truth not among the
        candidates) are not ranked.
    ks : sequence of int, default (1, 5, 10)
    ties : {"average", "optimistic", "pessimistic"}, default "average"
        How candidates scoring exactly as the true one count.

    Returns
    -------
    dict
        ``hits@k`` for each k, ``mrr``, ``mean_rank`` and ``n_ranked`` (rows ranked);
        only ``n_ranked = 0`` when no row could be ranked.
    """
    if ties not in ("average", "optimistic", "pessimistic"):
        raise InvalidParameterError(f"ties={ties!r} must be 'average', 'optimistic' or 'pessimistic'")
    n = n_items(X)
    true_index = np.asarray(true_index)
    if true_index.shape != (n,) or not np.issubdtype(true_index.dtype, np.integer):
        raise InvalidInputError(f"true_index has shape {true_index.shape}; give one integer per row of X ({n})")
    rows = np.flatnonzero(true_index >= 0)
    if rows.size == 0:
        return {"n_ranked": 0}
    per_row = isinstance(candidates, (list, tuple, CandidatePool))
    if per_row:
        sizes = np.array([len(candidates.indices[a:z]) for a, z in zip(candidates.offsets[:-1], candidates.offsets[1:])]
                         if isinstance(candidates, CandidatePool) else [c.shape[0] for c in candidates])
    else:
        n_c = model.candidates_.shape[0] if candidates is None else candidates.shape[0]
        sizes = np.full(n, n_c)
    if np.any(true_index[rows] >= sizes[rows]):
        raise InvalidInputError("true_index points past the end of a row's candidate set")
    ranks = np.empty(rows.size)
    ends = np.cumsum(sizes[rows])  # scores up to and including each ranked row
    start = 0
    while start < rows.size:  # blocks of rows holding about BLOCK_ENTRIES scores
        before = ends[start - 1] if start else 0
        stop = max(start + 1, int(np.searchsorted(ends, before + BLOCK_ENTRIES, side="right")))
        part = rows[start:stop]
        if isinstance(candidates, CandidatePool):
            sub = candidates.subset(part)
        else:
            sub = [candidates[i] for i in part] if per_row else candidates
        S = model.decision_function(take(X, part), candidates=sub)
        for j, i in enumerate(part):
            ranks[start + j] = _ranks(np.asarray(S[j]), int(true_index[i]), ties)
        start = stop
    out = {f"hits@{k}": float(h) for k, h in zip(ks, np.atleast_1d(hits_at_k(ranks, list(ks))))}
    out.update(mrr=mean_reciprocal_rank(ranks), mean_rank=mean_rank(ranks), n_ranked=int(rows.size))
    return out
