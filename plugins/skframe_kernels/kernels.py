"""The built-in kernels: Gaussian, Laplacian, linear, polynomial, cosine, Tanimoto,
Gaussian-Tanimoto and precomputed.

Every kernel subclasses :class:`skframe.protocols.Kernel`: ``__init__`` stores and
validates the parameters, ``kernel(X, Y=None)`` returns the dense float64 Gram
block of shape ``(len(X), len(Y))``, ``kernel.diag(X)`` its diagonal for
``Y = X``, ``kernel.params`` the JSON-serialisable constructor arguments (so
``type(kernel)(**kernel.params)`` rebuilds it) and ``kernel.normalized`` says
whether ``k(x, x) = 1``.

Inputs are 2-D NumPy arrays or ``scipy.sparse`` matrices. A sparse left operand
(the large data matrix) is never densified: inner products ``X @ Y.T`` run in a
compiled CSR x dense kernel against dense tiles of ``Y.T`` (each tile at most
:data:`DENSE_TILE_ELEMENTS` entries), or, for a very sparse ``Y``, as sparse
products in row chunks (:data:`GRAM_CHUNK_ELEMENTS` bounds the temporary sparse
block); norms are sparse row norms. The element-wise work (distances, exponentials, ratios) runs in
compiled, multi-threaded loops from :mod:`skframe_kernels._gram_numba`; the plain
formulas they are checked against live in ``tests/naive.py``.
"""

from __future__ import annotations

import os

import numpy as np
import scipy.sparse as sp

from skframe.exceptions import DataFormatError, InvalidInputError, InvalidParameterError
from skframe.protocols import Kernel
from skframe.validation import as_float_array, check_same_features, check_scalar

from . import _gram_numba as _nb

__all__ = [
    "GaussianKernel",
    "LaplacianKernel",
    "LinearKernel",
    "PolynomialKernel",
    "CosineKernel",
    "TanimotoKernel",
    "GaussianTanimotoKernel",
    "PrecomputedKernel",
    "GRAM_CHUNK_ELEMENTS",
    "DIRECT_MAX_FEATURES",
    "DENSE_TILE_ELEMENTS",
    "DENSIFY_MIN_DENSITY",
    "SPARSIFY_MAX_DENSITY",
]

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

_TANIMOTO_VARIANTS = ("dot", "minmax")


# ----------------------------------------------------------------- helpers


def _check_positive(value, name, fix):
    return check_scalar(value, name, kind=float, low=0.0, low_inclusive=False, fix=fix)


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


def _csr_arrays(Z):
    """``(indptr, indices, data)`` of a canonical CSR matrix as int64/int64/float64 arrays."""
    Z = Z if sp.isspmatrix_csr(Z) or isinstance(Z, sp.csr_array) else Z.tocsr()
    return (np.asarray(Z.indptr, dtype=np.int64), np.asarray(Z.indices, dtype=np.int64),
            np.ascontiguousarray(Z.data, dtype=np.float64))


def _densify_y(Y):
    """True when the sparse right operand is dense enough to go through dense tiles of ``Y.T``."""
    m, d = Y.shape
    return m * d > 0 and Y.nnz >= DENSIFY_MIN_DENSITY * m * d


def _dense_tiles(Y):
    """Yield ``(j0, Yt)``: ``Yt`` is ``Y[j0 : j0 + w].T`` as a dense C-contiguous (d, w) array.

    A dense ``Y`` gives one tile (its transposed copy); a sparse one is scattered tile by
    tile, each of at most :data:`DENSE_TILE_ELEMENTS` entries.
    """
    m, d = Y.shape
    if not sp.issparse(Y):
        yield 0, _transpose_c(Y)
        return
    yp, yi, yd = _csr_arrays(Y)
    step = max(1, int(DENSE_TILE_ELEMENTS) // max(1, d))
    for j0 in range(0, m, step):
        j1 = min(m, j0 + step)
        Yt = np.zeros((d, j1 - j0))
        _nb.csr_rows_to_dense_t(yp, yi, yd, j0, j1, Yt)
        yield j0, Yt


def _maybe_csr(X):
    """``X`` as CSR when it is a dense array that is mostly zeros (see :data:`SPARSIFY_MAX_DENSITY`)."""
    if sp.issparse(X) or X.shape[1] <= DIRECT_MAX_FEATURES or X.size == 0:
        return X
    if np.count_nonzero(X) <= SPARSIFY_MAX_DENSITY * X.size:
        return sp.csr_matrix(X)
    return X


def _cross(X, Y):
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
        _nb.dense_csr_cross(X, *_csr_arrays(Y), out)
        return out
    if not sp.issparse(Y) or _densify_y(Y):
        xp, xi, xd = _csr_arrays(X)
        for j0, Yt in _dense_tiles(Y):
            _nb.csr_dense_cross(xp, xi, xd, Yt, out, j0)
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
        return Z.indptr.astype(np.int64), Z.indices.astype(np.int64), np.ascontiguousarray(Z.data, dtype=np.float64)

    return conv(X), conv(Y)


def _transpose_c(Y):
    return np.ascontiguousarray(Y.T)


class _BaseKernel(Kernel):
    """Shared validation and plumbing; subclasses implement ``_gram`` and ``_diag``."""

    _param_names: tuple = ()
    _sparse_ok = True

    @property
    def params(self):
        """dict: constructor parameters, JSON-serialisable; ``type(self)(**self.params)`` rebuilds the kernel."""
        return {name: getattr(self, name) for name in self._param_names}

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other):
        return type(self) is type(other) and self.params == other.params

    def __hash__(self):
        return hash((type(self).__name__, repr(self)))

    def _check(self, X, name):
        X = _as_input(X, name)
        if sp.issparse(X) and not self._sparse_ok:
            raise InvalidInputError(
                f"{name} is a sparse matrix but {type(self).__name__} needs dense data; call {name}.toarray()"
            )
        return X

    def __call__(self, X, Y=None):
        """Gram block between the rows of ``X`` and ``Y``.

        Parameters
        ----------
        X : ndarray or scipy.sparse matrix of shape (n, d)
            Left samples.
        Y : ndarray or scipy.sparse matrix of shape (m, d), optional
            Right samples; ``None`` means ``Y = X`` (the block is then symmetric).

        Returns
        -------
        ndarray of shape (n, m), float64
            ``K[i, j] = k(X[i], Y[j])``.

        Raises
        ------
        skframe.exceptions.InvalidInputError
            On NaN/inf/empty data or when ``X`` and ``Y`` have different numbers of features.
        """
        X = self._check(X, "X")
        if Y is None:
            return self._gram(X, X, True)
        Y = self._check(Y, "Y")
        check_same_features(X, Y)
        return self._gram(X, Y, False)

    def diag(self, X):
        """``k(x_i, x_i)`` for every row of ``X``.

        Parameters
        ----------
        X : ndarray or scipy.sparse matrix of shape (n, d)

        Returns
        -------
        ndarray of shape (n,), float64
        """
        return self._diag(self._check(X, "X"))

    def _diag(self, X):
        return np.ones(X.shape[0], dtype=np.float64)

    def _gram(self, X, Y, symmetric):  # pragma: no cover - abstract
        raise NotImplementedError


# ----------------------------------------------------------------- kernels


class GaussianKernel(_BaseKernel):
    """Gaussian (RBF) kernel ``k(x, y) = exp(-gamma * ||x - y||^2)``.

    Registered as ``"gaussian"`` and ``"rbf"``.

    Parameters
    ----------
    gamma : float, default=1.0
        Inverse squared bandwidth, ``gamma = 1 / (2 sigma^2)``; must be > 0.

    Notes
    -----
    Dense data with at most :data:`DIRECT_MAX_FEATURES` features: distances are
    summed directly in compiled code fused with the exponential. Otherwise
    ``||x||^2 + ||y||^2 - 2 <x, y>`` with the cross term from BLAS or a sparse
    product (clamped at 0); for sparse ``X`` the CSR x dense-tile product is fused
    with the exponential. A sparse ``X`` is never densified.

    Examples
    --------
    >>> import numpy as np
    >>> k = GaussianKernel(gamma=0.5)
    >>> K = k(np.zeros((2, 3)), np.ones((1, 3)))
    >>> K.shape, bool(np.allclose(K, np.exp(-1.5)))
    ((2, 1), True)
    """

    normalized = True
    _param_names = ("gamma",)

    def __init__(self, gamma=1.0):
        self.gamma = _check_positive(
            gamma,
            "gamma",
            "gamma is the inverse squared bandwidth 1/(2 sigma^2) of the Gaussian kernel; "
            "pass a positive number, e.g. 1/n_features",
        )

    def _gram(self, X, Y, symmetric):
        if not sp.issparse(X) and not sp.issparse(Y) and X.shape[1] <= DIRECT_MAX_FEATURES:
            out = np.empty((X.shape[0], Y.shape[0]), dtype=np.float64)
            _nb.sqeuclidean_exp_direct(X, _transpose_c(Y), self.gamma, out)
            return out
        xn = _sq_row_norms(X)
        yn = xn if symmetric else _sq_row_norms(Y)
        if not sp.issparse(Y):
            X = _maybe_csr(X)
        if sp.issparse(X) and (not sp.issparse(Y) or _densify_y(Y)):
            # sparse x dense tiles, fused with the norms and the exponential
            out = np.empty((X.shape[0], Y.shape[0]), dtype=np.float64)
            xp, xi, xd = _csr_arrays(X)
            for j0, Yt in _dense_tiles(Y):
                _nb.csr_dense_sqeuclidean_exp(xp, xi, xd, Yt, xn, yn[j0 : j0 + Yt.shape[1]], self.gamma, out, j0)
        else:
            out = _cross(X, Y)
            _nb.sqeuclidean_exp_from_cross(out, xn, yn, self.gamma)
        if symmetric:
            np.fill_diagonal(out, 1.0)
        return out


class LaplacianKernel(_BaseKernel):
    """Laplacian kernel ``k(x, y) = exp(-gamma * ||x - y||_1)``.

    Parameters
    ----------
    gamma : float, default=1.0
        Inverse bandwidth; must be > 0.

    Notes
    -----
    Dense data: L1 distances summed in compiled code. Sparse data: only the
    common non-zero columns of each pair are visited, using
    ``||x - y||_1 = sum|x| + sum|y| - sum_common (|u| + |v| - |u - v|)``.

    Examples
    --------
    >>> import numpy as np
    >>> float(LaplacianKernel(gamma=1.0)(np.array([[0.0, 0.0]]), np.array([[1.0, -1.0]]))[0, 0]) == float(np.exp(-2.0))
    True
    """

    normalized = True
    _param_names = ("gamma",)

    def __init__(self, gamma=1.0):
        self.gamma = _check_positive(
            gamma, "gamma", "gamma is the inverse bandwidth of the Laplacian kernel; pass a positive number"
        )

    def _gram(self, X, Y, symmetric):
        out = np.empty((X.shape[0], Y.shape[0]), dtype=np.float64)
        if not sp.issparse(X) and not sp.issparse(Y):
            _nb.l1_exp_direct(X, _transpose_c(Y), self.gamma, out)
            return out
        (xp, xi, xd), (yp, yi, yd) = _to_csr_pair(X, Y)
        _nb.csr_overlap(xp, xi, xd, yp, yi, yd, 0, out)
        ax = _row_sums(X, absolute=True)
        ay = ax if symmetric else _row_sums(Y, absolute=True)
        _nb.l1_exp_from_overlap(out, ax, ay, self.gamma)
        if symmetric:
            np.fill_diagonal(out, 1.0)
        return out


class LinearKernel(_BaseKernel):
    """Linear kernel ``k(x, y) = <x, y>``.

    Takes no parameters.

    Examples
    --------
    >>> import numpy as np
    >>> LinearKernel()(np.array([[1.0, 2.0]]), np.array([[3.0, 4.0]])).tolist()
    [[11.0]]
    """

    def __init__(self):
        pass

    def _gram(self, X, Y, symmetric):
        return _cross(X, Y)

    def _diag(self, X):
        return _sq_row_norms(X)


class PolynomialKernel(_BaseKernel):
    """Polynomial kernel ``k(x, y) = (gamma * <x, y> + coef0) ** degree``.

    Parameters
    ----------
    gamma : float, default=1.0
        Scale of the inner product; must be > 0.
    coef0 : float, default=1.0
        Offset; must be >= 0 (a negative offset makes the kernel indefinite).
    degree : int, default=3
        Degree; an integer >= 1.

    Examples
    --------
    >>> import numpy as np
    >>> PolynomialKernel(gamma=1.0, coef0=1.0, degree=2)(np.array([[1.0, 1.0]])).tolist()
    [[9.0]]
    """

    _param_names = ("gamma", "coef0", "degree")

    def __init__(self, gamma=1.0, coef0=1.0, degree=3):
        self.gamma = _check_positive(
            gamma, "gamma", "gamma scales <x, y> in the polynomial kernel; pass a positive number, e.g. 1/n_features"
        )
        self.coef0 = check_scalar(
            coef0, "coef0", kind=float, low=0.0,
            fix="the polynomial kernel is positive semi-definite only for coef0 >= 0; pass e.g. coef0=1.0",
        )
        self.degree = check_scalar(
            degree, "degree", kind=int, low=1, fix="the polynomial degree must be an integer >= 1, e.g. degree=3"
        )

    def _finish(self, out):
        out *= self.gamma
        out += self.coef0
        if self.degree != 1:
            np.power(out, self.degree, out=out)
        return out

    def _gram(self, X, Y, symmetric):
        return self._finish(_cross(X, Y))

    def _diag(self, X):
        return self._finish(_sq_row_norms(X))


class CosineKernel(_BaseKernel):
    """Cosine similarity ``k(x, y) = <x, y> / (||x|| ||y||)``.

    By convention ``k(0, 0) = 1`` and ``k(0, y) = 0`` for ``y != 0``, which keeps the
    kernel positive semi-definite and normalized (``k(x, x) = 1`` for every x).
    Takes no parameters.

    Examples
    --------
    >>> import numpy as np
    >>> CosineKernel()(np.array([[1.0, 0.0], [0.0, 0.0]]), np.array([[2.0, 0.0], [0.0, 0.0]])).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """

    normalized = True

    def __init__(self):
        pass

    def _gram(self, X, Y, symmetric):
        out = _cross(X, Y)
        nx = np.sqrt(_sq_row_norms(X))
        ny = nx if symmetric else np.sqrt(_sq_row_norms(Y))
        zx, zy = nx == 0, ny == 0
        with np.errstate(divide="ignore"):
            ix = np.where(zx, 0.0, 1.0 / nx)
            iy = np.where(zy, 0.0, 1.0 / ny)
        out *= ix[:, None]
        out *= iy[None, :]
        if zx.any() and zy.any():
            out[np.ix_(zx, zy)] = 1.0
        if symmetric:
            np.fill_diagonal(out, 1.0)
        return out


def _check_variant(variant):
    if variant not in _TANIMOTO_VARIANTS:
        raise InvalidParameterError(
            f"variant={variant!r} is not a Tanimoto variant; choose 'dot' "
            "(<x,y> / (|x|^2 + |y|^2 - <x,y>), binary or real vectors) or 'minmax' "
            "(sum min / sum max, non-negative counts)"
        )
    return variant


def _tanimoto_block(X, Y, symmetric, variant):
    """Tanimoto similarities of every pair; see :class:`TanimotoKernel`."""
    if variant == "dot":
        out = _cross(X, Y)
        xn = _sq_row_norms(X)
        yn = xn if symmetric else _sq_row_norms(Y)
        _nb.tanimoto_from_cross(out, xn, yn)
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
            _nb.min_sum_direct(X, _transpose_c(Y), out)
        else:
            (xp, xi, xd), (yp, yi, yd) = _to_csr_pair(X, Y)
            _nb.csr_overlap(xp, xi, xd, yp, yi, yd, 1, out)
        sx = _row_sums(X)
        sy = sx if symmetric else _row_sums(Y)
        _nb.minmax_from_min(out, sx, sy)
    if symmetric:
        np.fill_diagonal(out, 1.0)
    return out


class TanimotoKernel(_BaseKernel):
    """Tanimoto (Jaccard) kernel for fingerprints and count vectors.

    ``variant="dot"`` (default): ``k(x, y) = <x, y> / (||x||^2 + ||y||^2 - <x, y>)``,
    the intersection-over-union ``|x & y| / |x | y|`` on binary fingerprints and the
    continuous Tanimoto kernel on real vectors.

    ``variant="minmax"``: ``k(x, y) = sum_k min(x_k, y_k) / sum_k max(x_k, y_k)`` for
    non-negative counts (negative entries raise :class:`~skframe.exceptions.InvalidInputError`).

    Both variants define ``k(0, 0) = 1`` (the only case where the denominator
    vanishes), so the kernel is normalized. Both are positive semi-definite.

    Parameters
    ----------
    variant : {"dot", "minmax"}, default="dot"
        Which formula to use.

    Examples
    --------
    >>> import numpy as np
    >>> TanimotoKernel()(np.array([[1.0, 1.0, 0.0]]), np.array([[1.0, 0.0, 1.0]])).tolist()
    [[0.3333333333333333]]
    """

    normalized = True
    _param_names = ("variant",)

    def __init__(self, variant="dot"):
        self.variant = _check_variant(variant)

    def _gram(self, X, Y, symmetric):
        return _tanimoto_block(X, Y, symmetric, self.variant)


class GaussianTanimotoKernel(_BaseKernel):
    """Gaussian-Tanimoto kernel ``k(x, y) = exp(-gamma * (2 - 2 T(x, y)))``.

    ``T`` is the Tanimoto kernel (:class:`TanimotoKernel`, same ``variant``) and
    ``2 - 2 T(x, y) = ||phi(x) - phi(y)||^2`` is the squared distance between
    ``x`` and ``y`` in the feature space of ``T`` (``T(x, x) = 1``), so this is a
    Gaussian kernel on top of the Tanimoto feature map. With the width
    ``sigma^2`` used by the paper, ``gamma = 1 / (2 sigma^2)`` and
    ``k(x, y) = exp(-(1 - T(x, y)) / sigma^2)``.

    This is the output kernel of the metabolite-identification experiment of
    seed 003 (El Ahmad, Brogat-Motte, Laforgue, d'Alché-Buc, "Sketch in, sketch out",
    §5 Experiments: "Gaussian-Tanimoto output kernel (Ralaivola et al., 2005) – with
    width sigma^2 – for the molecular fingerprints"). The seed does not spell the
    formula out; the form above is the standard one (Ralaivola et al., 2005;
    Brouard et al., 2016).

    Parameters
    ----------
    gamma : float, default=1.0
        ``1 / (2 sigma^2)``; must be > 0.
    variant : {"dot", "minmax"}, default="dot"
        Tanimoto variant, see :class:`TanimotoKernel`.

    Examples
    --------
    >>> import numpy as np
    >>> K = GaussianTanimotoKernel(gamma=0.5)(np.array([[1.0, 1.0, 0.0]]), np.array([[1.0, 0.0, 1.0]]))
    >>> bool(np.isclose(K[0, 0], np.exp(-(1 - 1 / 3))))
    True
    """

    normalized = True
    _param_names = ("gamma", "variant")

    def __init__(self, gamma=1.0, variant="dot"):
        self.gamma = _check_positive(
            gamma, "gamma",
            "gamma = 1/(2 sigma^2) sets the width of the Gaussian-Tanimoto kernel; pass a positive number",
        )
        self.variant = _check_variant(variant)

    def _gram(self, X, Y, symmetric):
        out = _tanimoto_block(X, Y, symmetric, self.variant)
        _nb.affine_exp(out, 2.0 * self.gamma, -2.0 * self.gamma)
        if symmetric:
            np.fill_diagonal(out, 1.0)
        return out


class PrecomputedKernel(_BaseKernel):
    """A kernel read from a precomputed Gram matrix over a fixed set of samples.

    Data rows carry an integer sample id in column 0 (other columns are ignored)
    and ``k(a, b) = gram[id_a, id_b]``. Use it for kernels skframe cannot compute
    (graph kernels, string kernels, ...): pass ``X = np.arange(n)[:, None]`` (or the
    ids of the rows you use) as the data.

    Parameters
    ----------
    gram : array-like of shape (N, N) or str or os.PathLike
        The Gram matrix over all N samples, or the path to a ``.npy`` file holding it.
        It must be square and finite; positive semi-definiteness is not checked.

    Notes
    -----
    ``params`` is ``{"gram": path}`` when built from a path and ``{"gram": nested lists}``
    when built from an array (JSON-serialisable, but large: prefer a path for big matrices).

    Examples
    --------
    >>> import numpy as np
    >>> k = PrecomputedKernel(gram=np.array([[1.0, 0.5], [0.5, 2.0]]))
    >>> k(np.array([[1], [0]]), np.array([[1]])).tolist()
    [[2.0], [0.5]]
    """

    _param_names = ("gram",)

    def __init__(self, gram):
        if isinstance(gram, (str, os.PathLike)):
            path = os.fspath(gram)
            if not os.path.isfile(path):
                raise InvalidParameterError(f"gram={path!r} is not an existing file; pass the path to a .npy Gram matrix")
            try:
                matrix = np.load(path, allow_pickle=False)
            except (ValueError, OSError) as exc:
                raise DataFormatError(f"gram={path!r} is not a readable .npy array ({exc}); save it with numpy.save") from exc
            self._gram_source = path
        else:
            matrix = gram
            self._gram_source = None
        try:
            matrix = np.array(matrix, dtype=np.float64, order="C")
        except (TypeError, ValueError) as exc:
            raise InvalidParameterError(f"gram cannot be converted to a float array ({exc}); pass a numeric (N, N) array") from exc
        if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or matrix.shape[0] == 0:
            raise InvalidParameterError(f"gram has shape {matrix.shape}; a precomputed Gram matrix must be square (N, N) with N >= 1")
        if not np.all(np.isfinite(matrix)):
            raise InvalidParameterError("gram contains NaN or inf entries; a precomputed Gram matrix must be finite")
        self.gram_ = matrix

    @property
    def params(self):
        """dict: ``{"gram": path}`` or ``{"gram": nested lists}``; JSON-serialisable."""
        return {"gram": self._gram_source if self._gram_source is not None else self.gram_.tolist()}

    def __repr__(self):
        src = repr(self._gram_source) if self._gram_source is not None else f"<array {self.gram_.shape}>"
        return f"PrecomputedKernel(gram={src})"

    def _ids(self, X, name):
        col = X[:, 0].toarray().ravel() if sp.issparse(X) else X[:, 0]
        ids = col.astype(np.int64)
        n = self.gram_.shape[0]
        if np.any(ids != col) or np.any(ids < 0) or np.any(ids >= n):
            bad = col[(ids != col) | (ids < 0) | (ids >= n)][0]
            raise InvalidInputError(
                f"{name}[:, 0] holds sample id {bad!r}, but ids must be integers in [0, {n}) indexing the "
                f"precomputed Gram matrix; put each row's sample id in column 0"
            )
        return ids

    def __call__(self, X, Y=None):
        """Gram block ``gram[id(X), id(Y)]`` (ids read from column 0).

        Parameters
        ----------
        X : array-like of shape (n, d), d >= 1
        Y : array-like of shape (m, d'), optional
            ``None`` means ``Y = X``.

        Returns
        -------
        ndarray of shape (n, m), float64
        """
        ia = self._ids(_as_input(X, "X"), "X")
        ib = ia if Y is None else self._ids(_as_input(Y, "Y"), "Y")
        return np.ascontiguousarray(self.gram_[np.ix_(ia, ib)])

    def diag(self, X):
        """``gram[id_i, id_i]`` for every row of ``X``.

        Parameters
        ----------
        X : array-like of shape (n, d)

        Returns
        -------
        ndarray of shape (n,), float64
        """
        ia = self._ids(_as_input(X, "X"), "X")
        return self.gram_[ia, ia].copy()
