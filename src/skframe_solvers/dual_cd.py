"""Dual coordinate ascent with a duality-gap stop (``dual-cd``).

Stochastic dual coordinate ascent (Shalev-Shwartz and Zhang, "Stochastic Dual Coordinate
Ascent Methods for Regularized Loss Minimization", JMLR 2013) on the sketched features of
El Ahmad et al., "Fast Kernel Methods for Generic Lipschitz Losses via p-Sparsified
Sketches" (TMLR 2023, Prop. 1): every sketched model is a ridge-penalised linear model on
r features, so the problem

    min_V  P(V) = (1/n) sum_i l(C^T V^T z_i, y_i) + (lam/2) ||V||^2

(notation of :mod:`skframe_solvers._problem`; ``C^T C = M``) has the dual

    max_A  D(A) = (1/n) sum_i h(alpha_i, y_i) - (lam/2) ||V(A)||^2,   V(A) = (1/(lam n)) Z^T A C^T

with one d-dimensional block ``alpha_i`` per sample and ``h = -l^*(-.)`` given by the
loss's ``dual`` capability (:mod:`skframe_losses.duals`: ε-SVR, ε-ridge, κ-Huber, hinge,
pinball and square). An epoch visits the samples in a random order; for sample i, with
the current prediction ``f_i = C^T V^T z_i`` and ``q_i = ||z_i||^2 / (lam n)``, it
maximises D over ``alpha_i`` alone (or a quadratic minorant of it), in closed form:

* losses that act column by column (pinball, hinge; box domain): exact scalar steps
  ``alpha_ij <- clip(soft(c alpha_ij + y_ij - f_ij, l1) / (quad + c), lower_ij, upper_ij)``
  with ``c = q_i M_jj``, then ``f_i += q_i M[:, j] step`` — any output matrix M;
* losses of the residual norm (ε-SVR, ε-ridge, Huber; ball domain): one block step,
  ``p = alpha_i + (y_i - f_i) / c``, ``alpha_i <- p t / ||p||`` with
  ``t = clip((c ||p|| - l1) / (quad + c), 0, radius)`` and ``c = q_i mu``, ``mu`` the largest
  eigenvalue of M (the exact block maximiser when M = I, a monotone minorant step otherwise).

``V`` is updated by ``z_i (C delta)^T / (lam n)``, so an epoch costs O(n r k) and the
nd x rd Kronecker feature map of ``k M`` is never formed. With M = I the blocks of the
d outputs are independent for the column-wise losses, so the fit equals d separate fits.
When ``lam n`` is small the coordinate steps are tiny and the solver switches to Newton
steps or the ADMM splitting (see :class:`DualCDSolver`). Fitting stops when the relative
duality gap ``(P - D) / max(|P|, |D|)`` falls below ``tol``; P is evaluated from the loss
values at the predictions and D from the conjugate formula (independent code paths);
``D <= min P <= P`` always, so the gap certifies the distance to the optimum.
"""

from __future__ import annotations

import numpy as np

from skframe.plugin.api import Interval, Options
from skframe.plugin.toolbox import numba_enabled, require
from skframe_solvers._base import COUNT, INIT, INIT_HINT, BaseSolver, DualSolverMixin
from skframe_solvers._duality import dual_from_primal, dual_objective, primal_V, relative_gap
from skframe_solvers._newton import newton_solve, polish, regime_share
from skframe_solvers.admm import ADMMSolver, batch_products

__all__ = ["DualCDSolver"]


def _norm_epoch_numpy(Z, Y, A, V, C, perm, scale, mu, quad, l1, radius):
    """Plain NumPy reference of :func:`skframe_solvers._dual_cd_numba.norm_epoch`."""
    for i in perm:
        z = Z[i]
        c = float(z @ z) * scale * mu
        if c <= 0.0:
            continue
        f = (z @ V) @ C
        p = A[i] + (Y[i] - f) / c
        rho = float(np.linalg.norm(p))
        t = min(radius, max(0.0, (c * rho - l1) / (quad + c)))
        new = p * (t / rho) if rho > 0 else np.zeros_like(p)
        delta = new - A[i]
        A[i] = new
        V += scale * np.outer(z, C @ delta)


def _separable_epoch_numpy(Z, Y, A, V, C, M, perm, scale, quad, l1, lower, upper):
    """Plain NumPy reference of :func:`skframe_solvers._dual_cd_numba.separable_epoch`."""
    for i in perm:
        z = Z[i]
        q = float(z @ z) * scale
        if q <= 0.0:
            continue
        f = (z @ V) @ C
        delta = np.zeros(Y.shape[1])
        for j in range(Y.shape[1]):
            c = q * M[j, j]
            if c <= 0.0:
                continue
            w = c * A[i, j] + Y[i, j] - f[j]
            w = np.sign(w) * max(abs(w) - l1, 0.0)
            new = min(max(w / (quad + c), lower[i, j]), upper[i, j])
            delta[j] = new - A[i, j]
            A[i, j] = new
            f += q * M[:, j] * delta[j]
        V += scale * np.outer(z, C @ delta)


def _epoch_functions(engine):
    if engine == "numpy":
        return _norm_epoch_numpy, _separable_epoch_numpy
    from skframe_solvers import _dual_cd_numba as nb  # lazy: numba compiles at import; numba engine only

    return nb.norm_epoch, nb.separable_epoch


class DualCDSolver(DualSolverMixin, BaseSolver):
    """Dual coordinate ascent on the sketched features, stopped on the duality gap.

    Solves ``(1/n) sum_i l(z_i^T W M, y_i) + (lam/2) tr(W M W^T)`` to a certified relative
    duality gap for every loss that declares a ``dual`` (all built-in losses; see the module
    docstring for the updates). The features must be in memory (``problem.features()``).

    Coordinate ascent needs about ``1 + q`` epochs per e-fold of the gap on a smooth loss
    (more on a non-smooth one), ``q`` the mean of ``||z_i||^2 ||M|| / (lam n)``: thousands
    when ``lam n`` is small (lam = 1e-7, n = 10^4: q ~ 10^3). With ``method="auto"`` the
    solver therefore runs the coordinate epochs when ``q <= epochs_max_q`` and otherwise
    switches to a method whose cost does not grow with q, stopped on the same certified gap:
    semismooth Newton steps on the primal (:mod:`skframe_solvers._newton`) for losses with a
    strongly concave dual (Huber, ε-ridge) when at least ``newton_min_share`` of the samples
    share one regime of the loss at the start (κ-Huber with a large κ: the square-loss start is
    then optimal after one step), and otherwise the ADMM splitting (:mod:`skframe_solvers.admm`),
    the only one for ε-SVR, hinge and pinball, whose primal is piecewise linear (Newton on a
    smoothed version needs many active-set changes there: 93 steps against 220 cheaper ADMM
    iterations on the Friedman ε-SVR problem). The threshold is low because an epoch (one
    sample at a time) costs more than an ADMM iteration (two matrix-vector products): at
    q ~ 5 ADMM reached the gap 2 to 10 times sooner. ``solver_info_["method"]`` says which ran.

    Parameters
    ----------
    tol : float, default=1e-4
        Stop when the relative duality gap ``(P - D) / max(|P|, |D|)`` is <= tol.
    max_epochs : int, default=1000
        Cap on the passes over the data; reaching it raises
        :class:`sklearn.exceptions.ConvergenceWarning` with the gap reached.
    init : {"ridge", "zeros"}, default="ridge"
        Dual start point: built from the square-loss closed form (the dual point of
        :func:`skframe_solvers._duality.dual_from_primal`, which is already optimal when no
        residual leaves the quadratic region of the loss) or ``A = 0``. An ``init`` array
        given to ``solve`` (warm start, e.g. the previous solution of a regularisation path)
        is turned into a dual point the same way.
    check_every : int, default=1
        Epochs between two duality-gap evaluations (each costs about one epoch).
    shuffle : bool, default=True
        Visit the samples in a fresh random order each epoch (``rng`` of ``solve``: same
        seed, same weights); False visits them in order.
    engine : {"auto", "numba", "numpy"}, default="auto"
        Compiled epochs (numba when available) or the plain NumPy reference.
    method : {"auto", "epochs", "newton", "admm"}, default="auto"
        See above; the other values force one method.
    epochs_max_q : float, default=1
        Largest ``q`` for which ``"auto"`` runs the coordinate epochs.
    polish_every : int, default=10
        Every that many epochs, for the losses with a piecewise-linear primal (ε-SVR, hinge,
        pinball), try active-set rounds from the current dual point
        (:func:`skframe_solvers._newton.polish`) when at most ``2 r k`` entries look free,
        adopted only when the dual objective improves; once the samples at a kink of the loss
        are identified this lands on the exact optimum. 0 disables it.
    max_newton_steps : int, default=200
        Cap on the Newton steps (``ConvergenceWarning`` when reached).
    newton_max_dim : int, default=2048
        Largest ``r k`` (size of the Newton system) for which ``"auto"`` takes Newton steps.
    newton_min_share : float, default=0.95
        ``"auto"`` takes Newton steps only when at least this fraction of the samples share
        one regime of the loss at the start point (:func:`skframe_solvers._newton.regime_share`):
        each change of regime costs a line-searched step, so a mixed start (κ-Huber with a
        small κ: 26 steps, 5 times ADMM's time on Friedman n = 2 000) goes to ADMM.
    max_admm_iter : int or None, default=None
        Cap on the ADMM iterations; None: ``5 * max_epochs`` (an iteration costs about two
        fifths of an epoch).

    Examples
    --------
    >>> import numpy as np
    >>> from skframe.contract.registry import get_loss, get_solver
    >>> from skframe.contract.problems import ArrayProblem
    >>> rng = np.random.default_rng(0)
    >>> Z = rng.normal(size=(200, 5)); y = Z @ rng.normal(size=5) + rng.standard_t(2, size=200)
    >>> res = get_solver("dual-cd").solve(ArrayProblem(Z, y), get_loss("epsilon-svr", epsilon=0.1), 1e-2, rng=0)
    >>> res.stop_reason.startswith("converged"), res.info["relative_gap"] <= 1e-4
    (True, True)
    """

    name = "dual-cd"
    needs_memory_because = "visits single samples in random order and needs the features in memory"
    _parameter_constraints = {
        **DualSolverMixin._parameter_constraints,
        "max_epochs": COUNT,
        "init": INIT,
        "check_every": COUNT,
        "shuffle": ["boolean"],
        "engine": [Options("auto", "numba", "numpy")],
        "method": [Options("auto", "epochs", "newton", "admm")],
        "epochs_max_q": [Interval("real", 0, None)],
        "polish_every": [Interval("int", 0, None)],
        "max_newton_steps": COUNT,
        "newton_max_dim": COUNT,
        "newton_min_share": [Interval("real", 0, 1)],
        "max_admm_iter": [*COUNT, None],
    }
    _parameter_hints = {**DualSolverMixin._parameter_hints, "init": INIT_HINT,
                        "method": "'epochs' is coordinate ascent", "polish_every": "0: never",
                        "epochs_max_q": "e.g. 10", "newton_min_share": "e.g. 0.95", "newton_max_dim": "e.g. 2048"}

    def __init__(self, tol=1e-4, max_epochs=1000, init="ridge", check_every=1, shuffle=True, engine="auto",
                 method="auto", epochs_max_q=1.0, polish_every=10, max_newton_steps=200, newton_max_dim=2048,
                 newton_min_share=0.95, max_admm_iter=None):
        self._set_params(locals())

    def _engine(self):
        if self.engine == "auto":
            return "numba" if numba_enabled() else "numpy"
        if self.engine == "numba" and not numba_enabled():
            require("numba", "the compiled dual-cd epochs (engine='numba')")
        return self.engine

    def _batch_settings(self):
        """The batched loop runs the ADMM phase of ``method`` "auto" or "admm" (the phase small ``lam n`` takes)."""
        if self.method not in ("auto", "admm"):
            return None
        cap = self.max_admm_iter if self.max_admm_iter is not None else 5 * self.max_epochs
        # dual-cd's ADMM phase has no over-relaxation parameter: 1.8 (ADMMSolver's default is 1.6) takes about 10 %
        # fewer iterations on the joint quantile problems of the benchmarks
        return ({"tol": self.tol, "max_iter": int(cap), "init": self.init, "products": batch_products(self.tol, None),
                 "relaxation": 1.8}, "admm_iterations", "max_admm_iter", {"method": "admm", "batched": True})

    def solve(self, problem, loss, lam, *, M=None, rng=None, init=None, progress=None):
        """Run the chosen method until the relative duality gap is <= tol.

        ``progress(1)`` is called after each epoch, Newton step or ADMM iteration.
        """
        fp, dual = self._dual_problem(problem, loss, lam, M)
        method = self._method(fp, dual)
        V0 = None
        if method in ("newton", "auto-newton"):
            V0 = self._start(fp, init, self.init)
            if method == "auto-newton":
                lower, upper = dual.bounds(fp.Y) if dual.structure == "separable" else (None, None)
                share = regime_share(dual, fp.Y - fp.predict(V0, fp.Z), lower, upper)
                method = "newton" if share >= self.newton_min_share else "admm"
        if method == "admm":
            cap = self.max_admm_iter if self.max_admm_iter is not None else 5 * self.max_epochs
            admm = ADMMSolver(tol=self.tol, max_iter=cap, init=self.init)
            res = admm._solve_problem(fp, dual, init, progress, name=self.name, cap_name="max_admm_iter")
            res.info["method"] = "admm"
            return res
        if method == "newton":
            trace = []
            V, steps, mu = newton_solve(fp, dual, V0, self.tol, self.max_newton_steps, trace, progress)
            return self._gap_result(fp, V, trace, steps, "newton_steps", self.max_newton_steps, "max_newton_steps",
                                    {"method": "newton", "smoothing": float(mu)})
        rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        norm_epoch, separable_epoch = _epoch_functions(self._engine())
        n = fp.n
        scale = 1.0 / (fp.lam * n)
        C = np.ascontiguousarray(fp.C)
        Mm = np.ascontiguousarray(fp.M)
        if init is not None or self.init == "ridge":
            A, _ = dual_from_primal(fp, self._start(fp, init, "ridge"))
        else:
            A = np.zeros((n, fp.d))
        A = np.ascontiguousarray(A)
        lower = upper = None
        if dual.structure == "separable":
            lower, upper = dual.bounds(fp.Y)
        else:
            mu = float(np.max(np.sqrt(np.sum(C * C, axis=1)))) ** 2 if fp.C.size else 1.0  # largest eigenvalue of M
        V = np.ascontiguousarray(primal_V(fp, A))
        trace = []
        order = np.arange(n, dtype=np.int64)
        epoch = 0
        for epoch in range(1, self.max_epochs + 1):
            perm = rng.permutation(n).astype(np.int64) if self.shuffle else order
            if dual.structure == "separable":
                separable_epoch(fp.Z, fp.Y, A, V, C, Mm, perm, scale, dual.quad, dual.l1, lower, upper)
            else:
                norm_epoch(fp.Z, fp.Y, A, V, C, perm, scale, mu, dual.quad, dual.l1, dual.radius)
            if progress is not None:
                progress(1)
            if epoch % self.check_every and epoch < self.max_epochs:
                continue
            D, V_A = dual_objective(fp, A)
            V = np.ascontiguousarray(V_A)  # resynchronise (no drift of the running sum)
            P = fp.objective(V)
            trace.append((P, D, relative_gap(P, D)))
            if trace[-1][2] <= self.tol:
                break
            if self.polish_every and dual.quad == 0 and epoch % self.polish_every == 0:
                # piecewise-linear losses: at the optimum about r k entries are free (a vertex), so a
                # larger free set means the guess is still wrong; the system stays small
                polished = polish(fp, dual, A, lower, upper, tol=self.tol, rounds=3,
                                  max_free=min(2000, 2 * fp.r * fp.shape[1]))
                if polished is not None:
                    best = min(polished[0], key=lambda t: t[2])
                    if best[1] >= D:  # keep the ascent: adopt only a better dual point
                        trace[-1] = best
                        V, A = np.ascontiguousarray(polished[1]), np.ascontiguousarray(polished[2])
                        if best[2] <= self.tol:
                            break
        return self._gap_result(fp, V, trace, epoch, "epochs", self.max_epochs, "max_epochs or lam",
                                {"method": "epochs"})

    def _method(self, fp, dual):
        """The method ``method="auto"`` picks: ``"epochs"``, ``"newton"`` or ``"admm"``.

        With ``q`` the mean of ``||z_i||^2 ||M|| / (lam n)`` (the curvature of the dual in one
        coordinate; coordinate ascent needs about ``1 + q`` epochs per e-fold of the gap on a
        smooth loss, and more on a non-smooth one): the coordinate epochs when
        ``q <= epochs_max_q``; otherwise Newton steps for a loss with a strongly concave dual
        (``quad > 0``: Huber, ε-ridge) when ``r k <= newton_max_dim``, else the ADMM splitting
        (ε-SVR, hinge, pinball, or a large ``r k``).
        """
        if self.method != "auto":
            return self.method
        if self.dual_curvature(fp) <= self.epochs_max_q:
            return "epochs"
        r, k = fp.shape
        # "auto-newton": Newton when most samples share one regime at the start point (see solve)
        return "auto-newton" if dual.quad > 0 and r * k <= self.newton_max_dim else "admm"

    @staticmethod
    def dual_curvature(fp):
        """``q``: mean of ``||z_i||^2 ||M|| / (lam n)`` over the samples."""
        mu = float(np.max(np.sum(fp.C * fp.C, axis=1))) if fp.C.size else 1.0  # largest eigenvalue of M
        return float(np.mean(np.einsum("ij,ij->i", fp.Z, fp.Z))) * mu / (fp.lam * fp.n)
