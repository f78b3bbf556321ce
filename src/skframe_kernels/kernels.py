"""The built-in kernels: Gaussian, Laplacian, linear, polynomial, cosine, Tanimoto,
Gaussian-Tanimoto and precomputed.

Every kernel subclasses :class:`skframe.contract.protocols.Kernel`: ``__init__`` stores and
validates the parameters, ``kernel(X, Y=None)`` returns the dense float64 Gram
block of shape ``(len(X), len(Y))``, ``kernel.diag(X)`` its diagonal for
``Y = X``, ``kernel.params`` the JSON-serialisable constructor arguments (so
``type(kernel)(**kernel.params)`` rebuilds it) and its tags (``get_tags(kernel)``) say
whether ``k(x, x) = 1`` (``normalized``).

Inputs are 2-D NumPy arrays or ``scipy.sparse`` matrices. A sparse left operand
(the large data matrix) is never densified: inner products ``X @ Y.T`` run in a
compiled CSR x dense kernel against dense tiles of ``Y.T`` (each tile at most
:data:`DENSE_TILE_ELEMENTS` entries), or, for a very sparse ``Y``, as sparse
products in row chunks (:data:`GRAM_CHUNK_ELEMENTS` bounds the temporary sparse
block); norms are sparse row norms. The element-wise work (distances, exponentials, ratios) runs in
compiled, multi-threaded loops from :mod:`skframe_kernels._gram_numba`, or, when numba is
disabled (``SKFRAME_DISABLE_NUMBA=1``) or the work is small, in the plain NumPy loops of
:mod:`skframe_kernels._gram_numpy` (the engine is an argument, ``kernel(X, Y, engine=...)``: a fit
passes the one its execution plan chose; without it the size of the block decides); the
textbook formulas both are checked against live in ``tests/naive.py``.

Bandwidths: the Gaussian, Laplacian and Gaussian-Tanimoto kernels default to
``gamma="scale"``, set from the training data by ``kernel.prepare(X)`` (as
scikit-learn's ``SVC(gamma="scale")`` for the Gaussian kernel). An unprepared
``"scale"`` kernel called directly sets ``gamma`` from its first argument.

Capabilities (see :class:`skframe.contract.protocols.Kernel`): every kernel has
``matvec`` and ``block_bytes``, and declares its :class:`KernelTags` in ``__skframe_tags__``
(float64 and float32 blocks, thread-safe); the linear kernel's tags say ``is_linear``; the
Gaussian and Laplacian kernels provide ``spectral_sampler`` for random Fourier features.

Devices: the Gaussian, Laplacian, linear and polynomial kernels list ``"cupy"`` in their tags'
``backends``. Called with CuPy arrays (or any array of a namespace other than NumPy's), they
compute the block with that namespace (:mod:`skframe_kernels._namespace`), so a fit on a GPU asks
the kernel for its blocks like the CPU does.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from skframe.plugin.api import Interval, validate_component
from skframe.plugin.toolbox import csr_arrays
from skframe_kernels._base import BANDWIDTH, POSITIVE, _Bandwidth, _BaseKernel, _dense_moments
from skframe_kernels._gram_ops import (
    DENSE_TILE_ELEMENTS,
    DENSIFY_MIN_DENSITY,
    DIRECT_MAX_FEATURES,
    GRAM_CHUNK_ELEMENTS,
    SPARSIFY_MAX_DENSITY,
    _cross,
    _dense_tiles,
    _densify_y,
    _maybe_csr,
    _row_sums,
    _sq_row_norms,
    _to_csr_pair,
    _transpose_c,
)
from skframe_kernels._namespace import gaussian_block, laplacian_block, linear_block, polynomial_block
from skframe_kernels._precomputed import PrecomputedKernel
from skframe_kernels._tanimoto import SCALE_SAMPLE, GaussianTanimotoKernel, TanimotoKernel

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
    "SCALE_SAMPLE",
]


#: the backends of the kernels with a formula for any array namespace (skframe_kernels._namespace): called
#: with CuPy arrays, they compute their blocks on the device
DEVICE = ("numpy", "cupy")


# ----------------------------------------------------------------- kernels
class _ShiftInvariantKernel(_Bandwidth, _BaseKernel):
    """Base of the Gaussian and Laplacian kernels: functions of ``x - y`` with a bandwidth ``gamma``.

    Both are normalized (``k(x, x) = 1``), sample their spectral measure for random Fourier
    features (``spectral_sampler``), and turn ``gamma="scale"`` into ``1 / (n_features * spread)``,
    the spread of the training data being the one their distance grows with (:meth:`_spread`).
    """

    __skframe_tags__ = replace(_BaseKernel.__skframe_tags__, normalized=True, spectral_sampler=True)
    _parameter_constraints = {"gamma": BANDWIDTH}

    def __init__(self, gamma="scale"):
        self.gamma = gamma
        validate_component(self)

    def _spread(self, var):
        """The spread of the data, from the variance ``var`` of all its entries."""
        raise NotImplementedError

    def _scale_gamma(self, X):
        d, var, constant = _dense_moments(X)
        return 1.0 if constant or var <= 0 else 1.0 / (d * self._spread(var))



class GaussianKernel(_ShiftInvariantKernel):
    """Gaussian (RBF) kernel ``k(x, y) = exp(-gamma * ||x - y||^2)``.

    Registered as ``"gaussian"`` and ``"rbf"``.

    Parameters
    ----------
    gamma : float or "scale", default="scale"
        Inverse squared bandwidth, ``gamma = 1 / (2 sigma^2)``; must be > 0.
        ``"scale"``: ``prepare(X)`` sets ``gamma = 1 / (n_features * X.var())``
        (the variance of all entries of the training data, sparse data included;
        1.0 when X is constant), as scikit-learn's ``SVC(gamma="scale")``.

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
    >>> GaussianKernel().prepare(np.array([[0.0, 2.0], [2.0, 0.0]])).params
    {'gamma': 0.5}
    """

    __skframe_tags__ = replace(_ShiftInvariantKernel.__skframe_tags__, device_formula="gaussian", backends=DEVICE)
    _parameter_hints = {"gamma": "gamma is the inverse squared bandwidth 1/(2 sigma^2) of the Gaussian kernel; "
                                 "pass a positive number, e.g. 1/n_features, or 'scale' to set it from the data"}

    def _spread(self, var):
        """The variance: squared distances grow with it."""
        return var

    def spectral_sampler(self, d, m, rng):
        """``m`` frequencies of shape (m, d) from the spectral measure ``N(0, 2 gamma I)``.

        Random Fourier features ``sqrt(2/m) cos(x @ W.T + b)`` with these rows approximate
        this kernel (Rahimi and Recht, Random Features for Large-Scale Kernel Machines,
        NeurIPS 2007).
        """
        gamma = self._numeric_gamma("drawing random Fourier features")
        # drawn as (d, m) and transposed: the same stream as frequencies stored column-wise
        return rng.standard_normal((int(d), int(m))).T * np.sqrt(2.0 * gamma)

    def _xp_gram(self, xp, X, Y):
        return gaussian_block(xp, X, Y, self.gamma)

    def _gram(self, X, Y, symmetric, loops):
        if not sp.issparse(X) and not sp.issparse(Y) and X.shape[1] <= DIRECT_MAX_FEATURES:
            out = np.empty((X.shape[0], Y.shape[0]), dtype=np.float64)
            loops.sqeuclidean_exp_direct(X, _transpose_c(Y), self.gamma, out)
            return out
        xn = _sq_row_norms(X)
        yn = xn if symmetric else _sq_row_norms(Y)
        if not sp.issparse(Y):
            X = _maybe_csr(X)
        if sp.issparse(X) and (not sp.issparse(Y) or _densify_y(Y)):
            # sparse x dense tiles, fused with the norms and the exponential
            out = np.empty((X.shape[0], Y.shape[0]), dtype=np.float64)
            xp, xi, xd = csr_arrays(X)
            for j0, Yt in _dense_tiles(Y, loops):
                loops.csr_dense_sqeuclidean_exp(xp, xi, xd, Yt, xn, yn[j0 : j0 + Yt.shape[1]], self.gamma, out, j0)
        else:
            out = _cross(X, Y, loops)
            loops.sqeuclidean_exp_from_cross(out, xn, yn, self.gamma)
        if symmetric:
            np.fill_diagonal(out, 1.0)
        return out

    def _gram32(self, X, Y, symmetric, loops):
        """Dense data in single precision: differences (few features) or a float32 BLAS cross term."""
        if sp.issparse(X) or sp.issparse(Y):
            return super()._gram32(X, Y, symmetric, loops)
        out = np.empty((X.shape[0], Y.shape[0]), dtype=np.float32)
        X32 = X.astype(np.float32)
        if X.shape[1] <= DIRECT_MAX_FEATURES:
            loops.sqeuclidean_exp_direct32(X32, _transpose_c(Y).astype(np.float32), np.float32(self.gamma), out)
        else:
            xn = _sq_row_norms(X)
            yn = xn if symmetric else _sq_row_norms(Y)
            np.matmul(X32, (X32 if symmetric else Y.astype(np.float32)).T, out=out)
            loops.sqeuclidean_exp_from_cross32(out, xn, yn, self.gamma)
        if symmetric:
            np.fill_diagonal(out, 1.0)
        return out


class LaplacianKernel(_ShiftInvariantKernel):
    """Laplacian kernel ``k(x, y) = exp(-gamma * ||x - y||_1)``.

    Parameters
    ----------
    gamma : float or "scale", default="scale"
        Inverse bandwidth; must be > 0. ``"scale"``: ``prepare(X)`` sets
        ``gamma = 1 / (n_features * X.std())`` (standard deviation of all entries;
        1.0 when X is constant). The L1 distance grows like the data, not its
        square, so the standard deviation (rather than the Gaussian kernel's
        variance) keeps ``gamma * ||x - y||_1`` independent of the scale of X.

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

    __skframe_tags__ = replace(_ShiftInvariantKernel.__skframe_tags__, device_formula="laplacian", backends=DEVICE)
    _parameter_hints = {"gamma": "gamma is the inverse bandwidth of the Laplacian kernel; pass a positive number, "
                                 "or 'scale' to set it from the data"}

    def _spread(self, var):
        """The standard deviation: L1 distances grow with it, not with its square."""
        return np.sqrt(var)

    def spectral_sampler(self, d, m, rng):
        """``m`` frequencies of shape (m, d), i.i.d. Cauchy entries of scale ``gamma``.

        The Fourier transform of ``exp(-gamma ||x||_1)`` is a product of Cauchy densities
        (Rahimi and Recht, Random Features for Large-Scale Kernel Machines, NeurIPS 2007).
        """
        gamma = self._numeric_gamma("drawing random Fourier features")
        return rng.standard_cauchy((int(d), int(m))).T * gamma

    def _xp_gram(self, xp, X, Y):
        return laplacian_block(xp, X, Y, self.gamma)

    def _gram(self, X, Y, symmetric, loops):
        out = np.empty((X.shape[0], Y.shape[0]), dtype=np.float64)
        if not sp.issparse(X) and not sp.issparse(Y):
            loops.l1_exp_direct(X, _transpose_c(Y), self.gamma, out)
            return out
        (xp, xi, xd), (yp, yi, yd) = _to_csr_pair(X, Y)
        loops.csr_overlap(xp, xi, xd, yp, yi, yd, 0, out)
        ax = _row_sums(X, absolute=True)
        ay = ax if symmetric else _row_sums(Y, absolute=True)
        loops.l1_exp_from_overlap(out, ax, ay, self.gamma)
        if symmetric:
            np.fill_diagonal(out, 1.0)
        return out


class LinearKernel(_BaseKernel):
    """Linear kernel ``k(x, y) = <x, y>``.

    Takes no parameters; its tags say ``is_linear`` (structured models then use
    the outputs themselves as features).

    Examples
    --------
    >>> import numpy as np
    >>> LinearKernel()(np.array([[1.0, 2.0]]), np.array([[3.0, 4.0]])).tolist()
    [[11.0]]
    """

    __skframe_tags__ = replace(_BaseKernel.__skframe_tags__, is_linear=True, device_formula="linear",
                               backends=DEVICE)

    def __init__(self):
        pass

    def _xp_gram(self, xp, X, Y):
        return linear_block(xp, X, Y)

    def _gram(self, X, Y, symmetric, loops):
        return _cross(X, Y, loops)

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

    __skframe_tags__ = replace(_BaseKernel.__skframe_tags__, device_formula="polynomial", backends=DEVICE)

    _parameter_constraints = {"gamma": [POSITIVE], "coef0": [Interval("real", 0, None)],
                              "degree": [Interval("int", 1, None)]}
    _parameter_hints = {
        "gamma": "gamma scales <x, y> in the polynomial kernel; pass a positive number, e.g. 1/n_features",
        "coef0": "the polynomial kernel is positive semi-definite only for coef0 >= 0; pass e.g. coef0=1.0",
        "degree": "the polynomial degree must be an integer >= 1, e.g. degree=3",
    }

    def __init__(self, gamma=1.0, coef0=1.0, degree=3):
        self.gamma, self.coef0, self.degree = gamma, coef0, degree
        validate_component(self)

    def _finish(self, out):
        out *= self.gamma
        out += self.coef0
        if self.degree != 1:
            np.power(out, self.degree, out=out)
        return out

    def _xp_gram(self, xp, X, Y):
        return polynomial_block(xp, X, Y, self.gamma, self.coef0, self.degree)

    def _gram(self, X, Y, symmetric, loops):
        return self._finish(_cross(X, Y, loops))

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

    __skframe_tags__ = replace(_BaseKernel.__skframe_tags__, normalized=True)

    def __init__(self):
        pass

    def _gram(self, X, Y, symmetric, loops):
        out = _cross(X, Y, loops)
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
