"""The built-in kernels on arrays of any array namespace: CuPy on a GPU, NumPy in the tests.

A built-in kernel called with arrays that are not NumPy's (``kernel(X, Y)`` with CuPy arrays,
whose namespace :func:`skframe.plugin.toolbox.get_array_module` names) computes its block here,
with the operations of that namespace: the block never leaves the device. Products are
matrix multiplications of the namespace (cuBLAS on a GPU); the Gaussian kernel's distances and
exponential are fused in one compiled elementwise kernel when the namespace offers them
(``ElementwiseKernel``, CuPy's), built once per process and namespace (:func:`fused_gaussian`).

Each formula is the textbook one (``tests/naive.py`` holds the plain versions they are
tested against, with NumPy and with a fake namespace that refuses host conversions).
"""

from __future__ import annotations

import functools

__all__ = ["gaussian_block", "laplacian_block", "linear_block", "polynomial_block", "fused_gaussian",
           "FUSED_GAUSSIAN_SOURCE"]

#: ``G <- exp(-g max(xn + yn - 2 G, 0))`` from the cross products G, in the kernel's precision T
FUSED_GAUSSIAN_SOURCE = "G = exp(-g * max(xn + yn - (T)2 * G, (T)0))"


@functools.cache
def fused_gaussian(xp):
    """The namespace's compiled elementwise Gaussian from cross products, or None.

    Built once per process and namespace (cached here): CuPy compiles it on its first call for
    each precision and keeps the binary, so later blocks and fits reuse it.
    """
    make = getattr(xp, "ElementwiseKernel", None)
    if make is None:
        return None
    return make("T xn, T yn, T g", "T G", FUSED_GAUSSIAN_SOURCE, "skframe_gaussian_from_cross")


def _sq_norms(X):
    return (X * X).sum(axis=1)


def gaussian_block(xp, X, Y, gamma):
    """``exp(-gamma ||x - y||^2)`` from ``||x||^2 + ||y||^2 - 2 <x, y>`` (clamped at 0), in X's precision."""
    G = X @ Y.T
    xn, yn, g = _sq_norms(X), _sq_norms(Y), G.dtype.type(gamma)
    fused = fused_gaussian(xp)
    if fused is not None:
        fused(xn[:, None], yn[None, :], g, G)
        return G
    G *= -2.0
    G += xn[:, None]
    G += yn[None, :]
    xp.maximum(G, 0, out=G)
    G *= -g
    return xp.exp(G, out=G)


def laplacian_block(xp, X, Y, gamma):
    """``exp(-gamma ||x - y||_1)``: one n x m pass per feature, no n x m x d temporary."""
    D = xp.zeros((X.shape[0], Y.shape[0]), dtype=X.dtype)
    for j in range(X.shape[1]):
        D += xp.abs(X[:, j][:, None] - Y[:, j][None, :])
    D *= -X.dtype.type(gamma)
    return xp.exp(D, out=D)


def linear_block(xp, X, Y):
    """``<x, y>``."""
    return X @ Y.T


def polynomial_block(xp, X, Y, gamma, coef0, degree):
    """``(gamma <x, y> + coef0) ** degree``."""
    G = X @ Y.T
    G *= G.dtype.type(gamma)
    G += G.dtype.type(coef0)
    return G ** int(degree) if int(degree) != 1 else G
