"""Entry-point module registering the built-in solvers."""

from skframe.plugin.api import hookimpl
from skframe_solvers.newton import NewtonSolver
from skframe_solvers.pcg_solver import PCGSolver
from skframe_solvers.solvers import AdamSolver, ADMMSolver, ClosedFormSolver, DualCDSolver, LBFGSSolver


@hookimpl
def register_solvers(register):
    register("closed-form", ClosedFormSolver)
    register("lbfgs", LBFGSSolver)
    register("adam", AdamSolver)
    register("dual-cd", DualCDSolver)
    register("admm", ADMMSolver)
    register("newton", NewtonSolver)
    register("pcg", PCGSolver)
