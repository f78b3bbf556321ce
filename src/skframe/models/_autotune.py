"""Hyper-parameters chosen from the data as part of a fit: ``lam="auto"`` and ``gamma="auto"``.

**Square loss** (closed form). With features ``Z`` (n x r) and centred targets ``Y`` (n x d), the fitted values
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
representation per fold, the λ path solved warm-started from the largest λ), scored by the held-out loss.

**Bandwidth** (``gamma="auto"``): the median heuristic ``γ₀ = 1 / median ||x_i - x_j||^2`` (Gaussian kernels;
other kernels start from their ``"scale"`` value), then ``γ₀ × 10^k``, ``k ∈ {-1, -0.5, 0, 0.5, 1}``, scored by
the minimum over λ of the square-loss GCV on at most :data:`GAMMA_ROWS` evenly spaced rows; a best value at an
end of that grid extends it by half a decade (twice at most).
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.optimize import minimize, minimize_scalar

from skframe.contract.collections import n_items, take

__all__ = ["AUTO_LAMS", "is_auto", "square_spectrum", "gcv_curve", "loo_curve", "choose_lam_square",
           "choose_lam_kfold", "median_gamma", "gamma_candidates", "choose_gamma", "learn_length_scales", "ard_gcv",
           "ard_loo", "ard_start_lam",
           "squared_norm", "GAMMA_ROWS"]

#: the λ grid ``lam="auto"`` scores (then refined between the best value's neighbours for the square loss)
AUTO_LAMS = np.logspace(-10, 0, 41)
#: the coarser grid of the k-fold search (each value a solve per fold)
KFOLD_LAMS = np.logspace(-8, -1, 8)
#: rows (evenly spaced) on which the bandwidth candidates are scored
GAMMA_ROWS = 3000
#: folds of the k-fold search of the losses without a closed form
KFOLD = 3
_MEDIAN_ROWS = 500
#: rows and Nystrom landmarks (held fixed) on which learned length-scales are fitted
ARD_ROWS, ARD_LANDMARKS = 1000, 200
#: the exponents k of the first bandwidths scored, γ₀ × 10^k
GAMMA_STEPS = (-1.0, -0.5, 0.0, 0.5, 1.0)


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


def choose_lam_square(fit, lams=AUTO_LAMS):
    """``(lam, info)``: the λ minimising the GCV of the square-loss fit ``fit`` (its representation's sums)."""
    rep = fit.represent()
    n = fit.n
    with fit.serial_blas():
        if rep.K is not None:  # the exact model keeps K: K = U diag(s) U^T, g = U^T Y
            s, U = np.linalg.eigh(rep.K)
            keep = s > 1e-12 * max(float(s.max(initial=0.0)), np.finfo(float).tiny)
            G = U[:, keep].T @ np.asarray(fit.Yc)
            s, g2 = s[keep], (G * G).sum(axis=1)
        else:
            A, B = rep.problem(fit.Yc).gram()
            s, g2 = square_spectrum(np.asarray(A), np.asarray(B))
    yy = squared_norm(fit.Yc)
    values = gcv_curve(s, g2, yy, n, lams)
    lam, best = _refine(lambda v: gcv_curve(s, g2, yy, n, [v])[0], np.asarray(lams), values)
    info = {"chosen": lam, "criterion": "gcv", "value": best, "grid": [float(v) for v in lams],
            "curve": [float(v) for v in values], "rank": int(s.size),
            "reason": f"least generalised cross-validation (GCV) over {len(lams)} values from one "
                      "eigendecomposition"}
    return lam, info


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


def choose_lam_kfold(X, Y, make_fit, lams=KFOLD_LAMS, folds=KFOLD):
    """``(lam, info)``: the λ of ``lams`` with the least mean held-out loss over ``folds`` consecutive folds.

    ``make_fit(train_rows)`` builds the fold's :class:`Fit` (the estimator's own recipe); each fold is
    represented once and its λ path solved from the largest λ down, each solve warm-started.
    """
    n = n_items(X)
    order = np.sort(np.asarray(lams, dtype=float))[::-1]
    edges = np.linspace(0, n, folds + 1).astype(int)
    losses = np.zeros((folds, order.size))
    for k in range(folds):
        held = np.arange(edges[k], edges[k + 1])
        train = np.setdiff1d(np.arange(n), held)
        fit = make_fit(train)
        Y_te = np.asarray(Y[held])
        with warnings.catch_warnings():  # a fold's unconverged solve is scored as it is; the final fit warns
            warnings.simplefilter("ignore")
            for j, res in enumerate(fit.solve_path(order)):
                losses[k, j] = _held_out_loss(fit, take(X, held), Y_te, res.W)
    mean = losses.mean(axis=0)
    j = int(np.argmin(mean))
    info = {"chosen": float(order[j]), "criterion": f"{folds}-fold held-out loss", "value": float(mean[j]),
            "grid": [float(v) for v in order], "curve": [float(v) for v in mean],
            "reason": f"least mean held-out loss of {folds} consecutive folds over {order.size} values"}
    return float(order[j]), info


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


def choose_gamma(score, gamma0, steps=GAMMA_STEPS, extend=2):
    """``(gamma, info)``: the least ``score(gamma)`` over ``gamma0 × 10^k`` for k in ``steps``; a best value at
    an end of the grid extends it by half a decade that way, at most ``extend`` times."""
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
    return grid[best], {"chosen": grid[best], "criterion": "gcv", "value": values[best], "grid": grid,
                        "curve": values}


def _ard_block(A, B, inv_scale):
    """The Gaussian ARD kernel ``exp(-(1/2) sum_j (a_j - b_j)^2 / l_j^2)`` between the rows of A and B."""
    As, Bs = A * inv_scale, B * inv_scale
    sq = (As * As).sum(axis=1)[:, None] + (Bs * Bs).sum(axis=1)[None, :] - 2.0 * As @ Bs.T
    return np.exp(-0.5 * np.maximum(sq, 0.0))


def _pair_sums(E, A, B):
    """``sum_ij E_ij (A_ik - B_jk)^2`` for every column k (E of shape len(A) x len(B))."""
    return E.sum(axis=1) @ (A * A) + E.sum(axis=0) @ (B * B) - 2.0 * (A * (E @ B)).sum(axis=0)


def _ard_features(X, XL, inv_scale, rtol=None):
    """``(C, W, R, Z)``: the kernel blocks ``C = k(X, X_L)``, ``W = k(X_L, X_L)``, ``R = U_r w_r^{-1/2}`` of W's
    eigenvalues above ``rtol`` times the largest (the fit's default tolerance when None) and ``Z = C R``."""
    C, W = _ard_block(X, XL, inv_scale), _ard_block(XL, XL, inv_scale)
    w, U = np.linalg.eigh(0.5 * (W + W.T))
    keep = w > (w.size * np.finfo(float).eps * 10.0 if rtol is None else rtol) * max(float(w.max()), 1e-300)
    R = U[:, keep] / np.sqrt(w[keep])
    return C, W, R, C @ R


def ard_start_lam(X, Y, landmarks, ell, lams=AUTO_LAMS):
    """The λ of ``lams`` with the least GCV of the Nystrom ridge at the length-scales ``ell`` (the start of
    :func:`learn_length_scales`)."""
    X = np.asarray(X, dtype=float)
    Y = np.asarray(Y, dtype=float).reshape(X.shape[0], -1)
    Z = _ard_features(X, X[landmarks], 1.0 / np.asarray(ell, dtype=float))[3]
    s, g2 = square_spectrum(Z.T @ Z, Z.T @ Y)
    values = gcv_curve(s, g2, float((Y * Y).sum()), X.shape[0], lams)
    return float(np.asarray(lams)[int(np.nanargmin(values))])


def _ard_system(X, Y, landmarks, theta, rtol):
    """What :func:`ard_gcv` and :func:`ard_loo` share at ``theta = (log l, log λ)``: the arrays as float (Y as
    n x d), n, ``1 / l``, ``n λ``, the landmark rows, ``C``, ``W``, the landmark coefficients ``B`` of the orthogonal
    directions ``Phi = C B`` (``Phi^T Phi = diag(s)``), ``Phi`` and ``s``."""
    X = np.asarray(X, dtype=float)
    Y = np.asarray(Y, dtype=float).reshape(X.shape[0], -1)
    n = X.shape[0]
    theta = np.asarray(theta, dtype=float)
    inv = np.exp(-theta[:-1])
    nlam = n * float(np.exp(theta[-1]))
    XL = X[landmarks]
    C, W, Rm, Z = _ard_features(X, XL, inv, rtol)
    s, Q = np.linalg.eigh(Z.T @ Z)
    return X, Y, n, inv, nlam, XL, C, W, Rm @ Q, Z @ Q, np.maximum(s, 0.0)


def _ard_chain(GC, GW, C, W, X, XL, inv):
    """The gradient over ``(log l, log λ)`` of a criterion whose gradients in C and W are ``GC`` and ``GW``."""
    grad_ell = (_pair_sums(GC * C, X, XL) + _pair_sums(GW * W, XL, XL)) * inv ** 2
    return np.r_[grad_ell, float((GW * W).sum())]


def ard_gcv(X, Y, landmarks, theta, rtol=None):
    """``(log GCV, gradient)`` of the Nystrom ridge with the Gaussian ARD kernel at ``theta = (log l, log λ)``.

    ``X`` (n x p) the rows, ``Y`` (n x t) their centred targets, ``landmarks`` the indices of the m rows held
    fixed as Nystrom landmarks. With ``C = k(X, X_L)``, ``W = k(X_L, X_L) = U diag(w) U^T`` (eigenvalues at most
    ``rtol`` times the largest dropped, as the fit's features drop them) and the features ``Z = C U w^{-1/2}``,
    ``H = Z (Z^T Z + n λ I)^{-1} Z^T = C M^+ C^T`` with ``M = C^T C + n λ W`` and
    ``GCV = n ||(I - H) Y||^2 / (n - tr H)^2`` -- the criterion :func:`gcv_curve` evaluates from the fit's sums.

    The gradient is analytic: with ``α = M^+ C^T Y``, ``R = (I - H) Y``, ``β = M^+ C^T R``, ``P = M^+ C^T C M^+``,
    ``d||R||^2 = -2 <(I - H) R α^T + R β^T, dC> + 2 n λ <β α^T, dW>`` and
    ``d tr H = 2 <C (M^+ - P), dC> - n λ <P, dW>``; ``dC/d log l_k = C ∘ D_k / l_k^2`` with
    ``D_k = (x_ik - x_jk)^2``, and ``d/d log λ`` is the ``dW`` term taken with ``dW = W``. Exact where no
    eigenvalue of W is dropped (the dropped directions are held fixed).
    """
    X, Y, n, inv, nlam, XL, C, W, B, Phi, s = _ard_system(X, Y, landmarks, theta, rtol)
    g = Phi.T @ Y
    inv_sl = 1.0 / (s + nlam)
    alpha = B @ (inv_sl[:, None] * g)
    R = Y - Phi @ (inv_sl[:, None] * g)
    shrink2 = nlam * inv_sl ** 2
    beta = B @ (shrink2[:, None] * g)
    Ru = R - Phi @ (shrink2[:, None] * g)  # (I - H) R
    rss = float((R * R).sum())
    dof = n - float((s * inv_sl).sum())
    value = np.log(n * rss / dof ** 2)
    GC = (-2.0 / rss) * (Ru @ alpha.T + R @ beta.T) + (4.0 / dof) * (Phi * shrink2) @ B.T
    GW = (2.0 * nlam / rss) * (beta @ alpha.T) - (2.0 * nlam / dof) * ((B * (s * inv_sl ** 2)) @ B.T)
    return float(value), _ard_chain(GC, GW, C, W, X, XL, inv)


def ard_loo(X, Y, landmarks, theta, rtol=None):
    """``(log LOO, gradient)``: the exact leave-one-out squared error of the Nystrom ridge with the Gaussian ARD
    kernel at ``theta = (log l, log λ)``, the arguments and the hat matrix ``H = C M^+ C^T`` of :func:`ard_gcv`.

    The ridge is a linear smoother, so its leave-one-out residuals are ``r_i / (1 - h_i)`` with ``R = (I - H) Y``
    and ``h = diag(H)``: ``LOO = sum_i ||r_i||^2 / (1 - h_i)^2``. With ``A = C M^+``,
    ``dH = (I - H) dC A^T + A dC^T (I - H) - n λ A dW A^T`` and ``dLOO = <S, dH>``,
    ``S = diag(g) - G Y^T``, ``G_i = 2 r_i / (1 - h_i)^2``, ``g_i = 2 ||r_i||^2 / (1 - h_i)^3``, so
    ``dLOO = <(I - H)(S + S^T) A, dC> - n λ <A^T S A, dW>``; the chain to ``log l`` and ``log λ`` is
    :func:`ard_gcv`'s. Needs the n x m features in memory (as :func:`ard_gcv`); exact where no eigenvalue of W is
    dropped.
    """
    X, Y, n, inv, nlam, XL, C, W, B, Phi, s = _ard_system(X, Y, landmarks, theta, rtol)
    inv_sl = 1.0 / (s + nlam)
    A = (Phi * inv_sl) @ B.T  # C M^+
    R = Y - (Phi * inv_sl) @ (Phi.T @ Y)
    h = ((Phi * Phi) * inv_sl).sum(axis=1)
    one_h = 1.0 - h
    r2 = (R * R).sum(axis=1)
    loo = float((r2 / one_h ** 2).sum())
    G = 2.0 * R / one_h[:, None] ** 2
    g = 2.0 * r2 / one_h ** 3
    V = 2.0 * g[:, None] * A - G @ (Y.T @ A) - Y @ (G.T @ A)  # (S + S^T) A
    GC = (V - A @ (C.T @ V)) / loo  # (I - H) (S + S^T) A, of log LOO
    GW = (-nlam / loo) * ((A.T * g) @ A - (A.T @ G) @ (Y.T @ A))
    return float(np.log(loo)), _ard_chain(GC, GW, C, W, X, XL, inv)


def learn_length_scales(X, Y, landmarks, ell0, lam0, *, max_iter=100, criterion="gcv"):
    """``(length_scales, lam, info)`` minimising the square loss's GCV (:func:`ard_gcv`, ``criterion="gcv"``, what
    the fits use) or its exact leave-one-out error (:func:`ard_loo`, ``"loo"``) jointly over ``log l`` (one per
    feature) and ``log λ`` by L-BFGS-B with the analytic gradient, started from the best single length-scale (the
    same criterion over one shared ``log l`` and ``log λ``); the rows and the Nystrom ``landmarks`` are held fixed.

    The exact leave-one-out error is not the fits' criterion: on small tables it helped some (Boston housing, body
    measurements) but on house prices it chose a tiny λ and a short length-scale whose leave-one-out error on the
    rows looked good while the model extrapolated badly to new rows."""
    ell0 = np.asarray(ell0, dtype=float)
    evaluations = [0]
    crit = {"loo": ard_loo, "gcv": ard_gcv}[criterion]

    def objective(theta):
        evaluations[0] += 1
        value, grad = crit(X, Y, landmarks, theta)
        if not np.isfinite(value) or not np.all(np.isfinite(grad)):
            return 1e300, np.zeros_like(theta)
        return value, grad

    d = ell0.size

    def tied(phi):  # one length-scale for all features: the isotropic optimum is the start of the per-feature one
        value, grad = objective(np.r_[np.full(d, phi[0]), phi[1]])
        return value, np.r_[grad[:-1].sum(), grad[-1]]

    ell_bounds = [(v - 5.0, v + 7.0) for v in np.log(ell0)]
    lam_bounds = (np.log(1e-10), 0.0)
    first = np.log(ell0).mean()
    iso = minimize(tied, [first, np.log(lam0)], method="L-BFGS-B", jac=True,
                   bounds=[(first - 5.0, first + 7.0), lam_bounds], options={"maxiter": int(max_iter)})
    start = np.r_[np.clip(np.full(d, iso.x[0]), *np.array(ell_bounds).T), iso.x[1]]
    res = minimize(objective, start, method="L-BFGS-B", jac=True, bounds=ell_bounds + [lam_bounds],
                   options={"maxiter": int(max_iter)})
    theta = res.x if res.fun <= iso.fun else start
    ell = np.exp(theta[:-1])
    relevance = 1.0 / ell ** 2
    info = {"chosen": [float(v) for v in ell], "relevance": [float(v) for v in relevance / relevance.max()],
            "start": [float(v) for v in ell0], "criterion": criterion,
            "value": float(np.exp(min(res.fun, iso.fun, 700.0))),
            "lam_on_rows": float(np.exp(theta[-1])), "iterations": int(iso.nit + res.nit),
            "evaluations": evaluations[0], "isotropic_start": float(np.exp(iso.x[0])),
            "gradient": "analytic", "stop": str(res.message)}
    return ell, float(np.exp(theta[-1])), info


def subsample_rows(n, rows=GAMMA_ROWS):
    """At most ``rows`` evenly spaced row indices of n."""
    return np.unique(np.linspace(0, n - 1, min(n, rows)).astype(int))
