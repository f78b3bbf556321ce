"""The generic sketching machinery: ``R = S_mix @ S_sub`` and the products the models need.

Every sketch in skframe is represented by a :class:`SketchMatrix`: the indices
of the s' columns of R that are not all zero (``S_sub``, a sub-sampling) and the
m x s' mixing matrix ``S_mix`` (dense or sparse). Then (seed 002 eq. 14, the
*decomposition trick*)::

    K R^T   = K[:, idx] @ S_mix^T
    R K R^T = S_mix @ K[idx, idx] @ S_mix^T = S_mix @ (K R^T)[idx]

so the kernel is only ever evaluated against the s' sampled points, in row
chunks of bounded memory, and ``R K R^T`` needs no extra kernel evaluation.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from numba import njit, prange

from .exceptions import InvalidParameterError, PluginError
from .linalg import default_rtol, eigh_truncated
from .protocols import kernel_block

__all__ = [
    "SketchMatrix",
    "from_entries",
    "default_chunk_rows",
    "sketched_gram_products",
    "kernel_times",
    "SketchedFeatureMap",
    "build_feature_map",
    "draw_sketch",
    "diagonal_of_mix",
]

# Budget for one dense temporary block (float64 entries): 8M entries = 64 MB.
BLOCK_ENTRIES = 8_000_000


def default_chunk_rows(n_cols):
    """Rows per chunk so that a (rows x n_cols) float64 block stays within the memory budget."""
    return int(max(1, BLOCK_ENTRIES // max(int(n_cols), 1)))


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


@njit(parallel=True, cache=True)
def _dense_times_csr_t(block, mp, mi, md, out):
    """``out = block @ mix.T`` for a dense C-contiguous block and a CSR ``mix = (mp, mi, md)``.

    Row by row, gathering from ``block[i]``: the cost is ``rows * nnz(mix)``, no transposed copy.
    """
    for i in prange(block.shape[0]):
        b = block[i]
        o = out[i]
        for r in range(mp.shape[0] - 1):
            s = 0.0
            for q in range(mp[r], mp[r + 1]):
                s += md[q] * b[mi[q]]
            o[r] = s


def _csr_parts(mix):
    return (np.asarray(mix.indptr, dtype=np.int64), np.asarray(mix.indices, dtype=np.int64),
            np.ascontiguousarray(mix.data, dtype=np.float64))


def _times_mixT(block, mix, out=None):
    """``block @ mix.T`` for a dense block and a dense or sparse mix (written into ``out`` when given)."""
    if sp.issparse(mix):
        block = np.ascontiguousarray(block, dtype=np.float64)
        if out is None or not out.flags.c_contiguous:
            res = np.empty((block.shape[0], mix.shape[0]))
            _dense_times_csr_t(block, *_csr_parts(mix), res)
            if out is not None:
                out[...] = res
            return res
        _dense_times_csr_t(block, *_csr_parts(mix), out)
        return out
    if out is None:
        return block @ mix.T
    out[...] = block @ mix.T
    return out


def _take_rows(X, idx):
    return X[idx]


def diagonal_of_mix(mix):
    """The diagonal of ``mix`` when it is a square diagonal matrix (sub-sampling sketches), else None."""
    if not sp.issparse(mix) or mix.shape[0] != mix.shape[1]:
        return None
    m = mix.shape[0]
    if mix.nnz != m or not np.array_equal(mix.indptr, np.arange(m + 1)) or not np.array_equal(mix.indices, np.arange(m)):
        return None
    return np.asarray(mix.data, dtype=np.float64)


def _kernel_times_mixT(kernel, X_rows, X_sub, R, chunk_rows, progress):
    """``k(X_rows, X_sub) @ S_mix^T`` (rows x m), chunked over rows."""
    rows = X_rows.shape[0]
    diag = diagonal_of_mix(R.mix)
    if diag is not None and chunk_rows is None:
        # sub-sampling: S_mix is diagonal, so the block is the (rows x m) output itself, scaled
        # column-wise; one kernel call (the kernel tiles internally), no temporary copy
        KR = kernel_block(kernel, X_rows, X_sub)
        KR *= diag
        if progress is not None:
            progress(rows)
        return KR
    step = chunk_rows or default_chunk_rows(R.s_prime)
    KR = np.empty((rows, R.m))
    for start in range(0, rows, step):
        stop = min(rows, start + step)
        # a sparse mix is applied by a compiled row-wise gather writing straight into KR's rows
        _times_mixT(kernel_block(kernel, X_rows[start:stop], X_sub), R.mix, out=KR[start:stop])
        if progress is not None:
            progress(stop - start)
    return KR


def sketched_gram_products(kernel, X, R, *, chunk_rows=None, progress=None, distinct=None):
    """Compute ``K R^T`` (n x m) and ``R K R^T`` (m x m) evaluating the kernel only on sampled columns.

    Parameters
    ----------
    kernel : callable
        ``kernel(A, B)`` returns the Gram block.
    X : ndarray or sparse matrix of shape (n, d)
    R : SketchMatrix
    chunk_rows : int, optional
        Rows of X per kernel block; defaults to a 64 MB block budget.
    progress : callable, optional
        Called with the number of rows done after each chunk.
    distinct : tuple (first, inverse), optional
        When X has repeated rows (e.g. multi-label outputs): ``X[first]`` are the distinct
        rows and ``X[i] == X[first][inverse[i]]`` (see
        :func:`skframe.output_basis.unique_rows`). The kernel is then evaluated on the
        distinct rows only and ``K R^T`` is expanded from them.

    Returns
    -------
    KR : ndarray of shape (n, m)
    RKR : ndarray of shape (m, m), symmetric
    """
    n = X.shape[0]
    if R.n != n:
        raise InvalidParameterError(f"sketch was drawn for n={R.n} points but X has {n} rows")
    X_sub = _take_rows(X, R.indices)
    if distinct is not None and len(distinct[0]) < n:
        first, inverse = (np.asarray(a, dtype=np.int64) for a in distinct)
        KR = _kernel_times_mixT(kernel, _take_rows(X, first), X_sub, R, chunk_rows, None)[inverse]
        if progress is not None:
            progress(n)
    else:
        KR = _kernel_times_mixT(kernel, X, X_sub, R, chunk_rows, progress)
    diag = diagonal_of_mix(R.mix)
    if diag is not None:
        RKR = KR[R.indices] * diag[:, None]
    else:
        # R K R^T = S_mix @ (K R^T)[idx] = ((K R^T)[idx]^T @ S_mix^T)^T; symmetric up to rounding
        RKR = _times_mixT(np.ascontiguousarray(KR[R.indices].T), R.mix)
    RKR += RKR.T
    RKR *= 0.5
    return KR, RKR


def kernel_times(kernel, X, X_ref, W, *, chunk_rows=None):
    """``k(X, X_ref) @ W`` computed in row chunks (the prediction step of every sketched model)."""
    n = X.shape[0]
    W = np.asarray(W, dtype=np.float64)
    out = np.empty((n,) + W.shape[1:])
    step = chunk_rows or default_chunk_rows(X_ref.shape[0])
    for start in range(0, n, step):
        stop = min(n, start + step)
        out[start:stop] = kernel_block(kernel, X[start:stop], X_ref) @ W
    return out


class SketchedFeatureMap:
    """The feature map of seed 002 Prop. 1: ``z(x) = D_r^{-1/2} U_r^T R k_x``.

    With ``R K R^T = U D U^T`` (rank r after the relative tolerance), the sketched
    problem with any loss is linear in ``omega`` in R^r with penalty ``||omega||^2``.
    ``transform(X) = k(X, X_sub) @ proj`` with ``proj = S_mix^T U_r D_r^{-1/2}`` (s' x r).

    Attributes
    ----------
    X_sub : ndarray or sparse matrix of shape (s', d)
        The sampled training points.
    proj : ndarray of shape (s', r)
    eigenvalues : ndarray of shape (r,)
    """

    def __init__(self, kernel, X_sub, proj, eigenvalues):
        self.kernel = kernel
        self.X_sub = X_sub
        self.proj = proj
        self.eigenvalues = eigenvalues

    @property
    def rank(self):
        return int(self.proj.shape[1])

    def transform(self, X, chunk_rows=None):
        """Features ``z(x)`` of shape (len(X), r)."""
        return kernel_times(self.kernel, X, self.X_sub, self.proj, chunk_rows=chunk_rows)


def build_feature_map(kernel, X, R, *, rtol=None, chunk_rows=None, progress=None, distinct=None):
    """Draw-independent part of fitting: the feature map and the training features.

    ``rtol`` is the relative eigenvalue tolerance for ``R K R^T``; ``chunk_rows``,
    ``progress`` and ``distinct`` are passed to :func:`sketched_gram_products`.

    Returns
    -------
    fmap : SketchedFeatureMap
    Z : ndarray of shape (n, r)
        ``z(x_i)`` for the training points, equal to ``fmap.transform(X)``.
    KR : ndarray of shape (n, m)
        ``K R^T``, returned for callers that need it (e.g. SISOKR).
    """
    KR, RKR = sketched_gram_products(kernel, X, R, chunk_rows=chunk_rows, progress=progress, distinct=distinct)
    w, U = eigh_truncated(RKR, default_rtol(RKR.shape[0]) if rtol is None else rtol)
    if w.size == 0:
        raise InvalidParameterError(
            "the sketched Gram matrix R K R^T is zero; check the kernel parameters (e.g. a huge gamma) or the data"
        )
    UD = U / np.sqrt(w)
    Z = KR @ UD
    proj = np.asarray(R.mix.T @ UD)
    return SketchedFeatureMap(kernel, _take_rows(X, R.indices), proj, w), Z, KR


def draw_sketch(sketch, n, rng, *, X=None, kernel=None):
    """Call ``sketch.draw`` and check that a :class:`SketchMatrix` of the right size comes back."""
    R = sketch.draw(n, rng, X=X, kernel=kernel)
    if not isinstance(R, SketchMatrix):
        raise PluginError(
            f"sketch {type(sketch).__name__}.draw returned {type(R).__name__}; it must return skframe.sketching.SketchMatrix"
        )
    if R.n != n:
        raise PluginError(f"sketch {type(sketch).__name__} drew a sketch for n={R.n}, expected n={n}")
    return R
