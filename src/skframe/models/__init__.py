"""scikit-learn estimators assembled from skframe components.

The estimator families load on first use: ``from skframe.models import SketchedKernelRidge``
does not import the kernel machines (:mod:`skframe.models.machine`) or the structured-output
models (:mod:`skframe.models.structured`), so a command that fits a ridge model does not pay for
them.
"""

from typing import TYPE_CHECKING

from skframe.deps import lazy_exports

if TYPE_CHECKING:  # the classes' homes, for readers and documentation tools (imported on first access)
    from skframe.models.machine import JointQuantileRegressor, SketchedKernelClassifier, SketchedKernelMachine
    from skframe.models.ridge import SketchedKernelRidge
    from skframe.models.structured import DeepOutputKernelRegressor, OutputKernelRegressor

__all__ = [
    "SketchedKernelRidge",
    "OutputKernelRegressor",
    "DeepOutputKernelRegressor",
    "SketchedKernelMachine",
    "SketchedKernelClassifier",
    "JointQuantileRegressor",
    "check_feature_range",
]

#: where each public class is defined (its family's sub-package, imported on first access)
_HOMES = {
    "SketchedKernelRidge": "skframe.models.ridge",
    "OutputKernelRegressor": "skframe.models.structured",
    "DeepOutputKernelRegressor": "skframe.models.structured",
    "SketchedKernelMachine": "skframe.models.machine",
    "SketchedKernelClassifier": "skframe.models.machine",
    "JointQuantileRegressor": "skframe.models.machine",
    # features whose squares overflow float64, refused in one line: the fit's own check, public for the readers
    "check_feature_range": "skframe.models._degenerate",
}


__getattr__, __dir__ = lazy_exports(__name__, _HOMES, __all__)
