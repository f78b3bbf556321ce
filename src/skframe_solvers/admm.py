"""ADMM on the sketched features with a duality-gap stop (``admm``): fast when lam n is small.

Dual coordinate ascent needs about ``1 + ||z||^2 / (lam n)`` epochs per e-fold of the gap,
which is thousands when ``lam n << 1`` (e.g. lam = 1e-7, n = 10^4). The alternating
direction method of multipliers (Boyd et al., "Distributed Optimization and Statistical
Learning via the Alternating Direction Method of Multipliers", 2011) splits the problem of
:mod:`skframe_solvers._problem` as

    min_{V, F}  (1/n) sum_i l(f_i, y_i) + (lam/2) ||V||^2   subject to   F = Z V C

and alternates (scaled multipliers U, penalty rho / n):

* V-update: ``lam V + (rho/n) Z^T Z V C C^T = (rho/n) Z^T (F - U) C^T``, a ridge system solved
  in the eigenbasis of ``Z^T Z`` (``C C^T`` is diagonal; computed once, so changing rho costs
  nothing);
* F-update: the proximal operator of each sample's loss, in closed form from the loss's
  Fenchel dual (``loss.dual``, :mod:`skframe_losses.duals`); it also gives the dual point
  ``alpha_i = -grad l(f_i, y_i)``, always inside the dual domain;
* U-update: ``U += Z V C - F``; rho is rebalanced from the primal and dual residuals.

It stops on the same certified relative duality gap as ``dual-cd`` (dual point
``A = -n rho' U``, objectives by the independent code of :mod:`skframe_solvers._duality`),
taken between the smallest primal and the largest dual objective seen so far (each is a
bound on the optimum; the iterates oscillate), and returns the primal point of the former.
"""

from __future__ import annotations

import numpy as np

from skframe.plugin.api import Interval, Options
from skframe.plugin.toolbox import serial_blas
from skframe_solvers._base import COUNT, INIT, INIT_HINT, POSITIVE, BaseSolver, DualSolverMixin
from skframe_solvers._duality import dual_objective, loss_prox, relative_gap
from skframe_solvers._newton import polish

__all__ = ["ADMMSolver"]


#: the parameters the batched loop (:mod:`skframe_solvers._batched`) shares with ADMMSolver
BATCH_KEYS = ("tol", "max_iter", "rho", "adaptive", "adapt_until", "check_every", "init", "relaxation")


def batch_products(tol, products):
    """The batched loop's product precision: float32 where ``products="auto"`` allows it (``tol >= 1e-6``), unless
    the solver asks for float64."""
    return "float32" if tol >= 1e-6 and products != "float64" else "float64"


def _certify(trace, best, best_D, P, V, D):
    """Record a checked pair (P at V, D): every D is a lower bound and every P an upper bound of
    the optimum, so the certificate uses the best of each seen so far (the iterates oscillate)
    and the primal point of the best P is the one returned. Appends ``(P, D, gap)`` to trace."""
    if best is None or P < best[0]:
        best = (P, V)
    best_D = D if best_D is None else max(best_D, D)
    trace.append((best[0], best_D, relative_gap(best[0], best_D)))
    return best, best_D


class ADMMSolver(DualSolverMixin, BaseSolver):
    """ADMM with a closed-form loss proximal step and a duality-gap stop (see the module docstring).

    Parameters
    ----------
    tol : float, default=1e-4
        Stop when the relative duality gap ``(P - D) / max(|P|, |D|)`` is <= tol.
    max_iter : int, default=5000
        Cap on the iterations (each costs two products with Z); reaching it raises
        :class:`sklearn.exceptions.ConvergenceWarning` with the gap reached.
    rho : float, default=0.1
        Initial penalty (times 1/n), i.e. the step ``1/rho`` of the loss's proximal operator.
    adaptive : bool, default=True
        Rebalance rho when the primal and dual residuals differ by more than 10x, during the
        first ``adapt_until`` iterations (then rho stays fixed, as ADMM's convergence needs).
    adapt_until : int, default=500
    check_every : int, default=10
        Iterations between two duality-gap evaluations.
    init : {"ridge", "zeros"}, default="ridge"
        Start from the square-loss closed form or from zero; an ``init`` array given to
        ``solve`` (warm start) takes precedence.
    relaxation : float in (0, 2), default=1.6
        Over-relaxation of the splitting (``Z V C`` replaced by ``a Z V C + (1 - a) F``; 1 is plain
        ADMM, 1.5 to 1.8 usually saves a third of the iterations).
    polish : bool, default=False
        Try the active-set rounds of :func:`skframe_solvers._newton.polish` at each gap check.
    polish_rounds : int, default=3
    products : {"auto", "float32", "float64"}, default="auto"
        Precision of the two products with Z of each iteration (one output only). Iterations
        are memory-bound, and float32 halves the bytes read; the primal and dual objectives that
        certify the gap are always computed in float64, so the stop means the same. "auto":
        float32 when Z has at least 2**20 entries and ``tol >= 1e-6``. With float32 products the
        gap checks are screened: P and D are estimated from the float32 products, and the float64
        certificate is computed when the estimates reach ``tol`` (``gap_history`` then lists the
        certified checks only). A solve still uncertified after a quarter of ``max_iter``
        iterations goes on with float64 products and full checks (float32 rounding can hide
        the last digits of a very small optimum).
    """

    name = "admm"
    needs_memory_because = "keeps one prediction per sample and needs the features in memory"
    _parameter_constraints = {
        **DualSolverMixin._parameter_constraints,
        "max_iter": COUNT,
        "rho": POSITIVE,
        "adaptive": ["boolean"],
        "adapt_until": [Interval("int", 0, None)],
        "check_every": COUNT,
        "init": INIT,
        "relaxation": [Interval("real", 0, 2, closed="neither")],
        "polish": ["boolean"],
        "polish_rounds": COUNT,
        "products": [Options("auto", "float32", "float64")],
    }
    _parameter_hints = {**DualSolverMixin._parameter_hints, "rho": "rho must be > 0, e.g. 0.1", "init": INIT_HINT,
                        "relaxation": "e.g. 1.6"}

    def __init__(self, tol=1e-4, max_iter=5000, rho=0.1, adaptive=True, adapt_until=500, check_every=10,
                 init="ridge", relaxation=1.6, polish=False, polish_rounds=3, products="auto"):
        self._set_params(locals())

    def _batch_settings(self):
        """The batched loop runs these iterations unless each checkpoint polishes (Newton rounds)."""
        if self.polish:
            return None
        settings = {key: getattr(self, key) for key in BATCH_KEYS}
        return {**settings, "products": batch_products(self.tol, self.products)}, "iterations", "max_iter", {
            "batched": True}

    def solve(self, problem, loss, lam, *, M=None, rng=None, init=None, progress=None):
        """Iterate until the relative duality gap is <= tol; ``progress(1)`` after each iteration."""
        fp, dual = self._dual_problem(problem, loss, lam, M)
        return self._solve_problem(fp, dual, init, progress)

    def _solve_problem(self, fp, dual, init, progress, name=None, cap_name="max_iter"):
        """The iterations on a prepared feature-map problem (``name``: the solver named in warnings)."""
        # BLAS threads are the fit's plan's choice, carried by the problem (one thread when the loop multiplies Z by
        # a few columns at a time); a problem built outside a fit carries none and BLAS is left as it is
        with serial_blas(getattr(fp.problem, "blas_threads", None) == 1):
            if fp.Y.shape[1] == 1 and fp.C.shape == (1, 1):
                return self._iterate_scalar(fp, dual, init, progress, name, cap_name)
            return self._iterate(fp, dual, init, progress, name, cap_name)

    def _rho_factor(self, it, ZV, F, F_old, rho):
        """Residual balancing of the penalty: 2 or 1/2 when the primal and dual residuals differ by
        more than 10x (every 5 iterations during the first ``adapt_until``), else 1."""
        if not (self.adaptive and it % 5 == 0 and it <= self.adapt_until):
            return 1.0
        r_norm = np.linalg.norm(ZV - F)
        s_norm = rho * np.linalg.norm(F - F_old)
        if r_norm > 10 * s_norm:
            return 2.0
        if s_norm > 10 * r_norm:
            return 0.5
        return 1.0

    def _float32_products(self, Z):
        """True when the iterations multiply by a float32 copy of Z (``products``, see the class)."""
        if self.products == "float64":
            return False
        if self.products == "float32":
            return True
        return Z.size >= self.FLOAT32_MIN_ENTRIES and self.tol >= 1e-6

    #: ``products="auto"`` uses float32 products from this many entries of Z on (smaller Z fit in the cache)
    FLOAT32_MIN_ENTRIES = 1 << 20
    #: fraction of ``max_iter`` after which an uncertified float32 solve goes on in float64
    FLOAT32_HANDOVER = 0.25

    def _iterate_scalar(self, fp, dual, init, progress, name, cap_name):
        """The iterations of :meth:`_iterate` for one output (``C`` is 1 x 1), on vectors, in place.

        The same updates in the same order; the per-sample work is a few in-place vector
        operations, so an iteration costs little more than its two products with Z.
        """
        loss = fp.loss
        Z, n, lam = fp.Z, fp.n, fp.lam
        y = fp.Y[:, 0]
        c = float(fp.C[0, 0])
        if dual.structure == "separable":
            lower, upper = (np.ascontiguousarray(b[:, 0], dtype=np.float64) for b in dual.bounds(fp.Y))
        else:  # one output: the ball of radius R is the interval [-R, R]
            lower, upper = -dual.radius, dual.radius
        sig, E = np.linalg.eigh(fp.gram())
        sig = np.maximum(sig, 0.0)
        # the products of the iterations may run in float32 (half the memory traffic); the
        # objectives that certify the gap are always evaluated in float64 on Z itself
        Zi = Z.astype(np.float32) if self._float32_products(Z) else Z
        v = self._start(fp, init, self.init)[:, 0] * c  # v = V c: predictions are Z v
        F = Z @ v
        rho = self.rho
        if init is None:
            U = np.zeros_like(F)
        else:
            U = -dual.project(-loss.gradient(F[:, None], fp.Y), fp.Y)[:, 0] / rho
        a = self.relaxation
        ZR, T, A, F_old = (np.empty_like(F) for _ in range(4))
        trace = []
        best = best_D = None
        screen = Zi is not Z and not self.polish
        cand_P = cand_D = None
        switch_at = max(int(self.max_iter * self.FLOAT32_HANDOVER), 1)
        it = 0
        for it in range(1, self.max_iter + 1):
            # V-update in Z^T Z's eigenbasis (the s = c^2 of the general loop folded into v = V c)
            np.subtract(F, U, out=T)
            b = E.T @ (Zi.T @ T.astype(Zi.dtype, copy=False)).astype(np.float64, copy=False)
            b *= (rho / n) * c * c
            b /= lam + (rho / n) * c * c * sig
            v = E @ b
            ZV = (Zi @ v.astype(Zi.dtype, copy=False)).astype(np.float64, copy=False)
            # over-relaxed prediction, the loss's proximal step (as the dual point A), multipliers
            np.multiply(ZV, a, out=ZR)
            ZR += (1.0 - a) * F
            np.add(ZR, U, out=T)  # the point the proximal step is taken at
            np.subtract(y, T, out=A)
            np.abs(A, out=F_old)
            F_old -= dual.l1
            np.maximum(F_old, 0.0, out=F_old)
            np.copysign(F_old, A, out=A)
            A /= dual.quad + 1.0 / rho
            np.clip(A, lower, upper, out=A)
            F_old[...] = F
            np.divide(A, rho, out=F)
            F += T
            U += ZR
            U -= F
            if progress is not None:
                progress(1)
            factor = self._rho_factor(it, ZV, F, F_old, rho)
            if factor != 1.0:
                rho *= factor
                U /= factor
            if screen and it >= switch_at:
                # float32 noise may keep a problem with a tiny optimum from certifying: the rest of the
                # iterations run in float64 with full checks
                Zi, screen, cand_P, cand_D = Z, False, None, None
            if it % self.check_every and it < self.max_iter:
                continue
            V = (v / c)[:, None]
            A_now = (-rho * U)[:, None]
            if screen:
                # float32 estimates of P and D from this iteration's products (ZV holds Z v); the
                # float64 objectives that certify the gap run only when the estimates say converged
                P_est = float(np.mean(loss.value(ZV[:, None], fp.Y))) + fp.penalty(V)
                VA = (Zi.T @ A_now[:, 0].astype(Zi.dtype)).astype(np.float64) * (c / (lam * n))
                D_est = float(np.mean(dual.values(A_now, fp.Y))) - fp.penalty(VA)
                if cand_P is None or P_est < cand_P[0]:
                    cand_P = (P_est, V)
                if cand_D is None or D_est > cand_D[0]:
                    cand_D = (D_est, A_now)
                if relative_gap(cand_P[0], cand_D[0]) > self.tol and it < self.max_iter:
                    continue
                V, A_now = cand_P[1], cand_D[1]
                cand_P = cand_D = None  # estimates start afresh if the certificate disagrees
            D, _ = dual_objective(fp, A_now)
            best, best_D = _certify(trace, best, best_D, fp.objective(V), V, D)
            if trace[-1][2] <= self.tol:
                break
            if self.polish:
                polished = polish(fp, dual, (-rho * U)[:, None], None if np.isscalar(lower) else lower[:, None],
                                  None if np.isscalar(upper) else upper[:, None], tol=self.tol,
                                  rounds=self.polish_rounds, V=V)
                if polished is not None and polished[0][-1][2] <= self.tol:
                    trace.extend(polished[0])
                    best = (polished[0][-1][0], polished[1])
                    break
        V = best[1] if best is not None else (v / c)[:, None]
        unit = "iterations" if name is None else "admm_iterations"
        return self._gap_result(fp, V, trace, it, unit, self.max_iter, cap_name, {"rho": float(rho)},
                                name=name)

    def _iterate(self, fp, dual, init, progress, name, cap_name):
        loss = fp.loss
        Z, Y, C, n, lam = fp.Z, fp.Y, fp.C, fp.n, fp.lam
        lower = upper = None
        if dual.structure == "separable":
            lower, upper = dual.bounds(Y)
        sig, E = np.linalg.eigh(fp.gram())
        sig = np.maximum(sig, 0.0)
        s = fp.sqrt_s**2  # C C^T = diag(s)
        V = self._start(fp, init, self.init)
        F = fp.predict(V, Z)
        rho = self.rho
        if init is None:
            U = np.zeros_like(F)
        else:  # a warm start also carries its multipliers, alpha = -grad l(F)
            U = -dual.project(-loss.gradient(F, Y), Y) / rho
        trace = []
        best = best_D = None
        it = 0
        for it in range(1, self.max_iter + 1):
            # V-update: lam V + rho/n Z^T Z V C C^T = rho/n Z^T (F - U) C^T, column j in Z^T Z's eigenbasis
            B = E.T @ (Z.T @ ((F - U) @ C.T)) * (rho / n)
            V = E @ (B / (lam + (rho / n) * np.outer(sig, s)))
            ZV = fp.predict(V, Z)
            ZR = self.relaxation * ZV + (1.0 - self.relaxation) * F  # over-relaxation (1: plain ADMM)
            A = loss_prox(dual, ZR + U, Y, rho, lower, upper)
            F_old = F
            F = ZR + U + A / rho
            U += ZR - F
            if progress is not None:
                progress(1)
            factor = self._rho_factor(it, ZV, F, F_old, rho)
            if factor != 1.0:
                rho, U = rho * factor, U / factor
            if it % self.check_every and it < self.max_iter:
                continue
            D, _ = dual_objective(fp, -rho * U)
            best, best_D = _certify(trace, best, best_D, fp.objective(V), V, D)
            if trace[-1][2] <= self.tol:
                V = best[1]
                break
            if self.polish:
                polished = polish(fp, dual, -rho * U, lower, upper, tol=self.tol, rounds=self.polish_rounds, V=V)
                if polished is not None and polished[0][-1][2] <= self.tol:
                    trace.extend(polished[0])
                    V = polished[1]
                    break
        if best is not None and not (trace and trace[-1][2] <= self.tol):
            V = best[1]
        unit = "iterations" if name is None else "admm_iterations"  # say which method ran inside dual-cd
        return self._gap_result(fp, V, trace, it, unit, self.max_iter, cap_name, {"rho": float(rho)},
                                name=name)
