"""Learned per-feature length-scales (``kernel="gaussian-ard"``, ``length_scale="learn"``): the criteria of the
square-loss Nystrom fit as functions of ``theta = (log l, log λ)`` with analytic gradients, and their optimisation.

The criteria (:func:`ard_ml`, the default; :func:`ard_gcv`; :func:`ard_loo`) are evaluated on at most
:data:`ARD_ROWS` rows with Nystrom landmarks held fixed during each optimisation; one evaluation with its whole
gradient costs a few products of n x m matrices, whatever the number of inputs. :func:`learn_scales` is what
the fits call: it holds out a share of the rows, grows the landmarks while they limit the fit, and keeps the
learned length-scales only where they beat one shared length-scale on the held-out rows.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize

from skframe.models._autotune import AUTO_LAMS, gcv_curve, median_gamma, square_spectrum

__all__ = ["ARD_ROWS", "ARD_LANDMARKS", "ARD_MAX_LANDMARKS", "ARD_SATURATION", "ARD_HELD_OUT", "ARD_CRITERION",
           "ard_gcv", "ard_loo", "ard_ml", "ard_start_lam", "effective_dimension", "held_out_error",
           "learn_length_scales", "learn_scales"]

#: rows on which learned length-scales are fitted, and the Nystrom landmarks (held fixed) they start with
ARD_ROWS, ARD_LANDMARKS = 3000, 200
#: the landmarks double while the fit's effective dimension exceeds ``ARD_SATURATION`` times their number, up to
#: ``ARD_MAX_LANDMARKS`` (an evaluation costs about n m^2: 16 times the first one's at the cap)
ARD_MAX_LANDMARKS, ARD_SATURATION = 800, 0.25
#: the share of the rows held out (shuffled from the seed) to compare the learned length-scales with one shared
#: length-scale, and the fewest rows for which the comparison is made
ARD_HELD_OUT, ARD_HELD_OUT_MIN_ROWS = 0.2, 200
#: what learned length-scales optimise: ``"ml"`` (marginal likelihood, :func:`ard_ml`), ``"gcv"`` or ``"loo"``
ARD_CRITERION = "ml"


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


def ard_ml(X, Y, landmarks, theta, rtol=None):
    """``(value, gradient)``: the negative log marginal likelihood of the Nystrom Gaussian process with the
    Gaussian ARD kernel, per target entry, its amplitude profiled out, at ``theta = (log l, log λ)``; the
    arguments and the features of :func:`ard_gcv`.

    The targets are modelled as ``Y_j ~ N(0, c (K + n λ I))`` with ``K = C W^+ C^T = Z Z^T`` (the kernel the
    Nystrom fit uses) and noise variance ``c n λ``, whose posterior mean is the fit's. The amplitude maximising
    the likelihood is ``c = tr(Y^T (K + n λ I)^{-1} Y) / (n t)``; with it, up to a constant,
    ``value = (1/2) log c + (1/(2n)) log det(K + n λ I)`` -- the quantity scikit-learn's
    ``GaussianProcessRegressor`` maximises (with the signal variance at its best value), divided by ``-n t``.
    It penalises the model's complexity through the determinant where GCV only counts the trace of the hat
    matrix (Rasmussen and Williams, "Gaussian Processes for Machine Learning", section 5.4).

    From ``Phi = Z Q`` (``Phi^T Phi = diag(s)``) and ``D = diag(1 / (s + n λ))``:
    ``(K + n λ I)^{-1} = (I - Phi D Phi^T) / (n λ)`` and ``log det = (n - r) log(n λ) + sum log(s_k + n λ)``.
    With ``G = (t/2)((K + n λ I)^{-1} - (n / q) A A^T)`` (``A = (K + n λ I)^{-1} Y``, ``q = tr(Y^T A)``) the
    gradient is ``<G, dK> + n λ tr(G) d log λ``, and ``dK = dC W^+ C^T + C W^+ dC^T - C W^+ dW W^+ C^T`` with
    ``C W^+ = Phi B^T`` gives the gradients in C and W that :func:`ard_gcv`'s chain rule takes to ``log l``.
    Exact where no eigenvalue of W is dropped.
    """
    X, Y, n, inv, nlam, XL, C, W, B, Phi, s = _ard_system(X, Y, landmarks, theta, rtol)
    t = Y.shape[1]
    D = 1.0 / (s + nlam)
    Dg = D[:, None] * (Phi.T @ Y)
    A = (Y - Phi @ Dg) / nlam
    q = float((Y * A).sum())
    logdet = (n - s.size) * np.log(nlam) + float(np.log(s + nlam).sum())
    value = 0.5 * np.log(q / (n * t)) + 0.5 * logdet / n
    BDg = B @ Dg
    scale = n / q
    GC = ((Phi * D) @ B.T - scale * (A @ BDg.T)) / n
    GW = (-0.5 / n) * ((B * (s * D)) @ B.T - scale * (BDg @ BDg.T))
    trace_g = (0.5 / n) * ((n - float((s * D).sum())) / nlam - scale * float((A * A).sum()))
    grad = _ard_chain(GC, GW, C, W, X, XL, inv)
    grad[-1] = nlam * trace_g
    return float(value), grad


def learn_length_scales(X, Y, landmarks, ell0, lam0, *, max_iter=100, criterion="ml", warm=None):
    """``(length_scales, lam, info)`` optimising a criterion of the square-loss Nystrom fit jointly over
    ``log l`` (one per feature) and ``log λ`` by L-BFGS-B with the analytic gradient, started from the best single
    length-scale (the same criterion over one shared ``log l`` and ``log λ``); the rows and the Nystrom
    ``landmarks`` are held fixed. ``criterion``: ``"ml"`` the negative log marginal likelihood (:func:`ard_ml`,
    what the fits use), ``"gcv"`` (:func:`ard_gcv`) or ``"loo"`` the exact leave-one-out error
    (:func:`ard_loo`); ``info["value"]`` is the criterion at the optimum (``"ml"``: per target entry, up to a
    constant).

    Measured on nine public tables against scikit-learn's ``GaussianProcessRegressor`` (benchmarks/README.md),
    the marginal likelihood matched the Gaussian process where GCV fell behind on small tables with many inputs:
    over d + 1 free parameters GCV, which replaces each row's leverage by the mean one, found length-scales with a
    few rows of leverage near 1, where it is optimistic; the leave-one-out error chose, on one table, a tiny λ
    and a short length-scale that extrapolated badly to new rows. The likelihood's determinant penalises that
    complexity.

    ``warm``: ``(tied, theta)``, the two stages' optima of an earlier call with the same ``ell0`` (e.g. on fewer
    landmarks), each stage then starts from its own. ``info`` also holds the tied stage's optimum
    (``isotropic_start``, ``isotropic_lam``, ``isotropic_value``) and both optima as ``theta`` (``warm`` of a
    next call)."""
    ell0 = np.asarray(ell0, dtype=float)
    evaluations = [0]
    crit = {"loo": ard_loo, "gcv": ard_gcv, "ml": ard_ml}[criterion]

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
    iso_bounds = [(first - 5.0, first + 7.0), lam_bounds]
    iso = minimize(tied, [first, np.log(lam0)] if warm is None else np.clip(warm[0], *np.array(iso_bounds).T),
                   method="L-BFGS-B", jac=True, bounds=iso_bounds, options={"maxiter": int(max_iter)})
    start = np.r_[np.clip(np.full(d, iso.x[0]), *np.array(ell_bounds).T), iso.x[1]]
    full_start = start if warm is None else np.clip(warm[1], *np.array(ell_bounds + [lam_bounds]).T)
    res = minimize(objective, full_start, method="L-BFGS-B", jac=True, bounds=ell_bounds + [lam_bounds],
                   options={"maxiter": int(max_iter)})
    theta = res.x if res.fun <= iso.fun else start
    ell = np.exp(theta[:-1])
    relevance = 1.0 / ell ** 2
    info = {"chosen": [float(v) for v in ell], "relevance": [float(v) for v in relevance / relevance.max()],
            "start": [float(v) for v in ell0], "criterion": criterion,
            "value": float(min(res.fun, iso.fun)) if criterion == "ml" else float(np.exp(min(res.fun, iso.fun, 700.0))),
            "lam_on_rows": float(np.exp(theta[-1])), "iterations": int(iso.nit + res.nit),
            "evaluations": evaluations[0], "isotropic_start": float(np.exp(iso.x[0])),
            "isotropic_lam": float(np.exp(iso.x[1])), "isotropic_value": float(iso.fun),
            "theta": ([float(v) for v in iso.x], [float(v) for v in theta]),
            "gradient": "analytic", "stop": str(res.message)}
    return ell, float(np.exp(theta[-1])), info


def _nystrom_ridge(X, Y, landmarks, ell, lam):
    """``(R, w, s)`` of the Nystrom ridge on ``(X, Y)`` at the length-scales ``ell`` and ``λ``: the landmark map
    ``R`` (features ``k(x, X_L) R``), the weights ``w`` and the eigenvalues ``s`` of ``Z^T Z``."""
    _, _, R, Z = _ard_features(X, X[landmarks], 1.0 / np.asarray(ell, dtype=float))
    G = Z.T @ Z
    w = np.linalg.solve(G + X.shape[0] * lam * np.eye(G.shape[0]), Z.T @ Y)
    return R, w, np.maximum(np.linalg.eigvalsh(G), 0.0)


def effective_dimension(X, Y, landmarks, ell, lam):
    """``sum_k s_k / (s_k + n λ)`` of the Nystrom ridge at ``(ell, λ)``: the number of directions the fit uses out
    of at most ``len(landmarks)``; near that number, the landmarks limit the fit."""
    s = _nystrom_ridge(X, Y, landmarks, ell, lam)[2]
    return float((s / (s + X.shape[0] * lam)).sum())


def held_out_error(X, Y, X_check, Y_check, landmarks, ell, lam):
    """The mean squared error on ``(X_check, Y_check)`` of the Nystrom ridge fitted on ``(X, Y)`` (both centred by
    ``Y``'s mean) at the length-scales ``ell`` and ``λ``."""
    mean = Y.mean(axis=0)
    R, w, _ = _nystrom_ridge(X, Y - mean, landmarks, ell, lam)
    F = _ard_block(X_check, X[landmarks], 1.0 / np.asarray(ell, dtype=float)) @ R @ w + mean
    return float(((F - Y_check) ** 2).sum(axis=1).mean())


def learn_scales(X, Y, rng, *, criterion=None):
    """``(length_scales, info)`` of ``length_scale="learn"`` on the rows ``(X, Y)`` (at most :data:`ARD_ROWS`, as
    float arrays), the random draws from ``rng``.

    1. :data:`ARD_HELD_OUT` of the rows (shuffled) are held out when there are at least
       :data:`ARD_HELD_OUT_MIN_ROWS`; the length-scales are learned on the others (:func:`learn_length_scales`,
       ``criterion`` by default :data:`ARD_CRITERION`).
    2. Landmarks: :data:`ARD_LANDMARKS` rows drawn at random; while the effective dimension of the fit at the
       optimum (:func:`effective_dimension`) exceeds :data:`ARD_SATURATION` times their number, the landmarks
       double (the earlier ones kept), up to :data:`ARD_MAX_LANDMARKS` or all rows, and the optimisation goes on
       from the optimum found. A short length-scale needs many landmarks to be resolved: with too few, the
       criterion sees only the directions they span and settles on a longer one. Long length-scales keep the
       first landmarks and their cost.
    3. The held-out look: the Nystrom ridge at the learned length-scales and λ and at the best single
       length-scale (the optimisation's first stage, with its λ) are fitted on the learning rows and scored on the
       held-out ones (:func:`held_out_error`); the learned ones are kept only where their error is lower, else
       every input gets the single length-scale (``info["held_out"]`` and ``info["reason"]`` say which and why).

    ``info`` is :func:`learn_length_scales`'s (the kept length-scales in ``chosen``, their λ in ``lam_on_rows``)
    with ``rows`` (the learning rows), ``landmarks``, ``landmark_steps`` (landmarks, effective dimension and
    criterion of each optimisation) and ``held_out``.
    """
    X = np.asarray(X, dtype=float)
    Y = np.asarray(Y, dtype=float).reshape(X.shape[0], -1)
    n, d = X.shape
    order = rng.permutation(n)
    n_check = int(ARD_HELD_OUT * n) if n >= ARD_HELD_OUT_MIN_ROWS else 0
    check, learn = np.sort(order[:n_check]), np.sort(order[n_check:])
    Xl, Yl = X[learn], Y[learn] - Y[learn].mean(axis=0)
    marks_order = rng.permutation(learn.size)
    m = min(ARD_LANDMARKS, learn.size)
    cap = max(m, min(ARD_MAX_LANDMARKS, learn.size))
    criterion = ARD_CRITERION if criterion is None else criterion
    ell0 = np.full(d, 1.0 / np.sqrt(2.0 * median_gamma(Xl)))
    landmarks = np.sort(marks_order[:m])
    lam0 = ard_start_lam(Xl, Yl, landmarks, ell0)
    ell, lam, info = learn_length_scales(Xl, Yl, landmarks, ell0, lam0, criterion=criterion)
    steps = []
    while True:
        deff = effective_dimension(Xl, Yl, landmarks, ell, lam)
        steps.append({"landmarks": int(m), "effective_dimension": deff, "value": info["value"]})
        if m >= cap or deff <= ARD_SATURATION * m:
            break
        m = min(2 * m, cap)
        landmarks = np.sort(marks_order[:m])
        ell, lam, info = learn_length_scales(Xl, Yl, landmarks, ell0, lam, criterion=criterion, warm=info["theta"])
    grown = f"{m} landmarks" + (f" (grown from {steps[0]['landmarks']}: effective dimension above "
                                f"{ARD_SATURATION:g} of them)" if len(steps) > 1 else "")
    info.update(rows=int(learn.size), landmarks=int(m), landmark_steps=steps)
    reason = (f"greatest marginal likelihood over {d} length-scales and lam by L-BFGS-B (analytic gradient) on "
              f"{learn.size} rows, {grown} held fixed")
    if n_check == 0:
        info.update(held_out=None, reason=reason + f"; no held-out look (fewer than {ARD_HELD_OUT_MIN_ROWS} rows)")
        return ell, info
    iso_ell, iso_lam = np.full(d, info["isotropic_start"]), info["isotropic_lam"]
    learned_err = held_out_error(X[learn], Y[learn], X[check], Y[check], landmarks, ell, lam)
    iso_err = held_out_error(X[learn], Y[learn], X[check], Y[check], landmarks, iso_ell, iso_lam)
    kept = "learned" if learned_err < iso_err else "isotropic"
    info["held_out"] = {"rows": int(n_check), "learned_mse": learned_err, "isotropic_mse": iso_err, "kept": kept}
    if kept == "learned":
        info["reason"] = reason + f"; kept: held-out error {learned_err:.4g} below one shared length-scale's " \
                                  f"{iso_err:.4g} on {n_check} rows"
        return ell, info
    info.update(chosen=[float(v) for v in iso_ell], relevance=[1.0] * d, lam_on_rows=float(iso_lam),
                value=info["isotropic_value"] if criterion == "ml" else info["value"],
                reason=f"one shared length-scale (greatest marginal likelihood on {learn.size} rows, {grown}): its "
                       f"held-out error {iso_err:.4g} at most the {d} learned length-scales' {learned_err:.4g} on "
                       f"{n_check} rows")
    return iso_ell, info
