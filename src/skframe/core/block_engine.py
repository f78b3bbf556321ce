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
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.linalg import blas

from skframe.contract.collections import n_items
from skframe.contract.protocols import kernel_block, takes_engine
from skframe.contract.tags import get_tags
from skframe.core.engine import engine_module
from skframe.core.sketch_matrix import diagonal_of_mix
from skframe.core.threads import run_row_ranges, threads_for

__all__ = ["BlockEngine", "times_mix", "native_block"]

#: Kernel entries of one tile of :meth:`BlockEngine.kernel_times_mix` on the plain loops (2 MB of float64, kept in
#: the cache between the kernel's passes and the sparse product)
_TILE_ENTRIES = 1 << 18


def times_mix(block, mix, out=None, options=None, engine=None):
    """``block @ mix.T`` for a dense block and a dense or sparse mix (written into ``out`` when given).

    A sparse mix goes through the loops ``engine`` or ``options.engine`` (a compiled row-wise
    gather for numba, see :mod:`skframe.core.engine`; when neither names one, the size of the
    block decides) or, in plain NumPy, through SciPy's ``mix @ block.T``.
    """
    dtype = block.dtype if out is None else out.dtype
    if sp.issparse(mix):
        fast = engine_module("skframe.core.sketching", options, engine=engine, work=block.size)
        if fast is not None and hasattr(fast, "dense_times_csr_t"):
            direct = out is not None and out.flags.c_contiguous and out.dtype == block.dtype
            res = out if direct else np.empty((block.shape[0], mix.shape[0]), dtype=block.dtype)
            fast.dense_times_csr_t(np.ascontiguousarray(block), mix, res)
        else:
            res = np.asarray(mix @ block.T).T
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

    def chunk_block(self, kernel, X_rows, X_sub, mix_t, dtype):
        """``B = k(X_rows, X_sub) S_mix^T`` of one chunk of a streamed fit (``mix_t`` from :meth:`prepare_mix`)."""
        return self.times_mix(self.block(kernel, self.asarray(X_rows), X_sub, dtype), mix_t)

    def kernel_times_mix(self, kernel, X_rows, X_sub, mix, diag, dtype, out=None):
        """One chunk of ``K R^T``: ``k(X_rows, X_sub) @ S_mix^T`` (rows x m) in ``dtype``, into ``out`` if given.

        ``diag`` is the diagonal of a diagonal mix (sub-sampling: the columns are scaled in place), else None.
        On the plain loops a sparse mix is applied tile by tile (:meth:`_tiled_product`), so the (rows x s')
        block is never held.
        """
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
