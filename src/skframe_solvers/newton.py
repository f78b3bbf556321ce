"""Newton's method with a line search on the m-dimensional sketched problem (``newton``), for smooth losses
that give their second derivatives (logistic, multinomial).

On the sketched features the variable ``V`` is small (r x k, r <= m), while the data term is a sum over n
rows. Each Newton step costs one pass over the rows that forms the gradient and the Hessian

    H = (1/n) sum_i w_i (z_i z_i^T) ⊗ (C H_i C^T) + lam I,    H_i = d^2 l(f_i, y_i) / df^2,

(``K (K + 1) / 2`` weighted Gram products ``Z^T diag(c) Z`` for K outputs, one for a binary problem), a
Cholesky solve of its (r k) x (r k) system and an Armijo backtracking line search (Nocedal and Wright,
*Numerical Optimization*, §3.1 and §6). The logistic and multinomial losses are self-concordant-like,
so from zero the steps converge quadratically after a few damped ones: 5 to 10 passes reach a
relative duality gap of 1e-10, where L-BFGS needs tens to hundreds of passes at small ``lam`` (the
Hessian's condition number grows like ``1 / lam``). In the fast phase (a full step that cut the gap a
hundredfold) the next step keeps the previous Hessian and the pass forms the gradient only
(``solver_info_["reused_hessians"]``), which spares the last pass its ``n r^2`` product.

Where forming the Hessian costs much more than solving for the step iteratively (large n and r, or
``r k`` above ``max_dense``), the step is computed by preconditioned conjugate gradients with
Hessian-vector products of ``O(n r k)`` flops and, once a step's products cost more than it, a
subsampled-Hessian preconditioner
(:mod:`skframe_solvers.newton_cg`); the choice (``step="auto"``) is the execution plan's rule
:func:`skframe.compute.plan_newton.choose_newton_step`, and its reason is ``solver_info_["step_rule"]``.

The stop is the certified relative duality gap: at every iterate the dual point ``alpha_i = -grad l(f_i, y_i)``
is feasible for these losses and its dual objective (from the loss's ``conjugate``) needs no extra pass,
``V(A) = V - grad P / lam``.
"""

from __future__ import annotations

import warnings
from contextlib import contextmanager

import numpy as np

from skframe.plugin.api import InvalidParameterError, Options, SolverTags, get_tags
from skframe.plugin.toolbox import choose_newton_step, newton_precond_rows, serial_blas, solve_psd, weighted_outer
from skframe_solvers._base import COUNT, POSITIVE, BaseSolver
from skframe_solvers._duality import conjugate_of, relative_gap
from skframe_solvers.newton_cg import (
    HessianOperator,
    SubsampledPreconditioner,
    first_step_pays,
    forcing_term,
    precondition_pays,
    preconditioned_cg,
    subsample,
    zero_sum_steps,
)

__all__ = ["NewtonSolver"]


def _hessian(loss, F, Y):
    """The loss's second derivatives (n, d, d); the identity for the square loss."""
    if callable(getattr(loss, "hessian", None)):
        return loss.hessian(F, Y)
    return np.broadcast_to(np.eye(F.shape[1]), (F.shape[0],) + (F.shape[1],) * 2)


def _pass(fp, V, hessian, predictions=None, known=None):
    """One pass over the rows: ``(P, grad P, sum_i w_i h(alpha_i), H or None)`` at V (``predictions``: a list
    that receives ``Z_b V C`` of each block, for the Hessian-vector products of a CG step; ``known``: the
    predictions ``Z V C`` of all kept rows, read instead of formed, so that the gradient's product
    ``Z^T G C^T`` is the pass's only product with the features)."""
    k, r = fp.C.shape[0], fp.r
    total, hsum, acc = 0.0, 0.0, np.zeros((fp.row_width, k))
    H = np.zeros((r, k, r, k)) if hessian else None
    conj, PV = conjugate_of(fp.loss), (fp.left(V) if known is None else None)
    terms = getattr(fp.loss, "value_gradient_dual", None)
    terms = terms if callable(terms) else None
    for start, Zb, Yb in fp.blocks():
        F = fp.predict(V, Zb, PV) if known is None else known[start:start + Zb.shape[0]]
        if predictions is not None:
            predictions.append(F)
        w = fp.row_weights(start, start + Zb.shape[0])
        if terms is not None:  # the loss's own single evaluation of the three
            values, G, h = terms(F, Yb)
        else:
            values, G = fp.loss.value(F, Yb), fp.loss.gradient(F, Yb)
            h = conj.values(-G, Yb)  # the dual point alpha = -grad l, from the one gradient
        if w is not None:
            values, G, h = values * w[:, 0], G * w, h * w[:, 0]
        total, hsum = total + float(np.sum(values)), hsum + float(np.sum(h))
        acc += fp.back_left(Zb, G @ fp.C.T)  # (the right factor applied once, below)
        if hessian:
            Zb = fp.expand(Zb)  # the features themselves (formed per block where they are kept factored)
            Hk = np.einsum("ja,iab,lb->ijl", fp.C, _hessian(fp.loss, F, Yb), fp.C)  # C H_i C^T, (b, k, k)
            if w is not None:
                Hk *= w[:, :, None]
            for j in range(k):
                for m in range(j, k):
                    c = Hk[:, j, m]
                    if m != j and not np.any(c):
                        continue
                    B = weighted_outer(Zb, c) if m == j else Zb.T @ (Zb * c[:, None])  # syrk where c >= 0
                    H[:, j, :, m] += B
                    if m != j:
                        H[:, m, :, j] += B
    grad = fp.right(acc) / fp.n + fp.lam * V
    P = total / fp.n + fp.penalty(V)
    if hessian:
        H = H.reshape(r * k, r * k) / fp.n
        H[np.diag_indices_from(H)] += fp.lam
    return P, grad, hsum, H


def _reuse_hessian(trace, t):
    """Whether the next step may reuse the last Hessian: the last step was a full one (``t = 1``) and cut the
    relative gap at least a hundredfold, i.e. the iterates are in Newton's fast phase, where the Hessian hardly
    changes between steps. A step with the previous Hessian converges linearly at a rate of the Hessian's
    relative change (Kelley, *Solving Nonlinear Equations with Newton's Method*, SIAM 2003, §2.3 on the chord
    method); a step that cuts the gap less than a hundredfold is followed by a fresh Hessian. It saves the
    ``n r^2`` product of the pass (the gradient is always fresh and the stop is always certified)."""
    return t == 1.0 and len(trace) >= 2 and trace[-1][2] <= 1e-2 * trace[-2][2]


class NewtonSolver(BaseSolver):
    """Damped Newton steps with a certified duality-gap stop, for smooth losses with ``hessian`` (see module).

    Parameters
    ----------
    tol : float, default=1e-8
        Stop when the relative duality gap ``(P - D) / max(|P|, |D|)`` is at most ``tol``.
    max_iter : int, default=100
        Newton steps at most (a :class:`sklearn.exceptions.ConvergenceWarning` past them).
    max_dense : int, default=3000
        Largest ``r k`` for which the Hessian is formed; above, conjugate gradients with
        Hessian-vector products compute the step.
    max_cg : int, default=50
        Conjugate-gradient iterations per step (when the Hessian is not formed).
    step : {"auto", "direct", "cg"}, default="auto"
        How a Newton step is computed: ``"direct"`` forms the Hessian (up to ``max_dense``), ``"cg"`` applies
        it by preconditioned conjugate gradients, ``"auto"`` follows the plan's rule
        (:func:`skframe.compute.plan_newton.choose_newton_step`, from n, r, the outputs and whether the
        features are held in memory).
    precond_rows : int or None, default=None
        Rows of the subsampled preconditioner of the CG steps; None: the plan's rule
        :func:`skframe.compute.plan_newton.newton_precond_rows` (more rows for more n).
    """

    name = "newton"
    __skframe_tags__ = SolverTags(requires_smooth=True)
    _parameter_constraints = {"tol": POSITIVE, "max_iter": COUNT, "max_dense": COUNT, "max_cg": COUNT,
                              "step": [Options("auto", "direct", "cg")], "precond_rows": COUNT + [None]}
    _parameter_hints = {"tol": "tol must be > 0, e.g. 1e-8", "step": "step must be 'auto', 'direct' or 'cg'"}

    def __init__(self, tol=1e-8, max_iter=100, max_dense=3000, max_cg=50, step="auto", precond_rows=None):
        self._set_params(locals())

    def step_rule(self, fp):
        """``(dense, reason)``: whether the Newton steps on ``fp`` form the Hessian, and why."""
        k = fp.C.shape[0]
        if self.step == "auto":
            method, reason = choose_newton_step(fp.n, fp.r, k, kept=fp.in_memory, max_dense=self.max_dense)
        elif self.step == "direct" and fp.r * k > self.max_dense:
            method, reason = "cg", f"step='direct' given, but r k = {fp.r * k} > max_dense = {self.max_dense}"
        else:
            method, reason = self.step, f"step={self.step!r} given"
        return method == "direct", reason

    def solve(self, problem, loss, lam, *, M=None, rng=None, init=None, progress=None):
        """Minimise the feature-map objective; ``progress(1)`` after each Newton step."""
        name = getattr(loss, "name", type(loss).__name__)
        square = get_tags(loss, "loss").square
        if not (callable(getattr(loss, "hessian", None)) or square) or conjugate_of(loss) is None:
            raise InvalidParameterError(f"solver 'newton' needs a loss with second derivatives ('hessian') and a "
                                        f"conjugate, which {name!r} does not declare; use solver='lbfgs'")
        fp = self._problem(problem, loss, lam, M, factored=True)  # features kept as two factors: read apart
        V = fp.from_W(init) if init is not None else np.zeros(fp.shape)
        dense, rule = self.step_rule(fp)
        trace, steps, evals, reused, H_kept, reuse = [], 0, 0, 0, None, False
        rows, precond, cg_iterations, refresh, built = None, None, [], False, 0
        # Newton-CG on kept features carries the predictions Z V C from step to step (each CG solve sums its
        # step's from the directions'): the line search and the next gradient need no pass to form them. A
        # converged gap is certified again on predictions formed afresh.
        running = not dense and fp.in_memory
        F_rows, fresh = None, False
        while True:
            predictions = None if dense else []
            with serial_blas(not dense):  # (the compiled passes of CG steps: see below)
                P, g, hsum, H = _pass(fp, V, dense and not reuse, predictions, F_rows)
            if running and F_rows is None:
                F_rows, fresh = np.concatenate(predictions), True
            evals += 1
            if reuse:  # the previous Hessian: the last full step cut the gap a hundredfold (see _reuse_hessian)
                H, reused = H_kept, reused + 1
            VA = V - g / fp.lam  # the primal image of the dual point alpha = -grad l
            D = hsum / fp.n - fp.penalty(VA)
            gap = relative_gap(P, D)
            if running and not fresh and (gap <= self.tol or steps >= self.max_iter):
                F_rows, fresh = fp.predict(V, fp.Z), True  # the stop is certified on fresh predictions
                evals += 1
                continue
            trace.append((P, D, gap))
            if trace[-1][2] <= self.tol or steps >= self.max_iter:
                break
            step_rows = None
            if dense:
                step = solve_psd(H, g.reshape(-1), jitter=True).reshape(g.shape) * -1.0
            else:  # preconditioned conjugate gradients, to the forcing term of the current gap
                size, eta = self.precond_rows or newton_precond_rows(fp.n, fp.r), forcing_term(trace[-1][2], self.tol)
                if not cg_iterations:  # the first step: preconditioned where plain CG would cost more
                    rows = subsample(fp, size)
                    precond = self._carried(fp, size, zero_sum_steps(fp, V))
                    refresh = precond is None and first_step_pays(fp, V, rows, eta, self.max_cg)
                if refresh:  # the last CG step's products cost more than a preconditioner: (re)build it at V
                    precond, built = SubsampledPreconditioner(fp, V, rows, zero_sum_steps(fp, V)), built + 1
                    self._carry_out(fp, size, precond)
                op = HessianOperator(fp, F_rows if running else predictions)
                with serial_blas():  # compiled passes and small solves: idle BLAS threads would spin on their cores
                    step, its, step_rows = preconditioned_cg(op, g, eta, self.max_cg, precond)
                cg_iterations.append(int(its))
                evals += its  # one pass over the rows per Hessian-vector product
                refresh = precondition_pays(its, fp.n, fp.r, fp.C.shape[0], size)
            slope, t = float(np.sum(g * step)), 1.0
            carried = running and step_rows is not None
            while t > 1e-10:
                if carried:  # the step's predictions are known: the trial points cost no pass
                    value = fp.objective(V + t * step, F_rows + t * step_rows)
                else:
                    evals += 1
                    value = fp.objective(V + t * step)
                if value <= P + 1e-4 * t * slope:
                    break
                t *= 0.5
            if t <= 1e-10:  # no decrease left at machine precision: stop with the gap reached
                break
            V = V + t * step
            if running:  # (the step's predictions added in place: no new n x d array)
                if carried:
                    F_rows += step_rows if t == 1.0 else t * step_rows
                F_rows, fresh = (F_rows if carried else None), False
            steps, H_kept = steps + 1, H
            reuse = dense and _reuse_hessian(trace, t)  # (conjugate-gradient steps form no Hessian to keep)
            if progress is not None:
                progress(1)
        extra = {"step_rule": rule, "cg_iterations": cg_iterations, "preconditioners": built}
        return self._finish(fp, V, trace, steps, evals, dense, reused, H if dense else None, extra)

    @contextmanager
    def carrying_preconditioner(self):
        """Within this context a Newton–CG solve on the same rows, weights and preconditioner sample as the last
        one that built a preconditioner starts with that one's data term (its Gram blocks, factored again with
        the new ``lam``) instead of building one at its start; the rule of every later step is unchanged (a
        step whose CG products cost more than a preconditioner is followed by a fresh one). A warm-started λ
        path (:func:`skframe.models.machine._alo.walk_path`) solves at λ / 10 from the last solution: at
        n = 10^6, 10 classes (a path of 10^5 rows) its preconditioners took 5.9 s, 1.5 s carried, for 57 more
        Hessian-vector products (1.9 s less in all). The carried data are dropped on leaving."""
        before, self._carry = getattr(self, "_carry", None), {}
        try:
            yield self
        finally:
            self._carry = before

    def _carried(self, fp, size, project):
        """The carried preconditioner at ``fp.lam`` where ``fp`` has the rows it was built on, else None."""
        held = getattr(self, "_carry", None) or {}
        key = (fp.n, fp.r, fp.C.shape[0], size, fp.identity)
        if held.get("key") != key or held["Z"] is not fp.Z or held["P"] is not fp.P:
            return None
        same = (held["w"] is None and fp.weights is None) or (
            held["w"] is not None and fp.weights is not None and np.array_equal(held["w"], fp.weights))
        return held["precond"].at_lam(fp.lam, project) if same else None

    def _carry_out(self, fp, size, precond):
        if getattr(self, "_carry", None) is not None:  # within carrying_preconditioner() only
            self._carry = {"key": (fp.n, fp.r, fp.C.shape[0], size, fp.identity), "Z": fp.Z, "P": fp.P,
                           "w": fp.weights, "precond": precond}

    def _finish(self, fp, V, trace, steps, evals, dense, reused=0, hessian=None, extra=None):
        P, D, gap = trace[-1]
        info = {**(extra or {}), "method": "newton" if dense else "newton-cg", "primal": float(P), "dual": float(D),
                "gap": float(P - D), "relative_gap": float(gap), "newton_steps": int(steps),
                "passes": int(evals), "reused_hessians": int(reused), "gap_history": [float(t[2]) for t in trace],
                "dual_history": [float(t[1]) for t in trace]}
        if gap <= self.tol:
            reason = f"converged: relative duality gap {gap:.2e} <= tol={self.tol} after {steps} newton_steps"
        else:
            from sklearn.exceptions import ConvergenceWarning  # lazy: scikit-learn is slow to import

            reason = (f"stopped after {steps} newton_steps with relative duality gap {gap:.2e} > tol={self.tol}; "
                      "raise max_iter or lam")
            warnings.warn(f"newton {reason}", ConvergenceWarning, stacklevel=3)
        result = self._result(fp, V, [t[0] for t in trace], reason, steps, info, certificate=False)
        result.hessian = hessian if fp.identity else None  # in W's coordinates only when M is the identity
        return result
