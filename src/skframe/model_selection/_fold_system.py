"""The eigen-system of one fold of the square-loss λ path, and its held-out scores for every λ.

The definitions (features ``Z``, the eigendecomposition ``Z^T Z = Q diag(s) Q^T``, ``c = Q^T Z^T Y_c`` and the
held-out sums ``G``, ``h``, ``q``) are those of :mod:`skframe.model_selection._square_path`.
"""

from __future__ import annotations

import numpy as np

from skframe.core.linalg import default_rtol
from skframe.model_selection._paths_base import HeldOutPredictions, r2_from_errors

__all__ = ["FoldSystem", "fold_system_scores"]


class FoldSystem:
    """The eigen-system of one fold: everything the held-out scores of every ``lam`` need.

    Attributes
    ----------
    s : ndarray (r,)
        Eigenvalues of ``Z^T Z`` (or of K for the exact model).
    c : ndarray (r, d)
        ``Q^T Z^T Y_c``.
    n_train : int
    offset : ndarray (d,)
        The intercept (training target mean, or zeros).
    G, h, q : ndarrays or None
        Held-out sums ``T^T T``, ``T^T Y_h'`` and ``||Y_h'||^2`` per output.
    T : ndarray (n_h, r) or None
        Held-out features in the eigenbasis, for scorers that need predictions.
    """

    def __init__(self, s, c, n_train, offset, *, G=None, h=None, q=None, T=None):
        self.s, self.c, self.n_train, self.offset = s, c, int(n_train), offset
        self.G, self.h, self.q, self.T = G, h, q, T

    def weights(self, lam):
        """``u = c / (s + n lam)`` in the eigenbasis; directions where that system is not positive are dropped
        (the pseudo-inverse a failed factorisation falls back to)."""
        den = self.s + self.n_train * float(lam)
        keep = den > default_rtol(den.size) * max(float(den.max(initial=0.0)), 0.0)
        inv = np.zeros_like(den)
        inv[keep] = 1.0 / den[keep]
        return self.c * inv[:, None]

    def errors(self, lam):
        """Held-out sums of squared errors per output, from the sums."""
        u = self.weights(lam)
        sse = self.q - 2.0 * np.einsum("ij,ij->j", u, self.h) + np.einsum("ij,ij->j", u, self.G @ u)
        return np.maximum(sse, 0.0)

    def predictions(self, lam):
        """Held-out predictions ``T u + ybar`` (n_h, d)."""
        return self.T @ self.weights(lam) + self.offset


def fold_system_scores(system, lams, kind, scorer, X_test, Y_test, one_d):
    """Held-out scores of one fold for every ``lam`` (see the module's definitions)."""
    scores = np.empty(len(lams))
    if kind in ("r2", "neg_mse"):
        sst = ((Y_test - Y_test.mean(axis=0)) ** 2).sum(axis=0)
        for j, lam in enumerate(lams):
            sse = system.errors(lam)
            scores[j] = r2_from_errors(sse, sst) if kind == "r2" else -float(sse.sum()) / sse.size / Y_test.shape[0]
        return scores
    y_true = Y_test[:, 0] if one_d else Y_test
    for j, lam in enumerate(lams):
        F = system.predictions(lam)
        scores[j] = float(scorer(HeldOutPredictions(X_test, F[:, 0] if one_d else F), X_test, y_true))
    return scores
