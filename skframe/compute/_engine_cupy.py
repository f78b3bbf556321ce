"""The GPU engine of the streamed accumulation (CuPy), written against an array namespace.

:class:`ArrayEngine` implements the engine methods of :class:`skframe.compute.streaming.NumpyEngine`
(kernel block, sketch product, ``syrk`` accumulation) with the operations of an array
namespace ``xp``: CuPy on a GPU, or NumPy, which is how the tests run this very code on
machines without a GPU. Kernel blocks are computed on the device: products by cuBLAS
(``xp.matmul``), distances and exponentials fused in one CuPy elementwise kernel; nothing
is copied to the host but the m x m and m x d sums. :class:`CupyEngine` is the engine of
``backend="cupy"``; it imports CuPy (the ``gpu`` extra) only when asked for.

Kernels with a device formula here: those whose tags name one (``KernelTags.device_formula``:
Gaussian, Laplacian, linear, polynomial), computed from the kernel's ``params``. A kernel that
lists ``"cupy"`` in its ``backends`` is called with device arrays; any other kernel is
refused on the GPU with an error saying so (it keeps working with ``backend="numpy"``).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from skframe.compute.backend import resolve_backend, to_numpy
from skframe.core.sketching import diagonal_of_mix
from skframe.exceptions import InvalidParameterError
from skframe.plugin.tags import get_tags

__all__ = ["ArrayEngine", "CupyEngine", "DEVICE_FORMULAS", "device_kernel_name"]


def _sq_norms(xp, X):
    return (X * X).sum(axis=1)


def _gaussian(xp, X, Y, params, out_fn=None):
    G = X @ Y.T  # cuBLAS gemm on a GPU
    xn, yn, gamma = _sq_norms(xp, X), _sq_norms(xp, Y), G.dtype.type(params["gamma"])
    if out_fn is not None:  # fused elementwise kernel (CuPy)
        return out_fn(xn[:, None], yn[None, :], gamma, G)
    G *= -2.0
    G += xn[:, None]
    G += yn[None, :]
    xp.maximum(G, 0, out=G)
    G *= -gamma
    return xp.exp(G, out=G)


def _laplacian(xp, X, Y, params, out_fn=None):
    D = xp.zeros((X.shape[0], Y.shape[0]), dtype=X.dtype)
    for j in range(X.shape[1]):  # one n x m pass per feature, no n x m x d temporary
        D += xp.abs(X[:, j][:, None] - Y[:, j][None, :])
    D *= -X.dtype.type(params["gamma"])
    return xp.exp(D, out=D)


def _linear(xp, X, Y, params, out_fn=None):
    return X @ Y.T


def _polynomial(xp, X, Y, params, out_fn=None):
    G = X @ Y.T
    G *= G.dtype.type(params.get("gamma", 1.0))
    G += G.dtype.type(params.get("coef0", 1.0))
    return G ** int(params.get("degree", 3))


#: ``KernelTags.device_formula`` -> device formula ``f(xp, X, Y, params, fused) -> block``
DEVICE_FORMULAS = {"gaussian": _gaussian, "laplacian": _laplacian, "linear": _linear, "polynomial": _polynomial}


def device_kernel_name(kernel):
    """The device formula the kernel declares in its tags (``KernelTags.device_formula``), or None.

    The kernel says which family it is; nothing is inferred from its registered name or class.
    """
    name = get_tags(kernel, "kernel").device_formula
    return name if name in DEVICE_FORMULAS else None


class ArrayEngine:
    """Engine methods written once against the array namespace ``xp`` (CuPy or NumPy).

    Parameters
    ----------
    xp : module
        ``cupy`` or ``numpy``.
    fused_gaussian : callable, optional
        Elementwise kernel ``(xn, yn, gamma, G) -> exp(-gamma max(xn + yn - 2 G, 0))`` written into G.
    """

    name = "array"

    def __init__(self, xp, fused_gaussian=None):
        self.xp = xp
        self._fused = fused_gaussian

    def asarray(self, A, dtype=np.float64):
        if sp.issparse(A):
            A = A.toarray()  # device kernels take dense rows; a chunk at a time
        return self.xp.ascontiguousarray(self.xp.asarray(A, dtype=dtype))

    def to_numpy(self, A):
        return to_numpy(A)

    def block(self, kernel, X, Y, dtype):
        """``k(X, Y)`` on the device in ``dtype``."""
        X = self.xp.asarray(X, dtype=dtype)
        Y = self.xp.asarray(Y, dtype=dtype)
        backends = get_tags(kernel, "kernel").backends
        if self.xp is not np and "cupy" in backends:
            return self.xp.asarray(kernel(X, Y), dtype=dtype)
        name = device_kernel_name(kernel)
        if name is None:
            raise InvalidParameterError(
                f"kernel {type(kernel).__name__} computes on the backends {backends} only, not on a "
                "GPU; use backend='numpy', or a kernel that lists 'cupy' in its backends"
            )
        params = dict(getattr(kernel, "params", None) or {})
        fused = self._fused if name == "gaussian" else None
        return DEVICE_FORMULAS[name](self.xp, X, Y, params, fused)

    def prepare_mix(self, mix, dtype):
        if diagonal_of_mix(mix) is not None:
            return None
        dense = mix.toarray() if sp.issparse(mix) else np.asarray(mix)
        return self.xp.asarray(np.ascontiguousarray(dense.T), dtype=dtype)

    def times_mix_t(self, block, mix_t):
        return block if mix_t is None else block @ mix_t

    def syrk_add(self, C, B):
        """``C += B^T B`` (float64 accumulator; cuBLAS syrk on a GPU when available, else a gemm)."""
        prod = None
        if self.xp is not np:
            try:
                from cupy.cublas import syrk  # lazy: CuPy is optional (the gpu extra)

                prod = syrk("T", B, lower=False)
            except (ImportError, AttributeError, TypeError):
                prod = None
        if prod is None:
            prod = B.T @ B
        C += prod.astype(self.xp.float64)
        return C

    def zeros(self, shape, order="C"):
        return self.xp.zeros(shape, order=order)


_FUSED_SOURCE = "G = exp(-g * max(xn + yn - (T)2 * G, (T)0))"


class CupyEngine(ArrayEngine):
    """``backend="cupy"``: the :class:`ArrayEngine` on CuPy, with a fused Gaussian elementwise kernel.

    Raises
    ------
    DependencyError
        When CuPy is not installed (``pip install "skframe[gpu]"``) or no GPU is visible.
    """

    name = "cupy"

    def __init__(self):
        cp = resolve_backend("cupy")  # DependencyError naming the gpu extra, or saying no GPU is visible
        fused = cp.ElementwiseKernel("T xn, T yn, T g", "T G", _FUSED_SOURCE, "skframe_gaussian_from_cross")
        super().__init__(cp, lambda xn, yn, g, G: fused(xn, yn, g, G))
