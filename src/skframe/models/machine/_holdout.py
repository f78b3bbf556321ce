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

Above :data:`PATH_ROWS` rows the path runs on a sample of that many rows, drawn within each class in proportion to
its rows with a fixed seed (:func:`path_sample`), and the held-out share is drawn within the sample: the λ path
then costs what it costs at :data:`PATH_ROWS` rows whatever n, and only the final fit passes over every row (as
the square loss, whose streamed fits choose λ on 20 000 evenly spaced rows). The sample's features are the fit's
own rows (in memory); where the rows stream, the features the plan keeps for the final fit are formed first and the
sample takes its rows of them (as two factors where the kept features are the kernel block and the projection:
no product of the sample's rows with the projection, 3-4 s of the 10-class fit at n = 10^6), else they are computed
for the sample on the fit's sketch (one pass over those rows). A λ chosen on fewer
rows errs toward more regularisation: at n = 10^6, d = 10 (``benchmarks/out/classification_million_1e6.json``)
the binary fit chose the same λ (10^-8) in 54 s instead of 149 s, the 10-class fit 10^-7 instead of 10^-8 in 114 s
instead of 591 s (both before the kept features were kept as two factors), for a test log-loss of 0.849 instead of
0.844; a sample of 50 000 rows chose 10^-6 (0.877).

:func:`auto_criterion` decides: k folds where the rows are not exchangeable (``cv_order="keep"``), where the loss
has no Hessian or probabilities, with an output matrix, or for rows on a Dask cluster; a held-out share where the
features stream (they are not kept for the leverages), where the multinomial's coupled Hessian exceeds
:data:`skframe.models.machine._alo.MAX_COUPLED` unknowns, or where the plan's Newton step does not form the
Hessian; approximate leave-one-out otherwise.
"""

from __future__ import annotations

import numpy as np

from skframe.compute.memory import empty_mapped
from skframe.contract.collections import take
from skframe.contract.problems import FactoredArrayProblem
from skframe.core.linalg import gather_rows
from skframe.models._autotune import note_edge
from skframe.models._core import Representation
from skframe.models.machine import _alo
from skframe.models.machine._labels import row_codes
from skframe.plugin.toolbox import choose_newton_step

__all__ = ["HOLDOUT_MAX", "HOLDOUT_SEED", "HOLDOUT_SHARE", "PATH_ROWS", "PATH_SEED", "auto_criterion",
           "choose_lam_holdout", "holdout_rows", "holdout_size", "path_sample"]

#: the share of the rows held out, and the most rows held out
HOLDOUT_SHARE, HOLDOUT_MAX = 0.1, 50_000
#: the seed of the held-out draw (the k folds' is 0 too)
HOLDOUT_SEED = 0
#: the most rows of the λ path: above, the path runs on a stratified sample of this many rows (see module)
PATH_ROWS = 100_000
#: the dtype of the sample path's features (see module): the Newton solver reads them as they are, every product
#: in float64 a block of rows at a time; float32 halves the bytes each of the path's passes reads
PATH_DTYPE = np.float32
#: the seed of the path's sample
PATH_SEED = 1


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


def path_sample(Y, n=None):
    """The rows (sorted) of the λ path where ``n`` exceeds :data:`PATH_ROWS`: :data:`PATH_ROWS` of them, drawn
    within each class in proportion to its rows (seed :data:`PATH_SEED`); None where the path takes every row.

    >>> path_sample(np.ones((1000, 1))) is None
    True
    """
    n = int(Y.shape[0] if n is None else n)
    return None if n <= PATH_ROWS else holdout_rows(Y, PATH_ROWS, seed=PATH_SEED)


class _SampleFactors:
    """The path sample's features as two factors: its rows of the kernel block the fit keeps, and the projection
    (the Newton solver reads them apart, as the final fit reads the whole block)."""

    kind = "sketch"

    def __init__(self, L, P):
        self.L, self.P = L, P

    def problem(self, Y):
        return FactoredArrayProblem(self.L, self.P, Y)


def _path_features(fit, rep, rows, local):
    """``(representation, Z_held)`` of the path's sample ``rows`` (``local``: its held-out positions), in float32
    (:data:`PATH_DTYPE`, see module): rows of the features the fit holds in memory; where they stream, rows of
    the features the fit keeps, formed here for the whole fit where the plan keeps them (the final fit reads the
    same), and as two factors where it keeps the kernel block (no ``rows x m x r`` product); else computed for
    them on the fit's sketch (one pass over those rows)."""
    if rep.Z is not None:
        Z = rep.Z[rows]
    else:
        if getattr(rep, "kept", None) is None and callable(getattr(rep, "problem", None)):
            factors = getattr(rep.problem(fit.Yc), "factors", None)  # forms what the plan keeps (once a fit)
            if callable(factors):
                factors()
        if getattr(rep, "kept_right", None) is not None:  # the kept kernel block's rows and the projection
            L = gather_rows(rep.kept, rows, empty_mapped((rows.size, rep.kept.shape[1]), PATH_DTYPE))
            return _SampleFactors(L, rep.kept_right), L[local] @ rep.kept_right
        kept = rep.kept_rows(rows) if callable(getattr(rep, "kept_rows", None)) else None
        Z = kept if kept is not None else fit.predict_rows(take(fit.X, rows), validated=True)
    Z = np.ascontiguousarray(Z, dtype=PATH_DTYPE) if isinstance(Z, np.ndarray) else Z  # (a GPU's: as it is)
    return Representation("sketch", Z), Z[local]


def choose_lam_holdout(fit, lams):
    """``(lam, info)``: the λ of ``lams`` with the least weighted mean loss on a held-out share of the rows, from
    one warm-started path on the others (see module). Sets ``fit.holdout = {"lam", "rows", "decisions"}`` (the
    held-out rows, their decision values at the chosen λ with the intercept) and ``fit.lam_start``."""
    rep = fit.represent()
    n = int(fit.Y.shape[0])
    base = np.ones(n) if fit.sample_weight is None else np.asarray(fit.sample_weight, dtype=np.float64)
    sample = path_sample(fit.Y, n)
    if sample is None:  # every row: the held-out share gets weight zero in the solves on the fit's features
        held = holdout_rows(fit.Y, holdout_size(n))
        weights = base.copy()
        weights[held] = 0.0
        path_rep, Yc = rep, fit.Yc
        Z_held = rep.Z[held] if rep.Z is not None else fit.predict_rows(take(fit.X, held), validated=True)
    else:  # a stratified sample of PATH_ROWS rows, its own held-out share within it
        local = holdout_rows(fit.Y[sample], holdout_size(sample.size))
        held = sample[local]
        weights = base[sample].copy()
        weights[local] = 0.0
        (path_rep, Z_held), Yc = _path_features(fit, rep, sample, local), fit.Yc[sample]
    rows = n if sample is None else sample.size
    solve = fit.recipe.reweigh(weights)
    Z_held, Y_held, w_held = _alo._host(Z_held), _alo._host(fit.Yc[held]), base[held]

    def point(lam, init, following):  # the solve at lam without the held-out rows, their decision values
        with fit.serial_blas():
            res = solve(path_rep, Yc, lam, init, fit.rngs[-1])
        return res, res.W, Z_held @ _alo._host(res.W), res.W

    order, curve, gaps, best, tol = _alo.walk_path(fit, lams, point, Y_held, w_held)
    value, lam, fit.lam_start, F, at = best
    if fit.recipe.fit_intercept:
        F = F + np.ravel(_alo._host(fit.offset))
    fit.holdout = {"lam": lam, "rows": held, "decisions": F}
    skipped = [float(v) for v in order[len(curve):]]
    where = (f"of {rows} rows" if sample is None else
             f"of a sample of {rows} of the {n} rows (stratified by class, seed {PATH_SEED})")
    info = {"chosen": lam, "criterion": "held-out loss", "lam_criterion": "holdout", "value": float(value),
            "grid": [float(v) for v in order[:len(curve)]], "curve": [float(v) for v in curve], "skipped": skipped,
            "path": {"tol": tol, "relative_gaps": gaps, "rows": int(rows)},
            "folds": (f"one held-out share: {held.size} {where} (stratified by class, seed {HOLDOUT_SEED}), "
                      "weight zero in the path's solves"),
            "reason": (f"least mean held-out loss of {held.size} rows over {len(curve)} values of one warm-started "
                       f"path on the other {rows - held.size} "
                       + ("rows" if sample is None else f"rows of a sample of {rows} (of {n})"))
                      + _alo.stopped_note(skipped)}
    return lam, note_edge(info, order, at, stacklevel=5)
