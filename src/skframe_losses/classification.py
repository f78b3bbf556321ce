"""Probabilistic classification losses: binary logistic and multinomial (softmax cross-entropy).

Both are smooth and convex in the predictions, define class probabilities, and declare their
Fenchel conjugate (``conjugate``): ``h(alpha, y) = -l^*(-alpha)``, an entropy, which gives the
certified duality gap of any primal point (see :mod:`skframe_solvers._duality`)

* ``logistic``, labels ``y = ±1`` per column: ``l(f, y) = sum_j log(1 + exp(-y_j f_j))``,
  ``h(alpha, y) = sum_j H(alpha_j y_j)`` with ``H(s) = -s log s - (1 - s) log(1 - s)`` on ``0 <= alpha_j y_j <= 1``;
* ``multinomial``, one +1 per row (the class) and -1 elsewhere, ``t = (y + 1) / 2``:
  ``l(f, y) = log sum_j exp(f_j) - <f, t>`` (one coupled loss over the K outputs),
  ``h(alpha, y) = -sum_j q_j log q_j`` with ``q = t - alpha`` in the probability simplex.

At ``alpha = -grad l(f, y)`` the Fenchel-Young equality ``h(alpha, y) = l(f, y) + <f, alpha>`` holds
(checked by the conformance kit). Both default to the ``newton`` solver (:mod:`skframe_solvers.newton`).
"""

from __future__ import annotations

import math

import numpy as np

from skframe.plugin.api import InvalidInputError, LossTags
from skframe.plugin.toolbox import elementwise_engine, lazy_module
from skframe_losses import _classification_numpy as _np_formulas
from skframe_losses.losses import _as_pair, _BaseLoss

__all__ = ["LogisticLoss", "MultinomialLoss", "LogisticConjugate", "MultinomialConjugate"]

_numba = lazy_module("skframe_losses._classification_numba")
_FEASIBILITY_TOL = 1e-9


def _run(name, F, Y):
    """``name(F, Y)`` on the engine of the plan's rule for the size of ``F`` (as the other losses)."""
    if elementwise_engine(F.size) == "numba":
        return getattr(_numba, name)(F, Y)
    return getattr(_np_formulas, name)(F, Y)


def _xlogx(x):
    x = np.clip(x, 0.0, None)
    return np.where(x > 0, x * np.log(np.where(x > 0, x, 1.0)), 0.0)


def _check_signs(Y, loss):
    if not np.all(np.abs(Y) == 1.0):
        bad = np.asarray(Y)[np.abs(Y) != 1.0].ravel()[:3].tolist()
        raise InvalidInputError(f"the {loss} loss needs labels -1 or +1, got {bad}; encode the classes as -1/+1")


class LogisticConjugate:
    """``h(alpha, y) = sum_j H(alpha_j y_j)`` (binary entropy) on ``0 <= alpha_j y_j <= 1``, labels ±1."""

    structure = "entropy"

    def __repr__(self):
        return "LogisticConjugate()"

    @staticmethod
    def check_labels(Y):
        """Refuse labels other than ±1."""
        _check_signs(Y, "logistic")

    def values(self, A, Y):
        """``h(alpha_i, y_i)`` per sample; ``-inf`` outside the domain."""
        A, Y = np.asarray(A, dtype=np.float64), np.asarray(Y, dtype=np.float64)
        _check_signs(Y, "logistic")
        S = A * Y
        out = -np.sum(_xlogx(S) + _xlogx(1.0 - S), axis=1)
        out[np.any((S < -_FEASIBILITY_TOL) | (S > 1.0 + _FEASIBILITY_TOL), axis=1)] = -np.inf
        return out

    def project(self, A, Y):
        """Nearest point of the domain: ``alpha_j y_j`` clipped to [0, 1]."""
        Y = np.asarray(Y, dtype=np.float64)
        return Y * np.clip(np.asarray(A, dtype=np.float64) * Y, 0.0, 1.0)


def _simplex_projection(P):
    """Euclidean projection of every row of ``P`` on the probability simplex (sort-based)."""
    n, k = P.shape
    U = -np.sort(-P, axis=1)
    css = np.cumsum(U, axis=1) - 1.0
    idx = np.arange(1, k + 1)
    cond = U - css / idx > 0
    rho = k - 1 - np.argmax(cond[:, ::-1], axis=1)
    theta = css[np.arange(n), rho] / (rho + 1.0)
    return np.maximum(P - theta[:, None], 0.0)


class MultinomialConjugate:
    """``h(alpha, y) = -sum_j q_j log q_j`` (entropy) with ``q = t - alpha`` in the simplex, ``t = (y + 1)/2``."""

    structure = "entropy"

    def __repr__(self):
        return "MultinomialConjugate()"

    @staticmethod
    def check_labels(Y):
        """Refuse labels other than one +1 per row and -1 elsewhere."""
        _check_signs(Y, "multinomial")
        if not np.all(np.sum(Y > 0, axis=1) == 1):
            raise InvalidInputError("the multinomial loss needs one +1 per row (the class) and -1 elsewhere")

    @classmethod
    def _targets(cls, Y):
        Y = np.asarray(Y, dtype=np.float64)
        cls.check_labels(Y)
        return 0.5 * (Y + 1.0)

    def values(self, A, Y):
        """``h(alpha_i, y_i)`` per sample; ``-inf`` outside the domain."""
        Q = self._targets(Y) - np.asarray(A, dtype=np.float64)
        out = -np.sum(_xlogx(Q), axis=1)
        bad = np.any(Q < -_FEASIBILITY_TOL, axis=1) | (np.abs(Q.sum(axis=1) - 1.0) > 1e-8)
        out[bad] = -np.inf
        return out

    def project(self, A, Y):
        """Nearest point of the domain: ``t - alpha`` projected on the simplex."""
        T = self._targets(Y)
        return T - _simplex_projection(T - np.asarray(A, dtype=np.float64))


class _CompiledLoss(_BaseLoss):
    """A classification loss whose value and gradient are the ``<name>_value`` and ``<name>_gradient`` loops
    (compiled, or their NumPy formulas; see :func:`_run`)."""

    def value(self, F, Y):
        F, Y = _as_pair(F, Y)
        return _run(f"{self.name}_value", F, Y)

    def gradient(self, F, Y):
        F, Y = _as_pair(F, Y)
        return _run(f"{self.name}_gradient", F, Y)

    def value_gradient_dual(self, F, Y):
        """``(value(F, Y), gradient(F, Y), conjugate.values(-gradient, Y))`` in one evaluation (one exponential per
        entry instead of three, no logarithm of the probabilities): what each pass of the ``newton`` solver needs
        for its certified duality gap; the labels are checked as ``conjugate.values`` checks them."""
        F, Y = _as_pair(F, Y)
        self.conjugate.check_labels(Y)
        return getattr(_np_formulas, f"{self.name}_terms")(F, Y)


class LogisticLoss(_CompiledLoss):
    """Binary logistic loss ``l(f, y) = sum_j log(1 + exp(-y_j f_j))``, labels ``y_j`` in {-1, +1}.

    Smooth, 1-Lipschitz per output; ``P(y = +1 | f) = 1 / (1 + exp(-f))`` (:meth:`probabilities`).
    With several columns the columns are independent binary problems (one-vs-rest).
    Used by :class:`skframe.models.SketchedKernelClassifier` (``loss="logistic"``).

    Examples
    --------
    >>> import numpy as np
    >>> float(LogisticLoss().value(np.array([[0.0]]), np.array([[1.0]]))[0]) == float(np.log(2))
    True
    """

    name = "logistic"
    __skframe_tags__ = LossTags(smooth=True, lipschitz=1.0, classification=True, default_solver="newton")
    conjugate = LogisticConjugate()

    def hessian(self, F, Y):
        """Second derivatives with respect to ``f_i``, shape (n, d, d) (diagonal: independent columns)."""
        F, Y = _as_pair(F, Y)
        H = _run("logistic_curvature", F, Y)
        out = np.zeros(H.shape + (H.shape[1],))
        j = np.arange(H.shape[1])
        out[:, j, j] = H
        return out

    def hessian_times(self, F, Y, U):
        """``H_i u_i`` per row (the Hessian never formed), shape (n, d)."""
        F, Y = _as_pair(F, Y)
        return _run("logistic_curvature", F, Y) * U

    def curvature(self, F, Y):
        """``("diagonal", c)``: ``H_i = diag(c_i)``, ``c`` of shape (n, d) (for the solvers' compiled Hessian
        passes, :mod:`skframe_solvers.newton_cg`)."""
        F, Y = _as_pair(F, Y)
        return "diagonal", _run("logistic_curvature", F, Y)

    @staticmethod
    def probabilities(F):
        """``P(y_j = +1 | f)`` per entry, shape of ``F``."""
        F = np.asarray(F, dtype=np.float64)
        return _np_formulas._sigmoid_neg(-F)


class MultinomialLoss(_CompiledLoss):
    """Multinomial logistic (softmax cross-entropy) loss over K outputs: ``log sum_j exp(f_j) - f_c``.

    The targets hold +1 for the class ``c`` and -1 elsewhere (one-of-K ±1 codes). One coupled loss on
    the K-vector output: a multiclass problem is solved as one problem, not K independent ones.
    Smooth; sqrt(2)-Lipschitz in the Euclidean norm; ``P(c | f) = softmax(f)_c`` (:meth:`probabilities`).
    The predictions are defined up to a common shift of the K outputs (the penalty picks the one
    whose outputs sum to zero over the training set's features).
    """

    name = "multinomial"
    #: ``l(f + c 1, y) = l(f, y)`` for every shift c: the Newton-CG preconditioner keeps its directions off the
    #: common shift of the outputs (:class:`skframe_solvers.newton_cg.SubsampledPreconditioner`)
    shift_invariant = True
    __skframe_tags__ = LossTags(smooth=True, lipschitz=math.sqrt(2.0), classification=True, one_of_k=True,
                                default_solver="newton")
    conjugate = MultinomialConjugate()

    def hessian(self, F, Y):
        """Second derivatives with respect to ``f_i``: ``diag(p_i) - p_i p_i^T``, shape (n, K, K)."""
        F, _ = _as_pair(F, Y)
        P = _np_formulas.softmax(F)
        out = -P[:, :, None] * P[:, None, :]
        j = np.arange(P.shape[1])
        out[:, j, j] += P
        return out

    def hessian_times(self, F, Y, U):
        """``H_i u_i = p_i * u_i - p_i <p_i, u_i>`` per row (the Hessian never formed), shape (n, K)."""
        F, _ = _as_pair(F, Y)
        P = _np_formulas.softmax(F)
        PU = P * U
        return PU - P * PU.sum(axis=1, keepdims=True)

    def curvature(self, F, Y):
        """``("softmax", P)``: ``H_i = diag(p_i) - p_i p_i^T`` with ``P`` the probabilities, shape (n, K) (for
        the solvers' compiled Hessian passes, :mod:`skframe_solvers.newton_cg`)."""
        F, _ = _as_pair(F, Y)
        return "softmax", _np_formulas.softmax(F)

    @staticmethod
    def probabilities(F):
        """Class probabilities ``softmax(f)`` per row, shape of ``F``."""
        return _np_formulas.softmax(np.asarray(F, dtype=np.float64))
