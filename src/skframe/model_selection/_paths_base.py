"""The result of a regularisation path scored by cross-validation.

A *path function* scores one group of a parameter grid (every parameter fixed except
``lam``) on every fold and every ``lam`` of the group::

    path(estimator, X, y, folds, lams, scorer) -> PathScores

``estimator`` carries the group's parameters (unfitted), ``folds`` is a list of
``(train, test)`` index arrays, ``lams`` a sequence of positive regularisation
parameters and ``scorer`` a scikit-learn scorer ``scorer(fitted, X_test, y_test)``.
A path function that cannot shortcut an option (an unsupported scorer, an estimator
option it does not know) raises ``NotImplementedError`` *before* doing any work;
the caller then fits every fold and ``lam`` from scratch.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["PathScores"]


@dataclass
class PathScores:
    """Scores of one grid group over folds × ``lam`` values.

    Parameters
    ----------
    test_scores : ndarray of shape (n_folds, n_lams)
        Held-out score of each fold (row) and ``lam`` (column); the error score
        (NaN by default) where the point failed.
    fit_times : ndarray of shape (n_folds, n_lams)
        Seconds spent fitting, per point. Shared work (features, sums, one
        eigendecomposition per fold) is divided evenly among the ``lam`` values of
        the fold, so that the sum over a row is the fold's fitting time.
    score_times : ndarray of shape (n_folds, n_lams)
        Seconds spent scoring, per point (shared work divided the same way).
    failed : ndarray of bool, shape (n_folds, n_lams)
        Whether the point failed (its score is then meaningless).
    errors : list of str
        One message per failure, ``"fold k, lam=...: <exception>"``.
    info : dict
        Free-form facts about the path (the shortcut used, the duality gaps, ...).
    """

    test_scores: np.ndarray
    fit_times: np.ndarray
    score_times: np.ndarray
    failed: np.ndarray
    errors: list = field(default_factory=list)
    info: dict = field(default_factory=dict)

    def __post_init__(self):
        self.test_scores = np.asarray(self.test_scores, dtype=float)
        shape = self.test_scores.shape
        if self.test_scores.ndim != 2:
            raise ValueError(f"test_scores must be (n_folds, n_lams), got shape {shape}")
        self.fit_times = np.broadcast_to(np.asarray(self.fit_times, dtype=float), shape).copy()
        self.score_times = np.broadcast_to(np.asarray(self.score_times, dtype=float), shape).copy()
        self.failed = np.broadcast_to(np.asarray(self.failed, dtype=bool), shape).copy()
        self.errors = list(self.errors)
        self.info = dict(self.info)

    @classmethod
    def empty(cls, n_folds, n_lams):
        """A path with every point not yet scored (NaN scores, zero times, not failed).

        Parameters
        ----------
        n_folds, n_lams : int
            The shape of the arrays.

        Returns
        -------
        PathScores
        """
        shape = (int(n_folds), int(n_lams))
        return cls(np.full(shape, np.nan), np.zeros(shape), np.zeros(shape), np.zeros(shape, dtype=bool))

    @property
    def n_folds(self):
        """Number of folds (rows)."""
        return self.test_scores.shape[0]

    @property
    def n_lams(self):
        """Number of ``lam`` values (columns)."""
        return self.test_scores.shape[1]
