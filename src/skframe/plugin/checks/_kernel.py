"""The kernel check: Gram blocks, their symmetry and PSD-ness, and every kernel tag."""

from __future__ import annotations

import inspect
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import scipy.sparse as sp

from skframe.contract.collections import is_collection, n_items, take
from skframe.contract.protocols import kernel_block, kernel_matvec, kernel_prepare
from skframe.core.sketch_matrix import SketchMatrix
from skframe.core.sketching import sketched_gram_products
from skframe.exceptions import PluginError
from skframe.plugin.checks._common import (
    _checking,
    _close,
    _copies,
    _dense,
    _rebuilt_alike,
    _worst,
)

# ----------------------------------------------------------------------------- kernels
#: what the kernel check evaluates (besides the properties of every kind)
PROPERTIES = ("call", "shape", "finite", "Y=None", "symmetry", "positive semi-definite", "diag", "tag normalized",
              "tag is_linear", "tag dtypes", "tag spectral_sampler", "matvec", "block_bytes", "tag backends",
              "tag thread_safe", "sketch product")


def _takes_one_argument(kernel):
    """True when ``kernel(X)`` is a valid call (``Y`` has a default, or the signature cannot be read)."""
    try:
        params = list(inspect.signature(kernel).parameters.values())
    except (TypeError, ValueError):
        return True
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if any(p.kind == p.VAR_POSITIONAL for p in params):
        return True
    return len(positional) < 2 or positional[1].default is not inspect.Parameter.empty


def _kernel_data(rng, X, Y):
    if X is None:
        X = rng.uniform(size=(40, 3))
        Y = rng.uniform(size=(9, 3)) if Y is None else Y
    if Y is None:
        Y = take(X, np.arange(min(n_items(X), 9)))
    return X, Y


def check_kernel(kernel, X=None, Y=None, *, params=None, rng=0, rtol=1e-7):
    """Check a kernel (or kernel class, built with ``params``) against the contract.

    Parameters
    ----------
    kernel : kernel object or class
    X, Y : array or InputCollection, optional
        Data to evaluate on; default uniform in [0, 1)^3 (40 and 9 rows). Give them for a
        kernel on other inputs (graphs, strings, indices).
    params : dict, optional
        Arguments of ``kernel`` when it is a class.
    rng : int or numpy.random.Generator, default 0
    rtol : float, default 1e-7
        Relative tolerance of the equalities (symmetry, diagonal, matvec, ...).

    Returns
    -------
    KernelTags
        The tags that were checked.

    Raises
    ------
    skframe.plugin.testing.ConformanceError
        A :class:`skframe.exceptions.PluginError` listing every failed property, each named with its fix.
    """
    with _checking("kernel", kernel, params, rng, PROPERTIES) as (kernel, fail, tags, rng):
        X, Y = _kernel_data(rng, X, Y)
        prepared = kernel_prepare(kernel, X)
        KXY = _check_blocks(fail, prepared, X, Y, rtol)
        _check_tagged(fail, prepared, tags, X, Y, KXY, rng, rtol)
        if callable(getattr(prepared, "matvec", None)):
            Wv = rng.standard_normal((n_items(Y), 2))
            got = kernel_matvec(prepared, X, Y, Wv)
            fail.require(_close(got, KXY @ Wv, rtol), "matvec", f"matvec(X, Y, W) != k(X, Y) @ W: "
                         f"{_worst(got, KXY @ Wv)}", "return k(X, Y) @ W")
        if callable(getattr(prepared, "block_bytes", None)):
            nx, ny = n_items(X), n_items(Y)
            nbytes = prepared.block_bytes(nx, ny, 8)
            fail.require(isinstance(nbytes, (int, np.integer)) and nbytes > 0, "block_bytes",
                         f"block_bytes({nx}, {ny}, 8) = {nbytes!r}",
                         "return the peak bytes of one block, a positive int")
        if type(X) is np.ndarray:
            _check_threads(fail, prepared, tags, X, rng)
            _check_sketch_product(fail, prepared, X, rng)
        for other, prop, how in _copies(fail, kernel, "kernel"):
            K2 = kernel_block(kernel_prepare(other, X), X, Y)
            _rebuilt_alike(fail, _close(K2, KXY, rtol), prop, f"the kernel {how} gives other values: {_worst(K2, KXY)}")
    return tags


check_kernel.properties = PROPERTIES  # read by skframe.plugin.checks.PROPERTIES


def _check_blocks(fail, kernel, X, Y, rtol):
    """Shapes, finite values, ``Y=None`` where the signature has it, symmetry and PSD-ness; returns ``k(X, Y)``."""
    try:
        K = kernel_block(kernel, X, X)
        KXY = kernel_block(kernel, X, Y)
        KYX = kernel_block(kernel, Y, X)
    except PluginError as exc:
        fail("shape", str(exc), "return a block of shape (len(X), len(Y))")
    except TypeError as exc:
        fail("call", f"kernel(X, Y) raised {exc}", "accept kernel(X, Y) with two inputs")
    fail.passed("call", "shape")
    finite = fail.require(np.all(np.isfinite(K)) and np.all(np.isfinite(KXY)), "finite",
                          "the Gram block has NaN or inf", "return finite values")
    if _takes_one_argument(kernel):
        try:
            K_none = _dense(kernel(X))
        except TypeError as exc:
            fail("Y=None", f"kernel(X) raised {exc}", "treat Y=None as Y = X, or give Y no default")
        fail.require(_close(K_none, K, rtol), "Y=None", f"kernel(X) != kernel(X, X): {_worst(K_none, K)}",
                     "treat Y=None as Y = X")
    fail.require(_close(K, K.T, rtol), "symmetry", f"k(X, X) is not symmetric: {_worst(K, K.T)}",
                 "a kernel must satisfy k(x, y) = k(y, x)")
    fail.require(_close(KXY, KYX.T, rtol), "symmetry", f"k(X, Y) != k(Y, X)^T: {_worst(KXY, KYX.T)}",
                 "a kernel must satisfy k(x, y) = k(y, x)")
    if finite:
        w = np.linalg.eigvalsh(0.5 * (K + K.T))
        fail.require(w.min() >= -1e-7 * max(1.0, float(np.abs(w).max())), "positive semi-definite",
                     f"k(X, X) has the eigenvalue {w.min():.3g}", "a kernel must give PSD Gram matrices")
    if callable(getattr(kernel, "diag", None)):
        dg = np.asarray(kernel.diag(X), dtype=np.float64).ravel()
        fail.require(_close(dg, np.diag(K), rtol), "diag", f"diag(X) is not the diagonal of k(X, X): "
                     f"{_worst(dg, np.diag(K))}", "return k(x_i, x_i) for each row")
    return KXY


def _check_tagged(fail, kernel, tags, X, Y, KXY, rng, rtol):
    """What each tag promises: unit diagonal, a linear kernel, other precisions, a spectral sampler, NumPy."""
    nx, ny = n_items(X), n_items(Y)
    if tags.normalized:
        dg = np.diag(kernel_block(kernel, X, X))
        fail.require(_close(dg, np.ones(nx), rtol), "tag normalized",
                     f"the tags say normalized but k(x, x) ranges in [{dg.min():.6g}, {dg.max():.6g}]",
                     "declare normalized=False, or normalise the kernel")
    if tags.is_linear:
        ok = not is_collection(X) and _close(KXY, np.asarray(X @ Y.T.toarray() if sp.issparse(Y) else X @ Y.T), rtol)
        fail.require(ok, "tag is_linear", "the tags say is_linear but k(X, Y) != X Y^T",
                     "declare is_linear=False")
    for dtype in tags.dtypes:
        if dtype == "float64":
            continue
        try:
            K32 = kernel(X, Y, dtype=np.dtype(dtype))
        except TypeError as exc:
            fail.require(False, "tag dtypes", f"kernel(X, Y, dtype={dtype}) raised {exc}",
                         "accept a dtype keyword, or leave the precision out of the tags' dtypes")
            continue
        if not fail.require(getattr(K32, "dtype", None) == np.dtype(dtype) and K32.shape == (nx, ny), "tag dtypes",
                            f"kernel(X, Y, dtype={dtype}) returned {getattr(K32, 'dtype', type(K32))} of shape "
                            f"{getattr(K32, 'shape', None)}",
                            f"return a {dtype} block, or leave it out of the tags' dtypes"):
            continue
        fail.require(_close(K32, KXY, 1e-4 if dtype == "float32" else rtol), "tag dtypes",
                     f"the {dtype} block differs from the float64 one: {_worst(K32, KXY)}", "compute the same kernel")
    has_sampler = callable(getattr(kernel, "spectral_sampler", None))
    fail.require(has_sampler == tags.spectral_sampler, "tag spectral_sampler",
                 f"the tags say spectral_sampler={tags.spectral_sampler} but the method is "
                 f"{'present' if has_sampler else 'absent'}", "make the tag and the method agree")
    if tags.spectral_sampler and has_sampler and not is_collection(X):
        _check_spectral_sampler(fail, kernel, np.asarray(X)[:6], rng)
    fail.require("numpy" in tags.backends, "tag backends", f"backends={tags.backends}",
                 "every kernel takes NumPy arrays: list 'numpy'")


def _check_spectral_sampler(fail, kernel, X, rng):
    d, m = X.shape[1], 20000
    W = np.asarray(kernel.spectral_sampler(d, m, rng))
    fail.require(W.shape == (m, d), "tag spectral_sampler", f"spectral_sampler({d}, {m}, rng) has shape {W.shape}",
                 f"return an array of shape (m, d) = ({m}, {d})")
    b = rng.uniform(0, 2 * np.pi, size=m)
    Z = np.sqrt(2.0 / m) * np.cos(X @ W.T + b)
    K = kernel_block(kernel, X, X)
    fail.require(_close(Z @ Z.T, K, 0.0, atol=0.05), "tag spectral_sampler",
                 f"random Fourier features of the sampled frequencies do not approximate the kernel "
                 f"({_worst(Z @ Z.T, K)} with 20000 features)",
                 "sample the frequencies from the kernel's spectral measure (normalised Fourier transform)")


def _check_threads(fail, kernel, tags, X, rng, n_threads=3, rounds=4):
    """A kernel declared thread-safe gives, called at once from several threads on tiles of rows, its one-call values.

    The kit runs its own threads: nothing of skframe's thread pool or tiling is changed.
    """
    if not tags.thread_safe:
        return
    n = X.shape[0]
    Y = X[np.sort(rng.choice(n, size=min(8, n), replace=False))]
    expected = kernel_block(kernel, X, Y)
    out = np.empty_like(expected)
    bounds = list(range(0, n, 4)) + [n]
    barrier = threading.Barrier(n_threads, timeout=60)

    def tile(k):
        barrier.wait()  # the threads start together, so that their calls overlap
        for start, stop in zip(bounds[k::n_threads], bounds[k + 1::n_threads]):
            out[start:stop] = kernel_block(kernel, X[start:stop], Y)

    with ThreadPoolExecutor(max_workers=n_threads) as pool:
        for _ in range(rounds):
            list(pool.map(tile, range(n_threads)))
            if not _close(out, expected, 1e-9):
                break
    fail.require(_close(out, expected, 1e-9), "tag thread_safe",
                 f"calls from {n_threads} threads at once differ from one call: {_worst(out, expected)}",
                 "declare thread_safe=False unless concurrent calls are safe (no state changed by a call)")


def _check_sketch_product(fail, kernel, X, rng):
    """skframe's sketch product with this kernel is ``k(X, X_s) S_mix^T`` (the kernel is used as the fits use it)."""
    n, s, m = X.shape[0], min(8, X.shape[0]), 5
    idx = np.sort(rng.choice(n, size=s, replace=False))
    mix = sp.random(m, s, density=0.6, random_state=np.random.RandomState(1), format="csr") + sp.eye(m, s)
    R = SketchMatrix(n=n, indices=idx, mix=mix)
    KR, _ = sketched_gram_products(kernel, X, R)
    expected = kernel_block(kernel, X, take(X, idx)) @ R.mix.toarray().T
    fail.require(_close(KR, expected, 1e-9), "sketch product",
                 f"skframe's sketch product differs from k(X, X_s) S_mix^T: {_worst(KR, expected)}",
                 "return the same values whatever the order of the arguments' rows (k(X_s, X) = k(X, X_s)^T)")
