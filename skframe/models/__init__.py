"""scikit-learn estimators assembled from skframe components."""

from .machine import JointQuantileRegressor, SketchedKernelClassifier, SketchedKernelMachine
from .ridge import SketchedKernelRidge
from .structured import OutputKernelRegressor

__all__ = [
    "SketchedKernelRidge",
    "OutputKernelRegressor",
    "SketchedKernelMachine",
    "SketchedKernelClassifier",
    "JointQuantileRegressor",
]
