"""Many feature-map problems solved in one ADMM loop (the cross-validated λ path of the machines).

A cross-validated λ path of a sketched kernel machine solves one problem per (fold, λ) pair,

    min_V  P_p(V) = (1/n_p) sum_i l(z_i^T V C, y_i) + (lam_p/2) ||V||_F^2        (p = 1 ... P)

(the problem of :mod:`skframe_solvers._problem`; ``C`` is the same for every problem, ``Z_p`` and
``Y_p`` are the features and targets of the fold). On a few hundred rows one ADMM iteration of
:mod:`skframe_solvers.admm` is a handful of small products and most of its time is the
interpreter's; :func:`batched_admm` runs the iterations of all problems together on stacked
arrays: the folds are padded to the same number of rows (padded rows have zero features, zero
targets and a dual box of zero width, so they add nothing to any objective or update) and the
same number of features (zero columns), and every problem keeps its own penalty ``rho_p``, its own
residual balancing and its own stop.

The updates are those of :class:`skframe_solvers.admm.ADMMSolver` (same start point, same
over-relaxation, same residual balancing of the penalty, same proximal step from the loss's ``dual``;
the initial penalty is scaled per problem to its start point's residual, see :func:`_start_penalty`,
which cuts the iterations by about half on the joint quantile problems of the benchmarks), written in
the eigenbasis of ``Z_p^T Z_p = E diag(sig) E^T``: with ``Z'_p = Z_p E`` and ``V' = E^T V`` the
V-update is a diagonal scaling and each iteration costs two products with ``Z'_p`` instead of two
with ``Z_p`` and two with ``E`` (the iterates are the same up to rounding, since ``Z'_p V' = Z_p V``
and ``||V'|| = ||V||``). The problems of one group (a fold: the same features for every λ) are
adjacent columns of the stacked arrays (shape ``(rows, problems, outputs)``), so each product is one
matrix product per group with all its problems as columns: the group's features are read once per
product, and a certified problem leaves the batch without copying any features.

*Certificate.* Every ``check_every`` iterations the primal value at the current point and the dual
value at the dual point ``A = -rho U`` of the proximal step are estimated for every problem from the
iteration's own products; the best of each seen so far (both are bounds of the optimum) give the gap, as in the
single-problem solver. A problem whose estimated relative gap reaches ``tol`` is certified by the
independent formulas of :mod:`skframe_solvers._duality` (:func:`certified_pair`: ``P`` from the
loss values at the predictions of ``V``, ``D`` from the conjugate formula at ``A``), on the problem's
own rows and features; only a problem whose certified relative gap is at most ``tol`` is frozen and
dropped from the batch. The returned point is therefore a certified solution of its own problem, exactly
as a fresh fit's.
"""

from __future__ import annotations

import numpy as np

from skframe.plugin.toolbox import serial_blas
from skframe_solvers._duality import dual_objective, loss_prox, relative_gap

__all__ = ["ADMM_SETTINGS", "BatchItem", "batched_admm", "certified_pair"]


def certified_pair(fp, V, A):
    """``(P(V), D(A))`` of the feature-map problem ``fp`` by the single solvers' own code
    (:func:`skframe_solvers._duality.dual_objective`): ``D <= min P <= P`` for every ``V`` and every ``A``
    (weak duality), so ``P - D`` bounds ``P(V) - min P``."""
    return float(fp.objective(V)), dual_objective(fp, A)[0]


class BatchItem:
    """One problem of the batch: ``fp`` (a FeatureMapProblem with its ``lam``), ``dual`` (``loss.dual``) and
    ``group`` (problems of one group share their features: the eigendecomposition is computed once)."""

    def __init__(self, fp, dual, group):
        self.fp, self.dual, self.group = fp, dual, group


def _stack(arrays, n_max, width):
    """``(n_max, P, width)``: problem ``p``'s array in column ``p``, padded with zeros."""
    out = np.zeros((n_max, len(arrays), width))
    for p, a in enumerate(arrays):
        out[: a.shape[0], p, : a.shape[1]] = a
    return out


def _spans(gid):
    """``(group, start, stop)`` of the runs of equal group ids (the problems are sorted by group)."""
    if gid.size == 0:
        return []
    cuts = np.flatnonzero(np.diff(gid)) + 1
    starts, stops = np.r_[0, cuts], np.r_[cuts, gid.size]
    return [(int(gid[a]), int(a), int(b)) for a, b in zip(starts, stops)]


def _group_products(mats, H, spans, rows):
    """``out[:m_g, a:b] = mats[g] @ H[:c_g, a:b]`` for each span, with all problems of a group as the columns of
    one product (``mats[g]`` is ``m_g x c_g``); rows beyond ``m_g`` are zero. ``H``: ``(., P, w)``."""
    out = np.zeros((rows, H.shape[1], H.shape[2]))
    w = H.shape[2]
    for g, a, b in spans:
        Mg = mats[g]
        m, c = Mg.shape
        out[:m, a:b] = (Mg @ H[:c, a:b].reshape(c, (b - a) * w)).reshape(m, b - a, w)
    return out


def _rotated(items, flat):
    """Per group: ``Z E``, ``sig`` (clipped at 0), ``E`` and ``(Z E)^T Y``.

    When the off-diagonal part of ``Z^T Z`` is at most ``flat`` times its largest diagonal entry (orthogonal
    feature columns, as the exact model's ``Z = U D^{1/2}``), ``E = I`` and ``sig`` is the diagonal: with
    ``flat`` the unit roundoff of the iteration's products, the departure from orthogonality it ignores is no
    larger than that of the rounded copy of ``Z`` the products use (the certificate does not depend on it)."""
    cache = {}
    for it in items:
        if it.group in cache:
            continue
        fp = it.fp
        gram = fp.gram()
        diag = np.diag(gram).copy()
        off = gram - np.diag(diag)
        if np.max(np.abs(off), initial=0.0) <= flat * max(float(np.max(np.abs(diag), initial=0.0)), 1e-300):
            # orthogonal feature columns (the exact model's Z = U D^{1/2}): Z^T Z is its own eigendecomposition
            sig, E, Zr = diag, np.eye(diag.size), np.array(fp.Z, dtype=np.float64)
        else:
            sig, E = np.linalg.eigh(gram)
            Zr = fp.Z @ E
        cache[it.group] = (Zr, np.maximum(sig, 0.0), E, Zr.T @ fp.Y)
    return cache


def _dual_values(structure, dual, A, Y, rowmask):
    """``sum_i h(alpha_i, y_i)`` per problem (``-inf`` outside the domain): the conjugate formula of
    :mod:`skframe_losses.duals` on stacked arrays (an estimate; the certificate uses the dual's own code).

    ``A`` is the proximal step's dual point: zero on padded rows, and for a separable dual a clip to the box, so
    inside the domain (only the ball of a norm dual is checked, its radius being met up to rounding)."""
    if structure == "norm":
        nrm = np.sqrt(np.sum(A * A, axis=2))
        h = np.sum(A * Y, axis=2) - 0.5 * dual.quad * nrm**2 - dual.l1 * nrm
        bad = np.any(nrm > dual.radius * (1 + 1e-9) + 1e-9, axis=0)
        out = np.sum(h * rowmask[:, :, 0], axis=0)
        out[bad] = -np.inf
        return out
    out = np.einsum("ipj,ipj->p", A, Y)
    if dual.quad:
        out -= 0.5 * dual.quad * np.einsum("ipj,ipj->p", A, A)
    if dual.l1:
        out -= dual.l1 * np.sum(np.abs(A), axis=(0, 2))
    return out


def _start_penalty(rho, rho_start, structure, dual, F, Y, rowmask, lower, upper, n):
    """Per-problem initial penalty: ``rho`` everywhere, or (``rho_start="residual"``) the width of the loss's dual
    domain over the root mean square residual ``Y - F`` at the start point, per problem.

    The penalty is the inverse step of the proximal step of the loss; the dual point ``A = rho (Y - T)`` clipped to
    the dual domain then moves across a sizeable part of the domain at the first step, whatever the scale of the
    targets (scaling ``Y`` by ``c`` scales this penalty by ``1 / c``, as it scales the best fixed penalty). A problem
    whose width is not finite (an unbounded dual domain) or whose residual is zero keeps ``rho``."""
    P = F.shape[1]
    if rho_start != "residual":
        return np.full(P, float(rho))
    d = Y.shape[2]
    R = (Y - F) * rowmask
    rms = np.sqrt(np.sum(R * R, axis=(0, 2)) / (n * d))
    with np.errstate(invalid="ignore", divide="ignore"):
        if structure == "separable":
            width = np.sum((upper - lower) * rowmask, axis=(0, 2)) / (n * d)
        else:  # a ball of radius rho: diameter 2 rho over the d coordinates
            width = np.full(P, 2.0 * dual.radius / np.sqrt(d))
        out = width / rms
    return np.where(np.isfinite(out) & (out > 0), out, float(rho))


def batched_admm(items, **params):
    """Solve every problem of ``items`` to a certified relative duality gap in one ADMM loop (see
    :func:`_batched_admm`), with one BLAS thread: the products are small, and threads waiting for a core
    another process holds slow them down (:func:`skframe.plugin.api.serial_blas`)."""
    unknown = set(params) - set(ADMM_SETTINGS)
    if unknown:
        raise TypeError(f"batched_admm() got unexpected settings {sorted(unknown)}; known: {list(ADMM_SETTINGS)}")
    with serial_blas(True):
        return _batched_admm(items, dict(ADMM_SETTINGS, **params))


#: the settings of :func:`batched_admm` and their defaults
ADMM_SETTINGS = {"tol": 1e-4, "max_iter": 5000, "rho": 0.1, "adaptive": True, "adapt_until": 500, "check_every": 10,
                 "init": "ridge", "relaxation": 1.6, "products": "float32", "rho_start": "residual"}


def _batched_admm(items, settings):
    """Solve every problem of ``items`` to a certified relative duality gap ``tol`` in one ADMM loop.

    Parameters
    ----------
    items : list of BatchItem
        All with the same loss (the same ``dual``) and output factor ``C``.
    settings : dict
        Every key of :data:`ADMM_SETTINGS`:
    tol, max_iter, rho, adaptive, adapt_until, check_every, init, relaxation
        As :class:`skframe_solvers.admm.ADMMSolver`'s parameters (``init``: "ridge" or "zeros").
    products : {"float32", "float64"}, default="float32"
        Precision of the two products of each iteration (the estimates and the certificate are float64).
    rho_start : {"residual", "fixed"}, default="residual"
        "fixed" starts every problem at ``rho``; "residual" at the penalty of :func:`_start_penalty` (the
        width of the dual domain over the start point's residual), which the residual balancing then adapts.
        The penalty only sets the steps: the points are certified the same way.

    Returns
    -------
    list of dict
        Per problem: ``V`` (the primal point, in the solver's variables), ``trace`` (the checks'
        ``(P, D, relative gap)``, the last one by :func:`certified_pair`),
        ``n_iter`` and ``rho`` (the final penalty).
    """
    tol, max_iter, rho, adaptive, adapt_until, check_every, init, relaxation, products, rho_start = (
        settings[key] for key in ADMM_SETTINGS)
    if not items:
        return []
    fp0, dual = items[0].fp, items[0].dual
    structure = dual.structure
    C = fp0.C
    k = C.shape[0]
    s = fp0.sqrt_s ** 2
    a = float(relaxation)
    low = np.float32 if products == "float32" else np.float64
    rot = _rotated(items, np.finfo(np.float32).eps if products == "float32" else 0.0)
    # problems sorted by group: the problems of a group (a fold: its features, all its lam values) are adjacent
    # columns, and each product of an iteration is one product per group with its problems as extra columns
    groups = list(dict.fromkeys(it.group for it in items))
    order = sorted(range(len(items)), key=lambda p: groups.index(items[p].group))
    items = [items[p] for p in order]
    gid = np.array([groups.index(it.group) for it in items])
    Zg = [rot[g][0] for g in groups]
    ZgT = [np.ascontiguousarray(z.T) for z in Zg]
    Zp, ZpT = [z.astype(low) for z in Zg], [z.astype(low) for z in ZgT]
    P = len(items)
    n = np.array([it.fp.n for it in items], dtype=float)
    n_max = int(n.max())
    r_max = max(it.fp.r for it in items)
    d = fp0.Y.shape[1]
    lam = np.array([it.fp.lam for it in items])
    sig = np.zeros((r_max, P, 1))
    for p, it in enumerate(items):
        sig[: it.fp.r, p, 0] = rot[it.group][1]
    Y = _stack([it.fp.Y for it in items], n_max, d)
    rowmask = np.zeros((n_max, P, 1))
    for p, it in enumerate(items):
        rowmask[: it.fp.n, p] = 1.0
    lower = upper = None
    if structure == "separable":  # padded rows: a box of zero width keeps their dual point at 0
        bounds = [dual.bounds(it.fp.Y) for it in items]
        lower = _stack([b[0] for b in bounds], n_max, d)
        upper = _stack([b[1] for b in bounds], n_max, d)
    # start point: the square-loss closed form in the rotated variables, or zero
    V = np.zeros((r_max, P, k))
    if init == "ridge":
        for p, it in enumerate(items):
            ZtYQ = rot[it.group][3] @ it.fp.Q
            V[: it.fp.r, p] = it.fp.sqrt_s * ZtYQ / (np.outer(rot[it.group][1], s) + it.fp.n * it.fp.lam)
    spans = _spans(gid)
    F = _group_products(Zg, V @ C, spans, n_max)
    U = np.zeros_like(F)
    # the iterations' two products run on float32 copies (half the bytes, twice the flops of float64), as
    # ADMMSolver(products="float32") does; the certificate is float64 on the problem's own arrays, and problems
    # still uncertified after a quarter of max_iter go on with float64 products
    switch_at = max(int(max_iter * 0.25), 1)
    rho = _start_penalty(rho, rho_start, structure, dual, F, Y, rowmask, lower, upper, n)
    CT = np.ascontiguousarray(C.T)
    idx = np.arange(P)  # the problems still in the batch
    best_P = np.full(P, np.inf)
    best_D = np.full(P, -np.inf)
    best_V = np.zeros((P, r_max, k))
    best_A = np.zeros((P, n_max, d))
    traces = [[] for _ in range(P)]
    results = [None] * P
    plain = structure == "separable" and dual.l1 == 0.0  # no soft threshold (pinball, hinge)
    T, A, G = np.empty_like(F), np.empty_like(F), np.empty_like(F)
    denom = None
    it_count = 0
    for it_count in range(1, max_iter + 1):
        rho_b = rho[None, :, None]
        if denom is None:  # the V-update's diagonal: changes with rho only
            scale = (rho / n[idx])[None, :, None]
            denom = scale / (lam[idx][None, :, None] + scale * sig * s)
        if it_count == switch_at and low is not np.float64:
            low, Zp, ZpT = np.float64, Zg, ZgT
        np.subtract(F, U, out=G)
        V = _group_products(ZpT, G.astype(low, copy=False), spans, r_max) @ CT  # C^T after the product: r rows, not n
        V *= denom
        ZV = _group_products(Zp, (V @ C).astype(low, copy=False), spans, n_max)
        # over-relaxed prediction plus multipliers: the point of the proximal step
        np.multiply(ZV, a, out=T)
        if a != 1.0:
            T += np.multiply(F, 1.0 - a, out=G)
        T += U
        # the proximal step as the dual point A (the single solver's loss_prox, per-problem rho)
        np.subtract(Y, T, out=G)
        if plain:
            if dual.quad == 0.0:
                G *= rho_b
            else:
                G /= dual.quad + 1.0 / rho_b
            np.maximum(G, lower, out=A)
            np.minimum(A, upper, out=A)
        else:
            A = loss_prox(dual, T, Y, rho_b, lower, upper)
            if structure == "norm":  # padded rows keep a zero dual point
                A *= rowmask
        # F = T + A / rho and U = T - F = -A / rho
        np.divide(A, -rho_b, out=U)
        F_old = F
        F = T - U
        if adaptive and it_count % 5 == 0 and it_count <= adapt_until:
            np.subtract(ZV, F, out=G)
            r_norm = np.sqrt(np.einsum("ipj,ipj->p", G, G))
            np.subtract(F, F_old, out=G)
            s_norm = rho * np.sqrt(np.einsum("ipj,ipj->p", G, G))
            factor = np.where(r_norm > 10 * s_norm, 2.0, np.where(s_norm > 10 * r_norm, 0.5, 1.0))
            if np.any(factor != 1.0):
                rho = rho * factor
                U /= factor[None, :, None]
                denom = None
        if it_count % check_every and it_count < max_iter:
            continue
        # estimates of P at V and D at the proximal step's dual point A (= -rho U) from this iteration's products
        lam_a, n_a = lam[idx], n[idx]
        m = n_max * idx.size
        losses = np.asarray(fp0.loss.value(ZV.reshape(m, d), Y.reshape(m, d)), dtype=float).reshape(n_max, -1)
        Pv = np.einsum("ip,ip->p", losses, rowmask[:, :, 0]) / n_a + 0.5 * lam_a * np.einsum("ipj,ipj->p", V, V)
        A_now = A
        VA = _group_products(ZpT, A_now.astype(low, copy=False), spans, r_max) @ CT
        VA /= (lam_a * n_a)[None, :, None]
        Dv = _dual_values(structure, dual, A_now, Y, rowmask) / n_a - \
            0.5 * lam_a * np.einsum("ipj,ipj->p", VA, VA)
        better_P = Pv < best_P[idx]
        better_D = Dv > best_D[idx]
        for q in np.flatnonzero(better_P):
            best_P[idx[q]], best_V[idx[q]] = Pv[q], V[:, q]
        for q in np.flatnonzero(better_D):
            best_D[idx[q]], best_A[idx[q]] = Dv[q], A_now[:, q]
        done = []
        bp, bd = best_P[idx], best_D[idx]
        with np.errstate(invalid="ignore"):  # NaN (an infinite bound) is not above tol: it goes to the certificate
            gaps = (bp - bd) / np.maximum(np.maximum(np.abs(bp), np.abs(bd)), np.finfo(float).tiny)
        for p, entry in zip(idx, zip(bp.tolist(), bd.tolist(), gaps.tolist())):
            traces[p].append(entry)
        for q in (range(idx.size) if it_count >= max_iter else np.flatnonzero(~(gaps > tol))):
            p = idx[q]
            # the certificate: the problem's and the loss's own objectives on the problem's own arrays
            fp = items[p].fp
            Vp = rot[items[p].group][2] @ best_V[p, : fp.r]
            Pc, Dc = certified_pair(fp, Vp, best_A[p, : fp.n])
            best_P[p], best_D[p] = Pc, Dc
            traces[p][-1] = (float(Pc), float(Dc), float(relative_gap(Pc, Dc)))
            if traces[p][-1][2] <= tol or it_count >= max_iter:
                results[p] = {"V": Vp, "trace": traces[p], "n_iter": it_count, "rho": float(rho[q])}
                done.append(q)
        if done:
            keep = np.setdiff1d(np.arange(idx.size), done)
            idx = idx[keep]
            if idx.size == 0:
                break
            gid = gid[keep]
            spans = _spans(gid)
            sig, Y, rowmask = sig[:, keep], Y[:, keep], rowmask[:, keep]
            F, U, rho = F[:, keep], U[:, keep], rho[keep]
            T, A, G = T[:, keep], A[:, keep], G[:, keep]
            denom = None
            if lower is not None:
                lower, upper = lower[:, keep], upper[:, keep]
    out = [None] * P
    for p, q in enumerate(order):
        out[q] = results[p]
    return out
