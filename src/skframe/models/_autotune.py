"""Hyper-parameters chosen from the data as part of a fit: ``lam="auto"`` and ``gamma="auto"``.

**Square loss** (closed form): by default 5 shuffled folds from sums of the fit's own features
(:mod:`skframe.models._square_cv`; see :func:`choose_lam_square`), or GCV.
With features ``Z`` (n x r) and centred targets ``Y`` (n x d), the fitted values
at λ are ``H(λ) Y`` with ``H(λ) = Z (Z^T Z + n λ I)^{-1} Z^T``. From the one eigendecomposition
``Z^T Z = Q diag(s) Q^T`` and ``c = Q^T Z^T Y`` (the sums the fit makes, streamed or not), with
``g = c / sqrt(s)`` (the coordinates of Y on the left singular vectors of Z)::

    ||(I - H) Y||^2 = ||Y||^2 - ||g||^2 + sum_k (n λ / (s_k + n λ))^2 ||g_k||^2
    tr H            = sum_k s_k / (s_k + n λ)
    GCV(λ)          = n ||(I - H) Y||^2 / (n - tr H)^2

(Golub, Heath and Wahba, "Generalized cross-validation as a method for choosing a good ridge parameter").
The exact model uses ``K = U diag(s) U^T`` and ``g = U^T Y`` in the same formulas. Leave-one-out needs the
diagonal of H, ``h_i = sum_k P_ik^2 s_k / (s_k + n λ)`` with ``P = Z Q diag(s)^{-1/2}``, hence the features in
memory: ``LOO(λ) = (1/n) sum_i ||e_i||^2 / (1 - h_i)^2`` with ``e = (I - H) Y``.

**Other losses**: k-fold cross-validation along the λ grid, each fold fitted through :class:`Fit` (one
representation per fold, the λ path solved warm-started from the largest λ), scored by the held-out loss. The
folds are :mod:`skframe.models._folds`' (shuffled from the seed, stratified by class for a classifier; in file
order with ``cv_order="keep"``).

**Bandwidth** (``gamma="auto"``): the median heuristic ``γ₀ = 1 / median ||x_i - x_j||^2`` (Gaussian kernels;
other kernels start from their ``"scale"`` value), then ``γ₀ × 10^k``, ``k ∈ {-1, -0.5, 0, 0.5, 1}``, scored by
the minimum over λ of the square-loss GCV on at most :data:`GAMMA_ROWS` evenly spaced rows; a best value at an
end of that grid extends it by half a decade (twice at most).
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.optimize import minimize_scalar

from skframe.contract.collections import n_items, take
from skframe.exceptions import SkframeWarning
from skframe.models import _square_cv
from skframe.models._folds import default_folds

__all__ = ["AUTO_LAMS", "LamAtEdgeWarning", "is_auto", "square_spectrum", "gcv_curve", "loo_curve", "choose_lam_square",
           "choose_lam_kfold", "note_edge", "lam_of_learned_scales", "median_gamma", "gamma_candidates", "choose_gamma",
           "squared_norm", "subsample_rows", "GAMMA_ROWS"]

#: the λ grid ``lam="auto"`` scores (then refined between the best value's neighbours for the square loss)
AUTO_LAMS = np.logspace(-10, 0, 41)
#: decades (four values each) the square loss's grid is extended by, at most, toward an end holding the best λ
LAM_EXTEND = 2
#: the criterion of the square loss's ``lam="auto"``: "cv" (k shuffled folds from the fit's sums) or "gcv"
SQUARE_CRITERION = "cv"
#: the coarser grid of the k-fold search (each value a solve per fold)
KFOLD_LAMS = np.logspace(-8, -1, 8)
#: rows (evenly spaced) on which the bandwidth candidates are scored
GAMMA_ROWS = 3000
#: folds of the k-fold search of the losses without a closed form
KFOLD = 3
_MEDIAN_ROWS = 500
#: bandwidths whose score is within this share of the least are near-ties: the largest of them is kept
GAMMA_TIE = 0.01
#: the exponents k of the first bandwidths scored, γ₀ × 10^k
GAMMA_STEPS = (-1.0, -0.5, 0.0, 0.5, 1.0)


class LamAtEdgeWarning(SkframeWarning):
    """``lam="auto"`` chose a value at an end of its (extended) grid."""


def is_auto(value):
    """True for the string ``"auto"`` (any case)."""
    return isinstance(value, str) and value.lower() == "auto"


# ----------------------------------------------------------------------------- square loss
def square_spectrum(A, B, rtol=1e-12):
    """``(s, g2)`` of the sketched sums ``A = Z^T Z`` (r x r), ``B = Z^T Y`` (r x d).

    ``s`` the eigenvalues of A (those below ``rtol * max`` dropped) and ``g2[k] = ||Q_k^T B||^2 / s_k``,
    the squared norm of Y's coordinates on the k-th left singular vector of Z.
    """
    s, Q = np.linalg.eigh(0.5 * (A + A.T))
    keep = s > rtol * max(float(s.max(initial=0.0)), np.finfo(float).tiny)
    c = Q[:, keep].T @ B
    s = s[keep]
    return s, (c * c).sum(axis=1) / s


def gcv_curve(s, g2, yy, n, lams):
    """GCV(λ) for each λ of ``lams`` from the spectrum ``(s, g2)``, ``yy = ||Y||^2`` and n rows."""
    lams = np.asarray(lams, dtype=float)[:, None]
    shrink = n * lams / (s[None, :] + n * lams)
    rss = max(yy - float(g2.sum()), 0.0) + (shrink ** 2) @ g2
    dof = n - (1.0 - shrink).sum(axis=1)
    return n * rss / np.maximum(dof, 1e-12 * n) ** 2


def loo_curve(Z, Y, lams):
    """Exact leave-one-out mean squared error of ``W(λ) = (Z^T Z + n λ I)^{-1} Z^T Y`` for each λ (Z in memory)."""
    n = Z.shape[0]
    s, Q = np.linalg.eigh(Z.T @ Z)
    keep = s > 1e-12 * max(float(s.max(initial=0.0)), np.finfo(float).tiny)
    s, Q = s[keep], Q[:, keep]
    P = (Z @ Q) / np.sqrt(s)
    G = P.T @ Y
    out = []
    for lam in np.asarray(lams, dtype=float):
        f = s / (s + n * lam)
        E = Y - P @ (f[:, None] * G)
        h = (P * P) @ f
        out.append(float(((E / (1.0 - h)[:, None]) ** 2).sum() / n))
    return np.asarray(out)


def _refine(curve_at, grid, values):
    """The minimiser of ``curve_at(λ)`` between the neighbours of the grid's best value (log scale)."""
    i = int(np.nanargmin(values))
    lo, hi = np.log10(grid[max(i - 1, 0)]), np.log10(grid[min(i + 1, len(grid) - 1)])
    if hi <= lo:
        return float(grid[i]), float(values[i])
    res = minimize_scalar(lambda t: float(curve_at(10.0 ** t)), bounds=(lo, hi), method="bounded",
                          options={"xatol": 1e-3})
    if res.success and res.fun <= values[i]:
        return float(10.0 ** res.x), float(res.fun)
    return float(grid[i]), float(values[i])


def squared_norm(Y):
    total = (Y * Y).sum()
    return float(total.compute() if hasattr(total, "compute") else total)


def square_criterion_name():
    """The name :func:`choose_lam_square` gives its criterion in ``info["criterion"]`` (``"5-fold cv"``)."""
    return f"{_square_cv.SQUARE_FOLDS}-fold cv" if SQUARE_CRITERION == "cv" else "gcv"


def _gcv_of_fit(fit):
    """The GCV curve ``curve(lams)`` of a square-loss fit from one eigendecomposition of its sums, and its rank."""
    rep = fit.represent()
    if rep.K is not None:  # the exact model keeps K: K = U diag(s) U^T, g = U^T Y
        s, U = np.linalg.eigh(rep.K)
        keep = s > 1e-12 * max(float(s.max(initial=0.0)), np.finfo(float).tiny)
        G = U[:, keep].T @ np.asarray(fit.Yc)
        s, g2 = s[keep], (G * G).sum(axis=1)
    else:
        A, B = rep.problem(fit.Yc).gram()
        s, g2 = square_spectrum(np.asarray(A), np.asarray(B))
    yy, n = squared_norm(fit.Yc), fit.n
    return (lambda lams: gcv_curve(s, g2, yy, n, np.atleast_1d(lams))), int(s.size)


def _extended(curve, grid, values, extend=LAM_EXTEND):
    """The grid and its curve extended by a decade (four values) toward an end that holds the least value, at most
    ``extend`` times; and ``None``, ``"lower"`` or ``"upper"``: the end the least value still lies at."""
    step = np.log10(grid[1] / grid[0]) if grid.size > 1 else 0.25
    for _ in range(extend):
        best = int(np.nanargmin(values))
        if 0 < best < grid.size - 1:
            break
        ends = np.arange(1, 5) * step
        more = grid[0] * 10.0 ** -ends[::-1] if best == 0 else grid[-1] * 10.0 ** ends
        grid = np.concatenate([more, grid] if best == 0 else [grid, more])
        values = np.concatenate([curve(more), values] if best == 0 else [values, curve(more)])
    best = int(np.nanargmin(values))
    return grid, values, ("lower" if best == 0 else "upper" if best == grid.size - 1 else None)


def choose_lam_square(fit, lams=AUTO_LAMS, criterion=None, extend=LAM_EXTEND):
    """``(lam, info)``: the λ of the square-loss fit ``fit`` with the least held-out error of k shuffled folds
    (:mod:`skframe.models._square_cv`, from sums of the fit's own features), or the least GCV
    (``criterion="gcv"``, or where no folds can be formed: Dask data). A least value at an end of ``lams``
    extends the grid (``extend`` decades at most, :data:`LAM_EXTEND`); one still there is named in
    ``info["edge"]`` and warned about."""
    criterion = SQUARE_CRITERION if criterion is None else criterion
    lams = np.asarray(lams, dtype=float)
    systems, words = None, None
    with fit.serial_blas():
        if criterion == "cv":
            systems, words = _square_cv.fit_fold_systems(fit)
        if systems is not None:
            rank = int(systems[0].s.size)

            def curve(v):
                return _square_cv.cv_curve(systems, v)
            name, what = square_criterion_name(), f"held-out mean squared error of {words}"
        else:
            curve, rank = _gcv_of_fit(fit)
            name, what = "gcv", "generalised cross-validation (GCV) from one eigendecomposition"
            if criterion == "cv":
                what += f" ({words}: no folds)"
        grid, values, edge = _extended(curve, lams, curve(lams), extend=extend)
        lam, best = _refine(lambda v: curve(v)[0], grid, values)
    info = {"chosen": lam, "criterion": name, "value": best, "grid": [float(v) for v in grid],
            "curve": [float(v) for v in values], "rank": rank, "edge": edge,
            "reason": f"least {what} over {grid.size} values"}
    if words is not None and systems is not None:
        info["folds"] = words
    if edge is not None:
        info["reason"] += (f"; at the {edge} end of the grid ({grid[0]:.0e} to {grid[-1]:.0e}): the data "
                           f"favour {'less' if edge == 'lower' else 'more'} regularisation than it holds")
        warnings.warn(f"lam='auto' chose {lam:.3g}, the {edge} end of its grid {grid[0]:.0e} to {grid[-1]:.0e} "
                      f"({name}); give lam explicitly or check the data for outliers and data-entry errors",
                      LamAtEdgeWarning, stacklevel=3)
    return lam, info


def lam_of_learned_scales(learned, n):
    """``(lam, info)`` of a square-loss fit on n rows with length-scales learned by the marginal likelihood: the λ
    of the optimum, on its ``rows`` rows, at the same noise-to-signal ratio ``rows λ_rows = n λ`` (the
    Gaussian process's noise variance over its amplitude, which does not depend on the number of rows)."""
    lam = float(learned["lam_on_rows"]) * int(learned["rows"]) / int(n)
    return lam, {"chosen": lam, "criterion": "ml", "value": float(learned["value"]), "grid": [lam],
                 "curve": [float(learned["value"])],
                 "reason": f"learned with the length-scales (marginal likelihood on {learned['rows']} rows), "
                           "at the same noise-to-signal ratio on all rows"}

# ----------------------------------------------------------------------------- other losses
def _held_out_loss(fit, X_te, Y_te, W):
    """Mean loss of the weights ``W`` (output matrix not applied) on held-out rows, the targets shifted by the
    fold's intercept as the training targets were."""
    M = fit.recipe.M
    F = fit.predict_rows(X_te, W if M is None else W @ M)
    if fit.recipe.fit_intercept:
        Y_te = Y_te - fit.offset
    loss = fit.recipe.loss
    if loss is None:
        return float(((F - Y_te) ** 2).sum(axis=1).mean())
    return float(np.mean(loss.value(F, Y_te)))


def choose_lam_kfold(X, Y, make_fit, lams=KFOLD_LAMS, folds=KFOLD, *, labels=None, cv_order="shuffle",
                     random_state=None):
    """``(lam, info)``: the λ of ``lams`` with the least mean held-out loss over ``folds`` folds.

    The folds are :func:`skframe.models._folds.default_folds`: shuffled from ``random_state`` and stratified on
    the class ``labels`` when given, or consecutive with ``cv_order="keep"``; ``info["folds"]`` names them.
    ``make_fit(train_rows)`` builds the fold's :class:`Fit` (the estimator's own recipe); each fold is
    represented once and its λ path solved from the largest λ down, each solve warm-started.
    """
    cuts, words = default_folds(n_items(X), folds, labels=labels, cv_order=cv_order, random_state=random_state)
    order = np.sort(np.asarray(lams, dtype=float))[::-1]
    losses = np.zeros((len(cuts), order.size))
    for k, (train, held) in enumerate(cuts):
        fit = make_fit(train)
        Y_te = np.asarray(Y[held])
        with warnings.catch_warnings():  # a fold's unconverged solve is scored as it is; the final fit warns
            warnings.simplefilter("ignore")
            for j, res in enumerate(fit.solve_path(order)):
                losses[k, j] = _held_out_loss(fit, take(X, held), Y_te, res.W)
    mean = losses.mean(axis=0)
    j = int(np.argmin(mean))
    info = {"chosen": float(order[j]), "criterion": f"{len(cuts)}-fold held-out loss", "value": float(mean[j]),
            "grid": [float(v) for v in order], "curve": [float(v) for v in mean], "folds": words,
            "reason": f"least mean held-out loss of {words} over {order.size} values"}
    return float(order[j]), note_edge(info, order, j)


def note_edge(info, grid, best, stacklevel=4):
    """``info`` of a λ search over ``grid`` (any order) whose least value is ``grid[best]``, with ``info["edge"]``
    set: ``"lower"`` or ``"upper"`` when it is the grid's least or largest value (then named in ``info["reason"]``
    and warned about as a :class:`LamAtEdgeWarning`), else None. A grid end is the one place the search cannot
    tell a best value from one beyond its reach, so it is never taken silently."""
    grid = np.asarray(grid, dtype=float)
    lam = float(grid[best])
    edge = None if grid.size < 2 else "lower" if lam == grid.min() else "upper" if lam == grid.max() else None
    info["edge"] = edge
    if edge is not None:
        low, high = float(grid.min()), float(grid.max())
        info["reason"] += (f"; at the {edge} end of the grid ({low:.0e} to {high:.0e}): the data favour "
                           f"{'less' if edge == 'lower' else 'more'} regularisation than it holds")
        warnings.warn(f"lam='auto' chose {lam:.3g}, the {edge} end of its grid {low:.0e} to {high:.0e} "
                      f"({info['criterion']}); give lam explicitly or check the data for outliers and data-entry "
                      "errors", LamAtEdgeWarning, stacklevel=stacklevel)
    return info


# ----------------------------------------------------------------------------- bandwidth
def median_gamma(X):
    """``1 / median ||x_i - x_j||^2`` over the pairs of at most 500 evenly spaced rows (1.0 if all equal)."""
    n = n_items(X)
    rows = take(X, np.unique(np.linspace(0, n - 1, min(n, _MEDIAN_ROWS)).astype(int)))
    A = np.asarray(rows.toarray() if hasattr(rows, "toarray") else rows, dtype=np.float64)
    sq = (A * A).sum(axis=1)
    D = np.maximum(sq[:, None] + sq[None, :] - 2.0 * A @ A.T, 0.0)
    d = D[np.triu_indices(A.shape[0], 1)]
    d = d[d > 0]
    return 1.0 / float(np.median(d)) if d.size else 1.0


def gamma_candidates(gamma0):
    """The values ``gamma="auto"`` scores first: ``γ₀ × 10^k``, k = -1, -0.5, 0, 0.5, 1."""
    return [float(gamma0 * 10.0 ** k) for k in GAMMA_STEPS]


def choose_gamma(score, gamma0, steps=GAMMA_STEPS, extend=2, tie=GAMMA_TIE):
    """``(gamma, info)``: the largest γ whose ``score(gamma)`` is within a share ``tie`` of the least over
    ``gamma0 × 10^k`` for k in ``steps``; a least value at an end of the grid extends it by half a decade that
    way, at most ``extend`` times.

    Bandwidths that score alike on held-out rows are told apart by what they do away from the data: with a large
    γ (a short length-scale) the fit returns to the intercept a few length-scales from the training inputs, while
    a small γ behaves like a low-degree polynomial whose values far away have no bound (one test row with a
    data-entry error 40 standard deviations out was predicted at -105 712 for prices of 340 to 18 806). Among
    the near-ties the most local one is kept."""
    ks = list(steps)
    values = [float(score(gamma0 * 10.0 ** k)) for k in ks]
    for _ in range(extend):
        best = int(np.argmin(values))
        if 0 < best < len(ks) - 1:
            break
        k = ks[0] - 0.5 if best == 0 else ks[-1] + 0.5
        value = float(score(gamma0 * 10.0 ** k))
        ks, values = ([k] + ks, [value] + values) if best == 0 else (ks + [k], values + [value])
    best = int(np.argmin(values))
    grid = [float(gamma0 * 10.0 ** k) for k in ks]
    near = [j for j, v in enumerate(values) if values[best] > 0 and v <= values[best] * (1.0 + tie)] or [best]
    pick = max(near, key=lambda j: grid[j])
    edge = "lower" if best == 0 else "upper" if best == len(grid) - 1 else None  # still at an end once extended
    return grid[pick], {"chosen": grid[pick], "criterion": "gcv", "value": values[pick], "grid": grid,
                        "curve": values, "least": grid[best], "tie": tie, "edge": edge}


def subsample_rows(n, rows=GAMMA_ROWS):
    """At most ``rows`` evenly spaced row indices of n."""
    return np.unique(np.linspace(0, n - 1, min(n, rows)).astype(int))
