"""Shared parts of the built-in solvers: parameter display, lambda check, start point, result."""

from __future__ import annotations

import numpy as np

from skframe._validation import check_scalar
from skframe.exceptions import InvalidParameterError
from skframe.problems import SolveResult
from skframe.protocols import Solver

from ._duality import gap_report
from ._problem import FeatureMapProblem

__all__ = ["BaseSolver", "check_init"]


def check_init(init):
    """``init`` parameter of a solver: ``"ridge"`` or ``"zeros"``."""
    if init not in ("ridge", "zeros"):
        raise InvalidParameterError(f"init={init!r}; use 'ridge' (square-loss closed form) or 'zeros'")
    return init


class BaseSolver(Solver):
    """Base of the built-in solvers: they keep only their parameters, never run state.

    ``solve(problem, loss, lam, *, M=None, rng=None, init=None, progress=None)`` returns a
    :class:`skframe.problems.SolveResult`; ``init`` (an (r, d) array, e.g. the previous
    solution on a regularisation path) overrides the solver's own start point.
    """

    name = "solver"

    @property
    def params(self):
        return {}

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{type(self).__name__}({args})"

    def _check_lam(self, lam):
        return check_scalar(lam, "lam", low=0, low_inclusive=False, fix="lam must be > 0, e.g. 1e-3")

    def _problem(self, problem, loss, lam, M, Y=None):
        return FeatureMapProblem(problem, loss, self._check_lam(lam), M, Y=Y)

    @staticmethod
    def _start(fp, init, default):
        """Start point V: ``init`` (a W) when given, else the square-loss closed form or zero."""
        if init is not None:
            return fp.from_W(init)
        return fp.ridge_V() if default == "ridge" else np.zeros(fp.shape)

    @staticmethod
    def _result(fp, V, history, stop_reason, n_iter, info=None, certificate=True):
        """Build the SolveResult; adds the duality gap at V when the loss has a ``dual``."""
        info = dict(info or {})
        if certificate:
            rep = gap_report(fp, V)
            if rep is not None:
                info.update(rep)
        return SolveResult(W=fp.to_W(V), history=[float(h) for h in history], stop_reason=stop_reason,
                           n_iter=int(n_iter), info=info)
