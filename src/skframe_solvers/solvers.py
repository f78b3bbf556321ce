"""Built-in solvers of the sketched feature-map problem (one module per solver).

This module keeps the historical import path: every solver lives in its own module
(:mod:`.closed_form`, :mod:`.lbfgs`, :mod:`.adam`, :mod:`.dual_cd`, :mod:`.admm`) and the shared problem
in :mod:`._problem`.
"""

from skframe_solvers._problem import FeatureMapProblem
from skframe_solvers.adam import AdamSolver
from skframe_solvers.admm import ADMMSolver
from skframe_solvers.closed_form import ClosedFormSolver
from skframe_solvers.dual_cd import DualCDSolver
from skframe_solvers.lbfgs import LBFGSSolver

__all__ = ["FeatureMapProblem", "ClosedFormSolver", "LBFGSSolver", "AdamSolver", "DualCDSolver", "ADMMSolver"]
