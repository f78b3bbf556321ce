"""scikit-learn's estimator checks on every DEFAULT constructor (no tuned sizes)."""

import numpy as np
import scipy.sparse as sp
from sklearn.utils.estimator_checks import parametrize_with_checks

from skframe.models import JointQuantileRegressor, SketchedKernelClassifier, SketchedKernelMachine, SketchedKernelRidge

# The sparse-container checks assert that predict returns ONE column for one target; the joint quantile
# model returns one column per level (five by default). Sparse input itself is supported: see below.
_SHAPE_ONLY = "predict has one column per quantile level (5 by default); the check expects one column"


# check_regressors_train asks R^2 > 0.5 on 10 standardised features: that needs the data-scaled
# bandwidth gamma="scale" of the Gaussian kernel (a fixed gamma=1.0 is far too narrow there).
_FIXED_GAMMA = "the Gaussian kernel's default gamma is not data-scaled (gamma='scale') in this installation"


def _scaled_default_gamma():
    from skframe.registry import get_kernel

    return getattr(get_kernel("gaussian"), "gamma", None) == "scale"


def _expected_failures(estimator):
    if isinstance(estimator, JointQuantileRegressor) and len(estimator.quantiles) != 1:
        return {"check_estimator_sparse_array": _SHAPE_ONLY, "check_estimator_sparse_matrix": _SHAPE_ONLY}
    if isinstance(estimator, (SketchedKernelRidge, SketchedKernelMachine)) and not _scaled_default_gamma():
        return {"check_regressors_train": _FIXED_GAMMA}
    return {}


@parametrize_with_checks(
    [SketchedKernelRidge(), SketchedKernelMachine(), SketchedKernelClassifier(), JointQuantileRegressor(),
     JointQuantileRegressor(quantiles=(0.5,))],
    expected_failed_checks=_expected_failures,
)
def test_default_constructor_passes_sklearn_checks(estimator, check):
    check(estimator)


def test_joint_quantile_default_fits_sparse_input_like_dense():
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(40, 3))
    X[X < 0.6] = 0
    y = 4 * rng.uniform(size=40)
    dense = JointQuantileRegressor(random_state=0).fit(X, y).predict(X)
    for fmt in ("csr", "csc", "coo"):
        Xs = sp.csr_matrix(X).asformat(fmt)
        P = JointQuantileRegressor(random_state=0).fit(Xs, y).predict(Xs)
        assert P.shape == (40, 5)
        np.testing.assert_allclose(P, dense, rtol=1e-8, atol=1e-10)
