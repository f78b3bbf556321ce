"""scikit-learn estimators assembled from skframe components."""

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
]
