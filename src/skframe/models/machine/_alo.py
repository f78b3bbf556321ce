"""Approximate leave-one-out (ALO) decision values of the logistic and multinomial classifiers, and ``lam="auto"``
chosen by them along one warm-started λ path.

The classifier minimises, over the weights ``W`` (r x k) of the sketched features ``z_i`` (r,),

    P(W) = (1/n) sum_i w_i l(f_i, y_i) + (lam/2) ||W||^2,    f_i = W^T z_i (k,),

with mean-one row weights ``w``. Its Hessian at the solution is ``H = (1/n) sum_i w_i (z_i z_i^T) ⊗ D_i + lam I``
with ``D_i`` the loss's (k x k) second derivatives at ``f_i``. Leaving row i out of the sum (λ unchanged) and
taking one Newton step from the solution gives, by the Woodbury identity, its decision values

    f_{-i} = f_i + A_i (I - D_i A_i)^{-1} g_i,    A_i = (w_i / n) X_i^T H^{-1} X_i,    X_i = z_i ⊗ I_k,

with ``g_i`` the loss's gradient at ``f_i`` (Rad and Maleki, "A scalable estimate of the out-of-sample prediction
error via approximate leave-one-out cross-validation", JRSS B 2020; Beirami, Razaviyayn, Shahrampour and Tarokh,
"On optimal generalizability in parametric learning", NeurIPS 2017). For one column (two classes) this is
``f_{-i} = f_i + g_i h_i / (1 - d_i h_i)`` with the leverage ``h_i = w_i z_i^T H^{-1} z_i / n``. The logistic loss
on several columns (one-vs-rest) has a block-diagonal Hessian, so each column takes the scalar formula with its own
(r x r) block: the one-step values are exact to first order for every column. The multinomial loss couples the
columns: ``A_i`` is the full (k x k) block ``(w_i / n) [z_i^T (H^{-1})_{jl} z_i]_{jl}`` from one inverse of the
(r k) x (r k) Hessian, ``n r^2 k (k + 1) / 2`` multiply-adds. Above :data:`MAX_COUPLED` unknowns (where the
Newton solver stops forming its Hessian too) ``lam="auto"`` takes the k folds instead: the inverse of H's diagonal
blocks alone, the cheap substitute, misses the coupling of the softmax (measured on 300 rows, 3 classes: a median
error of 0.023 against exact refits, for a median move of 0.035, where the full block errs by 0.0003). The error
of the one Newton step is of the order of the step squared: on a few hundred rows the values agree with exact
refits to about 1% of their move (median; tests/models/test_machine_alo.py).

:func:`choose_lam_alo` solves the λ grid from the largest value down, each solve started from the last solution,
and keeps the λ of least weighted mean ALO loss (the log-loss of the fitted loss, scored as the k-fold search
scores its held-out rows). One Hessian (the Newton solver's last, else one pass) and one factorisation per λ, no
refit: about one Newton pass per λ on top of the path. The ALO values of the chosen λ are kept on the fit
(``fit.alo``) for the calibration map (:mod:`skframe.models.machine._calibration`), which then computes none.

The path is cheap where it can be: its solves stop at the relative duality gap :data:`PATH_TOL` (1e-6; a gap
of 1e-5 moved the ALO losses by less than 1e-5 against solves to 1e-8 on 22 524 rows of AER's CPS1988, but by
7e-4 at λ = 1e-5 on the 178 rows of scikit-learn's wine, enough to reverse two λ whose losses differ by 2e-4;
at 1e-6 they agree with the tight solves there to 1e-5, for about one more Newton step per λ), each starts
from one Newton step of the previous λ's Hessian shifted to the new λ (no pass over
the rows: a quarter fewer Newton steps on that table), and it stops at the first λ whose ALO loss is above the
previous one's (:data:`RISES`; waiting for a second rise was measured and dropped: on 15 fits of scikit-learn's
bundled tables and generated ones, both losses, the first rise never hid a smaller loss further down the grid,
and on CPS1988 the second rise's solve, at the smallest and costliest λ, was a sixth of the path). The final
fit at the chosen λ starts from the path's solution and certifies the solver's own ``tol``. Scoring each λ on
a sub-sample of rows instead of all was measured and left out: on the same table 5 000 rows (stratified by
class) reversed the order of the two best λ, whose mean losses differ by 1e-4 over all rows.
"""

from __future__ import annotations

import warnings
from contextlib import contextmanager, nullcontext

import numpy as np
from scipy.linalg import cho_factor, cho_solve, solve_triangular

from skframe.compute.backend import to_numpy
from skframe.contract.tags import get_tags
from skframe.metrics import classifier_report
from skframe.models._autotune import note_edge
from skframe.models.machine._labels import class_probabilities, row_codes
from skframe.plugin.toolbox import weighted_outer

__all__ = ["CRITERIA", "MAX_COUPLED", "alo_applies", "alo_decisions", "choose_lam_alo", "hessian_of",
           "held_out_report"]

#: the criteria of ``lam="auto"`` for the classifier: the rule choosing among the others
#: (:func:`skframe.models.machine._holdout.auto_criterion`), approximate leave-one-out on one path, a held-out
#: share on one path, or k folds
CRITERIA = ("auto", "alo", "holdout", "kfold")
#: the most unknowns (r k) whose full Hessian the multinomial ALO inverts (above: k folds)
MAX_COUPLED = 3000
#: rows per block of the leverage products
CHUNK = 4096
#: the precision of the leverages' triangular solves (the Cholesky factor itself is float64): float32 runs them
#: 2.5x faster (100 000 x 633 on two cores: 1.07 s -> 0.42 s per λ) and moved the ALO losses of 8 tables (bundled,
#: generated, CPS1988) by at most 2.5e-8, where neighbouring λ on the grid differ by 2e-4 or more; its relative
#: error is about 6e-8 times the factor's condition number, at most sqrt(||H|| / lam)
LEVERAGE_DTYPE = np.float32
#: the relative duality gap the path's Newton solves stop at (the final fit at the chosen λ, started from the
#: path's point there, solves to the solver's own ``tol`` and certifies it)
PATH_TOL = 1e-6
#: each solve of the path starts from a Newton step of the previous λ's Hessian (:func:`_predicted`)
PREDICT = True
#: the path stops once the ALO loss has risen at this many consecutive λ (the grid runs from large to small λ)
RISES = 1


def _host(x):
    return np.asarray(to_numpy(x), dtype=np.float64)


def one_path_refused(fit):
    """Why no criterion scored along one path on the fit's own rows (leave-one-out, a held-out share) applies, or
    None: rows kept in file order (``cv_order="keep"``), a loss without Hessian or probabilities, an output
    matrix. The k folds then choose λ."""
    if getattr(fit.estimator, "cv_order", "shuffle") == "keep":
        return "cv_order='keep': rows kept in file order are not exchangeable, as leaving one out assumes"
    loss = fit.recipe.loss
    if loss is None or not (callable(getattr(loss, "hessian", None))
                            and callable(getattr(loss, "probabilities", None))):
        return "the loss has no Hessian or no probabilities"
    if fit.recipe.M is not None:
        return "an output matrix"
    return None


def alo_applies(fit):
    """``(True, "")`` when the fit's λ can be chosen by ALO, else ``(False, why)``: a smooth loss with a Hessian
    and probabilities, the identity output matrix, the features in memory, and rows that may be taken in any
    order (not ``cv_order="keep"``: rows ordered in time are not exchangeable, as leaving one out assumes)."""
    why = one_path_refused(fit)
    if why is not None:
        return False, why
    loss = fit.recipe.loss
    Z = fit.represent().Z
    if Z is None:
        return False, "the features are streamed, not kept in memory"
    k = fit.Y.shape[1]
    if get_tags(loss, "loss").one_of_k and Z.shape[1] * k > MAX_COUPLED:
        return False, f"{Z.shape[1]} features x {k} classes exceed {MAX_COUPLED} coupled unknowns"
    return True, ""


def _mean_one(weights, n):
    if weights is None:
        return np.ones(n)
    w = np.asarray(weights, dtype=np.float64)
    return w * (n / w.sum())


def hessian_of(Z, Y, W, loss, lam, w, coupled, given=None):
    """The objective's Hessian at ``W``: ``(r k, r k)`` for a coupled loss, else the list of the k (r, r)
    column blocks. ``given``: a Hessian in the Newton solver's layout (index ``a k + j``), reused when its shape
    fits (the solver's last one, formed at the iterate before the last step)."""
    r, k = W.shape
    n = Z.shape[0]
    if given is not None and np.shape(given) == (r * k, r * k):
        H = _host(given)
        return H if coupled else [H.reshape(r, k, r, k)[:, j, :, j] for j in range(k)]
    D = np.asarray(loss.hessian(Z @ W, Y), dtype=np.float64) * (w / n)[:, None, None]
    if not coupled:
        blocks = [weighted_outer(Z, D[:, j, j]) for j in range(k)]
        for B in blocks:
            B[np.diag_indices_from(B)] += lam
        return blocks
    H4 = np.zeros((r, k, r, k))
    for j in range(k):
        for m in range(j, k):
            B = Z.T @ (Z * D[:, j, m][:, None])
            H4[:, j, :, m] = B
            H4[:, m, :, j] = B.T
    H = H4.reshape(r * k, r * k)
    H[np.diag_indices_from(H)] += lam
    return H


def _column_leverages(Z, blocks):
    """``(n, k)``: ``z_i^T H_j^{-1} z_i`` per row and column block ``H_j``: ``||L_j^{-1} z_i||^2`` with ``H_j``'s
    Cholesky factor ``L_j`` (float64), the n triangular solves in :data:`LEVERAGE_DTYPE` (see there)."""
    out = np.empty((Z.shape[0], len(blocks)))
    for j, H in enumerate(blocks):
        L = cho_factor(H, lower=True, check_finite=False)[0].astype(LEVERAGE_DTYPE)
        for s in range(0, Z.shape[0], CHUNK):
            V = solve_triangular(L, Z[s:s + CHUNK].T.astype(LEVERAGE_DTYPE), lower=True, check_finite=False)
            out[s:s + CHUNK, j] = np.einsum("ij,ij->j", V, V, dtype=np.float64)
    return out


def _coupled_leverages(Z, H, k):
    """``(n, k, k)``: ``[z_i^T (H^{-1})_{jl} z_i]_{jl}`` per row, from the inverse of the full Hessian."""
    r = Z.shape[1]
    inv = cho_solve(cho_factor(H, lower=True, check_finite=False), np.eye(r * k), check_finite=False)
    inv4 = inv.reshape(r, k, r, k)
    out = np.empty((Z.shape[0], k, k))
    for j in range(k):
        for m in range(j, k):
            q = np.einsum("ia,ia->i", Z @ inv4[:, j, :, m], Z)
            out[:, j, m] = q
            out[:, m, j] = q
    return out


def alo_decisions(Z, Y, W, loss, lam, weights=None, hessian=None, rows=None):
    """Approximate leave-one-out decision values (n, k) of every row (see module), or of ``rows`` only.

    Parameters
    ----------
    Z : ndarray of shape (n, r)
        The training rows' features.
    Y : ndarray of shape (n, k)
        The ±1 targets the loss fits (centred as the solver saw them).
    W : ndarray of shape (r, k)
        The solution at ``lam``.
    loss : loss component
        With ``gradient`` and ``hessian``.
    lam : float
        The regularisation of the objective ``(1/n) sum w_i l_i + (lam/2) ||W||^2``.
    weights : ndarray of shape (n,) or None
        Row weights (rescaled to mean one).
    hessian : ndarray or None
        The objective's Hessian at ``W`` in the Newton solver's layout, reused when given.
    rows : ndarray of int or None
        The rows whose values are computed (the Hessian is that of all n rows); None: every row.

    Returns
    -------
    ndarray of shape (n, k), or (len(rows), k)
    """
    Z, Y, W = _host(Z), _host(Y), _host(W)
    w = _mean_one(weights, Z.shape[0])
    coupled = _coupled(loss, W.shape[1])
    H = hessian_of(Z, Y, W, loss, lam, w, coupled, hessian)
    return _values(Z, Y, W, loss, H, w, coupled, rows)


def _coupled(loss, k):
    return bool(get_tags(loss, "loss").one_of_k) and k > 1


def _values(Z, Y, W, loss, H, w, coupled, rows=None):
    """The ALO values of ``rows`` (None: all) from the objective's Hessian ``H`` (:func:`hessian_of`'s form)."""
    n, k = Z.shape[0], W.shape[1]
    if rows is not None:
        Z, Y, w = Z[rows], Y[rows], w[rows]
    F = Z @ W
    G = np.asarray(loss.gradient(F, Y), dtype=np.float64)
    D = np.asarray(loss.hessian(F, Y), dtype=np.float64)
    if not coupled:
        h = _column_leverages(Z, H) * (w / n)[:, None]
        d = np.einsum("ijj->ij", D)
        return F + G * h / (1.0 - d * h)
    A = _coupled_leverages(Z, H, k) * (w / n)[:, None, None]
    step = np.linalg.solve(np.eye(k)[None] - D @ A, G[:, :, None])[:, :, 0]
    return F + np.einsum("ijl,il->ij", A, step)


def _score(loss, F, Y, w):
    """Weighted mean loss of the decision values F (n, k) on the targets Y."""
    values = np.asarray(loss.value(F, Y), dtype=np.float64).reshape(F.shape[0], -1).sum(axis=1)
    return float(np.sum(w * values) / np.sum(w))


def _predicted(W, H, lam, lam_next, coupled):
    """The start of the solve at ``lam_next`` from the solution ``W`` at ``lam`` and the objective's Hessian ``H``
    there (:func:`hessian_of`'s form): one Newton step of the objective at ``lam_next`` with H's data part, whose
    gradient at W is ``(lam_next - lam) W`` (W's own gradient at ``lam`` being zero). The path's next solve
    starts near its solution without a pass over the rows (an (r k)^3 factorisation, no ``n r^2`` product)."""
    shift = lam_next - lam
    r, k = W.shape
    blocks = [H] if coupled else H
    columns = [W.reshape(-1)] if coupled else [W[:, j] for j in range(k)]
    out = []
    for B, v in zip(blocks, columns):
        B = B.copy()
        B[np.diag_indices_from(B)] += shift
        try:
            out.append(v - shift * cho_solve(cho_factor(B, lower=True, check_finite=False), v, check_finite=False))
        except np.linalg.LinAlgError:
            out.append(v)
    return out[0].reshape(r, k) if coupled else np.stack(out, axis=1)


@contextmanager
def _path_tolerance(solver):
    """The Newton solver's ``tol`` loosened to :data:`PATH_TOL` for the path (where its own is tighter), restored
    after it, and its preconditioner carried from solve to solve where it can
    (:meth:`skframe_solvers.newton.NewtonSolver.carrying_preconditioner`). Yields the tolerance the path's solves
    stop at (None: the solver's own)."""
    loosen = getattr(solver, "name", None) == "newton" and getattr(solver, "tol", 0.0) < PATH_TOL
    before = getattr(solver, "tol", None)
    carry = getattr(solver, "carrying_preconditioner", None)
    try:
        if loosen:
            solver.tol = PATH_TOL
        with (carry() if callable(carry) else nullcontext()):
            yield PATH_TOL if loosen else None
    finally:
        if loosen:
            solver.tol = before


def choose_lam_alo(fit, lams):
    """``(lam, info)``: the λ of ``lams`` with the least weighted mean ALO loss, from one warm-started path on the
    fit's own features (see module), or ``(None, why)`` when ALO does not apply (:func:`alo_applies`). A λ at an
    end of ``lams`` is named in ``info["edge"]`` and the reason, and warned about (:func:`_autotune.note_edge`). Sets
    ``fit.alo = {"lam", "decisions"}`` (the chosen λ's ALO values of every row, the intercept added).

    The path runs from the largest λ down, each solve started from the last solution and stopped at the relative
    duality gap :data:`PATH_TOL` from the Newton step of the last λ's Hessian (:func:`_predicted`), and ends once
    the ALO loss has risen at :data:`RISES` consecutive λ (``info["skipped"]``: the smaller λ not solved).
    """
    ok, why = alo_applies(fit)
    if not ok:
        return None, why
    rep, loss = fit.represent(), fit.recipe.loss
    Z, Yc = _host(rep.Z), _host(fit.Yc)
    n, k = Z.shape[0], Yc.shape[1]
    w = _mean_one(fit.sample_weight, n)
    coupled = _coupled(loss, k)

    def point(lam, init, following):  # the solve at lam, its ALO values and the next solve's start
        res = fit.solve(lam, init)
        with fit.serial_blas():
            W = _host(res.W)
            H = hessian_of(Z, Yc, W, loss, lam, w, coupled, getattr(res, "hessian", None))
            F = _values(Z, Yc, W, loss, H, w, coupled)
            start = _predicted(W, H, lam, following, coupled) if PREDICT and following is not None else res.W
        return res, W, F, start

    order, curve, gaps, best, tol = walk_path(fit, lams, point, Yc, w)
    value, lam, fit.lam_start, F, at = best  # the final solve at lam starts from the path's solution
    if fit.recipe.fit_intercept:
        F = F + np.ravel(_host(fit.offset))
    fit.alo = {"lam": lam, "decisions": F}
    skipped = [float(v) for v in order[len(curve):]]
    info = {"chosen": lam, "criterion": "approximate leave-one-out loss", "lam_criterion": "alo",
            "value": float(value), "grid": [float(v) for v in order[:len(curve)]],
            "curve": [float(v) for v in curve], "skipped": skipped,
            "path": {"tol": tol, "predicted_starts": PREDICT, "relative_gaps": gaps},
            "folds": f"none (approximate leave-one-out on all {n} rows)",
            "reason": f"least mean approximate leave-one-out loss over {len(curve)} values of one warm-started path "
                      f"on all {n} rows (one Newton step per left-out row)"
                      + stopped_note(skipped)}
    return lam, note_edge(info, order, at, stacklevel=5)


def walk_path(fit, lams, point, Y, w):
    """The warm-started λ path of one-path criteria (:func:`choose_lam_alo`, the held-out share's
    :func:`skframe.models.machine._holdout.choose_lam_holdout`): from the largest λ of ``lams`` down, each solve
    stopped at :data:`PATH_TOL` (warnings of unconverged points silenced: a point is scored as it is, the final fit
    warns), until the score has risen at :data:`RISES` consecutive λ.

    ``point(lam, init, following) -> (result, W, F, start)``: the solve at ``lam`` from ``init``, the weights
    kept for the best point, the decision values ``F`` scored against ``Y`` with row weights ``w``
    (:func:`_score`; non-finite values score ``inf``) and the start of the solve at ``following`` (the next λ,
    None at the grid's end).

    Returns ``(order, curve, gaps, best, tol)``: the grid from the largest λ, the scores of the λ solved, their
    relative duality gaps, ``(score, lam, W, F, index)`` of the least score, the path's tolerance (None: the
    solver's own)."""
    order = np.sort(np.asarray(lams, dtype=float))[::-1]
    curve, gaps, best, init, rises = [], [], None, None, 0
    with warnings.catch_warnings(), _path_tolerance(fit.recipe.solver) as tol:
        warnings.simplefilter("ignore")
        for i, lam in enumerate(order):
            following = float(order[i + 1]) if i + 1 < order.size else None
            res, W, F, init = point(float(lam), init, following)
            gaps.append(float(getattr(res, "info", {}).get("relative_gap", np.nan)))
            value = _score(fit.recipe.loss, F, Y, w) if np.all(np.isfinite(F)) else np.inf
            rises = rises + 1 if curve and value > curve[-1] else 0
            curve.append(value)
            if best is None or value < best[0]:
                best = (value, float(lam), W, F, len(curve) - 1)
            if rises >= RISES:
                break
    return order, curve, gaps, best, tol


def stopped_note(skipped):
    """The reason's tail for a path that stopped at its :data:`RISES` rises before ``skipped`` (the smaller λ not
    solved), or "" when it solved the whole grid."""
    if not skipped:
        return ""
    rises = "one rise" if RISES == 1 else f"{RISES} consecutive rises"
    return (f"; the path stopped after {rises} of the loss, {len(skipped)} smaller "
            f"value{'s' if len(skipped) > 1 else ''} not solved")


def held_out_report(fit, est):
    """``est.held_out_``: the classification metrics of held-out probabilities at the chosen λ (through the
    calibration map, when there is one): every training row's ALO probabilities, or those of the held-out share
    of ``lam_criterion="holdout"`` (:mod:`skframe.models.machine._holdout`); None when the fit computed none.

    A held-out estimate without a second fit: ``{"method", "lam", "rows", "metrics"}``, the metrics those of
    :func:`skframe.metrics.classifier_report`. It is slightly optimistic where a held-out share's refit is not:
    λ is the grid's minimiser of the same values (of 8), the calibration map (3 numbers per column) was fitted on
    them, the sketch saw every row, and for ALO one Newton step stands for each refit (see module).
    """
    est.held_out_ = None
    lam = float(est.lam_path_[-1])
    alo, hold = getattr(fit, "alo", None), getattr(fit, "holdout", None)
    if alo is not None and alo["lam"] == lam:
        method, F, Y = "approximate leave-one-out", alo["decisions"], _host(fit.Y)
    elif hold is not None and hold["lam"] == lam:
        method, F, Y = "held-out share", hold["decisions"], _host(fit.Y[hold["rows"]])
    else:
        return
    P = class_probabilities(est.loss_, F, getattr(est, "calibration_", None))
    classes = est.classes_
    y = classes[row_codes(Y)]
    est.held_out_ = {"method": method, "lam": lam, "rows": int(y.size),
                     "metrics": classifier_report(y, classes[np.argmax(P, axis=1)], classes, P)}
