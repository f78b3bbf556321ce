"""CV+ and jackknife+ fold predictions through the block engine: the NumPy formula, one kernel block per chunk."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics.pairwise import rbf_kernel

from skframe.core import block_engine
from skframe.models import SketchedKernelRidge
from skframe.uncertainty import ConformalRegressor
from skframe.uncertainty.conformal import fold_predictions
from skframe.uncertainty.state import interval_bounds, interval_state

G = 1.0


class CountingRBF:
    """A Gaussian kernel counting the rows of its first argument."""

    rows = 0

    def __call__(self, X, Y=None):
        CountingRBF.rows += X.shape[0]
        return rbf_kernel(X, X if Y is None else Y, gamma=G)

    def diag(self, X):
        return np.ones(X.shape[0])


def _data(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 2))
    Y = np.c_[np.sin(3 * X[:, 0]), X[:, 1]] + 0.1 * rng.normal(size=(n, 2))
    return X, Y


def _ridge(kernel="gaussian"):
    params = {"gamma": G} if kernel == "gaussian" else None
    return SketchedKernelRidge(kernel, kernel_params=params, sketch_size=25, lam=1e-3, random_state=0)


@pytest.mark.parametrize("sharing", ["fold", "shared"])
@pytest.mark.parametrize("method", ["cv+", "jackknife+"])
def test_fold_predictions_equal_the_kernel_expansions(sharing, method):
    X, Y = _data(60)
    Xt, _ = _data(23, seed=1)
    model = ConformalRegressor(_ridge(), method=method, cv=4, random_state=0, sketch_sharing=sharing).fit(X, Y)
    P = fold_predictions(model, Xt)
    if sharing == "fold":
        ref = np.stack([rbf_kernel(Xt, est.X_fit_, gamma=G) @ est.coef_ + est.intercept_
                        for est in model.fold_estimators_])
    else:
        folds = model.shared_folds_
        K, d = folds.offsets.shape
        F = rbf_kernel(Xt, folds.X_fit, gamma=G) @ folds.coefs  # (c, K d): column k d + j is fold k, target j
        ref = F.reshape(len(Xt), K, d).transpose(1, 0, 2) + folds.offsets[:, None, :]
    np.testing.assert_allclose(P, ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(fold_predictions(model, sp.csr_matrix(Xt)), P, rtol=1e-10, atol=1e-12)


def test_shared_fold_predictions_take_one_block_per_chunk(monkeypatch):
    X, Y = _data(80)
    Xt, _ = _data(31, seed=2)
    model = ConformalRegressor(_ridge(CountingRBF()), method="cv+", cv=5, random_state=0,
                               sketch_sharing="shared").fit(X, Y)
    seen = []
    real = block_engine.native_block
    monkeypatch.setattr(block_engine, "native_block", lambda k, A, B, dt, lo=None: seen.append(A.shape[0]) or
                        real(k, A, B, dt, lo))
    CountingRBF.rows = 0
    model.predict_interval(Xt)  # the 5 fold models of every chunk from one kernel block
    assert CountingRBF.rows == len(Xt) == sum(seen)
    state = interval_state(model, 0.9)
    CountingRBF.rows = 0
    lo, hi = interval_bounds(state, model.estimator_, Xt)
    assert CountingRBF.rows == len(Xt)
    lo2, hi2 = model.predict_interval(Xt)
    np.testing.assert_allclose(lo, lo2, rtol=1e-12)
    np.testing.assert_allclose(hi, hi2, rtol=1e-12)
