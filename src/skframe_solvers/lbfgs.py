"""L-BFGS solver (scipy's L-BFGS-B) for the smooth losses."""

from __future__ import annotations

from skframe.plugin.api import Interval, SolverTags
from skframe_solvers._base import COUNT, INIT, INIT_HINT, BaseSolver

__all__ = ["LBFGSSolver"]


class LBFGSSolver(BaseSolver):
    """L-BFGS-B (scipy) on the feature-map problem, for smooth losses.

    Each function evaluation is one pass over the rows (block by block when the problem
    streams). The result's ``info`` holds the primal objective, the dual objective of the
    dual point built from the final gradient and the duality gap between them (an upper
    bound on the distance to the optimum, zero at the optimum of a smooth loss).

    Parameters
    ----------
    max_iter : int, default=1000
    tol : float, default=1e-8
        ``gtol`` and ``ftol`` of scipy's L-BFGS-B (stop when the relative decrease of the
        objective or the largest gradient entry falls below it).
    init : {"ridge", "zeros"}, default="ridge"
        Start from the square-loss closed form (same M and lam) or from zero; an ``init``
        array given to ``solve`` (warm start) takes precedence.
    """

    name = "lbfgs"
    __skframe_tags__ = SolverTags(requires_smooth=True)
    _parameter_constraints = {"max_iter": COUNT, "tol": [Interval("real", 0, None)], "init": INIT}
    _parameter_hints = {"init": INIT_HINT}

    def __init__(self, max_iter=1000, tol=1e-8, init="ridge"):
        self._set_params(locals())

    def solve(self, problem, loss, lam, *, M=None, rng=None, init=None, progress=None):
        """Minimise the feature-map objective; ``progress(1)`` is called after each iteration."""
        import scipy.optimize as sopt  # lazy: scipy.optimize takes 0.35 s to import; only L-BFGS needs it

        fp = self._problem(problem, loss, lam, M)
        shape = fp.shape
        V0 = self._start(fp, init, self.init)
        last = {}

        def fun(v):
            val, g = fp.value_and_grad(v.reshape(shape))
            last["f"] = val
            return val, g.ravel()

        hist = [fp.objective(V0)]

        def on_iteration(xk):
            hist.append(last.get("f", float("nan")))
            if progress is not None:
                progress(1)

        res = sopt.minimize(fun, V0.ravel(), jac=True, method="L-BFGS-B", callback=on_iteration,
                            options={"maxiter": self.max_iter, "gtol": self.tol, "ftol": self.tol})
        V = res.x.reshape(shape)
        msg = res.message.decode() if isinstance(res.message, bytes) else str(res.message)
        result = self._result(fp, V, hist, "", int(res.nit), {"function_evaluations": int(res.nfev)})
        gap = result.info.get("relative_gap")
        tail = "" if gap is None else f" (relative duality gap {gap:.2e})"
        result.stop_reason = ("converged: " if res.success else "not converged: ") + msg + tail
        return result
