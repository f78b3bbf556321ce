"""Joint quantile regression: the level check, the pinball loss and the crossing loss."""

from __future__ import annotations

import numpy as np

from skframe.exceptions import InvalidInputError, InvalidParameterError
from skframe.metrics._checks import _as_2d

__all__ = ["check_quantiles", "pinball_loss", "crossing_loss"]


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
    (El Ahmad et al., *Fast Kernel Methods for Generic Lipschitz Losses via p-Sparsified
    Sketches*, TMLR 2023, §4.2, Table 1). With one level this equals
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
        raise InvalidInputError(
            f"y has shape {np.shape(y)} but Q has shape {np.shape(Q)}; the numbers of samples differ"
        )
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
