"""The square loss over Nyström centres by conjugate gradients: the fit's path where its plan picks them.

Where the execution plan finds preconditioned conjugate gradients cheaper than the closed form
(:func:`skframe.compute.plan_square.choose_square_solver`: a sketch that samples its m centres, many centres, the
CPU, the m x m preconditioner within the budget), a square-loss fit (:class:`skframe.models.SketchedKernelRidge`)
draws its sketch, keeps the m sampled rows as centres and solves
``min (1/n) ||k(X, C) alpha - y||^2 + lam alpha^T k(C, C) alpha`` with the registered ``"pcg"`` solver
(Falkon's preconditioner; passes over the rows, each kernel entry computed once per pass): never the n x m
features nor their n m^2 sums. The model is the Nyström model the closed form gives, to the reported residual.

The fit keeps the closed form where the conjugate gradients cannot run (:func:`centres_blocker`): sample weights
(the passes are unweighted), inputs that are not one dense NumPy array, a sketch object the plan did not size.
``lam="auto"`` (:func:`choose_lam_centres`): λ is chosen by the square loss's k folds on the closed form over
``min(m, auto rule)`` centres of the same rows (the fit ``lam="auto"`` runs at the automatic size), then the m
centres are solved once by conjugate gradients at the largest λ whose held-out error is within
:data:`PCG_LAM_TIE` of the least: the passes converge much faster at a larger λ (on ``nycflights13::flights``,
40 000 rows and 1 500 centres: 25 passes reach a residual of 4e-6 at λ = 5e-6 and 0.07 at λ = 5e-8, whose
held-out errors differ by about 1 %).
"""

from __future__ import annotations

import contextlib
import contextvars
import copy
import warnings
from dataclasses import replace

import numpy as np

from skframe.compute.plan_rules import AUTO_MAX, auto_size_rule
from skframe.compute.plan_square import grown_auto_size
from skframe.contract.registry import get_component
from skframe.contract.specs import ComponentSpec
from skframe.core.sketching import draw_sketch
from skframe.exceptions import InvalidParameterError
from skframe.models._core import Representation

__all__ = ["CentresProblem", "CentresRepresentation", "PCG_TOL", "PCG_LAM_TIE", "centres_blocker", "features_only",
           "grow_plan", "settle_square_solver", "centres_representation", "solve_centres", "choose_lam_centres"]

#: relative residual at which the fit's conjugate gradients stop (:class:`skframe_solvers.pcg.NystromPCG`)
PCG_TOL = 1e-7
#: ``lam="auto"`` over centres takes the largest lam whose held-out error is within this share of the least
PCG_LAM_TIE = 0.01
#: set within :func:`features_only`
_FEATURES_ONLY = contextvars.ContextVar("skframe_features_only", default=False)


class CentresProblem:
    """The square loss over centres as the ``"pcg"`` solver reads it: ``kernel``, ``X`` (n rows), ``centres``
    (m rows), ``Y`` (n, d) and the plan's ``options`` for the passes."""

    in_memory = False

    def __init__(self, kernel, X, centres, Y, options):
        self.kernel, self.X, self.centres, self.options = kernel, X, centres, options
        self.Y = Y if Y.ndim == 2 else Y[:, None]
        self.n, self.r, self.d = int(X.shape[0]), int(centres.shape[0]), int(self.Y.shape[1])

    def features(self):
        """None: the n x m features are never formed."""
        return None


class CentresRepresentation(Representation):
    """A fit's training representation of kind ``"centres"``: the sampled rows, no features (``Z`` None).

    ``expansion(W)`` is ``{"coef_": W, "X_fit_": centres}``: the solver's coefficients are on the centres."""

    def __init__(self, centres, info, kernel, X, options):
        super().__init__("centres", None, info, X_basis=centres)
        self.kernel, self.X, self.options = kernel, X, options

    def problem(self, Y):
        """The :class:`CentresProblem` of the targets ``Y``."""
        return CentresProblem(self.kernel, self.X, self.X_basis, Y, self.options)


@contextlib.contextmanager
def features_only():
    """Within it, fits keep the square loss's closed form over their features (the λ paths of model selection
    read them); their ``"auto"`` size is not grown."""
    token = _FEATURES_ONLY.set(True)
    try:
        yield
    finally:
        _FEATURES_ONLY.reset(token)


def centres_blocker(estimator, X, sample_weight=None):
    """Why a fit of ``estimator`` on ``X`` cannot run conjugate gradients over centres (a phrase), or None."""
    if not getattr(estimator, "_solves_centres", False):
        return "this model solves its square loss in closed form"
    if _FEATURES_ONLY.get():
        return "a λ path of model selection reads the fit's features"
    if sample_weight is not None:
        return "sample weights are given (the conjugate-gradient passes are unweighted)"
    if not isinstance(X, np.ndarray) or X.ndim != 2 or X.dtype.kind != "f":
        return "the inputs are not one dense NumPy float array"
    if not isinstance(estimator.sketch, str):
        return "the sketch is an object (the plan sizes named sketches)"
    return None


def grow_plan(plan, estimator, X, sample_weight, replan):
    """The square-loss ``plan`` of a fit of ``estimator`` on ``X`` with its ``"auto"`` size grown past the sqrt(n)
    rule's cap where its centres are solved by conjugate gradients
    (:func:`skframe.compute.plan_square.grown_auto_size`), or ``plan`` unchanged. ``replan(size)``: the plan at
    that size, whose solver must be ``"pcg"``."""
    n = int(plan.n)
    if (plan.sketch_size != AUTO_MAX or not plan.size_rule.startswith("auto") or auto_size_rule(n) != AUTO_MAX
            or centres_blocker(estimator, X, sample_weight) is not None):
        return plan
    target, why = grown_auto_size(n, plan.memory_budget, plan.backend)
    if target is None:
        return plan
    grown = replan(target)
    if not grown.reasons.get("square_solver", "").startswith("pcg"):
        return plan
    rule = f"{plan.size_rule}; {why}"
    return replace(grown, size_rule=rule, reasons=dict(grown.reasons, sketch_size=rule))


def settle_square_solver(fit):
    """True when the fit runs conjugate gradients: its plan's ``square_solver`` is ``"pcg"`` and nothing in
    :func:`centres_blocker` stops them; otherwise the plan's reason is rewritten to the closed form and why."""
    reason = fit.plan.reasons.get("square_solver", "")
    if fit.recipe.loss is not None or not reason.startswith("pcg"):
        return False
    blocker = centres_blocker(fit.estimator, fit.X, fit.sample_weight) if fit.recipe.centres else \
        "this model solves its square loss in closed form"
    if blocker is None:
        return True
    reasons = dict(fit.plan.reasons, square_solver=f"closed-form: {blocker}; {reason}")
    fit.plan = replace(fit.plan, reasons=reasons)
    return False


def centres_representation(fit):
    """Draw the fit's sketch and keep its sampled rows as centres (:class:`CentresRepresentation`), or None
    when the draw mixes more rows than it has columns (then the features are built as usual)."""
    n = fit.n
    R = draw_sketch(fit.sketch, n, fit.rngs[0], X=fit.X, kernel=fit.kernel)
    if R.s_prime != R.m:
        return None
    centres = np.ascontiguousarray(fit.X[np.asarray(R.indices)], dtype=np.float64)
    info = dict(R.summary(), rank=int(R.m), representation="centres")
    if fit.progress is not None:
        fit.progress(n)
    return CentresRepresentation(centres, info, fit.kernel, fit.X, fit.options)


def solve_centres(rep, Y, lam, init=None, progress=None):
    """The :class:`~skframe.contract.problems.SolveResult` of the square loss over ``rep``'s centres at ``lam``
    by the registered ``"pcg"`` solver; ``info`` names it, with its residual, passes and stop reason."""
    solver = get_component("solver", ComponentSpec("solver", "pcg", {"tol": PCG_TOL}))
    square = get_component("loss", ComponentSpec("loss", "square", {}))
    res = solver.solve(rep.problem(Y), square, float(lam), init=init, progress=progress)
    info = dict(res.info, solver="pcg", stop_reason=res.stop_reason)
    return replace(res, info=info)


def choose_lam_centres(fit, choose_lam_square, fit_class):
    """``(lam, info)`` of ``lam="auto"`` for a fit over centres: the square loss's k-fold choice
    (``choose_lam_square``) on a closed-form fit (``fit_class``) of the same rows over ``min(m, auto rule)``
    centres, whose λ the m centres are then solved at; ``info["solver_note"]`` says so."""
    m = int(getattr(fit.sketch, "size", None) or fit.plan.sketch_size)
    m0 = max(1, min(m, auto_size_rule(fit.n)))
    est = copy.copy(fit.estimator)
    est.kernel_params, est.sketch_size = fit.kernel_params, m0
    with warnings.catch_warnings():  # the probe's sketch-size and rank notes are the final fit's to give
        warnings.simplefilter("ignore")
        # a recipe without the estimator's solve: the probe's solves leave nothing (no posterior state) behind
        probe = fit_class(est, fit.X, fit.Y, replace(fit.recipe, solve=None, finish=None))
        probe.square_pcg = False
        if probe.sketch is None:
            raise InvalidParameterError("lam='auto' over centres needs a sketch; give sketch='subsample'")
        lam, info = choose_lam_square(probe)
    grid, curve = np.asarray(info["grid"], dtype=float), np.asarray(info["curve"], dtype=float)
    near = (curve <= (1 + PCG_LAM_TIE) * np.nanmin(curve)) & (grid >= lam) if curve.size == grid.size else None
    chosen = float(grid[near].max()) if near is not None and near.any() else float(lam)
    info = dict(info, chosen=chosen, closed_form_least=float(lam), centres_of_choice=m0, solver_note=(
        f"lam chosen by the closed form's {info['criterion']} over {m0} centres (the automatic size at n = "
        f"{fit.n}): the largest lam within {PCG_LAM_TIE:.0%} of its least value {lam:.3g} (conjugate gradients "
        f"need fewer passes at a larger lam), then the {m} centres solved once at it by conjugate gradients"))
    return chosen, info
