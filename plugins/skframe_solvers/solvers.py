"""Built-in solvers of the sketched feature-map problem (seed 002 eq. 3 and Prop. 1).

Every solver minimises, over ``W`` of shape (r, d),

    J(W) = (1/n) sum_i l(z_i^T W M, y_i) + (lam/2) tr(W M W^T)

where ``Z`` (n x r) are the sketched features (seed 002 Prop. 1) and M the output
matrix of a decomposable kernel ``k M`` (identity when None). The nd x rd Kronecker
feature map of ``k M`` is never built. With ``M = Q S Q^T`` (rank k) the solvers work on
``V = W Q S^{1/2}`` (r x k), a change of variables that turns the problem into

    J(V) = (1/n) sum_i l(z_i^T V C, y_i) + (lam/2) ||V||_F^2,    C = S^{1/2} Q^T,

(prediction ``Z V C = Z W M``, penalty ``||V||^2 = tr(W M W^T)``) which is well conditioned
whatever M; ``W = V S^{-1/2} Q^T`` is returned. For ``M = I`` nothing changes: ``V = W``.

After ``solve`` a solver exposes ``history_`` (objective after each iteration or epoch),
``stop_reason_`` (one sentence) and ``n_iter_``.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.optimize as sopt

from skframe.exceptions import InvalidInputError, InvalidParameterError
from skframe.linalg import eigh_truncated, solve_psd
from skframe.protocols import Solver
from skframe.validation import check_scalar

__all__ = ["FeatureMapProblem", "ClosedFormSolver", "LBFGSSolver", "AdamSolver", "is_square_loss"]


def is_square_loss(loss):
    """True when ``loss`` is the square loss ``1/2 ||f - y||^2`` (registry name ``"square"``)."""
    return getattr(loss, "name", None) == "square" or getattr(loss, "_skframe_name", None) == "square"


class FeatureMapProblem:
    """The feature-map problem in the well-conditioned variables ``V`` (see module docstring).

    Parameters
    ----------
    Z : ndarray of shape (n, r)
    Y : ndarray of shape (n, d)
    loss : Loss
    lam : float
    M : ndarray of shape (d, d) or None
    """

    def __init__(self, Z, Y, loss, lam, M=None):
        Z = np.ascontiguousarray(Z, dtype=np.float64)
        Y = np.asarray(Y, dtype=np.float64)
        if Y.ndim == 1:
            Y = Y[:, None]
        if Z.ndim != 2 or Z.shape[0] != Y.shape[0]:
            raise InvalidInputError(f"features Z {Z.shape} and targets Y {Y.shape} must have the same number of rows")
        self.Z, self.Y, self.loss = Z, np.ascontiguousarray(Y), loss
        self.lam = float(lam)
        d = Y.shape[1]
        if M is None:
            self.identity = True
            self.C = np.eye(d)
            self.sqrt_s = np.ones(d)
            self.Q = np.eye(d)
        else:
            M = np.asarray(M, dtype=np.float64)
            if M.shape != (d, d):
                raise InvalidParameterError(f"output matrix M has shape {M.shape}; expected ({d}, {d})")
            s, Q = eigh_truncated(M)
            self.identity = False
            self.sqrt_s = np.sqrt(s)
            self.Q = Q
            self.C = self.sqrt_s[:, None] * Q.T  # (k, d)

    @property
    def shape(self):
        """Shape (r, k) of the variable V."""
        return (self.Z.shape[1], self.C.shape[0])

    def to_W(self, V):
        """``W = V S^{-1/2} Q^T`` (r x d)."""
        if self.identity:
            return V.copy()
        return (V / self.sqrt_s) @ self.Q.T

    def predict(self, V, rows=None):
        Z = self.Z if rows is None else self.Z[rows]
        return (Z @ V) @ self.C

    def objective(self, V, rows=None):
        """``J(V)`` on all rows (or the given rows), penalty included."""
        Y = self.Y if rows is None else self.Y[rows]
        F = self.predict(V, rows)
        return float(np.mean(self.loss.value(F, Y))) + 0.5 * self.lam * float(np.sum(V * V))

    def mean_loss(self, V, rows=None):
        """Data term only (used as validation score)."""
        Y = self.Y if rows is None else self.Y[rows]
        return float(np.mean(self.loss.value(self.predict(V, rows), Y)))

    def value_and_grad(self, V, rows=None):
        """``J`` and its (sub-)gradient ``(1/b) Z_b^T G C^T + lam V`` on a batch of rows."""
        Z = self.Z if rows is None else self.Z[rows]
        Y = self.Y if rows is None else self.Y[rows]
        F = (Z @ V) @ self.C
        val = float(np.mean(self.loss.value(F, Y))) + 0.5 * self.lam * float(np.sum(V * V))
        G = self.loss.gradient(F, Y)
        grad = (Z.T @ (G @ self.C.T)) / Z.shape[0] + self.lam * V
        return val, grad

    def ridge_V(self):
        """Closed-form minimiser of the square-loss problem in V (one r x r eigendecomposition)."""
        Z, n = self.Z, self.Z.shape[0]
        Yt = self.Y @ self.Q  # (n, k): targets in M's eigenbasis
        ZtY = Z.T @ Yt
        if self.identity:
            A = Z.T @ Z
            A[np.diag_indices_from(A)] += n * self.lam
            return solve_psd(A, ZtY)
        sig, E = np.linalg.eigh(Z.T @ Z)
        sig = np.maximum(sig, 0.0)
        B = E.T @ ZtY  # (r, k)
        V = np.empty_like(B)
        for j, sj in enumerate(self.sqrt_s):
            V[:, j] = sj * B[:, j] / (sj * sj * sig + n * self.lam)
        return E @ V


class _BaseSolver(Solver):
    name = "solver"

    def _reset(self):
        self.history_ = []
        self.stop_reason_ = None
        self.n_iter_ = 0

    @property
    def params(self):
        return {}

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{type(self).__name__}({args})"

    def _check_lam(self, lam):
        return check_scalar(lam, "lam", low=0, low_inclusive=False, fix="lam must be > 0, e.g. 1e-3")


class ClosedFormSolver(_BaseSolver):
    """Exact minimiser for the square loss ``1/2 ||f - y||^2`` (r x r linear system).

    With ``M = I``: ``W = (Z^T Z + n lam I)^{-1} Z^T Y`` (Cholesky, eigen fallback), exactly
    :class:`skframe.models.SketchedKernelRidge`. With a general M the system decouples in
    M's eigenbasis: ``(s_j Z^T Z + n lam I) v_j = sqrt(s_j) Z^T Y q_j``.
    Any other loss raises :class:`skframe.exceptions.InvalidParameterError`.
    """

    name = "closed-form"

    def solve(self, Z, Y, loss, lam, *, M=None, rng=None, V0=None):
        self._reset()
        if not is_square_loss(loss):
            raise InvalidParameterError(
                f"solver 'closed-form' only handles the square loss, not {getattr(loss, 'name', loss)!r}; "
                "use solver='lbfgs' (smooth losses) or solver='adam'"
            )
        prob = FeatureMapProblem(Z, Y, loss, self._check_lam(lam), M)
        V = prob.ridge_V()
        self.history_ = [prob.objective(V)]
        self.stop_reason_ = "closed form (exact minimiser)"
        self.n_iter_ = 1
        return prob.to_W(V)


class LBFGSSolver(_BaseSolver):
    """L-BFGS-B (scipy) on the feature-map problem, for smooth losses.

    Parameters
    ----------
    max_iter : int, default=1000
    tol : float, default=1e-8
        ``gtol`` and ``ftol`` of scipy's L-BFGS-B (stop when the relative decrease of the
        objective or the largest gradient entry falls below it).
    init : {"ridge", "zeros"}, default="ridge"
        Start from the square-loss closed form (same M and lam) or from zero.
    """

    name = "lbfgs"

    def __init__(self, max_iter=1000, tol=1e-8, init="ridge"):
        self.max_iter = check_scalar(max_iter, "max_iter", kind=int, low=1)
        self.tol = check_scalar(tol, "tol", low=0)
        if init not in ("ridge", "zeros"):
            raise InvalidParameterError(f"init={init!r}; use 'ridge' or 'zeros'")
        self.init = init

    @property
    def params(self):
        return {"max_iter": self.max_iter, "tol": self.tol, "init": self.init}

    def solve(self, Z, Y, loss, lam, *, M=None, rng=None, progress=None):
        """Minimise the feature-map objective; ``progress(1)`` is called after each iteration."""
        self._reset()
        if not getattr(loss, "smooth", False):
            raise InvalidParameterError(
                f"solver 'lbfgs' needs a smooth loss; {getattr(loss, 'name', type(loss).__name__)!r} is not "
                "differentiable everywhere; use solver='adam'"
            )
        prob = FeatureMapProblem(Z, Y, loss, self._check_lam(lam), M)
        shape = prob.shape
        V0 = prob.ridge_V() if self.init == "ridge" else np.zeros(shape)

        last = {}

        def fun(v):
            val, g = prob.value_and_grad(v.reshape(shape))
            last["f"] = val
            return val, g.ravel()

        hist = [prob.objective(V0)]

        def on_iteration(xk):
            hist.append(last.get("f", np.nan))
            if progress is not None:
                progress(1)

        res = sopt.minimize(
            fun,
            V0.ravel(),
            jac=True,
            method="L-BFGS-B",
            callback=on_iteration,
            options={"maxiter": self.max_iter, "gtol": self.tol, "ftol": self.tol},
        )
        V = res.x.reshape(shape)
        self.history_ = hist
        self.n_iter_ = int(res.nit)
        msg = res.message.decode() if isinstance(res.message, bytes) else str(res.message)
        self.stop_reason_ = ("converged: " if res.success else "not converged: ") + msg
        return prob.to_W(V)


class AdamSolver(_BaseSolver):
    """Mini-batch stochastic sub-gradient descent with Adam steps, for any Lipschitz loss.

    Each epoch shuffles the training rows (with the ``rng`` given to ``solve``: same seed,
    same weights), takes Adam steps on mini-batch sub-gradients
    ``(1/b) Z_b^T G_b C^T + lam V`` and then evaluates the full objective. The iterate with
    the best full objective (or, with early stopping, the best validation loss) is returned,
    as is usual for sub-gradient methods.

    Parameters
    ----------
    epochs : int, default=100
        Maximum number of passes over the data.
    batch_size : int, default=256
        Rows per step (capped at the number of training rows).
    learning_rate : float, default=0.01
        Initial Adam step.
    schedule : {"invsqrt", "linear", "constant"}, default="invsqrt"
        Step at epoch e: ``lr / sqrt(1 + e)``, ``lr (1 - e / epochs)`` or ``lr``.
    tol : float or None, default=1e-6
        Stop when the monitored value has not decreased by more than ``tol * |best|`` for
        ``n_iter_no_change`` epochs; None runs all epochs.
    n_iter_no_change : int, default=10
    early_stopping : bool, default=False
        Hold out ``validation_fraction`` of the rows and monitor their mean loss.
    validation_fraction : float, default=0.1
    init : {"ridge", "zeros"}, default="ridge"
        Start from the square-loss closed form (same M and lam) or from zero.
    beta1, beta2, eps : float
        Adam's moment decays and denominator guard.
    """

    name = "adam"

    def __init__(
        self,
        epochs=100,
        batch_size=256,
        learning_rate=0.01,
        schedule="invsqrt",
        tol=1e-6,
        n_iter_no_change=10,
        early_stopping=False,
        validation_fraction=0.1,
        init="ridge",
        beta1=0.9,
        beta2=0.999,
        eps=1e-8,
    ):
        self.epochs = check_scalar(epochs, "epochs", kind=int, low=1, fix="epochs must be a positive integer")
        self.batch_size = check_scalar(batch_size, "batch_size", kind=int, low=1, fix="batch_size must be a positive integer")
        self.learning_rate = check_scalar(
            learning_rate, "learning_rate", low=0, low_inclusive=False, fix="learning_rate must be > 0, e.g. 0.01"
        )
        if schedule not in ("invsqrt", "linear", "constant"):
            raise InvalidParameterError(f"schedule={schedule!r}; use 'invsqrt', 'linear' or 'constant'")
        self.schedule = schedule
        self.tol = None if tol is None else check_scalar(tol, "tol", low=0)
        self.n_iter_no_change = check_scalar(n_iter_no_change, "n_iter_no_change", kind=int, low=1)
        self.early_stopping = bool(early_stopping)
        self.validation_fraction = check_scalar(
            validation_fraction, "validation_fraction", low=0, high=1, low_inclusive=False, high_inclusive=False,
            fix="validation_fraction must lie in (0, 1), e.g. 0.1",
        )
        if init not in ("ridge", "zeros"):
            raise InvalidParameterError(f"init={init!r}; use 'ridge' or 'zeros'")
        self.init = init
        self.beta1 = check_scalar(beta1, "beta1", low=0, high=1, high_inclusive=False)
        self.beta2 = check_scalar(beta2, "beta2", low=0, high=1, high_inclusive=False)
        self.eps = check_scalar(eps, "eps", low=0, low_inclusive=False)

    @property
    def params(self):
        keys = ("epochs", "batch_size", "learning_rate", "schedule", "tol", "n_iter_no_change", "early_stopping",
                "validation_fraction", "init", "beta1", "beta2", "eps")
        return {k: getattr(self, k) for k in keys}

    def _lr(self, epoch):
        if self.schedule == "invsqrt":
            return self.learning_rate / math.sqrt(1.0 + epoch)
        if self.schedule == "linear":
            return self.learning_rate * (1.0 - epoch / self.epochs)
        return self.learning_rate

    def solve(self, Z, Y, loss, lam, *, M=None, rng=None, progress=None):
        """Run the epochs; ``progress(1)`` is called after each epoch."""
        self._reset()
        lam = self._check_lam(lam)
        rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        n = np.asarray(Z).shape[0]
        if self.early_stopping:
            n_val = int(math.ceil(self.validation_fraction * n))
            if n_val < 1 or n - n_val < 1:
                raise InvalidInputError(
                    f"early stopping with validation_fraction={self.validation_fraction} leaves no training or "
                    f"validation rows out of n={n}; disable early stopping or use more data"
                )
            perm = rng.permutation(n)
            val_rows, train_rows = np.sort(perm[:n_val]), np.sort(perm[n_val:])
            full = FeatureMapProblem(Z, Y, loss, lam, M)
            prob = FeatureMapProblem(full.Z[train_rows], full.Y[train_rows], loss, lam, M)
            val_Z, val_Y = full.Z[val_rows], full.Y[val_rows]
        else:
            prob = FeatureMapProblem(Z, Y, loss, lam, M)
        n_tr = prob.Z.shape[0]
        V = prob.ridge_V() if self.init == "ridge" else np.zeros(prob.shape)
        m1 = np.zeros_like(V)
        m2 = np.zeros_like(V)
        b = min(self.batch_size, n_tr)
        t = 0

        def monitored(V):
            if self.early_stopping:
                F = (val_Z @ V) @ prob.C
                return float(np.mean(loss.value(F, val_Y)))
            return prob.objective(V)

        best = monitored(V)
        best_V = V.copy()
        history = [prob.objective(V)]
        stall = 0
        reason = f"reached the maximum number of epochs ({self.epochs})"
        epoch = 0
        for epoch in range(self.epochs):
            lr = self._lr(epoch)
            order = rng.permutation(n_tr)
            for start in range(0, n_tr, b):
                rows = order[start : start + b]
                F = (prob.Z[rows] @ V) @ prob.C
                G = loss.gradient(F, prob.Y[rows])
                g = (prob.Z[rows].T @ (G @ prob.C.T)) / rows.shape[0] + lam * V
                t += 1
                m1 *= self.beta1
                m1 += (1 - self.beta1) * g
                m2 *= self.beta2
                m2 += (1 - self.beta2) * g * g
                mhat = m1 / (1 - self.beta1**t)
                vhat = m2 / (1 - self.beta2**t)
                V -= lr * mhat / (np.sqrt(vhat) + self.eps)
            history.append(prob.objective(V))
            if progress is not None:
                progress(1)
            score = monitored(V) if self.early_stopping else history[-1]
            if not np.isfinite(score):
                reason = f"diverged at epoch {epoch + 1} (non-finite objective); lower learning_rate"
                break
            threshold = 0.0 if self.tol is None else self.tol * abs(best)
            if score < best - threshold:
                stall = 0
            else:
                stall += 1
            if score < best:
                best, best_V = score, V.copy()
            if self.tol is not None and stall >= self.n_iter_no_change:
                what = "validation loss" if self.early_stopping else "training objective"
                reason = (
                    f"{'early stopping' if self.early_stopping else 'converged'}: the {what} did not improve by more than "
                    f"tol={self.tol} (relative) for {self.n_iter_no_change} epochs"
                )
                break
        self.history_ = history
        self.n_iter_ = epoch + 1
        self.stop_reason_ = reason
        self.best_score_ = best
        return prob.to_W(best_V)
