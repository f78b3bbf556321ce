"""The feature-map problem every built-in solver minimises, in well-conditioned variables.

Every solver minimises, over ``W`` of shape (r, d),

    J(W) = (1/n) sum_i l(z_i^T W M, y_i) + (lam/2) tr(W M W^T)

where ``z_i`` are the sketched features (El Ahmad et al., "Fast Kernel Methods for Generic
Lipschitz Losses via p-Sparsified Sketches", TMLR 2023, Prop. 1) and M the output matrix of
a decomposable kernel ``k M`` (identity when None). The nd x rd Kronecker feature map of
``k M`` is never built. With ``M = Q S Q^T`` (rank k) the solvers work on
``V = W Q S^{1/2}`` (r x k), a change of variables that turns the problem into

    J(V) = (1/n) sum_i l(z_i^T V C, y_i) + (lam/2) ||V||_F^2,    C = S^{1/2} Q^T,

(prediction ``Z V C = Z W M``, penalty ``||V||^2 = tr(W M W^T)``, ``C^T C = M``) which is
well conditioned whatever M; ``W = V S^{-1/2} Q^T`` is returned. For ``M = I``: ``V = W``.

The features come from a :class:`skframe.contract.problems.Problem`: in memory when
``problem.features()`` returns them, else streamed block by block.
"""

from __future__ import annotations

import numpy as np

from skframe.plugin.api import InvalidInputError, InvalidParameterError, Problem
from skframe.plugin.toolbox import as_problem, eigh_truncated, engine_module, solve_psd, weighted_gram

#: rows of kept features a pass takes at a time (``BLOCK_BYTES`` of float64 features): the Newton Hessian's
#: row-scaled copy of a block, ``Z_b * c``, is one block, not the n x r matrix (16 GB of peak memory at
#: n = 10^6, r = 1 000 when it was)
BLOCK_BYTES = 64 * 2**20
#: the most columns of a product with float64 rows that the compiled row passes take (BLAS's GEMM beyond)
FAST_ROWS_COLUMNS = 16

__all__ = ["FeatureMapProblem"]


def _as_2d(Y):
    Y = np.asarray(Y, dtype=np.float64)
    return Y[:, None] if Y.ndim == 1 else Y


def _normalised_weights(sample_weight, n):
    """Per-row weights scaled to mean 1 (``n w_i / sum w``), or None for equal weights.

    With them the data term is ``(1/n) sum_i w'_i l_i = sum_i w_i l_i / sum_i w_i``: integer weights give
    the objective of the rows repeated that many times.
    """
    if sample_weight is None:
        return None
    w = np.asarray(sample_weight, dtype=np.float64).ravel()
    if w.shape != (n,) or not np.all(np.isfinite(w)) or np.any(w < 0) or not w.sum() > 0:
        raise InvalidInputError(f"sample_weight must hold {n} finite non-negative numbers with a positive sum")
    return w * (n / w.sum())


def _row_step(width):
    """Rows of ``width`` columns in :data:`BLOCK_BYTES` of float64."""
    return max(1, BLOCK_BYTES // (8 * max(int(width), 1)))


def _row_blocks(Z):
    """``(start, stop)`` of row blocks of Z of at most :data:`BLOCK_BYTES` in float64."""
    step = _row_step(Z.shape[1])
    for start in range(0, Z.shape[0], step):
        yield start, min(Z.shape[0], start + step)


class FeatureMapProblem:
    """The feature-map problem in the well-conditioned variables ``V`` (see module docstring).

    Parameters
    ----------
    problem : Problem, or ndarray Z of shape (n, r) with ``Y`` given
    loss : Loss
    lam : float
    M : ndarray of shape (d, d) or None
    Y : ndarray of shape (n, d), optional
        Targets when ``problem`` is an array (tests, old calls).
    chunk_rows : int, optional
        Rows per block when the problem streams.
    factored : bool, default=False
        Read features kept as two factors ``Z = L P`` (a problem with ``factors()``) apart: ``Z`` then holds the
        left factor ``L`` (n x s), ``P`` the right one (s x r), the rows of :meth:`blocks` are L's, and every
        product with them goes through :meth:`predict`, :meth:`back` and :meth:`expand` (the Newton solver).
        Otherwise such a problem streams its formed features.
    """

    def __init__(self, problem, loss, lam, M=None, Y=None, chunk_rows=None, factored=False):
        if not isinstance(problem, Problem):
            problem = as_problem(np.asarray(problem, dtype=np.float64), _as_2d(Y))
        self.problem, self.loss, self.lam = problem, loss, float(lam)
        self.chunk_rows = chunk_rows
        self.n, self.r, d = int(problem.n), int(problem.r), int(problem.d)
        self.d = d
        self._gram = None  # Z^T Z, computed once by gram()
        self.weights = _normalised_weights(getattr(problem, "sample_weight", None), self.n)
        #: the right factor of features kept as ``Z = L P`` (None: ``Z`` holds the features themselves)
        self.P = None
        factors = problem.factors() if factored and callable(getattr(problem, "factors", None)) else None
        feats = problem.features() if factors is None else None
        if factors is not None:  # a float32 left factor stays so: every product with it runs in float64
            L, P, Yf = factors
            L = np.ascontiguousarray(L, dtype=np.float32 if np.asarray(L).dtype == np.float32 else np.float64)
            self.Z, self.P = L, np.ascontiguousarray(P, dtype=np.float64)
            self.Y = np.ascontiguousarray(_as_2d(Yf))
        elif feats is not None:  # float32 features stay so for a solver that reads them apart (factored)
            Z, Yf = feats
            Z = np.ascontiguousarray(Z, dtype=np.float32 if factored and np.asarray(Z).dtype == np.float32
                                     else np.float64)
            Yf = np.ascontiguousarray(_as_2d(Yf))
            if Z.ndim != 2 or Z.shape[0] != Yf.shape[0]:
                raise InvalidInputError(
                    f"features Z {Z.shape} and targets Y {Yf.shape} must have the same number of rows"
                )
            self.Z, self.Y = Z, Yf
        else:
            self.Z = self.Y = None
        if M is None:
            self.identity = True
            self.C = np.eye(d)
            self.sqrt_s = np.ones(d)
            self.Q = np.eye(d)
            self.M = np.eye(d)
        else:
            M = np.asarray(M, dtype=np.float64)
            if M.shape != (d, d):
                raise InvalidParameterError(f"output matrix M has shape {M.shape}; expected ({d}, {d})")
            s, Q = eigh_truncated(M)
            self.identity = False
            self.sqrt_s = np.sqrt(s)
            self.Q = Q
            self.C = self.sqrt_s[:, None] * Q.T  # (k, d)
            self.M = self.C.T @ self.C  # M with its negligible eigenvalues dropped

    @property
    def in_memory(self):
        """True when the whole feature matrix is held in memory."""
        return self.Z is not None

    @property
    def row_width(self):
        """Columns of the rows :meth:`blocks` yields: r, or the left factor's where the features are factored."""
        return self.Z.shape[1] if self.in_memory else self.r

    @property
    def shape(self):
        """Shape (r, k) of the variable V."""
        return (self.r, self.C.shape[0])

    # ------------------------------------------------------------------ variables
    def to_W(self, V):
        """``W = V S^{-1/2} Q^T`` (r x d)."""
        if self.identity:
            return np.array(V, dtype=np.float64, copy=True)
        return (V / self.sqrt_s) @ self.Q.T

    def from_W(self, W):
        """``V = W Q S^{1/2}`` (r x k), the inverse of :meth:`to_W` on M's range."""
        W = np.asarray(W, dtype=np.float64)
        if W.ndim == 1:
            W = W[:, None]
        if W.shape != (self.r, self.d):
            raise InvalidParameterError(f"init has shape {W.shape}; expected (r, d) = ({self.r}, {self.d})")
        if self.identity:
            return W.copy()
        return (W @ self.Q) * self.sqrt_s

    # ------------------------------------------------------------------ rows
    def blocks(self):
        """``(start, Z_block, Y_block)`` in float64 over all rows."""
        if self.in_memory:  # blocks of at most BLOCK_BYTES: a pass's row-scaled copies stay bounded
            step = self.chunk_rows or min(self.n, _row_step(self.Z.shape[1]))
            for start in range(0, self.n, step):
                yield start, self.Z[start:start + step], self.Y[start:start + step]
            return
        for start, Zb, Yb in self.problem.blocks(self.chunk_rows):
            yield start, np.asarray(Zb, dtype=np.float64), _as_2d(Yb)

    def left(self, V):
        """``P V`` where the features are factored (``Z V = L (P V)``), else V: computed once a pass and given to
        :meth:`predict` for each of its blocks."""
        return V if self.P is None else self.P @ V

    def predict(self, V, Z, PV=None):
        """``Z V C`` of rows of :meth:`blocks` (the left factor's rows where the features are factored; float32
        features or a float32 left factor are multiplied in float64 a block of rows at a time); ``PV``: the
        :meth:`left` of V, where the caller holds it."""
        PV = self.left(V) if PV is None else PV
        fast = self._rows_engine(Z, PV.shape[1])
        if fast is not None:
            return fast.rows_times(Z, PV) @ self.C
        if Z.dtype == np.float64:
            return (Z @ PV) @ self.C
        out = np.empty((Z.shape[0], PV.shape[1]))
        for a, b in _row_blocks(Z):
            out[a:b] = np.asarray(Z[a:b], dtype=np.float64) @ PV
        return out @ self.C

    def back(self, Z, B):
        """``Z^T B`` (r x columns of B) of rows of :meth:`blocks`: ``P^T (L^T B)`` where the features are
        factored (in float64 a block of rows at a time for float32 rows)."""
        return self.right(self.back_left(Z, B))

    def back_left(self, Z, B):
        """``L^T B`` of rows of :meth:`blocks` (``Z^T B`` where the features are not factored): a pass sums it over
        its blocks and applies :meth:`right` once."""
        fast = self._rows_engine(Z, B.shape[1])
        if fast is not None:
            return fast.rows_back(Z, B)
        if Z.dtype == np.float64:
            return Z.T @ B
        acc = np.zeros((Z.shape[1], B.shape[1]))
        for a, b in _row_blocks(Z):
            acc += np.asarray(Z[a:b], dtype=np.float64).T @ B[a:b]
        return acc

    def right(self, acc):
        """``P^T acc`` where the features are factored, else ``acc``."""
        return acc if self.P is None else self.P.T @ acc

    def _rows_engine(self, Z, columns):
        """The compiled row passes (:mod:`skframe_solvers._newton_cg_numba`: ``Z A`` and ``Z^T B`` reading each row
        once, float32 rows in float64 without a copy) for a C-contiguous NumPy block where the engine chosen for
        the problem's ``n r`` entries is numba (as for the Hessian-vector products) and, for float64 rows, the
        product has at most :data:`FAST_ROWS_COLUMNS` columns; else None (BLAS; float32 rows then a block at a
        time). Thin products with many rows are bound by reading the rows: at 10^5 x 1 000, 26-29 ms for float32
        rows and 37-40 ms for float64 with 10 columns against BLAS's 50-70 ms, 213 ms for a float64 copy and BLAS;
        from 32 columns BLAS's float64 products are the faster (106 ms against 120 ms)."""
        if not (isinstance(Z, np.ndarray) and Z.ndim == 2 and Z.flags.c_contiguous):
            return None
        if Z.dtype == np.float64 and columns > FAST_ROWS_COLUMNS:
            return None
        return engine_module("skframe_solvers.newton_cg", work=self.n * Z.shape[1])

    def expand(self, Z):
        """The features themselves of rows of :meth:`blocks` (``L P`` where they are factored)."""
        return Z if self.P is None else np.asarray(Z, dtype=np.float64) @ self.P

    def penalty(self, V):
        return 0.5 * self.lam * float(np.sum(V * V))

    def objective(self, V, F=None):
        """``J(V)`` over all rows, penalty included (``F``: see :meth:`mean_loss`)."""
        return self.mean_loss(V, F) + self.penalty(V)

    def row_weights(self, start, stop):
        """The mean-1 weights of rows ``start:stop`` as a column, or None for equal weights."""
        return None if self.weights is None else self.weights[start:stop, None]

    def _factored_pass(self, V, gradient):
        """A streamed problem's own pass (:meth:`StreamedFeatureProblem.loss_pass`), or None."""
        if self.in_memory or self.weights is not None:
            return None
        fn = getattr(self.problem, "loss_pass", None)
        return None if fn is None else fn(V, self.C, self.loss, gradient)

    def mean_loss(self, V, F=None):
        """Data term ``(1/n) sum_i l(z_i^T V C, y_i)``; ``F``: the predictions ``Z V C`` of all kept rows where
        they are known (no product with the features is then formed)."""
        res = self._factored_pass(V, False) if F is None else None
        if res is not None:
            return res[0] / self.n
        total, PV = 0.0, (self.left(V) if F is None else None)
        for start, Zb, Yb in self.blocks():
            Fb = self.predict(V, Zb, PV) if F is None else F[start:start + Zb.shape[0]]
            values = self.loss.value(Fb, Yb)
            if self.weights is not None:
                values = values * self.weights[start:start + Zb.shape[0]]
            total += float(np.sum(values))
        return total / self.n

    def batch_value_and_grad(self, V, Z, Y, w=None):
        """``J`` and its (sub-)gradient ``(1/b) Z_b^T G C^T + lam V`` on one batch of rows (``w``: their weights)."""
        F = self.predict(V, Z)
        values, G = self.loss.value(F, Y), self.loss.gradient(F, Y)
        if w is not None:
            values, G = values * w, G * w[:, None]
        val = float(np.mean(values)) + self.penalty(V)
        return val, self.back(Z, G @ self.C.T) / Z.shape[0] + self.lam * V

    def value_and_grad(self, V):
        """Full objective and gradient, accumulated block by block."""
        res = self._factored_pass(V, True)
        if res is not None:
            return res[0] / self.n + self.penalty(V), res[1] / self.n + self.lam * V
        total, acc, PV = 0.0, np.zeros((self.row_width, V.shape[1])), self.left(V)
        for start, Zb, Yb in self.blocks():
            F = self.predict(V, Zb, PV)
            values, G = self.loss.value(F, Yb), self.loss.gradient(F, Yb)
            w = self.row_weights(start, start + Zb.shape[0])
            if w is not None:
                values, G = values * w[:, 0], G * w
            total += float(np.sum(values))
            acc += self.back_left(Zb, G @ self.C.T)
        return total / self.n + self.penalty(V), self.right(acc) / self.n + self.lam * V

    # ------------------------------------------------------------------ square loss
    def gram(self):
        """``Z^T Z`` (r x r) of the in-memory features, computed once and kept (do not modify it)."""
        if self._gram is None:
            self._gram = self.Z.T @ self.Z if self.P is None else self.back(self.Z, self.Z) @ self.P
        return self._gram

    def ridge_V(self):
        """Closed-form minimiser of the square-loss problem in V (one r x r system or eigendecomposition)."""
        if self.weights is not None:  # one pass over the feature blocks (or the kept features), each weighted
            A, ZtY = weighted_gram(((s, self.expand(Zb), Yb) for s, Zb, Yb in self.blocks()), self.weights,
                                   self.r, self.d)
        elif self.in_memory:
            A, ZtY = self.gram().copy(), self.back(self.Z, self.Y)
        else:
            A, ZtY = self.problem.gram()
            A = np.array(A, dtype=np.float64)
            ZtY = np.asarray(ZtY, dtype=np.float64)
        ZtY = ZtY @ self.Q  # targets in M's eigenbasis
        n = self.n
        if self.identity:
            A[np.diag_indices_from(A)] += n * self.lam
            return solve_psd(A, ZtY)
        sig, E = np.linalg.eigh(A)
        sig = np.maximum(sig, 0.0)
        B = E.T @ ZtY  # (r, k)
        V = np.empty_like(B)
        for j, sj in enumerate(self.sqrt_s):
            V[:, j] = sj * B[:, j] / (sj * sj * sig + n * self.lam)
        return E @ V
