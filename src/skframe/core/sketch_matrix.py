"""The drawn sketch ``R = S_mix @ S_sub`` as a small object: sampled indices plus a mixing matrix.

Re-exported by :mod:`skframe.core.sketching`, where the products with the kernel live.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from skframe.exceptions import PluginError

__all__ = ["SketchMatrix", "from_entries", "diagonal_of_mix"]


@dataclass
class SketchMatrix:
    """A drawn sketch ``R = S_mix @ S_sub`` of shape (m, n).

    Parameters
    ----------
    n : int
        Number of columns of R (training points).
    indices : ndarray of int, shape (s',)
        Columns of R that are not all zero, i.e. the points the kernel is evaluated at.
    mix : ndarray or scipy.sparse matrix, shape (m, s')
        The mixing matrix ``S_mix``.
    info : dict
        Description of the draw (name, parameters), JSON-serialisable.
    """

    n: int
    indices: np.ndarray
    mix: object
    info: dict = field(default_factory=dict)

    def __post_init__(self):
        self.indices = np.asarray(self.indices, dtype=np.int64)
        if self.indices.ndim != 1:
            raise PluginError("SketchMatrix.indices must be 1-D")
        if sp.issparse(self.mix):
            self.mix = sp.csr_matrix(self.mix, dtype=np.float64)
        else:
            self.mix = np.asarray(self.mix, dtype=np.float64)
            if self.mix.ndim != 2:
                raise PluginError("SketchMatrix.mix must be 2-D")
        if self.mix.shape[1] != self.indices.shape[0]:
            raise PluginError(
                f"sketch mix has {self.mix.shape[1]} columns but {self.indices.shape[0]} indices; they must match"
            )
        if self.indices.size and (self.indices.min() < 0 or self.indices.max() >= self.n):
            raise PluginError(f"sketch indices must lie in [0, {self.n})")

    @property
    def m(self):
        """Number of rows of R (the sketch size)."""
        return int(self.mix.shape[0])

    @property
    def s_prime(self):
        """Number of sampled (non-null) columns s'."""
        return int(self.indices.shape[0])

    @property
    def nnz(self):
        """Number of non-zero entries of R."""
        if sp.issparse(self.mix):
            return int(self.mix.nnz)
        return int(np.count_nonzero(self.mix))

    @property
    def shape(self):
        return (self.m, self.n)

    def toarray(self):
        """The dense m x n matrix R (for tests and small problems only)."""
        R = np.zeros((self.m, self.n))
        mix = self.mix.toarray() if sp.issparse(self.mix) else self.mix
        np.add.at(R.T, self.indices, mix.T)
        return R

    def apply(self, V):
        """``R @ V`` for V of shape (n, ...) without forming R."""
        V = np.asarray(V)
        return self.mix @ V[self.indices]

    def apply_transpose(self, G):
        """``R.T @ G`` for G of shape (m, ...), returned dense of shape (n, ...)."""
        G = np.asarray(G, dtype=np.float64)
        small = self.mix.T @ G
        out = np.zeros((self.n,) + G.shape[1:])
        np.add.at(out, self.indices, small)
        return out

    def summary(self):
        """JSON-serialisable description: m, n, s', nnz and the draw info."""
        out = dict(self.info)
        out.update({"m": self.m, "n": self.n, "s_prime": self.s_prime, "nnz": self.nnz})
        return out


def from_entries(n, m, rows, cols, values, info=None):
    """Build a :class:`SketchMatrix` from the non-zero entries ``R[rows, cols] = values``.

    Repeated (row, col) pairs are summed; entries that cancel to zero are dropped, and
    the sampled columns are the distinct ``cols`` that keep a non-zero entry.
    """
    cols = np.asarray(cols, dtype=np.int64)
    indices, inverse = np.unique(cols, return_inverse=True)
    mix = sp.coo_matrix((np.asarray(values, dtype=np.float64), (np.asarray(rows, dtype=np.int64), inverse)),
                        shape=(m, indices.shape[0])).tocsr()
    mix.sum_duplicates()
    mix.eliminate_zeros()  # e.g. +1 and -1 summed at the same (row, col) by the Accumulation sketch
    keep = np.bincount(mix.indices, minlength=indices.shape[0]) > 0
    if not keep.all():
        indices, mix = indices[keep], mix[:, keep]
    return SketchMatrix(n=n, indices=indices, mix=mix, info=dict(info or {}))


def diagonal_of_mix(mix):
    """The diagonal of ``mix`` when it is a square diagonal matrix (sub-sampling sketches), else None."""
    if not sp.issparse(mix) or mix.shape[0] != mix.shape[1]:
        return None
    m = mix.shape[0]
    if mix.nnz != m or not np.array_equal(mix.indptr, np.arange(m + 1)):
        return None
    if not np.array_equal(mix.indices, np.arange(m)):
        return None
    return np.asarray(mix.data, dtype=np.float64)
