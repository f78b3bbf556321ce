"""Feature scaling as a scikit-learn transformer that keeps sparse inputs sparse.

:class:`FeatureScaler` standardises features with training statistics. Dense inputs are
centred and divided by the column standard deviation; sparse inputs are only divided,
so they stay sparse. Centring is unnecessary for distance-based kernels (Gaussian,
Laplacian, Matérn...): a common shift cancels in the squared distance,
``||(a - μ)/σ - (b - μ)/σ||² = ||a/σ - b/σ||²``, so the kernel matrix is unchanged. It does
change linear and polynomial kernels (``<a - μ, b - μ> ≠ <a, b>``); use dense data with
``with_mean=True`` when centring matters there.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.sparsefuncs import mean_variance_axis
from sklearn.utils.validation import check_is_fitted, validate_data

from skframe.exceptions import InvalidInputError, InvalidParameterError, NotFittedError

__all__ = ["FeatureScaler", "scale_features", "constant_columns"]


def constant_columns(mean, std):
    """Which columns are constant: a standard deviation within rounding of the mean (ten float64 epsilons of
    ``max(1, |mean|)``). The one rule of :class:`FeatureScaler` (such a column is divided by 1) and of the
    automatic model's ``scale="auto"`` (such a column has no spread to compare)."""
    return np.asarray(std) <= 10 * np.finfo(np.float64).eps * np.maximum(1.0, np.abs(np.asarray(mean)))


def _validate(est, X, reset):
    try:
        return validate_data(est, X, accept_sparse="csr", dtype=np.float64, reset=reset)
    except ValueError as exc:  # keep scikit-learn's wording, raise a skframe error
        if isinstance(exc, InvalidInputError):
            raise
        raise InvalidInputError(f"{exc}; pass finite numeric data of shape (n_samples, n_features)") from exc


class FeatureScaler(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Standardise features with training statistics, keeping sparse matrices sparse.

    Dense input: ``(X - mean) / std``. Sparse input (``with_mean="auto"``): only ``X / std``
    (see the module documentation: centring would densify the matrix and cancels in the
    squared distances of Gaussian-type kernels). Standard deviations are population ones
    (ddof = 0, as :class:`sklearn.preprocessing.StandardScaler`); zero-variance columns are
    left unscaled (scale 1).

    Parameters
    ----------
    method : {"standard", "none"}, default="standard"
        ``"none"`` makes :meth:`transform` return the data unchanged (as float64).
    with_mean : {"auto", True, False}, default="auto"
        Subtract the mean; ``"auto"`` means True for dense and False for sparse input.
        ``True`` with sparse input is refused (it would densify).

    Attributes
    ----------
    mean_ : ndarray of shape (n_features,)
        Column means of the training data (subtracted only if ``with_mean_``).
    scale_ : ndarray of shape (n_features,)
        Column divisors (std, or 1 for constant columns and ``method="none"``).
    with_mean_ : bool
        Whether :meth:`transform` centres.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when fitted on a table with string column names.

    Examples
    --------
    >>> import numpy as np
    >>> FeatureScaler().fit_transform(np.array([[0.0], [2.0]])).ravel()
    array([-1.,  1.])
    """

    def __init__(self, method="standard", *, with_mean="auto"):
        self.method = method
        self.with_mean = with_mean

    def fit(self, X, y=None):
        """Compute the column means and standard deviations of ``X``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        if self.method not in ("standard", "none"):
            raise InvalidParameterError(f"method={self.method!r} must be 'standard' or 'none'")
        if self.with_mean not in ("auto", True, False):
            raise InvalidParameterError(f"with_mean={self.with_mean!r} must be 'auto', True or False")
        X = _validate(self, X, reset=True)
        is_sparse = sp.issparse(X)
        if self.with_mean is True and is_sparse:
            raise InvalidParameterError(
                "with_mean=True would densify the sparse X; use with_mean='auto' (scale only: centring cancels "
                "in distance-based kernels) or pass X.toarray()"
            )
        d = X.shape[1]
        self.with_mean_ = (not is_sparse) if self.with_mean == "auto" else bool(self.with_mean)
        if self.method == "none":
            self.mean_ = np.zeros(d)
            self.scale_ = np.ones(d)
            self.with_mean_ = False
            return self
        if is_sparse:
            mean, var = mean_variance_axis(X, axis=0)
        else:
            mean, var = X.mean(axis=0), X.var(axis=0)
        std = np.sqrt(np.maximum(var, 0.0))
        constant = constant_columns(mean, std)
        self.mean_ = np.asarray(mean, dtype=np.float64)
        self.scale_ = np.where(constant, 1.0, std)
        return self

    def transform(self, X):
        """Scale ``X`` with the training statistics (sparse in, sparse out).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        ndarray or CSR matrix of shape (n_samples, n_features)
        """
        try:
            check_is_fitted(self, "scale_")
        except Exception:
            raise NotFittedError("this FeatureScaler is not fitted yet; call fit(X_train) first") from None
        X = _validate(self, X, reset=False)
        if sp.issparse(X):
            if self.with_mean_:
                raise InvalidInputError("this scaler centres (fitted on dense data) and X is sparse; pass X.toarray()")
            return sp.csr_matrix(X @ sp.diags(1.0 / self.scale_))
        if self.with_mean_:
            return (X - self.mean_) / self.scale_
        return X / self.scale_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


def scale_features(X_train, X_test=None, method="standard"):
    """Standardise ``X_train`` and ``X_test`` with the training statistics.

    Dense data are centred and divided by the column std; sparse data are only divided
    by the std and stay sparse (see :class:`FeatureScaler`).

    Returns
    -------
    X_train_scaled, X_test_scaled, scaler : array or CSR, array/CSR or None, FeatureScaler
        ``scaler.mean_`` and ``scaler.scale_`` hold the fitted statistics.
    """
    scaler = FeatureScaler(method).fit(X_train)
    return scaler.transform(X_train), (None if X_test is None else scaler.transform(X_test)), scaler
