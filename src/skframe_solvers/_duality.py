"""Primal and dual objectives of the feature-map problem, and the duality gap.

With the variables of :mod:`skframe_solvers._problem` (``V`` of shape (r, k), ``C`` of
shape (k, d), ``C^T C = M``), the primal is

    P(V) = (1/n) sum_i l(C^T V^T z_i, y_i) + (lam/2) ||V||^2

and, for dual variables ``A`` (n x d, one d-dimensional block ``alpha_i`` per sample),
the dual is (Shalev-Shwartz and Zhang, "Stochastic Dual Coordinate Ascent Methods for
Regularized Loss Minimization", JMLR 2013, with the block map ``alpha -> C alpha``)

    D(A) = (1/n) sum_i h(alpha_i, y_i) - (lam/2) ||V(A)||^2,   V(A) = (1/(lam n)) Z^T A C^T,

where ``h(alpha, y) = -l^*(-alpha)`` is given by the loss's ``dual`` capability. For any V
and any feasible A, ``D(A) <= min P <= P(V)`` (weak duality), so ``P(V) - D(A)`` bounds
how far V is from the optimum. The two objectives are computed by independent code: P
from the loss values at the predictions, D from the conjugate formula of ``loss.dual``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["conjugate_of", "dual_objective", "dual_from_primal", "gap_report", "loss_prox", "relative_gap"]


def _stack_targets(fp):
    if fp.in_memory:
        return fp.Y
    return np.concatenate([Yb for _, _, Yb in fp.blocks()], axis=0)


def primal_V(fp, A):
    """``V(A) = (1/(lam n)) Z^T A C^T`` accumulated over row blocks."""
    out = np.zeros((fp.r, fp.C.shape[0]))
    if fp.weights is not None:  # weighted rows: the dual of (1/n) sum_i w_i l_i
        A = A * fp.weights[:, None]
    if fp.in_memory:
        out = fp.Z.T @ (A @ fp.C.T)
    else:
        for start, Zb, _ in fp.blocks():
            out += Zb.T @ (A[start:start + Zb.shape[0]] @ fp.C.T)
    return out / (fp.lam * fp.n)


def dual_objective(fp, A, Y=None):
    """``(D(A), V(A))``; ``D = -inf`` when A is outside the loss's dual domain."""
    Y = _stack_targets(fp) if Y is None else Y
    V = primal_V(fp, A)
    h = conjugate_of(fp.loss).values(A, Y)
    if fp.weights is not None:
        h = h * fp.weights
    return float(np.mean(h)) - fp.penalty(V), V


def conjugate_of(loss):
    """The loss's ``dual`` (structured, for the dual solvers) or else its ``conjugate``; None without either."""
    dual = getattr(loss, "dual", None)
    return dual if dual is not None else getattr(loss, "conjugate", None)


def loss_prox(dual, V_pred, Y, c, lower=None, upper=None):
    """Proximal step of ``l / c`` at ``V_pred``, returned as the dual point ``alpha = -grad l(f)``.

    ``f = prox_{l/c}(v)`` satisfies ``f = v + alpha / c`` with
    ``alpha = argmin_a psi(a) - <a, y - v> + ||a||^2 / (2 c)`` (Moreau), which the two dual
    families solve in closed form. The outputs of a row are the last axis: ``(n, d)`` arrays for one
    problem, ``(n, P, d)`` for P stacked problems (the batched ADMM, with ``c`` of shape ``(1, P, 1)``).
    """
    R = Y - V_pred
    inv = 1.0 / c
    if dual.structure == "norm":
        rho = np.sqrt(np.sum(R * R, axis=-1, keepdims=True))
        t = np.clip((rho - dual.l1) / (dual.quad + inv), 0.0, dual.radius)
        ratio = np.divide(t, rho, out=np.zeros_like(rho), where=rho > 0)
        return R * ratio
    soft = np.sign(R) * np.maximum(np.abs(R) - dual.l1, 0.0)
    return np.clip(soft / (dual.quad + inv), lower, upper)


def relative_gap(primal, dual):
    """``(P - D) / max(|P|, |D|, tiny)``: the stopping quantity of ``dual-cd``."""
    return (primal - dual) / max(abs(primal), abs(dual), np.finfo(float).tiny)


def dual_from_primal(fp, V):
    """A feasible dual point built from a primal point V, and its dual objective.

    ``alpha_i = -grad l(f_i, y_i)`` (a sub-gradient for the non-smooth losses), projected
    on the dual domain, then scaled by the ``s`` in [0, 1] that maximises ``D(s A)`` (a
    concave quadratic in s: 0 is always feasible). At the optimum of a smooth loss this
    A is the optimal dual point and the gap is zero.
    """
    Y = _stack_targets(fp)
    parts = []
    for _, Zb, Yb in fp.blocks():
        parts.append(-fp.loss.gradient(fp.predict(V, Zb), Yb))
    dual = conjugate_of(fp.loss)
    A = dual.project(np.concatenate(parts, axis=0), Y)
    if getattr(dual, "quad", None) is None:  # a conjugate without the quadratic structure: A itself
        return A, dual_objective(fp, A, Y)[0]
    w = 1.0 if fp.weights is None else fp.weights
    norms = np.sqrt(np.sum(A * A, axis=1)) if dual.structure == "norm" else np.sum(np.abs(A), axis=1)
    lin = float(np.mean(w * np.sum(A * Y, axis=1))) - dual.l1 * float(np.mean(w * norms))
    VA = primal_V(fp, A)
    quad = 0.5 * dual.quad * float(np.mean(w * np.sum(A * A, axis=1))) + fp.penalty(VA)
    s = 1.0 if quad <= 0 else float(np.clip(lin / (2.0 * quad), 0.0, 1.0))
    A *= s
    D, _ = dual_objective(fp, A, Y)
    return A, D


def gap_report(fp, V, A=None):
    """``{"primal", "dual", "gap", "relative_gap"}`` for the primal point V (JSON floats).

    Without A, the dual point is :func:`dual_from_primal` (a certificate for any solver), or the same
    point built by the problem's own ``dual_pass(V, C, loss, lam) -> D`` when it has one (the Dask
    problem: the n x d dual variables stay on the workers); None when the loss declares no ``dual``.
    """
    if conjugate_of(fp.loss) is None:
        return None
    P = fp.objective(V)
    # a distributed problem builds the same dual point where its rows are (a problem's dual_pass; None: not offered)
    own = None if fp.in_memory or A is not None or fp.weights is not None else getattr(fp.problem, "dual_pass", None)
    D = None if own is None else own(V, fp.C, fp.loss, fp.lam)
    if D is None:
        D = dual_from_primal(fp, V)[1] if A is None else dual_objective(fp, A)[0]
    return {"primal": float(P), "dual": float(D), "gap": float(P - D), "relative_gap": float(relative_gap(P, D))}
