"""scikit-learn's estimator checks on every DEFAULT constructor (no tuned sizes)."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from skframe.models import JointQuantileRegressor, SketchedKernelClassifier, SketchedKernelMachine, SketchedKernelRidge


@parametrize_with_checks(
    [SketchedKernelRidge(), SketchedKernelMachine(), SketchedKernelClassifier(), JointQuantileRegressor()]
)
def test_default_constructor_passes_sklearn_checks(estimator, check):
    check(estimator)
