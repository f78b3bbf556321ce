"""Logistic and multinomial losses and the Newton solver, against the plain formulas of tests/naive.py."""

import numpy as np
import pytest

from skframe.contract.problems import ArrayProblem
from skframe.contract.registry import get_loss
from skframe.exceptions import InvalidInputError, InvalidParameterError
from skframe.plugin.api import check_component, get_component
from skframe_solvers.lbfgs import LBFGSSolver
from skframe_solvers.newton import NewtonSolver
from tests import naive


def _labels(rng, n, k):
    if k == 1:
        return np.where(rng.random((n, 1)) < 0.5, -1.0, 1.0)
    Y = -np.ones((n, k))
    Y[np.arange(n), rng.integers(0, k, size=n)] = 1.0
    return Y


CASES = [("logistic", 1, naive.loss_logistic), ("logistic", 3, naive.loss_logistic),
         ("multinomial", 4, naive.loss_multinomial)]


@pytest.mark.parametrize("name,k,ref", CASES, ids=["logistic", "logistic-ovr", "multinomial"])
def test_values_and_gradients_match_the_plain_formulas(name, k, ref, rng, engine):
    loss = get_loss(name)
    F, Y = 3 * rng.normal(size=(50, k)), _labels(rng, 50, k)
    np.testing.assert_allclose(loss.value(F, Y), ref(F, Y), rtol=1e-12)
    h = 1e-6
    for j in range(k):
        E = np.zeros_like(F)
        E[:, j] = h
        fd = (ref(F + E, Y) - ref(F - E, Y)) / (2 * h)
        np.testing.assert_allclose(loss.gradient(F, Y)[:, j], fd, rtol=1e-6, atol=1e-8)
    U = rng.normal(size=F.shape)
    HU = np.einsum("iab,ib->ia", loss.hessian(F, Y), U)
    np.testing.assert_allclose(loss.hessian_times(F, Y, U), HU, rtol=1e-12, atol=1e-14)
    fd = (loss.gradient(F + h * U, Y) - loss.gradient(F - h * U, Y)) / (2 * h)
    np.testing.assert_allclose(HU, fd, rtol=1e-5, atol=1e-8)


def test_large_predictions_do_not_overflow(engine):
    F = np.array([[800.0, -800.0, 0.0]])
    for name, Y in (("logistic", np.array([[1.0, 1.0, -1.0]])), ("multinomial", np.array([[-1.0, 1.0, -1.0]]))):
        loss = get_loss(name)
        assert np.all(np.isfinite(loss.value(F, Y))) and np.all(np.isfinite(loss.gradient(F, Y)))
    np.testing.assert_allclose(get_loss("multinomial").value(F, np.array([[-1.0, 1.0, -1.0]])), [1600.0])


def test_probabilities():
    F = np.array([[0.0, 2.0], [-1.0, 1.0]])
    np.testing.assert_allclose(get_loss("logistic").probabilities(F), 1 / (1 + np.exp(-F)))
    P = get_loss("multinomial").probabilities(F)
    np.testing.assert_allclose(P, np.exp(F) / np.exp(F).sum(axis=1, keepdims=True))


@pytest.mark.parametrize("name", ["logistic", "multinomial"])
def test_conformance_kit_passes(name):
    check_component(get_component("loss", name))


@pytest.mark.parametrize("name,k", [("logistic", 1), ("logistic", 3), ("multinomial", 4)])
def test_value_gradient_dual_is_the_three_methods_in_one(name, k, rng):
    loss = get_loss(name)
    F, Y = 3 * rng.normal(size=(60, k)), _labels(rng, 60, k)
    F[:3] *= 200.0  # far in the tails: the entropies are then tiny, and must stay finite and non-negative
    values, G, h = loss.value_gradient_dual(F, Y)
    np.testing.assert_allclose(values, loss.value(F, Y), rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(G, loss.gradient(F, Y), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(h, loss.conjugate.values(-G, Y), rtol=1e-9, atol=1e-12)
    assert np.all(np.isfinite(h)) and np.all(h >= 0)
    with pytest.raises(InvalidInputError, match="-1 or \\+1"):
        loss.value_gradient_dual(F[:2], np.zeros((2, k)))


def test_conjugates_refuse_bad_labels():
    with pytest.raises(InvalidInputError, match="-1 or \\+1"):
        get_loss("logistic").conjugate.values(np.zeros((2, 1)), np.array([[0.0], [1.0]]))
    with pytest.raises(InvalidInputError, match="one \\+1 per row"):
        get_loss("multinomial").conjugate.values(np.zeros((1, 2)), np.array([[1.0, 1.0]]))


def _problem(rng, k, n=120, r=6):
    Z = rng.normal(size=(n, r))
    if k == 1:
        Y = np.where(Z[:, :1] + 0.7 * rng.normal(size=(n, 1)) > 0, 1.0, -1.0)
    else:
        Y = -np.ones((n, k))
        Y[np.arange(n), np.argmax(Z[:, :k] + 0.7 * rng.normal(size=(n, k)), axis=1)] = 1.0
    return Z, Y


@pytest.mark.parametrize("name,k,ref", [("logistic", 1, naive.loss_logistic),
                                        ("multinomial", 3, naive.loss_multinomial)])
@pytest.mark.parametrize("max_dense", [3000, 1], ids=["dense", "cg"])
def test_newton_matches_the_scipy_reference(name, k, ref, max_dense, rng):
    Z, Y = _problem(rng, k)
    res = NewtonSolver(tol=1e-12, max_dense=max_dense).solve(ArrayProblem(Z, Y), get_loss(name), 1e-2)
    W_ref = naive.naive_weighted_fit(Z, Y, ref, 1e-2)
    np.testing.assert_allclose(res.W, W_ref, atol=1e-5)
    info = res.info
    assert info["method"] == ("newton" if max_dense > 1 else "newton-cg")
    assert -1e-14 <= info["gap"] <= 1e-10 and info["relative_gap"] <= 1e-12
    primal = naive.feature_map_objective(res.W, Z, Y, ref, 1e-2)
    assert info["primal"] == pytest.approx(primal, rel=1e-12)


@pytest.mark.parametrize("name,k,ref", [("logistic", 1, naive.loss_logistic),
                                        ("multinomial", 3, naive.loss_multinomial)])
def test_newton_steps_with_a_reused_hessian_reach_the_same_optimum(name, k, ref, rng):
    Z, Y = _problem(rng, k, n=400, r=12)
    res = NewtonSolver(tol=1e-12).solve(ArrayProblem(Z, Y), get_loss(name), 1e-4)
    assert res.info["reused_hessians"] >= 1  # the fast phase's steps keep the previous Hessian
    np.testing.assert_allclose(res.W, naive.naive_weighted_fit(Z, Y, ref, 1e-4), atol=1e-5)
    assert res.info["relative_gap"] <= 1e-12


class _Weighted(ArrayProblem):
    def __init__(self, Z, Y, w):
        super().__init__(Z, Y)
        self.sample_weight = w


@pytest.mark.parametrize("name,k", [("logistic", 1), ("multinomial", 3)])
def test_weights_equal_repeated_rows_and_zero_weights_drop_rows(name, k, rng):
    Z, Y = _problem(rng, k)
    w = rng.integers(0, 4, size=len(Z)).astype(float)
    solver, loss = NewtonSolver(tol=1e-13), get_loss(name)
    weighted = solver.solve(_Weighted(Z, Y, w), loss, 1e-2)
    rep = np.repeat(np.arange(len(Z)), w.astype(int))
    repeated = solver.solve(ArrayProblem(Z[rep], Y[rep]), loss, 1e-2)
    np.testing.assert_allclose(weighted.W, repeated.W, atol=1e-9)
    # the certificate: the weighted problem's gap is below the tolerance at the same point
    assert weighted.info["primal"] == pytest.approx(repeated.info["primal"], rel=1e-10)
    assert -1e-14 <= weighted.info["gap"] <= 1e-12
    keep = w > 0
    dropped = solver.solve(ArrayProblem(Z[keep], Y[keep]), loss, 1e-2)
    kept = solver.solve(_Weighted(Z, Y, keep.astype(float)), loss, 1e-2)
    np.testing.assert_allclose(kept.W, dropped.W, atol=1e-9)


def test_lbfgs_reports_the_conjugate_gap_with_weights(rng):
    Z, Y = _problem(rng, 1)
    w = rng.random(len(Z))
    res = LBFGSSolver(init="zeros").solve(_Weighted(Z, Y, w), get_loss("logistic"), 1e-2)
    ref = NewtonSolver(tol=1e-13).solve(_Weighted(Z, Y, w), get_loss("logistic"), 1e-2)
    assert 0 <= res.info["gap"] < 1e-5
    np.testing.assert_allclose(res.W, ref.W, atol=1e-3)


def test_newton_refuses_a_loss_without_second_derivatives(rng):
    Z, Y = _problem(rng, 1)
    with pytest.raises(InvalidParameterError, match="lbfgs"):
        NewtonSolver().solve(ArrayProblem(Z, Y), get_loss("huber"), 1e-2)


def test_bad_weights_are_refused(rng):
    Z, Y = _problem(rng, 1)
    with pytest.raises(InvalidInputError, match="sample_weight"):
        NewtonSolver().solve(_Weighted(Z, Y, -np.ones(len(Z))), get_loss("logistic"), 1e-2)


class _StreamedWeighted(ArrayProblem):
    """The same rows streamed in blocks of 17 (features() is None), with weights."""

    in_memory = False

    def __init__(self, Z, Y, w):
        super().__init__(Z, Y)
        self.sample_weight = w

    def features(self):
        return None

    def blocks(self, chunk_rows=None):
        yield from ArrayProblem.blocks(self, 17)


@pytest.mark.parametrize("solver", [NewtonSolver(tol=1e-13), LBFGSSolver(init="zeros", tol=1e-14)])
def test_weighted_streamed_problem_equals_in_memory(solver, rng):
    Z, Y = _problem(rng, 3)
    w = rng.integers(0, 4, size=len(Z)).astype(float)
    loss = get_loss("multinomial")
    a = solver.solve(_Weighted(Z, Y, w), loss, 1e-2)
    b = solver.solve(_StreamedWeighted(Z, Y, w), loss, 1e-2)
    np.testing.assert_allclose(a.W, b.W, atol=1e-6)
    assert b.info["gap"] < 1e-6
