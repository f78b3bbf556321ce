"""The GPU engine of the streamed accumulation (CuPy), written against an array namespace.

:class:`ArrayEngine` implements the methods of the block engine, :class:`skframe.core.block_engine.BlockEngine`
(kernel block, sketch product, ``syrk`` accumulation, the sketch's Gram matrix ``R K R^T``) with
the operations of an array namespace ``xp``: CuPy on a GPU, or NumPy (or a test's fake
namespace), which is how the tests run this very code on machines without a GPU. Everything
stays on the device: the kernel blocks, their products with the sketch, the m x m and m x d
accumulators and ``R K R^T``; the streamed solve (:func:`skframe.compute.streaming.ridge_from_sums`)
then factors them there too, and only the weights come back to the host.

The kernel computes its own blocks: the engine calls it with device arrays when its tags list
``"cupy"`` in ``backends`` (the built-in Gaussian, Laplacian, linear and polynomial kernels,
whose formulas are written against the namespace of their input), and refuses any other
kernel on the GPU with an error saying so (it keeps working with ``backend="numpy"``). No
kernel is recognised by its name.

:class:`CupyEngine` is the engine of ``backend="cupy"``; it imports CuPy (the ``gpu`` extra)
only when asked for, and is built once per process (:func:`cupy_engine`), as are the compiled
kernels it runs (the kernels' fused Gaussian is created once per process).

The first fit of a process: CuPy compiles each distinct elementwise or reduction kernel on its
first use (NVRTC) and keeps it for the process and its binary on disk (``CUPY_CACHE_DIR``, by
default ``~/.cupy/kernel_cache``); a later process loads the binaries instead. What a first fit
then adds to a repeat is the CUDA context, the cuBLAS and cuSOLVER handles and those loads, which
is what can stay within about a second; an empty cache (a new machine, a cache folder on a
temporary disk) makes the first fit compile everything, several seconds more. Hence: keep the
cache on a persistent disk, or run one small fit once after installing. The ``fresh`` section of
``benchmarks/bench_gpu.py`` measures the first fit with an empty and with a warm cache.
"""

from __future__ import annotations

import functools

import numpy as np
import scipy.sparse as sp

from skframe.compute.backend import resolve_backend, to_numpy
from skframe.contract.tags import get_tags
from skframe.core.sketching import diagonal_of_mix
from skframe.exceptions import InvalidParameterError

__all__ = ["ArrayEngine", "CupyEngine", "cupy_engine", "runs_on_device"]


#: the GPU's ``B^T B`` (:meth:`ArrayEngine.syrk_add`) is taken in column bands from m = GPU_BANDS_FROM on, bands
#: of ``max(GPU_BAND_WIDTH, m // 10)`` columns: on an H100 one chunk took 27 ms in bands of 500 and 31 ms by one
#: syrk at m = 2 000, 80 ms in bands of 1 000 and 104 ms by syrk at m = 10 000 (``benchmarks/out/gpu_profile.json``)
GPU_BANDS_FROM, GPU_BAND_WIDTH = 2000, 500


def runs_on_device(kernel):
    """True when the kernel computes blocks of device arrays itself (its tags list ``"cupy"``)."""
    return "cupy" in get_tags(kernel, "kernel").backends


class ArrayEngine:
    """Engine methods written once against the array namespace ``xp`` (CuPy, NumPy, or a test's).

    Parameters
    ----------
    xp : module
        ``cupy``, ``numpy`` or another namespace with NumPy's functions.
    """

    name = "array"
    #: the narrowest band of columns of :meth:`syrk_add` (0: one syrk) and the m from which bands are used
    #: (default twice the width); CuPy's engine uses :data:`GPU_BAND_WIDTH` and :data:`GPU_BANDS_FROM`
    band_width, bands_from = 0, None

    def __init__(self, xp, band_width=None, bands_from=None):
        self.xp = xp
        if band_width is not None:
            self.band_width = int(band_width)
        if bands_from is not None:
            self.bands_from = int(bands_from)

    def _band_width(self, m):
        """Columns per band of ``B^T B`` for m columns, or 0 for one syrk."""
        if not self.band_width or m < max(self.bands_from or 0, 2 * self.band_width):
            return 0
        return max(self.band_width, m // 10)

    def asarray(self, A, dtype=np.float64):
        if sp.issparse(A):
            A = A.toarray()  # device kernels take dense rows; a chunk at a time
        return self.xp.ascontiguousarray(self.xp.asarray(A, dtype=dtype))

    def to_numpy(self, A):
        return to_numpy(A)

    def block(self, kernel, X, Y, dtype):
        """``k(X, Y)`` in ``dtype``, computed by the kernel on the engine's arrays (on the device for CuPy)."""
        xp = self.xp
        X = xp.asarray(X, dtype=dtype)
        Y = xp.asarray(Y, dtype=dtype)
        tags = get_tags(kernel, "kernel")
        if xp is not np and "cupy" not in tags.backends:
            raise InvalidParameterError(
                f"kernel {type(kernel).__name__} computes on the backends {tags.backends} only, not on a "
                "GPU; use backend='numpy', or a kernel that lists 'cupy' in its backends (it is then called "
                "with device arrays)"
            )
        native = np.dtype(dtype).name in tags.dtypes and np.dtype(dtype) != np.float64
        K = kernel(X, Y, dtype=dtype) if native else kernel(X, Y)
        return K if K.dtype == np.dtype(dtype) else K.astype(dtype)

    def prepare_mix(self, mix, dtype):
        if diagonal_of_mix(mix) is not None:
            return None
        dense = mix.toarray() if sp.issparse(mix) else np.asarray(mix)
        return self.xp.asarray(np.ascontiguousarray(dense.T), dtype=dtype)

    def times_mix(self, block, mix_t):
        return block if mix_t is None else block @ mix_t

    def _prepared_product(self, kernel, X_rows, X_sub, mix_t, dtype):
        """``B = k(X_rows, X_sub) S_mix^T`` of one chunk, Fortran-ordered where :meth:`syrk_add` takes column
        bands (``band_width``): computed as the transpose of ``S_mix k(X_sub, X_rows)`` (kernels are symmetric),
        so that every band of columns, and every band to the last column, is a contiguous matrix for cuBLAS."""
        if not self._band_width(mix_t.shape[1] if mix_t is not None else X_sub.shape[0]):
            return self.times_mix(self.block(kernel, self.asarray(X_rows, dtype), X_sub, dtype), mix_t)
        Bt = self.block(kernel, X_sub, self.asarray(X_rows, dtype), dtype)  # s' x rows
        if mix_t is not None:
            Bt = mix_t.T @ Bt  # m x rows
        return Bt.T

    def kernel_times_mix(self, kernel, X_rows, X_sub, mix, diag, dtype, out=None, *, prepared=False):
        """One chunk of ``K R^T``, ``k(X_rows, X_sub) @ S_mix^T`` in ``dtype``, on the engine's arrays (the
        method of :class:`skframe.core.block_engine.BlockEngine`; ``prepared=True``: :meth:`_prepared_product`)."""
        if prepared:
            return self._prepared_product(kernel, X_rows, X_sub, mix, dtype)
        block = self.block(kernel, self.asarray(X_rows, dtype), X_sub, dtype)
        if diag is not None:
            res = block * self.xp.asarray(np.asarray(diag), dtype=dtype)[None, :]
        else:
            res = self.times_mix(block, self.prepare_mix(mix, dtype))
        if out is None:
            return res
        out[...] = self.to_numpy(res) if isinstance(out, np.ndarray) else res
        return out

    def sketch_gram(self, kernel, X_sub, mix):
        """``R K R^T = S_mix k(X_sub, X_sub) S_mix^T`` (m x m, float64) on the device, symmetrised.

        The same numbers as :func:`skframe.compute.streaming.sketch_gram` on the host; the
        eigendecomposition that follows (:func:`skframe.core.linalg.sketch_spectrum`) runs there too.
        """
        xp = self.xp
        Xs = xp.asarray(X_sub, dtype=np.float64)
        K = self.block(kernel, Xs, Xs, np.float64)
        diag = diagonal_of_mix(mix)
        if diag is not None:
            d = xp.asarray(np.asarray(diag, dtype=np.float64))
            G = K * d[:, None]
            G *= d[None, :]
        else:
            M = self.prepare_mix(mix, np.float64)  # S_mix^T, dense on the device (m x s' entries)
            G = M.T @ (K @ M)
        G += G.T
        G *= 0.5
        return G

    def syrk_add(self, C, B):
        """``C += B^T B`` on (at least) the upper triangle; C float64.

        A Fortran-ordered B of at least two ``band_width`` columns is taken in bands of columns: band ``[a, b)``
        adds ``B[:, a:b]^T B[:, a:]``, one gemm of two contiguous operands, skipping the blocks below the
        diagonal (about ``(k + 1) / 2k`` of a full product for k bands). On an H100 cuBLAS's dsyrk ran at 21-34
        TFLOP/s (and copied a C-ordered B first), its dgemm at 49-54 (``benchmarks/out/gpu_profile.json``).
        Otherwise one cuBLAS syrk (on a GPU) or one product.
        """
        m = B.shape[1]
        width = self._band_width(m)
        if width and B.flags.f_contiguous:
            for a, b in _bands(m, width):
                part = B[:, a:b].T @ B[:, a:]
                C[a:b, a:] += part if part.dtype == np.float64 else part.astype(np.float64)
            return C
        prod = None
        if self.xp is not np:
            try:
                from cupy.cublas import syrk  # lazy: CuPy is optional (the gpu extra)

                # the operand cuBLAS reads without a copy: B itself when Fortran-ordered, else B^T
                prod = syrk("T", B, lower=False) if B.flags.f_contiguous else syrk("N", B.T, lower=False)
            except (ImportError, AttributeError, TypeError):
                prod = None
        if prod is None:
            prod = B.T @ B
        C += prod if prod.dtype == np.float64 else prod.astype(np.float64)
        return C

    def zeros(self, shape, order="C"):
        return self.xp.zeros(shape, order=order)


class CupyEngine(ArrayEngine):
    """``backend="cupy"``: the :class:`ArrayEngine` on CuPy (use :func:`cupy_engine`: one per process).

    Raises
    ------
    DependencyError
        When CuPy is not installed (``pip install "skframe[gpu]"``) or no GPU is visible.
    """

    name = "cupy"

    def __init__(self, cupy=None):
        super().__init__(cupy if cupy is not None else resolve_backend("cupy"), band_width=GPU_BAND_WIDTH,
                         bands_from=GPU_BANDS_FROM)


def _bands(m, width):
    """``[(a, b), ...]``: about ``m / width`` bands of columns, of near-equal widths, covering ``range(m)``."""
    k = max(1, round(m / width))
    edges = [round(i * m / k) for i in range(k + 1)]
    return list(zip(edges[:-1], edges[1:]))


def cupy_engine():
    """The process's :class:`CupyEngine`: CuPy and the GPU checked on every call (a clear error when
    either is missing), the engine built once and kept."""
    return _engine_of(resolve_backend("cupy"))


@functools.cache
def _engine_of(cupy):
    return CupyEngine(cupy)
