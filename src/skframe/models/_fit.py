"""One fit of a sketched kernel model: the object every estimator fits through, and model selection talks to.

A :class:`Fit` holds the validated data ``X``, targets ``Y`` and sample weights, the resolved components
(kernel, sketch; the family's loss, output matrix and solve step: its :class:`Recipe`), the execution plan
and the random streams. Its methods are the fit's steps::

    fit = Fit.of(estimator, X, y)      validate, resolve, plan, size, seed (the estimator's own rules)
    fit.represent()                     draw the sketch, build the training representation (once)
    fit.solve(lam) / fit.solve_path(lams)
    fit.store(estimator, path)          the fitted attributes; fit.fitted(lam, result) a fitted copy
    fit.predict_rows(X, W)              predictions (or, without W, the features) of new rows

``estimator.fit(X, y)`` is ``Fit.of(estimator, X, y)`` then ``run()``; the cross-validated λ paths of
:mod:`skframe.model_selection` build it per fold and solve many λ on one representation, calling nothing
private of the estimator.
"""

from __future__ import annotations

import copy
import time
import warnings
from dataclasses import dataclass, replace

import numpy as np

from skframe.compute.backend import serial_blas
from skframe.compute.plan import describe_data, plan_fit
from skframe.compute.stream_fit import options_from, streamed_representation
from skframe.contract.collections import take
from skframe.contract.tags import get_tags
from skframe.core.feature_map import kernel_times
from skframe.core.linalg import ZERO_GRAM
from skframe.exceptions import InvalidParameterError
from skframe.models import _ard, _autotune, _degenerate, _fit_square, _folds, _grow
from skframe.models._core import (
    build_representation,
    lam_path,
    make_rngs,
    resolve_kernel,
    resolve_loss,
    resolve_solver,
    size_and_resolve_sketch,
    target_offset,
)
from skframe.models._data import validate_X
from skframe.models._fit_steps import FitSteps
from skframe.models._fit_store import store_fitted

__all__ = ["Recipe", "Fit", "plan_for", "planned_loss", "planned_solver"]


@dataclass
class Recipe:
    """What an estimator family fits: its solve step and the parts of its problem.

    Attributes
    ----------
    solve : callable
        ``solve(rep, Yc, lam, init, rng) -> SolveResult`` for one λ on the representation ``rep``.
    loss : loss object or None
        None: the square loss in closed form.
    M : ndarray or None
        The output matrix (predictions ``Z W M``); None for the identity.
    fit_intercept : bool
        Centre the targets (the loss's own offset, e.g. the median for a pinball loss).
    exact : {"features", "gram"}
        The form of the exact model (see :func:`skframe.models._core.build_representation`).
    rtol : float or None
        Relative eigenvalue tolerance of the sketched Gram matrix.
    n_rngs : int
        Random streams: the sketch takes the first, the solver the last.
    solver : solver object or None
        The solver ``solve`` runs (for the λ paths that batch its iterations).
    attributes : dict
        Fitted attributes the family stores after the shared ones (``loss_``, ``solver_``, ...).
    reweigh : callable or None
        ``reweigh(w)``: the ``solve`` step with the row weights ``w`` (a fold's rows).
    finish : callable or None
        ``finish(fit, estimator, result)`` once the fitted attributes are stored (e.g. the classifier's calibration).
    centres : bool
        ``solve`` also solves over Nyström centres (:mod:`skframe.models._fit_square`), where the plan picks PCG.
    """

    solve: object
    loss: object = None
    M: object = None
    fit_intercept: bool = False
    exact: str = "features"
    rtol: float | None = None
    n_rngs: int = 1
    solver: object = None
    attributes: dict | None = None
    reweigh: object = None
    finish: object = None
    centres: bool = False


def plan_for(estimator, X, n_outputs, kernel=None, loss=None, sketch_size=None, *, sample_weight=None):
    """The :class:`~skframe.compute.plan.ExecutionPlan` of a fit of ``estimator`` on ``X`` with ``n_outputs``
    targets (``loss`` None or a square loss: the closed form; ``sketch_size``: instead of the estimator's); an
    ``"auto"`` size past 1000 where its centres take conjugate gradients (:func:`_fit_square.grow_plan`)."""
    data, square = replace(describe_data(X), n_outputs=int(n_outputs)), loss is None or get_tags(loss, "loss").square
    plan = plan_fit(data, kernel=kernel, sketch=estimator.sketch, sketch_size=sketch_size or estimator.sketch_size,
                    sketch_params=estimator.sketch_params, loss="square" if square else "iterative",
                    options=options_from(estimator), factored=not square and _newton_fit(estimator))
    if loss is not None or sketch_size is not None:
        return plan
    return _fit_square.grow_plan(plan, estimator, X, sample_weight,
                                 lambda size: plan_for(estimator, X, n_outputs, kernel, loss, sketch_size=size))


def _newton_fit(estimator):
    """Whether the fit's solver is ``newton`` (it reads kept features as two factors: the plan's ``factored``)."""
    try:
        return getattr(planned_solver(estimator), "name", None) == "newton"
    except (AttributeError, TypeError):  # an estimator without the machines' solver parameters
        return False


def planned_loss(estimator):
    """The loss object a fit of ``estimator`` plans for (None: the square loss in closed form)."""
    name = getattr(estimator, "loss", None)
    return None if name is None else resolve_loss(name, getattr(estimator, "loss_params", None))[0]


def planned_solver(estimator):
    """The solver object a fit of ``estimator`` would use, known before any data is seen."""
    return resolve_solver(estimator.solver, estimator.solver_params, estimator._plan_loss())[0]


class Fit(FitSteps):
    """One fit: data, resolved components, plan and random streams, and the fit's steps as methods.

    Built by :meth:`of` (the estimator validates its data and chooses its :class:`Recipe`). The kernel is
    resolved and bound to ``X`` (``kernel_prepare``) once, the plan made once, the sketch sized and resolved
    once, the random streams seeded once.

    Attributes
    ----------
    estimator : estimator
        The estimator whose parameters the fit reads and whose fitted attributes :meth:`store` sets.
    X, Y : validated inputs and (n, d) float targets
    sample_weight : ndarray or None
        Per-row weights: they weight the intercept and travel with the problem to the solver
        (``problem.sample_weight``); None for equal weights.
    recipe : Recipe
    kernel, kernel_spec : the bound kernel and its ComponentSpec
    plan : ExecutionPlan
    options : ComputeOptions
        The plan's decisions as passed down (engine, budget, precision, BLAS threads).
    sketch, sketch_spec, size_info : the resolved sketch (None: the exact model), its spec and size rule
    rngs : list of numpy.random.Generator
    offset, Yc : the intercept and the targets the solver fits
    y_1d : bool : whether the targets were given as one 1-D column.
    """

    def __init__(self, estimator, X, Y, recipe, *, progress=None, sample_weight=None, t0=None, y_1d=False):
        self._start(estimator, X, t0)
        self.y_1d = bool(y_1d)  # the targets were one column (predictions are then 1-D)
        self.X, self.Y, self.recipe = X, Y, recipe
        self.sample_weight, self.progress = sample_weight, progress
        _degenerate.check_feature_range(X)  # squares that overflow float64: refused before any kernel
        _degenerate.check_target_range(Y)  # as for the targets: the loss and the metrics square them
        self.auto_info = {}
        self.kernel_params = self._kernel_params(estimator, X, Y, recipe)  # gamma="auto" chosen here
        self.kernel, self.kernel_spec = resolve_kernel(estimator.kernel, self.kernel_params, X)
        _degenerate.check_kernel_parameters(self.kernel, self.kernel_spec)  # e.g. gamma="scale" made 0 by the data
        # every execution choice, once
        self.plan = plan_for(estimator, X, Y.shape[1], self.kernel, recipe.loss, sample_weight=sample_weight)
        if isinstance(estimator.sketch, str):
            _degenerate.warn_budget_cut(self.plan, self.n)
        self.options = self.plan.compute_options()  # backend, engine, dtype, budget, BLAS threads: passed down
        # "auto": the sqrt(n) rule, capped by what the chosen executor holds
        self.sketch, self.sketch_spec, self.size_info = size_and_resolve_sketch(
            estimator.sketch, estimator.sketch_size, estimator.sketch_params, self.n, plan=self.plan)
        self.rngs = make_rngs(estimator.random_state, recipe.n_rngs)
        self.square_pcg = _fit_square.settle_square_solver(self)  # the square loss over centres by PCG
        self.offset = target_offset(Y, recipe.loss, recipe.fit_intercept, sample_weight)
        self.Yc = Y - self.offset if recipe.fit_intercept else Y
        # the representation, the plan as JSON types, (eigenvalues or None,) of the features' covariance: once
        self._rep, self._plan_dict, self._spectrum = None, None, None

    @classmethod
    def of(cls, estimator, X, y, *, progress=None, sample_weight=None):
        """The fit of ``estimator`` on ``(X, y)``: the estimator's own validation, components and recipe.

        ``estimator`` is changed only as its own ``fit`` changes it before solving (e.g. ``classes_``). Its
        callers (the λ paths of model selection) read the fit's features: the square loss is solved in closed
        form over the sketch's features, never over centres by conjugate gradients (:mod:`._fit_square`).
        """
        with _fit_square.features_only():
            if sample_weight is None:
                return estimator._new_fit(X, y, progress=progress)
            return estimator._new_fit(X, y, progress=progress, sample_weight=sample_weight)

    def _kernel_params(self, estimator, X, Y, recipe):
        """The kernel's parameters with ``gamma="auto"`` resolved (:mod:`skframe.models._autotune`): the
        median heuristic's γ₀ × 10^k scored by the square-loss GCV (minimum over λ) on a row subsample."""
        params = dict(estimator.kernel_params or {})
        if isinstance(params.get("length_scale"), str) and params["length_scale"].lower() == "learn":
            return self._learned_length_scales(estimator, X, Y, recipe, params)
        if not _autotune.is_auto(params.get("gamma")):
            return estimator.kernel_params
        params.pop("gamma")
        if estimator.kernel in ("gaussian", "rbf"):
            gamma0, start = _autotune.median_gamma(X), "median heuristic 1/median ||x_i - x_j||^2"
        else:  # the kernel's own data-based scale
            gamma0 = float(resolve_kernel(estimator.kernel, dict(params, gamma="scale"), X)[0].gamma)
            start = "the kernel's gamma='scale'"
        rows = _autotune.subsample_rows(self.n)
        Xs, Ys = take(X, rows), np.asarray(Y[rows] if not hasattr(Y, "compute") else Y[rows].compute())
        probe = Recipe(None, fit_intercept=True, exact="gram", rtol=recipe.rtol)
        # γ is scored at the best λ the fit can then reach: a loss without a closed form searches a coarser grid
        reach = {} if recipe.loss is None else {"lams": _autotune.KFOLD_LAMS, "extend": 0}

        folds = {}

        def score(gamma):  # the least held-out error over λ of the square-loss fit on the rows, at this gamma
            trial = copy.copy(estimator)
            trial.kernel_params, trial.memory_budget = dict(params, gamma=gamma), None
            with warnings.catch_warnings():  # the probes' sketch-size and rank notes are the final fit's to give
                warnings.simplefilter("ignore")
                info = _autotune.choose_lam_square(Fit(trial, Xs, Ys, probe), **reach)[1]
            folds["words"] = info.get("folds")
            return info["value"]

        gamma, info = _autotune.choose_gamma(score, gamma0)
        name = _autotune.square_criterion_name()
        what = f"held-out error of {folds['words']}" if folds.get("words") else name
        info.update(start=gamma0, rows=int(rows.size), criterion=name, folds=folds.get("words"),
                    reason=f"{start} x 10^k, least square-loss {what} on {rows.size} rows (the largest within "
                           f"{info['tie']:.0%} of it: the most local fit)" + (f"; the least at the {info['edge']} end "
                           "of the extended grid: give gamma explicitly" if info["edge"] else ""))
        self.auto_info["gamma"] = info
        return dict(params, gamma=gamma)

    def _learned_length_scales(self, estimator, X, Y, recipe, params):
        """``length_scale="learn"``: per-feature length-scales and λ maximising the Nystrom Gaussian process's
        marginal likelihood on a row subsample, checked on held-out rows against one shared length-scale
        (:func:`~skframe.models._ard.learn_scales`, drawn from the estimator's seed); the final fit draws its own
        sketch (with ``lam="auto"`` and the square loss it takes the optimum's λ:
        :func:`~skframe.models._autotune.lam_of_learned_scales`)."""
        rows = _autotune.subsample_rows(self.n, _ard.ARD_ROWS)
        Xs = take(X, rows)
        Xs = np.asarray(Xs.toarray() if hasattr(Xs, "toarray") else Xs, dtype=np.float64)
        Ys = np.asarray(Y[rows] if not hasattr(Y, "compute") else Y[rows].compute(), dtype=np.float64)
        ell, self.auto_info["length_scale"] = _ard.learn_scales(Xs, Ys, make_rngs(estimator.random_state, 1)[0])
        return dict(params, length_scale=[float(v) for v in ell])

    def choose_lam(self):
        """``lam="auto"``: the square loss's k-fold minimiser (with learned length-scales: the λ learned with them),
        else k folds along a λ grid (``auto_info["lam"]``): shuffled from the estimator's ``random_state`` and
        stratified by class, or in file order with its ``cv_order="keep"`` (:func:`_folds.fold_options`)."""
        learned = self.auto_info.get("length_scale")
        # over centres: the closed form's choice over fewer centres, then PCG at it
        if self.square_pcg and (learned is None or learned["criterion"] != "ml"):
            lam, info = _fit_square.choose_lam_centres(self, _autotune.choose_lam_square, Fit)
        elif self.recipe.loss is None and learned is not None and learned["criterion"] == "ml":
            lam, info = _autotune.lam_of_learned_scales(learned, self.n)
        elif self.recipe.loss is None:
            lam, info = _autotune.choose_lam_square(self)
        else:
            est, w, rec = copy.copy(self.estimator), self.sample_weight, self.recipe
            est.kernel_params = self.kernel_params
            lam, info = _autotune.choose_lam_kfold(self.X, self.Y, lambda rows: Fit(
                est, take(self.X, rows), self.Y[rows], rec if w is None else replace(rec, solve=rec.reweigh(w[rows])),
                sample_weight=None if w is None else w[rows]), **_folds.fold_options(est, self.Y))
        self.auto_info["lam"] = info
        return lam

    # ------------------------------------------------------------------ steps
    def serial_blas(self):
        """The plan's BLAS threads for the small dense algebra of the fit: one thread when the plan says so.

        (m x m eigendecompositions, n x m x m products and solver iterations are as fast on one thread, and
        immune to threads waiting for a core another process holds.)"""
        return serial_blas(self.options.blas_threads == 1)

    def represent(self, *, check_sample=True):
        """Draw the sketch and build the training representation (in memory or streamed), once.

        ``check_sample=False`` skips the kernel's check on a sample of the rows (zero, constant or
        non-finite values), e.g. for the folds of a search whose refit checks all the rows."""
        if self._rep is None:
            with self.serial_blas():
                _grow.grow_saturated(self, plan_for)  # an "auto" sketch lam saturates (classifiers): grown first
                self._rep = self._represent(check_sample)
        return self._rep

    def needs_sums(self):
        """Whether a streamed representation accumulates the square loss's sums ``Z^T Z``, ``Z^T Y`` (a pass over
        the rows with an ``n m^2`` product). Not where the plan keeps the features for the Newton solver of a
        loss other than the square loss, which reads the features and never the sums (at n = 10^6, m = 1 000 the
        pass was 25 s of a binary fit's 188 s): its first solve forms the kept features in one pass instead."""
        solver = getattr(self.recipe.solver, "name", None)
        square = get_tags(self.recipe.loss, "loss").square
        return not (self.plan.executor == "streamed" and self.plan.keep_features and solver == "newton"
                    and not square)

    def _represent(self, check_sample):
        X, kernel, spec, options = self.X, self.kernel, self.kernel_spec, self.options
        # a kernel that is zero or constant on the data: refused or warned about before the representation
        constant = check_sample and _degenerate.check_kernel_sample(kernel, X, spec, engine=options.engine)
        rep = _fit_square.centres_representation(self) if self.square_pcg else None
        if rep is not None:  # the centres only: conjugate gradients pass over the rows (models._fit_square)
            return rep
        try:
            if self.plan.streams:  # one streamed pass (or Dask partitions), no n x m array
                rep = streamed_representation(X, self.Y, kernel, self.sketch, self.rngs[0], options,
                                              rtol=self.recipe.rtol, progress=self.progress,
                                              executor=self.plan.executor, sums=self.needs_sums())
            else:
                rep = build_representation(X, kernel, self.sketch, self.rngs[0], rtol=self.recipe.rtol,
                                           progress=self.progress, exact=self.recipe.exact, options=options)
        except InvalidParameterError as exc:
            if not str(exc).startswith(ZERO_GRAM):
                raise
            raise _degenerate.zero_gram_error(kernel, spec, X) from exc
        if check_sample and not constant:
            _degenerate.warn_rank_collapse(kernel, rep.info, spec)
        return rep

    def problem(self):
        """The :class:`~skframe.contract.problems.Problem` the solver receives: features and centred targets."""
        return self.represent().problem(self.Yc)

    def solve(self, lam, init=None, rng=None):
        """The solution (:class:`~skframe.contract.problems.SolveResult`) at ``lam``; ``rng`` defaults to the
        solver's stream (the last), which a sequence of solves shares as a λ path does."""
        rep = self.represent()
        with self.serial_blas():
            return self.recipe.solve(rep, self.Yc, float(lam), init, self.rngs[-1] if rng is None else rng)

    def solve_path(self, lams, init=None):
        """Solve ``lams`` in the given order, each from the previous solution; a list of SolveResult."""
        rep = self.represent()
        out = []
        with self.serial_blas():
            for lam in lams:
                res = self.recipe.solve(rep, self.Yc, float(lam), init, self.rngs[-1])
                init = res.W
                out.append(res)
        return out

    def coefficients(self, result):
        """The fitted expansion of a solution: ``{"coef_", "X_fit_", "feature_map_"}`` (finite, or refused)."""
        M = self.recipe.M
        attrs = self.represent().expansion(result.W if M is None else result.W @ M)
        _degenerate.check_coefficients(attrs["coef_"], self.kernel, self.kernel_spec)  # a NaN model is refused
        return attrs

    def predict_rows(self, X, W=None, *, validated=False):
        """``f(X)`` of the weights ``W`` (r x d, the output matrix applied), without the intercept; without
        ``W`` the features ``z(X)`` of the representation (n, r). Kernel blocks run as the plan says;
        ``validated=True``: ``X`` has been validated against the estimator already."""
        rep = self.represent()
        if W is None and rep.feature_map is None and rep.proj is not None:
            attrs = {"coef_": rep.proj, "X_fit_": rep.X_basis, "feature_map_": None}
        else:
            attrs = rep.expansion(np.eye(rep.Z.shape[1]) if W is None else W)
        Xq = X if validated else validate_X(self.estimator, X, reset=False)
        if attrs["feature_map_"] is not None:
            return attrs["feature_map_"].transform(Xq) @ attrs["coef_"]
        return kernel_times(self.kernel, Xq, attrs["X_fit_"], attrs["coef_"], options=self.options)

    # ------------------------------------------------------------------ the whole fit
    def run(self):
        """Represent, solve the estimator's λ (or λ path), store the fitted attributes; returns the estimator."""
        est = self.estimator
        init = None
        rep = self.represent()
        if getattr(est, "warm_start", False) and getattr(est, "weights_", None) is not None:
            prev = np.asarray(est.weights_)
            init = prev if rep.Z is not None and prev.shape == (rep.Z.shape[1], self.Y.shape[1]) else None
        t_solve = time.perf_counter()
        lams = [self.choose_lam()] if _autotune.is_auto(est.lam) else lam_path(est.lam)
        if init is None:  # a choice of lam="auto" that solved on these features leaves its solution as the start
            init = getattr(self, "lam_start", None)
        results = self.solve_path(lams, init)
        with self.serial_blas():
            expansions = [self.coefficients(res) for res in results]
        store_fitted(self, est, lams, results, [a["coef_"] for a in expansions], expansions[-1],
                    time.perf_counter() - t_solve)
        return est

    def fitted(self, lam, result, seconds=0.0):
        """A copy of the estimator fitted at ``lam`` with the solution ``result`` (a λ path's point)."""
        out = copy.copy(self.estimator)
        out.lam = float(lam)
        attrs = self.coefficients(result)
        store_fitted(self, out, [float(lam)], [result], [attrs["coef_"]], attrs, float(seconds))
        return out
