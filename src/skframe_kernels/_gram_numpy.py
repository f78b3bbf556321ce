"""Plain NumPy/SciPy engine of the Gram-block loops (used when numba is disabled or absent).

Same functions, signatures and in-place semantics as :mod:`skframe_kernels._gram_numba`:
each one fills or transforms a preallocated float64 block ``out``. The exponential
arguments are clamped at 0 as in the compiled engine.
"""

import numpy as np
import scipy.sparse as sp

from skframe.plugin.toolbox import run_row_ranges, threads_for

__all__ = [
    "sqeuclidean_exp_direct",
    "sqeuclidean_exp_from_cross",
    "l1_exp_direct",
    "l1_exp_from_overlap",
    "min_sum_direct",
    "minmax_from_min",
    "csr_overlap",
    "tanimoto_from_cross",
    "affine_exp",
    "csr_dense_cross",
    "csr_dense_sqeuclidean_exp",
    "dense_csr_cross",
    "csr_rows_to_dense_t",
]


def _exp_nonpositive(a, out):
    np.minimum(a, 0.0, out=out)
    np.exp(out, out=out)
    return out


#: Entries of ``out`` transformed together by the in-place formulas below (1 MB of float64:
#: the few passes over one tile stay in the cache).
_TILE_ENTRIES = 1 << 17


def _row_tiles(out):
    step = max(1, _TILE_ENTRIES // max(1, out.shape[1]))
    for i0 in range(0, out.shape[0], step):
        yield slice(i0, min(i0 + step, out.shape[0]))


def _sq_diff(a, b, tmp):
    np.subtract(a, b, out=tmp)
    np.square(tmp, out=tmp)


def _abs_diff(a, b, tmp):
    np.subtract(a, b, out=tmp)
    np.abs(tmp, out=tmp)


def _min(a, b, tmp):
    np.minimum(a, b, out=tmp)


def _feature_sums(X, Yt, out, op, scale=None):
    """``out[i, j] = scale * sum_k op(X[i, k], Yt[k, j])``, summed feature by feature over row tiles.

    Vectorised over a tile of ``out`` (no Python loop over rows); the features are added in
    the same order as in the compiled engine.
    """
    for rows in _row_tiles(out):
        acc = out[rows]
        acc[...] = 0.0
        tmp = np.empty_like(acc)
        Xr = X[rows]
        for k in range(X.shape[1]):
            op(Xr[:, k : k + 1], Yt[k], tmp)
            acc += tmp
        if scale is not None:
            acc *= scale
            _exp_nonpositive(acc, acc)


def _row_parallel(func, out):
    """Run ``func(rows)`` over row ranges of ``out`` on the shared thread pool when ``out`` is large.

    SciPy's distances and NumPy's ufuncs release the GIL; the size from which a block is split
    is :data:`skframe.core.threads.THREADED_ENTRIES`.
    """
    run_row_ranges(lambda a, b: func(slice(a, b)), out.shape[0], threads_for(out.size))


def _cdist_exp(X, Yt, metric, gamma, out):
    """``out = exp(-gamma * cdist(X, Yt.T, metric))`` through SciPy's compiled pairwise distances.

    One C pass over the pairs, differences summed directly (exactly 0 for equal points),
    about twice as fast as :func:`_feature_sums`, and split by rows over the cores for large
    blocks; float64 C-contiguous blocks only. Returns False when ``out`` does not qualify.
    """
    if not (out.dtype == np.float64 and X.dtype == np.float64 and out.flags.c_contiguous):
        return False
    from scipy.spatial.distance import cdist  # lazy: scipy.spatial takes 0.15 s to import; large dense blocks only

    Y = Yt.T

    def rows_of(rows):
        part = out[rows]
        cdist(X[rows], Y, metric, out=part)
        for tile in _row_tiles(part):
            t = part[tile]
            t *= -gamma  # distances are >= 0 and gamma > 0: no clamp needed before the exponential
            np.exp(t, out=t)

    _row_parallel(rows_of, out)
    return True


def sqeuclidean_exp_direct(X, Yt, gamma, out):
    """``out[i, j] = exp(-gamma * ||X[i] - Yt[:, j]||^2)``."""
    if not _cdist_exp(X, Yt, "sqeuclidean", gamma, out):
        _feature_sums(X, Yt, out, _sq_diff, scale=-gamma)


def sqeuclidean_exp_from_cross(out, xn, yn, gamma):
    """Turn ``out = X @ Y.T`` into ``exp(-gamma * max(xn_i + yn_j - 2 out_ij, 0))``.

    In place, tile by tile, without temporaries: ``out`` may be a large block.
    """
    gy = -gamma * np.asarray(yn, dtype=out.dtype)
    for rows in _row_tiles(out):
        t = out[rows]
        t *= 2.0 * gamma
        t += (-gamma * np.asarray(xn[rows], dtype=out.dtype))[:, None]
        t += gy
        np.minimum(t, 0.0, out=t)
        np.exp(t, out=t)


def l1_exp_direct(X, Yt, gamma, out):
    """``out[i, j] = exp(-gamma * ||X[i] - Yt[:, j]||_1)``."""
    if not _cdist_exp(X, Yt, "cityblock", gamma, out):
        _feature_sums(X, Yt, out, _abs_diff, scale=-gamma)


def l1_exp_from_overlap(out, ax, ay, gamma):
    """Turn ``out = sum_common |u| + |v| - |u - v|`` into ``exp(-gamma * ||x - y||_1)``."""
    d1 = np.maximum(ax[:, None] + ay[None, :] - out, 0.0)
    _exp_nonpositive(-gamma * d1, out)


def min_sum_direct(X, Yt, out):
    """``out[i, j] = sum_k min(X[i, k], Yt[k, j])``."""
    _feature_sums(X, Yt, out, _min)


def _ratio_or_one(num, den, out):
    with np.errstate(divide="ignore", invalid="ignore"):
        out[...] = np.where(den > 0.0, num / np.where(den > 0.0, den, 1.0), 1.0)


def minmax_from_min(out, sx, sy):
    """Turn ``out = sum min(x, y)`` into ``sum min / sum max``; 0/0 gives 1."""
    _ratio_or_one(out.copy(), sx[:, None] + sy[None, :] - out, out)


def tanimoto_from_cross(out, xn, yn):
    """Turn ``out = X @ Y.T`` into ``<x,y> / (||x||^2 + ||y||^2 - <x,y>)``; 0/0 gives 1."""
    _ratio_or_one(out.copy(), xn[:, None] + yn[None, :] - out, out)


def affine_exp(out, a, b):
    """``out = exp(min(a * out + b, 0))`` in place."""
    _exp_nonpositive(a * out + b, out)


def _csr(p, i, d, n_cols):
    return sp.csr_matrix((d, i, p), shape=(p.shape[0] - 1, n_cols))


def csr_overlap(xp, xi, xd, yp, yi, yd, mode, out):
    """Sum over the common non-zero columns of CSR rows: ``|u| + |v| - |u - v|`` (mode 0) or ``min(u, v)`` (mode 1)."""
    d = int(max(xi.max(initial=-1), yi.max(initial=-1))) + 1
    rows_of_y = np.repeat(np.arange(yp.shape[0] - 1), np.diff(yp))
    m = yp.shape[0] - 1
    for a in range(xp.shape[0] - 1):
        x = np.zeros(d)
        present = np.zeros(d, dtype=bool)
        x[xi[xp[a]:xp[a + 1]]] = xd[xp[a]:xp[a + 1]]
        present[xi[xp[a]:xp[a + 1]]] = True
        u, v = x[yi], yd
        terms = np.abs(u) + np.abs(v) - np.abs(u - v) if mode == 0 else np.minimum(u, v)
        out[a] = np.bincount(rows_of_y, weights=np.where(present[yi], terms, 0.0), minlength=m)


def csr_dense_cross(xp, xi, xd, Yt, out, j_off):
    """``out[:, j_off : j_off + m] = X @ Yt`` for CSR ``X`` and dense ``Yt`` (d, m)."""
    out[:, j_off : j_off + Yt.shape[1]] = _csr(xp, xi, xd, Yt.shape[0]) @ Yt


def csr_dense_sqeuclidean_exp(xp, xi, xd, Yt, xn, yn, gamma, out, j_off):
    """:func:`csr_dense_cross` followed by :func:`sqeuclidean_exp_from_cross` on the same columns."""
    block = np.asarray(_csr(xp, xi, xd, Yt.shape[0]) @ Yt)
    sqeuclidean_exp_from_cross(block, xn, yn, gamma)
    out[:, j_off : j_off + Yt.shape[1]] = block


def dense_csr_cross(X, yp, yi, yd, out):
    """``out = X @ Y.T`` for dense ``X`` and CSR ``Y``."""
    out[...] = np.asarray(_csr(yp, yi, yd, X.shape[1]) @ X.T).T


def csr_rows_to_dense_t(yp, yi, yd, j0, j1, out):
    """Add the CSR rows ``j0 <= j < j1`` into ``out`` of shape (d, j1 - j0), transposed."""
    for j in range(j0, j1):
        np.add.at(out[:, j - j0], yi[yp[j]:yp[j + 1]], yd[yp[j]:yp[j + 1]])


# float32 Gaussian blocks: the plain formulas above work in the precision of ``out``
sqeuclidean_exp_direct32 = sqeuclidean_exp_direct
sqeuclidean_exp_from_cross32 = sqeuclidean_exp_from_cross
__all__ += ["sqeuclidean_exp_direct32", "sqeuclidean_exp_from_cross32"]
