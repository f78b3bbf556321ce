"""The precomputed kernel: a Gram matrix read from memory or a ``.npy`` file."""

from __future__ import annotations

import os

import numpy as np
import scipy.sparse as sp

from skframe.exceptions import DataFormatError
from skframe.plugin.api import InvalidInputError, InvalidParameterError
from skframe_kernels._base import _BaseKernel
from skframe_kernels._gram_ops import _as_input

__all__ = ["PrecomputedKernel"]


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
    ``params`` is ``{"gram": the matrix}`` (a float64 array) however the kernel was built: a
    saved model keeps the matrix itself, as an array of its file, and never the path it was
    read from, so it predicts the same after that file is changed, moved or deleted.

    Examples
    --------
    >>> import numpy as np
    >>> k = PrecomputedKernel(gram=np.array([[1.0, 0.5], [0.5, 2.0]]))
    >>> k(np.array([[1], [0]]), np.array([[1]])).tolist()
    [[2.0], [0.5]]
    """

    #: parameters read from a file when given a path: a model file must hold their contents (skframe.load refuses
    #: a model whose ``gram`` is a string, so that loading a model never reads another file)
    path_params = ("gram",)

    def __init__(self, gram):
        if isinstance(gram, (str, os.PathLike)):
            path = os.fspath(gram)
            if not os.path.isfile(path):
                raise InvalidParameterError(
                    f"gram={path!r} is not an existing file; pass the path to a .npy Gram matrix"
                )
            try:
                matrix = np.load(path, allow_pickle=False)
            except (ValueError, OSError) as exc:
                raise DataFormatError(
                    f"gram={path!r} is not a readable .npy array ({exc}); save it with numpy.save"
                ) from exc
            self._gram_source = path
        else:
            matrix = gram
            self._gram_source = None
        try:
            matrix = np.array(matrix, dtype=np.float64, order="C")
        except (TypeError, ValueError) as exc:
            raise InvalidParameterError(
                f"gram cannot be converted to a float array ({exc}); pass a numeric (N, N) array"
            ) from exc
        if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or matrix.shape[0] == 0:
            raise InvalidParameterError(
                f"gram has shape {matrix.shape}; a precomputed Gram matrix must be square (N, N) with N >= 1"
            )
        if not np.all(np.isfinite(matrix)):
            raise InvalidParameterError("gram contains NaN or inf entries; a precomputed Gram matrix must be finite")
        self.gram_ = matrix

    @property
    def params(self):
        """dict: ``{"gram": the (N, N) float64 matrix}``: what prediction needs, never a path."""
        return {"gram": self.gram_}

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

    def __call__(self, X, Y=None, *, dtype=None, engine=None):
        """Gram block ``gram[id(X), id(Y)]`` (ids read from column 0).

        Parameters
        ----------
        X : array-like of shape (n, d), d >= 1
        Y : array-like of shape (m, d'), optional
            ``None`` means ``Y = X``.
        dtype : numpy dtype, optional
            Type of the returned block (default float64).
        engine : str, optional
            Accepted as every built-in kernel does; a look-up has no loops to run in an engine.

        Returns
        -------
        ndarray of shape (n, m), float64 (or ``dtype``)
        """
        ia = self._ids(_as_input(X, "X"), "X")
        ib = ia if Y is None else self._ids(_as_input(Y, "Y"), "Y")
        return np.ascontiguousarray(self.gram_[np.ix_(ia, ib)], dtype=dtype or np.float64)

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
