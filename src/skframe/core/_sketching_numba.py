"""Compiled (numba) engine of :mod:`skframe.core.sketching`; selected by :mod:`skframe.core.engine`.

Each function has the same signature as the plain formula it replaces in
:mod:`skframe.core.sketching`, which the tests compare it with.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from skframe.core.sparsetools import csr_arrays

__all__ = ["dense_times_csr_t"]


@njit(parallel=True, cache=True)
def _dense_times_csr_t(block, mp, mi, md, out):
    """``out = block @ mix.T`` for a dense C-contiguous block and a CSR ``mix = (mp, mi, md)``.

    Row by row, gathering from ``block[i]``: the cost is ``rows * nnz(mix)``, no transposed
    copy. The sums accumulate in float64 whatever the block's precision.
    """
    for i in prange(block.shape[0]):
        b = block[i]
        o = out[i]
        for r in range(mp.shape[0] - 1):
            s = 0.0
            for q in range(mp[r], mp[r + 1]):
                s += md[q] * b[mi[q]]
            o[r] = s


def dense_times_csr_t(block, mix, out):
    """Write ``block @ mix.T`` into ``out`` (C-contiguous, rows x m) and return it.

    Parameters
    ----------
    block : ndarray of shape (rows, s'), float32 or float64
    mix : scipy.sparse matrix of shape (m, s')
    out : ndarray of shape (rows, m), C-contiguous, same dtype as ``block``
    """
    block = np.ascontiguousarray(block)
    _dense_times_csr_t(block, *csr_arrays(mix), out)
    return out
