"""Step 6 of the fit core: call solvers on a problem, intercepts and λ paths."""

from __future__ import annotations

import inspect
import math

import numpy as np

from skframe.compute.distributed import column_means, column_quantiles
from skframe.contract.problems import SolveResult
from skframe.contract.tags import get_tags
from skframe.deps import is_dask_collection
from skframe.exceptions import InvalidParameterError

__all__ = ["run_solver", "target_offset", "lam_path"]


def _accepts(func, name):
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def run_solver(solver, problem, loss, lam, *, M=None, rng=None, init=None, progress=None):
    """Call ``solver.solve(problem, loss, lam, ...)`` and return a :class:`SolveResult`.

    A solver that returns a bare weight matrix gets it wrapped. A progress object with
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
    out = solver.solve(problem, loss, lam, **kwargs)
    return out if isinstance(out, SolveResult) else SolveResult(W=np.asarray(out))


def target_offset(Y, loss=None, fit_intercept=True, sample_weight=None):
    """The intercept subtracted from the targets before solving and added back at prediction.

    Zeros when ``fit_intercept`` is False. Otherwise the constant that best fits the
    targets under the loss, by capability: the per-level sample quantiles for a loss
    with ``quantiles`` (pinball), the column medians for a loss with a finite Lipschitz
    constant (Huber, epsilon-insensitive: robust to outliers), the column means otherwise
    (square loss, as scikit-learn's linear models). With ``sample_weight`` the mean is weighted and the
    quantiles are those of the weighted empirical distribution (``inverted_cdf``).

    Returns
    -------
    ndarray of shape (d,)
    """
    dask = is_dask_collection(Y)  # targets on a Dask cluster: the workers reduce them (no n rows on the client)
    Y = Y if dask else np.asarray(Y, dtype=np.float64)
    d = Y.shape[1]
    if not fit_intercept:
        return np.zeros(d)
    tags = get_tags(loss, "loss") if loss is not None else None
    levels = tags.quantiles if tags is not None else None
    if sample_weight is not None and not dask:
        return _weighted_offset(Y, tags, levels, np.asarray(sample_weight, dtype=np.float64))
    if sample_weight is not None:  # targets on a Dask cluster: the weighted mean by the workers
        if (levels is not None and len(levels) == d) or (tags is not None and math.isfinite(tags.lipschitz)):
            raise InvalidParameterError(
                "sample_weight with Dask targets and a loss whose intercept is a weighted quantile or median: "
                "that statistic is not computed on the cluster; fit with fit_intercept=False (centre the targets "
                "yourself), or on NumPy arrays")
        return column_means(Y, weights=sample_weight)
    if levels is not None and len(levels) == d:
        if dask:
            return column_quantiles(Y, [float(t) for t in levels])
        return np.array([np.quantile(Y[:, j], float(t)) for j, t in enumerate(levels)])
    if tags is not None and math.isfinite(tags.lipschitz):
        return column_quantiles(Y, [0.5] * d) if dask else np.median(Y, axis=0)
    return column_means(Y) if dask else Y.mean(axis=0)


def _weighted_offset(Y, tags, levels, w):
    d = Y.shape[1]
    if levels is not None and len(levels) == d:
        taus = [float(t) for t in levels]
    elif tags is not None and math.isfinite(tags.lipschitz):
        taus = [0.5] * d
    else:
        return np.average(Y, axis=0, weights=w)
    return np.array([np.quantile(Y[:, j], t, weights=w, method="inverted_cdf") for j, t in enumerate(taus)])


def lam_path(lam):
    """The regularisation values to fit, in order: ``[lam]`` or the given sequence."""
    if isinstance(lam, (list, tuple, np.ndarray)):
        return [float(v) for v in np.asarray(lam, dtype=float).ravel()]
    return [float(lam)]
