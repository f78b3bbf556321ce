"""Newton–CG steps of the ``newton`` solver reach the direct Newton solution to the certified gap, and the plan's
rule chooses between forming the Hessian and conjugate gradients from n, r and the outputs."""

import numpy as np
import pytest

from skframe.compute.execution import DataShape
from skframe.compute.machine import Machine
from skframe.compute.plan import plan_fit
from skframe.compute.plan_newton import choose_newton_step, newton_precond_rows, newton_step_flops
from skframe.contract.problems import ArrayProblem, TargetArrayProblem
from skframe.contract.registry import get_loss, get_solver
from skframe.exceptions import InvalidParameterError
from skframe.models import SketchedKernelClassifier
from skframe_solvers.newton_cg import preconditioned_cg

TOL = 1e-10


class _Weighted(ArrayProblem):
    def __init__(self, Z, Y, w):
        super().__init__(Z, Y)
        self.sample_weight = w


class _Streamed(TargetArrayProblem):
    """The same rows, never held: ``features()`` is None and blocks come 37 rows at a time."""

    def __init__(self, Z, Y, w=None):
        self._Z, self.Y, self.sample_weight = Z, Y, w

    @property
    def r(self):
        return self._Z.shape[1]

    def blocks(self, chunk_rows=None):
        for start in range(0, self.n, 37):
            yield start, self._Z[start:start + 37], self.Y[start:start + 37]


def _data(rng, n, r, k):
    Z = rng.normal(size=(n, r)) * np.geomspace(2.0, 0.01, r)
    F = Z @ rng.normal(size=(r, k)) * 3 + rng.normal(size=(n, k))
    if k == 1:
        return Z, np.where(F > 0, 1.0, -1.0)
    Y = -np.ones((n, k))
    Y[np.arange(n), np.argmax(F, axis=1)] = 1.0
    return Z, Y


def _solve(problem, loss, lam, **params):
    return get_solver("newton", tol=TOL, **params).solve(problem, get_loss(loss), lam)


def _agree(direct, cg, lam):
    """Both certified to TOL; the objectives agree within the gaps, the weights within strong convexity's bound
    ``||V - V*||^2 <= 2 (P(V) - P*) / lam``."""
    for res in (direct, cg):
        assert res.info["relative_gap"] <= TOL
    P1, P2 = direct.info["primal"], cg.info["primal"]
    assert abs(P1 - P2) <= 2 * TOL * max(abs(P1), abs(P2))
    bound = np.sqrt(2 * max(direct.info["gap"] + cg.info["gap"], 0.0) / lam) * 2  # (a gap may round below 0)
    assert np.linalg.norm(direct.W - cg.W) <= bound + 1e-10 * max(1.0, np.linalg.norm(direct.W))  # (rounding)


@pytest.mark.parametrize("loss,k", [("logistic", 1), ("multinomial", 3)])
@pytest.mark.parametrize("weighted", [False, True])
def test_cg_steps_reach_the_direct_solution_to_the_certified_gap(loss, k, weighted):
    rng = np.random.default_rng(k + 10 * weighted)
    Z, Y = _data(rng, 400, 12, k)
    w = rng.uniform(0.1, 3.0, size=400) if weighted else None
    problem = _Weighted(Z, Y, w)
    lam = 1e-4
    direct, cg = _solve(problem, loss, lam, step="direct"), _solve(problem, loss, lam, step="cg", precond_rows=50)
    assert direct.info["method"] == "newton" and cg.info["method"] == "newton-cg"
    assert cg.info["cg_iterations"] and all(i >= 1 for i in cg.info["cg_iterations"])
    assert cg.info["preconditioners"] >= 1  # n r k products cost more than a 50-row preconditioner here
    _agree(direct, cg, lam)


def test_streamed_features_take_the_same_cg_steps():
    rng = np.random.default_rng(3)
    Z, Y = _data(rng, 300, 10, 3)
    w = rng.uniform(0.5, 2.0, size=300)
    kept = _solve(_Weighted(Z, Y, w), "multinomial", 1e-3, step="cg", precond_rows=40)
    streamed = _solve(_Streamed(Z, Y, w), "multinomial", 1e-3, step="cg", precond_rows=40)
    assert streamed.info["method"] == kept.info["method"] == "newton-cg"
    _agree(kept, streamed, 1e-3)  # (the blocks sum in another order: equal to the certified gap, not bitwise)


def test_class_weights_give_the_same_model_with_either_step():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(240, 3))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=240) > 0.8, "rare", "common")
    y[X[:, 1] > 1.2] = "third"
    models = [SketchedKernelClassifier(loss="multinomial", lam=1e-4, sketch="subsample", sketch_size=30,
                                       class_weight="balanced", solver="newton",
                                       solver_params={"step": step, "tol": TOL}, random_state=0).fit(X, y)
              for step in ("direct", "cg")]
    assert [m.solver_info_["method"] for m in models] == ["newton", "newton-cg"]
    np.testing.assert_allclose(models[0].predict_proba(X), models[1].predict_proba(X), atol=1e-5)


def test_auto_step_follows_the_plan_rule_and_says_why():
    rng = np.random.default_rng(5)
    Z, Y = _data(rng, 200, 8, 1)
    res = _solve(ArrayProblem(Z, Y), "logistic", 1e-3)
    method, reason = choose_newton_step(200, 8, 1)
    assert method == "direct" and res.info["method"] == "newton" and res.info["step_rule"] == reason
    res = _solve(ArrayProblem(Z, Y), "logistic", 1e-3, step="direct", max_dense=4)
    assert res.info["method"] == "newton-cg" and "max_dense" in res.info["step_rule"]


def test_plan_rule_chooses_cg_where_forming_the_hessian_costs_more():
    assert choose_newton_step(2000, 100, 1)[0] == "direct"
    method, reason = choose_newton_step(200_000, 1000, 1)
    assert method == "cg" and "flops" in reason
    assert choose_newton_step(20_000, 300, 10)[0] == "cg"  # K (K + 1) / 2 Gram products
    assert choose_newton_step(200_000, 1000, 1, kept=False)[0] == "direct"  # a CG pass would recompute features
    assert choose_newton_step(100, 400, 10, kept=False)[0] == "cg"  # r k above max_dense: never formed
    direct, cg = newton_step_flops(10**5, 500, 1)
    assert direct > cg > 0 and newton_precond_rows(10**5, 500) == 20_000 and newton_precond_rows(10**5, 3000) == 3334
    assert newton_precond_rows(2000, 100) == 2000 and newton_precond_rows(10**6, 5000) == 20_000


def test_plan_records_the_newton_step_for_iterative_losses():
    machine = Machine(memory_bytes=16 * 10**9, cores=2)
    big = plan_fit(DataShape(n=200_000, n_features=10), sketch="subsample", sketch_size=1000, loss="iterative",
                   machine=machine)
    small = plan_fit(DataShape(n=2000, n_features=10), sketch="subsample", sketch_size=100, loss="iterative",
                     machine=machine)
    square = plan_fit(DataShape(n=2000, n_features=10), sketch="subsample", sketch_size=100, machine=machine)
    assert big.reasons["newton_step"].startswith("cg: ") and small.reasons["newton_step"].startswith("direct: ")
    assert "newton_step" not in square.reasons


def test_preconditioned_cg_solves_a_linear_system():
    rng = np.random.default_rng(6)
    A = rng.normal(size=(30, 30))
    H = A @ A.T + 0.1 * np.eye(30)
    g = rng.normal(size=(30, 1))
    s, its, _ = preconditioned_cg(lambda u: H @ u, g, 1e-10, 200, lambda u: u / np.diag(H)[:, None])
    np.testing.assert_allclose(H @ s, -g, atol=1e-8)
    assert 1 <= its <= 200


def test_unknown_step_is_refused():
    with pytest.raises(InvalidParameterError, match="step"):
        get_solver("newton", step="exact")


def test_curvature_bound_is_the_trace_of_the_subsample_hessian():
    from skframe_solvers._problem import FeatureMapProblem
    from skframe_solvers.newton_cg import RowSample, curvature_bound

    rng = np.random.default_rng(7)
    Z, Y = _data(rng, 120, 6, 1)
    w = rng.uniform(0.5, 2.0, size=120)
    fp = FeatureMapProblem(_Weighted(Z, Y, w), get_loss("logistic"), 1e-3)
    V = rng.normal(size=(6, 1))
    p = 1.0 / (1.0 + np.exp(-(Z @ V).ravel()))
    c = fp.weights * p * (1.0 - p)  # the logistic curvature, row weights scaled to mean one
    H = Z.T @ (Z * c[:, None]) / 120
    assert curvature_bound(fp, V, RowSample(fp, 120)) == pytest.approx(np.trace(H), rel=1e-12)
    assert curvature_bound(fp, V, RowSample(fp, 120)) >= np.linalg.eigvalsh(H)[-1]


def test_the_preconditioner_is_the_subsample_hessian_formed_block_by_block(monkeypatch):
    """In memory the sampled rows are gathered a block at a time (here 7 rows): the factors are those of the plain
    NumPy formula ``(1/s) Z_S^T diag(c_j) Z_S + lam I`` for each class j, and streamed rows give the same."""
    from skframe_solvers import newton_cg
    from skframe_solvers._problem import FeatureMapProblem

    rng = np.random.default_rng(9)
    Z, Y = _data(rng, 90, 5, 3)
    w = rng.uniform(0.5, 2.0, size=90)
    monkeypatch.setattr(newton_cg, "BLOCK_BYTES", 8 * 5 * 7)
    V = rng.normal(size=(5, 3)) * 0.3
    for problem in (_Weighted(Z, Y, w), _Streamed(Z, Y, w)):
        fp = FeatureMapProblem(problem, get_loss("multinomial"), 1e-2)
        sample = newton_cg.RowSample(fp, 40, np.random.default_rng(1))
        P = newton_cg.SubsampledPreconditioner(fp, V, sample)
        S = sample.rows
        prob = np.exp(Z[S] @ V - (Z[S] @ V).max(axis=1, keepdims=True))
        prob /= prob.sum(axis=1, keepdims=True)
        c = prob * (1 - prob) * fp.weights[S][:, None]  # the softmax Hessian's diagonal
        R = rng.normal(size=(5, 3))
        for j in range(3):
            B = Z[S].T @ (Z[S] * c[:, j:j + 1]) / 40 + 1e-2 * np.eye(5)
            np.testing.assert_allclose(P(R)[:, j], np.linalg.solve(B, R[:, j]), rtol=1e-10)


def test_expected_cg_iterations_follow_the_classical_bound():
    from skframe_solvers.newton_cg import expected_cg_iterations

    for kappa, eta in ((50.0, 1e-3), (1e3, 0.1), (3.0, 0.5)):
        t = expected_cg_iterations(kappa, eta, 10**6)
        rate = (np.sqrt(kappa) - 1) / (np.sqrt(kappa) + 1)
        assert 2 * rate ** t <= eta * 1.01  # enough iterations by the bound ...
        assert t <= np.log(eta / 2) / np.log(rate) + 1 + 0.2 * t  # ... and not many more (ln(1/rate) ~ 2/sqrt(kappa))
    assert expected_cg_iterations(1e12, 1e-8, 50) == 50 and expected_cg_iterations(1.0, 0.9, 50) == 1


def test_a_warm_started_solve_at_small_lam_is_preconditioned_from_its_first_step():
    rng = np.random.default_rng(8)
    Z, Y = _data(rng, 3000, 20, 1)
    problem = ArrayProblem(Z, Y)
    start = _solve(problem, "logistic", 1e-4, step="cg", precond_rows=200)
    warm = get_solver("newton", tol=TOL, step="cg", precond_rows=200).solve(problem, get_loss("logistic"), 1e-6,
                                                                              init=start.W)
    direct = _solve(problem, "logistic", 1e-6, step="direct")
    assert warm.info["preconditioners"] >= 1 and warm.info["cg_iterations"]
    _agree(direct, warm, 1e-6)
    # at a large lam plain CG converges in a few products: no preconditioner is built for the first step
    easy = _solve(problem, "logistic", 10.0, step="cg", precond_rows=2000)
    assert easy.info["preconditioners"] == 0


@pytest.mark.parametrize("loss,k,weighted,output_matrix", [("logistic", 1, False, False), ("logistic", 2, True, False),
                                                          ("multinomial", 3, True, False),
                                                          ("multinomial", 3, False, True), ("square", 2, True, True)])
def test_the_compiled_hessian_pass_equals_the_numpy_products(monkeypatch, loss, k, weighted, output_matrix):
    """The one-pass compiled product (``SKFRAME_NUMBA_MIN_WORK=0``) gives ``H U`` and the direction's predictions
    of NumPy's two products, with row weights and a decomposable output matrix."""
    from skframe_solvers._problem import FeatureMapProblem
    from skframe_solvers.newton_cg import HessianOperator

    rng = np.random.default_rng(20 + k)
    Z, Y = _data(rng, 500, 9, k)
    if loss == "square":
        Y = rng.normal(size=(500, k))
    w = rng.uniform(0.2, 2.0, size=500) if weighted else None
    M = None
    if output_matrix:
        B = rng.normal(size=(k, k))
        M = B @ B.T + 0.1 * np.eye(k)
    fp = FeatureMapProblem(_Weighted(Z, Y, w), get_loss(loss), 1e-3, M=M)
    V, U = rng.normal(size=fp.shape), rng.normal(size=fp.shape)
    F = fp.predict(V, Z)
    results = []
    for work in ("0", "1e18"):
        monkeypatch.setenv("SKFRAME_NUMBA_MIN_WORK", work)
        op = HessianOperator(fp, F)
        results.append((op(U), op.D))
    assert results[0][0] is not None and results[1][0] is not None
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(results[1][1], fp.predict(U, Z), rtol=1e-12)


def test_a_cg_solve_carries_its_predictions_and_certifies_them_afresh():
    """Newton-CG on kept features sums each step's predictions from its directions' and takes no pass for the
    line search; the model equals the direct one to the certified gap, and the pass count shows the saving."""
    rng = np.random.default_rng(8)
    Z, Y = _data(rng, 600, 15, 1)
    kept = _solve(ArrayProblem(Z, Y), "logistic", 1e-4, step="cg", precond_rows=60)
    streamed = _solve(_Streamed(Z, Y), "logistic", 1e-4, step="cg", precond_rows=60)
    _agree(_solve(ArrayProblem(Z, Y), "logistic", 1e-4, step="direct"), kept, 1e-4)
    _agree(kept, streamed, 1e-4)
    steps, its = kept.info["newton_steps"], sum(kept.info["cg_iterations"])
    # a gradient pass per step and one per CG product; the stop certified again: fresh predictions, their gradient
    assert kept.info["passes"] <= (steps + 1) + its + 2 < streamed.info["passes"]


def test_multinomial_cg_steps_stay_off_the_common_shift_of_the_classes():
    """The multinomial loss ignores a common shift of the K outputs: its Hessian is lam along it. The
    preconditioned CG steps are projected on the zero-sum directions, so the solution's rows sum to zero (the
    minimum-norm optimum) at small lam, as the direct Newton solution's do."""
    from skframe_solvers.newton_cg import zero_sum_steps

    rng = np.random.default_rng(9)
    Z, Y = _data(rng, 800, 20, 4)
    lam = 1e-6
    cg = _solve(ArrayProblem(Z, Y), "multinomial", lam, step="cg", precond_rows=200)
    direct = _solve(ArrayProblem(Z, Y), "multinomial", lam, step="direct")
    assert cg.info["preconditioners"] >= 1
    scale = np.abs(cg.W).max()
    assert np.abs(cg.W.sum(axis=1)).max() <= 1e-9 * scale
    _agree(direct, cg, lam)
    from skframe_solvers._problem import FeatureMapProblem

    fp = FeatureMapProblem(ArrayProblem(Z, Y), get_loss("multinomial"), lam)
    V = rng.normal(size=(20, 4))
    assert zero_sum_steps(fp, V - V.mean(axis=1, keepdims=True)) and not zero_sum_steps(fp, V)
    assert zero_sum_steps(fp, np.zeros((20, 4)))  # where a solve starts
    assert not zero_sum_steps(FeatureMapProblem(ArrayProblem(Z, Y[:, :1]), get_loss("logistic"), lam), V[:, :1])


@pytest.mark.parametrize("loss,k,dtype", [("logistic", 1, np.float32), ("multinomial", 3, np.float32),
                                          ("multinomial", 3, np.float64)])
def test_the_compiled_hessian_pass_on_two_factors_equals_the_products_with_the_formed_features(monkeypatch, loss, k,
                                                                                                 dtype):
    """Features kept as ``Z = L P`` (a float32 or float64 left factor, weights): the compiled pass and NumPy's
    products on the factors give ``H U`` and the direction's predictions of the formed features, and a Newton-CG
    solve through the compiled pass reaches the formed features' solution."""
    from skframe.contract.problems import FactoredArrayProblem
    from skframe_solvers._problem import FeatureMapProblem
    from skframe_solvers.newton_cg import HessianOperator

    rng = np.random.default_rng(5)
    Z0, Y = _data(rng, 700, 9, k)
    L = np.hstack([Z0, rng.normal(size=(700, 2))]).astype(dtype)
    P = rng.normal(size=(11, 9)) / 3
    w = rng.uniform(0.2, 2.0, size=700)
    factored = FactoredArrayProblem(L, P, Y)
    factored.sample_weight = w
    formed = _Weighted(L.astype(np.float64) @ P, Y, w)
    fp, ref = (FeatureMapProblem(p, get_loss(loss), 1e-3, factored=True) for p in (factored, formed))
    assert fp.P is not None and fp.Z.dtype == dtype and ref.P is None
    V, U = rng.normal(size=fp.shape), rng.normal(size=fp.shape)
    F = ref.predict(V, ref.Z)
    np.testing.assert_allclose(fp.predict(V, fp.Z), F, rtol=1e-10, atol=1e-12)
    expected = HessianOperator(ref, F)(U)
    for work in ("0", "1e18"):
        monkeypatch.setenv("SKFRAME_NUMBA_MIN_WORK", work)
        op = HessianOperator(fp, F)
        np.testing.assert_allclose(op(U), expected, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(op.D, ref.predict(U, ref.Z), rtol=1e-9, atol=1e-12)
    monkeypatch.setenv("SKFRAME_NUMBA_MIN_WORK", "0")
    a, b = (_solve(p, loss, 1e-4, step="cg") for p in (formed, factored))
    np.testing.assert_allclose(b.W, a.W, rtol=1e-5, atol=1e-6 * np.abs(a.W).max())
    assert b.info["relative_gap"] <= TOL


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_compiled_row_products_equal_numpy(dtype):
    """``rows_times`` and ``rows_back`` (one read of each row, float32 rows in float64) equal NumPy's products of
    the same rows in float64, at odd row counts (the 4-row groups and each thread's remainder)."""
    from skframe_solvers._newton_cg_numba import rows_back, rows_times

    rng = np.random.default_rng(11)
    for n in (1, 7, 403):
        Z = rng.normal(size=(n, 13)).astype(dtype)
        A, B = rng.normal(size=(13, 3)), rng.normal(size=(n, 3))
        np.testing.assert_allclose(rows_times(Z, A), Z.astype(np.float64) @ A, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(rows_back(Z, B), Z.astype(np.float64).T @ B, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("work", ["0", "1e18"])
def test_float32_features_are_read_as_they_are_by_the_newton_solver(monkeypatch, work):
    """In-memory float32 features stay float32 for the Newton solver (``factored=True``: it reads them apart),
    every product in float64 (compiled, or NumPy a block at a time): its solution is the one of the same rounded
    features given in float64, to the certified gap; another solver gets them in float64."""
    from skframe_solvers._problem import FeatureMapProblem

    monkeypatch.setenv("SKFRAME_NUMBA_MIN_WORK", work)
    rng = np.random.default_rng(12)
    Z, Y = _data(rng, 900, 12, 3)
    Z32 = Z.astype(np.float32)
    fp = FeatureMapProblem(ArrayProblem(Z32, Y), get_loss("multinomial"), 1e-3, factored=True)
    assert fp.Z.dtype == np.float32 and fp.P is None
    V = rng.normal(size=fp.shape)
    np.testing.assert_allclose(fp.predict(V, fp.Z), Z32.astype(np.float64) @ V, rtol=1e-12, atol=1e-12)
    G = rng.normal(size=(900, 3))
    np.testing.assert_allclose(fp.back(fp.Z, G), Z32.astype(np.float64).T @ G, rtol=1e-12, atol=1e-11)
    assert FeatureMapProblem(ArrayProblem(Z32, Y), get_loss("multinomial"), 1e-3).Z.dtype == np.float64
    a = _solve(ArrayProblem(Z32.astype(np.float64), Y), "multinomial", 1e-5, step="cg", precond_rows=300)
    b = _solve(ArrayProblem(Z32, Y), "multinomial", 1e-5, step="cg", precond_rows=300)
    _agree(a, b, 1e-5)


def test_the_forcing_term_does_not_over_solve_the_last_step():
    """``sqrt(gap)`` until it would push the gap far below ``tol``: then ``0.3 sqrt(tol / gap)``; a solve stopping at
    tol = 1e-8 still reaches it, with fewer CG products than the quadratic forcing term takes."""
    from skframe_solvers import newton_cg

    assert newton_cg.forcing_term(0.25) == 0.5 and newton_cg.forcing_term(1e-4, 1e-8) == pytest.approx(0.01)
    assert newton_cg.forcing_term(1e-6, 1e-8) == pytest.approx(0.03) and newton_cg.forcing_term(1e-6) < 0.03
    assert newton_cg.forcing_term(1e-9, 1e-8) == pytest.approx(np.sqrt(1e-9))  # at the stop: as before
    rng = np.random.default_rng(13)
    Z, Y = _data(rng, 1500, 30, 3)
    res = _solve(ArrayProblem(Z, Y), "multinomial", 1e-6, step="cg", precond_rows=300)
    assert res.info["relative_gap"] <= TOL


def test_the_curvature_bound_reads_evenly_spaced_rows_of_a_large_sample():
    """Past ``rows`` sample rows the trace is the mean over every k-th of them: within a few percent of the
    whole sample's on rows that are alike, and exact where the sample is small."""
    from skframe_solvers._problem import FeatureMapProblem
    from skframe_solvers.newton_cg import RowSample, curvature_bound

    rng = np.random.default_rng(14)
    Z, Y = _data(rng, 4000, 10, 3)
    fp = FeatureMapProblem(ArrayProblem(Z, Y), get_loss("multinomial"), 1e-3)
    V = rng.normal(size=fp.shape) * 0.1
    sample = RowSample(fp, 3000)
    whole = curvature_bound(fp, V, sample, rows=10**9)
    assert curvature_bound(fp, V, sample, rows=500) == pytest.approx(whole, rel=0.1)
    assert curvature_bound(fp, V, sample, rows=3000) == pytest.approx(whole, rel=1e-12)


def test_the_compiled_row_passes_take_thin_products_and_float32_rows(monkeypatch):
    """Where the numba engine runs, float64 rows take the compiled passes up to FAST_ROWS_COLUMNS columns (BLAS's
    GEMM beyond), float32 rows always (a float64 copy would cost more); the values are NumPy's either way."""
    from skframe_solvers._problem import FAST_ROWS_COLUMNS, FeatureMapProblem

    monkeypatch.setenv("SKFRAME_NUMBA_MIN_WORK", "0")
    rng = np.random.default_rng(15)
    Z, Y = _data(rng, 300, 8, 2)
    fp = FeatureMapProblem(ArrayProblem(Z, Y), get_loss("logistic"), 1e-3)
    assert fp._rows_engine(Z, FAST_ROWS_COLUMNS) is not None and fp._rows_engine(Z, FAST_ROWS_COLUMNS + 1) is None
    assert fp._rows_engine(Z.astype(np.float32), 10 * FAST_ROWS_COLUMNS) is not None
    assert fp._rows_engine(np.asfortranarray(Z), 1) is None
    B = rng.normal(size=(300, FAST_ROWS_COLUMNS + 4))
    np.testing.assert_allclose(fp.back(Z, B), Z.T @ B, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(fp.back(Z, B[:, :3]), Z.T @ B[:, :3], rtol=1e-12, atol=1e-12)


def test_the_preconditioner_leaves_out_rows_of_little_curvature(monkeypatch):
    """Rows whose curvature for a class is below ``CURVATURE_FLOOR`` of the largest are left out of that class's
    block: each block is then the full one less a positive semi-definite part bounded by the floor's share, and
    with the floor at zero every row is read; a Newton–CG solve with the floor reaches the direct solution."""
    from skframe_solvers import newton_cg
    from skframe_solvers._problem import FeatureMapProblem
    from skframe_solvers.newton_cg import RowSample, SubsampledPreconditioner, _curvatures

    rng = np.random.default_rng(21)
    Z, Y = _data(rng, 1200, 12, 4)
    fp = FeatureMapProblem(ArrayProblem(Z, Y), get_loss("multinomial"), 1e-4)
    V = rng.normal(size=fp.shape) * 4.0  # confident predictions: most rows rule most classes out
    sample = RowSample(fp, 1200)

    def blocks(pre):
        return [np.tril(f[0]) @ np.tril(f[0]).T for f in pre.factors]

    floored = SubsampledPreconditioner(fp, V, sample)
    assert 0 < floored.rows_used < floored.rows_read
    monkeypatch.setattr(newton_cg, "CURVATURE_FLOOR", 0.0)
    full = SubsampledPreconditioner(fp, V, sample)
    monkeypatch.undo()
    assert full.rows_used == full.rows_read == 1200 * 4
    c = _curvatures(fp, V, Z, Y, None)
    gram = Z.T @ Z / 1200
    for j, (a, b) in enumerate(zip(blocks(floored), blocks(full))):
        left_out = b - a
        assert np.linalg.eigvalsh(left_out).min() >= -1e-10 * np.abs(b).max()
        bound = 1e-2 * c[:, j].max() * np.linalg.eigvalsh(gram).max()
        assert 0 < np.linalg.eigvalsh(left_out).max() <= bound
    direct = _solve(ArrayProblem(Z, Y), "multinomial", 1e-5, step="direct")
    cg = _solve(ArrayProblem(Z, Y), "multinomial", 1e-5, step="cg", precond_rows=600)
    _agree(direct, cg, 1e-5)
