"""Iterative losses at scale: features kept within the budget, or recomputed chunk by chunk.

A Lipschitz or smooth loss (Huber, epsilon-SVR, pinball, hinge) has no closed form,
so a solver passes over the features ``z(x) = k(x, X_sub) S_mix^T U D^{-1/2}`` many
times (El Ahmad, Laforgue, d'Alché-Buc, *Fast Kernel Methods for Generic Lipschitz
Losses via p-Sparsified Sketches*, TMLR 2023). :func:`make_feature_problem` keeps the
n x r features in memory when they fit the memory budget (in float32 when asked), and
otherwise returns a :class:`StreamedFeatureProblem` that recomputes them chunk by
chunk on every pass; the choice is reported as ``"in-memory"`` or ``"streamed"``.
The solvers (``skframe_solvers``) make their passes through :meth:`StreamedFeatureProblem.loss_pass`.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from skframe.compute.backend import get_array_module, to_numpy
from skframe.compute.memory import budget_of, check_allocation, empty_mapped, kept_features_rows, plan_stream
from skframe.compute.plan_newton import kept_block_dtype
from skframe.compute.streaming import get_engine, iter_rows, sketch_gram
from skframe.contract.collections import n_items
from skframe.contract.problems import ArrayProblem, FactoredArrayProblem, TargetArrayProblem
from skframe.core.engine import planned
from skframe.core.linalg import spectral_projection
from skframe.core.sketching import kernel_times_mix
from skframe.options import DEFAULT_OPTIONS, compute_dtype

__all__ = ["feature_projection", "ProjectedProblem", "StreamedFeatureProblem", "make_feature_problem",
           "block_loss_sums", "block_dual_sums", "certificate_dual"]


def feature_projection(kernel, X_sub, mix, *, rtol=None, engine=None):
    """``proj = S_mix^T U D^{-1/2}`` (s' x r) and the kept eigenvalues of ``R K R^T``.

    The eigenvalues decide the product precision of float32 features
    (:func:`skframe.compute.streaming.product_precision`); ``engine`` runs the kernel's loops.
    """
    UD, w = spectral_projection(sketch_gram(kernel, X_sub, mix, engine=engine), rtol)
    return np.asarray(mix.T @ UD), w


class ProjectedProblem(TargetArrayProblem):
    """A problem of targets ``self.Y`` (n x d) and features ``k(x, X_sub) @ self.proj`` (r of them)."""

    @property
    def r(self):
        return int(self.proj.shape[1])


class StreamedFeatureProblem(ProjectedProblem):
    """Features recomputed from the data on each pass: ``Z_block = k(X_block, X_sub) @ proj``.

    Parameters
    ----------
    kernel : kernel object
    X : ndarray, np.memmap, sparse matrix or callable returning an iterable of chunks
        Must be readable several times (one pass per epoch).
    Y : ndarray (n,) or (n, d)
    X_sub : ndarray (s', n_features)
    proj : ndarray (s', r)
    options : ComputeOptions, optional
        ``dtype`` of the kernel blocks, ``backend`` and the memory budget sizing the chunks.
    products : {"float64", "float32"}, optional
        Precision of ``block @ proj`` (default ``options.dtype``); float64 for an ill-conditioned
        ``R K R^T`` (see :func:`skframe.compute.streaming.product_precision`).
    """

    in_memory = False

    def __init__(self, kernel, X, Y, X_sub, proj, options=None, products=None):
        self.kernel, self.X, self.X_sub = kernel, X, X_sub
        self.Y = np.asarray(Y, dtype=np.float64)
        if self.Y.ndim == 1:
            self.Y = self.Y[:, None]
        self.proj = np.asarray(proj, dtype=np.float64)
        self.options = planned(options, self.n * X_sub.shape[0])  # the fit's engine, else from n x s'
        self.chunk_rows = plan_stream(self.n, self.r, X_sub.shape[0], X_sub.shape[1], self.d, self.options,
                                      kernel=kernel).chunk_rows
        self._engine = get_engine(self.options)
        self._products = compute_dtype(products or self.options.dtype)
        self._dtype = np.float64 if self._products == np.float64 else compute_dtype(self.options.dtype)
        self._Xs = self._engine.asarray(X_sub)
        self._P = self._engine.asarray(self.proj, self._products)

    def blocks(self, chunk_rows=None):
        engine = self._engine
        for start, Xc, Yc in iter_rows(self.X, self.Y, chunk_rows or self.chunk_rows):
            K = engine.block(self.kernel, engine.asarray(Xc), self._Xs, self._dtype)
            Z = (K if K.dtype == self._products else K.astype(self._products)) @ self._P
            yield start, np.asarray(engine.to_numpy(Z)), Yc

    def fill(self, Z, chunk_rows=None):
        """Write every row's features into ``Z`` (n x r, C-ordered), the rows of :meth:`blocks`: on the CPU each
        kernel block's product lands in its rows of Z (``matmul`` with ``out``: no block-sized array to allocate,
        fault in and copy, a tenth of the product's time at 1 000 features)."""
        engine, P = self._engine, self._P
        host = engine.xp is np
        if host:
            P = np.ascontiguousarray(P)
        for start, Xc, _ in iter_rows(self.X, self.Y, chunk_rows or self.chunk_rows):
            K = engine.block(self.kernel, engine.asarray(Xc), self._Xs, self._dtype)
            K = K if K.dtype == self._products else K.astype(self._products)
            out = Z[start:start + K.shape[0]]
            if host and out.dtype == K.dtype == P.dtype:
                np.matmul(np.ascontiguousarray(K), P, out=out)
            else:
                out[...] = np.asarray(engine.to_numpy(K @ self._P))

    def fill_kernel(self, L, chunk_rows=None, dtype=None):
        """Write every row's kernel block (rows x s', the left factor of ``Z = K proj``) into ``L`` (n x s'),
        computed in ``dtype`` (default: the kernel blocks' precision)."""
        engine = self._engine
        for start, Xc, _ in iter_rows(self.X, self.Y, chunk_rows or self.chunk_rows):
            K = engine.block(self.kernel, engine.asarray(Xc), self._Xs, dtype or self._dtype)
            L[start:start + K.shape[0]] = engine.to_numpy(K)

    def loss_pass(self, V, C, loss, gradient=True):
        """``(sum_i l(f_i, y_i), Z^T G C^T)`` at ``F = Z V C`` by one pass, without forming Z.

        ``Z V`` is computed as ``K (proj V)`` and ``Z^T G`` as ``proj^T (K^T G)``: per chunk two
        products of the (rows x s') kernel block with a few columns, instead of its
        (rows x s') x (s' x r) product with ``proj`` (1 000 times fewer flops at s' = r = 1 000;
        each pass then costs about one evaluation of the kernel block). ``G`` is the loss
        gradient at F. The kernel block is computed in ``options.dtype`` and the two products
        run in float64 (``proj V`` combines large entries of both signs when ``R K R^T`` is
        ill-conditioned). On a GPU engine the kernel block and both products stay on the device;
        only the rows x d predictions and loss gradients cross to the host, where the loss is
        evaluated.
        """
        engine = self._engine
        dtype = compute_dtype(self.options.dtype)
        PV = engine.asarray(self.proj @ np.asarray(V, dtype=np.float64))  # (s', k), on the engine's device
        total = 0.0
        acc = engine.xp.zeros(PV.shape) if gradient else None
        for _, Xc, Yc in iter_rows(self.X, self.Y, self.chunk_rows):
            K = engine.block(self.kernel, engine.asarray(Xc), self._Xs, dtype)
            part, KG = block_loss_sums(K, PV, C, Yc, loss, gradient)
            total += part
            if gradient:
                acc += KG
        return total, (self.proj.T @ to_numpy(acc) if gradient else None)

    def dual_pass(self, V, C, loss, lam):
        """On a GPU engine, the dual objective of the duality certificate at V without forming the features
        (the Dask problem's two passes, :func:`certificate_dual`): the kernel blocks and their products stay on
        the device, only rows x d predictions and dual variables cross. None on the CPU (the solvers' own
        certificate runs there) or for a loss without ``dual``."""
        engine = self._engine
        if engine.xp is np or getattr(loss, "dual", None) is None:
            return None
        PV = engine.asarray(self.proj @ np.asarray(V, dtype=np.float64))
        C = np.asarray(C, dtype=np.float64)
        dtype = compute_dtype(self.options.dtype)

        def sweep(scale):
            parts = [block_dual_sums(engine.block(self.kernel, engine.asarray(Xc), self._Xs, dtype), PV, C, Yc, loss,
                                     scale) for _, Xc, Yc in iter_rows(self.X, self.Y, self.chunk_rows)]
            if scale is not None:
                return sum(parts)
            lin, norm, sq = (sum(p[i] for p in parts) for i in range(3))
            return lin, norm, sq, self.proj.T @ to_numpy(sum(p[3] for p in parts))

        return certificate_dual(sweep, loss.dual, lam, self.n)

    def gram(self):
        """``(Z^T Z, Z^T Y)`` in float64 (NumPy) by one pass: syrk per block, with the fit's engine (on the GPU
        for ``backend="cupy"``, where only the r x r and r x d sums come back to the host)."""
        engine = self._engine
        xp = engine.xp
        A = engine.zeros((self.r, self.r), order="F")
        B = xp.zeros((self.r, self.d))
        for _, Xc, Yc in iter_rows(self.X, self.Y, self.chunk_rows):
            K = engine.block(self.kernel, engine.asarray(Xc), self._Xs, self._dtype)
            Z = (K if K.dtype == self._products else K.astype(self._products)) @ self._P
            engine.syrk_add(A, Z)
            B += (Z.T @ xp.asarray(np.asarray(Yc), dtype=Z.dtype)).astype(np.float64)
        A = np.triu(np.asarray(to_numpy(A), dtype=np.float64))
        return A + np.triu(A, 1).T, np.asarray(to_numpy(B), dtype=np.float64)


def block_loss_sums(K, PV, C, Y, loss, gradient=True):
    """``(sum_i l(f_i, y_i), K^T G C^T)`` of one kernel block K at ``F = K PV C`` (``PV = proj V``).

    The per-block step of a pass that never forms the features ``Z = K proj``
    (:meth:`StreamedFeatureProblem.loss_pass`, the Dask partitions): float32 blocks are
    multiplied in float64. ``G`` is the loss gradient at F; the second item is None without
    ``gradient``. The two products with K run in the namespace of K and PV (on the device for
    CuPy arrays); the loss sees the rows x d predictions on the host (NumPy ``Y``), and the
    gradient term comes back in K's namespace.
    """
    xp = get_array_module(K)
    K = K if K.dtype == np.float64 else K.astype(np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    Y = Y[:, None] if Y.ndim == 1 else Y
    F = to_numpy(K @ PV) @ C
    total = float(np.sum(loss.value(F, Y)))
    if not gradient:
        return total, None
    return total, K.T @ xp.asarray(np.asarray(loss.gradient(F, Y), dtype=np.float64) @ C.T)


#: bytes of one kernel block computed to fill a kept block (:func:`make_feature_problem`): each is a new array, and a
#: few MB of them are reused by the allocator, while blocks of tens of MB are new pages every time, which NumPy asks
#: to be huge pages (their first writes stalled on memory compaction)
FILL_BYTES = 2 << 20
#: kept features are kept as two factors (``factored=True``) where the left one is at most this many times wider
#: than the features (the sketch's rank r below its m points or s' columns)
FACTORED_WIDTH = 1.05


def make_feature_problem(kernel, X, Y, X_sub, proj, options=None, *, products=None, factors=None, factored=False):
    """The problem of an iterative loss within the budget, and how its features are held.

    Kept features are stored in ``options.dtype``; ``products`` is passed to
    :class:`StreamedFeatureProblem`. On a GPU engine the features are recomputed on the device
    at each pass (one kernel block per chunk, the passes' products there too) rather than kept
    on the host. ``factors``: ``(R, UD)`` with ``proj = R.mix^T UD`` for a sparse mix (the
    p-sparsified sketches); float64 kept features are then built as ``(K R^T) UD``, the sparse product
    first (``rows x nnz(mix) + rows x m x r`` multiply-adds per chunk instead of ``rows x s' x r``: at
    n = 10^6, m = 1 000, s' = 20 000, about 20 times fewer).

    ``factored=True`` (a reader of the two factors apart: the Newton solver) keeps the features as ``Z = L P``
    (:class:`skframe.contract.problems.FactoredArrayProblem`) where the left factor is at most
    :data:`FACTORED_WIDTH` times wider than Z: the kernel block itself (``P = proj``), or ``K R^T`` for a sparse mix
    (``P = UD``). Forming Z, an ``n s r`` product, is then skipped: at n = 10^6, m = r = 1 000 it was 23 s of the
    37 s that kept features cost.

    Returns
    -------
    problem : ArrayProblem, FactoredArrayProblem or StreamedFeatureProblem
    representation : {"in-memory", "streamed"}
    """
    options = options or DEFAULT_OPTIONS
    streamed = StreamedFeatureProblem(kernel, X, Y, X_sub, proj, options, products=products)
    if streamed._engine.xp is not np:  # a GPU recomputes a block faster than the host multiplies kept features
        return streamed, "streamed"
    plan = plan_stream(streamed.n, streamed.r, X_sub.shape[0], X_sub.shape[1], streamed.d, options, kernel=kernel)
    item = compute_dtype(options).itemsize
    rows = kept_features_rows(streamed.n, streamed.r, item, budget_of(options), plan)
    if rows is None:
        return streamed, "streamed"
    sparse = factors is not None and sp.issparse(factors[0].mix)
    width = (factors[0].mix.shape[0] if sparse else X_sub.shape[0]) if factored else None
    if factored and width <= FACTORED_WIDTH * streamed.r:  # in the precision of kept_block_dtype
        kept = compute_dtype(kept_block_dtype(options)[0])
        check_allocation(streamed.n * width * kept.itemsize, f"the {streamed.n} x {width} kept kernel block",
                         options)
        L = empty_mapped((streamed.n, width), kept)  # (filled once, read by every pass: see empty_mapped)
        step = max(1, min(rows, FILL_BYTES // (kept.itemsize * max(X_sub.shape[0], width, 1))))  # (FILL_BYTES)
        if sparse:  # K R^T computed in the block's precision, into L
            opts = streamed.options.replace(dtype=kept.name)
            for start, Xc, _ in iter_rows(X, streamed.Y, step):
                kernel_times_mix(kernel, Xc, X_sub, factors[0], opts, out=L[start:start + n_items(Xc)])
            P = np.ascontiguousarray(factors[1], dtype=np.float64)
        else:
            streamed.fill_kernel(L, step, dtype=kept)
            P = np.ascontiguousarray(to_numpy(proj), dtype=np.float64)
        return FactoredArrayProblem(L, P, streamed.Y), "in-memory"
    nbytes = streamed.n * streamed.r * item
    check_allocation(nbytes, f"the {streamed.n} x {streamed.r} feature matrix", options)
    Z = empty_mapped((streamed.n, streamed.r), compute_dtype(options.dtype))
    if sparse and Z.dtype == np.float64:
        R, UD = factors[0], np.ascontiguousarray(factors[1], dtype=np.float64)
        for start, Xc, _ in iter_rows(X, streamed.Y, rows):
            KR = kernel_times_mix(kernel, Xc, X_sub, R, streamed.options)
            np.matmul(np.asarray(KR, dtype=np.float64), UD, out=Z[start:start + KR.shape[0]])
        return ArrayProblem(Z, streamed.Y), "in-memory"
    streamed.fill(Z, rows)
    return ArrayProblem(Z, streamed.Y), "in-memory"


def block_dual_sums(K, PV, C, Y, loss, scale=None):
    """One block's share of the duality certificate at ``F = K PV C`` (``PV = proj V``), K and PV in one namespace.

    The dual point of each row is ``a_i = project(-grad l(f_i, y_i))``. Without ``scale``:
    ``(sum <a_i, y_i>, sum N(a_i), sum ||a_i||^2, K^T A C^T)`` (the last in K's namespace); with it:
    ``sum h(scale a_i, y_i)``. The loss sees the rows x d predictions on the host.
    """
    xp = get_array_module(K)
    dual = loss.dual
    K = K if K.dtype == np.float64 else K.astype(np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    Y = Y[:, None] if Y.ndim == 1 else Y
    A = dual.project(-np.asarray(loss.gradient(to_numpy(K @ PV) @ C, Y), dtype=np.float64), Y)
    if scale is not None:
        return float(np.sum(dual.values(scale * A, Y)))
    norm = float(np.sum(np.sqrt(np.sum(A * A, axis=1)) if dual.structure == "norm" else np.abs(A)))
    return float(np.sum(A * Y)), norm, float(np.sum(A * A)), K.T @ xp.asarray(A @ C.T)


def certificate_dual(sweep, dual, lam, n):
    """The dual objective ``D`` of the certificate from two passes: ``sweep(None) -> (lin, norm, sq, Z^T A C^T)``
    sums, then ``sweep(s) -> sum h(s a_i, y_i)`` at the ``s`` in [0, 1] that maximises ``D(s A)``."""
    lin_sum, norm_sum, sq_sum, KA = sweep(None)
    VA = KA / (float(lam) * n)  # V(A) = Z^T A C^T / (lam n)
    lin = lin_sum / n - dual.l1 * norm_sum / n
    quad = 0.5 * dual.quad * sq_sum / n + 0.5 * float(lam) * float(np.sum(VA * VA))
    s = 1.0 if quad <= 0 else float(np.clip(lin / (2.0 * quad), 0.0, 1.0))
    return sweep(s) / n - 0.5 * float(lam) * float(np.sum((s * VA) ** 2))
