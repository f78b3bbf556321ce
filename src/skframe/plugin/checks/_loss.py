"""The loss check: shapes, finite-difference gradients, convexity, Lipschitz constant and Fenchel dual."""

from __future__ import annotations

import math

import numpy as np

from skframe.contract.loader import get_plugin_registry
from skframe.persistence.fidelity import loss_probe_data
from skframe.plugin.checks._common import (
    _checking,
    _close,
    _copies,
    _rebuilt_alike,
    _worst,
)

# ----------------------------------------------------------------------------- losses
#: what the loss check evaluates (besides the properties of every kind)
PROPERTIES = ("value", "gradient", "convexity", "tag lipschitz", "tag square", "tag default_solver", "dual",
              "dual (Fenchel-Young equality)", "dual projection", "dual (Fenchel-Young inequality)", "dual quad/l1",
              "conjugate (Fenchel-Young equality)", "conjugate projection", "conjugate (Fenchel-Young inequality)",
              "value_gradient_dual")


def check_loss(loss, *, params=None, n=25, d=2, rng=0, rtol=1e-5):
    """Check a loss (or loss class, built with ``params``).

    Parameters
    ----------
    loss : loss object or class
    n, d : int, default 25 and 2
        Rows and columns of the predictions (``d`` is the number of quantile levels for a loss
        whose tags give ``quantiles``; the targets are ±1 for a classification loss).
    rng : int or numpy.random.Generator, default 0
    rtol : float, default 1e-5
        Relative tolerance of the finite-difference gradient and of the dual equalities.

    Returns
    -------
    LossTags
    """
    with _checking("loss", loss, params, rng, PROPERTIES) as (loss, fail, tags, gen):
        F, Y = loss_probe_data(gen, tags, n, d)
        v = np.asarray(loss.value(F, Y), dtype=np.float64)
        fail.require(v.shape == (n,) and np.all(np.isfinite(v)), "value", f"value(F, Y) has shape {v.shape}",
                     f"return one finite loss per row, shape ({n},)")
        G = np.asarray(loss.gradient(F, Y), dtype=np.float64)
        fail.require(G.shape == F.shape and np.all(np.isfinite(G)), "gradient", f"gradient(F, Y) has shape {G.shape}",
                     f"return a finite (sub-)gradient of the predictions' shape {F.shape}")
        h = 1e-6
        FD = np.empty_like(F)
        for j in range(F.shape[1]):
            E = np.zeros_like(F)
            E[:, j] = h
            FD[:, j] = (np.asarray(loss.value(F + E, Y)) - np.asarray(loss.value(F - E, Y))) / (2 * h)
        fail.require(_close(G, FD, rtol, atol=1e-6), "gradient", f"gradient differs from central finite differences of "
                     f"value: {_worst(G, FD)}", "return the derivative of value with respect to F")
        F2 = F + gen.standard_normal(F.shape)
        mid = np.asarray(loss.value(0.5 * (F + F2), Y))
        fail.require(np.all(mid <= 0.5 * (v + np.asarray(loss.value(F2, Y))) + 1e-9 * (1 + np.abs(mid))), "convexity",
                     "value((F1 + F2)/2) > (value(F1) + value(F2))/2", "a loss must be convex in the predictions")
        if math.isfinite(tags.lipschitz):
            cols = slice(None) if tags.quantiles is not None else slice(0, 1)  # one output, or the quantile levels
            A, B, T = F[:, cols], F2[:, cols], Y[:, cols]
            gap = np.abs(np.asarray(loss.value(B, T)) - np.asarray(loss.value(A, T)))
            ratio = float(np.max(gap / np.maximum(np.linalg.norm(B - A, axis=1), 1e-300)))
            fail.require(ratio <= tags.lipschitz * (1 + 1e-9) + 1e-12, "tag lipschitz",
                         f"|l(f1) - l(f2)| / ||f1 - f2|| reaches {ratio:.6g} > lipschitz = {tags.lipschitz}",
                         "declare the Lipschitz constant of one output (of the quantile levels, Euclidean norm), "
                         "math.inf when unbounded")
        if tags.square:
            fail.require(_close(v, 0.5 * ((F - Y) ** 2).sum(axis=1), 1e-12) and _close(G, F - Y, 1e-12), "tag square",
                         "the tags say square but the loss is not 1/2 ||f - y||^2", "declare square=False")
        if tags.default_solver is not None:
            reg = get_plugin_registry()
            fail.require(reg.lookup("solver", tags.default_solver) is not None, "tag default_solver",
                         f"no solver is registered as {tags.default_solver!r}", "name a registered solver, or None")
        dual = getattr(loss, "dual", None)
        if dual is not None:
            _check_dual(fail, loss, dual, F, Y, v, G, gen, rtol)
        conjugate = getattr(loss, "conjugate", None)
        if conjugate is not None:
            _check_conjugate(fail, conjugate, F, Y, v, G, gen, rtol)
        terms = getattr(loss, "value_gradient_dual", None)
        if callable(terms):
            _check_terms(fail, terms, conjugate, F, Y, v, G)
        for other, prop, how in _copies(fail, loss, "loss"):
            _rebuilt_alike(fail, _close(other.value(F, Y), v, 1e-12), prop, f"the loss {how} gives other values")
    return tags


check_loss.properties = PROPERTIES  # read by skframe.plugin.checks.PROPERTIES


def _check_fenchel_young(fail, name, conj, data, rng, rtol, *, step, domain):
    """``conj.values`` is ``-l^*(-alpha)``: the Fenchel-Young equality at ``alpha = -gradient``, a projection onto
    the domain (idempotent, finite values there) and the inequality at projected points; returns those points and
    the values there. ``name`` starts the names of the properties (``"conjugate"`` or ``"dual"``)."""
    F, Y, v, G = data
    A = -G
    h = np.asarray(conj.values(A, Y), dtype=np.float64)
    primal = v + np.sum(F * A, axis=1)
    must = f"{name}.values must be h(alpha, y) = -l*(-alpha), the conjugate at -alpha"
    fail.require(_close(h, primal, rtol, atol=1e-9), f"{name} (Fenchel-Young equality)",
                 f"at alpha = -gradient, {name}.values(alpha, y) != l(f, y) + <f, alpha>: {_worst(h, primal)}", must)
    B = np.asarray(conj.project(A + step * rng.standard_normal(A.shape), Y))
    fail.require(_close(conj.project(B, Y), B, 1e-12), f"{name} projection", "project is not idempotent",
                 f"project onto {domain}")
    hB = np.asarray(conj.values(B, Y), dtype=np.float64)
    fail.require(np.all(np.isfinite(hB)), f"{name} projection", f"{name}.values is -inf at projected points",
                 f"project onto the domain where {name}.values is finite")
    fail.require(np.all(hB <= v + np.sum(F * B, axis=1) + 1e-9 * (1 + np.abs(hB))),
                 f"{name} (Fenchel-Young inequality)",
                 f"{name}.values(alpha, y) > l(f, y) + <f, alpha> for a feasible alpha", must)
    return B, hB


def _check_conjugate(fail, conjugate, F, Y, v, G, rng, rtol):
    """``conjugate.values`` is ``-l^*(-alpha)``: equality at ``alpha = -gradient``, inequality elsewhere."""
    _check_fenchel_young(fail, "conjugate", conjugate, (F, Y, v, G), rng, rtol, step=0.3,
                         domain="the conjugate's domain")


def _check_terms(fail, terms, conjugate, F, Y, v, G):
    """``value_gradient_dual(F, Y)`` is ``(value, gradient, conjugate.values(-gradient))``."""
    got = terms(F, Y)
    ok = isinstance(got, tuple) and len(got) == 3 and _close(np.asarray(got[0]), v, 1e-9) \
        and _close(np.asarray(got[1]), G, 1e-9)
    if ok and conjugate is not None:
        ok = _close(np.asarray(got[2]), np.asarray(conjugate.values(-G, Y), dtype=np.float64), 1e-9)
    fail.require(ok, "value_gradient_dual", "value_gradient_dual(F, Y) is not (value, gradient, conjugate.values("
                 "-gradient)) of the same rows", "return the three arrays the separate methods give, or leave the "
                 "method out")


def _check_dual(fail, loss, dual, F, Y, v, G, rng, rtol):
    structure = getattr(dual, "structure", None)
    fail.require(structure in ("norm", "separable"), "dual", f"dual.structure={structure!r}",
                 "give 'norm' (a loss of the residual norm) or 'separable' (summed over columns)")
    B, hB = _check_fenchel_young(fail, "dual", dual, (F, Y, v, G), rng, rtol, step=1.0, domain="the dual domain")
    norm = np.linalg.norm(B, axis=1) if structure == "norm" else np.abs(B).sum(axis=1)
    psi = 0.5 * float(dual.quad) * (B * B).sum(axis=1) + float(dual.l1) * norm
    fail.require(_close(hB, np.sum(B * Y, axis=1) - psi, rtol, atol=1e-9), "dual quad/l1",
                 "dual.values != <alpha, y> - quad/2 ||alpha||^2 - l1 N(alpha) on the domain",
                 "declare the quad and l1 coefficients of psi that the solvers use")
