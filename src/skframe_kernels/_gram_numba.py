"""Compiled Gram-block kernels (numba), private to :mod:`skframe_kernels.kernels`.

Every function here works in place on a preallocated, C-contiguous float64
output block ``out`` of shape ``(n, m)`` and parallelises over its rows with
``prange``. Only float64, C-contiguous arrays (and int64 CSR index arrays) are
ever passed, so each function is compiled once and cached on disk
(``cache=True``).

The exponential is evaluated by :func:`_exp_nonpositive_inplace`, a
vectorisable Cody-Waite range reduction plus a degree-12 Taylor polynomial
(relative error below 1e-15 on ``[-708, 0]``, exact 0 below); the integer of
the range reduction is read from the bits of ``x / ln 2 + 1.5 * 2**52``, as
AVX2 has no vector float-to-int64 conversion. numba's
``math.exp`` calls scalar libm and is about 3x slower than NumPy's SIMD
``np.exp``; this polynomial vectorises (AVX2/AVX-512) inside the fused loops,
which is what brings a Gaussian Gram block to the cost of one ``np.exp``
(see ``benchmarks/bench_gram.py``).

The fast-math flags exclude ``reassoc`` so that LLVM cannot fold the two-step
range reduction ``(x - k*ln2_hi) - k*ln2_lo`` back into one rounding.
"""

import numpy as np
from numba import njit, prange, types
from numba.extending import overload

from skframe_kernels._gram_numpy import __all__  # noqa: F401  (the same functions as the plain engine)

_FASTMATH = {"nnan", "ninf", "nsz", "contract", "arcp"}
_TILE = 512  # columns of ``out`` processed together by the direct kernels (stays in L1/L2)
_CSR_ROWS = 1024  # CSR rows per parallel task of the sparse x dense kernels
_CSR_TILE = 128  # output columns per task of the sparse x dense kernels (the task's rows share the tile)

_LN2_HI = 6.93147180369123816490e-01  # ln 2 with trailing zero bits: k * _LN2_HI is exact
_LN2_LO = 1.90821492927058770002e-10
_INV_LN2 = 1.44269504088896338700e00
_UNDERFLOW = -708.0  # exp(x) < 2.3e-308 below: returned as 0


_SHIFT = 6755399441055744.0  # 1.5 * 2**52: x + _SHIFT rounds x to the integer held in its low bits
_SHIFT_BITS = 0x4338000000000000  # the bits of _SHIFT


@njit(nogil=True, fastmath=_FASTMATH, cache=True, inline="always")
def _exp_nonpositive_inplace(a):
    """Replace each ``a[j] <= 0`` of a contiguous 1-D array by ``exp(a[j])``.

    Positive entries (rounding noise) are clamped to 0 (result 1); entries
    below -708 give exactly 0. The integer k = round(x / ln 2) is obtained by
    adding ``_SHIFT`` (no float-to-int64 conversion, which AVX2 lacks, so the
    loop vectorises) and read back from the sum's bits, which also give 2**k.
    """
    bits = a.view(np.int64)
    shift_bits = np.int64(_SHIFT_BITS)
    for j in range(a.shape[0]):
        x = min(a[j], 0.0)
        under = x < _UNDERFLOW
        x = 0.0 if under else x
        t = x * _INV_LN2 + _SHIFT
        kf = t - _SHIFT  # round(x / ln 2), exactly (no reassoc among the fast-math flags)
        r = (x - kf * _LN2_HI) - kf * _LN2_LO  # |r| <= ln(2)/2
        p = 1.0 + r * (1.0 + r * (0.5 + r * (1.0 / 6 + r * (1.0 / 24 + r * (1.0 / 120 + r * (
            1.0 / 720 + r * (1.0 / 5040 + r * (1.0 / 40320 + r * (1.0 / 362880 + r * (
                1.0 / 3628800 + r * (1.0 / 39916800 + r * (1.0 / 479001600))))))))))))
        a[j] = t
        k = bits[j] - shift_bits  # the integer k, from the bits of t
        a[j] = 0.0 if under else p
        bits[j] = bits[j] + (k << 52)  # multiply by 2**k (k in [-1022, 0])


_SQDIFF = 0  # ops of :func:`_tiled_row`: sum_k (x_k - y_k)^2
_ABSDIFF = 1  # sum_k |x_k - y_k|
_MIN = 2  # sum_k min(x_k, y_k)


@njit(nogil=True, fastmath=_FASTMATH, cache=True, inline="always")
def _tiled_row(X, Yt, i, row, g, op):
    """``row[j] = g * sum_k op(X[i, k], Yt[k, j])``, in tiles of ``_TILE`` columns (in the precision of ``row``).

    ``op`` is one of ``_SQDIFF``, ``_ABSDIFF``, ``_MIN``; every caller passes a constant, so
    after inlining the branch folds away and each inner loop vectorises on its own.
    """
    d = X.shape[1]
    m = Yt.shape[1]
    for j0 in range(0, m, _TILE):
        w = min(_TILE, m - j0)
        acc = row[j0 : j0 + w]  # slices indexed from 0: numba drops the wraparound checks and vectorises
        for j in range(w):
            acc[j] = 0.0
        for k in range(d):
            xik = X[i, k]
            yk = Yt[k, j0 : j0 + w]
            if op == _SQDIFF:
                for j in range(w):
                    t = xik - yk[j]
                    acc[j] += t * t
            elif op == _ABSDIFF:
                for j in range(w):
                    acc[j] += abs(xik - yk[j])
            else:
                for j in range(w):
                    acc[j] += min(xik, yk[j])
        for j in range(w):
            acc[j] *= g


@njit(nogil=True, fastmath=_FASTMATH, cache=True, inline="always")
def _exponent_from_cross_row(row, xi, yn, gamma):
    """``row[j] = -gamma * max(xi + yn[j] - 2 row[j], 0)`` (the argument of the exponential)."""
    for j in range(row.shape[0]):
        row[j] = -gamma * max(xi + yn[j] - 2.0 * row[j], 0.0)


@njit(parallel=True, fastmath=_FASTMATH, cache=True)
def sqeuclidean_exp_direct(X, Yt, gamma, out):
    """``out[i, j] = exp(-gamma * ||X[i] - Yt[:, j]||^2)``, differences summed directly.

    Best for few features (no cancellation, no BLAS call). ``Yt`` is ``Y.T``
    made C-contiguous, shape ``(d, m)``.
    """
    g = -gamma  # float32 blocks get a float32 gamma (see _gram32): the loops stay in single precision
    for i in prange(X.shape[0]):
        row = out[i]
        _tiled_row(X, Yt, i, row, g, _SQDIFF)
        _exp_row(row)


@njit(parallel=True, fastmath=_FASTMATH, cache=True)
def sqeuclidean_exp_from_cross(out, xn, yn, gamma):
    """Turn ``out = X @ Y.T`` into ``exp(-gamma * max(xn_i + yn_j - 2 out_ij, 0))``."""
    for i in prange(out.shape[0]):
        row = out[i]
        _exponent_from_cross_row(row, xn[i], yn, gamma)
        _exp_row(row)


@njit(parallel=True, fastmath=_FASTMATH, cache=True)
def l1_exp_direct(X, Yt, gamma, out):
    """``out[i, j] = exp(-gamma * ||X[i] - Yt[:, j]||_1)`` for dense data."""
    for i in prange(X.shape[0]):
        row = out[i]
        _tiled_row(X, Yt, i, row, -gamma, _ABSDIFF)
        _exp_nonpositive_inplace(row)


@njit(parallel=True, fastmath=_FASTMATH, cache=True)
def l1_exp_from_overlap(out, ax, ay, gamma):
    """Turn ``out = sum_k (|x_k| + |y_k| - |x_k - y_k|)`` into ``exp(-gamma * ||x - y||_1)``.

    ``ax`` and ``ay`` are the row sums of absolute values.
    """
    n, m = out.shape
    for i in prange(n):
        row = out[i]
        a = ax[i]
        for j in range(m):
            row[j] = -gamma * max(a + ay[j] - row[j], 0.0)
        _exp_nonpositive_inplace(row)


@njit(parallel=True, fastmath=_FASTMATH, cache=True)
def min_sum_direct(X, Yt, out):
    """``out[i, j] = sum_k min(X[i, k], Yt[k, j])`` for dense data."""
    for i in prange(X.shape[0]):
        _tiled_row(X, Yt, i, out[i], 1.0, _MIN)  # the scaling by 1.0 folds away


@njit(parallel=True, fastmath=_FASTMATH, cache=True)
def minmax_from_min(out, sx, sy):
    """Turn ``out = sum min(x, y)`` into ``sum min / sum max`` (``sum max = sx + sy - sum min``); 0/0 gives 1.

    The same loop serves as :func:`tanimoto_from_cross`: ``out = X @ Y.T`` with the squared
    norms ``sx``, ``sy`` becomes ``<x,y> / (||x||^2 + ||y||^2 - <x,y>)``.
    """
    n, m = out.shape
    for i in prange(n):
        row = out[i]
        s = sx[i]
        for j in range(m):
            den = s + sy[j] - row[j]
            row[j] = row[j] / den if den > 0.0 else 1.0


@njit(parallel=True, cache=True)
def csr_overlap(xp, xi, xd, yp, yi, yd, mode, out):
    """Sum over the common non-zero columns of CSR rows ``x_a`` and ``y_b``.

    ``mode == 0``: ``sum |u| + |v| - |u - v|`` (so that ``||x - y||_1 = sum|x| + sum|y| - out``);
    ``mode == 1``: ``sum min(u, v)``. Column indices must be sorted within rows.
    """
    n = xp.shape[0] - 1
    m = yp.shape[0] - 1
    for a in prange(n):
        p0 = xp[a]
        p1 = xp[a + 1]
        for b in range(m):
            p = p0
            q = yp[b]
            q1 = yp[b + 1]
            s = 0.0
            while p < p1 and q < q1:
                cp = xi[p]
                cq = yi[q]
                if cp == cq:
                    u = xd[p]
                    v = yd[q]
                    if mode == 0:
                        s += abs(u) + abs(v) - abs(u - v)
                    else:
                        s += min(u, v)
                    p += 1
                    q += 1
                elif cp < cq:
                    p += 1
                else:
                    q += 1
            out[a, b] = s


@njit(parallel=True, fastmath=_FASTMATH, cache=True)
def affine_exp(out, a, b):
    """``out = exp(a * out + b)`` in place; the argument must be <= 0 (rounding noise is clamped)."""
    n, m = out.shape
    for i in prange(n):
        row = out[i]
        for j in range(m):
            row[j] = a * row[j] + b
        _exp_nonpositive_inplace(row)


@njit(nogil=True, fastmath=_FASTMATH, cache=True, inline="always")
def _csr_dense_tile(xp, xi, xd, Yt, out, i0, i1, j_off, c0, w):
    """``out[i, j_off + c0 + j] = sum_p xd[p] * Yt[xi[p], c0 + j]`` for rows ``i0 <= i < i1``, ``j < w``.

    Each non-zero is one contiguous axpy over the ``w`` columns of the tile, which vectorises;
    the rows of a task share the same narrow tile of ``Yt`` in cache.
    """
    for i in range(i0, i1):
        acc = out[i, j_off + c0 : j_off + c0 + w]
        for j in range(w):
            acc[j] = 0.0
        p = xp[i]
        p1 = xp[i + 1]
        while p + 4 <= p1:  # four non-zeros per sweep: a quarter of the loads/stores of acc
            v0 = xd[p]
            v1 = xd[p + 1]
            v2 = xd[p + 2]
            v3 = xd[p + 3]
            y0 = Yt[xi[p], c0 : c0 + w]
            y1 = Yt[xi[p + 1], c0 : c0 + w]
            y2 = Yt[xi[p + 2], c0 : c0 + w]
            y3 = Yt[xi[p + 3], c0 : c0 + w]
            for j in range(w):
                acc[j] += (v0 * y0[j] + v1 * y1[j]) + (v2 * y2[j] + v3 * y3[j])
            p += 4
        while p < p1:
            v = xd[p]
            yk = Yt[xi[p], c0 : c0 + w]
            for j in range(w):
                acc[j] += v * yk[j]
            p += 1


@njit(nogil=True, cache=True, inline="always")
def _task_bounds(task, n, m):
    """Rows [i0, i1) and columns [c0, c0 + w) of one task of the (column tile x row block) grid."""
    n_blocks = (n + _CSR_ROWS - 1) // _CSR_ROWS
    t = task // n_blocks
    b = task - t * n_blocks
    c0 = t * _CSR_TILE
    i0 = b * _CSR_ROWS
    return i0, min(n, i0 + _CSR_ROWS), c0, min(_CSR_TILE, m - c0)


@njit(cache=True)
def _n_tasks(n, m):
    return ((m + _CSR_TILE - 1) // _CSR_TILE) * ((n + _CSR_ROWS - 1) // _CSR_ROWS)


@njit(parallel=True, fastmath=_FASTMATH, cache=True)
def csr_dense_cross(xp, xi, xd, Yt, out, j_off):
    """``out[:, j_off : j_off + m] = X @ Yt`` for CSR ``X = (xp, xi, xd)`` and dense ``Yt`` of shape (d, m).

    ``Yt`` is ``Y.T`` (or a tile of it) made C-contiguous; ``out`` is the full C-contiguous block.
    Parallel over a grid of (``_CSR_TILE`` columns) x (``_CSR_ROWS`` rows) tasks.
    """
    n = xp.shape[0] - 1
    m = Yt.shape[1]
    for task in prange(_n_tasks(n, m)):
        i0, i1, c0, w = _task_bounds(task, n, m)
        _csr_dense_tile(xp, xi, xd, Yt, out, i0, i1, j_off, c0, w)


@njit(parallel=True, fastmath=_FASTMATH, cache=True)
def csr_dense_sqeuclidean_exp(xp, xi, xd, Yt, xn, yn, gamma, out, j_off):
    """:func:`csr_dense_cross` fused with ``exp(-gamma * max(xn_i + yn_j - 2 <x_i, y_j>, 0))``.

    ``yn`` holds the squared norms of the ``m`` columns of ``Yt`` (the tile's rows of Y).
    """
    n = xp.shape[0] - 1
    m = Yt.shape[1]
    for task in prange(_n_tasks(n, m)):
        i0, i1, c0, w = _task_bounds(task, n, m)
        _csr_dense_tile(xp, xi, xd, Yt, out, i0, i1, j_off, c0, w)
        for i in range(i0, i1):
            row = out[i, j_off + c0 : j_off + c0 + w]
            _exponent_from_cross_row(row, xn[i], yn[c0 : c0 + w], gamma)
            _exp_nonpositive_inplace(row)


@njit(parallel=True, fastmath=_FASTMATH, cache=True)
def dense_csr_cross(X, yp, yi, yd, out):
    """``out = X @ Y.T`` for dense ``X`` (n, d) and CSR ``Y = (yp, yi, yd)``: gathers from the row ``X[i]``."""
    n = X.shape[0]
    m = yp.shape[0] - 1
    for i in prange(n):
        x = X[i]
        row = out[i]
        for j in range(m):
            s = 0.0
            for p in range(yp[j], yp[j + 1]):
                s += yd[p] * x[yi[p]]
            row[j] = s


@njit(nogil=True, cache=True)
def csr_rows_to_dense_t(yp, yi, yd, j0, j1, out):
    """Scatter the CSR rows ``j0 <= j < j1`` into the zeroed dense ``out`` of shape (d, j1 - j0), transposed."""
    for j in range(j0, j1):
        for p in range(yp[j], yp[j + 1]):
            out[yi[p], j - j0] += yd[p]


# ----------------------------------------------------------------- float32 Gaussian blocks

_LN2_HI32 = np.float32(0.693145751953125)  # ln 2 with trailing zero bits (float32)
_LN2_LO32 = np.float32(1.428606765330187e-06)
_INV_LN2_32 = np.float32(1.4426950408889634)
_UNDERFLOW32 = np.float32(-87.0)  # exp(x) < 1.7e-38 below: returned as 0


_SHIFT32 = np.float32(12582912.0)  # 1.5 * 2**23
_SHIFT32_BITS = 0x4B400000


@njit(nogil=True, fastmath=_FASTMATH, cache=True, inline="always")
def _exp_nonpositive_inplace32(a):
    """Float32 version of :func:`_exp_nonpositive_inplace` (degree-7 polynomial, relative error < 2e-7)."""
    bits = a.view(np.int32)
    zero = np.float32(0.0)
    shift_bits = np.int32(_SHIFT32_BITS)
    for j in range(a.shape[0]):
        x = min(a[j], zero)
        under = x < _UNDERFLOW32
        x = zero if under else x
        t = x * _INV_LN2_32 + _SHIFT32
        k32 = t - _SHIFT32
        r = (x - k32 * _LN2_HI32) - k32 * _LN2_LO32
        p = np.float32(1.0) + r * (np.float32(1.0) + r * (np.float32(0.5) + r * (np.float32(1.0 / 6) + r * (
            np.float32(1.0 / 24) + r * (np.float32(1.0 / 120) + r * (
                np.float32(1.0 / 720) + r * np.float32(1.0 / 5040)))))))
        a[j] = t
        k = bits[j] - shift_bits
        a[j] = zero if under else p
        bits[j] = bits[j] + (k << 23)


def _exp_row(a):  # pragma: no cover - replaced in compiled code by the overload below
    """``exp`` of a non-positive row in place, in the precision of ``a``."""
    raise NotImplementedError


@overload(_exp_row, inline="always", fastmath=_FASTMATH)
def _exp_row_impl(a):
    """Pick the float32 or float64 exponential from the row's type at compile time."""
    if a.dtype == types.float32:
        return lambda a: _exp_nonpositive_inplace32(a)
    return lambda a: _exp_nonpositive_inplace(a)


# Tanimoto from the cross products: the intersection-over-union loop of minmax_from_min
tanimoto_from_cross = minmax_from_min

# the float32 Gaussian blocks: the same compiled loops, specialised for float32 arrays
sqeuclidean_exp_direct32 = sqeuclidean_exp_direct
sqeuclidean_exp_from_cross32 = sqeuclidean_exp_from_cross
