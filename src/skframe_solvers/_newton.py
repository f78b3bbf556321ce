"""Semismooth Newton on the smoothed primal: the ``dual-cd`` refinement for small ``lam n``.

Dual coordinate ascent needs about ``1 + ||z_i||^2 / (lam n)`` epochs per e-fold of the
duality gap, thousands when ``lam n`` is small (e.g. lam = 1e-7 with n = 10^4). Every
built-in loss is ``l(f, y) = max_alpha <alpha, y - f> - psi(alpha)`` with
``psi(alpha) = (quad/2) ||alpha||^2 + l1 N(alpha)`` on a ball or a box
(:mod:`skframe_losses.duals`). Adding ``(mu/2) ||alpha||^2`` to ``psi`` gives the
Moreau-smoothed loss ``l_mu`` (Nesterov, "Smooth minimization of non-smooth functions",
Math. Program. 2005), with ``l - (mu/2) R^2 <= l_mu <= l`` (R the radius of the dual
domain), a gradient ``-alpha_mu(y - f)`` in closed form and a piecewise-constant
generalised Hessian. The smoothed primal

    P_mu(V) = (1/n) sum_i l_mu(C^T V^T z_i, y_i) + (lam/2) ||V||^2

is minimised by Newton steps ``(lam I + (1/n) sum_i z_i z_i^T (x) C J_i C^T) step = -grad``
(an r k x r k system, J_i the Jacobian of ``alpha_mu``) with a backtracking (Armijo) line
search: on these piecewise-quadratic functions the iterates stop moving once the set of
samples in each regime is right (a few steps from the square-loss start). Losses with
``quad > 0`` (Huber, ε-ridge) are already smooth and use ``mu = 0``; the others (ε-SVR,
hinge, pinball) decrease ``mu`` until the gap of the original problem is below ``tol``.

The point ``alpha_mu`` is always inside the dual domain, so every iteration yields a dual
point of the original problem, and the stopping rule is the same certified relative
duality gap as the coordinate epochs: P from the loss values, D from the conjugates. At a
stationary point of ``P_mu`` the original gap is at most ``mu R^2 / 2``.
"""

from __future__ import annotations

import numpy as np

from skframe_solvers._duality import dual_objective, relative_gap

__all__ = ["smoothed_dual_point", "newton_solve"]


def smoothed_dual_point(dual, R, mu, lower=None, upper=None):
    """``alpha_mu(R) = argmax_a <a, R> - psi(a) - (mu/2) ||a||^2`` row by row, and its Jacobian.

    Returns ``(A, value, a, b)``: the dual point, the smoothed loss values
    ``l_mu = <alpha, R> - psi_mu(alpha)`` per sample, and the Jacobian coefficients. For a
    separable dual the Jacobian is diagonal, ``a`` (n x d); for a norm dual it is
    ``a_i I + b_i u_i u_i^T`` with ``u_i = R_i / ||R_i||`` (``a``, ``b`` of length n).
    """
    c = dual.quad + mu
    if dual.structure == "separable":
        absR = np.abs(R)
        raw = np.sign(R) * np.maximum(absR - dual.l1, 0.0) / c
        A = np.clip(raw, lower, upper)
        a = np.where((absR > dual.l1) & (raw > lower) & (raw < upper), 1.0 / c, 0.0)
        value = np.sum(A * R - 0.5 * c * A * A - dual.l1 * np.abs(A), axis=1)
        return A, value, a, None
    rho = np.sqrt(np.sum(R * R, axis=1))
    t_raw = (rho - dual.l1) / c
    t = np.clip(t_raw, 0.0, dual.radius)
    safe = np.where(rho > 0, rho, 1.0)
    ratio = np.where(rho > 0, t / safe, 0.0)
    A = R * ratio[:, None]
    middle = (t_raw > 0) & (t_raw < dual.radius)
    value = t * rho - 0.5 * c * t * t - dual.l1 * t
    if R.shape[1] == 1:  # scalar: the Jacobian is 1/c in the middle regime, 0 elsewhere
        return A, value, np.where(middle, 1.0 / c, 0.0)[:, None], None
    outer = t_raw >= dual.radius
    b = np.where(middle, dual.l1 / (safe * c), np.where(outer, -ratio, 0.0))
    return A, value, ratio, b


def regime_share(dual, R, lower=None, upper=None):
    """Largest fraction of the samples (entries, for a separable dual) that share one regime of the
    loss at the residuals R: flat (alpha = 0), quadratic / free, or saturated (alpha on the boundary).

    Newton steps are exact once every sample is in its final regime; when one regime holds
    nearly all samples at the start (κ-Huber with a large κ), few steps are needed, while a
    mixed start means many regime changes, each one a line-searched step.
    """
    c = max(dual.quad, np.finfo(float).tiny)
    if dual.structure == "separable":
        raw = np.sign(R) * np.maximum(np.abs(R) - dual.l1, 0.0) / c
        labels = np.where(np.abs(R) <= dual.l1, 0, np.where((raw > lower) & (raw < upper), 1, 2)).ravel()
    else:
        t_raw = (np.sqrt(np.sum(R * R, axis=1)) - dual.l1) / c
        labels = np.where(t_raw <= 0, 0, np.where(t_raw < dual.radius, 1, 2))
    return float(np.max(np.bincount(labels, minlength=3))) / max(labels.size, 1)


class _Gram:
    """``Z^T diag(w) Z`` computed from the fewest rows: the rows with ``w != 0`` or, when most
    rows share the same weight ``w0``, ``w0 Z^T Z`` minus the rows that differ (``Z^T Z`` once)."""

    def __init__(self, Z, full=None):
        self.Z = Z
        self._full = None
        self._full_of = full  # callable giving Z^T Z when it is shared (FeatureMapProblem.gram)

    def __call__(self, w):
        nz = np.flatnonzero(w)
        if nz.size == 0:
            return np.zeros((self.Z.shape[1],) * 2)
        w0 = np.max(w[nz])
        other = np.flatnonzero(w != w0)
        if other.size < 0.5 * nz.size:
            if self._full is None:
                self._full = self._full_of() if self._full_of is not None else self.Z.T @ self.Z
            Zo = self.Z[other]
            return w0 * self._full - Zo.T @ ((w0 - w[other])[:, None] * Zo)
        Zs = self.Z[nz]
        return Zs.T @ (w[nz][:, None] * Zs)


def _hessian(fp, gram, a, b, u):
    """``lam I + (1/n) sum_i z_i z_i^T (x) C J_i C^T`` as an (r k, r k) matrix (r, k order)."""
    Z, C, n, lam = fp.Z, fp.C, fp.n, fp.lam
    r, k = fp.shape
    d = C.shape[1]
    if k == 1 and d == 1:
        H = gram(a.reshape(-1)) * (C[0, 0] ** 2 / n)
    elif b is None:  # separable: sum_j (Z^T diag(a_j) Z) (x) c_j c_j^T
        H = np.zeros((r, k, r, k))
        for j in range(d):
            if np.any(a[:, j]):
                H += np.einsum("st,a,b->satb", gram(a[:, j]), C[:, j], C[:, j])
        H = H.reshape(r * k, r * k) / n
    else:  # norm: a_i C C^T + b_i (C u_i)(C u_i)^T
        CCt = C @ C.T
        H = np.einsum("st,ab->satb", gram(a), CCt)
        rows = np.flatnonzero(b)
        if rows.size:
            Zb = Z[rows]
            Vb = u[rows] @ C.T  # (m, k)
            H += np.einsum("is,it,ia,ib->satb", Zb * b[rows, None], Zb, Vb, Vb)
        H = H.reshape(r * k, r * k) / n
    H[np.diag_indices_from(H)] += lam
    return H


def _solve_spd(H, g):
    try:
        L = np.linalg.cholesky(H)
        return np.linalg.solve(L.T, np.linalg.solve(L, g))
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(H, g, rcond=None)[0]


def _best_scaled_dual(fp, A):
    """``max_{s in [0, 1]} D(s A)`` (a concave quadratic in s) and the scaled point."""
    D1, V_A = dual_objective(fp, A)
    if not np.isfinite(D1):
        return D1, A
    pen = fp.penalty(V_A)
    lin = D1 + pen  # (1/n) sum h(alpha_i) = lin_part - quad_part, split below
    quad_h = 0.5 * fp.loss.dual.quad * float(np.mean(np.sum(A * A, axis=1)))
    lin_h = lin + quad_h  # linear part of (1/n) sum h
    q = quad_h + pen
    s = 1.0 if q <= 0 else float(np.clip(lin_h / (2.0 * q), 0.0, 1.0))
    if s >= 1.0:
        return D1, A
    return lin_h * s - q * s * s, A * s


def newton_solve(fp, dual, V, tol, max_iter, trace, progress=None, mu0=None):
    """Minimise ``P_mu`` by Newton steps, lowering ``mu`` until the original relative gap is <= tol.

    ``trace`` receives ``(P, D, relative gap)`` of the original problem after every step.
    Returns ``(V, n_steps, mu)``.
    """
    Z, Y, C, n, lam = fp.Z, fp.Y, fp.C, fp.n, fp.lam
    lower = upper = None
    if dual.structure == "separable":
        lower, upper = dual.bounds(Y)
    gram = _Gram(Z, fp.gram)
    smooth = dual.quad > 0
    F = fp.predict(V, Z)
    if smooth:
        mu = 0.0
    else:  # start with a smoothing of the size of the residuals, then shrink it
        mu = float(mu0) if mu0 is not None else max(float(np.median(np.abs(Y - F))), 1e-12)
    step_count = 0
    while step_count < max_iter:
        step_count += 1
        R = Y - F
        A, val, a, b = smoothed_dual_point(dual, R, mu, lower, upper)
        P = fp.objective(V)
        D, _ = _best_scaled_dual(fp, A)
        gap = relative_gap(P, D)
        trace.append((P, D, gap))
        if progress is not None:
            progress(1)
        if gap <= tol:
            break
        grad = lam * V - (Z.T @ (A @ C.T)) / n
        scale = max(abs(P), abs(D), np.finfo(float).tiny)
        if not smooth and float(np.sum(grad * grad)) / (2 * lam) <= 0.1 * tol * scale:
            # stationary for this mu: the remaining gap is the smoothing's; shrink mu and go on
            mu *= float(np.clip(0.3 * tol / gap, 0.1, 0.3))
            continue
        u = None
        if b is not None:
            rho = np.sqrt(np.sum(R * R, axis=1))
            u = R / np.where(rho > 0, rho, 1.0)[:, None]
        H = _hessian(fp, gram, a, b, u)
        direction = -_solve_spd(H, grad.reshape(-1)).reshape(V.shape)
        dF = fp.predict(direction, Z)
        slope = float(np.sum(grad * direction))
        if slope >= 0:  # numerical trouble: fall back to the gradient
            direction, slope = -grad, -float(np.sum(grad * grad))
            dF = fp.predict(direction, Z)
        phi0 = float(np.mean(val)) + fp.penalty(V)
        t = 1.0
        for _ in range(40):
            Vt = V + t * direction
            _, vt, _, _ = smoothed_dual_point(dual, R - t * dF, mu, lower, upper)
            if float(np.mean(vt)) + fp.penalty(Vt) <= phi0 + 1e-4 * t * slope:
                break
            t *= 0.5
        V = V + t * direction
        F = F + t * dF
    return V, step_count, mu


def polish(fp, dual, A, lower=None, upper=None, tol=0.0, rounds=8, max_free=2000, V=None):
    """Active-set rounds on a dual point: a primal-dual active-set (semismooth Newton) method on the dual.

    Each round classifies every dual entry by what one exact coordinate step (the update of
    the coordinate epochs, all entries at once) would do: stay at 0 (inside the flat part of
    the loss), go to a bound of the domain, or be free with a known sign. With the fixed
    entries set, ``D`` is a concave quadratic in the free ones ``K``, maximised by one linear
    system of their size,

        ((1/(lam n)) (Z_K Z_K^T) * M_KK + quad I) alpha_K = y_K - l1 s_K - (Z V(A_fixed) C)_K,

    whose solution is clipped back into the domain (as the solution polishing of OSQP,
    Stellato et al., "OSQP: an operator splitting solver for quadratic programs", 2020,
    iterated). Near the optimum the classification is right and the round lands on the exact
    optimum. Every round's point is certified by the duality gap; the rounds stop as soon as
    one does not improve on the previous (active-set rounds can cycle far from the optimum).

    Returns ``(trace, V, A)`` of the best round (``trace``: its ``(P, D, relative gap)``
    entries) or None (a norm dual with several outputs). ``V``: the primal point that goes
    with A (its residuals classify the entries in the first round; default ``V(A)``).
    """
    Z, Y, C, n, lam = fp.Z, fp.Y, fp.C, fp.n, fp.lam
    if dual.structure == "norm":
        if Y.shape[1] != 1:
            return None
        lower = np.full(Y.shape, -dual.radius)
        upper = np.full(Y.shape, dual.radius)
    zz = np.einsum("ij,ij->i", Z, Z)
    q = zz[:, None] * np.diag(fp.M)[None, :] / (lam * n)  # curvature of D in each entry (times n)
    trace, best, previous = [], None, None
    for k in range(rounds):
        # residuals of the primal point given (when lam n is small, V(A) of an approximate A is
        # far from the primal iterate, which predicts the regimes better), then of V(A)
        V_A = V if (k == 0 and V is not None) else (Z.T @ (A @ C.T)) / (lam * n)
        R = Y - (Z @ V_A) @ C
        w = q * A + R
        s = np.sign(w)
        raw = s * np.maximum(np.abs(w) - dual.l1, 0.0) / np.maximum(dual.quad + q, np.finfo(float).tiny)
        at_zero = np.abs(w) <= dual.l1
        free = ~at_zero & (raw > lower) & (raw < upper)
        key = (free.tobytes(), (raw >= upper).tobytes())
        if key == previous:
            break
        previous = key
        rows, cols = np.nonzero(free)
        if rows.size > max_free:
            break
        A_new = np.where(at_zero, 0.0, np.clip(raw, lower, upper))
        if rows.size:
            A_new[rows, cols] = 0.0
            V_fix = (Z.T @ (A_new @ C.T)) / (lam * n)
            Zk = Z[rows]
            fixed_pred = np.sum((Zk @ V_fix) * C[:, cols].T, axis=1)
            K = (Zk @ Zk.T) * fp.M[np.ix_(cols, cols)] / (lam * n)
            K[np.diag_indices_from(K)] += dual.quad
            rhs = Y[rows, cols] - dual.l1 * s[rows, cols] - fixed_pred
            try:
                alpha = np.linalg.solve(K, rhs)
            except np.linalg.LinAlgError:
                alpha = np.linalg.lstsq(K, rhs, rcond=None)[0]
            A_new[rows, cols] = np.clip(alpha, lower[rows, cols], upper[rows, cols])
        D, V = dual_objective(fp, A_new)
        if not np.isfinite(D):
            break
        P = fp.objective(V)
        entry = (P, D, relative_gap(P, D))
        trace.append(entry)
        if best is not None and entry[2] >= best[0][2]:
            break  # no better than the previous round: the classification is not settling, stop
        best = (entry, V, A_new)
        A = A_new
        if entry[2] <= tol:
            break
    if best is None:
        return None
    return trace, best[1], best[2]
