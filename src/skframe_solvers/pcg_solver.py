"""The registered ``"pcg"`` solver: preconditioned conjugate gradients over Nyström centres, as a solver.

A problem that carries Nyström centres (``problem.centres``, with ``problem.kernel``, ``problem.X``, ``problem.Y``
and ``problem.options``: the square loss over centres, which a fit builds when its plan picks conjugate gradients)
is solved by :meth:`skframe_solvers.pcg.NystromPCG.solve_centres`: passes over the rows, never the n x m features
nor their m x m sums. A problem of features (``problem.features()``: in memory or streamed) has nothing for
conjugate gradients to save: it is solved in closed form, as the ``"closed-form"`` solver solves it.
"""

from __future__ import annotations

import numpy as np

from skframe.plugin.api import Interval, InvalidParameterError, SolverTags
from skframe_solvers.closed_form import ClosedFormSolver
from skframe_solvers.pcg import NystromPCG

__all__ = ["PCGSolver"]


class PCGSolver(ClosedFormSolver):
    """The square loss over Nyström centres by preconditioned conjugate gradients (Falkon's preconditioner).

    Parameters
    ----------
    tol : float, default=1e-7
        Relative residual of the preconditioned normal equations at which the passes stop (every target).
    max_passes : int, default=25
        Passes over the rows at most, ``K^T y`` included.

    Notes
    -----
    Minimises ``(1/n) ||K alpha - y||^2 + lam alpha^T K_mm alpha`` over the coefficients ``alpha`` on the
    centres (``K = k(X, centres)``): the objective of :class:`skframe.models.SketchedKernelRidge` with a
    Nyström sketch, whose closed form it equals up to the reported residual. ``W`` of the result is ``alpha``
    (m x d); ``info`` holds the residual, the passes and their seconds. An output matrix other than the identity
    is refused on centres. A problem of features is solved in closed form (``init`` ignored).
    """

    name = "pcg"
    __skframe_tags__ = SolverTags(requires_square=True)
    _parameter_constraints = {"tol": [Interval("real", 0, None, closed="neither")],
                              "max_passes": [Interval("int", 2, None)]}

    def __init__(self, tol=1e-7, max_passes=25):
        self._set_params(locals())

    def solve(self, problem, loss, lam, *, M=None, rng=None, init=None, progress=None):
        """Return the :class:`skframe.contract.problems.SolveResult` (see the class's notes)."""
        centres = getattr(problem, "centres", None)
        if centres is None:
            return super().solve(problem, loss, lam, M=M, rng=rng, init=init, progress=progress)
        self._check_loss(loss)
        if M is not None and not np.allclose(np.asarray(M, dtype=float), np.eye(np.asarray(M).shape[0])):
            raise InvalidParameterError("the 'pcg' solver over Nyström centres takes no output matrix M; use "
                                        "solver='closed-form' on the sketched features")
        return NystromPCG(tol=self.tol, max_passes=self.max_passes).solve_centres(
            problem.kernel, problem.X, centres, problem.Y, self._check_lam(lam), init=init,
            options=getattr(problem, "options", None), progress=progress)
