"""Mini-batch Adam: any Lipschitz loss, data streamed from disk, neural models."""

from __future__ import annotations

import math

import numpy as np

from skframe.plugin.api import Interval, InvalidInputError, Options
from skframe_solvers._base import COUNT, INIT, INIT_HINT, POSITIVE, BaseSolver
from skframe_solvers._problem import FeatureMapProblem

__all__ = ["AdamSolver"]


class AdamSolver(BaseSolver):
    """Mini-batch stochastic sub-gradient descent with Adam steps, for any Lipschitz loss.

    Each epoch takes Adam steps on mini-batch sub-gradients ``(1/b) Z_b^T G_b C^T + lam V``
    and then evaluates the full objective. In memory the rows are shuffled every epoch with
    the ``rng`` given to ``solve`` (same seed, same weights); a streamed problem is read in
    consecutive blocks of ``batch_size`` rows. The iterate with the best full objective (or,
    with early stopping, the best validation loss) is returned, as is usual for sub-gradient
    methods.

    Adam does not certify its result by itself: when the loss declares a ``dual``, the
    result's ``info`` and ``stop_reason`` report the duality gap at the returned point (dual
    point built from its gradient, see :func:`skframe_solvers._duality.dual_from_primal`), an
    upper bound on how far the objective is from the optimum.

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
        Hold out ``validation_fraction`` of the rows and monitor their mean loss (in-memory
        problems only).
    validation_fraction : float, default=0.1
    init : {"ridge", "zeros"}, default="ridge"
        Start from the square-loss closed form (same M and lam) or from zero; an ``init``
        array given to ``solve`` (warm start) takes precedence.
    beta1, beta2, eps : float
        Adam's moment decays and denominator guard.
    """

    name = "adam"
    _parameter_constraints = {
        "epochs": COUNT,
        "batch_size": COUNT,
        "learning_rate": POSITIVE,
        "schedule": [Options("invsqrt", "linear", "constant")],
        "tol": [Interval("real", 0, None), None],
        "n_iter_no_change": COUNT,
        "early_stopping": ["boolean"],
        "validation_fraction": [Interval("real", 0, 1, closed="neither")],
        "init": INIT,
        "beta1": [Interval("real", 0, 1, closed="left")],
        "beta2": [Interval("real", 0, 1, closed="left")],
        "eps": POSITIVE,
    }
    _parameter_hints = {"epochs": "epochs must be a positive integer", "batch_size": "e.g. batch_size=256",
                        "learning_rate": "e.g. learning_rate=0.01", "validation_fraction": "e.g. 0.1",
                        "init": INIT_HINT}

    def __init__(self, epochs=100, batch_size=256, learning_rate=0.01, schedule="invsqrt", tol=1e-6,
                 n_iter_no_change=10, early_stopping=False, validation_fraction=0.1, init="ridge",
                 beta1=0.9, beta2=0.999, eps=1e-8):
        self._set_params(locals())

    def _lr(self, epoch):
        if self.schedule == "invsqrt":
            return self.learning_rate / math.sqrt(1.0 + epoch)
        if self.schedule == "linear":
            return self.learning_rate * (1.0 - epoch / self.epochs)
        return self.learning_rate

    def _split(self, fp, rng):
        """Training problem and validation rows for early stopping (in memory only)."""
        if not fp.in_memory:
            raise InvalidInputError(
                "early stopping holds out validation rows, which needs the features in memory; this problem "
                "streams its features: disable early_stopping"
            )
        n = fp.n
        n_val = int(math.ceil(self.validation_fraction * n))
        if n_val < 1 or n - n_val < 1:
            raise InvalidInputError(
                f"early stopping with validation_fraction={self.validation_fraction} leaves no training or "
                f"validation rows out of n={n}; disable early stopping or use more data"
            )
        perm = rng.permutation(n)
        val, tr = np.sort(perm[:n_val]), np.sort(perm[n_val:])
        M = None if fp.identity else fp.M
        train = FeatureMapProblem(fp.Z[tr], fp.loss, fp.lam, M, Y=fp.Y[tr])
        if fp.weights is not None:  # the training rows keep their weights (rescaled to mean 1)
            train.weights = fp.weights[tr] * (len(tr) / max(float(fp.weights[tr].sum()), 1e-300))
        return train, fp.Z[val], fp.Y[val]

    def _batches(self, fp, rng, b):
        if fp.in_memory:
            order = rng.permutation(fp.n)
            for start in range(0, fp.n, b):
                rows = order[start:start + b]
                yield fp.Z[rows], fp.Y[rows], None if fp.weights is None else fp.weights[rows]
        else:
            fp.chunk_rows = b
            for start, Zb, Yb in fp.blocks():
                w = fp.row_weights(start, start + Zb.shape[0])
                yield Zb, Yb, None if w is None else w[:, 0]
            fp.chunk_rows = None

    def solve(self, problem, loss, lam, *, M=None, rng=None, init=None, progress=None):
        """Run the epochs; ``progress(1)`` is called after each epoch."""
        rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        full = self._problem(problem, loss, lam, M)
        if self.early_stopping:
            fp, val_Z, val_Y = self._split(full, rng)
        else:
            fp = full
        V = self._start(fp, init, self.init)
        m1, m2 = np.zeros_like(V), np.zeros_like(V)
        b = min(self.batch_size, fp.n)
        t = 0

        def monitored(V):
            if self.early_stopping:
                return float(np.mean(loss.value(fp.predict(V, val_Z), val_Y)))
            return fp.objective(V)

        history = [fp.objective(V)]
        best = monitored(V) if self.early_stopping else history[0]
        best_V = V.copy()
        stall = 0
        reason = f"reached the maximum number of epochs ({self.epochs})"
        epoch = 0
        for epoch in range(self.epochs):
            lr = self._lr(epoch)
            for Zb, Yb, wb in self._batches(fp, rng, b):
                _, g = fp.batch_value_and_grad(V, Zb, Yb, wb)
                t += 1
                m1 *= self.beta1
                m1 += (1 - self.beta1) * g
                m2 *= self.beta2
                m2 += (1 - self.beta2) * g * g
                V -= lr * (m1 / (1 - self.beta1**t)) / (np.sqrt(m2 / (1 - self.beta2**t)) + self.eps)
            history.append(fp.objective(V))
            if progress is not None:
                progress(1)
            score = monitored(V) if self.early_stopping else history[-1]
            if not np.isfinite(score):
                reason = f"diverged at epoch {epoch + 1} (non-finite objective); lower learning_rate"
                break
            threshold = 0.0 if self.tol is None else self.tol * abs(best)
            stall = 0 if score < best - threshold else stall + 1
            if score < best:
                best, best_V = score, V.copy()
            if self.tol is not None and stall >= self.n_iter_no_change:
                what = "validation loss" if self.early_stopping else "training objective"
                reason = (f"{'early stopping' if self.early_stopping else 'converged'}: the {what} did not improve "
                          f"by more than tol={self.tol} (relative) for {self.n_iter_no_change} epochs")
                break
        result = self._result(full, best_V, history, reason, epoch + 1, {"best_score": float(best)})
        gap = result.info.get("relative_gap")
        if gap is not None:
            result.stop_reason = f"{reason}; relative duality gap {gap:.2e} (distance to the optimum bound)"
        return result
