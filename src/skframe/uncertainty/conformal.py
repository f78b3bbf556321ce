"""Conformal prediction intervals around any skframe (or scikit-learn) regressor.

Methods (``alpha`` the miscoverage, ``n`` the rows given to ``fit``):

* ``"split"``: fit on a random part of the rows, score ``|y - mu(x)|`` on the others (the
  calibration rows, ``n_cal`` of them); the interval is ``mu(x) +/- q`` with ``q`` the
  ``ceil((1 - alpha)(n_cal + 1))``-th smallest score (Lei, G'Sell, Rinaldo, Tibshirani and
  Wasserman, "Distribution-free predictive inference for regression", JASA 2018). Coverage
  ``>= 1 - alpha`` for exchangeable rows.
* ``"cv+"``: K-fold cross-fitting; the bounds are order statistics of ``mu_{-k(i)}(x) -/+ R_i``
  (Barber, Candès, Ramdas and Tibshirani, "Predictive inference with the jackknife+", 2021).
  Coverage ``>= 1 - 2 alpha - min(2 (1 - 1/K) / (n/K + 1), (1 - K/n) / (K + 1))`` in theory,
  close to ``1 - alpha`` in practice.
* ``"jackknife+"``: the same with leave-one-out fits (K = n; n fits: small n only). Coverage
  ``>= 1 - 2 alpha``.
* ``"cqr"``: conformalized quantile regression (Romano, Patterson and Candès, "Conformalized
  quantile regression", NeurIPS 2019) on a quantile estimator (:class:`JointQuantileRegressor`):
  the levels ``alpha/2`` and ``1 - alpha/2`` are fitted on the training part and widened by the
  conformal quantile of ``max(q_lo(x) - y, y - q_hi(x))`` on the calibration part
  (``cqr_score="symmetric"``), or each bound by the ``ceil((1 - alpha/2)(n_cal + 1))``-th smallest of
  its own side's score, ``q_lo(x) - y`` or ``y - q_hi(x)`` (``cqr_score="asymmetric"``). Coverage
  ``>= 1 - alpha`` either way; widths follow the noise where it varies.

The CV+ / jackknife+ quantiles are exact order statistics computed without the
``n x n_test`` matrix (:mod:`skframe.uncertainty._quantiles`).
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator, MultiOutputMixin, RegressorMixin, clone, is_classifier

from skframe.contract.collections import is_collection, n_items, take
from skframe.exceptions import InvalidInputError, InvalidParameterError, NotFittedError
from skframe.models._base import store_params
from skframe.uncertainty._cqr_lam import needs_lam, square_loss_lam
from skframe.uncertainty._quantiles import CQR_SCORES, FoldResiduals, cqr_scores, cqr_widening, split_quantile
from skframe.uncertainty._shared_folds import fit_shared_folds
from skframe.validation import check_seed

__all__ = ["ConformalRegressor", "METHODS"]

METHODS = ("split", "cv+", "jackknife+", "cqr")

#: the most rows CQR fits its quantile models on by default (``quantile_rows="auto"``)
CQR_ROWS = 2**15

#: the bytes the quantile models' features may take with ``quantile_rows="auto"`` (two n x m float64 arrays)
CQR_FEATURE_BYTES = 512 * 2**20


def _n_rows(X):
    return n_items(X) if is_collection(X) else X.shape[0]


def _as_2d(F):
    F = np.asarray(F, dtype=np.float64)
    return F[:, None] if F.ndim == 1 else F


def _take(X, idx):
    return take(X, idx) if is_collection(X) else X[idx]


def fold_predictions(fitted, X):
    """(K, n, d): every fold model's predictions at X (one kernel pass for shared-sketch folds)."""
    shared = getattr(fitted, "shared_folds_", None)
    if shared is not None:
        return shared.predict_all(X)
    return np.stack([_as_2d(est.predict(X)) for est in fitted.fold_estimators_])


class ConformalRegressor(MultiOutputMixin, RegressorMixin, BaseEstimator):
    """Prediction intervals with a finite-sample coverage guarantee around a regressor.

    Parameters
    ----------
    estimator : regressor
        Any estimator with ``fit(X, y)`` and ``predict(X)`` (a :class:`SketchedKernelRidge`,
        :class:`SketchedKernelMachine`, a scikit-learn regressor); cloned, never modified.
        For ``method="cqr"`` a quantile estimator with a ``quantiles`` parameter
        (:class:`JointQuantileRegressor`); its levels are set to ``(alpha/2, 0.5, 1 - alpha/2)``.
    method : {"split", "cv+", "jackknife+", "cqr"}, default="cv+"
    alpha : float in (0, 1), default=0.1
        Miscoverage: the intervals aim at ``1 - alpha`` coverage.
    cv : int, default=5
        Number of folds of ``"cv+"`` (at least 2).
    calibration_size : float in (0, 1) or int, default=0.25
        Share (or number) of the rows held out for calibration by ``"split"`` and ``"cqr"``.
    refit : bool, default=True
        ``"cv+"`` / ``"jackknife+"``: fit the estimator on all rows for :meth:`predict` (the
        point prediction); False predicts with the mean of the fold models instead (one fit fewer).
        The intervals use the fold models only, either way.
    chunk_rows : int, default=4096
        Test rows predicted and bounded at a time by :meth:`predict_interval`.
    budget_bytes : int, default=67108864
        Largest block of values the jackknife+ order statistics form at once (64 MiB).
    random_state : int, RandomState or None
        Seed of the calibration split and of the fold assignment.
    sketch_sharing : {"fold", "shared"}, default="fold"
        ``"cv+"`` / ``"jackknife+"``: ``"fold"`` fits the estimator on each fold's rows (any estimator, the exact
        CV+ guarantee; a sketched estimator draws a sketch per fold, and where the sketch is small for the data
        the fold models disagree, which widens the intervals: conservative, not wrong); ``"shared"``
        (:class:`SketchedKernelRidge` with a sketch) fits it once on all rows and builds every fold's model
        from that sketch and per-fold sums of one pass over the rows (:mod:`skframe.uncertainty._shared_folds`):
        one fit and one or two passes instead of K fits, within the estimator's ``memory_budget`` (256 MiB where
        it has none); the held-out inputs may serve as landmarks (never their
        targets), so the guarantee is then approximate; with ``lam="auto"`` every fold takes the lambda chosen on
        all rows.
    cqr_score : {"symmetric", "asymmetric"}, default="symmetric"
        ``"cqr"`` only: ``"symmetric"`` widens both fitted quantiles by one conformal quantile of the score
        ``max(q_lo(x) - y, y - q_hi(x))`` (rank ``ceil((1 - alpha)(n_cal + 1))``); ``"asymmetric"`` widens
        the lower one by the ``ceil((1 - alpha/2)(n_cal + 1))``-th smallest ``q_lo(x) - y`` and the upper
        one by the same rank of ``y - q_hi(x)``: a correction per side (skewed noise, a quantile model biased
        to one side) at the price of a more extreme rank per side. Both cover at least ``1 - alpha``.
    quantile_rows : int or "auto", default="auto"
        ``"cqr"`` only: the most rows the quantile models are fitted on; the other rows outside the calibration
        part join it (they cost a prediction each, and a larger calibration set only sharpens the conformal
        quantile: the coverage guarantee holds for any split). ``"auto"``: :data:`CQR_ROWS` (32 768), fewer where
        the estimator's integer ``sketch_size`` m would make the n x m float64 features (built with one copy
        more) exceed :data:`CQR_FEATURE_BYTES`; the quantile models' time and memory stop growing with n there
        (their iterative solver passes over the n x m features hundreds of times).

    Attributes
    ----------
    estimator_ : fitted estimator
        The point model (``"split"``/``"cqr"``: fitted on the training part).
    fold_estimators_ : list of fitted estimators
        The K fold models of ``"cv+"`` / ``"jackknife+"`` (empty for the split methods).
    conformity_quantile_ : ndarray of shape (n_targets,) or (2, n_targets)
        ``"split"`` / ``"cqr"``: the calibrated widening ``q`` per target; with ``cqr_score="asymmetric"``
        the lower bound's widening (row 0) and the upper bound's (row 1).
    scores_ : ndarray of shape (n_calibration, n_targets) or (n_calibration, 2, n_targets)
        ``"split"`` / ``"cqr"``: the calibration scores ``q`` is an order statistic of; with
        ``cqr_score="asymmetric"`` the lower side's ``q_lo - y`` (``[:, 0]``) and the upper side's
        ``y - q_hi`` (``[:, 1]``).
    residuals_ : list of FoldResiduals
        ``"cv+"`` / ``"jackknife+"``: the held-out residuals per target, grouped by fold.
    n_calibration_ : int
        Rows that calibrated the intervals (the held-out part, or all rows for CV+).
    n_quantile_rows_ : int
        ``"cqr"`` only: the rows the quantile models were fitted on (the others calibrated them).
    cqr_lam_ : list of dict
        ``"cqr"`` only: with a quantile estimator whose ``lam="auto"``, per target, how its lambda was set instead
        of searched (the square loss's, chosen in closed form on the training part and moved to the pinball loss's
        scale: one fit instead of about 25; :mod:`skframe.uncertainty._cqr_lam`); empty when lam is given.

    Examples
    --------
    >>> import numpy as np
    >>> from skframe.models import SketchedKernelRidge
    >>> from skframe.uncertainty import ConformalRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(400, 2)); y = np.sin(4 * X[:, 0]) + 0.2 * rng.normal(size=400)
    >>> base = SketchedKernelRidge(kernel_params={"gamma": 2.0}, sketch_size=40, random_state=0)
    >>> model = ConformalRegressor(base, method="cv+", alpha=0.1, random_state=0).fit(X, y)
    >>> lower, upper = model.predict_interval(X[:5])
    >>> bool(np.all(lower < upper))
    True
    """

    def __init__(self, estimator, *, method="cv+", alpha=0.1, cv=5, calibration_size=0.25, refit=True,
                 chunk_rows=4096, budget_bytes=64 * 2**20, random_state=None, sketch_sharing="fold",
                 cqr_score="symmetric", quantile_rows="auto"):
        store_params(self, locals())

    # ------------------------------------------------------------------ checks
    def _check_params(self, n):
        if is_classifier(self.estimator):  # class labels have no widths: intervals are for numbers
            raise InvalidParameterError(
                f"prediction intervals need a regressor; {type(self.estimator).__name__} predicts class labels "
                "(for their uncertainty use its predict_proba; CLI: drop --interval)")
        if self.method not in METHODS:
            raise InvalidParameterError(f"method={self.method!r}; use one of {', '.join(METHODS)}")
        a = self.alpha
        if isinstance(a, bool) or not isinstance(a, numbers.Real) or not 0 < a < 1:
            raise InvalidParameterError(f"alpha={a!r} must be in (0, 1), e.g. alpha=0.1 for 90% intervals")
        if self.method == "cv+" and (isinstance(self.cv, bool) or not isinstance(self.cv, numbers.Integral)
                                     or not 2 <= self.cv <= n):
            raise InvalidParameterError(f"cv={self.cv!r} must be an integer between 2 and the {n} rows, e.g. 5")
        check_seed(self.random_state)  # None, a RandomState, a Generator or a whole number in [0, 2**32-1]
        if self.sketch_sharing not in ("fold", "shared"):
            raise InvalidParameterError(f"sketch_sharing={self.sketch_sharing!r}; use 'fold' or 'shared'")
        if not isinstance(self.cqr_score, str) or self.cqr_score not in CQR_SCORES:
            raise InvalidParameterError(f"cqr_score={self.cqr_score!r}; use 'symmetric' (one score, "
                                        "max(q_lo - y, y - q_hi)) or 'asymmetric' (one score per side)")
        if self.method in ("split", "cqr"):
            c = self.calibration_size
            n_cal = int(round(c * n)) if isinstance(c, float) and 0 < c < 1 else c
            if isinstance(n_cal, bool) or not isinstance(n_cal, numbers.Integral) or not 1 <= n_cal < n:
                raise InvalidParameterError(
                    f"calibration_size={c!r} leaves no training or no calibration rows out of {n}; "
                    "give a share in (0, 1) such as 0.25 or a row count below n")
            return int(n_cal)
        for name in ("chunk_rows", "budget_bytes"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
                raise InvalidParameterError(f"{name}={v!r} must be a positive integer")
        return None

    def _check_fitted(self):
        if not hasattr(self, "n_outputs_"):
            raise NotFittedError("this ConformalRegressor is not fitted yet; call fit(X, y) before using it")

    # ------------------------------------------------------------------ fit
    def fit(self, X, y):
        """Fit the model(s) and calibrate the intervals.

        Parameters
        ----------
        X : array-like, sparse matrix or InputCollection of n rows
        y : array-like of shape (n,) or (n, n_targets)

        Returns
        -------
        self : ConformalRegressor
        """
        Y = np.asarray(y, dtype=np.float64)
        n = _n_rows(X)
        if Y.ndim not in (1, 2) or Y.shape[0] != n:
            raise InvalidInputError(f"X has {n} rows but y has shape {Y.shape}; give one target row per input row")
        n_cal = self._check_params(n)
        self._y_1d = Y.ndim == 1
        Y2 = Y[:, None] if self._y_1d else Y
        self.n_outputs_ = Y2.shape[1]
        rng = np.random.default_rng(self._seed())
        self.fold_estimators_ = []
        if self.method in ("split", "cqr"):
            perm = rng.permutation(n)
            n_fit = self._quantile_rows(n - n_cal) if self.method == "cqr" else n - n_cal
            cal = np.sort(np.concatenate([perm[:n_cal], perm[n_cal + n_fit:]]))  # rows beyond the cap calibrate
            train = np.sort(perm[n_cal:n_cal + n_fit])
            self._fit_split(X, Y, Y2, train, cal)
            self.n_calibration_ = int(cal.size)
            if self.method == "cqr":
                self.n_quantile_rows_ = int(train.size)
        else:
            K = n if self.method == "jackknife+" else int(self.cv)
            fold_of = np.empty(n, dtype=np.int64)
            fold_of[rng.permutation(n)] = np.arange(n) % K
            self._fit_cross(X, Y, Y2, fold_of, K)
            self.n_calibration_ = n
        return self

    def _quantile_rows(self, n_fit):
        """The rows CQR's quantile models are fitted on, out of the ``n_fit`` left by the calibration part."""
        q = self.quantile_rows
        if isinstance(q, str) and q == "auto":
            cap = CQR_ROWS
            m = self.estimator.get_params().get("sketch_size")
            if isinstance(m, numbers.Integral) and not isinstance(m, bool) and m > 0:
                cap = min(cap, max(1, CQR_FEATURE_BYTES // (2 * 8 * int(m))))
            return int(min(n_fit, cap))
        if isinstance(q, bool) or not isinstance(q, numbers.Integral) or q < 1:
            raise InvalidParameterError(f"quantile_rows={q!r} must be 'auto' or a positive whole number of rows, "
                                        f"e.g. {CQR_ROWS}")
        return int(min(n_fit, q))

    def _seed(self):
        rs = self.random_state
        if isinstance(rs, np.random.RandomState):
            return int(rs.randint(0, 2**31 - 1))
        if isinstance(rs, np.random.Generator):
            return int(rs.integers(0, 2**31 - 1))
        return rs

    def _quantile_estimator(self):
        est = clone(self.estimator)
        if "quantiles" not in est.get_params():
            raise InvalidParameterError(
                f"method='cqr' needs a quantile estimator with a 'quantiles' parameter, got {type(est).__name__}; "
                "use skframe.models.JointQuantileRegressor, or method='split'/'cv+' for a mean regressor")
        a = float(self.alpha)
        return est.set_params(quantiles=(a / 2, 0.5, 1 - a / 2))

    def _fit_split(self, X, Y, Y2, train, cal):
        X_tr, X_cal = _take(X, train), _take(X, cal)
        if self.method == "split":
            self.estimator_ = clone(self.estimator).fit(X_tr, Y[train])
            F = _as_2d(self.estimator_.predict(X_cal))
            self.scores_ = np.abs(Y2[cal] - F)
            self.conformity_quantile_ = split_quantile(self.scores_, self.alpha)
            return
        # CQR: one quantile model per target (a quantile estimator fits one target)
        self.quantile_estimators_, self.cqr_lam_ = [], []
        q_lo, q_hi = np.empty((cal.size, Y2.shape[1])), np.empty((cal.size, Y2.shape[1]))
        for j in range(Y2.shape[1]):
            est = self._quantile_estimator()
            if needs_lam(est):  # lam="auto": the square loss's lambda, not a pinball search (uncertainty._cqr_lam)
                lam, info = square_loss_lam(est, X_tr, Y2[train, j])
                est.set_params(lam=lam)
                self.cqr_lam_.append(info)
            est.fit(X_tr, Y2[train, j])
            Q = self._quantile_columns(est, X_cal)
            q_lo[:, j], q_hi[:, j] = Q[:, 0], Q[:, 2]
            self.quantile_estimators_.append(est)
        self.estimator_ = self.quantile_estimators_[0]
        self.scores_ = cqr_scores(q_lo, q_hi, Y2[cal], self.cqr_score)
        c_lo, c_hi = cqr_widening(self.scores_, self.alpha, self.cqr_score)
        self.conformity_quantile_ = c_lo if self.cqr_score == "symmetric" else np.stack([c_lo, c_hi])

    @staticmethod
    def _quantile_columns(est, X):
        """(lower, median, upper) columns of a fitted quantile model, sorted per row (no crossing)."""
        Q = _as_2d(est.predict(X))
        levels = np.asarray(getattr(est, "quantiles_", est.quantiles), dtype=float)
        Q = Q[:, np.argsort(levels)]
        return np.sort(Q, axis=1)

    def _fit_cross(self, X, Y, Y2, fold_of, K):
        self.shared_folds_ = None
        if self.sketch_sharing == "shared":
            self.estimator_, self.shared_folds_, R = fit_shared_folds(
                self.estimator, X, Y2, fold_of, K, chunk_rows=self.chunk_rows)
            self.residuals_ = [FoldResiduals(R[:, j], fold_of, K) for j in range(Y2.shape[1])]
            return
        R = np.empty_like(Y2)
        for k in range(K):
            test = np.flatnonzero(fold_of == k)
            train = np.flatnonzero(fold_of != k)
            est = clone(self.estimator).fit(_take(X, train), Y[train])
            R[test] = np.abs(Y2[test] - _as_2d(est.predict(_take(X, test))))
            self.fold_estimators_.append(est)
        self.residuals_ = [FoldResiduals(R[:, j], fold_of, K) for j in range(Y2.shape[1])]
        self.estimator_ = clone(self.estimator).fit(X, Y) if self.refit else None

    # ------------------------------------------------------------------ predict
    def _chunks(self, X):
        n = _n_rows(X)
        step = max(1, int(self.chunk_rows))
        for start in range(0, n, step):
            stop = min(n, start + step)
            yield start, stop, _take(X, np.arange(start, stop)) if (start, stop) != (0, n) else X

    def _shape(self, F):
        return F[:, 0] if self._y_1d else F

    def predict(self, X):
        """Point predictions: the point model's (CQR: the median level's).

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_targets)
        """
        self._check_fitted()
        if self.method == "cqr":
            F = np.column_stack([self._quantile_columns(est, X)[:, 1] for est in self.quantile_estimators_])
            return self._shape(F)
        if self.estimator_ is not None:
            return self._shape(_as_2d(self.estimator_.predict(X)).reshape(-1, self.n_outputs_))
        F = np.mean([_as_2d(est.predict(X)) for est in self.fold_estimators_], axis=0)
        return self._shape(F)

    def predict_interval(self, X):
        """Lower and upper bounds of the ``1 - alpha`` prediction intervals.

        Test rows are handled ``chunk_rows`` at a time: memory stays O(K chunk_rows + n_train).

        Returns
        -------
        lower, upper : ndarrays of shape (n_samples,) or (n_samples, n_targets)
            Infinite where too few rows calibrated the interval for this ``alpha``.
        """
        self._check_fitted()
        n = _n_rows(X)
        d = self.n_outputs_
        lower, upper = np.empty((n, d)), np.empty((n, d))
        for start, stop, Xc in self._chunks(X):
            lower[start:stop], upper[start:stop] = self._bounds(Xc)
        return self._shape(lower), self._shape(upper)

    def _bounds(self, Xc):
        if self.method == "split":
            F = _as_2d(self.estimator_.predict(Xc))
            return F - self.conformity_quantile_, F + self.conformity_quantile_
        if self.method == "cqr":
            cols = [self._quantile_columns(est, Xc) for est in self.quantile_estimators_]
            q = self.conformity_quantile_
            c_lo, c_hi = (q, q) if q.ndim == 1 else (q[0], q[1])
            lo = np.column_stack([Q[:, 0] for Q in cols]) - c_lo
            hi = np.column_stack([Q[:, 2] for Q in cols]) + c_hi
            return lo, hi
        P = fold_predictions(self, Xc)  # (K, c, d)
        lo, hi = np.empty(P.shape[1:]), np.empty(P.shape[1:])
        for j, res in enumerate(self.residuals_):
            lo[:, j], hi[:, j] = res.bounds(P[:, :, j], self.alpha, budget_bytes=self.budget_bytes)
        return lo, hi
