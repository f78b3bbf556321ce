"""Calibrated probabilities of the logistic classifier, from approximate leave-one-out decision values.

Each one-vs-rest column of a ``loss="logistic"`` classifier (one column for two classes) gets the map

    P(y = +1 | f) = eps + (1 - 2 eps) sigma(a f + b).

``"sigmoid"`` (``eps = 0``) is Platt's scaling (Platt, "Probabilistic outputs for support vector machines and
comparisons to regularized likelihood methods", 1999). ``"lapse"`` adds the lapse rate ``eps`` in [0, 1/2): the
share of labels flipped at random, which caps how sure a prediction may be (the label-noise model of logistic
regression: Bootkrajang and Kabán, "Label-noise robust logistic regression and its applications", ECML PKDD
2012). A penalised logistic fit on such labels is under-confident near the boundary and over-confident far
from it, and a sigmoid alone cannot bend both ways.

``a``, ``b`` and ``eps`` maximise the weighted likelihood of held-out decision values, which the fit gives
without a refit: the approximate leave-one-out value of row i (Rad and Maleki, "A scalable estimate of the
out-of-sample prediction error via approximate leave-one-out cross-validation", JRSS B 2020; one Newton step
from the solution with row i removed, by Sherman-Morrison)

    f_{-i} = f_i + l'_i h_i / (1 - l''_i h_i),    h_i = w_i z_i^T H^{-1} z_i / n,

for the objective ``(1/n) sum_i w_i l(f_i, y_i) + (lam/2) ||W||^2`` with mean-1 weights ``w`` and ``H`` its
Hessian at the solution (the Newton solver's last one, else formed in one pass over the rows). The values come
from at most :data:`MAX_ROWS` evenly spaced rows: three numbers per column need no more. Where ``lam="auto"`` was
chosen on a held-out share of the rows (:mod:`skframe.models.machine._holdout`), those rows' decision values at
the chosen λ (from the path's fit on the other rows) are the held-out values instead. A lapse rate that
stands for fewer than :data:`MIN_LAPSE_ROWS` of them (``eps`` times the rows' weight) is not told apart from one or
two far-off rows, and the sigmoid is kept. Rows kept in time order (the classifier's ``cv_order="keep"``) are not
exchangeable, as leaving one out assumes: their held-out values come from :data:`KEEP_FOLDS` consecutive folds
instead (each refitted at the model's λ, every row predicted by the fold that left it out). And a map must earn
its place: fitted on four fifths of the scores (consecutive fifths with ``"keep"``) and
scored on the fifth left (in turn), it is kept only when the log-loss it saves over ``sigma(f)`` is at least
:data:`MIN_GAIN_Z` standard errors above zero; otherwise the column keeps ``sigma(f)`` (``kept`` False). On a few
hundred clean rows a fitted map is mostly noise; on many rows with flipped labels it is not.
"""

from __future__ import annotations

import copy
from dataclasses import replace

import numpy as np
from scipy.linalg import cho_factor, solve_triangular
from scipy.optimize import minimize

from skframe.compute.backend import to_numpy
from skframe.contract.collections import take
from skframe.contract.tags import get_tags
from skframe.models._autotune import KFOLD
from skframe.models._folds import default_folds
from skframe.plugin.toolbox import weighted_outer

__all__ = ["METHODS", "calibration_applies", "MAX_ROWS", "MIN_GAIN_Z", "calibrate", "held_out_gain",
           "calibrated_logits", "calibrated_probabilities", "held_out_scores", "fold_scores"]

METHODS = ("sigmoid", "lapse")
MAX_ROWS = 5000


def calibration_applies(loss):
    """Whether ``calibration`` can map ``loss``'s decision values: one independent column per class, with
    probabilities and a Hessian (the logistic loss). The one rule the classifier and the automatic model ask.

    Parameters
    ----------
    loss : loss component
        A loss as :func:`skframe.get_loss` returns it.
    """
    return (not get_tags(loss, "loss").one_of_k and callable(getattr(loss, "probabilities", None))
            and callable(getattr(loss, "hessian", None)))

MAX_LAPSE = 0.49  # a lapse rate of 1/2 would make every prediction a coin toss
#: the fewest (weighted) rows a lapse rate must stand for: below, one or two far-off rows would set it alone
MIN_LAPSE_ROWS = 10.0
#: a map is kept when the log-loss it saves on held-out parts of the scores is this many standard errors above 0
MIN_GAIN_Z = 2.0
GAIN_FOLDS = 5
#: the consecutive folds of the held-out values with ``cv_order="keep"`` (those of ``lam="auto"``'s search)
KEEP_FOLDS = KFOLD


def _rows(n):
    """At most MAX_ROWS evenly spaced row indices of n (all of them for n <= MAX_ROWS)."""
    return np.unique(np.linspace(0, n - 1, min(n, MAX_ROWS)).round().astype(np.int64))


def _mean_one(weights, n):
    if weights is None:
        return np.ones(n)
    w = np.asarray(weights, dtype=np.float64)
    return w * (n / w.sum())


def _host(x):
    """``x`` as a float64 host array (a GPU fit's arrays are copied back)."""
    return np.asarray(to_numpy(x), dtype=np.float64)


def _column_hessians(fit, result, W, lam, w):
    """Each column's (r, r) Hessian block of the objective at the weights W (r, k): the solver's
    (``result.hessian``), else one pass."""
    r, k = W.shape
    H = getattr(result, "hessian", None)
    if H is not None and np.shape(H) == (r * k, r * k):
        H4 = _host(H).reshape(r, k, r, k)
        return [H4[:, j, :, j] for j in range(k)]
    loss = fit.recipe.loss
    blocks = [np.zeros((r, r)) for _ in range(k)]
    for start, Zb, Yb in fit.problem().blocks():
        Zb = _host(Zb)
        D = np.einsum("ijj->ij", loss.hessian(Zb @ W, _host(Yb))) * w[start:start + Zb.shape[0], None]
        for j in range(k):
            blocks[j] += weighted_outer(Zb, D[:, j])
    n = w.size
    for B in blocks:
        B /= n
        B[np.diag_indices_from(B)] += lam
    return blocks


def held_out_scores(fit, result, lam):
    """``(rows, F_loo, T)``: approximate leave-one-out decision values (s, k) of evenly spaced rows, with their
    ±1 targets T (see module); those ``lam="auto"`` computed for the same λ (``fit.alo``) when it did."""
    n = fit.Y.shape[0]
    alo = getattr(fit, "alo", None)
    if alo is not None and alo["lam"] == lam:
        rows = _rows(n)
        return rows, alo["decisions"][rows], _host(fit.Y[rows])
    loss, rep = fit.recipe.loss, fit.represent()
    W = _host(result.W)
    rows, w = _rows(n), _mean_one(fit.sample_weight, n)
    Z = rep.Z[rows] if rep.Z is not None else fit.predict_rows(take(fit.X, rows), validated=True)
    Z, Y = _host(Z), _host(fit.Yc[rows])
    F = Z @ W
    G = np.asarray(loss.gradient(F, Y), dtype=np.float64)
    D = np.einsum("ijj->ij", np.asarray(loss.hessian(F, Y), dtype=np.float64))
    out = F.copy()
    for j, H in enumerate(_column_hessians(fit, result, W, lam, w)):
        L = cho_factor(H, lower=True)[0]
        q = np.sum(solve_triangular(L, Z.T, lower=True, check_finite=False) ** 2, axis=0)
        h = w[rows] * q / n
        out[:, j] += G[:, j] * h / (1.0 - D[:, j] * h)
    if fit.recipe.fit_intercept:
        out += np.ravel(fit.offset)
    return rows, out, _host(fit.Y[rows])


def fold_scores(fit, lam, folds=KEEP_FOLDS):
    """``(rows, F_held, T, words)``: the decision values (s, k) of evenly spaced rows, each from a refit at ``lam``
    on the consecutive folds that leave it out (``cv_order="keep"``: rows in time order), their ±1 targets, and a
    description of the folds."""
    cuts, words = default_folds(fit.Y.shape[0], folds, cv_order="keep")
    est, w, rec = copy.copy(fit.estimator), fit.sample_weight, fit.recipe
    est.kernel_params = fit.kernel_params
    F = np.empty(fit.Y.shape, dtype=np.float64)
    for train, held in cuts:  # each fold's own fit, as lam="auto"'s k-fold search builds it (Fit.choose_lam)
        sub = type(fit)(est, take(fit.X, train), fit.Y[train],
                        rec if w is None else replace(rec, solve=rec.reweigh(w[train])),
                        sample_weight=None if w is None else w[train])
        F[held] = _host(sub.predict_rows(take(fit.X, held), sub.solve(lam).W, validated=True))
        if rec.fit_intercept:
            F[held] += np.ravel(_host(sub.offset))
    rows = _rows(F.shape[0])
    return rows, F[rows], _host(fit.Y[rows]), words


def _sigmoid(u):
    return 0.5 * (1.0 + np.tanh(0.5 * u))


def _nll_rows(p, t):
    """Each row's log-loss of the label t (0/1) under P(1) = p."""
    p = np.clip(p, 1e-15, 1.0 - 1e-15)
    return -(t * np.log(p) + (1.0 - t) * np.log1p(-p))


def fit_map(s, t, w, method):
    """``(a, b, eps)`` maximising the weighted likelihood of the labels ``t`` (0/1) given the scores ``s``."""
    total = float(w.sum())

    def nll(theta):
        a, b, eps = theta if method == "lapse" else (*theta, 0.0)
        sig = _sigmoid(a * s + b)
        p = np.clip(eps + (1.0 - 2.0 * eps) * sig, 1e-15, 1.0 - 1e-15)
        value = float(np.sum(w * _nll_rows(p, t))) / total
        dp = -w * (t / p - (1.0 - t) / (1.0 - p)) / total  # d value / d p per row
        du = dp * (1.0 - 2.0 * eps) * sig * (1.0 - sig)
        grad = [float(np.sum(du * s)), float(np.sum(du))]
        if method == "lapse":
            grad.append(float(np.sum(dp * (1.0 - 2.0 * sig))))
        return value, np.array(grad)

    start, bounds = [1.0, 0.0], [(0.0, None), (None, None)]
    if method == "lapse":
        start, bounds = start + [0.01], bounds + [(0.0, MAX_LAPSE)]
    res = minimize(nll, np.array(start), jac=True, method="L-BFGS-B", bounds=bounds)
    theta = res.x if np.all(np.isfinite(res.x)) and res.fun <= nll(np.array(start))[0] else np.array(start)
    a, b, eps = theta if method == "lapse" else (*theta, 0.0)
    if method == "lapse" and eps * total < MIN_LAPSE_ROWS:  # a few rows do not tell a lapse rate: the sigmoid
        return fit_map(s, t, w, "sigmoid")
    return float(a), float(b), float(eps)


def held_out_gain(s, t, w, method, folds=GAIN_FOLDS, consecutive=False):
    """``(gain, z)``: the mean log-loss the map saves on held-out parts of the scores (``folds`` parts, rows taken
    in turn, or ``consecutive`` blocks; the map fitted on the others) against the identity map ``sigma(f)``, and
    that gain over its standard error."""
    part = np.arange(s.size) * folds // s.size if consecutive else np.arange(s.size) % folds
    gain = np.zeros(s.size)
    for k in range(folds):
        out = part == k
        a, b, eps = fit_map(s[~out], t[~out], w[~out], method)
        mapped = eps + (1.0 - 2.0 * eps) * _sigmoid(a * s[out] + b)
        gain[out] = _nll_rows(_sigmoid(s[out]), t[out]) - _nll_rows(mapped, t[out])
    total = float(w.sum())
    mean = float(np.sum(w * gain)) / total
    spread = float(np.sqrt(np.sum(w * (gain - mean) ** 2) / total / max(float(np.sum(w > 0)) - 1.0, 1.0)))
    return mean, (mean / spread if spread > 0 else 0.0)


def calibrate(fit, est, result, method):
    """Set ``est.calibration_``: per column, the map fitted on held-out decision values, kept where it saves
    log-loss on held-out parts of them beyond :data:`MIN_GAIN_Z` standard errors, else the identity (see module)."""
    lam = float(est.lam_path_[-1])
    keep = getattr(est, "cv_order", "shuffle") == "keep"
    hold = getattr(fit, "holdout", None)
    if keep:
        rows, S, T, scores = fold_scores(fit, lam)
    elif hold is not None and hold["lam"] == lam:  # lam="auto" by a held-out share: its rows' decision values
        pick = _rows(hold["rows"].size)  # at most MAX_ROWS of them, evenly spaced
        rows, S, scores = hold["rows"][pick], hold["decisions"][pick], "held-out share"
        T = _host(fit.Y[rows])
    else:
        (rows, S, T), scores = held_out_scores(fit, result, lam), "approximate leave-one-out"
    w = _mean_one(fit.sample_weight, fit.Y.shape[0])[rows]
    maps, kept, gains = [], [], []
    for j in range(S.shape[1]):
        t = (T[:, j] > 0).astype(np.float64)
        gain, z = held_out_gain(S[:, j], t, w, method, consecutive=keep)
        keep = z >= MIN_GAIN_Z
        maps.append(fit_map(S[:, j], t, w, method) if keep else (1.0, 0.0, 0.0))
        kept.append(bool(keep))
        gains.append({"log_loss_saved": gain, "z": z})
    est.calibration_ = {"method": method, "slope": [m[0] for m in maps], "offset": [m[1] for m in maps],
                        "lapse": [m[2] for m in maps], "kept": kept, "held_out_gain": gains,
                        "rows": int(rows.size), "scores": scores}


def calibrated_logits(F, calibration):
    """``a f + b`` per column of the decision values F (n, k)."""
    return F * np.asarray(calibration["slope"]) + np.asarray(calibration["offset"])


def calibrated_probabilities(F, calibration):
    """``eps + (1 - 2 eps) sigma(a f + b)`` per column of F (n, k): P(+1) of each column."""
    eps = np.asarray(calibration["lapse"])
    return eps + (1.0 - 2.0 * eps) * _sigmoid(calibrated_logits(F, calibration))
