"""Progress reporting: kernel rows during the representation, then solver epochs/iterations."""

import numpy as np
import pytest

from skframe import SketchedKernelRidge
from skframe.models import SketchedKernelMachine


class Recorder:
    def __init__(self):
        self.stages = [("rows", None)]
        self.counts = [0]

    def __call__(self, n=1):
        self.counts[-1] += n

    def new_stage(self, description, total=None):
        self.stages.append((description, total))
        self.counts.append(0)


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(120, 3))
    return X, np.sin(3 * X[:, 0]) + 0.05 * rng.standard_normal(120)


def test_ridge_reports_every_kernel_row(data):
    X, y = data
    rec = Recorder()
    SketchedKernelRidge(sketch_size=10, random_state=0).fit(X, y, progress=rec)
    assert rec.counts == [120]


@pytest.mark.parametrize("solver, params, key", [("adam", {"epochs": 7, "tol": None}, "epochs"),
                                                  ("lbfgs", {"max_iter": 50}, "max_iter")])
def test_machine_reports_rows_then_solver_iterations(data, solver, params, key):
    X, y = data
    rec = Recorder()
    model = SketchedKernelMachine(loss="huber", loss_params={"kappa": 0.1}, sketch_size=10, solver=solver,
                                  solver_params=params, random_state=0)
    model.fit(X, y, progress=rec)
    assert rec.counts[0] == 120
    assert len(rec.stages) == 2 and rec.stages[1][1] == params[key]
    assert rec.counts[1] == model.n_iter_


def test_plain_callable_progress_still_works(data):
    X, y = data
    seen = []
    SketchedKernelMachine(loss="epsilon-svr", sketch_size=10, solver="adam", solver_params={"epochs": 3},
                          random_state=0).fit(
        X, y, progress=seen.append)
    assert sum(seen) == 120  # a plain callable counts kernel rows only
