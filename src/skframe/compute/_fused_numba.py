"""Compiled fused pass ``K^T (a K V + W)`` of the Gaussian kernel (numba), private to :mod:`skframe.compute.fused`.

``K = exp(-gamma ||x_i - c_j||^2)`` is never stored: each thread takes a range of rows and, for a few rows at a
time (a buffer of about :data:`_BUFFER_ENTRIES` kernel entries, kept in the core's cache), computes their kernel
rows once, their products ``u_i = a k_i V + w_i`` and adds ``k_i^T u_i`` to its own m x k accumulator; the
accumulators are summed at the end. Each entry of the kernel costs its d squared differences, one exponential and
2 k multiply-adds, and the exponential is evaluated by :func:`_exp_le0`, a range reduction ``x = k ln 2 + r``
and a degree-12 polynomial that vectorises (relative error about 1e-16 on ``[-708, 0]``; exactly 0 below).

Only float64, C-contiguous arrays are passed, so each function compiles once and is cached on disk.
"""

import numpy as np
from numba import get_num_threads, njit, prange

_FAST = {"nnan", "ninf", "nsz", "contract", "arcp"}  # no reassoc: the two-part range reduction must stay as written
_BUFFER_ENTRIES = 1 << 15  # kernel entries of one thread's buffer of rows (256 KB: within a core's L2)
_TILE = 256  # columns of a row computed together (2 KB, with d x 256 centre coordinates: in L1)

_LOG2E = 1.4426950408889634
_LN2_A = 6.93147180369123816490e-01  # ln 2 split in two: k * _LN2_A is exact for |k| < 2**11
_LN2_B = 1.90821492927058770002e-10
_ROUND = 6755399441055744.0  # 1.5 * 2**52: adding it rounds to an integer held in the low bits
_ROUND_BITS = 0x4338000000000000


@njit(nogil=True, fastmath=_FAST, cache=True, inline="always")
def _exp_le0(a, n):
    """``a[j] = exp(min(a[j], 0))`` for ``j < n`` in place (0 below -708), in a loop LLVM vectorises."""
    bits = a.view(np.int64)
    for j in range(n):
        x = min(a[j], 0.0)
        low = x < -708.0
        x = 0.0 if low else x
        t = x * _LOG2E + _ROUND
        kf = t - _ROUND
        r = (x - kf * _LN2_A) - kf * _LN2_B
        p = 1.0 / 479001600
        p = p * r + 1.0 / 39916800
        p = p * r + 1.0 / 3628800
        p = p * r + 1.0 / 362880
        p = p * r + 1.0 / 40320
        p = p * r + 1.0 / 5040
        p = p * r + 1.0 / 720
        p = p * r + 1.0 / 120
        p = p * r + 1.0 / 24
        p = p * r + 1.0 / 6
        p = p * r + 0.5
        p = p * r + 1.0
        p = p * r + 1.0
        a[j] = t
        shift = (bits[j] - np.int64(_ROUND_BITS)) << 52  # k, read from the bits of t, moved to the exponent
        a[j] = 0.0 if low else p
        bits[j] = bits[j] + shift


@njit(nogil=True, fastmath=True, cache=True, inline="always")
def _dot(a, b, j0, j1):
    """``sum_j a[j] b[j]`` over ``j0:j1``, reassociated freely (vectorised partial sums)."""
    s = 0.0
    for j in range(j0, j1):
        s += a[j] * b[j]
    return s


@njit(nogil=True, fastmath=_FAST, cache=True)
def _rows_pass(X, Ct, gamma, V, W, a, lo, hi, acc):
    """Rows ``lo:hi``: ``acc += K_b^T (a K_b V + W_b)`` through a buffer of a few kernel rows (W: n rows or none)."""
    d, m = Ct.shape
    k = V.shape[1]
    use_w = W.shape[0] == X.shape[0]
    rows = max(1, min(64, _BUFFER_ENTRIES // max(m, 1)))
    buf = np.empty((rows, m))
    u = np.empty((rows, k))
    for r0 in range(lo, hi, rows):
        nr = min(rows, hi - r0)
        for r in range(nr):
            row = buf[r]
            i = r0 + r
            for c in range(k):
                u[r, c] = W[i, c] if use_w else 0.0
            for j0 in range(0, m, _TILE):  # a tile of the row stays in L1 for its d passes, exp and dot
                j1 = min(j0 + _TILE, m)
                for j in range(j0, j1):
                    row[j] = 0.0
                for f in range(d):
                    x = X[i, f]
                    for j in range(j0, j1):
                        diff = x - Ct[f, j]
                        row[j] += diff * diff
                for j in range(j0, j1):
                    row[j] *= -gamma
                _exp_le0(row[j0:j1], j1 - j0)
                if a != 0.0:
                    for c in range(k):
                        u[r, c] += a * _dot(row, V[:, c], j0, j1)
        for c in range(k):
            for r in range(nr):
                ur = u[r, c]
                row = buf[r]
                for j in range(m):
                    acc[c, j] += ur * row[j]


@njit(nogil=True, fastmath=_FAST, cache=True, parallel=True)
def _fused(X, Ct, gamma, V, W, a, parts):
    n = X.shape[0]
    m = Ct.shape[1]
    k = V.shape[1]
    accs = np.zeros((parts, k, m))
    step = (n + parts - 1) // parts
    for p in prange(parts):
        lo = p * step
        hi = min(n, lo + step)
        if lo < hi:
            _rows_pass(X, Ct, gamma, V, W, a, lo, hi, accs[p])
    out = np.zeros((m, k))
    for p in range(parts):
        for c in range(k):
            for j in range(m):
                out[j, c] += accs[p, c, j]
    return out


def gaussian_normal_pass(X, C, gamma, V, W, a):
    """``k(X, C)^T (a k(X, C) V + W)`` for the Gaussian kernel, never storing the n x m block.

    Parameters
    ----------
    X : ndarray (n, d) float64
    C : ndarray (m, d) float64
    gamma : float
    V : ndarray (m, k) float64
    W : ndarray (n, k) float64 or None
    a : float
        Scale of ``K V`` (0: the pass is ``K^T W``).

    Returns
    -------
    ndarray (m, k)
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    Ct = np.ascontiguousarray(np.asarray(C, dtype=np.float64).T)
    V = np.ascontiguousarray(V, dtype=np.float64)
    # no W: an empty one (its rows are added only when it has one per row of X)
    W = np.zeros((0, V.shape[1])) if W is None else np.ascontiguousarray(W, dtype=np.float64)
    parts = max(1, min(get_num_threads(), X.shape[0]))
    return _fused(X, Ct, float(gamma), V, W, float(a), parts)
