"""Evaluation metrics of the papers skframe reproduces.

Regression (scalar and multi-output): :func:`mse`, :func:`mae`, :func:`r2`, :func:`rrmse`,
:func:`arrmse`, :func:`relative_mse`; joint quantile regression: :func:`pinball_loss`,
:func:`crossing_loss`; multi-label: :func:`accuracy`, :func:`example_based_f1`,
:func:`hamming_loss`; ranking of candidates (structured prediction): :func:`rank_of_true`,
:func:`hits_at_k`, :func:`mean_reciprocal_rank`, :func:`mean_rank`. :func:`regression_report`
gathers the regression metrics in a JSON-serialisable dict for the CLI.

Arrays are samples × outputs; a 1-D array is one output. Shapes are checked and a mismatch
raises :class:`~skframe.exceptions.InvalidInputError` naming both shapes.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from .exceptions import InvalidInputError, InvalidParameterError

__all__ = [
    "mse",
    "mae",
    "r2",
    "rrmse",
    "arrmse",
    "relative_mse",
    "check_quantiles",
    "pinball_loss",
    "crossing_loss",
    "accuracy",
    "example_based_f1",
    "hamming_loss",
    "rank_of_true",
    "hits_at_k",
    "mean_reciprocal_rank",
    "mean_rank",
    "regression_report",
]

_MULTIOUTPUT = ("uniform_average", "raw_values")


# --------------------------------------------------------------------------------------
# validation
# --------------------------------------------------------------------------------------
def _as_2d(a, name):
    if sp.issparse(a):
        a = a.toarray()
    try:
        a = np.asarray(a, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"{name} cannot be converted to a float array ({exc})") from exc
    if a.ndim == 1:
        a = a.reshape(-1, 1)
    elif a.ndim != 2:
        raise InvalidInputError(f"{name} must be 1-D or 2-D, got shape {a.shape}")
    if a.shape[0] == 0:
        raise InvalidInputError(f"{name} is empty (shape {a.shape}); at least one sample is needed")
    if not np.all(np.isfinite(a)):
        raise InvalidInputError(f"{name} contains NaN or inf values; metrics need finite numbers")
    return a


def _check_pair(y_true, y_pred, names=("y_true", "y_pred")):
    """Return both as 2-D float arrays of the same shape (a 1-D array is one column)."""
    shape_t = np.shape(y_true)
    shape_p = np.shape(y_pred)
    a = _as_2d(y_true, names[0])
    b = _as_2d(y_pred, names[1])
    if a.shape != b.shape:
        raise InvalidInputError(
            f"{names[0]} has shape {shape_t} but {names[1]} has shape {shape_p}; "
            "they must have the same number of samples and outputs"
        )
    return a, b


def _reduce(values, multioutput):
    if multioutput == "raw_values":
        return values
    if multioutput == "uniform_average":
        return float(np.mean(values))
    raise InvalidParameterError(f"multioutput={multioutput!r} must be one of {list(_MULTIOUTPUT)}")


def _ratio(num, den):
    """num / den per output, with 0/0 = 0 and x/0 = inf (x > 0)."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.empty_like(num)
    ok = den > 0
    out[ok] = num[ok] / den[ok]
    out[~ok] = np.where(num[~ok] > 0, np.inf, 0.0)
    return out


# --------------------------------------------------------------------------------------
# regression
# --------------------------------------------------------------------------------------
def mse(y_true, y_pred, *, multioutput="uniform_average"):
    """Mean squared error, ``mean_i (y_i - ŷ_i)²`` per output.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,) or (n_samples, n_outputs)
    multioutput : {"uniform_average", "raw_values"}, default="uniform_average"
        Average over outputs (a float) or return one value per output.

    Returns
    -------
    float or ndarray of shape (n_outputs,)
        Computed by :func:`sklearn.metrics.mean_squared_error` (imported on first use).

    Examples
    --------
    >>> mse([1.0, 2.0], [1.0, 4.0])
    2.0
    """
    from sklearn.metrics import mean_squared_error

    a, b = _check_pair(y_true, y_pred)
    return _reduce(np.asarray(mean_squared_error(a, b, multioutput="raw_values")), multioutput)


def mae(y_true, y_pred, *, multioutput="uniform_average"):
    """Mean absolute error, ``mean_i |y_i - ŷ_i|`` per output.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,) or (n_samples, n_outputs)
    multioutput : {"uniform_average", "raw_values"}, default="uniform_average"

    Returns
    -------
    float or ndarray of shape (n_outputs,)
        Computed by :func:`sklearn.metrics.mean_absolute_error` (imported on first use).

    Examples
    --------
    >>> mae([1.0, 2.0], [1.0, 4.0])
    1.0
    """
    from sklearn.metrics import mean_absolute_error

    a, b = _check_pair(y_true, y_pred)
    return _reduce(np.asarray(mean_absolute_error(a, b, multioutput="raw_values")), multioutput)


def r2(y_true, y_pred, *, multioutput="uniform_average"):
    """Coefficient of determination ``1 - Σ(y - ŷ)² / Σ(y - ȳ)²`` per output.

    A constant ``y_true`` column scores 1.0 when predicted exactly and 0.0 otherwise, as
    :func:`sklearn.metrics.r2_score` (``force_finite=True``), which this function matches.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,) or (n_samples, n_outputs)
    multioutput : {"uniform_average", "raw_values"}, default="uniform_average"

    Returns
    -------
    float or ndarray of shape (n_outputs,)

    Examples
    --------
    >>> r2([1.0, 2.0, 3.0], [1.0, 2.0, 3.0])
    1.0
    """
    a, b = _check_pair(y_true, y_pred)
    num = np.sum((a - b) ** 2, axis=0)
    den = np.sum((a - a.mean(axis=0)) ** 2, axis=0)
    out = np.ones(a.shape[1])
    ok = den > 0
    out[ok] = 1.0 - num[ok] / den[ok]
    out[~ok & (num > 0)] = 0.0
    return _reduce(out, multioutput)


def _reference_means(a, y_true, train_means):
    if train_means is None:
        return a.mean(axis=0), "test"
    ref = np.asarray(train_means, dtype=np.float64).ravel()
    if ref.size == 1:
        ref = np.full(a.shape[1], ref[0])
    if ref.shape != (a.shape[1],) or not np.all(np.isfinite(ref)):
        raise InvalidInputError(
            f"train_means has shape {np.shape(train_means)} but y_true has {a.shape[1]} targets "
            f"(shape {np.shape(y_true)}); give one finite training mean per target, e.g. Y_train.mean(axis=0)"
        )
    return ref, "train"


def rrmse(y_true, y_pred, y_train_mean=None, *, train_means=None, return_reference=False):
    """Relative root mean squared error per target (multi-target regression).

    ``RRMSE_j = sqrt( Σ_i (y_ij - ŷ_ij)² / Σ_i (y_ij - ȳ_j)² )``

    i.e. the RMSE relative to that of the constant predictor ȳ_j. In the multi-target
    regression literature (Spyromitros-Xioufis et al., *Multi-target regression via input
    space expansion: treating targets as inputs*, Machine Learning 2016, whose rf1/rf2/scm
    benchmarks the sketched kernel papers reuse) ȳ_j is the mean of the *training* targets:
    pass it as ``train_means``. Without it ȳ_j is the mean of ``y_true`` (the test targets),
    which gives ``sqrt(1 - R²_j)``. A zero denominator gives 0.0 when the prediction is exact
    and ``inf`` otherwise.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,) or (n_samples, n_targets)
    y_train_mean : array-like of shape (n_targets,) or float, optional
        Older name of ``train_means`` (positional).
    train_means : array-like of shape (n_targets,) or float, optional
        Reference means ȳ_j, normally ``Y_train.mean(axis=0)``.
    return_reference : bool, default=False
        Also return which means were used: ``"train"`` or ``"test"``.

    Returns
    -------
    rrmse : ndarray of shape (n_targets,)
    reference : {"train", "test"}
        Only when ``return_reference=True``.

    Examples
    --------
    >>> rrmse([1.0, 3.0], [2.0, 2.0])
    array([1.])
    >>> rrmse([1.0, 3.0], [2.0, 2.0], train_means=[0.0], return_reference=True)
    (array([0.4472136]), 'train')
    """
    if y_train_mean is not None and train_means is not None:
        raise InvalidParameterError("give the training means once, as train_means= (y_train_mean is its older name)")
    a, b = _check_pair(y_true, y_pred)
    ref, used = _reference_means(a, y_true, train_means if train_means is not None else y_train_mean)
    num = np.sum((a - b) ** 2, axis=0)
    den = np.sum((a - ref) ** 2, axis=0)
    out = np.sqrt(_ratio(num, den))
    return (out, used) if return_reference else out


def arrmse(y_true, y_pred, y_train_mean=None, *, train_means=None, return_reference=False):
    """Average relative root mean squared error: the mean over targets of :func:`rrmse`.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,) or (n_samples, n_targets)
    y_train_mean : array-like of shape (n_targets,), optional
        Older name of ``train_means``.
    train_means : array-like of shape (n_targets,), optional
        Training target means (see :func:`rrmse`; Spyromitros-Xioufis et al. 2016 use them).
    return_reference : bool, default=False
        Also return ``"train"`` or ``"test"``: which means were used.

    Returns
    -------
    arrmse : float
    reference : {"train", "test"}
        Only when ``return_reference=True``.

    Examples
    --------
    >>> arrmse([[1.0, 0.0], [3.0, 2.0]], [[2.0, 1.0], [2.0, 1.0]])
    1.0
    """
    values, used = rrmse(y_true, y_pred, y_train_mean, train_means=train_means, return_reference=True)
    value = float(np.mean(values))
    return (value, used) if return_reference else value


def relative_mse(y_true, y_pred, *, multioutput="uniform_average"):
    """MSE divided by the range of the true values (the Friedman robust-regression experiment).

    ``relative_mse = mean_i (y_i - ŷ_i)² / (max_i y_i - min_i y_i)`` per output, the
    "relative MSE" of the robust-regression figures of El Ahmad et al., *Fast Kernel Methods for Generic Lipschitz Losses via p-Sparsified Sketches*, TMLR 2023, §4.1: note it
    divides by the range, not by the squared range or the variance. A zero range gives 0.0
    for an exact prediction and ``inf`` otherwise.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,) or (n_samples, n_outputs)
    multioutput : {"uniform_average", "raw_values"}, default="uniform_average"

    Returns
    -------
    float or ndarray of shape (n_outputs,)

    Examples
    --------
    >>> relative_mse([0.0, 4.0], [1.0, 4.0])
    0.125
    """
    a, b = _check_pair(y_true, y_pred)
    num = np.mean((a - b) ** 2, axis=0)
    den = a.max(axis=0) - a.min(axis=0)
    return _reduce(_ratio(num, den), multioutput)


# --------------------------------------------------------------------------------------
# quantile regression
# --------------------------------------------------------------------------------------
def check_quantiles(quantiles, n_quantiles=None):
    """Validate quantile levels: a 1-D float array of levels in (0, 1).

    Parameters
    ----------
    quantiles : float or array-like of float
        Levels τ_j.
    n_quantiles : int, optional
        Number of levels expected (the columns of a quantile prediction matrix).

    Returns
    -------
    ndarray of shape (n_quantiles,)

    Raises
    ------
    InvalidInputError
        The number of levels differs from ``n_quantiles``.
    InvalidParameterError
        A level is outside (0, 1) or not a finite number.

    Examples
    --------
    >>> check_quantiles([0.1, 0.5, 0.9])
    array([0.1, 0.5, 0.9])
    """
    try:
        tau = np.asarray(quantiles, dtype=np.float64).ravel()
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(f"quantiles={quantiles!r} must be numbers in (0, 1)") from exc
    n_q = tau.size if n_quantiles is None else n_quantiles
    if tau.size == 0:
        raise InvalidParameterError("quantiles is empty; give at least one level in (0, 1)")
    if tau.shape != (n_q,):
        raise InvalidInputError(f"quantiles has {tau.size} levels but Q has {n_q} columns; give one level per column")
    if not np.all((tau > 0) & (tau < 1)):
        raise InvalidParameterError(f"quantiles={tau.tolist()} must lie in (0, 1)")
    return tau


def pinball_loss(y, Q, quantiles):
    """Joint pinball (quantile) loss, summed over quantile levels and averaged over samples.

    ``L = (1/n) Σ_i Σ_j max(τ_j r_ij, (τ_j - 1) r_ij)`` with ``r_ij = y_i - q_ij``
    (El Ahmad et al., *Fast Kernel Methods for Generic Lipschitz Losses via p-Sparsified Sketches*, TMLR 2023, §4.2, Table 1). With one level this equals
    :func:`sklearn.metrics.mean_pinball_loss` with ``alpha=τ``; with several it is the sum
    of the per-level losses.

    Parameters
    ----------
    y : array-like of shape (n_samples,) or (n_samples, 1)
        Observed outputs.
    Q : array-like of shape (n_samples, n_quantiles)
        Predicted quantiles, column j for level ``quantiles[j]``.
    quantiles : array-like of shape (n_quantiles,)
        Levels τ_j in (0, 1).

    Returns
    -------
    float

    Examples
    --------
    >>> round(pinball_loss([1.0], [[0.0, 2.0]], [0.1, 0.9]), 12)   # 0.1*1 + 0.1*1
    0.2
    """
    yy = _as_2d(y, "y")
    if yy.shape[1] != 1:
        raise InvalidInputError(f"y has shape {np.shape(y)}; pinball_loss needs one output per sample")
    Qa = _as_2d(Q, "Q")
    if Qa.shape[0] != yy.shape[0]:
        raise InvalidInputError(f"y has shape {np.shape(y)} but Q has shape {np.shape(Q)}; the numbers of samples differ")
    tau = check_quantiles(quantiles, Qa.shape[1])
    r = yy - Qa
    return float(np.mean(np.sum(np.maximum(tau * r, (tau - 1.0) * r), axis=1)))


def crossing_loss(Q, quantiles=None):
    """Mean amount by which predicted quantile curves cross.

    With levels in increasing order τ_1 < ... < τ_k, the predicted quantiles should satisfy
    q_1 ≤ ... ≤ q_k; a crossing is q_j > q_{j+1}. We compute

    ``C = (1/n) Σ_i Σ_{j<k} max(0, q_ij - q_i,j+1)``

    which is 0 for non-crossing predictions. The reference implementation of that paper summed
    ``max(0, q_{j+1} - q_j)`` instead, which measures the ordinary (non-crossing) spread
    of the quantiles, i.e. the opposite; we do not reproduce that.

    Parameters
    ----------
    Q : array-like of shape (n_samples, n_quantiles)
        Predicted quantiles.
    quantiles : array-like of shape (n_quantiles,), optional
        Levels of the columns; when given, columns are first sorted by increasing level.
        Default: the columns are already in increasing level order.

    Returns
    -------
    float

    Examples
    --------
    >>> crossing_loss([[0.0, 1.0, 0.5]])
    0.5
    """
    Qa = _as_2d(Q, "Q")
    if quantiles is not None:
        tau = check_quantiles(quantiles, Qa.shape[1])
        if np.unique(tau).size != tau.size:
            raise InvalidParameterError(f"quantiles={tau.tolist()} has repeated levels")
        Qa = Qa[:, np.argsort(tau)]
    if Qa.shape[1] < 2:
        return 0.0
    return float(np.mean(np.sum(np.maximum(0.0, Qa[:, :-1] - Qa[:, 1:]), axis=1)))


# --------------------------------------------------------------------------------------
# classification / multi-label
# --------------------------------------------------------------------------------------
def _check_binary(Y, name):
    if sp.issparse(Y):
        Y = sp.csr_matrix(Y)
        vals = Y.data
    else:
        Y = np.asarray(Y)
        if Y.ndim == 1:
            Y = Y.reshape(-1, 1)
        if Y.ndim != 2:
            raise InvalidInputError(f"{name} must be a 2-D indicator matrix, got shape {Y.shape}")
        vals = Y
    if Y.shape[0] == 0:
        raise InvalidInputError(f"{name} is empty (shape {Y.shape})")
    if not np.all((vals == 0) | (vals == 1)):
        raise InvalidInputError(
            f"{name} must be a binary indicator matrix (0/1); threshold scores first, e.g. (scores > 0.5)"
        )
    return Y


def _pair_binary(Y_true, Y_pred):
    A = _check_binary(Y_true, "Y_true")
    B = _check_binary(Y_pred, "Y_pred")
    if A.shape != B.shape:
        raise InvalidInputError(
            f"Y_true has shape {A.shape} but Y_pred has shape {B.shape}; they must have the same samples and labels"
        )
    return A, B


def _row_sums(M):
    return np.asarray(M.sum(axis=1), dtype=np.float64).ravel()


def accuracy(y_true, y_pred):
    """Fraction of samples predicted exactly (subset accuracy for 2-D label matrices).

    One output: :func:`sklearn.metrics.accuracy_score` (imported on first use); label matrices:
    the same subset accuracy, computed directly (it accepts any label values per column).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,) or (n_samples, n_labels)

    Returns
    -------
    float

    Examples
    --------
    >>> accuracy([0, 1, 1, 0], [0, 1, 0, 0])
    0.75
    """
    if sp.issparse(y_true):
        y_true = y_true.toarray()
    if sp.issparse(y_pred):
        y_pred = y_pred.toarray()
    a, b = np.asarray(y_true), np.asarray(y_pred)
    if a.ndim == 1:
        a = a.reshape(-1, 1)
    if b.ndim == 1:
        b = b.reshape(-1, 1)
    if a.shape != b.shape or a.ndim != 2:
        raise InvalidInputError(f"y_true has shape {np.shape(y_true)} but y_pred has shape {np.shape(y_pred)}")
    if a.shape[0] == 0:
        raise InvalidInputError("y_true is empty; at least one sample is needed")
    if a.shape[1] == 1:
        from sklearn.metrics import accuracy_score

        return float(accuracy_score(a.ravel(), b.ravel()))
    # subset accuracy of label matrices (any values, not only 0/1 indicators)
    return float(np.mean(np.all(a == b, axis=1)))


def example_based_f1(Y_true, Y_pred):
    """Example-based F1 of multi-label predictions (the Bibtex experiments of El Ahmad et al.,
    *Sketch In, Sketch Out: Accelerating both Learning and Inference for Structured Prediction
    with Kernels*, AISTATS 2024).

    ``F1 = (1/n) Σ_i 2 |y_i ∩ ŷ_i| / (|y_i| + |ŷ_i|)``, with the convention that a sample
    whose true and predicted label sets are both empty scores 1. Equals
    ``sklearn.metrics.f1_score(Y_true, Y_pred, average="samples", zero_division=1)``.

    Parameters
    ----------
    Y_true, Y_pred : array-like or sparse matrix of shape (n_samples, n_labels)
        Binary indicator matrices.

    Returns
    -------
    float

    Examples
    --------
    >>> example_based_f1([[1, 1, 0], [0, 0, 0]], [[1, 0, 0], [0, 0, 0]])
    0.8333333333333333
    """
    A, B = _pair_binary(Y_true, Y_pred)
    if sp.issparse(A) or sp.issparse(B):
        inter = _row_sums(sp.csr_matrix(A).multiply(sp.csr_matrix(B)))
    else:
        inter = np.sum((A == 1) & (B == 1), axis=1).astype(np.float64)
    size = _row_sums(A) + _row_sums(B)
    f1 = np.ones_like(size)
    ok = size > 0
    f1[ok] = 2.0 * inter[ok] / size[ok]
    return float(np.mean(f1))


def hamming_loss(Y_true, Y_pred):
    """Fraction of wrong labels over all samples and labels.

    Computed by :func:`sklearn.metrics.hamming_loss` (imported on first use).

    Parameters
    ----------
    Y_true, Y_pred : array-like or sparse matrix of shape (n_samples, n_labels)
        Binary indicator matrices.

    Returns
    -------
    float

    Examples
    --------
    >>> hamming_loss([[1, 0], [0, 1]], [[1, 1], [0, 1]])
    0.25
    """
    from sklearn.metrics import hamming_loss as _sk_hamming_loss

    A, B = _pair_binary(Y_true, Y_pred)
    if A.shape[1] == 1 and not (sp.issparse(A) or sp.issparse(B)):
        A, B = A.ravel(), B.ravel()
    else:
        A = sp.csr_matrix(A, dtype=np.int8) if sp.issparse(A) else np.asarray(A, dtype=np.int8)
        B = sp.csr_matrix(B, dtype=np.int8) if sp.issparse(B) else np.asarray(B, dtype=np.int8)
    return float(_sk_hamming_loss(A, B))


# --------------------------------------------------------------------------------------
# ranking of candidates
# --------------------------------------------------------------------------------------
def rank_of_true(scores, true_index, *, ties="average"):
    """1-based rank of the true candidate in each row of a score matrix (higher = better).

    Parameters
    ----------
    scores : array-like of shape (n_samples, n_candidates)
        Candidate scores; ``-inf`` may mark candidates that are not allowed for a sample.
    true_index : array-like of int, shape (n_samples,)
        Column of the true candidate for each sample.
    ties : {"average", "optimistic", "pessimistic"}, default="average"
        How candidates scoring exactly as the true one count: ``optimistic`` ranks the true
        one first among them, ``pessimistic`` last, ``average`` in the middle (the expected
        rank under random tie-breaking; may be a half-integer).

    Returns
    -------
    ndarray of shape (n_samples,)
        Ranks ≥ 1, to feed :func:`hits_at_k`, :func:`mean_reciprocal_rank`, :func:`mean_rank`.

    Examples
    --------
    >>> rank_of_true([[0.1, 0.9, 0.5], [3.0, 1.0, 2.0]], [2, 0])
    array([2., 1.])
    """
    S = np.asarray(scores, dtype=np.float64)
    if S.ndim != 2 or S.shape[0] == 0 or S.shape[1] == 0:
        raise InvalidInputError(f"scores must be a non-empty 2-D (samples × candidates) array, got shape {S.shape}")
    if np.isnan(S).any():
        raise InvalidInputError("scores contain NaN; use -inf for candidates that must never be chosen")
    idx = np.asarray(true_index)
    if idx.shape != (S.shape[0],) or not np.issubdtype(idx.dtype, np.integer):
        raise InvalidInputError(
            f"true_index has shape {np.shape(true_index)} (dtype {idx.dtype}) but scores has shape {S.shape}; "
            "give one integer column index per sample"
        )
    if np.any((idx < 0) | (idx >= S.shape[1])):
        raise InvalidInputError(f"true_index has values outside 0..{S.shape[1] - 1}")
    if ties not in ("average", "optimistic", "pessimistic"):
        raise InvalidParameterError(f"ties={ties!r} must be 'average', 'optimistic' or 'pessimistic'")
    s_true = S[np.arange(S.shape[0]), idx][:, None]
    greater = np.sum(S > s_true, axis=1).astype(np.float64)
    equal_others = np.sum(S == s_true, axis=1).astype(np.float64) - 1.0
    if ties == "optimistic":
        return 1.0 + greater
    if ties == "pessimistic":
        return 1.0 + greater + equal_others
    return 1.0 + greater + equal_others / 2.0


def _check_ranks(ranks):
    r = np.asarray(ranks, dtype=np.float64).ravel()
    if r.size == 0:
        raise InvalidInputError("ranks is empty; at least one sample is needed")
    if not np.all(np.isfinite(r)) or np.any(r < 1):
        raise InvalidInputError("ranks must be finite and >= 1 (1 = the true candidate is ranked first)")
    return r


def hits_at_k(ranks, k=1):
    """Fraction of samples whose true candidate is ranked within the top ``k``.

    Parameters
    ----------
    ranks : array-like of shape (n_samples,)
        1-based rank of the true candidate per sample (see :func:`rank_of_true`).
    k : int or sequence of int, default=1

    Returns
    -------
    float, or ndarray of shape (len(k),) when ``k`` is a sequence

    Examples
    --------
    >>> hits_at_k([1, 3, 2, 10], k=2)
    0.5
    """
    r = _check_ranks(ranks)
    ks = np.atleast_1d(np.asarray(k))
    if not np.issubdtype(ks.dtype, np.integer) or np.any(ks < 1):
        raise InvalidParameterError(f"k={k!r} must be a positive integer or a sequence of them")
    out = np.array([np.mean(r <= kk) for kk in ks])
    return float(out[0]) if np.ndim(k) == 0 else out


def mean_reciprocal_rank(ranks):
    """Mean of ``1 / rank`` of the true candidate (MRR).

    Parameters
    ----------
    ranks : array-like of shape (n_samples,)
        1-based ranks (see :func:`rank_of_true`).

    Returns
    -------
    float

    Examples
    --------
    >>> mean_reciprocal_rank([1, 2, 4])
    0.5833333333333334
    """
    return float(np.mean(1.0 / _check_ranks(ranks)))


def mean_rank(ranks):
    """Mean 1-based rank of the true candidate (lower is better).

    Parameters
    ----------
    ranks : array-like of shape (n_samples,)

    Returns
    -------
    float

    Examples
    --------
    >>> mean_rank([1, 2, 6])
    3.0
    """
    return float(np.mean(_check_ranks(ranks)))


# --------------------------------------------------------------------------------------
# report
# --------------------------------------------------------------------------------------
def _finite_or_none(x):
    x = float(x)
    return x if math.isfinite(x) else None


def regression_report(y_true, y_pred, y_train=None):
    """All regression metrics in a JSON-serialisable dict (used by ``skframe evaluate``).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,) or (n_samples, n_targets)
    y_train : array-like of shape (n_train,) or (n_train, n_targets), optional
        Training targets; when given, RRMSE uses their means (Spyromitros-Xioufis et al.
        2016), otherwise the test means.

    Returns
    -------
    dict
        ``{"r2", "mse", "mae", "rrmse" (list, one per target), "arrmse", "relative_mse",
        "n_samples", "n_targets", "rrmse_reference" ("train" or "test")}``; averaged values
        are uniform averages over targets; non-finite values (a constant target) become
        ``None`` so that the dict serialises to strict JSON.

    Examples
    --------
    >>> rep = regression_report([1.0, 2.0, 3.0], [1.0, 2.0, 4.0])
    >>> rep["mse"], rep["rrmse"]
    (0.3333333333333333, [0.7071067811865476])
    """
    a, b = _check_pair(y_true, y_pred)
    ref = None
    if y_train is not None:
        t = _as_2d(y_train, "y_train")
        if t.shape[1] != a.shape[1]:
            raise InvalidInputError(
                f"y_train has shape {np.shape(y_train)} but y_true has shape {np.shape(y_true)}; "
                "the numbers of targets differ"
            )
        ref = t.mean(axis=0)
    rr = rrmse(a, b, train_means=ref)
    return {
        "r2": _finite_or_none(r2(a, b)),
        "mse": _finite_or_none(mse(a, b)),
        "mae": _finite_or_none(mae(a, b)),
        "rrmse": [_finite_or_none(v) for v in rr],
        "arrmse": _finite_or_none(np.mean(rr)),
        "relative_mse": _finite_or_none(relative_mse(a, b)),
        "n_samples": int(a.shape[0]),
        "n_targets": int(a.shape[1]),
        "rrmse_reference": "train" if ref is not None else "test",
    }
