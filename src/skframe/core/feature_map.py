"""The sketched feature map ``z(x) = D_r^{-1/2} U_r^T R k_x`` and the prediction product ``k(X, X_ref) W``.

With ``R K R^T = U D U^T`` (rank r after the relative tolerance), the sketched problem
with any loss is linear in ``omega`` in R^r with penalty ``||omega||^2`` (El Ahmad,
Laforgue and d'Alché-Buc, "Fast Kernel Methods for Generic Lipschitz Losses via
p-Sparsified Sketches", TMLR 2023, Prop. 1). :func:`build_feature_map` computes the map
and the training features from the products of :mod:`skframe.core.sketching`;
:func:`kernel_times` is the chunked ``k(X, X_ref) @ W`` every sketched model predicts with.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from skframe.contract.collections import n_items, take
from skframe.contract.protocols import kernel_matvec, kernel_prepare
from skframe.core.block_engine import engine_matvec, own_matvec
from skframe.core.engine import planned
from skframe.core.linalg import default_rtol, spectral_projection
from skframe.core.sketch_matrix import SketchMatrix
from skframe.core.sketching import kernel_times_mix, resolve_options, rows_within_budget, sketched_gram_products
from skframe.options import compute_dtype

__all__ = ["kernel_times", "SketchedFeatureMap", "build_feature_map", "mixed_features"]


def kernel_times(kernel, X, X_ref, W, *, chunk_rows=None, options=None):
    """``k(X, X_ref) @ W`` in row chunks (the prediction step of every sketched model).

    Runs through the block engine (:func:`skframe.core.block_engine.engine_matvec`: one kernel block per chunk
    of rows, the chunks of :func:`~skframe.core.block_engine.rows_within_budget`); a kernel whose class offers its
    own ``matvec`` (a plugin's fused or device product, :func:`~skframe.core.block_engine.own_matvec`) is asked
    instead. ``W`` is cast to the compute precision (``options.dtype``); ``chunk_rows`` overrides
    ``options.chunk_rows``; without ``options.engine`` the engine is chosen once from ``len(X) x len(X_ref)``
    kernel entries (the one rule, :func:`skframe.core.engine.engine_rule`; sparse rows counted as such).
    The kernel is used as given: prepare it on the training data first.
    """
    options = planned(resolve_options(options, chunk_rows), n_items(X) * n_items(X_ref), sparse=sp.issparse(X))
    W = np.asarray(W, dtype=compute_dtype(options))
    if own_matvec(kernel) is not None:
        return kernel_matvec(kernel, X, X_ref, W, options=options)
    return engine_matvec(kernel, X, X_ref, W, options)


def mixed_features(kernel, X_sub, mix, UD, n_rows, *, block_bytes=None):
    """``X_rows -> z(X_rows) = (k(X_rows, X_sub) S_mix^T) UD`` (float64), the features as a fit computes them.

    The block engine's ``k(X_rows, X_sub) S_mix^T`` (rows x m, in blocks within the default block budget, the
    engine chosen once for ``n_rows x s'`` kernel entries), then the m x r map ``UD``: no dense
    ``S_mix^T UD`` (s' x r) is formed, and a p-sparsified sketch with s' much larger than m costs about s'/m
    times fewer products than ``k(X_rows, X_sub) @ (S_mix^T UD)``, which it equals up to rounding.

    Parameters
    ----------
    kernel : kernel object
        Prepared on the training data.
    X_sub : array, sparse matrix or InputCollection with s' items
        The sampled training points.
    mix : ndarray or sparse matrix of shape (m, s')
    UD : ndarray of shape (m, r)
    n_rows : int
        How many rows the callable will be given in all (chooses the engine).
    block_bytes : int, optional
        Bytes of one kernel block with its temporaries (default: ``ComputeOptions.block_bytes``).

    Returns
    -------
    callable
        ``features(X_rows) -> ndarray (len(X_rows), r)``.
    """
    s_prime = n_items(X_sub)
    R = SketchMatrix(n=s_prime, indices=np.arange(s_prime), mix=mix)
    UD = np.asarray(UD, dtype=np.float64)
    options = planned(resolve_options(None), int(n_rows) * s_prime).replace(dtype="float64")
    if block_bytes:
        options = options.replace(block_bytes=int(block_bytes))
    step = rows_within_budget(kernel, s_prime, options)

    def features(X_rows):
        rows = n_items(X_rows)
        KR = np.empty((rows, R.m))
        for start in range(0, rows, step):
            stop = min(rows, start + step)
            kernel_times_mix(kernel, take(X_rows, np.arange(start, stop)), X_sub, R, options, out=KR[start:stop])
        return KR @ UD

    return features


class SketchedFeatureMap:
    """The sketched feature map ``z(x) = D_r^{-1/2} U_r^T R k_x``.

    With ``R K R^T = U D U^T`` (rank r after the relative tolerance), the sketched
    problem with any loss is linear in ``omega`` in R^r with penalty ``||omega||^2``
    (El Ahmad et al., Fast Kernel Methods for Generic Lipschitz Losses via
    p-Sparsified Sketches, TMLR 2023, Prop. 1).
    ``transform(X) = k(X, X_sub) @ proj`` with ``proj = S_mix^T U_r D_r^{-1/2}`` (s' x r).

    Attributes
    ----------
    kernel : kernel object
        The kernel prepared on the training data.
    X_sub : ndarray, sparse matrix or InputCollection with s' items
        The sampled training points.
    proj : ndarray of shape (s', r)
    eigenvalues : ndarray of shape (r,)
    mix : ndarray or sparse matrix of shape (m, s') or None
        The sketch's mixing matrix ``S_mix`` (``proj = S_mix^T UD``), kept so that features can be computed
        as the fit does, ``(k(X, X_sub) S_mix^T) UD``, through the block engine.
    UD : ndarray of shape (m, r) or None
        ``U_r D_r^{-1/2}``.
    """

    def __init__(self, kernel, X_sub, proj, eigenvalues, mix=None, UD=None):
        self.kernel = kernel
        self.X_sub = X_sub
        self.proj = proj
        self.eigenvalues = eigenvalues
        self.mix = mix
        self.UD = UD

    @property
    def rank(self):
        return int(self.proj.shape[1])

    def transform(self, X, chunk_rows=None, options=None):
        """Features ``z(x)`` of shape (len(X), r); see :func:`kernel_times` for the options."""
        return kernel_times(self.kernel, X, self.X_sub, self.proj, chunk_rows=chunk_rows, options=options)


def build_feature_map(kernel, X, R, *, rtol=None, chunk_rows=None, progress=None, distinct=None, options=None,
                      prepared=False):
    """Draw-independent part of fitting: the feature map and the training features.

    ``rtol`` is the relative eigenvalue tolerance for ``R K R^T`` (default
    ``options.rtol``, then a size-based default); ``options``, ``chunk_rows``,
    ``progress`` and ``distinct`` are passed to :func:`sketched_gram_products`. The
    kernel is prepared on ``X`` (:func:`skframe.contract.protocols.kernel_prepare`; a fit passes
    ``prepared=True``, having bound it once) and the map keeps the prepared kernel.

    Returns
    -------
    fmap : SketchedFeatureMap
    Z : ndarray of shape (n, r)
        ``z(x_i)`` for the training points, equal to ``fmap.transform(X)``; in the
        compute precision (``options.dtype``).
    KR : ndarray of shape (n, m)
        ``K R^T``, returned for callers that need it (e.g. SISOKR).
    """
    options = resolve_options(options, chunk_rows)
    kernel = kernel if prepared else kernel_prepare(kernel, X)
    KR, RKR = sketched_gram_products(kernel, X, R, options=options, progress=progress, distinct=distinct,
                                     prepared=True)
    if rtol is None:
        rtol = options.rtol
    UD, w = spectral_projection(RKR, default_rtol(RKR.shape[0]) if rtol is None else rtol)
    Z = KR @ UD.astype(KR.dtype, copy=False)
    proj = np.asarray(R.mix.T @ UD)
    return SketchedFeatureMap(kernel, take(X, R.indices), proj, w, mix=R.mix, UD=UD), Z, KR
