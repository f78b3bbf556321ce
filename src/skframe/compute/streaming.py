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

from skframe.compute.backend import device_solve_psd, get_array_module, to_numpy
from skframe.compute.engines import _NUMPY, BlockEngine, NumpyEngine, _mix_diagonal, get_engine
from skframe.compute.memory import plan_stream
from skframe.compute.stream_io import _is_sliceable, count_rows, gather_rows, iter_predict, iter_rows, predict_chunks
from skframe.core.engine import planned
from skframe.core.linalg import default_rtol, sketch_spectrum, solve_psd
from skframe.deps import is_dask_collection
from skframe.exceptions import InvalidInputError, InvalidParameterError
from skframe.options import compute_dtype

__all__ = ["StreamSums", "BlockEngine", "NumpyEngine", "chunk_sums", "accumulate", "iter_rows", "sketch_gram",
           "ridge_from_sums", "solve_on", "StreamedRidge", "fit_sketched_ridge", "block_shift", "product_precision",
           "iter_predict", "predict_chunks", "gather_rows", "count_rows", "get_engine"]


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
        """``(C, b, kr_sum)`` with the full symmetric C, the shift undone and the diagonal mix applied (float64).

        Computed with the namespace of the sums: on the GPU for sums kept on the device.
        """
        xp = get_array_module(self.C)
        C = xp.triu(xp.asarray(self.C, dtype=np.float64))
        C = C + xp.triu(C, 1).T
        b = xp.array(self.b, dtype=np.float64)
        kr = xp.array(self.kr_sum, dtype=np.float64)
        if self.shift is not None:  # B = B_c + 1 mu^T: B^T B = B_c^T B_c + mu s^T + s mu^T + n mu mu^T
            mu = xp.asarray(self.shift, dtype=np.float64)
            cross = xp.outer(mu, kr)
            C += cross + cross.T + self.n * xp.outer(mu, mu)
            b += xp.outer(mu, xp.asarray(self.y_sum, dtype=np.float64))
            kr += self.n * mu
        if self.scale is not None:
            s = xp.asarray(to_numpy(self.scale), dtype=np.float64)
            C *= s[:, None]
            C *= s[None, :]
            b *= s[:, None]
            kr *= s
        return C, b, kr


def chunk_sums(kernel, X_chunk, Y_chunk, X_sub, mix, *, dtype="float64", engine=None, mix_t=None, shift=None,
               products=None):
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
    engine : BlockEngine or CupyEngine, optional
        The block engine of the chunk (default: the CPU's, loops chosen by each block).
    mix_t : optional
        ``engine.prepare_mix(mix, dtype)`` computed once by the caller.
    shift : array (m,), optional
        Row subtracted from B before the products (see :class:`StreamSums`, :func:`block_shift`);
        every chunk of one fit must use the same shift.
    products : {"float64", "float32"}, optional
        Precision of the chunk products ``B^T B`` and ``B^T Y`` (default: ``dtype``). float32
        blocks with float64 products keep the accuracy of an ill-conditioned problem
        (see :func:`product_precision`).
    """
    engine = engine or _NUMPY
    dt = compute_dtype(dtype)
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
    B = engine.kernel_times_mix(kernel, X_chunk, X_sub, mix_t, None, dt, prepared=True)
    if products is not None and compute_dtype(products) != dt:
        dt = compute_dtype(products)
        B = B.astype(dt)
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
    dt = compute_dtype(dtype)
    Xs = engine.asarray(X_sub)
    B = engine.times_mix(engine.block(kernel, Xs[:rows], Xs, np.float64), engine.prepare_mix(mix, np.float64))
    return B.mean(axis=0).astype(dt)


def product_precision(eigenvalues, dtype):
    """Precision of the chunk products for kernel blocks of ``dtype`` and ``R K R^T`` eigenvalues.

    float32 products of n rows lose about ``eps32`` relative to the largest direction, which
    swamps directions ``kappa = w_max / w_min`` times smaller: above ``kappa ~ 1e-2 / eps32``
    (about 8e4) the products are taken in float64 (from the float32 blocks). Measured on
    Friedman data: kappa = 1.2e5 costs +0.5 % test MSE in float32 products, 5e5 costs +40 %.
    """
    if str(dtype) != "float32":
        return "float64"
    w = np.asarray(eigenvalues, dtype=np.float64)
    if w.size == 0:
        return "float32"
    kappa = float(w.max() / w.min())
    return "float32" if kappa * np.finfo(np.float32).eps <= 1e-2 else "float64"


def accumulate(kernel, X, Y, X_sub, mix, *, options=None, chunk_rows=None, progress=None, products=None,
               device=False):
    """The reduce over chunks: :class:`StreamSums` of ``(X, Y)`` in float64 (NumPy).

    ``chunk_rows`` defaults to the memory plan of ``options`` (:func:`skframe.compute.memory.plan_stream`);
    ``products`` is the precision of the chunk products (default ``options.dtype``). With ``device``
    the sums stay in the engine's namespace (on the GPU for ``backend="cupy"``), for a solve there.
    """
    n = X.shape[0] if _is_sliceable(X) else 0
    options = planned(options, n * mix.shape[1] if n else None)  # the caller's engine, else from n x s'
    engine = get_engine(options)
    dt = compute_dtype(options.dtype)
    if chunk_rows is None:
        chunk_rows = plan_stream(n or 10**9, mix.shape[0], mix.shape[1], X_sub.shape[1], 1, options,
                                 kernel=kernel).chunk_rows
    Xs = engine.asarray(X_sub)
    mix_t = engine.prepare_mix(mix, dt)
    products = products or options.dtype
    shift = block_shift(kernel, Xs, mix, products, engine=engine)
    total = None
    for _, Xc, Yc in iter_rows(X, Y, chunk_rows):
        if Yc is None:
            raise InvalidInputError("targets are missing: pass y, or (X_chunk, y_chunk) pairs")
        part = chunk_sums(kernel, Xc, Yc, Xs, mix, dtype=options.dtype, engine=engine, mix_t=mix_t, shift=shift,
                          products=products)
        total = part if total is None else total + part
        if progress is not None:
            progress(int(Xc.shape[0]))
    if total is None:
        raise InvalidInputError("X is empty; a fit needs at least one row")
    return total if device and engine.xp is not np else total.to_numpy(engine)


def sketch_gram(kernel, X_sub, mix, *, chunk_rows=None, engine=None):
    """``R K R^T = S_mix k(X_sub, X_sub) S_mix^T`` (m x m, float64), in row chunks of ``X_sub``.

    The block engine's :meth:`~skframe.core.block_engine.BlockEngine.sketch_gram`; ``engine`` runs the kernel's
    loops (the fit's; None: chosen from the size of each block).
    """
    return BlockEngine(engine).sketch_gram(kernel, X_sub, mix, chunk_rows=chunk_rows)


def ridge_from_sums(sums, RKR, mix, lam, *, rtol=None, xp=np, return_ud=False, eig=None):
    """Sketched kernel ridge weights from accumulated sums.

    The m x m products, eigendecomposition and solve run with the namespace ``xp`` (NumPy/LAPACK,
    or CuPy on the GPU of ``backend="cupy"``, where sums kept on the device never visit the host);
    ``coef``, ``proj`` and the eigenvalues come back as NumPy arrays, ``UD`` stays in ``xp``.

    Returns
    -------
    coef : ndarray (s', d)
        Weights on the sampled points: ``f(x) = k(x, X_sub) @ coef``.
    proj : ndarray (s', r)
        ``S_mix^T U D^{-1/2}``: features ``z(x) = k(x, X_sub) @ proj``.
    eigenvalues : ndarray (r,)
    UD : array (m, r) of ``xp``
        ``U D^{-1/2}``, only with ``return_ud=True``.

    ``eig`` is ``(w, U)`` of ``R K R^T`` when already computed; ``lam=None`` skips the solve
    (``coef`` is then None).
    """
    w, U = eig if eig is not None else sketch_spectrum(RKR, rtol, xp=xp)
    UD = U / xp.sqrt(w)
    w_host = to_numpy(w)
    proj = np.asarray(mix.T @ to_numpy(UD))  # the features' weights on the sampled points: a result, on the host
    if lam is None:
        return (None, proj, w_host, UD) if return_ud else (None, proj, w_host)
    C, b, _ = sums.products()
    A = UD.T @ xp.asarray(C) @ UD
    A = 0.5 * (A + A.T)
    A[xp.arange(A.shape[0]), xp.arange(A.shape[0])] += sums.n * float(lam)
    W = to_numpy(solve_on(xp, A, UD.T @ xp.asarray(b)))
    return (proj @ W, proj, w_host, UD) if return_ud else (proj @ W, proj, w_host)


def solve_on(xp, A, B):
    """``A^{-1} B`` for a symmetric positive semi-definite ``A`` where it lives: LAPACK's Cholesky with the
    eigendecomposition fallback of :func:`skframe.core.linalg.solve_psd` on the host, the same two steps with
    the namespace's solvers on a device (cuSOLVER on a GPU, :func:`skframe.compute.backend.device_solve_psd`)."""
    return solve_psd(A, B) if xp is np else device_solve_psd(xp, A, B, default_rtol(A.shape[0]))


@dataclass
class StreamedRidge:
    """Result of :func:`fit_sketched_ridge`: ``f(x) = k(x, X_sub) @ coef``."""

    coef: np.ndarray
    X_sub: object
    proj: np.ndarray
    eigenvalues: np.ndarray
    n: int
    info: dict = field(default_factory=dict)


def fit_sketched_ridge(kernel, X, Y, R, lam, *, options=None, rtol=None, X_sub=None, progress=None,
                       keep_sums=False, sums=True):
    """Sketched kernel ridge regression by one streamed pass over ``(X, Y)``, in this process.

    Dask arrays are fitted on their cluster by :func:`skframe.compute.distributed.fit_sketched_ridge_dask`
    (same arguments, same numbers); the models choose between the two.

    Parameters
    ----------
    kernel : kernel object
    X : ndarray, np.memmap, sparse matrix, or iterable / callable of row chunks
    Y : ndarray (n,) or (n, d), or None when X yields ``(X_chunk, Y_chunk)`` pairs
    R : skframe.core.sketching.SketchMatrix
    lam : float or None
        None only accumulates (``coef`` is None; with ``keep_sums`` the sums solve any λ).
    options : ComputeOptions, optional
        ``memory_budget``, ``chunk_rows``, ``dtype``, ``backend`` and ``engine`` (a model passes its
        execution plan's; without one it is chosen from the ``n x s'`` kernel entries of the pass).
    rtol : float, optional
        Relative eigenvalue tolerance of ``R K R^T``.
    X_sub : array, optional
        ``X[R.indices]``; read from X when omitted.
    progress : callable, optional
        Called with the number of rows after each chunk.
    keep_sums : bool
        Also return the :class:`StreamSums` and ``U D^{-1/2}`` in ``info["sums"]`` and ``info["UD"]``
        (other targets and λ values can then be solved for without another pass).
    sums : bool, default=True
        False (only with ``lam=None``): no pass over the rows, only the sketch's spectrum and ``proj``
        (``info["sums"]`` is None): a fit whose solver reads the rows' features, never their sums.

    Returns
    -------
    StreamedRidge
    """
    options = planned(options, R.n * R.s_prime)  # one engine for every block of the pass
    if is_dask_collection(X):
        raise InvalidInputError(
            "X is a dask array; fit it on its cluster with "
            "skframe.compute.distributed.fit_sketched_ridge_dask(kernel, X, Y, R, lam), or pass it to a model's fit"
        )
    engine = get_engine(options)  # an unusable backend fails here, before any work
    n_features = X_sub.shape[1] if X_sub is not None else (X.shape[1] if _is_sliceable(X) else 1)
    d = 1 if Y is None or getattr(Y, "ndim", 1) == 1 else Y.shape[1]
    plan = plan_stream(R.n, R.m, R.s_prime, n_features, d, options, kernel=kernel)
    if X_sub is None:
        X_sub = gather_rows(X, R.indices, plan.chunk_rows)
    device_gram = getattr(engine, "sketch_gram", None)  # a device engine computes R K R^T where it solves
    # before the pass: R K R^T's spectrum sets the product precision
    RKR = device_gram(kernel, X_sub, R.mix) if device_gram is not None else \
        sketch_gram(kernel, X_sub, R.mix, engine=options.engine)
    eig = sketch_spectrum(RKR, rtol, xp=engine.xp)
    products = product_precision(engine.to_numpy(eig[0]), options.dtype)
    blocks = options
    if products != str(options.dtype):  # float64 products: keep the kernel's float64 blocks (no round trip)
        blocks = options.replace(dtype=products)
        plan = plan_stream(R.n, R.m, R.s_prime, n_features, d, blocks, kernel=kernel)
    if not sums and lam is not None:
        raise InvalidParameterError("fit_sketched_ridge(sums=False) only prepares the sketch: pass lam=None")
    totals = None
    if sums:
        totals = accumulate(kernel, X, Y, X_sub, R.mix, options=blocks, chunk_rows=plan.chunk_rows,
                            progress=progress, device=True)  # on a GPU the sums stay there for the solve
        if totals.n != R.n:
            raise InvalidInputError(f"the sketch was drawn for n={R.n} rows but the data have {totals.n}")
    coef, proj, w, UD = ridge_from_sums(totals, RKR, R.mix, lam, rtol=rtol, xp=engine.xp, return_ud=True, eig=eig)
    info = {"chunk_rows": plan.chunk_rows, "planned_peak_bytes": plan.peak_bytes, "dtype": str(options.dtype),
            "products": products, "backend": engine.name, "rank": int(w.size)}
    if keep_sums:
        info.update(sums=totals, UD=UD)
    return StreamedRidge(coef, X_sub, proj, w, R.n, info)


