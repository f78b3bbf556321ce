"""Fenchel duals of the built-in losses: what dual coordinate ascent needs to know.

For a loss of the residual ``r = f - y``, ``l(f, y) = phi(f - y)``, the dual objective of
``(1/n) sum_i l(z_i^T W, y_i) + (lam/2) ||W||^2`` is (Shalev-Shwartz and Zhang,
"Stochastic Dual Coordinate Ascent Methods for Regularized Loss Minimization", JMLR 2013)

    D(A) = (1/n) sum_i h(alpha_i, y_i) - (lam/2) ||(1/(lam n)) Z^T A||^2,
    h(alpha, y) = -l^*(-alpha) = <alpha, y> - psi(alpha),   psi(alpha) = phi^*(-alpha),

and at the optimum ``alpha_i = -grad l(f_i, y_i)``. Every built-in loss has

    psi(alpha) = (quad/2) ||alpha||^2 + l1 * N(alpha) + indicator(alpha in its domain),

with ``N`` the Euclidean norm and the domain a ball for the losses of the residual norm
(:class:`NormDual`), and ``N`` the l1 norm and the domain a box for the losses that act
column by column (:class:`SeparableDual`). The duals of the ε-insensitive, Huber, hinge
and pinball losses are those of T. El Ahmad's PhD thesis (§2.5) and of Laforgue et al.,
"Duality in RKHSs with Infinite Dimensional Outputs: Application to Robust Losses",
ICML 2020.
"""

from __future__ import annotations

import math

import numpy as np

from skframe.plugin.api import InvalidInputError

__all__ = ["NormDual", "SeparableDual"]

_FEASIBILITY_TOL = 1e-9


class NormDual:
    """Dual of a loss of the residual norm: domain ``||alpha|| <= radius``, ``N = ||.||_2``.

    Parameters
    ----------
    quad, l1, radius : float
        Coefficients of ``psi``, and radius of the dual ball (``inf`` when unbounded).
    """

    structure = "norm"

    def __init__(self, quad, l1, radius=math.inf):
        self.quad, self.l1, self.radius = float(quad), float(l1), float(radius)

    def __repr__(self):
        return f"NormDual(quad={self.quad}, l1={self.l1}, radius={self.radius})"

    def values(self, A, Y):
        """``h(alpha_i, y_i)`` per sample; ``-inf`` outside the domain."""
        A = np.asarray(A, dtype=np.float64)
        norms = np.sqrt(np.sum(A * A, axis=1))
        out = np.sum(A * Y, axis=1) - 0.5 * self.quad * norms**2 - self.l1 * norms
        bad = norms > self.radius * (1 + _FEASIBILITY_TOL) + _FEASIBILITY_TOL
        out[bad] = -np.inf
        return out

    def project(self, A, Y):
        """Nearest point of the domain (rows scaled back into the ball)."""
        A = np.array(A, dtype=np.float64, copy=True)
        if math.isfinite(self.radius):
            norms = np.sqrt(np.sum(A * A, axis=1))
            over = norms > self.radius
            A[over] *= (self.radius / norms[over])[:, None]
        return A


class SeparableDual:
    """Dual of a loss summed over output columns: box domain ``lower <= alpha <= upper``, ``N = ||.||_1``.

    Parameters
    ----------
    quad, l1 : float
        Coefficients of ``psi``.
    bounds : callable
        ``bounds(Y) -> (lower, upper)``, arrays of Y's shape (they may depend on the targets).
    """

    structure = "separable"

    def __init__(self, quad, l1, bounds):
        self.quad, self.l1 = float(quad), float(l1)
        self._bounds = bounds

    def __repr__(self):
        return f"SeparableDual(quad={self.quad}, l1={self.l1})"

    def bounds(self, Y):
        """``(lower, upper)`` of shape ``Y.shape`` (C-contiguous float64)."""
        lo, hi = self._bounds(np.asarray(Y, dtype=np.float64))
        shape = np.shape(Y)
        return (np.ascontiguousarray(np.broadcast_to(lo, shape), dtype=np.float64),
                np.ascontiguousarray(np.broadcast_to(hi, shape), dtype=np.float64))

    def values(self, A, Y):
        """``h(alpha_i, y_i)`` per sample; ``-inf`` outside the box."""
        A = np.asarray(A, dtype=np.float64)
        lo, hi = self.bounds(Y)
        out = np.sum(A * Y - 0.5 * self.quad * A * A - self.l1 * np.abs(A), axis=1)
        slack = _FEASIBILITY_TOL * (1 + np.abs(A))
        bad = np.any((A < lo - slack) | (A > hi + slack), axis=1)
        out[bad] = -np.inf
        return out

    def project(self, A, Y):
        """Clip to the box."""
        lo, hi = self.bounds(Y)
        return np.clip(np.asarray(A, dtype=np.float64), lo, hi)


def hinge_bounds(Y):
    """Box of the hinge dual for labels ``y in {-1, +1}``: ``alpha`` between 0 and ``y``."""
    if not np.all(np.abs(Y) == 1.0):
        bad = Y[np.abs(Y) != 1.0].ravel()[:3].tolist()
        raise InvalidInputError(
            f"the hinge loss dual needs labels -1 or +1, got {bad}; encode the classes as -1/+1"
        )
    return np.minimum(Y, 0.0), np.maximum(Y, 0.0)
