"""Numba-compiled twins of :mod:`skframe_losses._classification_numpy` (large arrays)."""

import numpy as np
from numba import njit, vectorize


@njit(cache=True)
def _softplus(x):
    """``log(1 + exp(x))`` without overflow."""
    if x > 0.0:
        return x + np.log1p(np.exp(-x))
    return np.log1p(np.exp(x))


@njit(cache=True)
def _sigmoid_neg(t):
    if t >= 0.0:
        e = np.exp(-t)
        return e / (1.0 + e)
    return 1.0 / (1.0 + np.exp(t))


@njit(cache=True)
def logistic_value(F, Y):
    n, d = F.shape
    out = np.zeros(n)
    for i in range(n):
        for j in range(d):
            out[i] += _softplus(-Y[i, j] * F[i, j])
    return out


# entry by entry: compiled ufuncs (numba's loop over the entries of F and Y, as the NumPy twins broadcast)
@vectorize(["float64(float64, float64)"], cache=True)
def logistic_gradient(f, y):
    return -y * _sigmoid_neg(y * f)


@vectorize(["float64(float64, float64)"], cache=True)
def logistic_curvature(f, y):
    s = _sigmoid_neg(y * f)
    return s * (1.0 - s)


@njit(cache=True)
def multinomial_value(F, Y):
    n, d = F.shape
    out = np.empty(n)
    for i in range(n):
        top = F[i, 0]
        for j in range(1, d):
            top = max(top, F[i, j])
        s = 0.0
        lin = 0.0
        for j in range(d):
            s += np.exp(F[i, j] - top)
            lin += F[i, j] * 0.5 * (Y[i, j] + 1.0)
        out[i] = top + np.log(s) - lin
    return out


@njit(cache=True)
def multinomial_gradient(F, Y):
    n, d = F.shape
    G = np.empty((n, d))
    for i in range(n):
        top = F[i, 0]
        for j in range(1, d):
            top = max(top, F[i, j])
        s = 0.0
        for j in range(d):
            G[i, j] = np.exp(F[i, j] - top)
            s += G[i, j]
        for j in range(d):
            G[i, j] = G[i, j] / s - 0.5 * (Y[i, j] + 1.0)
    return G
