"""Newton–CG steps of the ``newton`` solver: the Hessian applied, never formed, and a subsampled preconditioner.

Forming the Hessian of the sketched problem costs ``n r^2 k (k + 1) / 2`` flops a pass (``k (k + 1) / 2``
weighted Gram products of the n x r features). A Newton step only needs ``H^{-1} g`` to a relative accuracy
that shrinks as the iterates converge (inexact Newton, Dembo, Eisenstat and Steihaug, "Inexact Newton
methods", SIAM J. Numer. Anal. 1982), which conjugate gradients reach with Hessian-vector products

    H U = (1/n) Z^T (w ⊙ h(F, Y; Z U C)) C^T + lam U,

``h`` the loss's ``hessian_times`` per row (for the multinomial loss ``p_i ⊙ u_i - p_i <p_i, u_i>``, the
K x K curvature ``diag(p_i) - p_i p_i^T`` applied row by row): two products with the features, ``4 n r k``
flops, where the predictions ``F`` at the Newton point are kept from the pass that formed the gradient.

The preconditioner follows the Nyström preconditioners of Falkon (Rudi, Carratino and Rosasco, "FALKON: an
optimal large scale kernel method", NeurIPS 2017; Meanti et al., "Kernel methods through the roof", NeurIPS
2020) and of the globally convergent Newton method of Marteau-Ferey, Bach and Rudi ("Globally convergent
Newton methods for ill-conditioned generalized self-concordant losses", NeurIPS 2019): the Hessian of a
subsample S of the rows,

    P_j = (1/|S|) Z_S^T diag(w_S c_{S,j}) Z_S + lam I,    c_{i,j} = (C H_i C^T)_{jj},

one r x r block per output j (block diagonal: the couplings ``-p_ij p_il`` between classes are left out; the
rows whose curvature for j is below :data:`CURVATURE_FLOOR` of the largest in their block are left out of it),
``k (|S| r^2 + r^3 / 3)`` flops to form and factor. The rows of S are drawn once per solve. The first step
builds it when plain CG would cost more by the classical bound on its iterations (:func:`expected_cg_iterations`,
``sqrt(kappa) ln(2 / eta) / 2`` for a condition number ``kappa`` bounded by the curvature of the rows of S,
:func:`curvature_bound`): at small ``lam`` and a tight forcing term (a solve started near its optimum, as each
solve of a warm-started λ path is) plain CG runs to its ``max_cg`` without converging. Each next step
(re)builds it at its Newton point only when the last step's CG products cost more than building it
(:func:`precondition_pays`), else keeps the one it has (``benchmarks/out/newton_cg.json``: on whitened Nyström
features at n = 2e4, r = 1000, lam = 1e-4, a preconditioner built at every step made the solve slower than
plain CG, the iterations it saved costing less than the factorisations). The solves of a warm-started λ path on the
same rows start from the last one's data term instead, factored again at their ``lam``
(:meth:`skframe_solvers.newton.NewtonSolver.carrying_preconditioner`).

The stop is the solver's certified duality gap; the forcing term ``eta = min(0.5, sqrt(gap))`` (the relative
duality gap at the Newton point, which falls like the squared gradient norm) ends the conjugate gradients when
``||H s + g|| <= eta ||g||``: loose far from the optimum, tight near it, where the steps stay superlinear.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from skframe.plugin.toolbox import engine_module, weighted_outer
from skframe_solvers._problem import BLOCK_BYTES

__all__ = ["HessianOperator", "SubsampledPreconditioner", "preconditioned_cg", "subsample", "forcing_term",
           "precondition_pays", "expected_cg_iterations", "curvature_bound", "first_step_pays", "RowSample",
           "row_curvature", "zero_sum_steps", "curved_rows", "CURVATURE_FLOOR"]


def precondition_pays(iterations, n, r, k, rows):
    """Whether ``iterations`` Hessian-vector products (``4 n r k`` flops each) cost at least a preconditioner
    of ``rows`` rows (``k (rows r^2 + r^3 / 3)`` flops)."""
    return 4.0 * n * r * k * iterations >= k * (min(rows, n) * r * r + r ** 3 / 3.0)


def expected_cg_iterations(kappa, eta, max_iter):
    """Iterations plain CG needs to cut its residual by ``eta`` on a condition number ``kappa``, by the classical
    bound ``2 ((sqrt(kappa) - 1) / (sqrt(kappa) + 1))^t <= eta``, i.e. about ``sqrt(kappa) ln(2 / eta) / 2``;
    at least 1, at most ``max_iter``.

    >>> [expected_cg_iterations(kappa, eta, 50) for kappa, eta in ((1.0, 0.5), (100.0, 0.5), (1e8, 0.5))]
    [1, 7, 50]
    """
    t = 0.5 * np.sqrt(max(float(kappa), 1.0)) * np.log(2.0 / max(float(eta), 1e-300))
    return int(min(max(np.ceil(t), 1), max_iter))


def _curvatures(fp, V, Z_S, Y_S, w_S):
    """``c_{i,j} = w_i (C H_i C^T)_jj`` of the rows ``Z_S`` at V, shape (s, k)."""
    F = fp.predict(V, Z_S)
    if callable(getattr(fp.loss, "hessian", None)):
        c = np.einsum("ja,iab,jb->ij", fp.C, fp.loss.hessian(F, Y_S), fp.C)
    else:
        c = np.broadcast_to(np.sum(fp.C * fp.C, axis=1), F.shape[:1] + fp.C.shape[:1])
    return c * w_S[:, None] if w_S is not None else c


#: rows of a sample :func:`curvature_bound` reads at most (evenly spaced): a mean, for a choice, not a solve (factored
#: features are formed for them: 2 000 rows of 1 000 x 1 000 factors, 0.05 s)
CURVATURE_ROWS = 2_000


def curvature_bound(fp, V, sample, rows=CURVATURE_ROWS):
    """An estimate from the rows of ``sample`` (a :class:`RowSample`) of the largest eigenvalue of the Hessian's
    data term at V: the trace ``(1/s) sum_i ||z_i||^2 sum_j c_ij`` (an upper bound of the subsample Hessian's
    largest eigenvalue), from at most ``rows`` evenly spaced rows of the sample (a mean; at n = 10^6 the
    sample's 10^5 rows took 2.9 s of a fit to read, expanded from factored features)."""
    total, count = 0.0, 0
    for Zb, Yb, wb in sample.blocks(every=max(1, -(-sample.size // max(int(rows), 1)))):
        c = _curvatures(fp, V, Zb, Yb, wb)
        Zt = fp.expand(Zb)
        total, count = total + float(np.sum(np.einsum("ia,ia->i", Zt, Zt) * np.sum(c, axis=1))), count + Zb.shape[0]
    return total / max(count, 1)


def first_step_pays(fp, V, sample, eta, max_iter):
    """Whether the first CG step should be preconditioned: plain CG's expected iterations at the condition
    number ``1 + curvature_bound / lam`` cost at least a preconditioner of the sample's rows (see module)."""
    kappa = 1.0 + curvature_bound(fp, V, sample) / fp.lam
    return precondition_pays(expected_cg_iterations(kappa, eta, max_iter), fp.n, fp.r, fp.C.shape[0], sample.size)


#: the safety factor of :func:`forcing_term`'s last step: its residual aims at a gap this many times below ``tol``
#: (squared: a residual of ``0.3 sqrt(tol / gap)`` leaves a gap of about ``0.09 tol``)
LAST_STEP_SAFETY = 0.3


def forcing_term(gap, tol=0.0):
    """The relative residual ``eta`` a CG step must reach at a point of relative duality gap ``gap``, for a solve
    that stops at ``tol``.

    ``sqrt(gap)`` (quadratic convergence: the next gap about ``gap^2``), loosened where that would over-solve the
    last step: the gap falls like the squared gradient norm and a step whose residual is ``eta ||g||`` leaves a
    gradient of about ``eta ||g||``, so ``eta = LAST_STEP_SAFETY sqrt(tol / gap)`` already ends below ``tol``
    (Eisenstat and Walker, "Choosing the forcing terms in an inexact Newton method", SIAM J. Sci. Comput. 1996,
    on over-solving). At ``gap = 1e-6`` and ``tol = 1e-8``: 0.03 instead of 0.001, about half the CG iterations.

    >>> [round(forcing_term(*args), 6) for args in ((1e-2,), (1e-6,), (1e-6, 1e-8))]
    [0.1, 0.001, 0.03]
    """
    gap, tol = max(float(gap), 0.0), max(float(tol), 0.0)
    eta = np.sqrt(gap)
    if tol > 0.0 and gap > tol:
        eta = max(eta, LAST_STEP_SAFETY * np.sqrt(tol / gap))
    return float(min(0.5, eta))


class RowSample:
    """``size`` rows of the problem drawn without replacement (all rows when ``size >= n``), taken a block at a time.

    In memory only their indices are held and each block of rows is gathered when it is used (a sample of 10^5
    rows of 1 000 features is never copied whole); streamed features are gathered in one pass over the blocks.

    Parameters
    ----------
    fp : FeatureMapProblem
    size : int
    rng : numpy.random.Generator, optional
        Draws the rows (default: seed 0, the same rows for every solve of a problem).
    """

    def __init__(self, fp, size, rng=None):
        n, self.fp = fp.n, fp
        if size >= n:
            self.rows = np.arange(n)
        else:
            rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(0)
            self.rows = np.sort(rng.choice(n, size=int(size), replace=False))
        self.size = int(self.rows.size)
        self.weights = None if fp.weights is None else fp.weights[self.rows]
        self.held = None
        if not fp.in_memory:
            Zs, Ys = [], []
            for start, Zb, Yb in fp.blocks():
                lo, hi = np.searchsorted(self.rows, [start, start + Zb.shape[0]])
                if hi > lo:
                    Zs.append(Zb[self.rows[lo:hi] - start])
                    Ys.append(Yb[self.rows[lo:hi] - start])
            self.held = (np.concatenate(Zs), np.concatenate(Ys))

    def blocks(self, every=1):
        """``(Z_b, Y_b, w_b)`` of the sampled rows (with ``every > 1`` every ``every``-th of them), at most
        ``BLOCK_BYTES`` of float64 features at a time."""
        width = self.fp.row_width
        step = max(1, BLOCK_BYTES // (8 * max(width, 1)))
        at = np.arange(0, self.size, int(every)) if every > 1 else None  # a thinned sample's positions
        count = self.size if at is None else at.size
        for a in range(0, count, step):
            pos = slice(a, min(count, a + step)) if at is None else at[a:a + step]
            w = None if self.weights is None else self.weights[pos]
            if self.held is not None:
                yield self.held[0][pos], self.held[1][pos], w
            elif at is None and self.size == self.fp.n:  # every row, in order: views
                yield self.fp.Z[pos], self.fp.Y[pos], w
            else:
                yield self.fp.Z[self.rows[pos]], self.fp.Y[self.rows[pos]], w

def subsample(fp, size, rng=None):
    """The :class:`RowSample` of ``size`` rows of ``fp``."""
    return RowSample(fp, size, rng)


def row_curvature(loss, F, Y, w=None):
    """``(softmax, curvature, weights)`` of the rows for the compiled Hessian pass, or None where the loss
    declares no structure (its ``hessian_times`` is then applied block by block).

    A loss's optional ``curvature(F, Y)`` returns ``("diagonal", c)`` (``H_i = diag(c_i)``; the row weights
    are folded into ``c``) or ``("softmax", P)`` (``H_i = diag(p_i) - p_i p_i^T``, weights kept apart); a loss
    without ``hessian_times`` (the square loss) has the identity curvature."""
    fn = getattr(loss, "curvature", None)
    if callable(fn):
        kind, arr = fn(F, Y)
    elif not callable(getattr(loss, "hessian_times", None)):
        kind, arr = "diagonal", np.ones_like(F)
    else:
        return None
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    if kind == "diagonal":
        return False, (arr * w if w is not None else arr), None
    if kind == "softmax":
        return True, arr, (None if w is None else np.ascontiguousarray(w[:, 0]))
    return None


class HessianOperator:
    """``U -> H U`` at a Newton point, from the predictions ``F`` at that point.

    Kept features are one block of all rows; streamed features the problem's blocks. Where the loss declares
    its curvature (:func:`row_curvature`) and the compiled engine runs (:func:`skframe.plugin.api.engine_module`
    for ``n r`` entries), one pass per product reads each row once (``Z U C`` and ``Z^T E C^T`` together);
    otherwise NumPy/BLAS runs the two products. ``D`` holds the direction's predictions ``Z U C`` of the last
    product on kept features (a CG solve sums them into its step's predictions, see :func:`preconditioned_cg`).

    Parameters
    ----------
    fp : FeatureMapProblem
    predictions : ndarray (n, d) or list of ndarray
        ``Z V C`` at the Newton point: of all rows for kept features, one array per block of ``fp.blocks()`` for
        streamed ones.
    """

    def __init__(self, fp, predictions):
        self.fp, self.products, self.D, self.F = fp, 0, None, predictions
        self.curved = callable(getattr(fp.loss, "hessian_times", None))
        self.fast = engine_module("skframe_solvers.newton_cg", work=fp.n * fp.r)
        self._curv = {}

    def _blocks(self):
        fp = self.fp
        if fp.in_memory:
            yield 0, fp.Z, fp.Y, self.F
            return
        for (start, Zb, Yb), F in zip(fp.blocks(), self.F):
            yield start, Zb, Yb, F

    def _curvature(self, start, Zb, Yb, F):
        if start not in self._curv:
            w = self.fp.row_weights(start, start + Zb.shape[0])
            self._curv[start] = row_curvature(self.fp.loss, F, Yb, w) if self.fast is not None else None
        return self._curv[start]

    def __call__(self, U):
        fp, out = self.fp, np.zeros_like(U)
        for start, Zb, Yb, F in self._blocks():
            curv = self._curvature(start, Zb, Yb, F)
            if curv is not None:
                softmax, c, w = curv
                A = (U if fp.P is None else fp.P @ U) @ fp.C
                buf = self.D if fp.in_memory else None  # (the last product's D: read by the caller before this one)
                part, D = self.fast.hessian_rows(Zb, A, fp.C, c, w, softmax, fp.identity, out=buf)
                part = part if fp.P is None else fp.P.T @ part
            else:
                D = fp.predict(U, Zb)
                HD = fp.loss.hessian_times(F, Yb, D) if self.curved else D  # the square loss: identity curvature
                w = fp.row_weights(start, start + Zb.shape[0])
                if w is not None:
                    HD = HD * w
                part = fp.back(Zb, HD @ fp.C.T)
            out += part
            if fp.in_memory:
                self.D = D
        self.products += 1
        return out / fp.n + fp.lam * U


#: rows whose curvature for an output is below this share of that output's largest in their block are left out of
#: its preconditioner block (:func:`curved_rows`)
CURVATURE_FLOOR = 1e-2


def curved_rows(c, floor=None):
    """The rows (indices) of one output's curvatures ``c`` above ``floor`` (default :data:`CURVATURE_FLOOR`) times
    their largest, or None for all.

    A row whose curvature is a hundredth of the largest adds at most that share of its ``z z^T`` to the block:
    a multinomial fit gives most rows little curvature for the classes it rules out (``p (1 - p)`` with ``p``
    near 0). Measured at n = 10^6, d = 10, 10 classes (``bench_classification_million.py``): along the λ path
    45-90% of the (row, class) pairs were kept, at the final solve (lam = 1e-7) half; that solve took 18
    Hessian-vector products with the floor and 17 without, its preconditioner 6.6-7.3 s instead of 12.3 s. The
    preconditioner stays a positive definite approximation of the Hessian (rows of weight zero, such as a
    held-out share's, are never read).

    >>> curved_rows(np.array([0.2, 0.001, 0.05, 0.0])).tolist()
    [0, 2]
    >>> curved_rows(np.array([0.2, 0.1])) is None
    True
    """
    c, floor = np.asarray(c), CURVATURE_FLOOR if floor is None else float(floor)
    top = float(c.max(initial=0.0))
    if not (top > 0 and floor > 0):
        return None
    keep = np.flatnonzero(c > floor * top)
    return None if keep.size == c.size else keep


class SubsampledPreconditioner:
    """``R -> P^{-1} R`` with ``P`` the block-diagonal Hessian of a row subsample at V (see module).

    With ``project`` the result is projected on the outputs' zero-sum subspace (``Pi P^{-1} Pi``, still positive
    definite there). For a loss invariant to a common shift of its outputs (the multinomial's,
    ``shift_invariant``) with the identity output matrix, the data term's Hessian is zero along the shift
    ``U = u 1^T`` and maps zero-sum directions to zero-sum ones, and a zero-sum gradient keeps the exact Newton
    step zero-sum; the block-diagonal P gives the shift the curvature of the data, where the Hessian has only
    ``lam``, and CG's directions wandered there at small ``lam`` (a 10-class problem at lam = 1e-6: 50 products
    a step, the solution's rows no longer summing to zero).
    """

    def __init__(self, fp, V, sample, project=False):
        self.project = bool(project)
        k, r = fp.C.shape[0], fp.r
        width = fp.row_width  # the left factor's, where the features are kept factored
        # factored features z_i = P^T l_i: the k blocks of the left factor's rows, then P^T B P (2 k width^2 r
        # flops), or the sample's features formed first (size width r flops), whichever costs less
        expand = fp.P is not None and sample.size < 2 * k * width
        width = r if expand else width
        blocks, self.rows_read, self.rows_used = np.zeros((k, width, width)), 0, 0
        for Zb, Yb, wb in sample.blocks():  # sum_i c_ij z_i z_i^T, one block of rows at a time (syrk where c >= 0)
            c = _curvatures(fp, V, Zb, Yb, wb)  # w_i (C H_i C^T)_jj, (b, k)
            Zb = fp.expand(Zb) if expand else Zb
            for j in range(k):
                used = curved_rows(c[:, j])
                blocks[j] += weighted_outer(Zb, c[:, j], rows=used)
                self.rows_read += c.shape[0]
                self.rows_used += c.shape[0] if used is None else used.size
        if fp.P is not None and not expand:  # P^T (sum_i c_ij l_i l_i^T) P: the blocks of the features P^T l_i
            blocks = np.stack([fp.P.T @ B @ fp.P for B in blocks])
        self.gram = blocks / sample.size  # (kept for at_lam)
        self._factor(fp.lam)

    def _factor(self, lam):
        self.lam = float(lam)
        self.factors = [cho_factor(G + lam * np.eye(G.shape[0]), lower=True, check_finite=False) for G in self.gram]

    def at_lam(self, lam, project):
        """The preconditioner of the same data term at ``lam`` (this one's Gram blocks factored again)."""
        out = object.__new__(SubsampledPreconditioner)
        out.project, out.gram, out.rows_read, out.rows_used = bool(project), self.gram, 0, 0
        out._factor(lam)
        return out

    def __call__(self, R):
        out = np.empty_like(R)
        for j, factor in enumerate(self.factors):
            out[:, j] = cho_solve(factor, R[:, j], check_finite=False)
        if self.project:
            out -= out.mean(axis=1, keepdims=True)
        return out


def zero_sum_steps(fp, V):
    """Whether the Newton steps of ``fp`` at ``V`` lie in the outputs' zero-sum subspace (see
    :class:`SubsampledPreconditioner`): a shift-invariant loss, the identity output matrix, more than one output
    and a point whose rows sum to zero (to rounding; zero, where a solve starts): the gradient's shift
    component, ``lam`` times V's, is then zero too."""
    if not (getattr(fp.loss, "shift_invariant", False) and fp.identity and V.shape[1] > 1):
        return False
    return float(np.abs(V.sum(axis=1)).max(initial=0.0)) <= 1e-10 * max(float(np.abs(V).max(initial=0.0)), 1e-300)


def preconditioned_cg(apply_h, g, eta, max_iter, precondition=None):
    """Conjugate gradients on ``H s = -g`` until ``||H s + g|| <= eta ||g||`` or ``max_iter`` products.

    Returns ``(s, iterations, rows)``: ``rows`` the predictions of the step ``Z s C``, summed from those of the
    directions (``apply_h.D`` after each product, see :class:`HessianOperator`), or None where the operator
    keeps none. A direction of non-positive curvature (impossible for a convex loss with ``lam > 0`` but for
    rounding) ends the iterations with the step reached so far (the first one: the preconditioned gradient
    step).
    """
    s, r = np.zeros_like(g), -g
    z = precondition(r) if precondition is not None else r
    p, rz = z.copy(), float(np.sum(r * z))
    stop = eta * float(np.sqrt(np.sum(g * g)))
    it, rows, scaled = 0, None, None  # (rows summed in place: each n x d temporary is a fresh map of pages)
    while it < max_iter:
        it += 1
        Hp = apply_h(p)
        D = getattr(apply_h, "D", None)
        curvature = float(np.sum(p * Hp))
        if not curvature > 0:
            if not np.any(s):
                s, rows = p, (None if D is None else D.copy())
            break
        a = rz / curvature
        s += a * p
        if D is not None:
            if rows is None:
                rows, scaled = a * D, np.empty_like(D)
            else:
                rows += np.multiply(D, a, out=scaled)
        r -= a * Hp
        if float(np.sqrt(np.sum(r * r))) <= stop:
            break
        z = precondition(r) if precondition is not None else r
        rz_new = float(np.sum(r * z))
        p, rz = z + (rz_new / rz) * p, rz_new
    return s, it, rows
