"""Sketched kernel machines with any convex loss: regression, classification, joint quantiles.

The classes are defined in the sub-modules and published here: their public (and
saved) home is ``skframe.models.machine``.
"""

from skframe.models.machine._calibration import calibration_applies
from skframe.models.machine._common import default_solver_name
from skframe.models.machine.classifier import SketchedKernelClassifier
from skframe.models.machine.quantile import JointQuantileRegressor
from skframe.models.machine.regressor import SketchedKernelMachine

__all__ = ["SketchedKernelMachine", "SketchedKernelClassifier", "JointQuantileRegressor", "default_solver_name",
           "calibration_applies"]

for _cls in (SketchedKernelMachine, SketchedKernelClassifier, JointQuantileRegressor):
    _cls.__module__ = __name__  # the public home of the classes
del _cls
