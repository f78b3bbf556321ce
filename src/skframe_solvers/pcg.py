"""Preconditioned conjugate gradients for the square loss over Nyström centres (Falkon's preconditioner).

The problem. With centres ``C`` (m of the training rows) and ``K = k(X, C)`` (n x m), Nyström kernel ridge
regression minimises ``(1/n) ||K alpha - y||^2 + lam alpha^T K_mm alpha``; its normal equations are

    H alpha = K^T y,    H = K^T K + n lam K_mm.

Forming ``K^T K`` costs n m^2 operations (the direct solver's sums); conjugate gradients need only products
``H v``, each one pass over the rows (:func:`skframe.plugin.toolbox.normal_pass`: ``K^T (K v)`` with each kernel
entry computed once), and a good preconditioner makes a few tens of them enough.

The preconditioner (Rudi, Carratino and Rosasco, "FALKON: An Optimal Large Scale Kernel Method", NeurIPS 2017;
Meanti, Carratino, Rosasco and Rudi, "Kernel Methods Through the Roof: Handling Billions of Points Efficiently",
NeurIPS 2020), written for this λ scaling. For uniformly sampled centres ``K^T K ~ (n/m) K_mm^2``, so

    P = (n/m) K_mm^2 + n lam K_mm = n T^T (T T^T / m + lam I) T = (sqrt(n) A T)^T (sqrt(n) A T),

with ``T = chol(K_mm)`` (``K_mm = T^T T``) and ``A = chol(T T^T / m + lam I)``. With ``B = T^{-1} A^{-1} / sqrt(n)``
conjugate gradients solve ``B^T H B beta = B^T K^T y`` (a matrix close to the identity), and ``alpha = B beta``;
the penalty's part is ``B^T (n lam K_mm) B = lam A^{-T} A^{-1}``, which needs no pass. ``T`` and ``A`` share
one m x m array (T in the upper triangle, ``A^T`` in the lower, each diagonal kept aside), as in Falkon, so the
memory beyond the data is one m x m array and a few m x k vectors.

Beyond m^2 memory: where the m x m array does not fit ``memory_budget``, a low-rank preconditioner from a
sub-sample of the centres (:class:`skframe_solvers._pcg_lowrank.LowRankPreconditioner`: O(m q) memory) takes its
place; ``info["preconditioner"]`` and ``info["preconditioner_reason"]`` say which and why.

Stopping rule: the relative residual ``||B^T (K^T y - H alpha)|| / ||B^T K^T y||`` of the preconditioned normal
equations (from the conjugate-gradient recurrence), per target, at most ``tol``; or ``max_passes`` passes over
the rows (the first computes ``K^T y``). The residual is reported with the solution.
"""

from __future__ import annotations

import time

import numpy as np
from scipy.linalg import blas, lapack

from skframe.exceptions import MemoryBudgetError
from skframe.plugin.api import InvalidInputError, InvalidParameterError, SolveResult
from skframe.plugin.toolbox import kernel_block, lowrank_sizes, n_items, normal_pass
from skframe_solvers._pcg_lowrank import LowRankPreconditioner, check_lowrank, lowrank_bytes

__all__ = ["FalkonPreconditioner", "LowRankPreconditioner", "NystromPCG"]
_PRECONDITIONERS = ("auto", "falkon", "lowrank")

#: diagonal added to K_mm before its Cholesky factor, times m x machine epsilon x its mean diagonal (Falkon's
#: choice), multiplied by 100 on each failure up to :data:`_MAX_JITTER`
_JITTER = float(np.finfo(np.float64).eps)
_MAX_JITTER = 1e-6
_BLOCK = 512  # columns per block of the triangle copy


def _mb(nbytes):
    return f"{nbytes / 1e6:.4g} MB"


def _diag(P):
    return np.einsum("ii->i", P)  # a writable view of the diagonal


def _mirror(P, to_lower):
    """Copy the strict upper triangle onto the strict lower one (``to_lower``) or back, block by block."""
    m = P.shape[0]
    for j0 in range(0, m, _BLOCK):
        j1 = min(j0 + _BLOCK, m)
        if to_lower:
            P[j0:j1, :j0] = P[:j0, j0:j1].T
        else:
            P[:j0, j0:j1] = P[j0:j1, :j0].T
        blk = P[j0:j1, j0:j1]
        idx = np.tril_indices(j1 - j0, -1) if to_lower else np.triu_indices(j1 - j0, 1)
        blk[idx] = blk.T[idx]


class FalkonPreconditioner:
    """``B = T^{-1} A^{-1} / sqrt(n)`` from ``K_mm`` (consumed: its memory holds ``T`` and ``A``).

    Parameters
    ----------
    Kmm : ndarray (m, m), float64, C-contiguous
        ``k(C, C)``; overwritten.
    lam : float
        The regularisation (the problem's ``n lam`` scaling).
    n : int
        Training rows.
    """

    def __init__(self, Kmm, lam, n):
        m = Kmm.shape[0]
        self.m, self.n, self.lam = m, int(n), float(lam)
        P = Kmm.T  # Fortran-ordered view of the symmetric matrix: LAPACK works in place
        mean_diag = float(np.mean(_diag(P))) or 1.0
        self.jitter = self._factor_t(P, m * _JITTER * mean_diag)
        self.tdiag = _diag(P).copy()
        _mirror(P, to_lower=True)  # the lower triangle becomes T^T (the diagonal is shared)
        _, info = lapack.dlauum(P, lower=1, overwrite_c=1)  # lower triangle: (T^T)^T T^T = T T^T
        if info != 0:
            raise InvalidInputError(f"the product T T^T of the centres' factor failed (LAPACK info {info})")
        _diag(P)[:] += m * self.lam  # chol(T T^T + m lam I) = sqrt(m) A^T
        _, info = lapack.dpotrf(P, lower=1, overwrite_a=1, clean=0)
        if info != 0:
            raise InvalidInputError(f"T T^T / m + lam I is not positive definite (lam={self.lam:g}, LAPACK info "
                                    f"{info}); use a larger lam")
        self.adiag = _diag(P).copy()
        self.P = P

    @staticmethod
    def _factor_t(P, jitter):
        """Upper Cholesky factor of ``P + jitter I`` in place; the jitter grows until it succeeds."""
        saved = _diag(P).copy()
        scale = float(np.mean(saved)) or 1.0
        while True:
            _diag(P)[:] = saved + jitter
            _, info = lapack.dpotrf(P, lower=0, overwrite_a=1, clean=0)
            if info == 0:
                return jitter
            if jitter > _MAX_JITTER * scale:
                raise InvalidInputError(
                    f"the centres' kernel matrix is not positive definite even with {jitter:.2g} added to its "
                    "diagonal (repeated centres or a kernel that is not positive definite); use fewer centres")
            _mirror(P, to_lower=False)  # the upper triangle again from the untouched lower one
            jitter *= 100.0

    def _solve(self, V, upper, trans):
        """``T^{-1} V``, ``T^{-T} V`` (upper) or ``L^{-1} V``, ``L^{-T} V`` (lower, ``L = sqrt(m) A^T``)."""
        _diag(self.P)[:] = self.tdiag if upper else self.adiag
        out, info = lapack.dtrtrs(self.P, np.asfortranarray(V), lower=0 if upper else 1, trans=1 if trans else 0)
        if info != 0:
            raise InvalidInputError(f"a triangular solve of the preconditioner failed (LAPACK info {info})")
        return out

    def apply(self, V):
        """``B V = T^{-1} A^{-1} V / sqrt(n)``."""
        return self._solve(self._solve(V, False, True), True, False) * np.sqrt(self.m / self.n)

    def apply_t(self, V):
        """``B^T V = A^{-T} T^{-T} V / sqrt(n)``."""
        return self._solve(self._solve(V, True, True), False, False) * np.sqrt(self.m / self.n)

    def penalty(self, V):
        """``B^T (n lam K_mm) B V = lam A^{-T} A^{-1} V``."""
        return self._solve(self._solve(V, False, True), False, False) * (self.lam * self.m)

    def kmm_times(self, V):
        """``K_mm V = T^T T V`` (the factor with its jitter)."""
        _diag(self.P)[:] = self.tdiag
        TV = blas.dtrmm(1.0, self.P, np.asfortranarray(V), lower=0)
        return blas.dtrmm(1.0, self.P, TV, lower=0, trans_a=1)


class NystromPCG:
    """Preconditioned conjugate gradients for Nyström kernel ridge regression (see the module's notes).

    Parameters
    ----------
    tol : float, default=1e-7
        Relative residual of the preconditioned normal equations at which it stops (every target).
    max_passes : int, default=25
        Passes over the rows, ``K^T y`` included (each conjugate-gradient step is one pass).
    preconditioner : {"auto", "falkon", "lowrank"}, default="auto"
        ``"falkon"``: the m x m factor (8 m^2 bytes); ``"lowrank"``: a rank-``rank`` estimate from ``subsample``
        centres (about 8 m rank bytes); ``"auto"``: Falkon's where 8 m^2 bytes fit ``memory_budget``.
    memory_budget : int, optional
        Bytes the preconditioner may hold; None: ``options.memory_budget`` (the plan's), else no limit (Falkon's).
    subsample : int, optional
        Centres sub-sampled by the low-rank preconditioner; None: ``min(m, 4000)``.
    rank : int, optional
        Eigenpairs it keeps (``< subsample``); None: ``min(subsample - 1, 400)``.
    random_state : int, default=0
        Draws its sub-sample.

    Examples
    --------
    >>> import numpy as np
    >>> from skframe.plugin.api import ComponentSpec
    >>> from skframe.plugin.toolbox import build_component
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(500, 2)); y = np.sin(6 * X[:, 0])
    >>> kernel = build_component(ComponentSpec("kernel", "gaussian", {"gamma": 2.0}))
    >>> res = NystromPCG(tol=1e-8, max_passes=60).solve_centres(kernel, X, X[:50], y, 1e-4)
    >>> res.W.shape, res.info["residual"] <= 1e-8
    ((50, 1), True)
    """

    name = "pcg"

    def __init__(self, tol=1e-7, max_passes=25, preconditioner="auto", memory_budget=None, subsample=None, rank=None,
                 random_state=0):
        self.tol, self.max_passes = tol, max_passes
        self.preconditioner, self.memory_budget = preconditioner, memory_budget
        self.subsample, self.rank, self.random_state = subsample, rank, random_state

    def _check(self, lam):
        if not (isinstance(self.tol, (int, float)) and self.tol > 0):
            raise InvalidParameterError(f"tol={self.tol!r} must be a positive number, e.g. 1e-7")
        if not (isinstance(self.max_passes, (int, np.integer)) and self.max_passes >= 2):
            raise InvalidParameterError(f"max_passes={self.max_passes!r} must be an integer >= 2, e.g. 25")
        if not (isinstance(lam, (int, float, np.floating)) and lam > 0):
            raise InvalidParameterError(f"lam={lam!r} must be > 0, e.g. 1e-6")
        if self.preconditioner not in _PRECONDITIONERS:
            raise InvalidParameterError(f"preconditioner={self.preconditioner!r} must be one of {_PRECONDITIONERS}")
        budget = self.memory_budget
        if budget is not None and (isinstance(budget, bool) or not isinstance(budget, (int, float, np.integer))
                                   or not budget > 0):
            raise InvalidParameterError(f"memory_budget={budget!r} must be a positive number of bytes, e.g. 2e9")

    def _budget(self, options):
        if self.memory_budget is not None:
            return int(self.memory_budget), "memory_budget"
        if options is not None and getattr(options, "memory_budget", None):
            return int(options.memory_budget), "the plan's memory_budget"
        return None, "no memory budget given"

    def _preconditioner(self, kernel, X, centres, lam, n, options):
        """The preconditioner, the reason for it and its bytes."""
        m = n_items(centres)
        s, q = lowrank_sizes(m, self.subsample, self.rank)
        dense = 8 * m * m
        budget, source = self._budget(options)
        kind = self.preconditioner
        if kind == "auto" and budget is None:
            kind, why = "falkon", source
        elif kind == "auto":
            kind = "falkon" if dense <= budget else "lowrank"
            why = f"m^2 floats = {_mb(dense)} {'<=' if kind == 'falkon' else '>'} {source} {_mb(budget)}"
        else:
            why = "given"
        if kind == "falkon":
            if budget is not None and dense > budget:
                raise MemoryBudgetError(f"Falkon's preconditioner needs {_mb(dense)} for m={m} centres, over {source} "
                                        f"{_mb(budget)}; use preconditioner='lowrank' or fewer centres")
            Kmm = np.ascontiguousarray(kernel_block(kernel, centres, centres, dtype=np.float64))
            return FalkonPreconditioner(Kmm, lam, n), f"falkon: {why}", dense
        check_lowrank(m, s, q)
        need = lowrank_bytes(m, s, q)
        if budget is not None and need > budget:
            raise MemoryBudgetError(f"the low-rank preconditioner needs {_mb(need)} (m={m}, subsample={s}, rank={q}), "
                                    f"over {source} {_mb(budget)}; use a smaller rank or subsample")
        pre = LowRankPreconditioner(kernel, centres, lam, n, s, q, self.random_state, options)
        return pre, f"lowrank (subsample {s}, rank {pre.rank_kept}): {why}", need

    def solve_centres(self, kernel, X, centres, Y, lam, *, init=None, options=None, progress=None):
        """Coefficients ``alpha`` (m x k) on ``centres``: ``f(x) = k(x, centres) @ alpha``.

        Parameters
        ----------
        kernel : kernel object (prepared on the training data)
        X : ndarray (n, d)
        centres : ndarray (m, d)
        Y : ndarray (n,) or (n, k)
        lam : float
        init : ndarray (m, k), optional
            Start point (e.g. the previous λ's coefficients): its residual comes from the first pass.
        options : ComputeOptions, optional
            The plan's engine and chunks for the passes.
        progress : callable, optional
            Called with the pass count after each pass.

        Returns
        -------
        SolveResult
            ``W`` the coefficients, ``history`` the largest relative residual after each pass, ``n_iter`` the
            conjugate-gradient steps; ``info``: ``residual`` (per target and its largest), ``passes``, ``tol``,
            ``jitter``, the seconds of the preconditioner and of the passes, and ``preconditioner`` ("falkon" or
            "lowrank"), ``preconditioner_reason`` and ``preconditioner_bytes``.
        """
        self._check(lam)
        Y2 = np.asarray(Y, dtype=np.float64)
        Y2 = Y2[:, None] if Y2.ndim == 1 else Y2
        n, k = Y2.shape
        if n_items(X) != n:
            raise InvalidInputError(f"X has {n_items(X)} rows but Y has {n}; give one target row per input row")
        t0 = time.perf_counter()
        pre, why, pre_bytes = self._preconditioner(kernel, X, centres, lam, n, options)
        t_pre = time.perf_counter() - t0
        passes, t_pass = 0, 0.0

        def one_pass(V, W=None, a=1.0):
            nonlocal passes, t_pass
            t = time.perf_counter()
            out = normal_pass(kernel, X, centres, V, W, a=a, options=options)
            passes += 1
            t_pass += time.perf_counter() - t
            if progress is not None:
                progress(passes)
            return out

        m = n_items(centres)
        if init is None:
            alpha0 = None
            r = pre.apply_t(one_pass(np.zeros((m, k)), Y2, a=0.0))
            b_norm = np.linalg.norm(r, axis=0)
        else:  # one pass gives K^T y and K^T (y - K alpha0) together (two columns per target)
            alpha0 = np.asarray(init, dtype=np.float64).reshape(m, k)
            both = one_pass(np.hstack([-alpha0, np.zeros((m, k))]), np.hstack([Y2, Y2]))
            b_norm = np.linalg.norm(pre.apply_t(both[:, k:]), axis=0)
            r = pre.apply_t(both[:, :k] - n * lam * pre.kmm_times(alpha0))
        b_norm[b_norm == 0] = 1.0
        beta, p = np.zeros((m, k)), r.copy()
        rs = np.einsum("ij,ij->j", r, r)
        history = [float(np.max(np.sqrt(rs) / b_norm))]
        steps, stop = 0, f"{self.max_passes} passes over the rows"
        while True:
            if history[-1] <= self.tol:
                stop = f"relative residual {history[-1]:.2g} <= tol {self.tol:g}"
                break
            if passes >= self.max_passes:
                break
            Hp = pre.apply_t(one_pass(pre.apply(p))) + pre.penalty(p)
            curv = np.einsum("ij,ij->j", p, Hp)
            step = np.divide(rs, curv, out=np.zeros_like(rs), where=curv > 0)
            beta += step * p
            r -= step * Hp
            rs_new = np.einsum("ij,ij->j", r, r)
            p = r + np.divide(rs_new, rs, out=np.zeros_like(rs), where=rs > 0) * p
            rs, steps = rs_new, steps + 1
            history.append(float(np.max(np.sqrt(rs) / b_norm)))
        alpha = pre.apply(beta)
        if alpha0 is not None:
            alpha += alpha0
        residual = np.sqrt(rs) / b_norm
        info = {"residual": float(residual.max()), "residual_per_target": residual.tolist(), "passes": passes,
                "tol": float(self.tol), "jitter": float(pre.jitter), "seconds_preconditioner": t_pre,
                "seconds_passes": t_pass, "preconditioner": why.split(" ")[0].rstrip(":"), "preconditioner_reason": why,
                "preconditioner_bytes": int(pre_bytes), "residual_rule": "||B^T (K^T y - H alpha)|| / ||B^T K^T y||"}
        return SolveResult(W=np.ascontiguousarray(alpha), history=history, stop_reason=stop, n_iter=steps,
                           info=info)
