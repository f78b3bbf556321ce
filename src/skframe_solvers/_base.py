"""Shared parts of the built-in solvers: parameter display, lambda check, start point, result."""

from __future__ import annotations

import warnings

import numpy as np

from skframe.plugin.api import (
    Interval,
    InvalidInputError,
    InvalidParameterError,
    Options,
    Solver,
    SolveResult,
    SolverTags,
    get_tags,
    repr_from_params,
    validate_component,
)
from skframe.plugin.toolbox import check_param
from skframe_solvers._batched import BatchItem, batched_admm
from skframe_solvers._duality import gap_report
from skframe_solvers._problem import FeatureMapProblem
from skframe_solvers._weighted import WeightedRowsLoss, takes_box_weights

__all__ = ["refuse_weights", "BaseSolver", "DualSolverMixin", "INIT", "POSITIVE", "COUNT", "LOSS_REQUIREMENTS"]

#: the ``init`` parameter of the iterative solvers
INIT = [Options("ridge", "zeros")]
INIT_HINT = "'ridge' starts from the square-loss closed form, 'zeros' from zero"
#: a positive real number (tolerances, step sizes)
POSITIVE = [Interval("real", 0, None, closed="neither")]
#: a positive integer (iterations, epochs, sizes)
COUNT = [Interval("int", 1, None)]

#: what a solver's tags may require of the loss: (solver tag, loss tag, what the solver needs, the alternatives)
LOSS_REQUIREMENTS = (
    ("requires_square", "square", "only handles the square loss",
     "use solver='dual-cd' (any built-in loss), 'lbfgs' (smooth losses) or 'adam'"),
    ("requires_smooth", "smooth", "needs a smooth loss (differentiable everywhere)", "use solver='dual-cd' or 'adam'"),
)


def refuse_weights(fp, name):
    """A clear error for a solver that takes no per-row weights for this loss yet (rather than ignoring them)."""
    if fp.weights is not None:
        raise InvalidParameterError(
            f"solver {name!r} takes no sample weights with the {getattr(fp.loss, 'name', 'given')!r} loss yet; "
            "use solver='adam', 'lbfgs' (smooth losses) or 'newton' (logistic, multinomial, square), which take "
            "them, or the hinge or pinball loss, whose dual solvers take them"
        )


class BaseSolver(Solver):
    """Base of the built-in solvers: they keep only their parameters, never run state.

    ``solve(problem, loss, lam, *, M=None, rng=None, init=None, progress=None)`` returns a
    :class:`skframe.contract.problems.SolveResult`; ``init`` (an (r, d) array, e.g. the previous
    solution on a regularisation path) overrides the solver's own start point.
    """

    name = "solver"
    __skframe_tags__ = SolverTags()
    _parameter_constraints = {}
    _parameter_hints = {}

    @property
    def params(self):
        return {name: getattr(self, name) for name in self._parameter_constraints}

    __repr__ = repr_from_params

    def _check_lam(self, lam):
        return float(check_param("lam", lam, POSITIVE, hint="lam must be > 0, e.g. 1e-3"))

    def _set_params(self, values):
        """Store the constructor arguments ``values`` (``locals()``) and check their declared constraints."""
        for name in self._parameter_constraints:
            setattr(self, name, values[name])
        validate_component(self)

    def _check_loss(self, loss):
        """Refuse a loss that lacks what the solver's tags require of it (:data:`LOSS_REQUIREMENTS`)."""
        tags, loss_tags = get_tags(self, "solver"), get_tags(loss, "loss")
        for requirement, capability, needs, alternatives in LOSS_REQUIREMENTS:
            if getattr(tags, requirement) and not getattr(loss_tags, capability):
                raise InvalidParameterError(
                    f"solver {self.name!r} {needs}, not {getattr(loss, 'name', type(loss).__name__)!r}; {alternatives}"
                )

    def _problem(self, problem, loss, lam, M, Y=None, factored=False):
        """The solver's view of the problem, once the loss and ``lam`` are checked (``factored``: the solver reads
        features kept as two factors apart, :class:`FeatureMapProblem`)."""
        self._check_loss(loss)
        return FeatureMapProblem(problem, loss, self._check_lam(lam), M, Y=Y, factored=factored)

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


class DualSolverMixin:
    """Checks and reporting shared by the solvers that stop on the duality gap (dual-cd, admm).

    Both need the loss's dual and the features in memory (their tags), and stop when the
    relative duality gap is at most ``tol`` (their first parameter).

    Batched solves, a capability the λ paths of model selection ask for: ``batchable`` is True when the
    solver's iterations are ADMM iterations that :func:`skframe_solvers._batched.batched_admm` runs for many
    problems at once (the solver's ``_batch_settings()``, None otherwise), and ``solve_batch(jobs)`` then solves
    them, each certified as its own ``solve`` certifies it.
    """

    __skframe_tags__ = SolverTags(requires_dual=True, in_memory=True)
    _parameter_constraints = {"tol": POSITIVE}
    _parameter_hints = {"tol": "tol must be > 0, e.g. 1e-4"}

    #: what the solver does per sample, for the in-memory error message
    needs_memory_because = "needs the features in memory"

    def _dual_problem(self, problem, loss, lam, M):
        """FeatureMapProblem and ``loss.dual``; clear errors for a loss without dual or a streamed problem."""
        dual = getattr(loss, "dual", None)
        if dual is None or getattr(dual, "structure", None) not in ("norm", "separable"):  # SolverTags.requires_dual
            raise InvalidParameterError(
                f"solver {self.name!r} needs the loss's Fenchel dual (a 'dual' capability), which "
                f"{getattr(loss, 'name', type(loss).__name__)!r} does not declare; use solver='lbfgs' or 'adam'"
            )
        fp = self._problem(problem, loss, lam, M)
        if fp.weights is not None and takes_box_weights(dual):  # hinge, pinball: the weights scale the dual box
            fp.loss, fp.weights = WeightedRowsLoss(loss, fp.weights), None
            dual = fp.loss.dual
        refuse_weights(fp, self.name)
        if not fp.in_memory:
            raise InvalidInputError(
                f"solver {self.name!r} {self.needs_memory_because}, but this problem streams them "
                "(problem.features() is None); use solver='adam' (mini-batches) or 'lbfgs' (full passes) for "
                "streamed data"
            )
        return fp, dual

    def _batch_settings(self):
        """``(batched_admm settings, iteration unit, cap parameter, extra info)``, or None: one problem at a time."""
        return None

    @property
    def batchable(self):
        """Whether :meth:`solve_batch` solves many problems in one loop with these parameters."""
        return self._batch_settings() is not None

    def solve_batch(self, jobs):
        """Solve many problems in one batched ADMM loop (the solver's own iterations, stacked).

        Parameters
        ----------
        jobs : list of (problem, loss, lam, M, group)
            ``solve``'s arguments per problem; problems of one ``group`` share their features (a fold of a
            λ path), whose eigendecomposition is then computed once.

        Returns
        -------
        list
            Per job, in order: its :class:`SolveResult` (stopped at the certified relative duality gap ``tol``,
            as ``solve`` stops), or the exception its set-up raised (e.g. a loss without a dual).
        """
        settings = self._batch_settings()
        if settings is None:
            raise InvalidParameterError(f"solver {self.name!r} with these parameters solves one problem at a time "
                                        "(batchable is False); call solve for each problem")
        params, unit, cap_name, extra = settings
        results, batches = [None] * len(jobs), {}
        for i, (problem, loss, lam, M, group) in enumerate(jobs):
            try:
                fp, dual = self._dual_problem(problem, loss, float(lam), M)
            except Exception as exc:
                results[i] = exc
                continue
            key = (fp.C.shape, fp.C.tobytes())  # one batch per output factor (the same for every job in practice)
            batches.setdefault(key, []).append((i, BatchItem(fp, dual, group)))
        for batch in batches.values():
            solved = batched_admm([item for _, item in batch], **params)
            for (i, item), sol in zip(batch, solved):
                results[i] = self._gap_result(item.fp, sol["V"], sol["trace"], sol["n_iter"], unit,
                                              params["max_iter"], cap_name, dict(extra, rho=sol["rho"]))
        return results

    def _gap_result(self, fp, V, trace, count, unit, cap, cap_name, extra=None, name=None):
        """SolveResult from the per-check ``trace`` [(P, D, relative gap)]; warns when the cap was hit."""
        P, D, gap = trace[-1] if trace else (float("nan"),) * 3
        converged = bool(trace) and gap <= self.tol
        info = {"primal": float(P), "dual": float(D), "gap": float(P - D), "relative_gap": float(gap),
                unit: int(count), "gap_history": [float(t[2]) for t in trace],
                "dual_history": [float(t[1]) for t in trace], **(extra or {})}
        if converged:
            reason = f"converged: relative duality gap {gap:.2e} <= tol={self.tol} after {count} {unit}"
        else:
            reason = (f"reached the maximum number of {unit} ({cap}) with relative duality gap {gap:.2e} > "
                      f"tol={self.tol}; raise {cap_name}")
            from sklearn.exceptions import ConvergenceWarning  # lazy: scikit-learn takes ~1 s to import

            warnings.warn(f"{name or self.name} {reason}", ConvergenceWarning, stacklevel=3)
        return self._result(fp, V, [t[0] for t in trace], reason, count, info, certificate=False)
