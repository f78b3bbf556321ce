"""Cross-validated regularisation paths that share each fold's features across ``lam``.

Two path functions (the contract is in :mod:`skframe.model_selection._paths_base`)::

    machine_path(estimator, X, y, folds, lams, scorer) -> PathScores
    structured_path(estimator, X, y, folds, lams, scorer) -> PathScores

score every ``lam`` on every fold as ``scorer(clone(estimator).set_params(lam=lam).fit(X[train], y[train]),
X[test], y[test])`` would (the computation of scikit-learn's ``GridSearchCV``), but draw the sketch
and build the features of a fold only once.

**Machines** (:class:`~skframe.models.SketchedKernelMachine`,
:class:`~skframe.models.SketchedKernelClassifier`, :class:`~skframe.models.JointQuantileRegressor`
with a Lipschitz loss such as Huber, ε-SVR, pinball or hinge). Per fold, the model's own fit draws
the sketch (the same random draws as a fresh fit: the sketch takes the first seeded Generator, the
solver the second) and builds the features ``z(x)`` once; then the λ values are solved from the
largest to the smallest, each solve starting from the previous solution (a warm start) and stopping,
like a fresh fit, when the solver's certified relative duality gap is at most its ``tol``. The
largest λ starts from the solver's own start point and equals the fresh fit exactly. Every solve gets
a fresh copy of the solver's Generator, as a fresh fit would; with ``warm_start=False`` every λ
starts where a fresh fit starts, and every point is then the fresh fit's computation exactly.

*Batched* (the default with the built-in ``dual-cd`` and ``admm`` solvers): the features of every fold are
built first (the fresh fit's draws), then all (fold, λ) problems of the block are solved together by the ADMM
iterations of :mod:`skframe.model_selection._batched_admm` (stacked arrays, one product per fold with all its
λ values as columns, one penalty and one stop per problem, the penalty started at the scale of the problem's
residual), each stopped at the same certified relative duality gap ``tol`` as a fresh fit. The points are
then certified solutions obtained by another method than the fresh fit (``dual-cd`` may run coordinate
epochs or Newton steps where the batch runs ADMM iterations), so they agree with it within the tolerance
below, like the warm-started points.

*Tolerance.* The solver minimises, over ``V`` (``r x k``),
``P(V) = (1/n) sum_i l(z_i^T V C, y_i) + (lam/2) ||V||_F^2`` (``C^T C = M`` the output matrix,
:mod:`skframe_solvers._problem`), a ``lam``-strongly convex function, so for any ``V`` with
duality gap ``g = P(V) - D(A) >= P(V) - P(V*)``,
``(lam/2) ||V - V*||_F^2 <= P(V) - P(V*) <= g`` and, for every input ``x``,

    ||f_V(x) - f_*(x)||_2 <= ||z(x)||_2 ||C||_2 sqrt(2 g / lam).

A fresh fit stopped at relative gap ``g_f / P_f <= tol`` (losses are non-negative, so ``P >= 0``
and the relative gap is ``(P - D) / P`` once below 1) has ``P_f (1 - tol) <= D_f <= P(V*) <= P_j``
for the path's primal value ``P_j``, hence ``g_f <= tol P_j / (1 - tol)``. The held-out predictions
of the path point ``j`` and of the fresh fit therefore differ by at most

    delta_j = max_{x in test} ||z(x)|| ||C||_2 (sqrt(2 g_j / lam_j) + sqrt(2 tol P_j / ((1 - tol) lam_j)))

(``info["prediction_tolerance"]``; the first term alone, ``info["prediction_bound"]``, bounds the
distance of the path's predictions to the exact optimum). The test scores then agree within
``L delta_j`` for a score that is ``L``-Lipschitz in the predictions (the joint pinball score
``JointQuantileRegressor.score``: ``L`` = the pinball loss's Lipschitz constant
``sqrt(sum_j max(tau_j, 1 - tau_j)^2)``; mean absolute error: 1; the mean squared error within
``2 delta sqrt(MSE) + delta^2``); for the accuracy, only held-out points with ``|f(x)| <= delta``
can change class. The bound holds for a fresh fit that converged (no
``ConvergenceWarning``). With the closed-form solver (square loss) the path is exact.

**Structured models** (:class:`~skframe.models.OutputKernelRegressor`: IOKR, SIOKR, ISOKR, SISOKR).
Per fold, the model's own fit draws the output sketch, builds the output basis and the candidate
embeddings and draws the input sketch once; the input side's linear system is then solved for every
λ from one eigendecomposition:

* exact input (IOKR, ISOKR): ``K = U diag(e) U^T`` and ``(K + n lam I)^{-1} T = U diag(1 / (e + n lam)) U^T T``
  when the grid has at least :data:`EIGH_COST_IN_CHOLESKYS` values; a shorter grid solves each ``lam`` by
  the fresh fit's own Cholesky factorisation of ``K + n lam I`` (cheaper than one eigendecomposition of the
  n x n matrix; the Gram matrix is still computed once);
* input sketch (SIOKR, SISOKR): ``(K R^T)^T (K R^T) + n lam R K R^T`` is diagonalised in the sketched
  feature coordinates ``L = U_r D_r^{-1/2}`` of ``R K R^T = U D U^T`` (rank ``r``, the eigenvalues above
  the relative tolerance ``rtol``): ``L^T (K R^T)^T (K R^T) L = Q diag(s) Q^T`` and the coefficients are
  ``L Q diag(1 / (s + n lam)) Q^T L^T (K R^T)^T T`` (El Ahmad et al., "Fast Kernel Methods for Generic
  Lipschitz Losses via p-Sparsified Sketches", TMLR 2023, Prop. 1: the ridge on the features
  ``z(x) = D_r^{-1/2} U_r^T R k_x``); random Fourier features: ``Z^T Z = Q diag(s) Q^T``.

These are the solutions of the fresh fit's systems in exact arithmetic, so the scores agree to
rounding (about 1e-8 relative; the fresh fit factors each ``lam``'s system by Cholesky).
"""

from __future__ import annotations

import copy
import time

import numpy as np
from sklearn.base import clone

from skframe.compute.backend import serial_blas
from skframe.contract.collections import n_items, take
from skframe.contract.problems import SolveResult
from skframe.contract.protocols import kernel_block
from skframe.contract.tags import get_tags
from skframe.core.linalg import default_rtol, solve_psd, sqrt_pinv_sym
from skframe.core.sketching import diagonal_of_mix, draw_sketch, sketched_gram_products
from skframe.deps import is_dask_collection
from skframe.exceptions import InvalidParameterError
from skframe.model_selection._batched_admm import BatchItem, batched_admm
from skframe.model_selection._paths_base import PathScores, fold_rows
from skframe.models._base import validate_X
from skframe.models._core import build_representation, predict_expansion, resolve_solver
from skframe.models.machine._common import MachineBase
from skframe.models.structured._estimator import OutputKernelRegressor
from skframe.models.structured._sisokr import _Draw
from skframe.options import ComputeOptions

__all__ = ["machine_path", "structured_path"]


# ----------------------------------------------------------------------------- shared helpers
def _check_lams(lams):
    values = np.atleast_1d(np.asarray(lams, dtype=float)).ravel()
    if values.size == 0:
        raise InvalidParameterError("lams is empty; give at least one regularisation value, e.g. [1e-3]")
    bad = values[~(np.isfinite(values) & (values > 0))]
    if bad.size:
        raise InvalidParameterError(f"lams contains {bad[0]!r}; every lam must be a finite value > 0, e.g. 1e-3")
    return values


def _rows(A, idx):
    """Rows ``idx`` of the data (as scikit-learn's cross-validation selects them); None stays None."""
    return None if A is None else fold_rows(A, idx)


def _message(k, lam, exc):
    return f"fold {k}, lam={lam:g}: {type(exc).__name__}: {exc}"


def _refuse_dask(X, y, what):
    if is_dask_collection(X) or is_dask_collection(y):
        raise NotImplementedError(f"{what}: Dask input is fitted on its cluster, one fit per point; "
                                  "the shared-feature path needs the data in memory")


def _score(scorer, model, X_te, y_te):
    t = time.perf_counter()
    value = float(scorer(model, X_te, y_te))
    return value, time.perf_counter() - t


def _score_fold(out, k, lams, fitted, errors, scorer, X_te, y_te):
    """Score fold ``k``'s fitted points; a point missing from ``fitted`` fails with ``errors[j]``, as does one
    whose scorer raises."""
    for j in range(len(lams)):
        if j not in fitted:
            out.failed[k, j] = True
            out.errors.append(_message(k, lams[j], errors[j]))
            continue
        try:
            out.test_scores[k, j], out.score_times[k, j] = _score(scorer, fitted[j], X_te, y_te)
        except Exception as exc:
            out.failed[k, j] = True
            out.errors.append(_message(k, lams[j], exc))


def _spread(out, k, own, total):
    """Fit times of fold ``k``: each point's own seconds plus an equal share of the fold's shared work."""
    own = np.where(np.isfinite(own), own, 0.0)
    shared = max(total - float(own.sum()), 0.0)
    out.fit_times[k] = own + shared / own.size


# ----------------------------------------------------------------------------- machines
def _machine_solver(estimator):
    """The solver object a fit of ``estimator`` would use, or NotImplementedError when it cannot take a path."""
    loss = estimator._plan_loss()
    solver, _ = resolve_solver(estimator.solver, estimator.solver_params, loss)
    tags = get_tags(solver, "solver")
    if not (tags.requires_dual or tags.requires_square):
        name = getattr(solver, "name", type(solver).__name__)
        raise NotImplementedError(
            f"solver {name!r} does not stop on a certified duality gap: a warm-started path would not "
            "reproduce fresh fits to a known tolerance (use solver='dual-cd' or 'admm')")
    return solver


def _fitted_at(model, rep, M, lam, res, seconds):
    """A copy of the fold's fitted ``model`` carrying the solution ``res`` at ``lam``."""
    out = copy.copy(model)
    out.lam = float(lam)
    for key, value in rep.expansion(res.W if M is None else res.W @ M).items():
        setattr(out, key, value)
    out.weights_ = res.W
    out.history_ = [float(v) for v in res.history]
    out.stop_reason_ = res.stop_reason
    out.n_iter_ = int(res.n_iter)
    out.solver_info_ = dict(res.info)
    out.lam_path_ = np.asarray([float(lam)])
    out.coef_path_ = None
    out.objective_path_ = None
    out.solve_seconds_ = float(seconds)
    return out


def _feature_norm(model, rep, r, X_te):
    """``max ||z(x)||_2`` over the held-out rows: the features are the predictions of ``W = I_r``."""
    if rep.feature_map is None and rep.proj is not None and rep.proj.shape[1] == r:  # proj @ I_r without a product
        basis = {"coef_": rep.proj, "X_fit_": rep.X_basis, "feature_map_": None}
    else:
        basis = rep.expansion(np.eye(r))
    Xq = validate_X(model, X_te, reset=False)
    Z = np.asarray(predict_expansion(model.kernel_, Xq, basis["coef_"], basis["X_fit_"], basis["feature_map_"]))
    return float(np.sqrt(np.max(np.einsum("ij,ij->i", Z, Z)))) if Z.size else 0.0


def _machine_fold(estimator, k, X_tr, y_tr, X_te, y_te, lams, order, scorer, out, warm_start):
    """Fit fold ``k`` once (sketch and features), solve the (warm-started) path, score every point."""
    n_l = lams.size
    own = np.zeros(n_l)
    results = {}
    captured = {}
    t0 = time.perf_counter()

    def wrap(solve):
        def path_solve(rep, Yc, lam, init, rng):
            captured["rep"] = rep
            pristine = copy.deepcopy(rng)  # the solver's Generator as a fresh fit receives it
            W, last = init, None
            for j in order:
                ts = time.perf_counter()
                try:
                    res = solve(rep, Yc, float(lams[j]), W if warm_start else init, copy.deepcopy(pristine))
                except Exception as exc:  # a failing point is recorded; the path goes on from the last solution
                    results[j] = exc
                else:
                    results[j] = res
                    W, last = res.W, res
                own[j] = time.perf_counter() - ts
            if last is None:
                raise results[order[0]]
            return last

        return path_solve

    model = clone(estimator).set_params(lam=float(lams[order[0]]))
    try:
        t_fit = model._start_fit()
        Xv, Y, loss, M = model._prepare_fit(X_tr, y_tr)
        model._fit_machine(Xv, Y, loss, M, fit_intercept=getattr(model, "fit_intercept", False), t0=t_fit,
                           wrap_solve=wrap)
    except Exception as exc:
        for j in range(n_l):
            out.failed[k, j] = True
            out.errors.append(_message(k, lams[j], results.get(j, exc)))
        out.fit_times[k] = (time.perf_counter() - t0) / n_l
        return
    _finish_fold(model, captured["rep"], M, k, X_te, y_te, lams, order, results, own, scorer, out,
                 time.perf_counter() - t0)


#: a fold's features (at most ``n_train^3`` multiply-adds: kernel, eigendecomposition) and its held-out work (the
#: bound's features, ``n_test x r`` from an ``r``-column basis, and the scores) run with one BLAS thread when that
#: count is at most this: threads gain nothing on such products, and a thread waiting for a core another process
#: holds slowed the 71 x 283 x 283 product of the exact Boston model from 0.3 ms to 15 ms (2 cores, load 4)
SERIAL_HELD_OUT = 2**26


def _finish_fold(model, rep, M, k, X_te, y_te, lams, order, results, own, scorer, out, seconds):
    """Record fold ``k``'s solutions ``results`` (SolveResult or the exception of each point): the certified gaps,
    the prediction bounds of the module docstring and the held-out scores."""
    Z = getattr(rep, "Z", None)
    r = 0 if Z is None else int(Z.shape[1])
    with serial_blas(n_items(X_te) * r * r <= SERIAL_HELD_OUT):
        _finish_fold_scores(model, rep, M, k, X_te, y_te, lams, order, results, own, scorer, out, seconds)


def _finish_fold_scores(model, rep, M, k, X_te, y_te, lams, order, results, own, scorer, out, seconds):
    info = out.info
    tol = getattr(model.solver_, "tol", None)
    cnorm = 1.0 if M is None else float(np.sqrt(max(np.linalg.eigvalsh(np.asarray(M, dtype=float)).max(), 0.0)))
    zmax = None
    fitted = {}
    for j in order:
        res = results[j]
        if isinstance(res, Exception):
            continue
        fitted[j] = _fitted_at(model, rep, M, lams[j], res, own[j])
        gap, primal = res.info.get("gap"), res.info.get("primal")
        info["n_iter"][k, j] = res.n_iter
        info["converged"][k, j] = str(res.stop_reason).startswith("converged")
        if gap is None or primal is None:
            continue
        info["gap"][k, j] = gap
        info["relative_gap"][k, j] = res.info.get("relative_gap", np.nan)
        if zmax is None:
            try:
                zmax = _feature_norm(fitted[j], rep, res.W.shape[0], X_te) * cnorm
            except Exception:  # the bound is a report: an input the features cannot be evaluated on leaves it NaN
                zmax = np.nan
        lam = float(lams[j])
        own_bound = zmax * np.sqrt(2.0 * max(float(gap), 0.0) / lam)
        fresh = 0.0 if tol is None else zmax * np.sqrt(2.0 * tol * max(float(primal), 0.0) / ((1.0 - tol) * lam))
        info["prediction_bound"][k, j] = own_bound
        info["prediction_tolerance"][k, j] = own_bound + fresh
    _spread(out, k, own, seconds)
    _score_fold(out, k, lams, fitted, results, scorer, X_te, y_te)
    info["solver"] = getattr(model.solver_, "name", type(model.solver_).__name__)
    info["solver_tol"] = tol


# ----------------------------------------------------------------------------- machines: one ADMM loop for a block
_ADMM_KEYS = ("tol", "max_iter", "rho", "adaptive", "adapt_until", "check_every", "init", "relaxation")


def _batch_settings(solver):
    """``(ADMM parameters, iteration unit, cap name)`` of the ADMM iterations the solver runs, or None when the
    solver is not a built-in duality-gap solver whose iterations :func:`batched_admm` reproduces."""
    if not type(solver).__module__.startswith("skframe_solvers."):
        return None
    name, params = getattr(solver, "name", None), dict(getattr(solver, "params", {}))
    # float32 products where ADMMSolver(products="auto") allows them (tol >= 1e-6), unless the solver says float64
    products = "float32" if params.get("tol", 0.0) >= 1e-6 and params.get("products") != "float64" else "float64"
    if name == "admm" and not params.get("polish"):
        return {**{key: params[key] for key in _ADMM_KEYS}, "products": products}, "iterations", "max_iter"
    if name == "dual-cd" and params.get("method") in ("auto", "admm"):
        cap = params["max_admm_iter"] if params.get("max_admm_iter") is not None else 5 * params["max_epochs"]
        # dual-cd's ADMM phase has no over-relaxation parameter: 1.8 (ADMMSolver's default is 1.6) takes about 10 %
        # fewer iterations on the joint quantile problems of the benchmarks
        return ({"tol": params["tol"], "max_iter": int(cap), "init": params["init"], "products": products,
                 "relaxation": 1.8}, "admm_iterations", "max_admm_iter")
    return None


class _Deferred(Exception):
    """Raised by the deferred solve of a fold whose features cannot join the batch (streamed features)."""


def _placeholder(rep, Yc):
    return SolveResult(W=np.zeros((rep.Z.shape[1], Yc.shape[1])), history=[], stop_reason="deferred", n_iter=0,
                       info={})


def _machine_batched(estimator, folds, data, lams, order, scorer, out):
    """Every fold's features built once (the model's own fit, the solve deferred), then all (fold, λ) problems
    solved together by :func:`batched_admm`; a fold whose features cannot be batched takes the per-fold path."""
    n_l = lams.size
    prepared = {}
    for k in range(len(folds)):
        X_tr, y_tr, X_te, y_te = data(k)
        captured = {}

        def wrap(solve, captured=captured):
            def capture(rep, Yc, lam, init, rng):
                if rep.Z is None:  # streamed features: no batch
                    raise _Deferred("streamed features")
                captured.update(rep=rep, Yc=Yc)
                return _placeholder(rep, Yc)

            return capture

        t0 = time.perf_counter()
        model = clone(estimator).set_params(lam=float(lams[order[0]]))
        try:
            t_fit = model._start_fit()
            Xv, Y, loss, M = model._prepare_fit(X_tr, y_tr)
            with serial_blas(n_items(Xv) ** 3 <= SERIAL_HELD_OUT):  # at most n^3 flops: no thread pays
                model._fit_machine(Xv, Y, loss, M, fit_intercept=getattr(model, "fit_intercept", False), t0=t_fit,
                                   wrap_solve=wrap)
        except _Deferred:
            _machine_fold(estimator, k, X_tr, y_tr, X_te, y_te, lams, order, scorer, out, True)
            continue
        except Exception as exc:
            for j in range(n_l):
                out.failed[k, j] = True
                out.errors.append(_message(k, lams[j], exc))
            out.fit_times[k] = (time.perf_counter() - t0) / n_l
            continue
        prepared[k] = (model, captured["rep"], captured["Yc"], loss, M, time.perf_counter() - t0, X_te, y_te)
    if not prepared:
        return
    solver = next(iter(prepared.values()))[0].solver_
    settings, unit, cap_name = _batch_settings(solver)
    results = {k: {} for k in prepared}
    items, where = {}, {}
    for k, (model, rep, Yc, loss, M, *_) in prepared.items():
        for j in range(n_l):
            try:
                fp, dual = model.solver_._dual_problem(rep.problem(Yc), loss, float(lams[j]), M)
            except Exception as exc:
                results[k][j] = exc
                continue
            key = (fp.C.shape, fp.C.tobytes())  # one batch per output factor (the same for every fold in practice)
            items.setdefault(key, []).append(BatchItem(fp, dual, k))
            where.setdefault(key, []).append((k, j))
    t0 = time.perf_counter()
    extra = {"method": "admm", "batched": True} if solver.name == "dual-cd" else {"batched": True}
    for key, batch in items.items():
        solved = batched_admm(batch, **settings)
        for item, (k, j), sol in zip(batch, where[key], solved):
            results[k][j] = solver._gap_result(item.fp, sol["V"], sol["trace"], sol["n_iter"], unit,
                                               settings["max_iter"], cap_name, dict(extra, rho=sol["rho"]))
    share = (time.perf_counter() - t0) / max(sum(len(b) for b in items.values()), 1)
    for k, (model, rep, _, _, M, seconds, X_te, y_te) in prepared.items():
        own = np.where([isinstance(results[k].get(j), Exception) for j in range(n_l)], 0.0, share)
        _finish_fold(model, rep, M, k, X_te, y_te, lams, order, results[k], own, scorer, out,
                     seconds + float(own.sum()))


def machine_path(estimator, X, y, folds, lams, scorer, *, warm_start=True, batched=True):
    """Cross-validated scores of a sketched kernel machine along a warm-started λ path.

    For every fold the sketch is drawn and the features are built once, exactly as
    ``clone(estimator).fit(X[train], y[train])`` draws and builds them; the λ values are then
    solved from the largest to the smallest, each from the previous solution, each stopped at the
    solver's certified duality gap (see the module docstring for the method and the tolerance).

    Parameters
    ----------
    estimator : SketchedKernelMachine, SketchedKernelClassifier or JointQuantileRegressor
        Unfitted; its ``lam`` is replaced by each value of ``lams``.
    X : array-like, sparse matrix or InputCollection
    y : array-like
    folds : list of (train, test) index arrays
    lams : sequence of float > 0
        In any order; column j of the result is ``lams[j]``.
    scorer : callable
        A scikit-learn scorer ``scorer(fitted, X_test, y_test) -> float``.
    warm_start : bool, default=True
        Start each λ from the previous solution. False starts every λ where a fresh fit starts
        (the solver's own start point): each point is then the fresh fit's computation exactly
        (same features, same start, same random draws), and only the features are shared. Warm
        starts save solver iterations when consecutive λ values are close (a fine grid, e.g. a
        factor 2 apart); on a coarse grid (a factor 10 or more) the ADMM iterations that
        ``dual-cd`` switches to for small ``lam n`` start from the previous solution no faster
        than from their own start.
    batched : bool, default=True
        Solve all (fold, λ) problems in one batched ADMM loop (module docstring) when the solver is the
        built-in ``dual-cd`` (``method`` "auto" or "admm") or ``admm`` (without ``polish``) and
        ``warm_start`` is True; otherwise fold by fold along the warm-started path.

    Returns
    -------
    PathScores
        ``info`` holds ``"shortcut"``, ``"warm_start"``, ``"order"`` (the λ values in the order solved), and arrays
        of shape (n_folds, n_lams): ``"gap"`` and ``"relative_gap"`` (certified duality gap of each
        point), ``"n_iter"``, ``"converged"``, ``"prediction_bound"`` (sup over the held-out rows of the
        certified distance of the predictions to the exact optimum's) and ``"prediction_tolerance"``
        (the certified bound on the difference to a fresh fit's held-out predictions), plus
        ``"solver"`` and ``"solver_tol"``. Tolerance: scores equal a fresh fit's up to
        ``L * prediction_tolerance`` for a score ``L``-Lipschitz in the predictions (module docstring).

    Raises
    ------
    NotImplementedError
        Before any work, when the shortcut does not apply: not a sketched kernel machine, Dask input,
        or a solver that does not stop on a certified duality gap (L-BFGS, Adam). The caller then fits
        every point from scratch.
    """
    if not isinstance(estimator, MachineBase):
        raise NotImplementedError(f"{type(estimator).__name__} is not a sketched kernel machine")
    _refuse_dask(X, y, "machine_path")
    lams = _check_lams(lams)
    _machine_solver(estimator)
    folds = [(np.asarray(tr), np.asarray(te)) for tr, te in folds]
    order = np.argsort(-lams, kind="stable")
    out = PathScores.empty(len(folds), lams.size)
    shape = out.test_scores.shape
    out.info.update(shortcut=("warm-started " if warm_start else "") + "lam path on shared fold features",
                    warm_start=bool(warm_start), order=lams[order].tolist(),
                    gap=np.full(shape, np.nan), relative_gap=np.full(shape, np.nan), n_iter=np.zeros(shape, int),
                    converged=np.zeros(shape, bool), prediction_bound=np.full(shape, np.nan),
                    prediction_tolerance=np.full(shape, np.nan))
    if batched and warm_start and _batch_settings(_machine_solver(estimator)) is not None:
        out.info.update(shortcut="every (fold, lam) problem in one batched ADMM loop on shared fold features",
                        warm_start=False)

        def data(k):
            tr, te = folds[k]
            return _rows(X, tr), _rows(y, tr), _rows(X, te), _rows(y, te)

        _machine_batched(estimator, folds, data, lams, order, scorer, out)
        return out
    for k, (tr, te) in enumerate(folds):
        _machine_fold(estimator, k, _rows(X, tr), _rows(y, tr), _rows(X, te), _rows(y, te), lams, order, scorer,
                      out, warm_start)
    return out


# ----------------------------------------------------------------------------- structured models
class _InputPath:
    """One draw's input map ``coef(lam) = P diag(1 / (s + n lam)) c`` (optionally ``mix^T`` on the left)."""

    def __init__(self, P, s, c, n, *, mix_T=None, draw=None):
        self.P, self.s, self.c, self.n, self.mix_T, self.draw = P, s, c, n, mix_T, draw

    def coef(self, lam):
        d = self.s + self.n * float(lam)
        keep = d > default_rtol(d.size) * max(float(d.max()), np.finfo(float).tiny)
        inv = np.where(keep, 1.0 / np.where(keep, d, 1.0), 0.0)  # the pseudo-inverse of a singular system
        W = self.P @ (inv[:, None] * self.c)
        if self.mix_T is not None:
            W = np.asarray(self.mix_T @ W)
        return np.ascontiguousarray(W)

    @property
    def rank(self):
        return int(self.s.size)


class _FactorPath:
    """The exact input map ``(K + n lam I)^{-1} B`` solved per ``lam`` as a fresh fit solves it (Cholesky of
    ``K + n lam I`` by :func:`skframe.core.linalg.solve_psd`), from the Gram matrix computed once."""

    def __init__(self, K, B, n):
        self.K, self.B, self.n = K, B, n

    def coef(self, lam):
        shift = self.n * float(lam)

        def rebuild():  # the full matrix again, for the pseudo-inverse fallback
            G = self.K.copy()
            G[np.diag_indices_from(G)] += shift
            return G

        return np.ascontiguousarray(solve_psd(rebuild(), self.B, overwrite_a=True, rebuild=rebuild))

    @property
    def rank(self):
        return int(self.K.shape[0])


#: a symmetric eigendecomposition with vectors costs about this many Cholesky factorisations of the
#: same matrix (LAPACK's divide and conquer: about 9 m^3 flops against m^3 / 3)
EIGH_COST_IN_CHOLESKYS = 25


def _eigen_path(A, B, n, **kw):
    """``_InputPath`` of ``(A + n lam I)^{-1} B`` for a symmetric PSD ``A``."""
    s, Q = np.linalg.eigh(A)
    return _InputPath(Q, s, Q.T @ B, n, **kw)


def _structured_hooks(model, paths, n_lams):
    """Replacements of the model's input-side fits that keep each draw's factored input system in ``paths``."""
    rtol = model.rtol

    def fit_input(X, T, basis, kx, sx, lam, rng, engine=None):
        n = n_items(X)
        if get_tags(sx, "sketch").feature_map:  # explicit feature map: the ridge on Z
            rep = build_representation(X, kx, sx, rng, rtol=rtol)
            path = _eigen_path(rep.Z.T @ rep.Z, rep.Z.T @ T, n)
            path.draw = _Draw(None, path.coef(lam), basis, rep.info, fmap=rep.feature_map)
        else:
            R = draw_sketch(sx, n, rng, X=X, kernel=kx)
            X_sub = take(X, R.indices)
            if diagonal_of_mix(R.mix) is not None:  # sub-sampling: the diagonal mix cancels (see sketched_input_coef)
                KR = kernel_block(kx, X, X_sub, engine=engine)
                G, mix_T = KR[R.indices], None
            else:
                KR, G = sketched_gram_products(kx, X, R, options=ComputeOptions(engine=engine) if engine else None)
                mix_T = R.mix.T
            KR = np.asarray(KR, dtype=np.float64)
            L, _ = sqrt_pinv_sym(0.5 * (G + G.T), rtol)  # feature coordinates of R K R^T: L^T G L = I_r
            KRL = KR @ L  # the sketched features Z of the training rows
            s, Q = np.linalg.eigh(KRL.T @ KRL)
            P = L @ Q
            path = _InputPath(P, s, P.T @ (KR.T @ T), n, mix_T=mix_T)
            path.draw = _Draw(np.ascontiguousarray(X_sub) if isinstance(X_sub, np.ndarray) else X_sub,
                              path.coef(lam), basis, R.summary())
        paths.append(path)
        return path.draw

    def fit_exact_input(X, outputs, kx, lam, rng):
        n = n_items(X)
        K = kernel_block(kx, X, X)
        B = outputs[0][1] if len(outputs) == 1 else np.hstack([T for _, T in outputs])
        if n_lams >= EIGH_COST_IN_CHOLESKYS:
            path = _eigen_path(0.5 * (K + K.T), B, n)
            del K
        else:  # fewer factorisations than one eigendecomposition costs: solve each lam as the fresh fit does
            path = _FactorPath(K, B, n)
        cuts = np.cumsum([T.shape[1] for _, T in outputs])[:-1]
        info = {"name": "none", "m": n, "n": n, "s_prime": n}
        path.split = (cuts, [(X, basis, dict(info)) for basis, _ in outputs])
        paths.append(path)
        return _exact_draws(path, lam)

    return fit_input, fit_exact_input


def _exact_draws(path, lam):
    cuts, members = path.split
    return [_Draw(X, np.ascontiguousarray(w), basis, info)
            for w, (X, basis, info) in zip(np.split(path.coef(lam), cuts, axis=1), members)]


def _structured_fold(estimator, k, X_tr, y_tr, X_te, y_te, lams, scorer, out):
    n_l = lams.size
    own = np.zeros(n_l)
    paths = []
    t0 = time.perf_counter()
    model = clone(estimator).set_params(lam=float(lams[0]))
    # the hooks are instance attributes, removed after the fit
    model._fit_input, model._fit_exact_input = _structured_hooks(model, paths, n_l)
    try:
        model.fit(X_tr, y_tr)
    except Exception as exc:
        for j in range(n_l):
            out.failed[k, j] = True
            out.errors.append(_message(k, lams[j], exc))
        out.fit_times[k] = (time.perf_counter() - t0) / n_l
        return
    finally:
        del model._fit_input, model._fit_exact_input
    fitted = {}
    errors = {}
    for j, lam in enumerate(lams):
        ts = time.perf_counter()
        try:
            if hasattr(paths[0], "split"):
                draws = _exact_draws(paths[0], lam)
            else:
                draws = [_Draw(p.draw.X_fit, p.coef(lam), p.draw.basis, p.draw.input_info, fmap=p.draw.fmap)
                         for p in paths]
            m = copy.copy(model)
            m.lam = float(lam)
            m.draws_ = draws
            m.output_basis_ = draws[0].basis
            fitted[j] = m
        except Exception as exc:
            errors[j] = exc
        own[j] = time.perf_counter() - ts
    _spread(out, k, own, time.perf_counter() - t0)
    out.info["rank"][k] = min(p.rank for p in paths)
    _score_fold(out, k, lams, fitted, errors, scorer, X_te, y_te)


def structured_path(estimator, X, y, folds, lams, scorer):
    """Cross-validated scores of an output kernel regressor (IOKR ... SISOKR) along a λ path.

    For every fold the model's own fit builds the output basis, the candidate embeddings and the
    input sketch once (the same random draws as ``clone(estimator).fit(X[train], y[train])``); every
    λ is then solved from one eigendecomposition of the fold's input system (module docstring).

    Parameters
    ----------
    estimator : OutputKernelRegressor
        Unfitted; its ``lam`` is replaced by each value of ``lams``.
    X : array-like, sparse matrix or InputCollection
    y : array-like or sparse matrix of shape (n_samples, n_output_features)
    folds : list of (train, test) index arrays
    lams : sequence of float > 0
    scorer : callable
        A scikit-learn scorer, usually the estimator's ``score`` or a decoded metric.

    Returns
    -------
    PathScores
        ``info``: ``"shortcut"`` and ``"rank"`` (per fold, the rank of the eigendecomposition).
        The scores equal fresh fits' to rounding (about 1e-8 relative).

    Raises
    ------
    NotImplementedError
        Before any work, for another estimator (the neural DSOKR, a subclass) or Dask input.
    """
    if type(estimator) is not OutputKernelRegressor:
        raise NotImplementedError(f"{type(estimator).__name__} is not an OutputKernelRegressor; its λ path is "
                                  "fitted point by point")
    _refuse_dask(X, y, "structured_path")
    lams = _check_lams(lams)
    folds = [(np.asarray(tr), np.asarray(te)) for tr, te in folds]
    out = PathScores.empty(len(folds), lams.size)
    out.info.update(shortcut="one eigendecomposition of the input system per fold",
                    rank=np.zeros(len(folds), dtype=int))
    for k, (tr, te) in enumerate(folds):
        _structured_fold(estimator, k, _rows(X, tr), _rows(y, tr), _rows(X, te), _rows(y, te), lams, scorer, out)
    return out
