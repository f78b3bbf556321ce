"""Entry-point module registering the built-in solvers."""

import skframe

from .solvers import ADMMSolver, AdamSolver, ClosedFormSolver, DualCDSolver, LBFGSSolver


@skframe.hookimpl
def register_solvers(register):
    register("closed-form", ClosedFormSolver)
    register("lbfgs", LBFGSSolver)
    register("adam", AdamSolver)
    register("dual-cd", DualCDSolver)
    register("admm", ADMMSolver)
