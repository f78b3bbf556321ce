"""scikit-learn estimators assembled from skframe components."""

from .machine import JointQuantileRegressor, SketchedKernelClassifier, SketchedKernelMachine
from .ridge import SketchedKernelRidge
from .structured import DeepOutputKernelRegressor, OutputKernelRegressor

__all__ = [
    "SketchedKernelRidge",
    "OutputKernelRegressor",
    "DeepOutputKernelRegressor",
    "SketchedKernelMachine",
    "SketchedKernelClassifier",
    "JointQuantileRegressor",
]
