"""Small helpers on SciPy CSR matrices shared by the core and the built-in plugins.

Compiled engines take a CSR matrix as its three arrays; :func:`csr_arrays` gives
them in the one layout every engine expects (int64 indices, contiguous values),
so no module converts them its own way.
"""

from __future__ import annotations

import numpy as np

__all__ = ["is_sparse", "csr_arrays"]


def is_sparse(X):
    """True for a SciPy sparse matrix or array (SciPy is not imported to tell)."""
    if not type(X).__module__.startswith("scipy.sparse"):
        return False
    import scipy.sparse as sp  # lazy: only a sparse input loads SciPy (every input is asked)

    return sp.issparse(X)


def csr_arrays(Z, dtype=np.float64):
    """``(indptr, indices, data)`` of a sparse matrix as int64, int64 and contiguous ``dtype`` arrays.

    Parameters
    ----------
    Z : scipy.sparse matrix or array
        Converted to CSR when it is in another format (no copy when it already is).
    dtype : numpy dtype, default float64
        Type of the returned values.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> p, i, d = csr_arrays(sp.csr_matrix([[0.0, 2.0], [3.0, 0.0]]))
    >>> p.tolist(), i.tolist(), d.tolist()
    ([0, 1, 2], [1, 0], [2.0, 3.0])
    """
    if Z.format != "csr":
        Z = Z.tocsr()
    return (np.asarray(Z.indptr, dtype=np.int64), np.asarray(Z.indices, dtype=np.int64),
            np.ascontiguousarray(Z.data, dtype=dtype))
