"""Output bases for output kernel regression: where surrogate predictions live.

Every structured model of skframe predicts ``g(x)`` in R^p, the coordinates of
the surrogate estimator ``h(x)`` in a basis ``(e_1, ..., e_p)`` of a subspace of
the output RKHS, and decodes by a maximum inner-product search of ``g(x)``
against the candidate embeddings ``psi_tilde(c) = (<e_j, psi(c)>)_j``.

Two bases implement the same small interface (:class:`OutputBasis`):

:class:`SketchedOutputBasis`
    The sketched basis of El Ahmad et al., "Sketch In, Sketch Out" (AISTATS 2024), eq. (7)
    (also El Ahmad, PhD thesis 2024, Prop. 5.2 / 5.5): with
    ``K~_Y = R_Y K_Y R_Y^T = U D U^T`` (rank p after a relative tolerance), the
    orthonormal basis ``e_j = sum_i [R_Y^T U D^{-1/2}]_ij psi(y_i)`` gives
    ``psi_tilde(y) = D^{-1/2} U^T R_Y k_Y^y``. Training targets are
    ``Psi = K_Y R_Y^T U D^{-1/2}`` (n x p), computed with the decomposition
    trick (the output kernel is evaluated on the s' sampled outputs only).
    It does not depend on the input model and is ready for a neural one (DSOKR).

:class:`TrainingOutputBasis`
    No output sketch (IOKR, SIOKR): the span of the distinct training outputs
    ``u_1..u_q``. Coordinates are the coefficients on ``psi(u_l)``, the basis is
    not orthonormal (its Gram is ``K_Y(U, U)``), and a candidate embeds as the
    dual vector ``k_Y(U, c)`` so that ``<h, psi(c)> = g . embed(c)`` still holds.

For both, ``<h(x), psi(c)> = g(x) . embed(c)`` and
``||h(x)||^2 = g(x)^T gram g(x)`` (``gram=None`` meaning the identity).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from skframe.contract.collections import is_collection, n_items
from skframe.contract.protocols import kernel_block, kernel_diag
from skframe.contract.tags import get_tags
from skframe.core.feature_map import build_feature_map, kernel_times
from skframe.core.sketching import default_chunk_rows

__all__ = ["OutputBasis", "SketchedOutputBasis", "TrainingOutputBasis", "unique_rows", "kernel_is_normalized"]


def kernel_is_normalized(kernel):
    """True when ``k(y, y) = 1`` for all y is declared by the kernel (``normalized`` attribute)."""
    return get_tags(kernel, "kernel").normalized


def unique_rows(Y):
    """Distinct rows of a dense or sparse matrix, in order of first appearance.

    Returns
    -------
    U : ndarray or CSR matrix of shape (q, d)
        The distinct rows (same kind as ``Y``).
    first : ndarray of shape (q,)
        Row of ``Y`` where each distinct row first appears.
    inverse : ndarray of shape (n,)
        ``Y[i] == U[inverse[i]]``.
    """
    if is_collection(Y):  # graphs, strings: items with the same stored representation are the same output
        keys = Y.item_keys() if hasattr(Y, "item_keys") else range(len(Y))
        seen = {}
        inverse = np.fromiter((seen.setdefault(k, len(seen)) for k in keys), dtype=np.int64, count=len(Y))
        first = np.full(len(seen), len(Y), dtype=np.int64)
        np.minimum.at(first, inverse, np.arange(len(Y)))
        return Y.take(first), first, inverse
    dense = Y.toarray() if sp.issparse(Y) else np.asarray(Y)
    # + 0.0 maps -0.0 to 0.0, so that byte-equal rows are exactly the equal rows (inputs are finite)
    rows = np.ascontiguousarray(dense.reshape(dense.shape[0], -1) + 0.0)
    seen = {}
    inverse = np.fromiter((seen.setdefault(r.tobytes(), len(seen)) for r in rows), dtype=np.int64,
                          count=rows.shape[0])
    first = np.full(len(seen), rows.shape[0], dtype=np.int64)
    np.minimum.at(first, inverse, np.arange(rows.shape[0]))
    return Y[first], first, inverse


class OutputBasis:
    """Interface of an output basis (see the module docstring).

    Attributes
    ----------
    kernel : kernel object
        The output kernel.
    n_components : int
        Dimension p of the coordinates ``g(x)``.
    gram : ndarray of shape (p, p) or None
        Gram matrix of the basis; None when it is orthonormal.
    normalized : bool
        True when the output kernel declares ``k(y, y) = 1``.
    """

    gram = None

    def embed(self, Y, chunk_rows=None):
        """Embedding ``(<e_j, psi(y)>)_j`` of each row of ``Y``, shape (len(Y), p)."""
        raise NotImplementedError

    def self_kernel(self, Y):
        """``k_Y(y, y)`` for each row (ones for a normalised kernel)."""
        if self.normalized:
            return np.ones(Y.shape[0])
        return kernel_diag(self.kernel, Y)

    def sq_norm(self, G):
        """``||h||^2`` for coordinates G of shape (n, p)."""
        if self.gram is None:
            return np.einsum("ij,ij->i", G, G)
        return np.einsum("ij,ij->i", G @ self.gram, G)

    def vectors(self):
        """The basis vectors as rows in the output space (p, d): meaningful for a linear output kernel."""
        raise NotImplementedError


class SketchedOutputBasis(OutputBasis):
    """Orthonormal sketched output basis ``psi_tilde(y) = D^{-1/2} U^T R_Y k_Y^y``.

    El Ahmad, "Learning Deep Kernel Networks: Application to Efficient and Robust Structured
    Prediction", PhD thesis, Institut Polytechnique de Paris 2024, Prop. 5.5.

    Build it with :meth:`fit`.

    Attributes
    ----------
    Y_sub : ndarray or sparse matrix of shape (s', d)
        The sampled training outputs (the non-null columns of R_Y).
    proj : ndarray of shape (s', p)
        ``S_mix^T U D^{-1/2}``, so that ``psi_tilde(y) = k_Y(y, Y_sub) @ proj``.
    eigenvalues : ndarray of shape (p,)
        Kept eigenvalues of ``K~_Y`` (descending).
    sketch_info : dict
    """

    def __init__(self, kernel, Y_sub, proj, eigenvalues, sketch_info=None):
        self.kernel = kernel
        self.Y_sub = Y_sub
        self.proj = proj
        self.eigenvalues = eigenvalues
        self.sketch_info = dict(sketch_info or {})
        self.normalized = kernel_is_normalized(kernel)

    @property
    def n_components(self):
        return int(self.proj.shape[1])

    @classmethod
    def fit(cls, kernel, Y, R, *, rtol=None, distinct=None, n_components=None):
        """Eigendecompose ``R K_Y R^T`` and return ``(basis, Psi_train)``.

        Parameters
        ----------
        kernel : kernel object
        Y : ndarray or sparse matrix of shape (n, d)
            Training outputs.
        R : skframe.core.sketching.SketchMatrix
            The output sketch (m_Y x n).
        rtol : float, optional
            Relative eigenvalue tolerance (eigenvalues ``<= rtol * max`` are dropped).
        distinct : tuple (first, inverse), optional
            The distinct rows of Y (:func:`unique_rows`): the output kernel is then only
            evaluated on them, which pays off when label sets repeat.
        n_components : int, optional
            Keep at most this many directions, those of the largest eigenvalues of ``R K_Y R^T``
            (p_Y <= m_Y in the thesis's Alg. 5.1): a large sketch estimates the output subspace
            well, and the network then predicts only its leading coordinates.

        Returns
        -------
        basis : SketchedOutputBasis
        Psi : ndarray of shape (n, p)
            ``psi_tilde(y_i)`` for the training outputs, ``K_Y R^T U D^{-1/2}``.
        """
        # psi~ is the sketched feature map (El Ahmad et al., TMLR 2023, Prop. 1) applied to the outputs
        fmap, Psi, _ = build_feature_map(kernel, Y, R, rtol=rtol, distinct=distinct)
        info = R.summary()
        info["rank"] = fmap.rank
        proj, w = fmap.proj, fmap.eigenvalues
        if n_components is not None and int(n_components) < w.size:
            k = int(n_components)  # eigenvalues come in descending order
            proj, w, Psi = proj[:, :k], w[:k], np.ascontiguousarray(Psi[:, :k])
            info["n_components"] = k
        # C-contiguous arrays: a saved and reloaded basis embeds bit-identically
        return cls(kernel, fmap.X_sub, np.ascontiguousarray(proj), np.ascontiguousarray(w), info), Psi

    def embed(self, Y, chunk_rows=None):
        return kernel_times(self.kernel, Y, self.Y_sub, self.proj, chunk_rows=chunk_rows)

    def vectors(self):
        Ys = self.Y_sub.toarray() if sp.issparse(self.Y_sub) else np.asarray(self.Y_sub)
        return self.proj.T @ Ys


class TrainingOutputBasis(OutputBasis):
    """The (non-orthonormal) basis of the distinct training outputs, used without an output sketch.

    Attributes
    ----------
    Y_unique : ndarray or sparse matrix of shape (q, d)
        Distinct training outputs.
    inverse : ndarray of shape (n,)
        ``Y[i] == Y_unique[inverse[i]]``.
    gram : ndarray of shape (q, q)
        ``K_Y(Y_unique, Y_unique)``.
    """

    def __init__(self, kernel, Y_unique, inverse, gram):
        self.kernel = kernel
        self.Y_unique = Y_unique
        self.inverse = inverse
        self.gram = gram
        self.normalized = kernel_is_normalized(kernel)
        self.sketch_info = {"name": "none", "m": int(Y_unique.shape[0]), "n": int(inverse.shape[0])}

    @property
    def n_components(self):
        return int(self.Y_unique.shape[0])

    @classmethod
    def fit(cls, kernel, Y):
        """Return ``(basis, T)`` where ``T`` (n x q) is the one-hot map of each training output."""
        U, _, inverse = unique_rows(Y)
        gram = kernel_block(kernel, U, U)
        gram = 0.5 * (gram + gram.T)
        n, q = len(inverse), n_items(U)
        T = np.zeros((n, q))
        T[np.arange(n), inverse] = 1.0
        return cls(kernel, U, inverse, gram), T

    def embed(self, Y, chunk_rows=None):
        n_c = Y.shape[0]
        out = np.empty((n_c, self.n_components))

        step = chunk_rows or default_chunk_rows(self.n_components)
        for start in range(0, n_c, step):
            stop = min(n_c, start + step)
            out[start:stop] = kernel_block(self.kernel, Y[start:stop], self.Y_unique)
        return out

    def vectors(self):
        return self.Y_unique.toarray() if sp.issparse(self.Y_unique) else np.asarray(self.Y_unique)
