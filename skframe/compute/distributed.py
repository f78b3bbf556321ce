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
"""

from __future__ import annotations

import contextlib
import operator

import numpy as np

from skframe.compute.memory import plan_stream
from skframe.compute.stream_problems import ProjectedProblem, block_loss_sums
from skframe.compute.streaming import (
    NumpyEngine,
    StreamedRidge,
    block_shift,
    chunk_sums,
    get_engine,
    product_precision,
    ridge_from_sums,
    sketch_gram,
)
from skframe.core.engine import with_engine
from skframe.core.linalg import sketch_spectrum
from skframe.deps import is_dask_collection, require
from skframe.exceptions import DistributedError, InvalidInputError, InvalidParameterError
from skframe.options import DEFAULT_OPTIONS, compute_dtype

__all__ = ["fit_sketched_ridge_dask", "DaskFeatureProblem", "partition_sums", "tree_reduce",
           "dask_client", "to_dask", "dask_targets", "column_means", "column_quantiles", "dask_sums",
           "shifted_sums"]


def _dask():
    return require("dask", "dask-array inputs (fitting on a Dask cluster)")


def dask_client(scheduler=None, local=None):
    """A context manager giving a ``distributed.Client``: to a running scheduler, or on a new local cluster.

    Parameters
    ----------
    scheduler : str, optional
        Address of a running Dask scheduler, e.g. ``"tcp://10.0.0.5:8786"``.
    local : int, optional
        Start a ``LocalCluster`` of this many single-threaded worker processes (closed on exit).

    Exactly one of them is given. Without the ``dask`` extra, one
    :class:`~skframe.exceptions.DependencyError` names it.
    """
    if (scheduler is None) == (local is None):
        raise InvalidParameterError("give either a Dask scheduler address (--dask-scheduler tcp://HOST:8786) or a "
                                    "number of local workers (--dask-local N), not both and not neither")
    if local is not None and (isinstance(local, bool) or int(local) < 1):
        raise InvalidParameterError(f"--dask-local {local!r} must be a positive number of worker processes")
    if scheduler is not None and "://" not in str(scheduler) and ":" not in str(scheduler):
        raise InvalidParameterError(f"--dask-scheduler {scheduler!r} is not an address; write e.g. tcp://HOST:8786")
    require("dask", "a Dask cluster (--dask-scheduler / --dask-local)")
    distributed = require("distributed", "a Dask cluster (--dask-scheduler / --dask-local)")

    @contextlib.contextmanager
    def session():
        with contextlib.ExitStack() as stack:
            if local is not None:
                cluster = stack.enter_context(distributed.LocalCluster(
                    n_workers=int(local), threads_per_worker=1, processes=True, dashboard_address=None,
                    silence_logs=40))
                address = cluster
            else:
                address = str(scheduler)
            try:
                client = stack.enter_context(distributed.Client(address, timeout="10s"))
            except OSError as exc:
                raise DistributedError(f"cannot reach the Dask scheduler at {scheduler} ({exc}); check the address "
                                       "and that the scheduler is running") from exc
            yield client

    return session()


def to_dask(X, Y=None, rows=None):
    """NumPy arrays or memory maps as dask arrays of ``rows`` rows per partition (default: about 8 partitions)."""
    _dask()
    import dask.array as da  # lazy: Dask is optional (the dask extra)

    n = int(X.shape[0])
    rows = int(rows or max(1, -(-n // 8)))
    Xd = X if is_dask_collection(X) else da.from_array(X, chunks=(rows, -1))
    if Y is None:
        return Xd
    Y = np.asarray(Y)
    Yd = Y if is_dask_collection(Y) else da.from_array(Y, chunks=(rows,) + ((-1,) if Y.ndim > 1 else ()))
    return Xd, Yd


def partition_sums(kernel, X_part, Y_part, X_sub, mix, dtype, shift, chunk_rows, products=None, loops=None):
    """One partition's :class:`~skframe.compute.streaming.StreamSums`, computed in row chunks (runs on a worker).

    ``loops`` is the engine of the inner loops the client's plan chose (None: each block by its size).
    """
    engine = NumpyEngine(loops)
    mix_t = engine.prepare_mix(mix, compute_dtype(dtype))
    total = None
    for start in range(0, max(X_part.shape[0], 1), max(int(chunk_rows), 1)):
        stop = start + int(chunk_rows)
        part = chunk_sums(kernel, X_part[start:stop], Y_part[start:stop], X_sub, mix, dtype=dtype, engine=engine,
                          mix_t=mix_t, shift=shift, products=products)
        total = part if total is None else total + part
    return total


def tree_reduce(items, func=operator.add):
    """Combine delayed values pairwise in a fixed binary tree (deterministic summation order)."""
    dask = _dask()
    items = list(items)
    while len(items) > 1:
        nxt = [dask.delayed(func, pure=True)(items[i], items[i + 1]) for i in range(0, len(items) - 1, 2)]
        if len(items) % 2:
            nxt.append(items[-1])
        items = nxt
    return items[0]


def _compute(obj, retries):
    """Compute on the active distributed client (with retries), else on the local scheduler."""
    dask = _dask()
    client = None
    try:
        from distributed import default_client  # lazy: Dask is optional (the dask extra)

        client = default_client()
    except (ImportError, ValueError):
        client = None
    try:
        if client is not None:
            return client.gather(client.compute(obj, retries=retries))
        return dask.compute(obj)[0]
    except Exception as exc:  # KilledWorker, CommClosedError, ... : no partial model may come out
        name = type(exc).__name__
        if name in ("KilledWorker", "CommClosedError", "FutureCancelledError", "CancelledError") or \
                type(exc).__module__.split(".")[0] == "distributed":
            raise DistributedError(
                f"the Dask computation failed ({name}: {exc}); no model was produced. Workers kept dying on "
                "a partition: give them more memory or lower memory_budget / the partition size, then fit again"
            ) from exc
        raise


def _aligned(X, Y):
    """X with one column chunk and Y as a 2-D dask array with X's row chunks."""
    _dask()
    import dask.array as da  # lazy: Dask is optional (the dask extra)
    if Y is None:
        raise InvalidInputError("y is missing: pass y as a dask array (or NumPy array) with X's rows")
    if not is_dask_collection(Y):
        Y = da.from_array(np.asarray(Y), chunks=(X.chunks[0],) + ((-1,) if np.ndim(Y) > 1 else ()))
    if Y.shape[0] != X.shape[0]:
        raise InvalidInputError(f"X has {X.shape[0]} rows but y has {Y.shape[0]}; they must have the same length")
    if Y.ndim == 1:
        Y = Y[:, None]
    return X.rechunk({1: -1}), Y.rechunk({0: X.chunks[0], 1: -1})


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


def _all_finite(block):
    return np.array([[bool(np.all(np.isfinite(block)))]])


def column_means(Y, *, retries=3):
    """Column means of an (n, d) dask array, computed by the workers (ndarray (d,))."""
    return np.asarray(_compute(Y.mean(axis=0), retries), dtype=np.float64)


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
    options = with_engine(options, n * R.s_prime)  # one engine for the client's and the workers' blocks
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


def _partition_loss(kernel, X_part, Y_part, X_sub, proj, V, C, loss, dtype, gradient, chunk_rows, loops=None):
    """``(sum_i l(f_i, y_i), Z^T G C^T)`` at ``F = Z V C`` of one partition, in row chunks (runs on a worker)."""
    engine = NumpyEngine(loops)
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


def _partition_dual(kernel, X_part, Y_part, X_sub, proj, V, C, loss, dtype, chunk_rows, scale, loops=None):
    """One partition's share of the duality certificate at V (runs on a worker), in row chunks.

    The dual point of each row is ``a_i = project(-grad l(f_i, y_i))`` (``F = K (proj V) C``). Without
    ``scale``: ``(sum <a_i, y_i>, sum N(a_i), sum ||a_i||^2, proj^T K^T A C^T)``; with it:
    ``sum h(scale a_i, y_i)``.
    """
    engine = NumpyEngine(loops)
    dual = loss.dual
    PV = proj @ np.asarray(V, dtype=np.float64)
    lin = norm = sq = h = 0.0
    KA = np.zeros_like(PV)
    step = max(int(chunk_rows), 1)
    for start in range(0, X_part.shape[0], step):
        K = engine.block(kernel, np.ascontiguousarray(X_part[start:start + step], dtype=np.float64), X_sub,
                         compute_dtype(dtype)).astype(np.float64, copy=False)
        Y = np.asarray(Y_part[start:start + step], dtype=np.float64)
        Y = Y[:, None] if Y.ndim == 1 else Y
        A = dual.project(-np.asarray(loss.gradient((K @ PV) @ C, Y), dtype=np.float64), Y)
        if scale is not None:
            h += float(np.sum(dual.values(scale * A, Y)))
            continue
        lin += float(np.sum(A * Y))
        norm += float(np.sum(np.sqrt(np.sum(A * A, axis=1)) if dual.structure == "norm" else np.abs(A)))
        sq += float(np.sum(A * A))
        KA += K.T @ (A @ C.T)
    return h if scale is not None else (lin, norm, sq, proj.T @ KA)


def _add_tuples(a, b):
    return tuple(x + y for x, y in zip(a, b))


class DaskFeatureProblem(ProjectedProblem):
    """Features of dask-array data: each epoch's loss and gradient is a map-reduce over partitions.

    The partitions are persisted on the workers once; :meth:`loss_pass` ships only the
    current weights and brings back the m x d sums. :meth:`blocks` computes feature blocks
    on the client one partition at a time, in row chunks (for generic solvers).
    """

    def __init__(self, kernel, X, Y, X_sub, proj, options=None, retries=3):
        self._dask = _dask()
        X, Y = _aligned(X, Y)
        self.X, self.Y = X.persist(), Y.persist()
        self.kernel, self.X_sub, self.retries = kernel, np.asarray(X_sub), retries
        self.proj = np.asarray(proj, dtype=np.float64)
        self.options = with_engine(options, int(X.shape[0]) * self.X_sub.shape[0])  # the fit's, else from n x s'
        self.chunk_rows = plan_stream(max(X.chunks[0]), self.r, self.X_sub.shape[0], X.shape[1], self.d,
                                      self.options, kernel=kernel).chunk_rows
        self._ship = [self._dask.delayed(v, pure=True) for v in (kernel, self.X_sub, self.proj)]

    def loss_pass(self, V, C, loss, gradient=True):
        """``(sum_i l(f_i, y_i), Z^T G C^T)`` at ``F = Z V C``, reduced over partitions (the
        pass of :meth:`skframe.compute.stream_problems.StreamedFeatureProblem.loss_pass`)."""
        dl = self._dask.delayed
        k, xs, pj = self._ship
        Vd, Cd = (dl(np.asarray(a, dtype=np.float64), pure=True) for a in (V, C))
        ld = dl(loss, pure=True)
        parts = [dl(_partition_loss, pure=True)(k, xp, yp, xs, pj, Vd, Cd, ld, self.options.dtype, gradient,
                                                 self.chunk_rows, self.options.engine)
                 for xp, yp in zip(self.X.to_delayed().ravel(), self.Y.to_delayed().ravel())]
        return _compute(tree_reduce(parts, _add_pairs), self.retries)

    def dual_pass(self, V, C, loss, lam):
        """The dual objective ``D`` of the duality certificate at V, by two map-reduces over the partitions.

        The dual point built from V as the solvers' certificate builds it (each row's loss gradient
        projected on the dual domain, then scaled by the best ``s`` in [0, 1]); the first pass
        reduces its sums, the second ``sum h(s a_i, y_i)``. Only scalars and an r x k matrix come to
        the client: the n x d dual variables stay on the workers. None for a loss without ``dual``.
        """
        dual = getattr(loss, "dual", None)
        if dual is None:
            return None
        dl, n = self._dask.delayed, self.n
        k, xs, pj = self._ship
        Vd, Cd, ld = dl(np.asarray(V, dtype=np.float64), pure=True), dl(np.asarray(C, dtype=np.float64)), dl(loss)

        def reduce(scale, combine):
            parts = [dl(_partition_dual, pure=True)(k, xp, yp, xs, pj, Vd, Cd, ld, self.options.dtype,
                                                     self.chunk_rows, scale, self.options.engine)
                     for xp, yp in zip(self.X.to_delayed().ravel(), self.Y.to_delayed().ravel())]
            return _compute(tree_reduce(parts, combine), self.retries)

        lin_sum, norm_sum, sq_sum, KA = reduce(None, _add_tuples)
        VA = KA / (float(lam) * n)  # V(A) = Z^T A C^T / (lam n)
        lin = lin_sum / n - dual.l1 * norm_sum / n
        quad = 0.5 * dual.quad * sq_sum / n + 0.5 * float(lam) * float(np.sum(VA * VA))
        s = 1.0 if quad <= 0 else float(np.clip(lin / (2.0 * quad), 0.0, 1.0))
        return reduce(s, operator.add) / n - 0.5 * float(lam) * float(np.sum((s * VA) ** 2))

    def blocks(self, chunk_rows=None):
        start = 0
        dt = compute_dtype(self.options.dtype)
        step = max(int(chunk_rows or self.chunk_rows), 1)
        P = self.proj.astype(dt)
        for xp, yp in zip(self.X.to_delayed().ravel(), self.Y.to_delayed().ravel()):
            Xb, Yb = _compute((xp, yp), self.retries)
            for lo in range(0, Xb.shape[0], step):
                Z = get_engine(self.options).block(self.kernel, np.asarray(Xb[lo:lo + step], dtype=np.float64),
                                                   self.X_sub, dt) @ P
                yield start + lo, Z, np.asarray(Yb[lo:lo + step], dtype=np.float64)
            start += Xb.shape[0]
