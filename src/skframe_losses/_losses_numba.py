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
from numba import njit, vectorize

# A formula of one entry (a sub-gradient of the pinball or hinge loss) is a compiled ufunc: numba writes the
# loop over the entries. A value sums over the columns of a row: those loops share their shape (rows i,
# columns j, a sum per row), not their formula, and each loss keeps its own, written as the formula it computes
# and tested against its NumPy twin. A generic loop taking the formula as an argument is not an option: numba
# cannot cache a function that receives another compiled function (it would compile again in every process).


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
# (the same loop shape as _row_norms and hinge_value, on purpose: see the note at the top)
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


# sub-gradients entry by entry: compiled ufuncs (numba's loop over the entries; ``taus`` of shape (d,) broadcasts
# over the rows of F and Y, as in the NumPy twins)
@vectorize(["float64(float64, float64, float64)"], cache=True)
def pinball_gradient(f, y, tau):
    u = y - f
    if u > 0.0:
        return -tau
    if u < 0.0:
        return 1.0 - tau
    return 0.0


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


@vectorize(["float64(float64, float64)"], cache=True)
def hinge_gradient(f, y):
    if 1.0 - y * f > 0.0:
        return -y
    return 0.0
