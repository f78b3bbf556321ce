"""Chunk engines of the streamed accumulation: how one chunk becomes its products.

:class:`NumpyEngine` runs on the CPU (kernel blocks in the engine of the inner loops it was given,
BLAS ``syrk``/``gemm``); :mod:`skframe.compute._engine_cupy` provides the same methods on a GPU.
:func:`get_engine` chooses one from ``options.backend``, the only place where the backend is looked
at, and hands the CPU one ``options.engine`` (the execution plan's numba or NumPy loops).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.linalg import blas

from skframe.compute._engine_cupy import cupy_engine
from skframe.contract.protocols import kernel_block
from skframe.core.sketching import _times_mixT, diagonal_of_mix
from skframe.exceptions import InvalidParameterError
from skframe.options import DEFAULT_OPTIONS

__all__ = ["NumpyEngine", "get_engine"]


def _mix_diagonal(mix):
    return diagonal_of_mix(mix)


class NumpyEngine:
    """Chunk products on the CPU: compiled kernel blocks, BLAS ``syrk``/``gemm``.

    An engine turns one chunk into its contributions; :mod:`skframe.compute._engine_cupy` provides the
    same methods on a GPU. Accumulators returned by an engine live in its namespace ``xp``.

    Parameters
    ----------
    loops : {"numpy", "numba"} or None
        Engine of the inner loops of the kernel blocks and sparse products (the execution plan's);
        None lets each block choose from its size.
    """

    name = "numpy"
    xp = np

    def __init__(self, loops=None):
        self.loops = loops

    def asarray(self, A, dtype=np.float64):
        if sp.issparse(A):
            return A
        return np.ascontiguousarray(A, dtype=dtype)

    def to_numpy(self, A):
        return A

    def block(self, kernel, X, Y, dtype):
        """``k(X, Y)`` as a dense array of ``dtype``."""
        return kernel_block(kernel, X, Y, dtype=dtype, engine=self.loops)

    def prepare_mix(self, mix, dtype):
        """``S_mix^T`` ready for :meth:`times_mix_t`: None for a diagonal mix (applied at the end)."""
        if _mix_diagonal(mix) is not None:
            return None
        if sp.issparse(mix):
            return sp.csr_matrix(mix.T, dtype=dtype)
        return np.asarray(mix.T, dtype=dtype)

    def times_mix_t(self, block, mix_t):
        """``block @ S_mix^T``."""
        if mix_t is None:
            return block
        if not sp.issparse(mix_t):
            return block @ mix_t
        if block.dtype == np.float64:  # compiled row-wise gather of the sketching module
            return _times_mixT(block, mix_t.T.tocsr(), engine=self.loops)
        return np.asarray(mix_t.T @ block.T).T  # sparse @ dense, float32 kept

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

    def zeros(self, shape, order="C"):
        return np.zeros(shape, order=order)


_NUMPY = NumpyEngine()


def get_engine(options=None):
    """The engine of ``options.backend``: NumPy (with the loops of ``options.engine``), or CuPy (imported only then)."""
    options = options or DEFAULT_OPTIONS
    backend = str(getattr(options, "backend", "numpy") or "numpy").lower()
    if backend == "numpy":
        loops = getattr(options, "engine", None)
        return _NUMPY if loops is None else NumpyEngine(loops)
    if backend == "cupy":
        return cupy_engine()  # one per process: its compiled kernels are reused by every fit
    raise InvalidParameterError(f"backend={backend!r} is not known; use 'numpy' or 'cupy'")
