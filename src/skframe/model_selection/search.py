"""Cross-validated choice of ``lam`` and kernel parameters: :class:`KernelSearchCV`.

The search scores scikit-learn's grid of candidates on scikit-learn's splits, as
``GridSearchCV`` does, but in *blocks*: candidates that differ only in ``lam`` form one
block, scored by a *path function* ``path(estimator, X, y, folds, lams, scorer) ->
PathScores`` (:mod:`skframe.model_selection._paths_base`) that reuses the work shared by
the λ values of a fold:

* square loss (:class:`~skframe.models.SketchedKernelRidge`): one eigendecomposition per fold
  and held-out scores from sums (:mod:`skframe.model_selection._square_path`, where the
  formulas are stated);
* sketched kernel machines and joint quantile regression: a warm-started λ path per fold on
  features computed once, each point solved to its certified duality gap;
* structured models (:class:`~skframe.models.OutputKernelRegressor`): the λ path from one
  eigendecomposition per fold;
* anything else, or a path function that cannot shortcut an option: one fit per fold and λ,
  ``clone(estimator).set_params(lam=lam).fit(X[train], y[train])``, exactly as ``GridSearchCV``.
"""

from __future__ import annotations

import inspect
import sys
import time
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone, is_classifier
from sklearn.exceptions import FitFailedWarning
from sklearn.metrics import check_scoring
from sklearn.model_selection import check_cv
from sklearn.utils import get_tags as sk_get_tags
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from skframe.contract.collections import is_collection, n_items
from skframe.exceptions import InvalidParameterError, NotFittedError, SkframeError
from skframe.model_selection._search_grid import (
    default_param_grid,
    expand_grid,
    group_candidates,
    median_gamma,
    to_estimator_params,
)
from skframe.model_selection._search_paths import generic_path, path_function
from skframe.model_selection._search_results import cv_results
from skframe.model_selection._square_path import square_loss_path
from skframe.models._base import store_params
from skframe.models._data import check_sample_weight
from skframe.models._folds import check_cv_order, search_splitter

__all__ = ["KernelSearchCV", "default_param_grid", "generic_path", "path_function"]

SKETCH_SHARING = ("auto", "fold", "shared")
#: ``sketch_sharing="auto"`` shares one sketch from this many rows on: there a sketch per fold costs one more
#: pass over the data per fold and kernel value (at n = 1e5, m = 500: 17.9 fits against 4.95 for 500 grid
#: points x 5 folds, benchmarks/out/tuning.json), below it the search repeats GridSearchCV's numbers
SHARED_FROM_ROWS = 20_000


# ----------------------------------------------------------------------------- the estimator
def _estimator_has(attr):
    def check(self):
        if hasattr(self, "best_estimator_"):
            return hasattr(self.best_estimator_, attr)
        return hasattr(self.estimator, attr)

    return check


def _delegated(method):
    """The method ``method(X)`` of :class:`KernelSearchCV`: that of ``best_estimator_``, which it calls once the
    search is refitted; present when the estimator has it."""

    def call(self, X):
        self._check_refitted(method)
        return getattr(self.best_estimator_, method)(X)

    call.__name__ = method
    call.__qualname__ = f"KernelSearchCV.{method}"
    call.__doc__ = f"``best_estimator_.{method}(X)``."
    return available_if(_estimator_has(method))(call)


class KernelSearchCV(MetaEstimatorMixin, BaseEstimator):
    """Cross-validated search over a grid of ``lam`` and kernel parameters, fast along ``lam``.

    The scikit-learn ``GridSearchCV`` of a skframe estimator: the same candidates, splits,
    scorers and ``cv_results_``, computed a block of λ values at a time (see
    :mod:`skframe.model_selection.search`). For the square loss with
    ``sketch_sharing="fold"`` (the default below :data:`SHARED_FROM_ROWS` rows) the scores equal
    ``GridSearchCV``'s to rounding (1e-8); the
    iterative losses are solved to their certified duality gap, so their scores equal
    ``GridSearchCV``'s within what that gap allows.

    Parameters
    ----------
    estimator : estimator
        A skframe estimator (ridge, kernel machines, joint quantile, structured) or any
        scikit-learn estimator (fitted once per fold and candidate).
    param_grid : dict, list of dict or None, default=None
        scikit-learn's grid, e.g. ``{"kernel_params": [{"gamma": 0.1}, {"gamma": 1.0}], "lam": [1e-6, 1e-3]}``.
        Kernel parameters may be named directly (``{"gamma": [0.1, 1.0], "lam": [...]}``): they are
        merged into the estimator's ``kernel_params`` and reported as ``param_gamma``. None takes
        :func:`default_param_grid` (``gamma`` around the median heuristic, ``lam`` from 1e-8 to 1e-2).
    cv : int, cross-validation splitter or iterable of (train, test), default=5
        A number of folds (None: 5) gives the default folds (:func:`skframe.models._folds.search_splitter`):
        the rows shuffled from ``random_state`` before the cut, stratified for a classifier
        (``StratifiedKFold(shuffle=True)``, else ``KFold(shuffle=True)``), or consecutive with
        ``cv_order="keep"``; ``search_info_["folds"]`` names them. A splitter or an iterable is used as given
        (``sklearn.model_selection.check_cv``).
    scoring : str, callable or None, default=None
        ``sklearn.metrics.check_scoring``: None uses the estimator's ``score`` (R^2 for regressors).
        One metric only.
    refit : bool, default=True
        Fit the best candidate on all the data (``best_estimator_``).
    n_jobs : int or None, default=None
        Folds of a block computed in parallel threads (BLAS releases the GIL); None is 1.
    error_score : "raise" or float, default=np.nan
        Score of a grid point whose fit fails (with a ``FitFailedWarning``); ``"raise"`` raises.
    sketch_sharing : {"auto", "fold", "shared"}, default="auto"
        ``"auto"``: ``"shared"`` from :data:`SHARED_FROM_ROWS` (20 000) rows on, where a sketch per fold
        would cost one more pass over the data per fold and kernel value, else ``"fold"``; the choice is
        ``search_info_["sketch_sharing"]``.
        ``"fold"``: each fold's sketch is drawn from its training rows as a fit on them would draw it
        (``GridSearchCV``'s numbers). ``"shared"``: one sketch drawn from all the rows given to ``fit``
        (the one the refit draws) serves every fold, so that for the square loss one pass over the
        data per kernel value scores every fold; each fold's model is then a sketched estimator on
        that shared sketch (valid, but a different estimator from a fit on the fold's rows alone).
        Models without a shared form (exact, structured, iterative losses) use ``"fold"``.
    progress : callable, optional
        ``progress(done, total)`` after each block, in grid points (candidates).
    verbose : int, default=0
        1 prints one line per block on stderr.
    random_state : int, RandomState or None, default=None
        Seed of the shuffled folds when ``cv`` is a number; None takes the estimator's ``random_state`` when it
        is an integer (else the folds are unseeded).
    cv_order : {"shuffle", "keep"}, default="shuffle"
        When ``cv`` is a number: ``"shuffle"`` (folds cut from the shuffled rows) or ``"keep"`` (consecutive
        folds in file order, as scikit-learn's ``KFold()``; for rows ordered in time).

    Attributes
    ----------
    cv_results_ : dict of arrays
        scikit-learn's keys: ``params``, ``param_<name>``, ``split<k>_test_score``,
        ``mean_test_score``, ``std_test_score``, ``rank_test_score``, ``mean_fit_time``,
        ``std_fit_time``, ``mean_score_time``, ``std_score_time``. Shared work (sums,
        eigendecompositions) is divided evenly among the λ values of a fold.
    best_index_ : int
    best_params_ : dict
    best_score_ : float
    best_estimator_ : estimator
        Only with ``refit=True``.
    refit_time_ : float
    n_splits_ : int
    scorer_ : callable
    search_info_ : dict
        ``blocks`` (per block: parameters, path function used, why it fell back, seconds,
        failures, the path's own facts), ``gamma_heuristic`` (the median heuristic's gamma when
        the default grid was used), ``sketch_sharing``, ``folds`` (the default folds' description, None for a
        given splitter), ``splitter``, ``n_candidates``, ``seconds``.

    Examples
    --------
    >>> import numpy as np
    >>> from skframe import SketchedKernelRidge
    >>> from skframe.model_selection import KernelSearchCV
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(120, 2)); y = np.sin(4 * X[:, 0])
    >>> search = KernelSearchCV(SketchedKernelRidge(sketch_size=30, random_state=0),
    ...                         {"gamma": [0.5, 5.0], "lam": [1e-6, 1e-2]}, cv=3).fit(X, y)
    >>> search.best_params_
    {'gamma': 5.0, 'lam': 1e-06}
    >>> search.search_info_["blocks"][0]["path"]
    'square_loss_path'
    """

    def __init__(self, estimator, param_grid=None, *, cv=5, scoring=None, refit=True, n_jobs=None,
                 error_score=np.nan, sketch_sharing="auto", progress=None, verbose=0, random_state=None,
                 cv_order="shuffle"):
        store_params(self, locals())

    # ------------------------------------------------------------------ checks
    def _check_params(self):
        if self.sketch_sharing not in SKETCH_SHARING:
            raise InvalidParameterError(f"sketch_sharing={self.sketch_sharing!r}; use 'fold' (each fold draws its "
                                        "own sketch, as GridSearchCV), 'shared' (one sketch for all folds) or "
                                        f"'auto' (shared from {SHARED_FROM_ROWS} rows on)")
        if not ((isinstance(self.error_score, str) and self.error_score == "raise")
                or (isinstance(self.error_score, Real) and not isinstance(self.error_score, bool))):
            raise InvalidParameterError(f"error_score={self.error_score!r}; use a number (np.nan by default) "
                                        "or 'raise'")
        if isinstance(self.scoring, (list, tuple, set, dict)):
            raise InvalidParameterError(f"scoring={self.scoring!r} names several metrics; KernelSearchCV scores "
                                        "one: pass a single string or callable")
        if self.progress is not None and not callable(self.progress):
            raise InvalidParameterError(f"progress={self.progress!r} is not callable; pass a function "
                                        "progress(done, total) or None")
        if self.n_jobs is not None and (not isinstance(self.n_jobs, (int, np.integer)) or self.n_jobs == 0):
            raise InvalidParameterError(f"n_jobs={self.n_jobs!r}; use a positive number of threads, -1 for all "
                                        "cores, or None for 1")
        check_cv_order(self.cv_order)
        if not isinstance(self.refit, (bool, np.bool_)):
            raise InvalidParameterError(f"refit={self.refit!r}; use True (refit the best candidate) or False")

    # ------------------------------------------------------------------ fit
    def fit(self, X, y=None, *, groups=None, sample_weight=None):
        """Score every candidate on every split, then refit the best on all the data.

        Parameters
        ----------
        X : array-like, sparse matrix or InputCollection of n inputs
        y : array-like of shape (n,) or (n, d), optional
        groups : array-like of shape (n,), optional
            Group labels for group splitters (``GroupKFold``).
        sample_weight : array-like of shape (n,), optional
            Weights of the rows: each fold's model is fitted with the weights of its training rows and
            scored with those of its test rows (as scikit-learn's ``GridSearchCV`` with the weights routed
            to the fit and the scorer), and the best candidate is refitted with all of them. The λ-path
            shortcuts are unweighted, so a weighted search fits once per fold and λ
            (``search_info_["weighted"]``).

        Returns
        -------
        self : KernelSearchCV
        """
        t_start = time.perf_counter()
        self._check_params()
        if sample_weight is not None:
            if "sample_weight" not in inspect.signature(self.estimator.fit).parameters:
                raise InvalidParameterError(f"{type(self.estimator).__name__}.fit takes no sample_weight; search "
                                            "without weights, or with an estimator that takes them")
            sample_weight = check_sample_weight(sample_weight, n_items(X) if hasattr(X, "shape") or is_collection(X)
                                                else len(X))
        estimator = self.estimator
        sharing = self.sketch_sharing
        if sharing == "auto":
            rows = n_items(X) if hasattr(X, "shape") or is_collection(X) else len(X)
            sharing = "shared" if rows >= SHARED_FROM_ROWS else "fold"
        self._sharing = sharing
        info = {"sketch_sharing": sharing, "gamma_heuristic": None, "default_grid": False,
                "weighted": sample_weight is not None}
        grid = self.param_grid
        if grid is None:
            grid = default_param_grid(estimator, X, y)
            info["default_grid"] = True
            kernel_grids = [v for k, v in grid.items() if k.endswith("kernel_params")]
            info["gamma_heuristic"] = median_gamma(X) if kernel_grids else None
            info["param_grid"] = grid
        candidates = expand_grid(estimator, grid)
        self.scorer_ = check_scoring(estimator, self.scoring)
        if isinstance(X, (list, tuple)) and not is_collection(X):
            X = np.asarray(X)
        cv, info["folds"] = self.cv, None
        if cv is None or (isinstance(cv, Integral) and not isinstance(cv, bool)):  # the default folds
            cv, info["folds"] = search_splitter(5 if cv is None else cv, estimator, y, cv_order=self.cv_order,
                                                random_state=self.random_state)
        cv = check_cv(cv, y, classifier=is_classifier(estimator))
        info["splitter"] = repr(cv)
        split_X = np.zeros((n_items(X), 1)) if is_collection(X) else X
        folds = [(np.asarray(tr), np.asarray(te)) for tr, te in cv.split(split_X, y, groups)]
        self.n_splits_ = len(folds)
        n_cand = len(candidates)
        scores = np.full((n_cand, self.n_splits_), np.nan)
        fit_times = np.zeros_like(scores)
        score_times = np.zeros_like(scores)
        lam_name = "lam" if "lam" in estimator.get_params(deep=False) else None
        blocks = group_candidates(candidates, lam_name)
        if self.verbose:
            print(f"Fitting {self.n_splits_} folds for each of {n_cand} candidates in {len(blocks)} blocks",
                  file=sys.stderr)
        info["blocks"] = []
        done, n_failed, first_error = 0, 0, None
        for params, indices, lams in blocks:
            t0 = time.perf_counter()
            path, block = self._score_block(estimator, params, X, y, folds, lams, sample_weight)
            path_scores = path.test_scores.copy()
            if path.failed.any():
                n_failed += int(path.failed.sum())
                first_error = first_error or (path.errors[0] if path.errors else "unknown error")
                if isinstance(self.error_score, str):  # "raise": fail as the fit itself fails
                    self._raise_failure(estimator, params, X, y, folds, lams, path, sample_weight)
                path_scores[path.failed] = self.error_score
            scores[indices] = path_scores.T
            fit_times[indices] = path.fit_times.T
            score_times[indices] = path.score_times.T
            block.update(seconds=time.perf_counter() - t0, n_failed=int(path.failed.sum()),
                         errors=list(path.errors[:5]), info=path.info)
            info["blocks"].append(block)
            done += len(indices)
            if self.verbose:
                print(f"[{done}/{n_cand}] {params} via {block['path']}: {block['seconds']:.3g} s", file=sys.stderr)
            if self.progress is not None:
                self.progress(done, n_cand)
        if n_failed:
            warnings.warn(f"{n_failed} of the {scores.size} grid point fits failed and were scored "
                          f"error_score={self.error_score!r}; the first: {first_error}", FitFailedWarning,
                          stacklevel=2)
        self.cv_results_ = cv_results(candidates, scores, fit_times, score_times)
        self.best_index_ = int(self.cv_results_["rank_test_score"].argmin())
        self.best_params_ = candidates[self.best_index_]
        self.best_score_ = float(self.cv_results_["mean_test_score"][self.best_index_])
        if self.refit:
            t0 = time.perf_counter()
            best = clone(estimator).set_params(**to_estimator_params(estimator, self.best_params_))
            fit_kw = {} if sample_weight is None else {"sample_weight": sample_weight}
            self.best_estimator_ = best.fit(X, y, **fit_kw) if y is not None else best.fit(X, **fit_kw)
            self.refit_time_ = time.perf_counter() - t0
            if hasattr(self.best_estimator_, "classes_"):
                self.classes_ = self.best_estimator_.classes_
        self.multimetric_ = False
        info.update(n_candidates=n_cand, n_splits=self.n_splits_, n_blocks=len(blocks),
                    seconds=time.perf_counter() - t_start)
        self.search_info_ = info
        return self

    def _score_block(self, estimator, params, X, y, folds, lams, weights=None):
        """Scores of one block (every candidate sharing ``params``) through its path function."""
        est = clone(estimator).set_params(**to_estimator_params(estimator, params))
        block = {"params": params, "lams": list(lams), "fallback": None}
        if weights is not None:  # the λ shortcuts are unweighted: one weighted fit per fold and λ
            block.update(path="generic", fallback="sample_weight given")
            return generic_path(est, X, y, folds, lams, self.scorer_, error_score=self.error_score,
                                sample_weight=weights), block
        func, name = path_function(est) if lams[0] is not None else (None, "generic")
        if func is not None:
            try:
                if func is square_loss_path:
                    path = func(est, X, y, folds, lams, self.scorer_, sketch_sharing=self._sharing,
                                n_jobs=self.n_jobs)
                else:
                    path = func(est, X, y, folds, lams, self.scorer_)
                block["path"] = name
                return path, block
            except NotImplementedError as exc:
                block["fallback"] = str(exc)
        block["path"] = "generic"
        return generic_path(est, X, y, folds, lams, self.scorer_, error_score=self.error_score), block

    def _raise_failure(self, estimator, params, X, y, folds, lams, path, weights=None):
        """``error_score="raise"``: refit the first failed point directly, so its own exception propagates."""
        k, j = (int(v[0]) for v in np.nonzero(path.failed))
        est = clone(estimator).set_params(**to_estimator_params(estimator, params))
        generic_path(est, X, y, [folds[k]], [lams[j]], self.scorer_, error_score="raise",
                     sample_weight=weights)
        raise SkframeError(f"grid point {params} lam={lams[j]!r} failed on fold {k}: "
                           f"{path.errors[0] if path.errors else 'unknown error'}")

    # ------------------------------------------------------------------ delegation to best_estimator_
    def _check_refitted(self, method):
        if not self.refit:
            raise NotFittedError(f"this KernelSearchCV was fitted with refit=False; {method} needs "
                                 "refit=True (or use cv_results_ and best_params_)")
        try:
            check_is_fitted(self)
        except Exception as exc:
            raise NotFittedError(f"this KernelSearchCV instance is not fitted yet; call fit(X, y) before {method}") \
                from exc

    @property
    def n_features_in_(self):
        """Number of features seen by the refitted best estimator."""
        self._check_refitted("n_features_in_")
        return self.best_estimator_.n_features_in_

    predict = _delegated("predict")
    predict_proba = _delegated("predict_proba")
    predict_log_proba = _delegated("predict_log_proba")
    decision_function = _delegated("decision_function")
    transform = _delegated("transform")

    def score(self, X, y=None):
        """``scorer_(best_estimator_, X, y)``: the search's scorer on the refitted best estimator."""
        self._check_refitted("score")
        return self.scorer_(self.best_estimator_, X, y)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        sub = sk_get_tags(self.estimator)
        tags.estimator_type = sub.estimator_type
        tags.classifier_tags = sub.classifier_tags
        tags.regressor_tags = sub.regressor_tags
        tags.input_tags.sparse = sub.input_tags.sparse
        tags.input_tags.pairwise = sub.input_tags.pairwise
        tags.target_tags = sub.target_tags
        return tags
