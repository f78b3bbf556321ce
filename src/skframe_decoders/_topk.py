"""Top-k selection of candidate scores: exact on the host, cut on the device first.

:func:`select_topk` orders each row's entries by (score descending, candidate index ascending), the order
``np.argmax`` over the full score matrix follows; :func:`merge_topk` folds a block of later candidates into a
running top-k; :func:`contenders` brings to the host only the entries of device scores (CuPy on a GPU) that can
reach a row's top k, ties included, so that the host selection that follows is exact.
"""

from __future__ import annotations

import numpy as np

from skframe.plugin.toolbox import get_array_module, to_numpy

__all__ = ["select_topk", "merge_topk", "contenders"]


def contenders(scores, index, k):
    """``(scores, index)`` on the host, cut to the entries of each row that can be among its top k.

    For device scores (CuPy) the k-th best score of each row is found on the device and each row
    keeps its ``w`` best entries, ``w`` the largest number of entries at least that good in any
    row (k, or more with ties at the k-th score): every entry that can enter a row's top k, ties
    included, so :func:`select_topk` on the result is exact. Host scores are returned as they
    are (``index`` broadcast to their shape).
    """
    xp = get_array_module(scores)
    r, c = scores.shape
    if xp is np or c <= k:
        return to_numpy(scores), np.broadcast_to(index, (r, c))
    kth = -xp.partition(-scores, k - 1, axis=1)[:, k - 1]
    width = max(int(to_numpy((scores >= kth[:, None]).sum(axis=1).max())), k)
    part = xp.argpartition(-scores, width - 1, axis=1)[:, :width]
    part_h = to_numpy(part)
    return to_numpy(xp.take_along_axis(scores, part, axis=1)), np.asarray(index)[part_h]


def select_topk(scores, index, k):
    """Top-k of each row by (score descending, index ascending).

    Parameters
    ----------
    scores : ndarray of shape (r, c)
    index : ndarray of shape (r, c) or (c,)
        Candidate index of each column (used to break ties).
    k : int

    Returns
    -------
    top_index, top_scores : ndarrays of shape (r, min(k, c)), best first.
    """
    r, c = scores.shape
    index = np.broadcast_to(index, scores.shape)
    kk = min(k, c)
    if kk == 0:
        return np.empty((r, 0), dtype=np.int64), np.empty((r, 0))
    if kk == 1:  # argmax, ties broken by the smallest candidate index
        rows = np.arange(r)
        j = np.argmax(scores, axis=1)
        best = scores[rows, j]
        top_i = np.array(index[rows, j], dtype=np.int64)
        for row in np.flatnonzero((scores == best[:, None]).sum(axis=1) > 1):
            top_i[row] = index[row][scores[row] == best[row]].min()
        return top_i[:, None], best[:, None]
    if kk < c:
        part = np.argpartition(-scores, kk - 1, axis=1)
        kth = np.take_along_axis(scores, part[:, kk - 1 : kk], axis=1)  # k-th largest value per row
        keep = scores >= kth
        counts = keep.sum(axis=1)
        simple = counts == kk
        top_s = np.empty((r, kk))
        top_i = np.empty((r, kk), dtype=np.int64)
        if simple.any():
            m = keep[simple]
            top_s[simple] = scores[simple][m].reshape(-1, kk)
            top_i[simple] = index[simple][m].reshape(-1, kk)
        for row in np.flatnonzero(~simple):  # ties at the k-th value: order by (-score, index)
            order = np.lexsort((index[row], -scores[row]))[:kk]
            top_s[row] = scores[row, order]
            top_i[row] = index[row, order]
    else:
        top_s = scores.copy()
        top_i = np.array(index, dtype=np.int64, copy=True)
    order = np.lexsort((top_i, -top_s), axis=-1)
    return np.take_along_axis(top_i, order, axis=1), np.take_along_axis(top_s, order, axis=1)


def merge_topk(S, idx, top_i, top_s, r0, k):
    """Merge a block of later candidates into the running top-k of rows ``r0:r0+len(S)``.

    Only scores strictly above a row's current k-th best can enter (a later
    candidate loses ties), so the partial selection runs on those entries only.
    ``idx`` gives the candidate of each column, shared by the rows (c,) or per row (r, c).
    """
    idx = np.broadcast_to(idx, S.shape)
    thr = top_s[r0 : r0 + S.shape[0], k - 1]
    hit = np.flatnonzero(S.max(axis=1) > thr)  # rows with at least one entrant
    if hit.size == 0:
        return
    rr, cc = np.nonzero(S[hit] > thr[hit, None])
    rr = hit[rr]
    rows_u, starts, counts = np.unique(rr, return_index=True, return_counts=True)
    width = int(counts.max())
    pos = np.arange(rr.size) - np.repeat(starts, counts)
    ri = np.repeat(np.arange(rows_u.shape[0]), counts)
    Sp = np.full((rows_u.shape[0], width), -np.inf)
    Ip = np.full((rows_u.shape[0], width), np.iinfo(np.int64).max, dtype=np.int64)
    Sp[ri, pos] = S[rr, cc]
    Ip[ri, pos] = idx[rr, cc]
    rows = r0 + rows_u
    ti, ts = select_topk(np.concatenate([top_s[rows], Sp], axis=1), np.concatenate([top_i[rows], Ip], axis=1), k)
    top_i[rows] = ti
    top_s[rows] = ts
