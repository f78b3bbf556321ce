"""The block engine: one chunk of rows becomes ``k(X_rows, X_sub) · S_mix^T`` and its sums.

Words. The **engine** is this object: it turns one chunk of rows into its kernel block, the block's product
with the sketch's mixing matrix and the products a fit accumulates (``B^T B``). The **loops** are how its inner
loops run: the plain NumPy formulas or their compiled numba versions (private siblings such as
:mod:`skframe.core._sketching_numba`, found by :func:`skframe.core.engine.engine_module`), chosen once by the
fit's plan (:func:`skframe.core.engine.engine_rule`).

:class:`BlockEngine` runs on the CPU; :class:`skframe.compute._engine_cupy.ArrayEngine` has the same methods
on any array namespace (CuPy on a GPU, NumPy in its tests). Every path uses one of them for its chunk products:
the in-memory fit (:func:`skframe.core.sketching.sketched_gram_products`, through :meth:`BlockEngine.kernel_times_mix`),
the streamed, Dask and GPU fits (:func:`skframe.compute.streaming.chunk_sums`, through :meth:`~BlockEngine.block`,
:meth:`~BlockEngine.times_mix` and :meth:`~BlockEngine.syrk_add`), and the partition passes of a Dask fit.
Every product ``k(X, Y) W`` of a prediction runs through :meth:`BlockEngine.times` (:func:`engine_matvec`, in the
chunks of :func:`rows_within_budget`), and ``R K R^T`` of a streamed fit through :meth:`BlockEngine.sketch_gram`.
A kernel's own ``matvec`` is an optional override (:func:`own_matvec`): a plugin may offer a fused or device
product; the built-in kernels offer none.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.linalg import blas

from skframe.contract.collections import chunks, is_collection, n_items
from skframe.contract.protocols import Kernel, kernel_block, takes_engine
from skframe.contract.tags import get_tags
from skframe.core.engine import engine_module, planned
from skframe.core.sketch_matrix import diagonal_of_mix
from skframe.core.threads import run_row_ranges, threads_for
from skframe.options import DEFAULT_OPTIONS, compute_dtype

__all__ = ["BlockEngine", "times_mix", "native_block", "rows_within_budget", "row_slice", "engine_matvec",
           "own_matvec", "ENGINE_PRODUCT"]

#: attribute a ``matvec`` method carries (True) when it is the block engine's own product under the kernel's name
#: (the built-in kernels' ``matvec``): :func:`own_matvec` does not count it as an override
ENGINE_PRODUCT = "block_engine_product"

#: kernel entries of one block of :meth:`BlockEngine.sketch_gram` (64 MB of float64)
_GRAM_ENTRIES = 8_000_000

#: Kernel entries of one tile of :meth:`BlockEngine.kernel_times_mix` on the plain loops (2 MB of float64, kept in
#: the cache between the kernel's passes and the sparse product)
_TILE_ENTRIES = 1 << 18


def times_mix(block, mix, out=None, options=None, engine=None):
    """``block @ mix.T`` for a dense block and a dense or sparse mix (written into ``out`` when given).

    A sparse mix goes through the loops ``engine`` or ``options.engine`` (a compiled row-wise
    gather for numba, see :mod:`skframe.core.engine`; when neither names one, the size of the
    block decides) or, in plain NumPy, through SciPy's ``mix @ block.T`` taken in tiles of rows of the block
    (SciPy copies the transposed operand: a tile of :data:`_TILE_ENTRIES` entries, never the whole block; the
    same numbers as one product).
    """
    dtype = block.dtype if out is None else out.dtype
    if sp.issparse(mix):
        fast = engine_module("skframe.core.sketching", options, engine=engine, work=block.size)
        direct = out is not None and out.flags.c_contiguous and out.dtype == block.dtype
        res = out if direct else np.empty((block.shape[0], mix.shape[0]), dtype=block.dtype)
        if fast is not None and hasattr(fast, "dense_times_csr_t"):
            fast.dense_times_csr_t(np.ascontiguousarray(block), mix, res)
        else:
            tile = max(1, _TILE_ENTRIES // max(block.shape[1], 1))
            for t0 in range(0, block.shape[0], tile):
                res[t0:t0 + tile] = (mix @ block[t0:t0 + tile].T).T
    else:
        res = block @ mix.T
    if out is None:
        return res if res.dtype == dtype else res.astype(dtype)
    if res is not out:
        out[...] = res
    return out


def native_block(kernel, X, Y, dtype, loops=None):
    """The block in ``dtype``: computed so by kernels listing it in ``dtypes``, else rounded once.

    ``loops`` is passed to kernels that take an ``engine`` (:func:`skframe.contract.protocols.takes_engine`).
    """
    if dtype != np.float64 and dtype.name in get_tags(kernel, "kernel").dtypes:
        extra = {"engine": loops} if loops is not None and takes_engine(kernel) else {}
        try:
            K = kernel(X, Y, dtype=dtype, **extra)
        except TypeError:  # e.g. a subclass whose __call__ does not take dtype
            K = None
        if getattr(K, "dtype", None) == dtype and K.shape == (n_items(X), n_items(Y)):
            return K
    return kernel_block(kernel, X, Y, dtype=dtype, engine=loops)


def rows_within_budget(kernel, n_cols, options=None):
    """Rows per kernel block ``k(X[rows], Y)`` (``len(Y) = n_cols``) that fit ``options.block_bytes``.

    ``options.chunk_rows`` wins when set. Otherwise the kernel's own estimate
    ``kernel.block_bytes(n_rows, n_cols, itemsize)`` is used when it has one (it counts
    the kernel's temporaries), else the block itself, in the compute precision.

    Parameters
    ----------
    kernel : kernel object
    n_cols : int
        Number of columns of each block.
    options : ComputeOptions, optional

    Returns
    -------
    int
        At least 1.
    """
    options = options or DEFAULT_OPTIONS
    itemsize = compute_dtype(options).itemsize
    estimate = getattr(kernel, "block_bytes", None)
    if options.chunk_rows or estimate is None:
        return options.rows_per_block(n_cols, itemsize)
    one = int(estimate(1, n_cols, itemsize))
    per_row = max(int(estimate(2, n_cols, itemsize)) - one, 1)
    return int(max(1, (options.block_bytes - (one - per_row)) // per_row))


def row_slice(X, start, stop):
    """Rows ``start:stop`` of an array or sparse matrix (a view where it can be), or of an input collection."""
    if is_collection(X):
        return X.take(np.arange(start, stop))
    return X[start:stop]


def own_matvec(kernel):
    """The kernel's own ``matvec`` (bound) when its class offers one as an override, else None.

    The protocol's default (:meth:`skframe.contract.protocols.Kernel.matvec`) and a method marked with
    :data:`ENGINE_PRODUCT` (the built-in kernels': the engine's product itself) are not overrides.
    """
    method = getattr(type(kernel), "matvec", None)
    if method is None or method is Kernel.matvec or getattr(method, ENGINE_PRODUCT, False):
        return None
    return getattr(kernel, "matvec", None)


def engine_matvec(kernel, X, Y, W, options=None):
    """``k(X, Y) @ W`` by the block engine, one kernel block per chunk of rows of X.

    The chunks are :func:`rows_within_budget`'s (``options.chunk_rows``, else the kernel's ``block_bytes``
    estimate within ``options.block_bytes``); the blocks are in the compute precision (``options.dtype``) and
    the result has the type of ``W`` and that precision combined; the loops are ``options.engine``'s (without
    one, chosen once from ``len(X) x len(Y)`` kernel entries). The kernel's own ``matvec`` is not consulted:
    :func:`skframe.core.feature_map.kernel_times` asks for it first.

    Parameters
    ----------
    kernel : kernel object
        Used as given (prepared on the training data).
    X, Y : arrays, sparse matrices or InputCollections
    W : ndarray of shape (len(Y),) or (len(Y), k)
    options : ComputeOptions, optional

    Returns
    -------
    ndarray of shape (len(X),) or (len(X), k)
    """
    options = planned(options, n_items(X) * n_items(Y), sparse=sp.issparse(X))
    return BlockEngine(options.engine).times(kernel, X, Y, np.asarray(W), rows_within_budget(kernel, n_items(Y),
                                                                                              options),
                                             compute_dtype(options))


class BlockEngine:
    """The block engine on the CPU: kernel blocks and their products with ``S_mix^T``, BLAS ``syrk``/``gemm``.

    Accumulators it returns live in its namespace ``xp`` (NumPy).

    Parameters
    ----------
    loops : {"numpy", "numba"} or None
        How the inner loops of the kernel blocks and sparse products run (the execution plan's choice);
        None lets each block choose from its size (:func:`skframe.core.engine.engine_rule`).
    """

    name = "numpy"
    xp = np

    def __init__(self, loops=None):
        self.loops = loops

    # ------------------------------------------------------------------ arrays
    def asarray(self, A, dtype=np.float64):
        if sp.issparse(A):
            return A
        return np.ascontiguousarray(A, dtype=dtype)

    def to_numpy(self, A):
        return A

    def zeros(self, shape, order="C"):
        return np.zeros(shape, order=order)

    # ------------------------------------------------------------------ one chunk
    def block(self, kernel, X, Y, dtype):
        """``k(X, Y)`` as a dense array of ``dtype`` (the kernel's float64 values, rounded once)."""
        return kernel_block(kernel, X, Y, dtype=dtype, engine=self.loops)

    def prepare_mix(self, mix, dtype):
        """``S_mix^T`` ready for :meth:`times_mix`: None for a diagonal mix (applied to the sums at the end)."""
        if diagonal_of_mix(mix) is not None:
            return None
        if sp.issparse(mix):
            return sp.csr_matrix(mix.T, dtype=dtype)
        return np.asarray(mix.T, dtype=dtype)

    def times_mix(self, block, mix_t):
        """``block @ S_mix^T`` for a mix prepared by :meth:`prepare_mix`."""
        if mix_t is None:
            return block
        if not sp.issparse(mix_t):
            return block @ mix_t
        if block.dtype == np.float64:  # the compiled row-wise gather of the loops
            return times_mix(block, mix_t.T.tocsr(), engine=self.loops)
        return np.asarray(mix_t.T @ block.T).T  # sparse @ dense, float32 kept

    def kernel_times_mix(self, kernel, X_rows, X_sub, mix, diag, dtype, out=None, *, prepared=False):
        """One chunk of ``K R^T``: ``k(X_rows, X_sub) @ S_mix^T`` (rows x m) in ``dtype``, into ``out`` if given.

        ``diag`` is the diagonal of a diagonal mix (sub-sampling: the columns are scaled in place), else None.
        On the plain loops a sparse mix is applied tile by tile (:meth:`_tiled_product`), so the (rows x s')
        block is never held. ``prepared=True`` (the chunks of a streamed fit): ``mix`` is :meth:`prepare_mix`'s
        ``S_mix^T``, None for a diagonal mix, which the caller applies to its sums (``diag`` and ``out`` unused).
        """
        if prepared:
            return self.times_mix(self.block(kernel, self.asarray(X_rows), X_sub, dtype), mix)
        loops = self.loops
        if (diag is None and sp.issparse(mix) and dtype == np.float64 and type(X_rows) is np.ndarray
                and type(X_sub) is np.ndarray and loops == "numpy"):
            if get_tags(kernel, "kernel").thread_safe:
                return self._tiled_product(kernel, X_rows, X_sub, mix, out)
            # a kernel that may not be called from several threads: one call on the whole chunk, the
            # block evaluated transposed, k(X_sub, X_rows), C-ordered (s' x rows), so SciPy's
            # S_mix @ block needs no transposed copy of the large block
            res = np.asarray(mix @ native_block(kernel, X_sub, X_rows, dtype, loops)).T
            if out is None:
                return np.ascontiguousarray(res)
            out[...] = res
            return out
        block = native_block(kernel, X_rows, X_sub, dtype, loops)
        if diag is not None:  # S_mix diagonal: scale the columns in place
            block *= diag.astype(dtype, copy=False)
            if out is None:
                return block
            out[...] = block
            return out
        return times_mix(block, mix, out=out, engine=loops)

    def _tiled_product(self, kernel, X_rows, X_sub, mix, out):
        """``k(X_rows, X_sub) @ S_mix^T`` for a sparse mix on the plain loops, tile by tile.

        Each tile of rows is evaluated by the kernel and multiplied by ``S_mix^T`` at once: the few
        passes over a tile stay in the cache, and the tiles are shared among the cores
        (:func:`skframe.core.threads.run_row_ranges`). The kernel values are those of one call on all
        rows (each entry depends on its pair only).
        """
        rows, s = X_rows.shape[0], X_sub.shape[0]
        if out is None:
            out = np.empty((rows, mix.shape[0]))
        mix_t = sp.csr_matrix(mix.T, dtype=np.float64)
        tile = max(1, _TILE_ENTRIES // max(s, 1))

        def work(start, stop):
            for t0 in range(start, stop, tile):
                t1 = min(t0 + tile, stop)
                out[t0:t1] = native_block(kernel, X_rows[t0:t1], X_sub, np.float64, self.loops) @ mix_t

        run_row_ranges(work, rows, threads_for(rows * s))
        return out

    def times(self, kernel, X, Y, W, step, dtype=np.float64):
        """``k(X, Y) @ W``: one kernel block of ``dtype`` per chunk of ``step`` rows of X, times ``W``.

        The result has the type of ``W`` and ``dtype`` combined (float64 weights stay float64 with float32
        blocks).
        """
        n = n_items(X)
        out = np.empty((n,) + W.shape[1:], dtype=np.result_type(W.dtype, dtype))
        for start, stop in chunks(n, max(1, int(step))):
            out[start:stop] = native_block(kernel, row_slice(X, start, stop), Y, dtype, self.loops) @ W
        return out

    def sketch_gram(self, kernel, X_sub, mix, chunk_rows=None):
        """``R K R^T = S_mix k(X_sub, X_sub) S_mix^T`` (m x m, float64, symmetrised), in chunks of rows of
        ``X_sub``: each chunk's ``k(X_rows, X_sub) S_mix^T`` is :meth:`kernel_times_mix`'s, then ``S_mix[:, rows]``
        times it is added (the same numbers as :meth:`skframe.compute._engine_cupy.ArrayEngine.sketch_gram`).
        """
        diag = diagonal_of_mix(mix)
        s = n_items(X_sub)
        if diag is not None:
            G = self.block(kernel, X_sub, X_sub, np.float64)
            G *= diag[:, None]
            G *= diag[None, :]
        else:
            G = np.zeros((mix.shape[0], mix.shape[0]))
            mix_c = sp.csc_matrix(mix) if sp.issparse(mix) else mix
            for start, stop in chunks(s, chunk_rows or max(1, _GRAM_ENTRIES // max(s, 1))):
                T = self.kernel_times_mix(kernel, row_slice(X_sub, start, stop), X_sub, mix, None, np.float64)
                G += np.asarray(mix_c[:, start:stop] @ T)
        G += G.T
        G *= 0.5
        return G

    # ------------------------------------------------------------------ sums
    def syrk_add(self, C, B):
        """``C += B^T B`` on the upper triangle (C float64, Fortran order); B float32 or float64."""
        if B.flags.c_contiguous:  # B^T is Fortran-ordered: C += A A^T with A = B^T, no copy
            A, trans = B.T, 0
        else:
            A, trans = np.asfortranarray(B), 1
        if A.dtype == np.float64:
            blas.dsyrk(1.0, A, beta=1.0, c=C, trans=trans, lower=0, overwrite_c=1)
        else:  # float32 chunk product, added to the float64 accumulator
            C += blas.ssyrk(1.0, A, trans=trans, lower=0)
        return C
