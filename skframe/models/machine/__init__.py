"""Sketched kernel machines with any convex loss: regression, classification, joint quantiles.

The classes are defined in the sub-modules and published here: their public (and
saved) home is ``skframe.models.machine``.
"""

from ._common import default_solver_name
from .classifier import SketchedKernelClassifier
from .quantile import JointQuantileRegressor
from .regressor import SketchedKernelMachine

__all__ = ["SketchedKernelMachine", "SketchedKernelClassifier", "JointQuantileRegressor", "default_solver_name"]

for _cls in (SketchedKernelMachine, SketchedKernelClassifier, JointQuantileRegressor):
    _cls.__module__ = __name__  # the public home of the classes
del _cls
