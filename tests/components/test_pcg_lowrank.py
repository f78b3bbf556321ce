"""The low-rank preconditioner of the Nyström conjugate gradients: the same solution as the closed form and as
Falkon's preconditioner, chosen where the m x m factor exceeds the budget, its memory O(m q), bad sizes refused."""

import tracemalloc

import numpy as np
import pytest

from skframe.contract.registry import get_kernel
from skframe.exceptions import InvalidParameterError, MemoryBudgetError, SkframeError
from skframe.options import ComputeOptions
from skframe_solvers._pcg_lowrank import LowRankPreconditioner, lowrank_bytes
from skframe_solvers.pcg import NystromPCG


def _data(n=1500, d=3, m=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    y = np.sin(7 * X[:, 0]) * np.cos(4 * X[:, 1]) + 0.05 * rng.standard_normal(n)
    return X, y, X[rng.choice(n, m, replace=False)]


def _gauss(X, C, gamma):
    return np.exp(-gamma * ((X[:, None, :] - C[None, :, :]) ** 2).sum(-1))


def _closed_form(X, y, C, gamma, lam):
    K, Kmm = _gauss(X, C, gamma), _gauss(C, C, gamma)
    alpha = np.linalg.lstsq(K.T @ K + len(X) * lam * Kmm, K.T @ y, rcond=None)[0]
    return K, K @ alpha


@pytest.mark.parametrize("subsample, rank, lam, tol", [(120, 119, 1e-4, 1e-9), (80, 60, 1e-3, 1e-6)])
def test_lowrank_converges_to_the_closed_form(subsample, rank, lam, tol):
    X, y, C = _data()
    K, f_ref = _closed_form(X, y, C, 3.0, lam)
    res = NystromPCG(tol=tol, max_passes=400, preconditioner="lowrank", subsample=subsample, rank=rank).solve_centres(
        get_kernel("gaussian", gamma=3.0), X, C, y, lam)
    assert res.info["preconditioner"] == "lowrank" and res.info["residual"] <= tol
    np.testing.assert_allclose(K @ res.W[:, 0], f_ref, atol=1e-4 * np.abs(f_ref).max())


def test_auto_takes_lowrank_over_the_budget_and_matches_falkon():
    X, y, C = _data(n=3000, m=300, seed=2)
    kernel, m = get_kernel("gaussian", gamma=3.0), len(C)
    kw = dict(tol=1e-7, max_passes=400, subsample=120, rank=80)
    small = NystromPCG(memory_budget=8 * m * m - 1, **kw).solve_centres(kernel, X, C, y, 1e-3)
    large = NystromPCG(memory_budget=8 * m * m, **kw).solve_centres(kernel, X, C, y, 1e-3)
    assert small.info["preconditioner"] == "lowrank" and large.info["preconditioner"] == "falkon"
    assert "> memory_budget" in small.info["preconditioner_reason"]
    assert "<= memory_budget" in large.info["preconditioner_reason"]
    assert small.info["preconditioner_bytes"] == lowrank_bytes(m, 120, 80) < 8 * m * m
    K = _gauss(X, C, 3.0)
    np.testing.assert_allclose(K @ small.W, K @ large.W, atol=1e-3 * np.abs(y).max())


def test_the_plan_budget_decides_without_a_budget_of_its_own():
    X, y, C = _data(n=400, m=50)
    res = NystromPCG(tol=1e-4, max_passes=50, subsample=20, rank=8).solve_centres(
        get_kernel("gaussian", gamma=2.0), X, C, y, 1e-3, options=ComputeOptions(memory_budget=8 * 50 * 50 - 8))
    assert res.info["preconditioner"] == "lowrank" and "the plan's memory_budget" in res.info["preconditioner_reason"]


def test_lowrank_preconditioner_memory_is_bounded():
    """The preconditioner holds an m x q array, and building it never allocates the m x m or m x s blocks."""
    rng = np.random.default_rng(4)
    C = rng.uniform(size=(3000, 4))
    m, s, q = len(C), 300, 40
    options = ComputeOptions(engine="numpy", block_bytes=400_000)
    tracemalloc.start()
    try:
        pre = LowRankPreconditioner(get_kernel("gaussian", gamma=1.0), C, 1e-5, 10**5, s, q, 0, options)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert pre.Q.shape[0] == m and pre.Q.shape[1] <= q and pre.nbytes <= 8 * m * q
    assert peak <= lowrank_bytes(m, s, q) + 4 * options.block_bytes + 8 * m * s // 4
    assert peak < 8 * m * s < 8 * m * m
    V = rng.standard_normal((m, 2))
    np.testing.assert_allclose(pre.apply_t(V), pre.apply(V))


def test_lowrank_inverts_the_estimate_on_its_span():
    """On the kept eigenvectors ``B P B = I``, with P Falkon's normal matrix of the exact K_mm when s = m."""
    X, _, C = _data(n=500, m=60)
    m, n, lam = len(C), 500, 1e-3
    pre = LowRankPreconditioner(get_kernel("gaussian", gamma=2.0), C, lam, n, m, 20, 0)
    Kmm = _gauss(C, C, 2.0)
    P = n / m * Kmm @ Kmm + n * lam * Kmm
    Q = pre.Q
    np.testing.assert_allclose(Q.T @ pre.apply(P @ pre.apply(Q)), np.eye(Q.shape[1]), atol=1e-6)
    np.testing.assert_allclose(pre.kmm_times(np.eye(m)), Kmm, atol=1e-12)


@pytest.mark.parametrize("params, error", [
    ({"preconditioner": "eigenpro"}, InvalidParameterError),
    ({"preconditioner": "lowrank", "subsample": 11}, InvalidParameterError),
    ({"preconditioner": "lowrank", "subsample": 8, "rank": 8}, InvalidParameterError),
    ({"preconditioner": "lowrank", "rank": 0}, InvalidParameterError),
    ({"memory_budget": -1}, InvalidParameterError),
    ({"memory_budget": True}, InvalidParameterError),
    ({"preconditioner": "falkon", "memory_budget": 100}, MemoryBudgetError),
    ({"preconditioner": "lowrank", "subsample": 8, "rank": 4, "memory_budget": 100}, MemoryBudgetError),
])
def test_lowrank_bad_parameters(params, error):
    X, y, C = _data(n=100, m=10)
    with pytest.raises(error) as info:
        NystromPCG(**params).solve_centres(get_kernel("gaussian", gamma=1.0), X, C, y, 1e-3)
    assert isinstance(info.value, SkframeError)
    assert "=" in str(info.value) or "GB" in str(info.value)


def test_the_estimator_runs_centres_beyond_the_m_squared_budget_with_the_lowrank_preconditioner(monkeypatch):
    """Where neither the closed form's m x m sums nor Falkon's factor fit the budget, the plan picks conjugate
    gradients with the low-rank preconditioner and sizes the fit's memory from it: a given m beyond m^2 memory
    runs (it was refused), and its model is the one Falkon's preconditioner gives within a larger budget."""
    from skframe import SketchedKernelRidge
    from skframe.compute import plan_square

    # small sizes for a quick test: conjugate gradients from 300 centres, a rank-60 estimate from 200 of them
    monkeypatch.setattr(plan_square, "PCG_MIN_CENTRES", 300)
    monkeypatch.setattr(plan_square, "LOWRANK_SUBSAMPLE", 200)
    monkeypatch.setattr(plan_square, "LOWRANK_RANK", 60)
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(4000, 3))
    y = np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.05 * rng.standard_normal(4000)
    kw = dict(kernel_params={"gamma": 1.0}, sketch="subsample", sketch_size=3200, lam=1e-4, random_state=0)
    small = SketchedKernelRidge(memory_budget="80MB", **kw).fit(X, y)  # 8 m^2 = 82 MB
    reason = small.execution_["reasons"]["square_solver"]
    assert reason.startswith("pcg") and "low-rank preconditioner of rank 60 from 200" in reason
    assert small.representation_ == "centres" and small.solver_info_["preconditioner"] == "lowrank"
    assert small.execution_["peak_bytes"] <= 80 * 10**6
    large = SketchedKernelRidge(memory_budget="1GB", **kw).fit(X, y)
    assert large.solver_info_["preconditioner"] == "falkon"
    np.testing.assert_array_equal(small.X_fit_, large.X_fit_)  # the same centres
    spread = np.std(y)
    diff = small.predict(X[:300]) - large.predict(X[:300])
    assert np.sqrt(np.mean(diff ** 2)) <= 10 * max(small.solver_info_["residual"], 1e-6) * spread + 1e-6
