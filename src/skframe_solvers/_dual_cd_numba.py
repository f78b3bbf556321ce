"""Numba epochs of dual coordinate ascent (see :mod:`skframe_solvers.dual_cd` for the maths).

Both functions run one pass over the samples in the order ``perm`` and update, in place,
the dual variables ``A`` (n x d) and the primal variables ``V = (1/(lam n)) Z^T A C^T``
(r x k). ``scale = 1 / (lam n)``. The plain NumPy formulas they are tested against are
``_norm_epoch_numpy`` and ``_separable_epoch_numpy`` in :mod:`skframe_solvers.dual_cd`.
"""

import numpy as np
from numba import njit


@njit(cache=True)
def _prediction(Z, V, C, i, u, f):
    r, k = V.shape
    d = C.shape[1]
    zz = 0.0
    for a in range(k):
        u[a] = 0.0
    for t in range(r):
        z = Z[i, t]
        zz += z * z
        for a in range(k):
            u[a] += z * V[t, a]
    for j in range(d):
        s = 0.0
        for a in range(k):
            s += u[a] * C[a, j]
        f[j] = s
    return zz


@njit(cache=True)
def _push(Z, V, C, i, delta, g, coef):
    r, k = V.shape
    d = C.shape[1]
    for a in range(k):
        s = 0.0
        for j in range(d):
            s += C[a, j] * delta[j]
        g[a] = coef * s
    for t in range(r):
        z = Z[i, t]
        for a in range(k):
            V[t, a] += z * g[a]


@njit(cache=True)
def _work_buffers(V, Y):
    """Scratch vectors of one epoch: ``u`` (k), prediction ``f`` (d), step ``delta`` (d), ``g`` (k)."""
    k = V.shape[1]
    d = Y.shape[1]
    return np.empty(k), np.empty(d), np.empty(d), np.empty(k)


@njit(cache=True)
def norm_epoch(Z, Y, A, V, C, perm, scale, mu, quad, l1, radius):
    """Block updates for losses of the residual norm: one prox of the conjugate per sample."""
    u, f, delta, g = _work_buffers(V, Y)
    d = Y.shape[1]
    p = np.empty(d)
    for i in perm:
        zz = _prediction(Z, V, C, i, u, f)
        c = zz * scale * mu
        if c <= 0.0:
            continue
        rho = 0.0
        for j in range(d):
            p[j] = A[i, j] + (Y[i, j] - f[j]) / c
            rho += p[j] * p[j]
        rho = np.sqrt(rho)
        t = (c * rho - l1) / (quad + c)
        if t < 0.0:
            t = 0.0
        if t > radius:
            t = radius
        ratio = t / rho if rho > 0.0 else 0.0
        moved = False
        for j in range(d):
            new = p[j] * ratio
            delta[j] = new - A[i, j]
            if delta[j] != 0.0:
                moved = True
            A[i, j] = new
        if moved:
            _push(Z, V, C, i, delta, g, scale)


@njit(cache=True)
def separable_epoch(Z, Y, A, V, C, M, perm, scale, quad, l1, lower, upper):
    """Exact scalar updates, one per output column, for losses that act column by column."""
    u, f, delta, g = _work_buffers(V, Y)
    d = Y.shape[1]
    for i in perm:
        zz = _prediction(Z, V, C, i, u, f)
        q = zz * scale
        if q <= 0.0:
            continue
        moved = False
        for j in range(d):
            delta[j] = 0.0
            c = q * M[j, j]
            if c <= 0.0:
                continue
            w = c * A[i, j] + (Y[i, j] - f[j])  # c * (alpha + (y - f) / c)
            if w > l1:
                w -= l1
            elif w < -l1:
                w += l1
            else:
                w = 0.0
            new = w / (quad + c)
            if new < lower[i, j]:
                new = lower[i, j]
            if new > upper[i, j]:
                new = upper[i, j]
            step = new - A[i, j]
            if step != 0.0:
                moved = True
                A[i, j] = new
                delta[j] = step
                for jj in range(d):
                    f[jj] += q * M[jj, j] * step
        if moved:
            _push(Z, V, C, i, delta, g, scale)
