"""Plain NumPy value and sub-gradient formulas of the built-in losses.

The same functions, arguments and conventions as :mod:`skframe_losses._losses_numba`
(per-sample values of shape (n,), sub-gradients of shape (n, d), the sub-gradient of
smallest norm at a kink). Small evaluations run here so that a small fit never pays
numba's start in a fresh process; the two engines are tested against each other and
against the formulas of the test suite.
"""

import numpy as np


def _row_norms(F, Y):
    R = F - Y
    return np.sqrt(np.einsum("ij,ij->i", R, R))


def square_value(F, Y):
    nr = _row_norms(F, Y)
    return 0.5 * nr * nr


def square_gradient(F, Y):
    return F - Y


def huber_value(F, Y, kappa):
    nr = _row_norms(F, Y)
    return np.where(nr <= kappa, 0.5 * nr * nr, kappa * (nr - 0.5 * kappa))


def huber_gradient(F, Y, kappa):
    R = F - Y
    nr = np.sqrt(np.einsum("ij,ij->i", R, R))
    scale = np.ones_like(nr)
    far = nr > kappa
    scale[far] = kappa / nr[far]
    return R * scale[:, None]


def eps_l1_value(F, Y, eps):
    return np.maximum(_row_norms(F, Y) - eps, 0.0)


def eps_l1_gradient(F, Y, eps):
    R = F - Y
    nr = np.sqrt(np.einsum("ij,ij->i", R, R))
    scale = np.zeros_like(nr)
    active = (nr > eps) & (nr > 0.0)
    scale[active] = 1.0 / nr[active]
    return R * scale[:, None]


def eps_l2_value(F, Y, eps):
    t = np.maximum(_row_norms(F, Y) - eps, 0.0)
    return 0.5 * t * t


def eps_l2_gradient(F, Y, eps):
    R = F - Y
    nr = np.sqrt(np.einsum("ij,ij->i", R, R))
    scale = np.zeros_like(nr)
    active = (nr > eps) & (nr > 0.0)
    scale[active] = (nr[active] - eps) / nr[active]
    return R * scale[:, None]


def pinball_value(F, Y, taus):
    U = Y - F
    return np.where(U >= 0.0, taus[None, :] * U, (taus[None, :] - 1.0) * U).sum(axis=1)


def pinball_gradient(F, Y, taus):
    U = Y - F
    G = np.zeros_like(U)
    T = np.broadcast_to(taus[None, :], U.shape)
    G[U > 0.0] = -T[U > 0.0]
    G[U < 0.0] = 1.0 - T[U < 0.0]
    return G


def hinge_value(F, Y):
    return np.maximum(1.0 - Y * F, 0.0).sum(axis=1)


def hinge_gradient(F, Y):
    return np.where(1.0 - Y * F > 0.0, -Y, 0.0)
