"""The held-out scores for every λ of one fold's eigen-system (:class:`~skframe.models._square_cv.FoldSystem`).

The definitions (features ``Z``, the eigendecomposition ``Z^T Z = Q diag(s) Q^T``, ``c = Q^T Z^T Y_c`` and the
held-out sums ``G``, ``h``, ``q``) are those of :mod:`skframe.model_selection._square_path`.
"""

from __future__ import annotations

import numpy as np

from skframe.model_selection._paths_base import HeldOutPredictions, r2_from_errors
from skframe.models._square_cv import FoldSystem  # the same eigen-system as lam="auto" of the square loss

__all__ = ["FoldSystem", "fold_system_scores"]


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
