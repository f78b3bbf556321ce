"""Embedded synthetic data sets from the papers skframe reproduces.

The Friedman robust-regression problem of El Ahmad, Laforgue, d'Alché-Buc, *Fast Kernel
Methods for Generic Lipschitz Losses via p-Sparsified Sketches* (TMLR 2023, §4.1) is the
embedded default data set of ``skframe fit`` when no data file is given.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from sklearn.utils import check_random_state

from skframe.exceptions import InvalidParameterError
from skframe.validation import check_scalar

__all__ = ["make_friedman_outliers", "friedman_function", "load_default", "TrainTestDataset", "DEFAULT_TRAIN_SEED",
           "DEFAULT_TEST_SEED"]

#: Seeds of the embedded default data set (``load_default(random_state=0)``):
#: the training set uses ``random_state``, the test set ``random_state + 1``.
DEFAULT_TRAIN_SEED = 0
DEFAULT_TEST_SEED = 1


def friedman_function(X):
    """Noise-free Friedman (1991) regression function (robust-regression experiment of El Ahmad et al., TMLR 2023).

    ``f*(x) = 0.1 exp(4 x1) + 4 / (1 + exp(-20 (x2 - 0.5))) + 3 x3 + 2 x4 + x5``
    (1-based feature indices; only the first five features matter).
    """
    X = np.asarray(X, dtype=np.float64)
    return (
        0.1 * np.exp(4.0 * X[:, 0])
        + 4.0 / (1.0 + np.exp(-20.0 * (X[:, 1] - 0.5)))
        + 3.0 * X[:, 2]
        + 2.0 * X[:, 3]
        + X[:, 4]
    )


def make_friedman_outliers(
    n_samples=10000,
    *,
    n_features=10,
    n_outliers=100,
    noise=1.0,
    outlier_mean=1.5,
    outlier_std=0.25,
    shuffle=True,
    random_state=None,
):
    """Friedman regression with input outliers (El Ahmad et al., TMLR 2023, §4.1, robust regression).

    ``n_samples - n_outliers`` inputs are drawn i.i.d. from U([0, 1]^d) and ``n_outliers``
    inputs from N(outlier_mean · 1_d, outlier_std² I_d); the outputs are
    ``y = f*(x) + ε`` with ε ~ N(0, noise²) and

    ``f*(x) = 0.1 e^{4 x1} + 4 / (1 + e^{-20 (x2 - 0.5)}) + 3 x3 + 2 x4 + x5``

    (Friedman, 1991). Outliers in x produce large outputs (``0.1 e^{6} ≈ 40``), which is
    what the κ-Huber loss of the paper is meant to be robust to.

    Note on the outlier spread: the paper writes N(1.5·1, 0.25 I) (a variance); the
    reference generator, which produced the published figures, uses a *standard
    deviation* of 0.25. We follow the reference generator (``outlier_std=0.25``).

    Parameters
    ----------
    n_samples : int, default=10000
        Total number of points, outliers included (paper: n = 10 000).
    n_features : int, default=10
        Input dimension d (at least 5; paper: 10).
    n_outliers : int, default=100
        Number of inputs drawn from the outlier Gaussian (paper: 100).
    noise : float, default=1.0
        Standard deviation of the Gaussian output noise.
    outlier_mean : float, default=1.5
        Mean of every coordinate of an outlier input.
    outlier_std : float, default=0.25
        Standard deviation of every coordinate of an outlier input.
    shuffle : bool, default=True
        Shuffle the rows; with ``False`` the outliers are the last ``n_outliers`` rows.
    random_state : int, RandomState instance or None
        Seed of the generator.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)

    Examples
    --------
    >>> X, y = make_friedman_outliers(200, n_outliers=10, random_state=0)
    >>> X.shape, y.shape
    ((200, 10), (200,))
    """
    n_samples = check_scalar(n_samples, "n_samples", kind=int, low=1)
    n_features = check_scalar(n_features, "n_features", kind=int, low=5,
                              fix="the Friedman function uses the first 5 features; choose n_features >= 5")
    n_outliers = check_scalar(n_outliers, "n_outliers", kind=int, low=0, high=n_samples,
                              fix=f"choose 0 <= n_outliers <= n_samples={n_samples}")
    noise = check_scalar(noise, "noise", kind=float, low=0.0)
    outlier_mean = check_scalar(outlier_mean, "outlier_mean", kind=float)
    outlier_std = check_scalar(outlier_std, "outlier_std", kind=float, low=0.0)
    rng = check_random_state(random_state)
    n_inliers = n_samples - n_outliers
    X = np.empty((n_samples, n_features))
    X[:n_inliers] = rng.uniform(0.0, 1.0, size=(n_inliers, n_features))
    X[n_inliers:] = rng.normal(outlier_mean, outlier_std, size=(n_outliers, n_features))
    y = friedman_function(X) + noise * rng.standard_normal(n_samples)
    if shuffle:
        perm = rng.permutation(n_samples)
        X, y = X[perm], y[perm]
    return X, y


@dataclass
class TrainTestDataset:
    """A train/test split with a name and a description (the embedded default data set)."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    name: str
    description: str
    params: dict = field(default_factory=dict)
    suggested: dict = field(default_factory=dict)

    @property
    def n_features(self):
        return self.X_train.shape[1]

    def __repr__(self):
        return (f"TrainTestDataset(name={self.name!r}, X_train={self.X_train.shape}, "
                f"X_test={self.X_test.shape})")


def load_default(random_state=0):
    """The embedded default data set of ``skframe fit``: Friedman with outliers (El Ahmad et al., TMLR 2023).

    Training and test sets each hold 10 000 points of :func:`make_friedman_outliers`
    with its defaults (d = 10, 100 outliers from N(1.5, std 0.25), unit output noise).
    The test set is generated *the same way* as the training set (outliers included,
    as in the paper: "we generate a test set of n_te = 10 000 points in the same way"),
    with an independent seed: the training set uses ``random_state`` and the test set
    ``random_state + 1`` (so the default is seeds 0 and 1).

    The paper's figure of merit is :func:`skframe.metrics.relative_mse` on the test set.

    Parameters
    ----------
    random_state : int, default=0
        Seed of the training set; the test set uses ``random_state + 1``.

    Returns
    -------
    TrainTestDataset
        With ``X_train``, ``y_train``, ``X_test``, ``y_test``, ``name="friedman-outliers"``,
        ``description`` and ``suggested`` (the paper's hyper-parameters for a Gaussian kernel:
        ``gamma=0.1``, ``lam=1e-7``).

    Examples
    --------
    >>> ds = load_default()
    >>> ds.X_train.shape, ds.X_test.shape
    ((10000, 10), (10000, 10))
    """
    if isinstance(random_state, bool) or not isinstance(random_state, (int, np.integer)):
        raise InvalidParameterError(
            f"random_state={random_state!r} must be an integer seed for the default data set "
            "(the test set uses random_state + 1)"
        )
    random_state = int(random_state)
    params = dict(n_samples=10000, n_features=10, n_outliers=100, noise=1.0, outlier_mean=1.5, outlier_std=0.25)
    X_train, y_train = make_friedman_outliers(random_state=random_state, **params)
    X_test, y_test = make_friedman_outliers(random_state=random_state + 1, **params)
    description = (
        "Friedman (1991) robust regression (El Ahmad et al., TMLR 2023, §4.1): 10 000 training and 10 000 test points; "
        "inputs U([0,1]^10) except 100 outliers per set from N(1.5, std 0.25); "
        "y = 0.1 e^{4x1} + 4/(1+e^{-20(x2-0.5)}) + 3x3 + 2x4 + x5 + N(0, 1). "
        f"Train seed {random_state}, test seed {random_state + 1} (test generated the same way). "
        "Metric: relative MSE = MSE / (max y_test - min y_test)."
    )
    return TrainTestDataset(
        X_train=X_train,
        y_train=y_train,
        X_test=X_test,
        y_test=y_test,
        name="friedman-outliers",
        description=description,
        params=dict(params, train_seed=random_state, test_seed=random_state + 1),
        # the paper's §4.1 hyper-parameters (Gaussian kernel), used by `skframe fit` when none are given
        suggested={"kernel": "gaussian", "kernel_params": {"gamma": 0.1}, "lam": 1e-7,
                   # the robust losses' scales for these targets (kappa of the paper's Huber experiment;
                   # epsilon = 3 noise standard deviations, first in a 5-fold CV over 0.5..6 on the training part)
                   "loss_params": {"huber": {"kappa": 100.0}, "epsilon-svr": {"epsilon": 3.0},
                                   "epsilon-ridge": {"epsilon": 0.5}}},
    )
