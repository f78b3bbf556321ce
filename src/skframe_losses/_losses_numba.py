"""Numba-compiled value and sub-gradient kernels of the built-in losses.

Every function takes predictions ``F`` and targets ``Y`` of shape (n, d) (C-contiguous
float64) and returns per-sample values (n,) or a sub-gradient with respect to ``F``
(n, d). The plain NumPy formulas they are tested against live in ``tests/naive.py``.

Vector outputs use the norm-based losses of the thesis (001, App. C.1 and eq. 2.127):
with the residual ``r = f - y`` the robust losses act on ``||r||``. Where a loss has a
kink the sub-gradient returned is the element of the sub-differential closest to zero
(``0`` at ``r = 0`` for the ε-insensitive ℓ1 with ε = 0, at ``y f = 1`` for the hinge, at
``r_j = 0`` for the pinball).
"""

import numpy as np
from numba import njit

# The loops of this module share their shape (rows i, columns j, one formula per entry), not their
# formula: each loss keeps its own loop, written as the formula it computes and tested against its
# NumPy twin, rather than a generic loop taking the formula as an argument. The repetition of that
# shape (here and in the pinball and hinge loops below) is deliberate.


@njit(cache=True)
def _row_norms(F, Y):
    n, d = F.shape
    out = np.empty(n)
    for i in range(n):
        s = 0.0
        for j in range(d):
            r = F[i, j] - Y[i, j]
            s += r * r
        out[i] = np.sqrt(s)
    return out


@njit(cache=True)
def _scaled_residuals(F, Y, scale):
    """``scale_i (F_i - Y_i)`` row by row: a loss of ``||r||`` has the gradient ``l'(||r||) r / ||r||``."""
    n, d = F.shape
    G = np.empty((n, d))
    for i in range(n):
        for j in range(d):
            G[i, j] = scale[i] * (F[i, j] - Y[i, j])
    return G


# ------------------------------------------------------------------ square: 1/2 ||r||^2
@njit(cache=True)
def square_value(F, Y):
    nr = _row_norms(F, Y)
    return 0.5 * nr * nr


@njit(cache=True)
def square_gradient(F, Y):
    return F - Y


# ------------------------------------------------------------------ kappa-Huber on ||r||
@njit(cache=True)
def huber_value(F, Y, kappa):
    nr = _row_norms(F, Y)
    out = np.empty(nr.shape[0])
    for i in range(nr.shape[0]):
        if nr[i] <= kappa:
            out[i] = 0.5 * nr[i] * nr[i]
        else:
            out[i] = kappa * (nr[i] - 0.5 * kappa)
    return out


@njit(cache=True)
def huber_gradient(F, Y, kappa):
    nr = _row_norms(F, Y)
    scale = np.ones(nr.shape[0])
    for i in range(nr.shape[0]):
        if nr[i] > kappa:
            scale[i] = kappa / nr[i]
    return _scaled_residuals(F, Y, scale)


# ------------------------------------------------------------------ epsilon-insensitive l1: max(||r|| - eps, 0)
@njit(cache=True)
def eps_l1_value(F, Y, eps):
    nr = _row_norms(F, Y)
    return np.maximum(nr - eps, 0.0)


@njit(cache=True)
def eps_l1_gradient(F, Y, eps):
    nr = _row_norms(F, Y)
    scale = np.zeros(nr.shape[0])
    for i in range(nr.shape[0]):
        if nr[i] > eps and nr[i] > 0.0:
            scale[i] = 1.0 / nr[i]
    return _scaled_residuals(F, Y, scale)


# ------------------------------------------------------------------ epsilon-insensitive l2: 1/2 max(||r|| - eps, 0)^2
@njit(cache=True)
def eps_l2_value(F, Y, eps):
    t = np.maximum(_row_norms(F, Y) - eps, 0.0)
    return 0.5 * t * t


@njit(cache=True)
def eps_l2_gradient(F, Y, eps):
    nr = _row_norms(F, Y)
    scale = np.zeros(nr.shape[0])
    for i in range(nr.shape[0]):
        if nr[i] > eps and nr[i] > 0.0:
            scale[i] = (nr[i] - eps) / nr[i]
    return _scaled_residuals(F, Y, scale)


# ------------------------------------------------------------------ pinball
# sum_j max(tau_j u_j, (tau_j - 1) u_j), u = y - f
# (the same loop shape as _row_norms and the hinge loops, on purpose: see the note at the top)
@njit(cache=True)
def pinball_value(F, Y, taus):
    n, d = F.shape
    out = np.zeros(n)
    for i in range(n):
        s = 0.0
        for j in range(d):
            u = Y[i, j] - F[i, j]
            if u >= 0.0:
                s += taus[j] * u
            else:
                s += (taus[j] - 1.0) * u
        out[i] = s
    return out


@njit(cache=True)
def pinball_gradient(F, Y, taus):
    n, d = F.shape
    G = np.zeros((n, d))
    for i in range(n):
        for j in range(d):
            u = Y[i, j] - F[i, j]
            if u > 0.0:
                G[i, j] = -taus[j]
            elif u < 0.0:
                G[i, j] = 1.0 - taus[j]
    return G


# ------------------------------------------------------------------ hinge: sum_j max(0, 1 - y_j f_j), y in {-1, +1}
@njit(cache=True)
def hinge_value(F, Y):
    n, d = F.shape
    out = np.zeros(n)
    for i in range(n):
        s = 0.0
        for j in range(d):
            m = 1.0 - Y[i, j] * F[i, j]
            if m > 0.0:
                s += m
        out[i] = s
    return out


@njit(cache=True)
def hinge_gradient(F, Y):
    n, d = F.shape
    G = np.zeros((n, d))
    for i in range(n):
        for j in range(d):
            if 1.0 - Y[i, j] * F[i, j] > 0.0:
                G[i, j] = -Y[i, j]
    return G
