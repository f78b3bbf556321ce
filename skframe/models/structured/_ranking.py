"""Ranking metrics of a structured model over candidate sets: Hits@k, MRR and mean rank in one pass."""

from __future__ import annotations

import numpy as np

from ...collections import n_items, take
from ...exceptions import InvalidInputError, InvalidParameterError
from ...metrics import hits_at_k, mean_rank, mean_reciprocal_rank
from ._candidates import CandidatePool

__all__ = ["candidate_ranking"]

# score entries per pass over the queries (32 MB of float64)
BLOCK_ENTRIES = 4_000_000


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
