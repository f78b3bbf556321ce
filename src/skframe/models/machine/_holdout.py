"""``lam="auto"`` for the logistic and multinomial classifiers by a held-out share of the rows, scored along one
warm-started λ path, and the rule (``lam_criterion="auto"``, the default) that chooses between it, approximate
leave-one-out and k folds.

Approximate leave-one-out (:mod:`skframe.models.machine._alo`) needs the objective's Hessian at every λ of the
path and one triangular solve per row: ``n r^2 k (k + 1) / 2`` multiply-adds to form it and ``n r^2 / 2`` more for
the leverages. Where the Newton solver forms that Hessian at every step anyway (the execution plan's
:func:`skframe.compute.plan_newton.choose_newton_step` says "direct"), the leave-one-out values cost about one
more pass per λ. Where it does not (Newton–CG on many rows: its steps cost ``O(n r k)`` products), the leverages
would cost more than the path: at n = 100 000 and r = 633 they were two thirds of the fit
(``benchmarks/out/classification_million.json``). There the rows are many, and a held-out share scores λ as
well as leaving each row out: :func:`choose_lam_holdout` draws :func:`holdout_size` rows (a tenth, at most
:data:`HOLDOUT_MAX`), stratified by class with a fixed seed, gives them weight zero in the path's solves (the
same objective on the other rows, with their sample weights) and scores each λ by the weighted mean loss of the
held-out rows' decision values, as the k folds score theirs. The path runs from the largest λ down, each solve
started from the last solution and stopped at :data:`skframe.models.machine._alo.PATH_TOL`, and stops at the
first λ whose held-out loss rises. The features of the held-out rows are those of the fit (in memory, else
computed once for them); the sketch was drawn from all the rows, as leave-one-out's is, but their labels take no
part in the solves. The final fit at the chosen λ starts from the path's solution there and uses every row.
The calibration map is fitted on the held-out rows' decision values (``fit.holdout``), and
``held_out_`` holds their classification metrics (through the map).

:func:`auto_criterion` decides: k folds where the rows are not exchangeable (``cv_order="keep"``), where the loss
has no Hessian or probabilities, with an output matrix, or for rows on a Dask cluster; a held-out share where the
features stream (they are not kept for the leverages), where the multinomial's coupled Hessian exceeds
:data:`skframe.models.machine._alo.MAX_COUPLED` unknowns, or where the plan's Newton step does not form the
Hessian; approximate leave-one-out otherwise.
"""

from __future__ import annotations

import numpy as np

from skframe.contract.collections import take
from skframe.models._autotune import note_edge
from skframe.models.machine import _alo
from skframe.models.machine._labels import row_codes
from skframe.plugin.toolbox import choose_newton_step

__all__ = ["HOLDOUT_MAX", "HOLDOUT_SEED", "HOLDOUT_SHARE", "auto_criterion", "choose_lam_holdout", "holdout_rows",
           "holdout_size"]

#: the share of the rows held out, and the most rows held out
HOLDOUT_SHARE, HOLDOUT_MAX = 0.1, 50_000
#: the seed of the held-out draw (the k folds' is 0 too)
HOLDOUT_SEED = 0


def holdout_size(n):
    """Rows held out of n: a tenth, at least ``min(1000, n // 2)``, at most :data:`HOLDOUT_MAX`.

    >>> holdout_size(100_000), holdout_size(5_000), holdout_size(10**7)
    (10000, 1000, 50000)
    """
    n = int(n)
    return int(min(HOLDOUT_MAX, max(int(HOLDOUT_SHARE * n), min(1000, n // 2))))


def holdout_rows(Y, size, seed=HOLDOUT_SEED):
    """``size`` row indices (sorted) drawn at random within each class of the ±1 targets ``Y`` in proportion to the
    class's rows (each class with two rows or more keeps one row at least in each part)."""
    codes = row_codes(np.asarray(Y))
    n, rng, out = codes.size, np.random.default_rng(seed), []
    for c in np.unique(codes):
        rows = np.flatnonzero(codes == c)
        take_c = int(round(size * rows.size / n))
        if rows.size >= 2:
            take_c = min(max(take_c, 1), rows.size - 1)
        else:
            take_c = 0
        out.append(rng.choice(rows, size=take_c, replace=False))
    return np.sort(np.concatenate(out)).astype(np.int64)


def auto_criterion(fit):
    """``(criterion, reason)``: ``"alo"``, ``"holdout"`` or ``"kfold"`` for ``lam_criterion="auto"`` (see
    module)."""
    why = _alo.one_path_refused(fit)
    if why is not None:
        return "kfold", why
    if fit.plan.executor == "dask":
        return "kfold", "rows on a Dask cluster (the folds' fits run there)"
    rep = fit.represent()
    n, k = int(fit.Y.shape[0]), int(fit.Yc.shape[1])
    if rep.Z is None:
        return "holdout", "the features stream (they are not kept for leave-one-out's leverages)"
    r = int(rep.Z.shape[1])
    if _alo._coupled(fit.recipe.loss, k) and r * k > _alo.MAX_COUPLED:
        return "holdout", (f"the multinomial's coupled Hessian has r k = {r * k} > {_alo.MAX_COUPLED} unknowns "
                           "(leave-one-out would invert it)")
    solver = fit.recipe.solver
    step = getattr(solver, "step", "auto") if getattr(solver, "name", None) == "newton" else "auto"
    if step == "auto":
        step, why = choose_newton_step(n, r, k, kept=True)
    else:
        why = f"the newton solver's step={step!r}"
    if step == "cg":
        return "holdout", f"the Newton steps do not form the Hessian, which leave-one-out needs at every λ: {why}"
    return "alo", f"the Newton steps form the Hessian, which leave-one-out reuses: {why}"


def choose_lam_holdout(fit, lams):
    """``(lam, info)``: the λ of ``lams`` with the least weighted mean loss on a held-out share of the rows, from
    one warm-started path on the others (see module). Sets ``fit.holdout = {"lam", "rows", "decisions"}`` (the
    held-out rows, their decision values at the chosen λ with the intercept) and ``fit.lam_start``."""
    rep = fit.represent()
    n = int(fit.Y.shape[0])
    held = holdout_rows(fit.Y, holdout_size(n))
    base = np.ones(n) if fit.sample_weight is None else np.asarray(fit.sample_weight, dtype=np.float64)
    weights = base.copy()
    weights[held] = 0.0
    solve = fit.recipe.reweigh(weights)
    Z_held = rep.Z[held] if rep.Z is not None else fit.predict_rows(take(fit.X, held), validated=True)
    Z_held, Y_held, w_held = _alo._host(Z_held), _alo._host(fit.Yc[held]), base[held]

    def point(lam, init, following):  # the solve at lam without the held-out rows, their decision values
        with fit.serial_blas():
            res = solve(rep, fit.Yc, lam, init, fit.rngs[-1])
        return res, res.W, Z_held @ _alo._host(res.W), res.W

    order, curve, gaps, best, tol = _alo.walk_path(fit, lams, point, Y_held, w_held)
    value, lam, fit.lam_start, F, at = best
    if fit.recipe.fit_intercept:
        F = F + np.ravel(_alo._host(fit.offset))
    fit.holdout = {"lam": lam, "rows": held, "decisions": F}
    skipped = [float(v) for v in order[len(curve):]]
    info = {"chosen": lam, "criterion": "held-out loss", "lam_criterion": "holdout", "value": float(value),
            "grid": [float(v) for v in order[:len(curve)]], "curve": [float(v) for v in curve], "skipped": skipped,
            "path": {"tol": tol, "relative_gaps": gaps},
            "folds": (f"one held-out share: {held.size} of {n} rows (stratified by class, seed {HOLDOUT_SEED}), "
                      "weight zero in the path's solves"),
            "reason": (f"least mean held-out loss of {held.size} rows over {len(curve)} values of one warm-started "
                       f"path on the other {n - held.size} rows")
                      + _alo.stopped_note(skipped)}
    return lam, note_edge(info, order, at, stacklevel=5)
