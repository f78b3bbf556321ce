"""The tasks a Dask fit runs on its workers, one partition each, and how their results add up.

Each task reads one partition of ``X`` (and of ``Y``) in row chunks of the planned size and returns
sums whose size does not grow with n: the streamed sums of the closed-form fit (:func:`partition_sums`),
an epoch's loss and gradient, a share of the duality certificate, and the counts and few values that
exact quantiles of the targets narrow on. The pairwise combiners are what
:func:`skframe.compute.distributed.tree_reduce` adds them with. Plain NumPy: no Dask is needed here.
"""

from __future__ import annotations

import numpy as np

from skframe.compute.stream_problems import block_dual_sums, block_loss_sums
from skframe.compute.streaming import BlockEngine, chunk_sums
from skframe.options import compute_dtype

__all__ = ["partition_sums"]


def partition_sums(kernel, X_part, Y_part, X_sub, mix, dtype, shift, chunk_rows, products=None, loops=None):
    """One partition's :class:`~skframe.compute.streaming.StreamSums`, computed in row chunks (runs on a worker).

    ``loops`` is the engine of the inner loops the client's plan chose (None: each block by its size).
    """
    engine = BlockEngine(loops)
    mix_t = engine.prepare_mix(mix, compute_dtype(dtype))
    total = None
    for start in range(0, max(X_part.shape[0], 1), max(int(chunk_rows), 1)):
        stop = start + int(chunk_rows)
        part = chunk_sums(kernel, X_part[start:stop], Y_part[start:stop], X_sub, mix, dtype=dtype, engine=engine,
                          mix_t=mix_t, shift=shift, products=products)
        total = part if total is None else total + part
    return total


def _all_finite(block):
    return np.array([[bool(np.all(np.isfinite(block)))]])


def _partition_counts(Y_part, columns, edges):
    """Per target ``t``: counts of ``Y_part[:, columns[t]]`` below ``edges[t][0]``, in each bin, above the last edge."""
    out = []
    for j, e in zip(columns, edges):
        where = np.searchsorted(e, np.asarray(Y_part[:, j], dtype=np.float64), side="right")
        out.append(np.bincount(where, minlength=e.size + 1))
    return out


def _partition_values(Y_part, columns, bounds):
    """Per target ``t``: the values of column ``columns[t]`` in ``[lo, hi)`` of ``bounds[t]`` (few of them)."""
    out = []
    for j, (lo, hi) in zip(columns, bounds):
        col = np.asarray(Y_part[:, j], dtype=np.float64)
        out.append(col[(col >= lo) & (col < hi)])
    return out


def _add_lists(a, b):
    return [x + y for x, y in zip(a, b)]


def _concat_lists(a, b):
    return [np.concatenate([x, y]) for x, y in zip(a, b)]


def _partition_loss(basis, X_part, Y_part, V, C, loss, run, gradient):
    """``(sum_i l(f_i, y_i), Z^T G C^T)`` at ``F = Z V C`` of one partition, in row chunks (runs on a worker).

    ``basis = (kernel, X_sub, proj)`` the feature map, ``run = (dtype, chunk_rows, loops)`` the plan's settings."""
    kernel, X_sub, proj = basis
    dtype, chunk_rows, loops = run
    engine = BlockEngine(loops)
    PV = proj @ np.asarray(V, dtype=np.float64)
    total, KG = 0.0, (np.zeros_like(PV) if gradient else None)
    step = max(int(chunk_rows), 1)
    for start in range(0, X_part.shape[0], step):
        K = engine.block(kernel, np.ascontiguousarray(X_part[start:start + step], dtype=np.float64), X_sub,
                         compute_dtype(dtype))
        # Z V = K (proj V) and Z^T G = proj^T (K^T G): the n x r features are never formed
        part, KG_part = block_loss_sums(K, PV, C, Y_part[start:start + step], loss, gradient)
        total += part
        if gradient:
            KG += KG_part
    return total, (proj.T @ KG if gradient else None)


def _add_pairs(a, b):
    return a[0] + b[0], (None if a[1] is None else a[1] + b[1])


def _partition_dual(basis, X_part, Y_part, V, C, loss, run, scale):
    """One partition's share of the duality certificate at V (runs on a worker), in row chunks.

    The dual point of each row is ``a_i = project(-grad l(f_i, y_i))`` (``F = K (proj V) C``). Without
    ``scale``: ``(sum <a_i, y_i>, sum N(a_i), sum ||a_i||^2, proj^T K^T A C^T)``; with it:
    ``sum h(scale a_i, y_i)``. ``basis`` and ``run`` as in :func:`_partition_loss`.
    """
    kernel, X_sub, proj = basis
    dtype, chunk_rows, loops = run
    engine = BlockEngine(loops)
    PV = proj @ np.asarray(V, dtype=np.float64)
    step = max(int(chunk_rows), 1)
    parts = [block_dual_sums(engine.block(kernel, np.ascontiguousarray(X_part[start:start + step], dtype=np.float64),
                                          X_sub, compute_dtype(dtype)), PV, C, Y_part[start:start + step], loss, scale)
             for start in range(0, X_part.shape[0], step)]
    if scale is not None:
        return float(sum(parts))
    return (sum(p[0] for p in parts), sum(p[1] for p in parts), sum(p[2] for p in parts),
            proj.T @ sum(p[3] for p in parts))


def _add_tuples(a, b):
    return tuple(x + y for x, y in zip(a, b))
