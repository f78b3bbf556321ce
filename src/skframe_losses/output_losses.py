"""Losses in the output RKHS for neural output kernel regression (DSOKR).

El Ahmad, "Learning Deep Kernel Networks: Application to Efficient and Robust Structured
Prediction", PhD thesis, Institut Polytechnique de Paris 2024, §5.2.1 and App. C.1: with
the sketched output basis, the squared distance in the output RKHS between the network's
prediction ``h(x) = sum_j g_j(x) e_j`` and ``psi(y)`` is

    ``u = ||g(x) - psi~(y)||^2 + r(y)``,   ``r(y) = k_Y(y, y) - ||psi~(y)||^2 >= 0``,

``r(y)`` being the part of ``psi(y)`` outside the span of the basis (a constant of the
training pair). Every loss here is ``c(u)`` for a scalar function ``c``; its gradient with
respect to ``g`` is ``2 c'(u) (g - psi~(y))`` (thesis eq. 5.14). The project's convention
``square = 1/2 ||.||^2`` is kept, so that ``c(u) = u / 2`` with a weight decay ``lam`` gives
the ridge solution of ISOKR with the same ``lam``.

================  =====================================================  =====================
name              ``c(u)``, ``s = sqrt(u)``                               ``c'(u)``
================  =====================================================  =====================
output-square     ``u / 2``                                              ``1/2``
output-huber      ``u / 2`` if ``s <= kappa`` else ``kappa (s - kappa/2)``  ``1/2`` or ``kappa / (2 s)``
output-epsilon-   ``max(s - epsilon, 0)``                                ``1 / (2 s)`` if ``s > epsilon``
svr
output-epsilon-   ``max(s - epsilon, 0)^2 / 2``                          ``(1 - epsilon / s) / 2`` if ``s > epsilon``
ridge
================  =====================================================  =====================

The classes are plain losses of the ``loss`` registry (``value(F, Y)`` and
``gradient(F, Y)`` on predictions and targets, with an optional ``offset`` r), plus
``torch_value(u)``: the same ``c`` on a PyTorch tensor, for training a network with
autograd. Nothing here imports PyTorch: the tensor module is taken from the argument.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from skframe.plugin.api import InvalidInputError, Loss, LossTags
from skframe_losses.losses import _as_pair, _EpsilonTube, _HuberThreshold, _Parameters

__all__ = ["OutputSquareLoss", "OutputHuberLoss", "OutputEpsilonSVRLoss", "OutputEpsilonRidgeLoss"]

# below this squared distance the square root is treated as 0 (sub-gradient 0 at the kink)
_TINY = 1e-30


def _pair(F, Y, offset):
    F, Y = _as_pair(F, Y)
    R = F - Y
    u = np.einsum("ij,ij->i", R, R)
    if offset is not None:
        offset = np.asarray(offset, dtype=np.float64).ravel()
        if offset.shape != u.shape:
            raise InvalidInputError(f"offset has {offset.size} entries for {u.size} rows; give one per row")
        u = u + np.clip(offset, 0.0, None)
    return R, u


class _OutputLoss(_Parameters, Loss):
    """``c(||F - Y||^2 + offset)``; subclasses define ``c``, ``c_prime`` and ``torch_value``."""

    name = "output-loss"
    # acts on the squared distance in the output RKHS (DSOKR), trained by Adam
    __skframe_tags__ = LossTags(smooth=True, output_rkhs=True, default_solver="adam")

    def c(self, u):
        raise NotImplementedError

    def c_prime(self, u):
        raise NotImplementedError

    def torch_value(self, u):
        """``c(u)`` for a tensor ``u`` of squared distances (differentiable with autograd)."""
        raise NotImplementedError

    def value(self, F, Y, offset=None):
        """Per-row loss ``c(||F_i - Y_i||^2 + offset_i)``, shape (n,)."""
        _, u = _pair(F, Y, offset)
        return self.c(u)

    def gradient(self, F, Y, offset=None):
        """Gradient with respect to F: ``2 c'(u_i) (F_i - Y_i)``, shape (n, d)."""
        R, u = _pair(F, Y, offset)
        return (2.0 * self.c_prime(u))[:, None] * R

    def objective(self, F, Y, offset=None):
        return float(np.mean(self.value(F, Y, offset)))


class OutputSquareLoss(_OutputLoss):
    """Square loss in the output RKHS, ``c(u) = u / 2`` (thesis eq. 5.13, halved).

    Examples
    --------
    >>> import numpy as np
    >>> OutputSquareLoss().value(np.array([[1.0, 1.0]]), np.array([[0.0, 0.0]]), offset=[0.5])
    array([1.25])
    """

    name = "output-square"

    def c(self, u):
        return 0.5 * np.asarray(u, dtype=np.float64)

    def c_prime(self, u):
        return np.full(np.shape(u), 0.5)

    def torch_value(self, u):
        return 0.5 * u


class OutputHuberLoss(_HuberThreshold, _OutputLoss):
    """κ-Huber loss on the distance in the output RKHS (thesis App. C.1, eq. 396).

    ``c(u) = u / 2`` when ``sqrt(u) <= kappa``, else ``kappa (sqrt(u) - kappa / 2)``.

    Parameters
    ----------
    kappa : float, default=1.0
        Threshold between the quadratic and the linear regime, > 0.
    """

    name = "output-huber"

    def __skframe_tags__(self):
        return replace(_OutputLoss.__skframe_tags__, lipschitz=self.kappa)

    def c(self, u):
        u = np.asarray(u, dtype=np.float64)
        s = np.sqrt(np.clip(u, 0.0, None))
        k = self.kappa
        return np.where(s <= k, 0.5 * u, k * (s - 0.5 * k))

    def c_prime(self, u):
        s = np.sqrt(np.clip(np.asarray(u, dtype=np.float64), 0.0, None))
        k = self.kappa
        return np.where(s <= k, 0.5, 0.5 * k / np.maximum(s, k))

    def torch_value(self, u):
        k = self.kappa
        s = (u.clamp_min(k * k)).sqrt()  # used only where sqrt(u) > kappa: a finite gradient elsewhere
        return (0.5 * u).where(u <= k * k, k * (s - 0.5 * k))


class _EpsilonOutputLoss(_EpsilonTube, _OutputLoss):
    def _excess(self, u):
        s = np.sqrt(np.clip(np.asarray(u, dtype=np.float64), 0.0, None))
        return s, np.maximum(s - self.epsilon, 0.0)

    def _torch_excess(self, u):
        s = u.clamp_min(_TINY).sqrt()
        return (s - self.epsilon).clamp_min(0.0)


class OutputEpsilonSVRLoss(_EpsilonOutputLoss):
    """ε-insensitive ℓ1 loss in the output RKHS, ``c(u) = max(sqrt(u) - epsilon, 0)`` (thesis eq. 392).

    Not differentiable at ``sqrt(u) = epsilon`` (a sub-gradient is used).

    Parameters
    ----------
    epsilon : float, default=0.1
        Width of the insensitive tube, >= 0.
    """

    name = "output-epsilon-svr"
    __skframe_tags__ = replace(_OutputLoss.__skframe_tags__, smooth=False, lipschitz=1.0)

    def c(self, u):
        return self._excess(u)[1]

    def c_prime(self, u):
        s, e = self._excess(u)
        return np.where((e > 0) & (s > _TINY ** 0.5), 0.5 / np.maximum(s, _TINY ** 0.5), 0.0)

    def torch_value(self, u):
        return self._torch_excess(u)


class OutputEpsilonRidgeLoss(_EpsilonOutputLoss):
    """ε-insensitive ℓ2 loss in the output RKHS, ``c(u) = max(sqrt(u) - epsilon, 0)^2 / 2`` (thesis eq. 394).

    ``epsilon = 0`` gives the square loss.

    Parameters
    ----------
    epsilon : float, default=0.1
        Width of the insensitive tube, >= 0.
    """

    name = "output-epsilon-ridge"

    def c(self, u):
        return 0.5 * self._excess(u)[1] ** 2

    def c_prime(self, u):
        s, e = self._excess(u)
        return np.where(e > 0, 0.5 * e / np.maximum(s, _TINY ** 0.5), 0.0)

    def torch_value(self, u):
        if self.epsilon == 0:
            return 0.5 * u
        return 0.5 * self._torch_excess(u) ** 2
