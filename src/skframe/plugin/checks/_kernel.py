"""The kernel check: Gram blocks, their symmetry and PSD-ness, and every kernel tag."""

from __future__ import annotations

import contextlib
import sys
import threading

import numpy as np
import scipy.sparse as sp

from skframe.core import threads as _threads
from skframe.core.sketch_matrix import SketchMatrix
from skframe.core.sketching import sketched_gram_products
from skframe.exceptions import PluginError
from skframe.plugin.checks._common import (
    _check_params,
    _close,
    _dense,
    _saved_and_loaded,
    _start,
    _worst,
)
from skframe.plugin.collections import is_collection, n_items, take
from skframe.plugin.protocols import kernel_block, kernel_matvec, kernel_prepare


# ----------------------------------------------------------------------------- kernels
class _Recording:
    """A kernel proxy that records whether each call ran on the caller's thread."""

    def __init__(self, kernel, tags):
        self._kernel, self._tags, self.calls = kernel, tags, []
        self._caller = threading.current_thread()

    def __skframe_tags__(self):
        return self._tags

    def __call__(self, X, Y=None, **kwargs):
        self.calls.append(threading.current_thread() is self._caller)
        return self._kernel(X, Y, **kwargs)


@contextlib.contextmanager
def _small_threaded_tiles():
    """skframe's tiled sketch product on small blocks: tiles of a few rows shared by 3 threads."""
    saved = [(_threads, "THREADED_ENTRIES", 1), (_threads, "available_cores", lambda: 3)]
    for mod in list(sys.modules.values()):
        if getattr(mod, "__name__", "").startswith("skframe.core.") and hasattr(mod, "_TILE_ENTRIES"):
            saved.append((mod, "_TILE_ENTRIES", 64))
    old = [(mod, name, getattr(mod, name)) for mod, name, _ in saved]
    try:
        for mod, name, value in saved:
            setattr(mod, name, value)
        yield
    finally:
        for mod, name, value in old:
            setattr(mod, name, value)


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
    skframe.exceptions.PluginError
        At the first failed property, naming it and the fix.
    """
    kernel, fail, tags, rng = _start("kernel", kernel, params, rng)
    X, Y = _kernel_data(rng, X, Y)
    prepared = kernel_prepare(kernel, X)
    nx, ny = n_items(X), n_items(Y)
    try:
        K = kernel_block(prepared, X, X)
        KXY = kernel_block(prepared, X, Y)
        KYX = kernel_block(prepared, Y, X)
        K_none = _dense(prepared(X))
    except PluginError as exc:
        fail("shape", str(exc), "return a block of shape (len(X), len(Y))")
    except TypeError as exc:
        fail("call", f"kernel(X, Y) raised {exc}", "accept kernel(X, Y=None) with Y=None meaning Y = X")
    fail.require(np.all(np.isfinite(K)) and np.all(np.isfinite(KXY)), "finite", "the Gram block has NaN or inf",
                 "return finite values")
    fail.require(_close(K_none, K, rtol), "Y=None", f"kernel(X) != kernel(X, X): {_worst(K_none, K)}",
                 "treat Y=None as Y = X")
    fail.require(_close(K, K.T, rtol), "symmetry", f"k(X, X) is not symmetric: {_worst(K, K.T)}",
                 "a kernel must satisfy k(x, y) = k(y, x)")
    fail.require(_close(KXY, KYX.T, rtol), "symmetry", f"k(X, Y) != k(Y, X)^T: {_worst(KXY, KYX.T)}",
                 "a kernel must satisfy k(x, y) = k(y, x)")
    w = np.linalg.eigvalsh(0.5 * (K + K.T))
    fail.require(w.min() >= -1e-7 * max(1.0, float(np.abs(w).max())), "positive semi-definite",
                 f"k(X, X) has the eigenvalue {w.min():.3g}", "a kernel must give PSD Gram matrices")
    if callable(getattr(prepared, "diag", None)):
        dg = np.asarray(prepared.diag(X), dtype=np.float64).ravel()
        fail.require(_close(dg, np.diag(K), rtol), "diag", f"diag(X) is not the diagonal of k(X, X): "
                     f"{_worst(dg, np.diag(K))}", "return k(x_i, x_i) for each row")
    if tags.normalized:
        fail.require(_close(np.diag(K), np.ones(nx), rtol), "tag normalized",
                     f"the tags say normalized but k(x, x) ranges in [{np.diag(K).min():.6g}, {np.diag(K).max():.6g}]",
                     "declare normalized=False, or normalise the kernel")
    if tags.is_linear:
        ok = not is_collection(X) and _close(KXY, np.asarray(X @ Y.T.toarray() if sp.issparse(Y) else X @ Y.T), rtol)
        fail.require(ok, "tag is_linear", "the tags say is_linear but k(X, Y) != X Y^T",
                     "declare is_linear=False")
    for dtype in tags.dtypes:
        if dtype == "float64":
            continue
        try:
            K32 = prepared(X, Y, dtype=np.dtype(dtype))
        except TypeError as exc:
            fail(f"tag dtypes ({dtype})", f"kernel(X, Y, dtype={dtype}) raised {exc}",
                 "accept a dtype keyword, or leave the precision out of the tags' dtypes")
        fail.require(getattr(K32, "dtype", None) == np.dtype(dtype) and K32.shape == (nx, ny), f"tag dtypes ({dtype})",
                     f"kernel(X, Y, dtype={dtype}) returned {getattr(K32, 'dtype', type(K32))} of shape "
                     f"{getattr(K32, 'shape', None)}", f"return a {dtype} block, or leave it out of the tags' dtypes")
        fail.require(_close(K32, KXY, 1e-4 if dtype == "float32" else rtol), f"tag dtypes ({dtype})",
                     f"the {dtype} block differs from the float64 one: {_worst(K32, KXY)}", "compute the same kernel")
    has_sampler = callable(getattr(prepared, "spectral_sampler", None))
    fail.require(has_sampler == tags.spectral_sampler, "tag spectral_sampler",
                 f"the tags say spectral_sampler={tags.spectral_sampler} but the method is "
                 f"{'present' if has_sampler else 'absent'}", "make the tag and the method agree")
    if tags.spectral_sampler and not is_collection(X):
        _check_spectral_sampler(fail, prepared, np.asarray(X)[:6], rng)
    if callable(getattr(prepared, "matvec", None)):
        Wv = rng.standard_normal((ny, 2))
        got = kernel_matvec(prepared, X, Y, Wv)
        fail.require(_close(got, KXY @ Wv, rtol), "matvec", f"matvec(X, Y, W) != k(X, Y) @ W: "
                     f"{_worst(got, KXY @ Wv)}", "return k(X, Y) @ W")
    if callable(getattr(prepared, "block_bytes", None)):
        nbytes = prepared.block_bytes(nx, ny, 8)
        fail.require(isinstance(nbytes, (int, np.integer)) and nbytes > 0, "block_bytes",
                     f"block_bytes({nx}, {ny}, 8) = {nbytes!r}", "return the peak bytes of one block, a positive int")
    fail.require("numpy" in tags.backends, "tag backends", f"backends={tags.backends}",
                 "every kernel takes NumPy arrays: list 'numpy'")
    if type(X) is np.ndarray:
        _check_threads(fail, prepared, tags, X, rng)
    rebuilt = _check_params(fail, kernel, "kernel")
    loaded = _saved_and_loaded(fail, kernel, "kernel")
    for other, how in ((rebuilt, "rebuilt from params"), (loaded, "saved and loaded")):
        K2 = kernel_block(kernel_prepare(other, X), X, Y)
        fail.require(_close(K2, KXY, rtol), "save and load" if how.startswith("saved") else "params round-trip",
                     f"the kernel {how} gives other values: {_worst(K2, KXY)}", "rebuild the same kernel from params")
    return tags


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


def _check_threads(fail, kernel, tags, X, rng):
    n, s, m = X.shape[0], min(8, X.shape[0]), 5
    idx = np.sort(rng.choice(n, size=s, replace=False))
    mix = sp.random(m, s, density=0.6, random_state=np.random.RandomState(1), format="csr") + sp.eye(m, s)
    R = SketchMatrix(n=n, indices=idx, mix=mix)
    proxy = _Recording(kernel, tags)
    with _small_threaded_tiles():
        KR, _ = sketched_gram_products(proxy, X, R)
    expected = kernel_block(kernel, X, take(X, idx)) @ R.mix.toarray().T
    if not tags.thread_safe:
        fail.require(all(proxy.calls), "tag thread_safe",
                     "skframe called a kernel not declared thread-safe from another thread",
                     "this is a bug of skframe's sketch product: report it")
    fail.require(_close(KR, expected, 1e-9), "tag thread_safe",
                 f"the sketch product {'on threads ' if tags.thread_safe else ''}differs from k(X, X_s) S_mix^T: "
                 f"{_worst(KR, expected)}",
                 "declare thread_safe=False unless concurrent calls are safe (no state changed by a call)")
