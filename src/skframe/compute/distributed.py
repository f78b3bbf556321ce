"""Many machines: the streamed accumulation as a Dask map-reduce over partitions.

``X`` and ``y`` given as ``dask.array`` s are fitted by the very routine of
:mod:`skframe.compute.streaming`: each partition's ``m x m`` and ``m x d`` contributions are
computed on the workers by :func:`skframe.compute.streaming.chunk_sums` (in bounded row
chunks), and the partial sums are added in a fixed binary tree, so the result does not
depend on which worker computed what. The sketch is drawn once on the client; its
sampled points, mixing matrix and the kernel are shipped to the workers as single graph
nodes. Iterative losses compute each epoch's loss and gradient as a map-reduce over the
persisted partitions (:class:`DaskFeatureProblem`).

The client holds only what does not grow with n: the sketch, its sampled points and the
m x m and m x d sums. The targets stay on the cluster too (:func:`dask_targets`): their
checks, means (:func:`column_means`), exact medians and quantiles (:func:`column_quantiles`,
for robust intercepts) and the test that centred targets are a shift of the accumulated
ones (:func:`shifted_sums`) are reductions computed by the workers.

A worker lost mid-fit is survived: the scheduler recomputes its partitions (the tasks
are pure), and the fit is retried ``retries`` times on failure; if the cluster keeps
losing workers the fit stops with :class:`~skframe.exceptions.DistributedError` —
never a silently different model. Requires the ``dask`` extra
(``pip install "skframe[dask]"``).

The public entry points are here; the cluster, layout and retrying computation are in
:mod:`skframe.compute._dask_cluster`, the tasks the workers run in :mod:`skframe.compute._dask_partitions`
and the iterative-loss problem in :mod:`skframe.compute._dask_problem` (all re-exported here).
"""

from __future__ import annotations

import numpy as np

from skframe.compute._dask_cluster import _aligned, _compute, _dask, dask_client, to_dask, tree_reduce
from skframe.compute._dask_partitions import (
    _add_lists,
    _all_finite,
    _concat_lists,
    _partition_counts,
    _partition_values,
    partition_sums,
)
from skframe.compute._dask_problem import DaskFeatureProblem
from skframe.compute.memory import plan_stream
from skframe.compute.streaming import (
    StreamedRidge,
    block_shift,
    product_precision,
    ridge_from_sums,
    sketch_gram,
)
from skframe.core.engine import planned
from skframe.core.linalg import sketch_spectrum
from skframe.exceptions import DistributedError, InvalidInputError
from skframe.options import DEFAULT_OPTIONS

__all__ = ["fit_sketched_ridge_dask", "DaskFeatureProblem", "partition_sums", "tree_reduce",
           "dask_client", "to_dask", "dask_targets", "column_means", "column_quantiles", "dask_sums",
           "shifted_sums"]


def dask_targets(X, Y, *, retries=3):
    """Training targets of dask-array data, left on the cluster: ``(Y, one_d)``, Y a float64 (n, d) dask array.

    Checked by the workers (shape, finite values); only the answer comes to the client. A NumPy
    ``Y`` is cut into X's partitions. Nothing of size n is held by the client.
    """
    if np.ndim(Y) not in (1, 2):
        raise InvalidInputError(f"y must be 1-D or 2-D, got shape {np.shape(Y)}")
    one_d = np.ndim(Y) == 1
    _, Y = _aligned(X, Y)
    Y = Y.astype(np.float64)
    if not bool(_compute(Y.map_blocks(_all_finite, chunks=(1, 1), dtype=bool).all(), retries)):
        raise InvalidInputError("y contains NaN or infinity; remove or impute those targets first")
    return Y, one_d


def column_means(Y, *, retries=3, weights=None):
    """Column means of an (n, d) dask array, computed by the workers (ndarray (d,)); with ``weights`` (n,), the
    weighted means ``sum_i w_i y_i / sum_i w_i`` (the weights sent to the workers in Y's row chunks)."""
    if weights is None:
        return np.asarray(_compute(Y.mean(axis=0), retries), dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    wd = _dask().array.from_array(w, chunks=(Y.chunks[0],))
    return np.asarray(_compute((Y * wd[:, None]).sum(axis=0), retries), dtype=np.float64) / float(w.sum())


def column_quantiles(Y, levels, *, retries=3, bins=1024, gather=8192):
    """Exact ``np.quantile(Y[:, j], levels[j])`` (linear interpolation) of an (n, d) dask array.

    The order statistics are found by narrowing: each pass counts the values of every wanted
    column in ``bins`` bins of the interval known to hold the statistic (a map-reduce of
    counts), until that bin holds at most ``gather`` values, which alone come to the client.
    Two passes at most for ``n <= bins * gather`` rows of spread-out values; the client holds
    O(bins + gather) numbers per statistic, whatever n.

    Parameters
    ----------
    Y : dask.array of shape (n, d)
    levels : sequence of d floats in [0, 1]
        The level of each column (e.g. all 0.5: the column medians).

    Returns
    -------
    ndarray of shape (d,)
    """
    dl = _dask().delayed
    n, d = int(Y.shape[0]), int(Y.shape[1])
    levels = [float(q) for q in levels]
    if len(levels) != d or n < 1:
        raise InvalidInputError(f"column_quantiles needs one level per column ({d}) and at least one row, got "
                                f"{len(levels)} levels and {n} rows")
    parts = Y.to_delayed().ravel()
    lows, highs = _compute((Y.min(axis=0), Y.max(axis=0)), retries)
    # the 0-based ranks each level interpolates between: h = (n - 1) q, x[floor h] + frac (x[floor h + 1] - ...)
    wanted = sorted({(j, k) for j, q in enumerate(levels) for k in {int(np.floor((n - 1) * q)),
                                                                      min(int(np.floor((n - 1) * q)) + 1, n - 1)}})
    # per statistic: [column, rank, lo, hi, count below lo]; the statistic lies in [lo, hi)
    state = [[j, k, float(lows[j]), float(np.nextafter(highs[j], np.inf)), 0] for j, k in wanted]
    found = {}
    for _ in range(80):  # each pass narrows by ~bins (or reaches one representable value)
        open_ = [t for t in state if (t[0], t[1]) not in found]
        if not open_:
            break
        edges = [np.unique(np.linspace(lo, hi, bins + 1)) for _, _, lo, hi, _ in open_]
        cols = [t[0] for t in open_]
        counts = _compute(tree_reduce([dl(_partition_counts, pure=True)(p, cols, edges) for p in parts],
                                      _add_lists), retries)
        to_gather = []
        for t, e, c in zip(open_, edges, counts):
            # c[i] counts values in [e[i-1], e[i]); c[0] those below lo (none), c[-1] those >= hi (past the rank)
            cum = t[4] + np.cumsum(c[1:-1])
            b = int(np.searchsorted(cum, t[1], side="right"))
            t[4] = int(cum[b] - c[b + 1])
            t[2], t[3] = float(e[b]), float(e[b + 1])
            if np.nextafter(t[2], np.inf) >= t[3]:  # one representable value: the statistic is it
                found[(t[0], t[1])] = t[2]
            elif c[b + 1] <= gather:
                to_gather.append(t)
        if to_gather:
            cols, bounds = [t[0] for t in to_gather], [(t[2], t[3]) for t in to_gather]
            values = _compute(tree_reduce([dl(_partition_values, pure=True)(p, cols, bounds) for p in parts],
                                          _concat_lists), retries)
            for t, v in zip(to_gather, values):
                found[(t[0], t[1])] = float(np.sort(v)[t[1] - t[4]])
    out = np.empty(d)
    for j, q in enumerate(levels):
        h = (n - 1) * q
        k = int(np.floor(h))
        lo, hi = found[(j, k)], found[(j, min(k + 1, n - 1))]
        out[j] = lo + (h - k) * (hi - lo)
    return out


def shifted_sums(Y_ref, Y, *, retries=3):
    """Column sums of ``Y`` when ``Y = Y_ref - 1 s^T`` for a constant row ``s`` (dask arrays), else None.

    One pass of the workers (the column ranges of ``Y_ref - Y`` and the column sums of ``Y``): the
    accumulated sums of ``Y_ref`` then serve ``Y`` without another kernel pass.
    """
    lo, hi, y_sum, top = _compute(((Y_ref - Y).min(axis=0), (Y_ref - Y).max(axis=0), Y.sum(axis=0),
                                   abs(Y).max()), retries)
    if np.any(np.asarray(hi) - np.asarray(lo) > 1e-12 * (1.0 + float(top))):
        return None
    return np.asarray(y_sum, dtype=np.float64)


def dask_sums(kernel, X, Y, X_sub, mix, *, products="float64", shift=None, chunk_rows, retries=3, loops=None):
    """The :class:`~skframe.compute.streaming.StreamSums` of dask arrays ``(X, Y)``: partitions summed by the
    workers in a fixed binary tree; only the m x m and m x d sums come to the client (NumPy float64).
    ``loops``: the engine of the workers' inner loops (the fit's)."""
    dask = _dask()
    X, Y = _aligned(X, Y)
    ship = [dask.delayed(v, pure=True) for v in (kernel, X_sub, mix, shift)]
    parts = [dask.delayed(partition_sums, pure=True)(ship[0], xp, yp, ship[1], ship[2], products, ship[3],
                                                      chunk_rows, products, loops)
             for xp, yp in zip(X.to_delayed().ravel(), Y.to_delayed().ravel())]
    sums = _compute(tree_reduce(parts), retries).to_numpy()
    if sums.n != X.shape[0]:
        raise DistributedError(f"the partitions summed to {sums.n} rows instead of {X.shape[0]}; no model was "
                               "produced")
    return sums, len(parts)


def fit_sketched_ridge_dask(kernel, X, Y, R, lam, *, options=None, rtol=None, retries=3, keep_sums=False):
    """Sketched kernel ridge regression on dask arrays.

    The same numbers as :func:`skframe.compute.streaming.fit_sketched_ridge`.

    Parameters
    ----------
    kernel : kernel object (picklable)
    X : dask.array of shape (n, n_features)
    Y : dask.array or ndarray of shape (n,) or (n, d)
    R : skframe.core.sketching.SketchMatrix
        Drawn once on the client.
    lam : float
    options : ComputeOptions, optional
        ``dtype``, ``memory_budget`` (per worker: sizes the row chunks within a partition) and
        ``engine`` of the workers' inner loops (a model passes its plan's; else chosen from n x s').
    rtol : float, optional
    retries : int
        Times a failed partition is retried by the distributed scheduler.
    keep_sums : bool
        Also return the sums and ``U D^{-1/2}`` in ``info`` (see :func:`skframe.compute.streaming.fit_sketched_ridge`).
    """
    options = options or DEFAULT_OPTIONS
    X, Y = _aligned(X, Y)
    n = int(X.shape[0])
    if R.n != n:
        raise InvalidInputError(f"the sketch was drawn for n={R.n} rows but X has {n}")
    options = planned(options, n * R.s_prime)  # one engine for the client's and the workers' blocks
    plan = plan_stream(max(X.chunks[0]), R.m, R.s_prime, X.shape[1], Y.shape[1], options, kernel=kernel)
    X_sub = np.ascontiguousarray(_compute(X[np.sort(R.indices)], retries), dtype=np.float64)
    X_sub = X_sub[np.argsort(np.argsort(R.indices))]  # back to the order of R.indices
    RKR = sketch_gram(kernel, X_sub, R.mix, engine=options.engine)
    eig = sketch_spectrum(RKR, rtol)
    products = product_precision(eig[0], options.dtype)
    shift = block_shift(kernel, X_sub, R.mix, products)
    if products != str(options.dtype):  # float64 products: float64 blocks, as the single-machine path
        plan = plan_stream(max(X.chunks[0]), R.m, R.s_prime, X.shape[1], Y.shape[1],
                           options.replace(dtype=products), kernel=kernel)
    sums, partitions = dask_sums(kernel, X, Y, X_sub, R.mix, products=products, shift=shift,
                                 chunk_rows=plan.chunk_rows, retries=retries, loops=options.engine)
    coef, proj, w, UD = ridge_from_sums(sums, RKR, R.mix, lam, rtol=rtol, return_ud=True, eig=eig)
    info = {"chunk_rows": plan.chunk_rows, "planned_peak_bytes": plan.peak_bytes, "dtype": str(options.dtype),
            "products": products, "backend": "dask", "partitions": partitions, "rank": int(w.size)}
    if keep_sums:
        info.update(sums=sums, UD=UD)
    return StreamedRidge(coef, X_sub, proj, w, n, info)
