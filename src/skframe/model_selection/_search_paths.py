"""The path functions of :class:`~skframe.model_selection.KernelSearchCV`: which one shortcuts an estimator's
λ grid, and the generic one that fits once per fold and ``lam`` as ``GridSearchCV`` does."""

from __future__ import annotations

import time

import numpy as np
from sklearn.base import clone

from skframe.contract.model_tags import model_tags
from skframe.model_selection._paths_base import PathScores, fold_rows
from skframe.model_selection._square_path import square_loss_path

try:  # the warm-started paths of the iterative losses and of the structured models
    from skframe.model_selection import _paths as _other_paths
except ImportError:  # pragma: no cover - the module ships with the package
    _other_paths = None

__all__ = ["generic_path", "path_function"]


# ----------------------------------------------------------------------------- path functions
def generic_path(estimator, X, y, folds, lams, scorer, *, error_score=np.nan, sample_weight=None):
    """One fit per fold and ``lam``: ``clone(estimator).set_params(lam=lam).fit(X[train], y[train])``.

    The computation of scikit-learn's ``GridSearchCV``, for estimators and options no shortcut
    covers. A ``lam`` of None leaves the estimator's own. With ``error_score="raise"`` the first
    failure is raised; otherwise it is recorded in ``failed`` and ``errors``. With ``sample_weight``
    (n,), each fold's model is fitted with its training rows' weights and scored with its test rows'
    weights, as ``GridSearchCV`` does when the weights are routed to the fit and the scorer.

    Returns
    -------
    PathScores
    """
    out = PathScores.empty(len(folds), len(lams))
    out.info["shortcut"] = "none: one fit per fold and lam"
    for k, (train, test) in enumerate(folds):
        X_tr, y_tr = fold_rows(X, train), None if y is None else fold_rows(y, train)
        X_te, y_te = fold_rows(X, test), None if y is None else fold_rows(y, test)
        fit_kw = {} if sample_weight is None else {"sample_weight": sample_weight[train]}
        score_kw = {} if sample_weight is None else {"sample_weight": sample_weight[test]}
        for j, lam in enumerate(lams):
            model = clone(estimator)
            if lam is not None:
                model.set_params(lam=lam)
            t0 = time.perf_counter()
            stage = "fit"
            try:
                model.fit(X_tr, y_tr, **fit_kw)
                t1 = time.perf_counter()
                out.fit_times[k, j] = t1 - t0
                stage = "score"
                out.test_scores[k, j] = float(scorer(model, X_te, y_te, **score_kw))
                out.score_times[k, j] = time.perf_counter() - t1
            except Exception as exc:
                if isinstance(error_score, str) and error_score == "raise":
                    raise
                out.failed[k, j] = True
                if stage == "fit":
                    out.fit_times[k, j] = time.perf_counter() - t0
                out.errors.append(f"fold {k}, lam={lam!r} ({stage}): {type(exc).__name__}: {exc}")
    return out


def path_function(estimator):
    """The path function that shortcuts ``estimator``'s λ grid, with its name, or ``(None, "generic")``: the one
    its :class:`~skframe.contract.model_tags.ModelTags` ``lam_path`` names."""
    lam_path = model_tags(estimator).lam_path
    if lam_path == "square":
        return square_loss_path, "square_loss_path"
    func = None if lam_path is None or _other_paths is None else getattr(_other_paths, f"{lam_path}_path", None)
    return (None, "generic") if func is None else (func, f"{lam_path}_path")
