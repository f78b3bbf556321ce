"""The shared base of the built-in kernels: validation, blocked ``matvec``, memory estimate, bandwidths.

Private to :mod:`skframe_kernels`; the kernels themselves live in
:mod:`skframe_kernels.kernels`.
"""

from __future__ import annotations

import copy

import numpy as np
import scipy.sparse as sp

from skframe.plugin.api import (
    Interval,
    InvalidInputError,
    InvalidParameterError,
    Kernel,
    KernelTags,
    Options,
    repr_from_params,
)
from skframe.plugin.toolbox import (
    ENGINE_PRODUCT,
    check_same_features,
    engine_matvec,
    get_array_module,
    rows_within_budget,
)
from skframe_kernels._gram_ops import _as_input, gram_loops

#: a positive real number (bandwidths, scales)
POSITIVE = Interval("real", 0, None, closed="neither")


class _BaseKernel(Kernel):
    """Shared validation and plumbing; subclasses implement ``_gram`` and ``_diag``.

    Blocks are float64 unless ``dtype=np.float32`` is asked (the tags' ``dtypes`` list both):
    kernels with a single-precision path (``_gram32``, e.g. the Gaussian kernel on dense
    data) compute in float32, the others round their float64 block once.
    :meth:`matvec` with ``options.dtype="float32"`` multiplies float32 row blocks.
    """

    _parameter_constraints = {}
    _sparse_ok = True
    # parameters only: concurrent calls share nothing they change (thread-safe)
    __skframe_tags__ = KernelTags(dtypes=("float64", "float32"), thread_safe=True)

    @property
    def params(self):
        """dict: the declared constructor parameters (``_parameter_constraints``), JSON-serialisable;
        ``type(self)(**self.params)`` rebuilds the kernel."""
        return {name: getattr(self, name) for name in self._parameter_constraints}

    __repr__ = repr_from_params

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

    def _unprepared(self):
        """True when a parameter still has to be set from data (``gamma="scale"``)."""
        return False

    def __call__(self, X, Y=None, *, dtype=None, engine=None):
        """Gram block between the rows of ``X`` and ``Y``.

        Parameters
        ----------
        X : ndarray or scipy.sparse matrix of shape (n, d)
            Left samples.
        Y : ndarray or scipy.sparse matrix of shape (m, d), optional
            Right samples; ``None`` means ``Y = X`` (the block is then symmetric).
        dtype : numpy dtype, optional
            ``np.float32`` returns a single-precision block; default float64.
        engine : {"numpy", "numba"}, optional
            Engine of the element-wise loops (a fit passes its execution plan's); None chooses
            from the size of the block (:func:`skframe.core.engine.select_engine`).

        Returns
        -------
        ndarray of shape (n, m), float64 (or float32)
            ``K[i, j] = k(X[i], Y[j])``.

        Raises
        ------
        skframe.exceptions.InvalidInputError
            On NaN/inf/empty data or when ``X`` and ``Y`` have different numbers of features.
        """
        xp = get_array_module(X)
        if xp is not np:  # device arrays (CuPy): computed with their own namespace, never copied to the host
            return self._namespace_call(xp, X, Y, dtype)
        X = self._check(X, "X")
        if self._unprepared():  # e.g. gamma="scale" on an unprepared kernel: set from the first argument
            return self.prepare(X)(X, Y, dtype=dtype, engine=engine)
        gram = self._gram32 if dtype is not None and np.dtype(dtype) == np.float32 else self._gram
        if Y is None:
            return gram(X, X, True, gram_loops(engine, X.shape[0] * X.shape[0]))
        Y = self._check(Y, "Y")
        check_same_features(X, Y)
        return gram(X, Y, False, gram_loops(engine, X.shape[0] * Y.shape[0]))

    def _namespace_call(self, xp, X, Y, dtype):
        """``k(X, Y)`` of arrays of the namespace ``xp`` (CuPy on a GPU), computed with it by :meth:`_xp_gram`."""
        dt = np.dtype(dtype or np.float64)
        X = xp.asarray(X, dtype=dt)
        Y = X if Y is None else xp.asarray(Y, dtype=dt)
        if X.ndim != 2 or Y.ndim != 2 or X.shape[1] != Y.shape[1]:
            raise InvalidInputError(f"X {tuple(X.shape)} and Y {tuple(Y.shape)} must be 2-D with the same number "
                                    "of features")
        kernel = self
        if self._unprepared():  # gamma="scale": set from the first argument, as for host arrays
            kernel = copy.copy(self)
            kernel.gamma = float(self._scale_gamma(X))
        return kernel._xp_gram(xp, X, Y)

    def _xp_gram(self, xp, X, Y):
        """The block of dense arrays of the namespace ``xp`` (kernels whose tags list ``"cupy"`` give it)."""
        raise InvalidInputError(f"{type(self).__name__} computes on NumPy arrays and SciPy sparse matrices only, "
                                f"not on arrays of {getattr(xp, '__name__', xp)}; pass host arrays "
                                "(e.g. cupy.asnumpy(X)) or fit with backend='numpy'")

    def _gram32(self, X, Y, symmetric, loops):
        """Single-precision block; default: the float64 block rounded once."""
        return self._gram(X, Y, symmetric, loops).astype(np.float32)

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

    def _gram(self, X, Y, symmetric, loops):  # pragma: no cover - abstract
        raise NotImplementedError

    def block_bytes(self, n_rows, n_cols, itemsize=8):
        """Peak bytes of one block ``k(X[:n_rows], Y[:n_cols])`` stored with ``itemsize`` bytes per entry.

        The block is computed in float64 (plus its row and column norms); a float32
        block adds its own copy. A sparse ``Y`` is also densified in tiles of at most
        ``DENSE_TILE_ELEMENTS`` entries, which this estimate leaves out.
        """
        n_rows, n_cols, itemsize = int(n_rows), int(n_cols), int(itemsize)
        out = 8 * n_rows * n_cols + 8 * (n_rows + n_cols)
        if itemsize != 8:
            out += itemsize * n_rows * n_cols
        return out

    def rows_per_block(self, n_cols, options=None):
        """Rows of ``X`` per block so that :meth:`block_bytes` stays within ``options.block_bytes``."""
        return rows_within_budget(self, n_cols, options)

    def matvec(self, X, Y, W, options=None):
        """``k(X, Y) @ W`` by the block engine, in row blocks of ``X`` within ``options.block_bytes``.

        This is the engine's product itself (:func:`skframe.plugin.toolbox.engine_matvec`), not an override:
        predictions call the engine directly (the method is marked :data:`~skframe.plugin.toolbox.ENGINE_PRODUCT`).

        Parameters
        ----------
        X : ndarray or scipy.sparse matrix of shape (n, d)
        Y : ndarray or scipy.sparse matrix of shape (m, d)
        W : ndarray of shape (m,) or (m, k)
        options : skframe.options.ComputeOptions, optional
            ``block_bytes``/``chunk_rows`` bound the block; ``dtype="float32"`` stores the
            blocks in float32 (the result then has the type of ``W`` and float32 combined);
            ``engine`` runs the loops (None: chosen from the size of the whole product).

        Returns
        -------
        ndarray of shape (n,) or (n, k)
        """
        kernel = self.prepare(X) if self._unprepared() else self
        return engine_matvec(kernel, X, kernel._check(Y, "Y"), W, options)

    setattr(matvec, ENGINE_PRODUCT, True)


def _dense_moments(X):
    """(number of features, variance of all entries, True when every entry is equal) of dense or sparse X."""
    n, d = X.shape
    if sp.issparse(X):
        N = n * d
        data = X.data
        mean = data.sum() / N
        zeros = N - data.size
        var = (np.square(data - mean).sum() + zeros * mean * mean) / N
        lo = data.min(initial=np.inf)
        hi = data.max(initial=-np.inf)
        if zeros:
            lo, hi = min(lo, 0.0), max(hi, 0.0)
        return d, float(var), bool(lo == hi)
    return d, float(X.var(dtype=np.float64)), bool(X.min() == X.max())


#: ``gamma`` of a kernel with a bandwidth: a positive number, or "scale" (set from the training data)
BANDWIDTH = [POSITIVE, Options("scale")]


class _Bandwidth:
    """Mixin for kernels with a bandwidth ``gamma`` that may be ``"scale"`` (set from the data).

    Subclasses implement ``_scale_gamma(X)`` (X validated, dense or CSR) and declare ``gamma``'s
    constraints (:data:`BANDWIDTH`) with their other parameters.
    """

    def _unprepared(self):
        return self.gamma == "scale"

    def prepare(self, X):
        """This kernel with ``gamma="scale"`` replaced by its value on the training data ``X``.

        A kernel with a numeric ``gamma`` is returned unchanged.

        Parameters
        ----------
        X : ndarray or scipy.sparse matrix of shape (n, d)
            The training data (never densified).

        Returns
        -------
        kernel
            A copy whose ``gamma`` (and ``params["gamma"]``) is a number.
        """
        if self.gamma != "scale":
            return self
        prepared = copy.copy(self)
        prepared.gamma = float(self._scale_gamma(self._check(X, "X")))
        return prepared

    def _numeric_gamma(self, what):
        if self.gamma == "scale":
            raise InvalidParameterError(
                f"{type(self).__name__}(gamma='scale') has no numeric gamma yet; call kernel.prepare(X_train) "
                f"before {what}"
            )
        return self.gamma
