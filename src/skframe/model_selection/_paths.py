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

*Batched* (the default with a solver that offers batched solves, ``solver.batchable``: the built-in ``dual-cd``
and ``admm``): the features of every fold are built first (the fresh fit's draws), then all (fold, λ) problems
of the block are solved together by the solver's ``solve_batch`` (:mod:`skframe_solvers._batched`: stacked
arrays, one product per fold with all its λ values as columns, one penalty and one stop per problem, the penalty
started at the scale of the problem's residual), each stopped at the same certified relative duality gap ``tol``
as a fresh fit. The points are then certified solutions obtained by another method than the fresh fit
(``dual-cd`` may run coordinate epochs or Newton steps where the batch runs ADMM iterations), so they agree with
it within the tolerance below, like the warm-started points.

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

(:mod:`skframe.models.structured._input_path`)

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

import numpy as np

from skframe.contract.model_tags import model_tags
from skframe.contract.tags import get_tags
from skframe.model_selection._machine_path import machine_batched, machine_fold
from skframe.model_selection._paths_base import PathScores, check_lams, fold_rows, refuse_dask
from skframe.model_selection._structured_path import structured_fold
from skframe.models._fit import planned_solver
from skframe.models.structured._input_path import EIGH_COST_IN_CHOLESKYS

__all__ = ["machine_path", "structured_path", "EIGH_COST_IN_CHOLESKYS"]


def _rows(A, idx):
    """Rows ``idx`` of the data (as scikit-learn's cross-validation selects them); None stays None."""
    return None if A is None else fold_rows(A, idx)


def _machine_solver(estimator):
    """The solver object a fit of ``estimator`` would use, or NotImplementedError when it cannot take a path."""
    solver = planned_solver(estimator)
    tags = get_tags(solver, "solver")
    if not (tags.requires_dual or tags.requires_square):
        name = getattr(solver, "name", type(solver).__name__)
        raise NotImplementedError(
            f"solver {name!r} is not a dual solver (SolverTags.requires_dual), whose certified duality gap the "
            "shared λ path stops on: each λ is a fresh fit (use solver='dual-cd' or 'admm' for the shared path)")
    return solver


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
        Solve all (fold, λ) problems in one batched loop (module docstring) when the solver offers it
        (``solver.batchable``: the built-in ``dual-cd`` with ``method`` "auto" or "admm", ``admm`` without
        ``polish``) and
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
    if model_tags(estimator).lam_path != "machine":
        raise NotImplementedError(f"{type(estimator).__name__} is not a sketched kernel machine (its ModelTags "
                                  "declare no machine λ path)")
    refuse_dask(X, y, "machine_path")
    lams = check_lams(lams)
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
    if batched and warm_start and getattr(_machine_solver(estimator), "batchable", False):
        out.info.update(shortcut="every (fold, lam) problem in one batched ADMM loop on shared fold features",
                        warm_start=False)

        def data(k):
            tr, te = folds[k]
            return _rows(X, tr), _rows(y, tr), _rows(X, te), _rows(y, te)

        machine_batched(estimator, len(folds), data, lams, order, scorer, out)
        return out
    for k, (tr, te) in enumerate(folds):
        fold = (_rows(X, tr), _rows(y, tr), _rows(X, te), _rows(y, te))
        machine_fold(estimator, k, fold, lams, order, scorer, out, warm_start)
    return out


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
    if model_tags(estimator).lam_path != "structured":
        raise NotImplementedError(f"{type(estimator).__name__} declares no OutputKernelRegressor λ path "
                                  "(ModelTags.lam_path); its λ path is fitted point by point")
    refuse_dask(X, y, "structured_path")
    lams = check_lams(lams)
    folds = [(np.asarray(tr), np.asarray(te)) for tr, te in folds]
    out = PathScores.empty(len(folds), lams.size)
    out.info.update(shortcut="one eigendecomposition of the input system per fold",
                    rank=np.zeros(len(folds), dtype=int))
    for k, (tr, te) in enumerate(folds):
        structured_fold(estimator, k, (_rows(X, tr), _rows(y, tr), _rows(X, te), _rows(y, te)), lams, scorer, out)
    return out
