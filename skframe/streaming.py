"""One streamed accumulation for sketched kernel ridge: bounded memory, any executor.

With a drawn sketch ``R = S_mix S_sub`` (``S_sub`` picks the s' sampled points
``X_sub``), the square-loss problem of a sketched kernel model only needs

    C = (K R^T)^T (K R^T)  (m x m),    b = (K R^T)^T Y  (m x d),    R K R^T  (m x m),

(El Ahmad, Brogat-Motte, Laforgue, d'Alché-Buc, *Sketch In, Sketch Out: Accelerating
both Learning and Inference for Structured Prediction with Kernels*, AISTATS 2024;
El Ahmad, Laforgue, d'Alché-Buc, *Fast Kernel Methods for Generic Lipschitz Losses via
p-Sparsified Sketches*, TMLR 2023). Each row chunk contributes
``B = k(X_chunk, X_sub) S_mix^T`` through ``B^T B`` (a BLAS ``syrk`` into a float64
accumulator, float32 chunk products allowed) and ``B^T Y_chunk``; no n x m array is
ever held. The accumulation is a map-reduce: :func:`chunk_sums` is the map (one chunk,
or one Dask partition), :class:`StreamSums` addition is the reduce. The in-memory,
memory-mapped, GPU and Dask paths all run these two functions, on different executors.

From the sums, with ``R K R^T = U D U^T`` (rank r), the features
``Z = K R^T U D^{-1/2}`` give ``Z^T Z = D^{-1/2} U^T C U D^{-1/2}`` and
``Z^T Y = D^{-1/2} U^T b``; ``W = (Z^T Z + n lam I)^{-1} Z^T Y`` and the weights on
``X_sub`` are ``S_mix^T U D^{-1/2} W``: exactly the in-memory
:class:`~skframe.models.SketchedKernelRidge` solution.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from .collections import chunks
from .exceptions import InvalidInputError, InvalidParameterError
from .linalg import default_rtol, eigh_truncated, solve_psd
from .memory import plan_stream
from .options import DEFAULT_OPTIONS
from .protocols import kernel_block

__all__ = ["StreamSums", "NumpyEngine", "chunk_sums", "accumulate", "iter_rows", "sketch_gram", "ridge_from_sums",
           "StreamedRidge", "fit_sketched_ridge", "block_shift", "iter_predict", "predict_chunks", "gather_rows", "get_engine"]


def _np_dtype(dtype):
    return np.float32 if str(dtype) == "float32" else np.float64


def _mix_diagonal(mix):
    from .sketching import diagonal_of_mix

    return diagonal_of_mix(mix)


class NumpyEngine:
    """Chunk products on the CPU: compiled kernel blocks, BLAS ``syrk``/``gemm``.

    An engine turns one chunk into its contributions; :mod:`skframe._cupy` provides the
    same methods on a GPU. Accumulators returned by an engine live in its namespace ``xp``.
    """

    name = "numpy"
    xp = np

    def asarray(self, A, dtype=np.float64):
        if sp.issparse(A):
            return A
        return np.ascontiguousarray(A, dtype=dtype)

    def to_numpy(self, A):
        return A

    def block(self, kernel, X, Y, dtype):
        """``k(X, Y)`` as a dense array of ``dtype``."""
        return kernel_block(kernel, X, Y, dtype=dtype)

    def prepare_mix(self, mix, dtype):
        """``S_mix^T`` ready for :meth:`times_mix_t`: None for a diagonal mix (applied at the end)."""
        if _mix_diagonal(mix) is not None:
            return None
        if sp.issparse(mix):
            return sp.csr_matrix(mix.T, dtype=dtype)
        return np.asarray(mix.T, dtype=dtype)

    def times_mix_t(self, block, mix_t):
        """``block @ S_mix^T``."""
        if mix_t is None:
            return block
        if not sp.issparse(mix_t):
            return block @ mix_t
        if block.dtype == np.float64:  # compiled row-wise gather of the sketching module
            from .sketching import _times_mixT

            return _times_mixT(block, mix_t.T.tocsr())
        return np.asarray(mix_t.T @ block.T).T  # sparse @ dense, float32 kept

    def syrk_add(self, C, B):
        """``C += B^T B`` on the upper triangle (C float64, Fortran order); B float32 or float64."""
        from scipy.linalg import blas

        if B.flags.c_contiguous:  # B^T is Fortran-ordered: C += A A^T with A = B^T, no copy
            A, trans = B.T, 0
        else:
            A, trans = np.asfortranarray(B), 1
        if A.dtype == np.float64:
            blas.dsyrk(1.0, A, beta=1.0, c=C, trans=trans, lower=0, overwrite_c=1)
        else:  # float32 chunk product, added to the float64 accumulator
            C += blas.ssyrk(1.0, A, trans=trans, lower=0)
        return C

    def zeros(self, shape, order="C"):
        return np.zeros(shape, order=order)


_NUMPY = NumpyEngine()


def get_engine(options=None):
    """The engine of ``options.backend``: NumPy, or CuPy (imported only then)."""
    backend = str(getattr(options or DEFAULT_OPTIONS, "backend", "numpy") or "numpy").lower()
    if backend == "numpy":
        return _NUMPY
    if backend == "cupy":
        from ._cupy import CupyEngine

        return CupyEngine()
    raise InvalidParameterError(f"backend={backend!r} is not known; use 'numpy' or 'cupy'")


@dataclass
class StreamSums:
    """Sums accumulated over row chunks (NumPy float64 after :meth:`to_numpy`).

    Attributes
    ----------
    C : ndarray (m, m)
        Upper triangle of ``sum B^T B`` (B = chunk of ``K R^T``, unscaled by a diagonal mix).
    b : ndarray (m, d)
        ``sum B^T Y``.
    kr_sum : ndarray (m,)
        Column sums of ``K R^T`` (for intercepts).
    y_sum, y_sq : ndarray (d,)
        Sums of targets and of squared targets.
    n : int
    scale : ndarray (m,) or None
        Diagonal of a diagonal ``S_mix`` (sub-sampling), applied by :meth:`products`.
    shift : ndarray (m,) or None
        A row ``mu`` subtracted from every row of B before the products (float32: the
        products of the centred ``B_c = B - 1 mu^T`` lose far less to rounding); C, b and
        kr_sum are then sums of ``B_c`` and :meth:`products` adds the exact correction.
    """

    C: object
    b: object
    kr_sum: object
    y_sum: object
    y_sq: object
    n: int = 0
    scale: object = None
    shift: object = None

    def __add__(self, other):
        if other is None or (isinstance(other, int) and other == 0):
            return self
        return StreamSums(self.C + other.C, self.b + other.b, self.kr_sum + other.kr_sum, self.y_sum + other.y_sum,
                          self.y_sq + other.y_sq, self.n + other.n, self.scale, self.shift)

    __radd__ = __add__

    def to_numpy(self, engine=None):
        conv = (engine or _NUMPY).to_numpy
        arrays = (np.asarray(conv(a), dtype=np.float64) for a in (self.C, self.b, self.kr_sum, self.y_sum, self.y_sq))
        shift = None if self.shift is None else np.asarray(conv(self.shift), dtype=np.float64)
        return StreamSums(*arrays, int(self.n), self.scale, shift)

    def products(self):
        """``(C, b, kr_sum)`` with the full symmetric C, the shift undone and the diagonal mix applied (float64)."""
        C = np.triu(np.asarray(self.C, dtype=np.float64))
        C = C + np.triu(C, 1).T
        b = np.array(self.b, dtype=np.float64)
        kr = np.array(self.kr_sum, dtype=np.float64)
        if self.shift is not None:  # B = B_c + 1 mu^T: B^T B = B_c^T B_c + mu s^T + s mu^T + n mu mu^T
            mu = np.asarray(self.shift, dtype=np.float64)
            cross = np.outer(mu, kr)
            C += cross + cross.T + self.n * np.outer(mu, mu)
            b += np.outer(mu, np.asarray(self.y_sum, dtype=np.float64))
            kr += self.n * mu
        if self.scale is not None:
            s = np.asarray(self.scale, dtype=np.float64)
            C *= s[:, None]
            C *= s[None, :]
            b *= s[:, None]
            kr *= s
        return C, b, kr


def chunk_sums(kernel, X_chunk, Y_chunk, X_sub, mix, *, dtype="float64", engine=None, mix_t=None, shift=None):
    """The map step: contributions of one row chunk (one Dask partition) to :class:`StreamSums`.

    Parameters
    ----------
    kernel : kernel object
    X_chunk : ndarray or sparse matrix (rows, n_features)
    Y_chunk : ndarray (rows,) or (rows, d)
    X_sub : ndarray or sparse matrix (s', n_features)
        The sampled points.
    mix : ndarray or sparse matrix (m, s')
        ``S_mix``.
    dtype : {"float64", "float32"}
        Precision of the kernel block and ``B``; the sums are float64.
    engine : NumpyEngine or CupyEngine, optional
    mix_t : optional
        ``engine.prepare_mix(mix, dtype)`` computed once by the caller.
    shift : array (m,), optional
        Row subtracted from B before the products (see :class:`StreamSums`, :func:`block_shift`);
        every chunk of one fit must use the same shift.
    """
    engine = engine or _NUMPY
    dt = _np_dtype(dtype)
    if mix_t is None:
        mix_t = engine.prepare_mix(mix, dt)
    m = mix.shape[0]
    Y = engine.asarray(Y_chunk, np.float64)
    if Y.ndim == 1:
        Y = Y[:, None]
    acc = engine.zeros((m, m), order="F")
    if X_chunk.shape[0] == 0:
        z = engine.zeros((Y.shape[1],))
        return StreamSums(acc, engine.zeros((m, Y.shape[1])), engine.zeros((m,)), z, z.copy(), 0,
                          _mix_diagonal(mix), shift)
    B = engine.times_mix_t(engine.block(kernel, engine.asarray(X_chunk), X_sub, dt), mix_t)
    if shift is not None:
        B -= shift
    engine.syrk_add(acc, B)
    xp = engine.xp
    Yext = xp.empty((Y.shape[0], Y.shape[1] + 1), dtype=dt)
    Yext[:, :-1] = Y
    Yext[:, -1] = 1.0
    bk = (B.T @ Yext).astype(np.float64)  # one gemm gives B^T Y and the column sums of B
    return StreamSums(acc, bk[:, :-1], bk[:, -1], Y.sum(axis=0), (Y * Y).sum(axis=0), int(Y.shape[0]),
                      _mix_diagonal(mix), shift)


def block_shift(kernel, X_sub, mix, dtype="float64", *, engine=None, rows=256):
    """The shift of float32 accumulations: column means of B over the first ``rows`` sampled points.

    Depends only on the sketch, so every chunk, partition and executor uses the same one.
    Returns None in float64 (products are exact enough, and equal to the in-memory path).
    """
    if str(dtype) != "float32":
        return None
    engine = engine or _NUMPY
    dt = _np_dtype(dtype)
    Xs = engine.asarray(X_sub)
    B = engine.times_mix_t(engine.block(kernel, Xs[:rows], Xs, np.float64), engine.prepare_mix(mix, np.float64))
    return B.mean(axis=0).astype(dt)


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


def accumulate(kernel, X, Y, X_sub, mix, *, options=None, chunk_rows=None, progress=None):
    """The reduce over chunks: :class:`StreamSums` of ``(X, Y)`` in float64 (NumPy).

    ``chunk_rows`` defaults to the memory plan of ``options`` (:func:`skframe.memory.plan_stream`).
    """
    options = options or DEFAULT_OPTIONS
    engine = get_engine(options)
    dt = _np_dtype(options.dtype)
    if chunk_rows is None:
        n = X.shape[0] if _is_sliceable(X) else 0
        chunk_rows = plan_stream(n or 10**9, mix.shape[0], mix.shape[1], X_sub.shape[1], 1, options,
                                 kernel=kernel).chunk_rows
    Xs = engine.asarray(X_sub)
    mix_t = engine.prepare_mix(mix, dt)
    shift = block_shift(kernel, Xs, mix, options.dtype, engine=engine)
    total = None
    for _, Xc, Yc in iter_rows(X, Y, chunk_rows):
        if Yc is None:
            raise InvalidInputError("targets are missing: pass y, or (X_chunk, y_chunk) pairs")
        part = chunk_sums(kernel, Xc, Yc, Xs, mix, dtype=options.dtype, engine=engine, mix_t=mix_t, shift=shift)
        total = part if total is None else total + part
        if progress is not None:
            progress(int(Xc.shape[0]))
    if total is None:
        raise InvalidInputError("X is empty; a fit needs at least one row")
    return total.to_numpy(engine)


def sketch_gram(kernel, X_sub, mix, *, chunk_rows=None):
    """``R K R^T = S_mix k(X_sub, X_sub) S_mix^T`` (m x m, float64), in row chunks of ``X_sub``."""
    diag = _mix_diagonal(mix)
    s = X_sub.shape[0]
    if diag is not None:
        G = kernel_block(kernel, X_sub, X_sub) * diag[:, None] * diag[None, :]
    else:
        m = mix.shape[0]
        G = np.zeros((m, m))
        mix_c = sp.csc_matrix(mix) if sp.issparse(mix) else mix
        for start, stop in chunks(s, chunk_rows or max(1, 8_000_000 // max(s, 1))):
            T = kernel_block(kernel, X_sub[start:stop], X_sub) @ mix.T if not sp.issparse(mix) else \
                np.asarray((mix @ kernel_block(kernel, X_sub[start:stop], X_sub).T)).T
            G += np.asarray(mix_c[:, start:stop] @ T)
    G += G.T
    G *= 0.5
    return G


def ridge_from_sums(sums, RKR, mix, lam, *, rtol=None):
    """Sketched kernel ridge weights from accumulated sums.

    Returns
    -------
    coef : ndarray (s', d)
        Weights on the sampled points: ``f(x) = k(x, X_sub) @ coef``.
    proj : ndarray (s', r)
        ``S_mix^T U D^{-1/2}``: features ``z(x) = k(x, X_sub) @ proj``.
    eigenvalues : ndarray (r,)
    """
    C, b, _ = sums.products()
    w, U = eigh_truncated(RKR, default_rtol(RKR.shape[0]) if rtol is None else rtol)
    if w.size == 0:
        raise InvalidParameterError(
            "the sketched Gram matrix R K R^T is zero; check the kernel parameters (e.g. a huge gamma) or the data"
        )
    UD = U / np.sqrt(w)
    A = UD.T @ C @ UD
    A = 0.5 * (A + A.T)
    A[np.diag_indices_from(A)] += sums.n * float(lam)
    W = solve_psd(A, UD.T @ b)
    proj = np.asarray(mix.T @ UD)
    return proj @ W, proj, w


@dataclass
class StreamedRidge:
    """Result of :func:`fit_sketched_ridge`: ``f(x) = k(x, X_sub) @ coef``."""

    coef: np.ndarray
    X_sub: object
    proj: np.ndarray
    eigenvalues: np.ndarray
    n: int
    info: dict = field(default_factory=dict)


def fit_sketched_ridge(kernel, X, Y, R, lam, *, options=None, rtol=None, X_sub=None, progress=None):
    """Sketched kernel ridge regression by one streamed pass over ``(X, Y)``.

    Parameters
    ----------
    kernel : kernel object
    X : ndarray, np.memmap, sparse matrix, dask array, or iterable / callable of row chunks
    Y : ndarray (n,) or (n, d), or None when X yields ``(X_chunk, Y_chunk)`` pairs
    R : skframe.sketching.SketchMatrix
    lam : float
    options : ComputeOptions, optional
        ``memory_budget``, ``chunk_rows``, ``dtype`` and ``backend``.
    rtol : float, optional
        Relative eigenvalue tolerance of ``R K R^T``.
    X_sub : array, optional
        ``X[R.indices]``; read from X when omitted.
    progress : callable, optional
        Called with the number of rows after each chunk.

    Returns
    -------
    StreamedRidge
    """
    options = options or DEFAULT_OPTIONS
    if type(X).__module__.split(".")[0] == "dask":
        from .distributed import fit_sketched_ridge_dask

        return fit_sketched_ridge_dask(kernel, X, Y, R, lam, options=options, rtol=rtol)
    n_features = X_sub.shape[1] if X_sub is not None else (X.shape[1] if _is_sliceable(X) else 1)
    d = 1 if Y is None or getattr(Y, "ndim", 1) == 1 else Y.shape[1]
    plan = plan_stream(R.n, R.m, R.s_prime, n_features, d, options, kernel=kernel)
    if X_sub is None:
        X_sub = gather_rows(X, R.indices, plan.chunk_rows)
    sums = accumulate(kernel, X, Y, X_sub, R.mix, options=options, chunk_rows=plan.chunk_rows, progress=progress)
    if sums.n != R.n:
        raise InvalidInputError(f"the sketch was drawn for n={R.n} rows but the data have {sums.n}")
    RKR = sketch_gram(kernel, X_sub, R.mix)
    coef, proj, w = ridge_from_sums(sums, RKR, R.mix, lam, rtol=rtol)
    info = {"chunk_rows": plan.chunk_rows, "planned_peak_bytes": plan.peak_bytes, "dtype": str(options.dtype),
            "backend": get_engine(options).name, "rank": int(w.size)}
    return StreamedRidge(coef, X_sub, proj, w, sums.n, info)


def iter_predict(kernel, X, X_ref, coef, *, options=None, chunk_rows=None):
    """Yield ``(start, k(X_chunk, X_ref) @ coef)`` chunk by chunk (X as in :func:`iter_rows`)."""
    options = options or DEFAULT_OPTIONS
    engine = get_engine(options)
    dt = _np_dtype(options.dtype)
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
