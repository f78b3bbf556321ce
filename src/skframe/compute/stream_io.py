"""Reading rows in chunks and predicting chunk by chunk (arrays, memory maps, chunk iterables)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from skframe.compute.engines import get_engine
from skframe.compute.memory import plan_stream
from skframe.contract.collections import chunks
from skframe.core.engine import planned
from skframe.exceptions import InvalidInputError
from skframe.options import compute_dtype

__all__ = ["iter_rows", "count_rows", "gather_rows", "iter_predict", "predict_chunks"]


def _is_sliceable(X):
    return hasattr(X, "shape") and hasattr(X, "__getitem__") and len(getattr(X, "shape", ())) >= 1


def iter_rows(X, Y=None, chunk_rows=None):
    """Yield ``(start, X_chunk, Y_chunk)`` from arrays, memory maps or an iterable of chunks.

    ``X`` is an array, ``np.memmap`` or sparse matrix (sliced by ``chunk_rows``), a
    callable returning a fresh iterable (re-readable sources such as chunked file
    readers), or an iterable whose items are X chunks (``Y`` then an array sliced
    alongside) or ``(X_chunk, Y_chunk)`` pairs (``Y`` None). ``Y`` may be None when
    only X is read (prediction).
    """
    if callable(X) and not _is_sliceable(X):
        X = X()
    if _is_sliceable(X):
        n = X.shape[0]
        if Y is not None and Y.shape[0] != n:
            raise InvalidInputError(f"X has {n} rows but y has {Y.shape[0]}; they must have the same length")
        for start, stop in chunks(n, chunk_rows or n or 1):
            yield start, X[start:stop], (None if Y is None else Y[start:stop])
        return
    start = 0
    for item in X:
        if isinstance(item, tuple):
            Xc, Yc = item
        else:
            Xc = item
            Yc = None if Y is None else Y[start:start + item.shape[0]]
        yield start, Xc, Yc
        start += Xc.shape[0]


def count_rows(X):
    """Number of rows of an array, or of a chunk source (one pass over a callable's chunks).

    With a chunked file reader (e.g. ``lambda: iter_chunks(path)``), ``n = count_rows(source)``
    lets the sketch be drawn before the fit reads the file again.
    """
    if _is_sliceable(X) and not (callable(X) and not hasattr(X, "shape")):
        return int(X.shape[0])
    return sum(int(Xc.shape[0]) for _, Xc, _ in iter_rows(X))


def gather_rows(X, indices, chunk_rows=None):
    """Rows ``X[indices]`` of an array, memory map or chunk iterable, in the order of ``indices``."""
    indices = np.asarray(indices, dtype=np.int64)
    if _is_sliceable(X) and not (callable(X) and not hasattr(X, "shape")):
        return X[indices] if sp.issparse(X) else np.ascontiguousarray(X[indices], dtype=np.float64)
    order = np.argsort(indices, kind="stable")
    parts, pos = [], 0
    for start, Xc, _ in iter_rows(X, None, chunk_rows):
        stop = start + Xc.shape[0]
        hi = np.searchsorted(indices[order], stop)
        if hi > pos:
            parts.append(np.asarray(Xc[indices[order[pos:hi]] - start], dtype=np.float64))
        pos = hi
    if pos < indices.size:
        raise InvalidInputError(f"the input has fewer rows than the sketch needs (index {indices.max()})")
    out = np.empty((indices.size,) + parts[0].shape[1:]) if parts else np.empty((0, 0))
    out[order] = np.concatenate(parts) if parts else out
    return out


def iter_predict(kernel, X, X_ref, coef, *, options=None, chunk_rows=None):
    """Yield ``(start, k(X_chunk, X_ref) @ coef)`` chunk by chunk (X as in :func:`iter_rows`).

    Without ``options.engine`` the engine is chosen once from the kernel entries of all chunks.
    """
    rows = X.shape[0] if _is_sliceable(X) else None
    options = planned(options, None if rows is None else rows * X_ref.shape[0])
    engine = get_engine(options)
    dt = compute_dtype(options.dtype)
    coef = np.asarray(coef, dtype=np.float64)
    if chunk_rows is None:
        chunk_rows = plan_stream(X.shape[0] if _is_sliceable(X) else 10**9, coef.shape[0], X_ref.shape[0],
                                 X_ref.shape[1], coef.shape[-1] if coef.ndim > 1 else 1, options,
                                 kernel=kernel).chunk_rows
    Xr = engine.asarray(X_ref)
    W = engine.asarray(coef, dt)
    for start, Xc, _ in iter_rows(X, None, chunk_rows):
        F = engine.block(kernel, engine.asarray(Xc), Xr, dt) @ W
        yield start, np.asarray(engine.to_numpy(F), dtype=np.float64)


def predict_chunks(kernel, X, X_ref, coef, *, options=None, chunk_rows=None, out=None):
    """``k(X, X_ref) @ coef`` computed chunk by chunk into ``out`` (e.g. an ``np.memmap``) or a new array."""
    n = X.shape[0] if _is_sliceable(X) else None
    coef = np.asarray(coef)
    parts = []
    for start, F in iter_predict(kernel, X, X_ref, coef, options=options, chunk_rows=chunk_rows):
        if out is None and n is not None:
            out = np.empty((n,) + coef.shape[1:])
        if out is not None:
            out[start:start + F.shape[0]] = F
        else:
            parts.append(F)
    return out if out is not None else np.concatenate(parts)
