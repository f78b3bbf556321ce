"""The numba engine of :mod:`skframe_solvers.newton_cg`: compiled passes over the rows of kept features.

Every loop reads each row ``z_i`` of ``Z`` (float32 or float64) once and accumulates in float64; the rows are
split in one contiguous range per thread, each thread with its own accumulator, summed at the end.

* :func:`hessian_rows` — the Hessian-vector product's data term in one pass: ``d_i = A^T z_i`` (the direction's
  predictions, kept), ``e_i = H_i d_i`` (diagonal curvature ``c_i ⊙ d_i``, or the softmax's
  ``w_i (p_i ⊙ d_i - p_i <p_i, d_i>)``), ``g_i = C e_i``, ``out += g_i z_i^T``. BLAS would read Z twice (``Z A``
  then ``Z^T E``), and the pass is bound by the memory traffic of Z, not by its flops.
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


@njit(cache=True, fastmath=True)
def _directions(Z, At, i, g, dv):
    """``dv[q] = A^T z_{i+q}`` for the ``g <= 4`` rows from i: four rows share each load of A's entries."""
    r = Z.shape[1]
    for a in range(At.shape[0]):
        if g == 4:
            s0 = 0.0
            s1 = 0.0
            s2 = 0.0
            s3 = 0.0
            for j in range(r):
                x = At[a, j]
                s0 += Z[i, j] * x
                s1 += Z[i + 1, j] * x
                s2 += Z[i + 2, j] * x
                s3 += Z[i + 3, j] * x
            dv[0, a] = s0
            dv[1, a] = s1
            dv[2, a] = s2
            dv[3, a] = s3
        else:
            for q in range(g):
                s = 0.0
                for j in range(r):
                    s += Z[i + q, j] * At[a, j]
                dv[q, a] = s


@njit(cache=True, fastmath=True)
def _accumulate(Z, i, g, gv, acc):
    """``acc[b] += sum_q gv[q, b] z_{i+q}`` for the ``g <= 4`` rows from i (one read of acc for four rows)."""
    r = Z.shape[1]
    for b in range(acc.shape[0]):
        if g == 4:
            e0 = gv[0, b]
            e1 = gv[1, b]
            e2 = gv[2, b]
            e3 = gv[3, b]
            for j in range(r):
                acc[b, j] += e0 * Z[i, j] + e1 * Z[i + 1, j] + e2 * Z[i + 2, j] + e3 * Z[i + 3, j]
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
        dv = np.empty((4, d))
        ev = np.empty(d)
        gv = np.empty((4, k))
        i, hi = _span(t, n, parts)
        while i < hi:
            g = min(4, hi - i)
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


def hessian_rows(Z, A, C, curvature, weights=None, softmax=False, identity=True):
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
    """
    n, r = Z.shape
    d, k = A.shape[1], C.shape[0]
    D = np.empty((n, d))
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
        dv = np.empty((4, At.shape[0]))
        i, hi = _span(t, n, parts)
        while i < hi:
            g = min(4, hi - i)
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
        gv = np.empty((4, B.shape[1]))
        i, hi = _span(t, n, parts)
        while i < hi:
            g = min(4, hi - i)
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
