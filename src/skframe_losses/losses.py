"""Built-in losses (thesis §2.5, App. C.1; seed 002 App. G).

Conventions (fixed project-wide): the objective is
``(1/n) sum_i l(f(x_i), y_i) + (lam/2) ||f||^2``, the residual is ``r = f(x) - y`` and the
square loss is ``l = 1/2 ||r||^2`` (so square loss + closed form is kernel ridge with
``alpha = n * lam``). For vector outputs the robust losses are the norm-based losses of
thesis App. C.1: they act on ``||r||``. The pinball and hinge losses act column-wise and
are summed over the outputs.

Every loss declares its :class:`LossTags` — ``lipschitz`` (``inf`` when unbounded), ``smooth``
(differentiable everywhere, so L-BFGS applies), ``square`` (the square loss only) and
``default_solver`` (the registered solver a model uses when none is given: the closed form for
the square loss, ``dual-cd`` with a duality-gap stop for the others; ``dual-cd`` picks coordinate
epochs, Newton steps or the ADMM splitting from the conditioning of the problem) — and its
``dual`` (its Fenchel dual, what the ``dual-cd`` solver needs, see :mod:`skframe_losses.duals`);
values and sub-gradients are
numba-compiled on large arrays (:mod:`skframe_losses._losses_numba`) and
plain NumPy on small ones (:mod:`skframe_losses._losses_numpy`).
"""

from __future__ import annotations

import numpy as np

from skframe.plugin.api import (
    Interval,
    InvalidInputError,
    InvalidParameterError,
    Loss,
    LossTags,
    repr_from_params,
    validate_component,
)
from skframe.plugin.toolbox import elementwise_engine, lazy_module
from skframe_losses import _losses_numpy
from skframe_losses.duals import NormDual, SeparableDual, hinge_bounds

_numba = lazy_module("skframe_losses._losses_numba")  # numba is imported at its first large evaluation


class _Engines:
    """``_nb.<formula>(F, Y, ...)`` on the engine the plan's rule gives for the size of ``F``
    (:func:`skframe.plugin.toolbox.elementwise_engine`: NumPy below ``LOSS_NUMBA_MIN_ENTRIES`` entries)."""

    def __getattr__(self, name):
        numpy_formula = getattr(_losses_numpy, name)

        def run(F, *args):
            if elementwise_engine(F.size) == "numba":
                return getattr(_numba, name)(F, *args)
            return numpy_formula(F, *args)

        setattr(self, name, run)  # found directly from now on
        return run


_nb = _Engines()

__all__ = [
    "SquareLoss",
    "HuberLoss",
    "EpsilonInsensitiveL1Loss",
    "EpsilonInsensitiveL2Loss",
    "PinballLoss",
    "HingeLoss",
]


def _as_pair(F, Y):
    F = np.ascontiguousarray(F, dtype=np.float64)
    Y = np.ascontiguousarray(Y, dtype=np.float64)
    if F.ndim == 1:
        F = F[:, None]
    if Y.ndim == 1:
        Y = Y[:, None]
    if F.shape != Y.shape:
        raise InvalidInputError(f"predictions have shape {F.shape} but targets have shape {Y.shape}; they must match")
    return F, Y


class _Parameters:
    """``params``: the parameters declared in ``_parameter_constraints``, in their order; ``repr`` from them.

    Shared by every loss of this package (here and in :mod:`skframe_losses.output_losses`).
    """

    _parameter_constraints = {}

    @property
    def params(self):
        return {name: getattr(self, name) for name in self._parameter_constraints}

    __repr__ = repr_from_params


class _HuberThreshold:
    """The threshold ``kappa`` between the quadratic and the linear regime (both Huber losses)."""

    _parameter_constraints = {"kappa": [Interval("real", 0, None, closed="neither")]}
    _parameter_hints = {"kappa": "kappa must be > 0, e.g. kappa=1"}

    def __init__(self, kappa=1.0):
        self.kappa = kappa
        validate_component(self)


class _EpsilonTube:
    """The width ``epsilon`` of the insensitive tube (the ε-insensitive losses, here and in the output RKHS)."""

    _parameter_constraints = {"epsilon": [Interval("real", 0, None)]}
    _parameter_hints = {"epsilon": "epsilon must be >= 0, e.g. epsilon=0.1"}

    def __init__(self, epsilon=0.1):
        self.epsilon = epsilon
        validate_component(self)


class _BaseLoss(_Parameters, Loss):
    """Values and sub-gradients from the formulas ``<_formula>_value`` and ``<_formula>_gradient``.

    The formulas of :mod:`skframe_losses._losses_numpy` and :mod:`skframe_losses._losses_numba`
    take ``(F, Y, *args)``, ``args`` being :meth:`_formula_args`: the declared parameters as floats.
    """

    name = "loss"
    __skframe_tags__ = LossTags(default_solver="dual-cd")
    _formula = ""

    def _formula_args(self, F):
        """The arguments of the formulas after ``F`` and ``Y`` (F has its final shape (n, d))."""
        return tuple(float(value) for value in self.params.values())

    def value(self, F, Y):
        F, Y = _as_pair(F, Y)
        return getattr(_nb, self._formula + "_value")(F, Y, *self._formula_args(F))

    def gradient(self, F, Y):
        F, Y = _as_pair(F, Y)
        return getattr(_nb, self._formula + "_gradient")(F, Y, *self._formula_args(F))

    def objective(self, F, Y):
        """Mean loss ``(1/n) sum_i l(F_i, Y_i)``."""
        return float(np.mean(self.value(F, Y)))


class SquareLoss(_BaseLoss):
    """Square loss ``l(f, y) = 1/2 ||f - y||^2`` (smooth, not Lipschitz).

    Examples
    --------
    >>> import numpy as np
    >>> SquareLoss().value(np.array([[1.0, 1.0]]), np.array([[0.0, 0.0]]))
    array([1.])
    """

    name = "square"
    __skframe_tags__ = LossTags(square=True, smooth=True, default_solver="closed-form")
    dual = NormDual(quad=1.0, l1=0.0)
    _formula = "square"


class HuberLoss(_HuberThreshold, _BaseLoss):
    """κ-Huber loss on the residual norm (thesis eq. 2.127).

    ``l = 1/2 ||r||^2`` if ``||r|| <= kappa`` else ``kappa (||r|| - kappa/2)``; ``kappa``-Lipschitz
    and continuously differentiable.

    Parameters
    ----------
    kappa : float, default=1.0
        Threshold between the quadratic and the linear regime, > 0.
    """

    name = "huber"
    _formula = "huber"

    def __skframe_tags__(self):
        return LossTags(smooth=True, lipschitz=self.kappa, default_solver="dual-cd")

    @property
    def dual(self):
        """``h(alpha, y) = <alpha, y> - ||alpha||^2 / 2`` on the ball ``||alpha|| <= kappa``."""
        return NormDual(quad=1.0, l1=0.0, radius=self.kappa)


class EpsilonInsensitiveL1Loss(_EpsilonTube, _BaseLoss):
    """ε-insensitive ℓ1 loss of ε-SVR: ``l = max(||r|| - epsilon, 0)`` (1-Lipschitz, not smooth).

    Parameters
    ----------
    epsilon : float, default=0.1
        Width of the insensitive tube, >= 0 (0 gives the ℓ2-norm / absolute loss).
    """

    name = "epsilon-svr"
    __skframe_tags__ = LossTags(lipschitz=1.0, default_solver="dual-cd")
    _formula = "eps_l1"

    @property
    def dual(self):
        """``h(alpha, y) = <alpha, y> - epsilon ||alpha||`` on the unit ball."""
        return NormDual(quad=0.0, l1=self.epsilon, radius=1.0)


class EpsilonInsensitiveL2Loss(_EpsilonTube, _BaseLoss):
    """ε-insensitive ℓ2 loss: ``l = 1/2 max(||r|| - epsilon, 0)^2`` (smooth, not Lipschitz).

    The factor 1/2 makes ``epsilon=0`` coincide with the square loss.

    Parameters
    ----------
    epsilon : float, default=0.1
        Width of the insensitive tube, >= 0.
    """

    name = "epsilon-ridge"
    __skframe_tags__ = LossTags(smooth=True, default_solver="dual-cd")
    _formula = "eps_l2"

    @property
    def dual(self):
        """``h(alpha, y) = <alpha, y> - ||alpha||^2 / 2 - epsilon ||alpha||`` (no constraint)."""
        return NormDual(quad=1.0, l1=self.epsilon)


def _check_quantiles(quantiles):
    try:
        q = np.atleast_1d(np.asarray(quantiles, dtype=np.float64))
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(f"quantiles={quantiles!r} is not a list of numbers in (0, 1)") from exc
    if q.ndim != 1 or q.size == 0 or not np.all(np.isfinite(q)) or np.any(q <= 0) or np.any(q >= 1):
        raise InvalidParameterError(
            f"quantiles={quantiles!r}: every quantile level must lie strictly between 0 and 1, e.g. 0.1,0.5,0.9"
        )
    return q


class PinballLoss(_BaseLoss):
    """Pinball (quantile) loss, column j at level ``tau_j`` (seed 002 App. G).

    ``l(f, y) = sum_j max(tau_j u_j, (tau_j - 1) u_j)`` with ``u = y - f``. Lipschitz with
    constant ``sqrt(sum_j max(tau_j, 1 - tau_j)^2)``; not smooth.

    Parameters
    ----------
    quantiles : float or sequence of float, default=0.5
        Levels in (0, 1), one per output column (a single level applies to every column).
    """

    name = "pinball"
    _formula = "pinball"

    def __init__(self, quantiles=0.5):
        self.quantiles = [float(t) for t in _check_quantiles(quantiles)]

    @property
    def params(self):
        return {"quantiles": list(self.quantiles)}

    def __skframe_tags__(self):
        q = np.asarray(self.quantiles)
        lipschitz = float(np.sqrt(np.sum(np.maximum(q, 1 - q) ** 2)))
        return LossTags(lipschitz=lipschitz, quantiles=tuple(self.quantiles), default_solver="dual-cd")

    def _taus(self, d):
        q = np.asarray(self.quantiles, dtype=np.float64)
        if q.size == d:
            return q
        if q.size == 1:
            return np.full(d, q[0])
        raise InvalidInputError(
            f"the pinball loss has {q.size} quantile levels but the targets have {d} columns; "
            "give one level per column (or a single level for all)"
        )

    @property
    def dual(self):
        """``h(alpha, y) = <alpha, y>`` on the box ``tau_j - 1 <= alpha_j <= tau_j``."""
        return SeparableDual(quad=0.0, l1=0.0, bounds=lambda Y: (self._taus(Y.shape[1]) - 1.0, self._taus(Y.shape[1])))

    def _formula_args(self, F):
        return (self._taus(F.shape[1]),)


class HingeLoss(_BaseLoss):
    """Hinge loss of SVMs, ``l(f, y) = sum_j max(0, 1 - y_j f_j)`` with labels ``y_j`` in {-1, +1}.

    Tags: ``lipschitz = 1`` for one output column (``sqrt(d)`` in the Euclidean norm for d
    columns); not smooth; ``classification``. Used by
    :class:`skframe.models.SketchedKernelClassifier` (one column per class, one-vs-rest).
    """

    name = "hinge"
    __skframe_tags__ = LossTags(lipschitz=1.0, classification=True, default_solver="dual-cd")
    dual = SeparableDual(quad=0.0, l1=0.0, bounds=hinge_bounds)
    """``h(alpha, y) = alpha y`` with ``alpha`` between 0 and the label ``y`` (labels -1/+1)."""

    _formula = "hinge"
