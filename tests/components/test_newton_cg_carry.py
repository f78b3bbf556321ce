"""A warm-started path of Newton–CG solves carries its preconditioner from solve to solve on the same rows, and
reaches the same certified solutions as solves that build their own."""

import numpy as np
import pytest

from skframe.contract.problems import ArrayProblem
from skframe.contract.registry import get_loss, get_solver
from skframe_solvers._problem import FeatureMapProblem
from skframe_solvers.newton_cg import SubsampledPreconditioner, subsample

TOL = 1e-10


def _data(rng, n=3000, r=20, k=3):
    Z = rng.normal(size=(n, r)) * np.geomspace(2.0, 0.01, r)
    F = Z @ rng.normal(size=(r, k)) * 3 + rng.normal(size=(n, k))
    Y = -np.ones((n, k))
    Y[np.arange(n), np.argmax(F, axis=1)] = 1.0
    return Z, Y


def _newton():
    return get_solver("newton", tol=TOL, step="cg", precond_rows=300)


def test_at_lam_is_the_preconditioner_built_at_that_lam():
    rng = np.random.default_rng(0)
    Z, Y = _data(rng)
    loss, V = get_loss("multinomial"), 0.1 * rng.normal(size=(20, 3))
    fp1, fp2 = (FeatureMapProblem(ArrayProblem(Z, Y), loss, lam) for lam in (1e-3, 1e-6))
    rows = subsample(fp1, 300)
    carried = SubsampledPreconditioner(fp1, V, rows).at_lam(1e-6, project=False)
    fresh = SubsampledPreconditioner(fp2, V, rows)
    R = rng.normal(size=(20, 3))
    np.testing.assert_allclose(carried(R), fresh(R), rtol=1e-8)
    assert carried.lam == 1e-6


@pytest.mark.parametrize("weighted", [False, True])
def test_a_path_carries_the_preconditioner_and_reaches_the_same_solutions(weighted):
    rng = np.random.default_rng(1)
    Z, Y = _data(rng)
    problem = ArrayProblem(Z, Y)
    if weighted:
        problem.sample_weight = rng.uniform(0.0, 2.0, size=Z.shape[0])
    loss, solver, W, own, carried = get_loss("multinomial"), _newton(), None, [], []
    for lam in (1e-3, 1e-4, 1e-5, 1e-6):
        own.append(_newton().solve(problem, loss, lam, init=W))
        W = own[-1].W
    W = None
    with solver.carrying_preconditioner():
        for lam in (1e-3, 1e-4, 1e-5, 1e-6):
            carried.append(solver.solve(problem, loss, lam, init=W))
            W = carried[-1].W
    assert getattr(solver, "_carry", None) is None  # dropped on leaving
    built = [res.info["preconditioners"] for res in carried]
    assert sum(built) < sum(res.info["preconditioners"] for res in own)
    for a, b, lam in zip(own, carried, (1e-3, 1e-4, 1e-5, 1e-6)):
        assert a.info["relative_gap"] <= TOL and b.info["relative_gap"] <= TOL
        bound = 2 * np.sqrt(2 * max(a.info["gap"] + b.info["gap"], 0.0) / lam) + 1e-9
        assert np.linalg.norm(a.W - b.W) <= bound


def test_other_rows_or_weights_build_their_own():
    rng = np.random.default_rng(2)
    Z, Y = _data(rng)
    loss, solver = get_loss("multinomial"), _newton()
    with solver.carrying_preconditioner():
        first = solver.solve(ArrayProblem(Z, Y), loss, 1e-6)
        other_rows = solver.solve(ArrayProblem(Z.copy(), Y), loss, 1e-6)
        weighted = ArrayProblem(other_rows_Z := Z.copy(), Y)
        solver.solve(weighted, loss, 1e-6)
        weighted2 = ArrayProblem(other_rows_Z, Y)
        weighted2.sample_weight = np.linspace(0.5, 1.5, Z.shape[0])
        reweighted = solver.solve(weighted2, loss, 1e-6)
    assert first.info["preconditioners"] >= 1
    assert other_rows.info["preconditioners"] >= 1 and reweighted.info["preconditioners"] >= 1
    # outside the context nothing is carried: the same problem twice builds twice
    problem = ArrayProblem(Z, Y)
    again = [solver.solve(problem, loss, 1e-6).info["preconditioners"] for _ in range(2)]
    assert min(again) >= 1
