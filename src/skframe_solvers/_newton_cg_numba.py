"""The numba engine of :mod:`skframe_solvers.newton_cg`: compiled passes over the rows of kept features.

Every loop reads each row ``z_i`` of ``Z`` (float32 or float64) once and accumulates in float64; the rows are
split in one contiguous range per thread, each thread with its own accumulator, summed at the end.

* :func:`hessian_rows` — the Hessian-vector product's data term in one pass (:data:`GROUP` rows at a time):
  ``d_i = A^T z_i`` (the direction's predictions, kept), ``e_i = H_i d_i`` (diagonal curvature ``c_i ⊙ d_i``, or
  the softmax's ``w_i (p_i ⊙ d_i - p_i <p_i, d_i>)``), ``g_i = C e_i``, ``out += g_i z_i^T``. BLAS would read Z
  twice (``Z A`` then ``Z^T E``) and runs narrow products slower: on 2 * 10^5 float32 rows of 1 000 features and
  10 classes, 0.19 s per product in blocks of float64 rows through BLAS against 0.08 s here, where the loads of
  A's entries and of the accumulator, not the rows' 8 GB/s, bound the pass.
* :func:`rows_times`, :func:`rows_back` — ``Z A`` and ``Z^T B`` of float32 rows in float64 without a float64
  copy of them (the gradient and prediction passes of :class:`skframe_solvers._problem.FeatureMapProblem`).
"""

import numpy as np
from numba import get_num_threads, njit, prange


def _parts(n):
    return max(1, min(int(get_num_threads()), int(n)))


@njit(cache=True, inline="always")
def _span(t, n, parts):
    """The rows ``[lo, hi)`` of thread ``t`` of ``parts``: one contiguous range each."""
    step = (n + parts - 1) // parts
    return t * step, min(n, (t + 1) * step)


#: rows of one group of the Hessian pass: each load of A's entries serves them all, and each read of the
#: accumulator adds them all (8 rows: 0.079-0.088 s against 0.103 s for 4 on 2 * 10^5 float32 rows of 1 000
#: features, 10 classes; the pass is bound by those loads, not by reading the rows from memory)
GROUP = 8


@njit(cache=True, fastmath=True)
def _directions(Z, At, i, g, dv):
    """``dv[q] = A^T z_{i+q}`` for the ``g <= 8`` rows from i: eight rows share each load of A's entries."""
    r = Z.shape[1]
    for a in range(At.shape[0]):
        if g == 8:
            s0 = 0.0
            s1 = 0.0
            s2 = 0.0
            s3 = 0.0
            s4 = 0.0
            s5 = 0.0
            s6 = 0.0
            s7 = 0.0
            for j in range(r):
                x = At[a, j]
                s0 += Z[i, j] * x
                s1 += Z[i + 1, j] * x
                s2 += Z[i + 2, j] * x
                s3 += Z[i + 3, j] * x
                s4 += Z[i + 4, j] * x
                s5 += Z[i + 5, j] * x
                s6 += Z[i + 6, j] * x
                s7 += Z[i + 7, j] * x
            dv[0, a] = s0
            dv[1, a] = s1
            dv[2, a] = s2
            dv[3, a] = s3
            dv[4, a] = s4
            dv[5, a] = s5
            dv[6, a] = s6
            dv[7, a] = s7
        else:
            for q in range(g):
                s = 0.0
                for j in range(r):
                    s += Z[i + q, j] * At[a, j]
                dv[q, a] = s


@njit(cache=True, fastmath=True)
def _accumulate(Z, i, g, gv, acc):
    """``acc[b] += sum_q gv[q, b] z_{i+q}`` for the ``g <= 8`` rows from i (one read of acc for eight rows)."""
    r = Z.shape[1]
    for b in range(acc.shape[0]):
        if g == 8:
            e0 = gv[0, b]
            e1 = gv[1, b]
            e2 = gv[2, b]
            e3 = gv[3, b]
            e4 = gv[4, b]
            e5 = gv[5, b]
            e6 = gv[6, b]
            e7 = gv[7, b]
            for j in range(r):
                acc[b, j] += (e0 * Z[i, j] + e1 * Z[i + 1, j] + e2 * Z[i + 2, j] + e3 * Z[i + 3, j]
                              + e4 * Z[i + 4, j] + e5 * Z[i + 5, j] + e6 * Z[i + 6, j] + e7 * Z[i + 7, j])
        else:
            for q in range(g):
                e = gv[q, b]
                if e != 0.0:
                    for j in range(r):
                        acc[b, j] += e * Z[i + q, j]


@njit(parallel=True, cache=True, fastmath=True)
def _hessian_rows(Z, At, C, identity, curv, w, softmax, D, partial):
    n = Z.shape[0]
    d = At.shape[0]
    k = C.shape[0]
    parts = partial.shape[0]
    for t in prange(parts):
        acc = partial[t]
        dv = np.empty((GROUP, d))
        ev = np.empty(d)
        gv = np.empty((GROUP, k))
        i, hi = _span(t, n, parts)
        while i < hi:
            g = min(GROUP, hi - i)
            _directions(Z, At, i, g, dv)
            for q in range(g):
                row = i + q
                for a in range(d):
                    D[row, a] = dv[q, a]
                if softmax:
                    pd = 0.0
                    for a in range(d):
                        pd += curv[row, a] * dv[q, a]
                    for a in range(d):
                        ev[a] = w[row] * curv[row, a] * (dv[q, a] - pd)
                else:
                    for a in range(d):
                        ev[a] = curv[row, a] * dv[q, a]
                if identity:
                    for b in range(k):
                        gv[q, b] = ev[b]
                else:
                    for b in range(k):
                        s = 0.0
                        for a in range(d):
                            s += C[b, a] * ev[a]
                        gv[q, b] = s
            _accumulate(Z, i, g, gv, acc)
            i += g


def hessian_rows(Z, A, C, curvature, weights=None, softmax=False, identity=True, out=None):
    """``(Z^T E C^T, D)`` with ``D = Z A`` and ``E`` the curvature applied to D row by row (see module).

    Parameters
    ----------
    Z : ndarray (n, r), float32 or float64, C-contiguous
    A : ndarray (r, d), the direction in prediction space (``U C``)
    C : ndarray (k, d)
    curvature : ndarray (n, d)
        Diagonal curvature (weights folded in), or the softmax probabilities when ``softmax``.
    weights : ndarray (n,), optional
        Row weights of the softmax form (ignored otherwise).
    identity : bool
        C is the identity (``g_i = e_i``).
    out : ndarray (n, d), optional
        Receives D (a buffer reused from product to product: a fresh n x d array is written to its pages
        the first time, 10-20% of a product at 10^5-10^6 rows).
    """
    n, r = Z.shape
    d, k = A.shape[1], C.shape[0]
    D = out if out is not None and out.shape == (n, d) and out.dtype == np.float64 else np.empty((n, d))
    parts = _parts(n)
    partial = np.zeros((parts, k, r))
    w = np.ones(n) if weights is None else np.ascontiguousarray(weights, dtype=np.float64).ravel()
    _hessian_rows(Z, np.ascontiguousarray(A.T, dtype=np.float64), np.ascontiguousarray(C, dtype=np.float64),
                  bool(identity), np.ascontiguousarray(curvature, dtype=np.float64), w, bool(softmax), D, partial)
    return partial.sum(axis=0).T, D


@njit(parallel=True, cache=True, fastmath=True)
def _rows_times(Z, At, out, parts):
    n = Z.shape[0]
    for t in prange(parts):
        dv = np.empty((GROUP, At.shape[0]))
        i, hi = _span(t, n, parts)
        while i < hi:
            g = min(GROUP, hi - i)
            _directions(Z, At, i, g, dv)
            for q in range(g):
                for a in range(At.shape[0]):
                    out[i + q, a] = dv[q, a]
            i += g


@njit(parallel=True, cache=True, fastmath=True)
def _rows_back(Z, B, partial):
    n = Z.shape[0]
    parts = partial.shape[0]
    for t in prange(parts):
        acc = partial[t]
        gv = np.empty((GROUP, B.shape[1]))
        i, hi = _span(t, n, parts)
        while i < hi:
            g = min(GROUP, hi - i)
            for q in range(g):
                for b in range(B.shape[1]):
                    gv[q, b] = B[i + q, b]
            _accumulate(Z, i, g, gv, acc)
            i += g


def rows_times(Z, A):
    """``Z A`` in float64 (n x d) for rows ``Z`` (n x r, float32 or float64, C-contiguous): one read of each row,
    float32 rows multiplied in float64 without a float64 copy of them."""
    out = np.empty((Z.shape[0], A.shape[1]))
    _rows_times(Z, np.ascontiguousarray(np.asarray(A, dtype=np.float64).T), out, _parts(Z.shape[0]))
    return out


def rows_back(Z, B):
    """``Z^T B`` in float64 (r x d) for rows ``Z`` (n x r, float32 or float64, C-contiguous) and ``B`` (n x d)."""
    partial = np.zeros((_parts(Z.shape[0]), B.shape[1], Z.shape[1]))
    _rows_back(Z, np.ascontiguousarray(B, dtype=np.float64), partial)
    return partial.sum(axis=0).T
