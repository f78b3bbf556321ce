"""Built-in losses: values against tests/naive.py, sub-gradients against finite differences.

The value and sub-gradient tests run on both engines (the ``engine`` fixture): the compiled
formulas and the plain NumPy ones that small evaluations use.
"""

import numpy as np
import pytest

from skframe.contract.registry import get_loss
from skframe.contract.tags import get_tags
from skframe.core.engine import LOSS_NUMBA_MIN_ENTRIES
from skframe.exceptions import InvalidInputError, InvalidParameterError, UnknownComponentError
from tests import naive

CASES = [
    ("square", {}, lambda F, Y: naive.loss_square(F, Y)),
    ("huber", {"kappa": 0.7}, lambda F, Y: naive.loss_huber(F, Y, 0.7)),
    ("epsilon-svr", {"epsilon": 0.3}, lambda F, Y: naive.loss_eps_l1(F, Y, 0.3)),
    ("epsilon-ridge", {"epsilon": 0.3}, lambda F, Y: naive.loss_eps_l2(F, Y, 0.3)),
    ("pinball", {"quantiles": [0.1, 0.5, 0.8]}, lambda F, Y: naive.loss_pinball(F, Y, [0.1, 0.5, 0.8])),
    ("hinge", {}, lambda F, Y: naive.loss_hinge(F, Y)),
]


def _data(name, rng, n=40, d=3):
    F = rng.normal(size=(n, d))
    Y = np.sign(rng.normal(size=(n, d))) if name == "hinge" else rng.normal(size=(n, d))
    return F, Y


@pytest.mark.parametrize("name,params,ref", CASES, ids=[c[0] for c in CASES])
def test_value_matches_naive(name, params, ref, rng, engine):
    loss = get_loss(name, **params)
    F, Y = _data(name, rng)
    np.testing.assert_allclose(loss.value(F, Y), ref(F, Y), rtol=1e-12, atol=1e-14)
    assert loss.value(F, Y).shape == (F.shape[0],)
    assert loss.gradient(F, Y).shape == F.shape


@pytest.mark.parametrize("name,params,ref", CASES, ids=[c[0] for c in CASES])
def test_gradient_matches_finite_differences_away_from_kinks(name, params, ref, rng, engine):
    loss = get_loss(name, **params)
    F, Y = _data(name, rng)
    G = loss.gradient(F, Y)
    h = 1e-6
    for i in range(F.shape[0]):
        for j in range(F.shape[1]):
            Fp, Fm = F.copy(), F.copy()
            Fp[i, j] += h
            Fm[i, j] -= h
            fd = (ref(Fp[i : i + 1], Y[i : i + 1])[0] - ref(Fm[i : i + 1], Y[i : i + 1])[0]) / (2 * h)
            assert G[i, j] == pytest.approx(fd, rel=1e-5, abs=1e-6), (i, j)


def _directional_max(ref, F, Y, D, h=1e-7):
    """One-sided directional derivative f'(F; D) = max over the sub-differential of <g, D>."""
    return (ref(F + h * D, Y)[0] - ref(F, Y)[0]) / h


@pytest.mark.parametrize("name,params,ref", CASES, ids=[c[0] for c in CASES])
def test_subgradient_at_kinks_is_in_subdifferential(name, params, ref, rng, engine):
    """g is a sub-gradient iff <g, D> <= f'(F; D) for every direction D (checked on many D)."""
    loss = get_loss(name, **params)
    d = 3
    Y = np.sign(rng.normal(size=(1, d))) if name == "hinge" else rng.normal(size=(1, d))
    kinks = {
        "square": [Y.copy()],
        "huber": [Y + 0.7 * np.array([[1.0, 0, 0]])],
        "epsilon-svr": [Y.copy(), Y + 0.3 * np.array([[0, 1.0, 0]])],
        "epsilon-ridge": [Y.copy(), Y + 0.3 * np.array([[0, 0, 1.0]])],
        "pinball": [Y.copy(), Y + np.array([[0.0, 0.4, 0.0]])],
        "hinge": [1.0 / Y, np.array([[1.0 / Y[0, 0], 2 * Y[0, 1], 0.0]])],
    }[name]
    for F in kinks:
        g = loss.gradient(F, Y)
        for _ in range(50):
            D = rng.normal(size=(1, d))
            assert float(np.sum(g * D)) <= _directional_max(ref, F, Y, D) + 1e-5


@pytest.mark.parametrize(
    "name,params,lip,smooth",
    [
        ("square", {}, np.inf, True),
        ("huber", {"kappa": 2.0}, 2.0, True),
        ("epsilon-svr", {"epsilon": 0.1}, 1.0, False),
        ("epsilon-ridge", {"epsilon": 0.1}, np.inf, True),
        ("pinball", {"quantiles": [0.1, 0.9]}, np.sqrt(0.81 * 2), False),
        ("hinge", {}, 1.0, False),
    ],
)
def test_declared_lipschitz_and_smoothness(name, params, lip, smooth, rng):
    loss = get_loss(name, **params)
    tags = get_tags(loss)
    assert tags.smooth is smooth
    assert tags.lipschitz == pytest.approx(lip)
    if np.isfinite(lip):  # gradients never exceed the Lipschitz constant
        F, Y = _data(name, rng, d=1 if name == "hinge" else 2)  # hinge: 1-Lipschitz per column
        assert np.all(np.linalg.norm(loss.gradient(10 * F, Y), axis=1) <= lip + 1e-12)


def test_norm_based_losses_are_rotation_invariant(rng):
    F, Y = rng.normal(size=(20, 3)), rng.normal(size=(20, 3))
    Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    for name, params in [("huber", {"kappa": 0.5}), ("epsilon-svr", {"epsilon": 0.2}),
                         ("epsilon-ridge", {"epsilon": 0.2})]:
        loss = get_loss(name, **params)
        np.testing.assert_allclose(loss.value(F @ Q, Y @ Q), loss.value(F, Y), rtol=1e-12)


def test_pinball_single_level_broadcasts_and_mismatch_errors(rng):
    F, Y = rng.normal(size=(5, 2)), rng.normal(size=(5, 2))
    np.testing.assert_allclose(get_loss("pinball", quantiles=0.3).value(F, Y), naive.loss_pinball(F, Y, [0.3, 0.3]))
    with pytest.raises(InvalidInputError, match="quantile levels"):
        get_loss("pinball", quantiles=[0.1, 0.5, 0.9]).value(F, Y)


@pytest.mark.parametrize(
    "name,params",
    [("huber", {"kappa": -1}), ("epsilon-svr", {"epsilon": -0.1}), ("pinball", {"quantiles": [0.0, 0.5]}),
     ("pinball", {"quantiles": [1.5]}), ("huber", {"bogus": 1})],
)
def test_bad_parameters_raise(name, params):
    with pytest.raises(InvalidParameterError):
        get_loss(name, **params)


def test_unknown_loss_lists_registered():
    with pytest.raises(UnknownComponentError, match="huber"):
        get_loss("hubber")


def test_shape_mismatch_raises():
    with pytest.raises(InvalidInputError, match="shape"):
        get_loss("square").value(np.zeros((3, 2)), np.zeros((3, 1)))


_DUAL_CASES = [("square", {}, "reg"), ("huber", {"kappa": 0.7}, "reg"), ("epsilon-svr", {"epsilon": 0.3}, "reg"),
               ("epsilon-ridge", {"epsilon": 0.3}, "reg"), ("pinball", {"quantiles": [0.2, 0.9]}, "reg"),
               ("hinge", {}, "clf")]


def _pair(rng, kind, n=50, d=2):
    F, Y = rng.normal(size=(n, d)) * 2, rng.normal(size=(n, d))
    return F, (np.where(Y > 0, 1.0, -1.0) if kind == "clf" else Y)


@pytest.mark.parametrize("name,params,kind", _DUAL_CASES)
def test_dual_capability_is_the_fenchel_conjugate(rng, name, params, kind):
    """h(alpha, y) = -l*(-alpha): Fenchel-Young equality at alpha = -grad l(f), inequality elsewhere."""
    loss = get_loss(name, **params)
    F, Y = _pair(rng, kind)
    A = -loss.gradient(F, Y)  # a sub-gradient: inside the dual domain
    lhs = loss.dual.values(A, Y)
    assert np.all(np.isfinite(lhs))
    np.testing.assert_allclose(lhs, loss.value(F, Y) + np.sum(A * F, axis=1), rtol=1e-10, atol=1e-12)
    # any feasible alpha and any f: h(alpha, y) <= l(f, y) + <alpha, f>
    B = loss.dual.project(rng.normal(size=F.shape), Y)
    for G in (F, rng.normal(size=F.shape) * 3):
        assert np.all(loss.dual.values(B, Y) <= loss.value(G, Y) + np.sum(B * G, axis=1) + 1e-10)


@pytest.mark.parametrize("name,params,kind", _DUAL_CASES[1:])
def test_dual_domain_and_default_solver(rng, name, params, kind):
    loss = get_loss(name, **params)
    F, Y = _pair(rng, kind)
    A = loss.dual.project(rng.normal(size=F.shape) * 10, Y)
    assert np.all(np.isfinite(loss.dual.values(A, Y)))
    if loss.dual.structure == "norm" and np.isfinite(loss.dual.radius):
        on_sphere = np.linalg.norm(A, axis=1) >= loss.dual.radius * (1 - 1e-12)
        assert on_sphere.any() and np.all(loss.dual.values(A * 1.01, Y)[on_sphere] == -np.inf)
    assert get_tags(loss).default_solver == "dual-cd" and get_tags(get_loss("square")).default_solver == "closed-form"


@pytest.mark.parametrize("name,params,ref", CASES, ids=[c[0] for c in CASES])
def test_engines_agree_and_small_evaluations_skip_numba(name, params, ref, rng, monkeypatch):
    from skframe_losses import _losses_numpy, losses

    loss = get_loss(name, **params)
    F, Y = _data(name, rng, n=200, d=3)
    F[:5] = Y[:5]  # kinks of the norm-based losses
    monkeypatch.setenv("SKFRAME_NUMBA_MIN_WORK", "0")
    compiled = loss.value(F, Y), loss.gradient(F, Y)
    monkeypatch.delenv("SKFRAME_NUMBA_MIN_WORK")
    monkeypatch.setattr(losses, "_numba", None)  # any use of the compiled engine would fail
    plain = loss.value(F, Y), loss.gradient(F, Y)
    np.testing.assert_allclose(plain[0], compiled[0], rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(plain[1], compiled[1], rtol=1e-13, atol=1e-15)
    assert F.size < LOSS_NUMBA_MIN_ENTRIES  # the plan's rule, skframe.core.engine.elementwise_engine
    assert hasattr(_losses_numpy, "huber_value")
