"""Low-level Gram-block operations shared by the built-in kernels (private).

Tuning constants, input validation, row norms, the cross product ``X @ Y.T`` for
every dense/sparse combination, and the Tanimoto block. The element-wise loops
run in the engine the caller passes (``loops``, from :func:`gram_loops`): the compiled
:mod:`skframe_kernels._gram_numba` or the plain formulas of :mod:`skframe_kernels._gram_numpy`
(same function names; small problems and ``SKFRAME_DISABLE_NUMBA=1``).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from skframe.plugin.api import InvalidInputError
from skframe.plugin.toolbox import as_float_array, csr_arrays, engine_module, select_engine
from skframe_kernels import _gram_numpy


def gram_engine(engine=None, work=None):
    """The engine name of the element-wise loops: ``engine`` when it is ``"numba"`` or ``"numpy"``, else the
    one :func:`skframe.core.engine.select_engine` chooses for ``work`` kernel entries."""
    return engine if engine in ("numpy", "numba") else select_engine(work=work)


def gram_loops(engine=None, work=None):
    """The module running the element-wise loops for an engine (see :func:`gram_engine`): ``_gram_numba``
    or ``_gram_numpy`` (same function names)."""
    return engine_module("skframe_kernels.gram", engine=gram_engine(engine, work)) or _gram_numpy


#: Upper bound on the number of entries of one temporary block (rows of ``X``
#: times ``len(Y)``) when a sparse product is evaluated chunk by chunk.
GRAM_CHUNK_ELEMENTS = 1 << 22

#: Dense inputs with at most this many features get their distances summed
#: directly in compiled code; above it the cross term goes through BLAS.
DIRECT_MAX_FEATURES = 32

#: Sparse ``X`` against sparse ``Y``: rows of ``Y`` are densified (transposed) in tiles of at
#: most this many entries (64 MB), and ``X @ Y.T`` is computed by a compiled CSR x dense
#: kernel (each non-zero of ``X`` is a contiguous axpy over the tile). ``X`` itself, the
#: large training matrix, is never densified.
DENSE_TILE_ELEMENTS = 1 << 23

#: Sparse ``Y`` sparser than this (non-zeros / entries) is not densified: the result is then
#: mostly zeros and scipy's sparse product, chunked by :data:`GRAM_CHUNK_ELEMENTS`, is cheaper.
DENSIFY_MIN_DENSITY = 0.002

#: A dense left operand with more than :data:`DIRECT_MAX_FEATURES` features and at most
#: this fraction of non-zero entries (e.g. label-indicator outputs) is converted to CSR:
#: the CSR x dense kernel then does ``nnz(X) * len(Y)`` multiply-adds instead of BLAS's
#: ``len(X) * n_features * len(Y)``.
SPARSIFY_MAX_DENSITY = 0.05

def _as_input(X, name):
    """Validate one data block: float64 C-contiguous writable ndarray or canonical CSR."""
    X = as_float_array(X, name)
    if sp.issparse(X):
        if not X.has_canonical_format:
            X = X.copy()
            X.sum_duplicates()  # also sorts the column indices
        return X
    if not (X.flags.c_contiguous and X.flags.writeable):
        X = np.array(X, dtype=np.float64, order="C")
    return X


def _sq_row_norms(X):
    """``||x_i||^2`` for every row of a dense or CSR matrix."""
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel()
    return np.einsum("ij,ij->i", X, X)


def _row_sums(X, absolute=False):
    """Row sums (of absolute values when ``absolute``) of a dense or CSR matrix."""
    if sp.issparse(X):
        Z = abs(X) if absolute else X
        return np.asarray(Z.sum(axis=1), dtype=np.float64).ravel()
    return (np.abs(X) if absolute else X).sum(axis=1)


def _row_chunks(n, m):
    """Row slices of ``X`` such that a block ``(rows, m)`` has at most ``GRAM_CHUNK_ELEMENTS`` entries."""
    step = max(1, int(GRAM_CHUNK_ELEMENTS) // max(1, m))
    for i0 in range(0, n, step):
        yield slice(i0, min(i0 + step, n))


def _densify_y(Y):
    """True when the sparse right operand is dense enough to go through dense tiles of ``Y.T``."""
    m, d = Y.shape
    return m * d > 0 and Y.nnz >= DENSIFY_MIN_DENSITY * m * d


def _dense_tiles(Y, loops):
    """Yield ``(j0, Yt)``: ``Yt`` is ``Y[j0 : j0 + w].T`` as a dense C-contiguous (d, w) array.

    A dense ``Y`` gives one tile (its transposed copy); a sparse one is scattered tile by
    tile, each of at most :data:`DENSE_TILE_ELEMENTS` entries.
    """
    m, d = Y.shape
    if not sp.issparse(Y):
        yield 0, _transpose_c(Y)
        return
    yp, yi, yd = csr_arrays(Y)
    step = max(1, int(DENSE_TILE_ELEMENTS) // max(1, d))
    for j0 in range(0, m, step):
        j1 = min(m, j0 + step)
        Yt = np.zeros((d, j1 - j0))
        loops.csr_rows_to_dense_t(yp, yi, yd, j0, j1, Yt)
        yield j0, Yt


def _maybe_csr(X):
    """``X`` as CSR when it is a dense array that is mostly zeros (see :data:`SPARSIFY_MAX_DENSITY`)."""
    if sp.issparse(X) or X.shape[1] <= DIRECT_MAX_FEATURES or X.size == 0:
        return X
    if np.count_nonzero(X) <= SPARSIFY_MAX_DENSITY * X.size:
        return sp.csr_matrix(X)
    return X


def _cross(X, Y, loops):
    """Dense ``X @ Y.T`` as a new C-contiguous float64 array, never densifying a sparse ``X``.

    Dense x dense: one BLAS call. Sparse ``X``: compiled CSR x dense kernel against dense
    tiles of ``Y.T`` (see :data:`DENSE_TILE_ELEMENTS`). Dense ``X`` with sparse ``Y``: a
    compiled kernel gathering from the rows of ``X``. Very sparse ``Y`` (below
    :data:`DENSIFY_MIN_DENSITY`): scipy's sparse product in row chunks.
    """
    n, m = X.shape[0], Y.shape[0]
    if not sp.issparse(Y):
        X = _maybe_csr(X)
    if not sp.issparse(X) and not sp.issparse(Y):
        return np.matmul(X, Y.T)  # one multithreaded BLAS call writing the result directly
    out = np.empty((n, m), dtype=np.float64)
    if not sp.issparse(X):
        loops.dense_csr_cross(X, *csr_arrays(Y), out)
        return out
    if not sp.issparse(Y) or _densify_y(Y):
        xp, xi, xd = csr_arrays(X)
        for j0, Yt in _dense_tiles(Y, loops):
            loops.csr_dense_cross(xp, xi, xd, Yt, out, j0)
        return out
    YT = Y.T.tocsr()
    for rows in _row_chunks(n, m):
        block = X[rows] @ YT
        out[rows] = block.toarray() if sp.issparse(block) else block
    return out


def _to_csr_pair(X, Y):
    """Both operands as canonical CSR with int64 indices (a dense operand is converted, not the sparse one)."""

    def conv(Z):
        Z = sp.csr_matrix(Z, dtype=np.float64)
        if not Z.has_canonical_format:
            Z = Z.copy()
            Z.sum_duplicates()
        return csr_arrays(Z)

    return conv(X), conv(Y)


def _transpose_c(Y):
    return np.ascontiguousarray(Y.T)


def _tanimoto_block(X, Y, symmetric, variant, loops):
    """Tanimoto similarities of every pair; see :class:`TanimotoKernel`."""
    if variant == "dot":
        out = _cross(X, Y, loops)
        xn = _sq_row_norms(X)
        yn = xn if symmetric else _sq_row_norms(Y)
        loops.tanimoto_from_cross(out, xn, yn)
    else:
        for Z, name in ((X, "X"), (Y, "Y")):
            zmin = (Z.data.min(initial=0.0) if sp.issparse(Z) else Z.min())
            if zmin < 0:
                raise InvalidInputError(
                    f"{name} has negative entries (min {zmin!r}) but the 'minmax' Tanimoto kernel needs "
                    "non-negative counts; use variant='dot' for real-valued vectors"
                )
        out = np.empty((X.shape[0], Y.shape[0]), dtype=np.float64)
        if not sp.issparse(X) and not sp.issparse(Y):
            loops.min_sum_direct(X, _transpose_c(Y), out)
        else:
            (xp, xi, xd), (yp, yi, yd) = _to_csr_pair(X, Y)
            loops.csr_overlap(xp, xi, xd, yp, yi, yd, 1, out)
        sx = _row_sums(X)
        sy = sx if symmetric else _row_sums(Y)
        loops.minmax_from_min(out, sx, sy)
    if symmetric:
        np.fill_diagonal(out, 1.0)
    return out
