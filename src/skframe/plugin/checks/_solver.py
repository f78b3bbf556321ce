"""The solver check: square-loss optima with and without an output matrix, streamed problems, requirements."""

from __future__ import annotations

import math

import numpy as np

from skframe.contract.problems import ArrayProblem, Problem, SolveResult
from skframe.contract.registry import get_component
from skframe.contract.tags import LossTags
from skframe.exceptions import PluginError, SkframeError
from skframe.plugin.checks._common import (
    _attributes,
    _checking,
    _copies,
    _json_ready,
    _no_state_change,
    _params_of,
    _rebuilt_alike,
    _same_params,
    _worst,
)


# ----------------------------------------------------------------------------- solvers
class _Streamed(Problem):
    """The same features, in blocks of 7 rows, without ``features()``."""

    def __init__(self, Z, Y):
        self._Z, self._Y = Z, Y

    n = property(lambda self: self._Z.shape[0])
    r = property(lambda self: self._Z.shape[1])
    d = property(lambda self: self._Y.shape[1])

    def blocks(self, chunk_rows=None):
        step = chunk_rows or 7
        for start in range(0, self.n, step):
            yield start, self._Z[start:start + step], self._Y[start:start + step]


class _AbsoluteLoss:
    """sum_j |f_j - y_j|: neither smooth, nor square, nor with a dual (what solvers may refuse)."""

    params = {}

    def __skframe_tags__(self):
        return LossTags(lipschitz=math.inf)

    def value(self, F, Y):
        return np.abs(np.asarray(F) - np.asarray(Y)).sum(axis=1)

    def gradient(self, F, Y):
        return np.sign(np.asarray(F) - np.asarray(Y))


#: what the solver check evaluates (besides the properties of every kind)
PROPERTIES = ("solve", "SolveResult.history", "SolveResult.info", "no run state", "streamed problem", "tag in_memory",
              "tag requires_smooth", "tag requires_square", "tag requires_dual")


def _objective(Z, Y, W, M, lam):
    F = Z @ W @ M
    return 0.5 * np.mean(((F - Y) ** 2).sum(axis=1)) + 0.5 * lam * np.trace(W @ M @ W.T)


def _optimum(Z, Y, M, lam):
    n, r = Z.shape
    A, B = Z.T @ Z / n, Z.T @ Y / n
    # (1/n) Z^T Z W M + lam W = (1/n) Z^T Y, column-major vec: (M ⊗ A + lam I) vec(W) = vec(B)
    vec = np.linalg.solve(np.kron(M, A) + lam * np.eye(r * M.shape[0]), B.reshape(-1, order="F"))
    return vec.reshape((r, M.shape[0]), order="F")


def check_solver(solver, *, params=None, rng=0, rtol=0.05):
    """Check a solver (or solver class, built with ``params``) on small square-loss problems.

    Parameters
    ----------
    solver : solver object or class
    rng : int or numpy.random.Generator, default 0
    rtol : float, default 0.05
        Largest relative suboptimality ``(J(W) - J*) / (J(0) - J*)`` accepted.

    Returns
    -------
    SolverTags
    """
    with _checking("solver", solver, params, rng, PROPERTIES) as (solver, fail, tags, gen):
        n, r, d, lam = 60, 5, 2, 1e-2
        Z = gen.standard_normal((n, r))
        Y = Z @ gen.standard_normal((r, d)) + 0.3 * gen.standard_normal((n, d))
        square = get_component("loss", "square")
        before = _attributes(solver)

        def run(problem, M=None, init=None, loss=square):
            res = solver.solve(problem, loss, lam, M=M, rng=np.random.default_rng(3), init=init)
            fail.require(isinstance(res, SolveResult), "solve", f"solve returned {type(res).__name__}",
                         "return a SolveResult (skframe.plugin.api.SolveResult)")
            return res

        for M in (None, np.array([[1.0, 0.5], [0.5, 1.0]])):
            Mx = np.eye(d) if M is None else M
            J0, W_star = _objective(Z, Y, np.zeros((r, d)), Mx, lam), _optimum(Z, Y, Mx, lam)
            J_star = _objective(Z, Y, W_star, Mx, lam)
            with_M = "" if M is None else " with an output matrix M"
            for init, start in ((None, "its own start"), (W_star, "the optimum (init)")):
                res = run(ArrayProblem(Z, Y), M=M, init=init)
                W = np.asarray(res.W)
                fail.require(W.shape == (r, d) and np.all(np.isfinite(W)), "solve", f"W has shape {W.shape}",
                             f"return finite weights of shape (problem.r, problem.d) = ({r}, {d})")
                sub = (_objective(Z, Y, W, Mx, lam) - J_star) / (J0 - J_star)
                fail.require(sub <= rtol, "solve", f"from {start}{with_M} the relative suboptimality on a square-loss "
                             f"problem is {sub:.3g} > {rtol}",
                             "minimise (1/n) sum_i loss(z_i W M, y_i) + (lam/2) tr(W M W^T), M the output matrix")
            history_ok = isinstance(res.history, list) and all(isinstance(h, (int, float)) for h in res.history)
            fail.require(history_ok, "SolveResult.history", f"history={res.history!r}", "give a list of floats")
            fail.require(_json_ready(res.info) is None, "SolveResult.info", f"info={res.info!r} is not JSON-ready",
                         "give JSON values")
        _no_state_change(fail, solver, before, "solve")
        streamed = _Streamed(Z, Y)
        if tags.in_memory:
            _refused(fail, lambda: solver.solve(streamed, square, lam), "tag in_memory", "a streamed problem")
        else:
            W_mem = np.asarray(run(ArrayProblem(Z, Y)).W)
            try:
                W_str = np.asarray(run(streamed).W)
            except PluginError:
                raise
            except Exception as exc:  # the kit reports what a streamed problem breaks
                fail("streamed problem", f"solve on a streamed problem (features() is None) raised "
                     f"{type(exc).__name__}: {exc}",
                     "read the features through problem.blocks(), or declare SolverTags(in_memory=True)")
            J_star = _objective(Z, Y, _optimum(Z, Y, np.eye(d), lam), np.eye(d), lam)
            J0 = _objective(Z, Y, np.zeros((r, d)), np.eye(d), lam)
            sub = (_objective(Z, Y, W_str, np.eye(d), lam) - J_star) / (J0 - J_star)
            fail.require(sub <= rtol, "streamed problem", f"on a streamed problem (features() is None) the relative "
                         f"suboptimality is {sub:.3g} (in memory: weights {_worst(W_mem, W_str)})",
                         "read the features through problem.blocks(), or declare SolverTags(in_memory=True)")
        if tags.requires_smooth or tags.requires_square or tags.requires_dual:
            which = [t for t in ("requires_smooth", "requires_square", "requires_dual") if getattr(tags, t)]
            _refused(fail, lambda: solver.solve(ArrayProblem(Z, Y), _AbsoluteLoss(), lam), f"tag {which[0]}",
                     "a loss that is neither smooth, nor square, nor with a dual")
        for other, prop, how in _copies(fail, solver, "solver"):
            _rebuilt_alike(fail, _same_params(_params_of(other), _params_of(solver)), prop,
                           f"the solver {how} has other params")
    return tags


check_solver.properties = PROPERTIES  # read by skframe.plugin.checks.PROPERTIES


def _refused(fail, call, prop, what):
    try:
        call()
    except SkframeError:
        return
    except Exception as exc:  # the kit reports any other error as a failure
        fail.require(False, prop, f"solve on {what} raised {type(exc).__name__}: {exc}",
                     "raise a skframe exception (skframe.plugin.api.InvalidParameterError) naming the requirement")
        return
    fail.require(False, prop, f"solve accepted {what}, which its tags exclude",
                 "check the requirement in solve and raise InvalidParameterError, or relax the tag")
