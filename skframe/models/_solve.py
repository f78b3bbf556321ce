"""Step 6 of the fit core: call solvers (either contract), intercepts and λ paths."""

from __future__ import annotations

import inspect
import math

import numpy as np

from skframe.plugin.problems import SolveResult
from skframe.plugin.tags import get_tags

__all__ = ["solver_contract", "run_solver", "target_offset", "lam_path"]


def solver_contract(solver):
    """``"problem"`` for ``solve(problem, loss, lam, ...)``, ``"arrays"`` for the earlier ``solve(Z, Y, loss, lam, ...)``."""
    try:
        params = list(inspect.signature(solver.solve).parameters.values())
    except (TypeError, ValueError):
        return "problem"
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if positional and positional[0].name == "problem":
        return "problem"
    required = [p for p in positional if p.default is p.empty]
    return "arrays" if len(required) >= 4 else "problem"


def _accepts(func, name):
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def run_solver(solver, problem, loss, lam, *, M=None, rng=None, init=None, progress=None):
    """Call ``solver.solve`` under either contract and return a :class:`SolveResult`.

    Solvers written to the earlier contract ``solve(Z, Y, loss, lam, *, M=None, rng=None)``
    returning W get the problem's in-memory arrays; their ``history_``/``stop_reason_``/
    ``n_iter_`` attributes, when present, fill the result. A progress object with
    ``new_stage(description, total)`` (the CLI's progress bar) gets a stage for the
    solver's epochs or iterations; it is forwarded only to solvers that take ``progress``.
    """
    kwargs = {"M": M, "rng": rng}
    if init is not None and _accepts(solver.solve, "init"):
        kwargs["init"] = init
    new_stage = getattr(progress, "new_stage", None)
    if progress is not None and _accepts(solver.solve, "progress"):
        if new_stage is not None:
            epochs = getattr(solver, "epochs", None) or getattr(solver, "max_epochs", None)
            total = epochs or getattr(solver, "max_iter", None)
            new_stage(f"{getattr(solver, 'name', 'solver')} {'epochs' if epochs else 'iterations'}", total)
            kwargs["progress"] = progress
    if solver_contract(solver) == "problem":
        out = solver.solve(problem, loss, lam, **kwargs)
        if isinstance(out, SolveResult):
            return out
        return SolveResult(W=np.asarray(out))
    Z, Y = problem.features()
    W = solver.solve(Z, Y, loss, lam, **kwargs)
    return SolveResult(
        W=np.asarray(W),
        history=list(getattr(solver, "history_", []) or []),
        stop_reason=getattr(solver, "stop_reason_", None),
        n_iter=int(getattr(solver, "n_iter_", 0) or 0),
    )


def target_offset(Y, loss=None, fit_intercept=True):
    """The intercept subtracted from the targets before solving and added back at prediction.

    Zeros when ``fit_intercept`` is False. Otherwise the constant that best fits the
    targets under the loss, by capability: the per-level sample quantiles for a loss
    with ``quantiles`` (pinball), the column medians for a loss with a finite Lipschitz
    constant (Huber, epsilon-insensitive: robust to outliers), the column means otherwise
    (square loss, as scikit-learn's linear models).

    Returns
    -------
    ndarray of shape (d,)
    """
    Y = np.asarray(Y, dtype=np.float64)
    d = Y.shape[1]
    if not fit_intercept:
        return np.zeros(d)
    tags = get_tags(loss, "loss") if loss is not None else None
    levels = tags.quantiles if tags is not None else None
    if levels is not None and len(levels) == d:
        return np.array([np.quantile(Y[:, j], float(t)) for j, t in enumerate(levels)])
    if tags is not None and math.isfinite(tags.lipschitz):
        return np.median(Y, axis=0)
    return Y.mean(axis=0)


def lam_path(lam):
    """The regularisation values to fit, in order: ``[lam]`` or the given sequence."""
    if isinstance(lam, (list, tuple, np.ndarray)):
        return [float(v) for v in np.asarray(lam, dtype=float).ravel()]
    return [float(lam)]
