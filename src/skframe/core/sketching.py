"""The generic sketching machinery: ``R = S_mix @ S_sub`` and the products the models need.

Every sketch in skframe is represented by a :class:`SketchMatrix`: the indices
of the s' columns of R that are not all zero (``S_sub``, a sub-sampling) and the
m x s' mixing matrix ``S_mix`` (dense or sparse). Then (the *decomposition trick*
of El Ahmad et al., Fast Kernel Methods for Generic Lipschitz Losses via
p-Sparsified Sketches, TMLR 2023)::

    K R^T   = K[:, idx] @ S_mix^T
    R K R^T = S_mix @ K[idx, idx] @ S_mix^T = S_mix @ (K R^T)[idx]

so the kernel is only ever evaluated against the s' sampled points, in row
chunks of bounded memory (``ComputeOptions.block_bytes``), and ``R K R^T`` needs
no extra kernel evaluation.

Each chunk of rows is one product of the block engine (:class:`skframe.core.block_engine.BlockEngine`:
the kernel block and ``block @ S_mix^T``), its loops those of ``options.engine`` (compiled numba gather in
:mod:`skframe.core._sketching_numba`, or SciPy's sparse product): a fit passes its execution plan's, and
:func:`sketched_gram_products` otherwise chooses once from the size of all its blocks, ``n x s'``
(:func:`skframe.core.engine.planned`).
Precision: ``ComputeOptions(dtype="float32")`` computes kernel blocks and ``K R^T`` in float32
and accumulates ``R K R^T`` in float64. The feature map built from these products is in :mod:`skframe.core.feature_map`.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from skframe.contract.collections import chunks, is_collection, n_items, take
from skframe.contract.protocols import kernel_prepare
from skframe.core.block_engine import BlockEngine, rows_within_budget, times_mix
from skframe.core.engine import planned
from skframe.core.sketch_matrix import SketchMatrix, diagonal_of_mix, from_entries
from skframe.exceptions import InvalidParameterError, PluginError
from skframe.options import DEFAULT_OPTIONS, compute_dtype

__all__ = [
    "SketchMatrix",
    "from_entries",
    "default_chunk_rows",
    "resolve_options",
    "compute_dtype",
    "sketched_gram_products",
    "kernel_times_mix",
    "rows_within_budget",
    "draw_sketch",
    "diagonal_of_mix",
]

#: Budget for one dense temporary block in float64 entries (``DEFAULT_OPTIONS.block_bytes / 8``);
#: kept for callers of :func:`default_chunk_rows`. New code passes a :class:`~skframe.options.ComputeOptions`.
BLOCK_ENTRIES = DEFAULT_OPTIONS.block_bytes // 8


def default_chunk_rows(n_cols, options=None):
    """Rows per chunk so that a (rows x n_cols) block stays within ``options.block_bytes`` (default 64 MB)."""
    options = options or DEFAULT_OPTIONS
    return options.rows_per_block(n_cols, compute_dtype(options).itemsize)


def resolve_options(options=None, chunk_rows=None):
    """``options`` (default :data:`skframe.options.DEFAULT_OPTIONS`) with ``chunk_rows`` applied when given."""
    options = options or DEFAULT_OPTIONS
    if chunk_rows:
        options = options.replace(chunk_rows=int(chunk_rows))
    return options


def _rows(X, start, stop):
    """Rows ``start:stop`` of an array, sparse matrix or input collection."""
    if is_collection(X):
        return X.take(np.arange(start, stop))
    return X[start:stop]


def _engine(options, X_rows, X_sub):
    """The block engine of one chunk of ``K R^T``, its loops the plan's (else the one rule's for this chunk)."""
    return BlockEngine(planned(options, n_items(X_rows) * n_items(X_sub)).engine)


def kernel_times_mix(kernel, X_rows, X_sub, R, options=None, out=None):
    """One chunk of ``K R^T``: ``k(X_rows, X_sub) @ S_mix^T`` of shape (len(X_rows), m).

    This is the unit of work of :func:`sketched_gram_products`; a streaming or
    distributed engine calls it on each block of rows it holds.

    Parameters
    ----------
    kernel : kernel object
        Evaluated once on ``(X_rows, X_sub)``; prepare it on the training data first
        (:func:`skframe.contract.protocols.kernel_prepare`), e.g. for ``gamma="scale"``.
    X_rows : ndarray, sparse matrix or InputCollection
        The rows of this chunk.
    X_sub : same type as X_rows
        The sampled points ``take(X, R.indices)``.
    R : SketchMatrix
    options : ComputeOptions, optional
        ``options.dtype`` sets the precision of the block and of the result, ``options.engine``
        the engine (None: chosen from the size of this chunk).
    out : ndarray of shape (len(X_rows), m), optional
        Written in place when given.

    Returns
    -------
    ndarray of shape (len(X_rows), m)
    """
    return _engine(options, X_rows, X_sub).kernel_times_mix(kernel, X_rows, X_sub, _mix_for(R.mix, options),
                                                            diagonal_of_mix(R.mix), compute_dtype(options), out)


def _mix_for(mix, options):
    """A dense mix in the compute precision (sparse mixes are gathered in float64)."""
    dtype = compute_dtype(options)
    if sp.issparse(mix) or mix.dtype == dtype:
        return mix
    return mix.astype(dtype)


def _chunked_kernel_times_mix(kernel, X_rows, X_sub, R, options, progress):
    """``k(X_rows, X_sub) @ S_mix^T`` (rows x m), chunked over rows within ``options.block_bytes``.

    The chunk size comes from :func:`rows_within_budget` (the kernel's ``block_bytes``).
    """
    rows = n_items(X_rows)
    dtype = compute_dtype(options)
    diag = diagonal_of_mix(R.mix)
    if diag is not None and options.chunk_rows is None and dtype == np.float64:
        # sub-sampling: S_mix is diagonal, so the block is the (rows x m) output itself, scaled
        # column-wise; one kernel call (the kernel tiles internally), no temporary copy
        KR = _engine(options, X_rows, X_sub).kernel_times_mix(kernel, X_rows, X_sub, None, diag, dtype, None)
        if progress is not None:
            progress(rows)
        return KR
    mix = _mix_for(R.mix, options)
    KR = np.empty((rows, R.m), dtype=dtype)
    for start, stop in chunks(rows, rows_within_budget(kernel, R.s_prime, options)):
        # a sparse mix is applied by a compiled row-wise gather writing straight into KR's rows
        chunk = _rows(X_rows, start, stop)
        _engine(options, chunk, X_sub).kernel_times_mix(kernel, chunk, X_sub, mix, diag, dtype, KR[start:stop])
        if progress is not None:
            progress(stop - start)
    return KR


def sketched_gram_products(kernel, X, R, *, options=None, chunk_rows=None, progress=None, distinct=None,
                           prepared=False):
    """Compute ``K R^T`` (n x m) and ``R K R^T`` (m x m) evaluating the kernel only on sampled columns.

    Parameters
    ----------
    kernel : kernel object
        ``kernel(A, B)`` returns the Gram block; it is prepared on ``X`` first
        (:func:`skframe.contract.protocols.kernel_prepare`, e.g. ``gamma="scale"``).
    X : ndarray, sparse matrix or InputCollection with n items
    R : SketchMatrix
    options : ComputeOptions, optional
        Block budget, chunk rows, precision and engine. With ``dtype="float32"`` the kernel
        blocks and ``K R^T`` are float32 while ``R K R^T`` accumulates in float64. Without
        ``options.engine`` the engine is chosen once from ``n x s'`` (small problems: plain NumPy).
    chunk_rows : int, optional
        Rows of X per kernel block; overrides ``options.chunk_rows``.
    progress : callable, optional
        Called with the number of rows done after each chunk.
    distinct : tuple (first, inverse), optional
        When X has repeated rows (e.g. multi-label outputs): ``X[first]`` are the distinct
        rows and ``X[i] == X[first][inverse[i]]`` (see
        :func:`skframe.core.output_basis.unique_rows`). The kernel is then evaluated on the
        distinct rows only and ``K R^T`` is expanded from them.
    prepared : bool, default=False
        The kernel is already bound to ``X`` (a fit binds it once); else it is prepared here.

    Returns
    -------
    KR : ndarray of shape (n, m), in the compute precision
    RKR : ndarray of shape (m, m), float64, symmetric
    """
    n = n_items(X)
    options = planned(resolve_options(options, chunk_rows), n * R.s_prime)
    if R.n != n:
        raise InvalidParameterError(f"sketch was drawn for n={R.n} points but X has {n} rows")
    kernel = kernel if prepared else kernel_prepare(kernel, X)
    X_sub = take(X, R.indices)
    if distinct is not None and len(distinct[0]) < n:
        first, inverse = (np.asarray(a, dtype=np.int64) for a in distinct)
        KR = _chunked_kernel_times_mix(kernel, take(X, first), X_sub, R, options, None)[inverse]
        if progress is not None:
            progress(n)
    else:
        KR = _chunked_kernel_times_mix(kernel, X, X_sub, R, options, progress)
    diag = diagonal_of_mix(R.mix)
    if diag is not None:
        RKR = KR[R.indices].astype(np.float64) * diag[:, None]
    else:
        # R K R^T = S_mix @ (K R^T)[idx] = ((K R^T)[idx]^T @ S_mix^T)^T, in float64; symmetric up to rounding
        KRt = np.ascontiguousarray(KR[R.indices].T, dtype=np.float64)
        RKR = times_mix(KRt, R.mix, options=options)
    RKR += RKR.T
    RKR *= 0.5
    return KR, RKR


def draw_sketch(sketch, n, rng, *, X=None, kernel=None):
    """Call ``sketch.draw`` and check that a :class:`SketchMatrix` of the right size comes back."""
    R = sketch.draw(n, rng, X=X, kernel=kernel)
    if not isinstance(R, SketchMatrix):
        raise PluginError(
            f"sketch {type(sketch).__name__}.draw returned {type(R).__name__}; it must return "
            "skframe.core.sketching.SketchMatrix"
        )
    if R.n != n:
        raise PluginError(f"sketch {type(sketch).__name__} drew a sketch for n={R.n}, expected n={n}")
    return R
