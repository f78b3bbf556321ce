"""Closed-form solver of the square loss."""

from __future__ import annotations

from skframe.plugin.api import SolverTags
from skframe_solvers._base import BaseSolver

__all__ = ["ClosedFormSolver"]


class ClosedFormSolver(BaseSolver):
    """Exact minimiser for the square loss ``1/2 ||f - y||^2`` (r x r linear system).

    With ``M = I``: ``W = (Z^T Z + n lam I)^{-1} Z^T Y`` (Cholesky, eigen fallback), exactly
    :class:`skframe.models.SketchedKernelRidge`. With a general M the system decouples in
    M's eigenbasis: ``(s_j Z^T Z + n lam I) v_j = sqrt(s_j) Z^T Y q_j``. A streamed problem
    is reduced to its accumulated products ``Z^T Z`` and ``Z^T Y`` (``problem.gram()``).
    Any other loss raises :class:`skframe.exceptions.InvalidParameterError`; ``init`` is
    ignored (the solution is exact).
    """

    name = "closed-form"
    __skframe_tags__ = SolverTags(requires_square=True)

    def solve(self, problem, loss, lam, *, M=None, rng=None, init=None, progress=None):
        """Return the :class:`skframe.contract.problems.SolveResult` of the exact minimiser."""
        fp = self._problem(problem, loss, lam, M)
        V = fp.ridge_V()
        if progress is not None:
            progress(1)
        return self._result(fp, V, [fp.objective(V)], "closed form (exact minimiser)", 1, certificate=False)
