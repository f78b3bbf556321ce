"""Output matrices ``M`` of matrix-valued decomposable kernels ``K(x, x') = k(x, x') M`` (seed 002 §2.2).

A decomposable kernel couples the d outputs through a d x d positive semi-definite
matrix M: the model predicts ``f(x) = z(x)^T W M`` and is penalised by
``tr(W M W^T)``. ``M = I`` gives d independent models. The builders here are

* :func:`identity_matrix` — independent outputs;
* :func:`quantile_matrix` — ``M_ij = exp(-gamma (tau_i - tau_j)^2)`` for joint quantile
  regression (seed 002 Example 1, after Sangnier et al. 2016);
* :func:`graph_matrix` — ``(mu L + (1 - mu) I)^{-1}`` from a task adjacency matrix P with
  Laplacian ``L = diag(P 1) - P`` (seed 002 Example 2); a pseudo-inverse when singular;
* :func:`covariance_matrix` — the empirical covariance of the training targets.

:func:`build_output_matrix` resolves a name (as used by the CLI's ``--output-matrix``)
or an explicit array.
"""

from __future__ import annotations

import os

import numpy as np

from ._validation import check_scalar
from .exceptions import DataFormatError, InvalidInputError, InvalidParameterError
from .linalg import pinv_sym

__all__ = [
    "OUTPUT_MATRICES",
    "identity_matrix",
    "quantile_matrix",
    "graph_matrix",
    "covariance_matrix",
    "load_adjacency",
    "check_output_matrix",
    "build_output_matrix",
]

OUTPUT_MATRICES = ("identity", "quantile", "graph", "covariance")


def identity_matrix(d):
    """The d x d identity: independent outputs.

    Examples
    --------
    >>> identity_matrix(2)
    array([[1., 0.],
           [0., 1.]])
    """
    d = check_scalar(d, "d", kind=int, low=1)
    return np.eye(d)


def quantile_matrix(quantiles, gamma=1.0):
    """``M_ij = exp(-gamma (tau_i - tau_j)^2)`` for quantile levels ``tau`` (seed 002 Example 1).

    Parameters
    ----------
    quantiles : sequence of float
        Quantile levels in (0, 1).
    gamma : float, default=1.0
        Coupling: 0 gives the all-ones matrix (one shared function), large values
        approach the identity (independent quantiles).

    Returns
    -------
    ndarray of shape (d, d)

    Examples
    --------
    >>> quantile_matrix([0.1, 0.9], gamma=0.0)
    array([[1., 1.],
           [1., 1.]])
    """
    q = np.atleast_1d(np.asarray(quantiles, dtype=np.float64))
    if q.ndim != 1 or q.size == 0 or np.any(q <= 0) or np.any(q >= 1):
        raise InvalidParameterError(f"quantiles={quantiles!r} must be levels strictly between 0 and 1")
    gamma = check_scalar(gamma, "gamma", low=0, fix="the quantile matrix needs gamma >= 0, e.g. gamma=1")
    return np.exp(-gamma * (q[:, None] - q[None, :]) ** 2)


def load_adjacency(path):
    """Read a square adjacency matrix from ``.npy`` or a delimited text file (comma, whitespace)."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise InvalidParameterError(f"adjacency file {path!r} does not exist; give a .npy or .csv d x d matrix")
    try:
        if path.endswith(".npy"):
            P = np.load(path, allow_pickle=False)
        else:
            with open(path) as fh:
                text = fh.read()
            delim = "," if "," in text else None
            P = np.loadtxt(path, delimiter=delim, ndmin=2)
    except (ValueError, OSError) as exc:
        raise DataFormatError(f"cannot read the adjacency matrix in {path!r}: {exc}") from exc
    return np.asarray(P, dtype=np.float64)


def graph_matrix(adjacency, mu=0.5):
    """``M = (mu L + (1 - mu) I)^{-1}`` with L the Laplacian of a task graph (seed 002 Example 2).

    Parameters
    ----------
    adjacency : array-like of shape (d, d) or path
        Symmetric non-negative adjacency matrix P of the task graph (or a file, see
        :func:`load_adjacency`).
    mu : float in [0, 1], default=0.5
        0 gives the identity (independent tasks), 1 relies only on the graph
        (the Laplacian is singular then and its pseudo-inverse is used).

    Examples
    --------
    >>> graph_matrix([[0, 1], [1, 0]], mu=0.0)
    array([[1., 0.],
           [0., 1.]])
    """
    if isinstance(adjacency, (str, os.PathLike)):
        adjacency = load_adjacency(adjacency)
    P = np.asarray(adjacency, dtype=np.float64)
    if P.ndim != 2 or P.shape[0] != P.shape[1]:
        raise InvalidInputError(f"the adjacency matrix must be square, got shape {P.shape}")
    if not np.all(np.isfinite(P)) or np.any(P < 0) or not np.allclose(P, P.T):
        raise InvalidInputError("the adjacency matrix must be symmetric with finite non-negative entries")
    mu = check_scalar(mu, "mu", low=0, high=1, fix="mu weighs the graph prior, choose it in [0, 1]")
    L = np.diag(P.sum(axis=1)) - P
    A = mu * L + (1 - mu) * np.eye(P.shape[0])
    M = pinv_sym(A)
    return 0.5 * (M + M.T)


def covariance_matrix(Y):
    """Empirical covariance of the training targets (d x d, PSD).

    Parameters
    ----------
    Y : array-like of shape (n, d)
    """
    Y = np.asarray(Y, dtype=np.float64)
    if Y.ndim == 1:
        Y = Y[:, None]
    if Y.shape[0] < 2:
        raise InvalidInputError("the covariance output matrix needs at least 2 training targets")
    C = np.atleast_2d(np.cov(Y, rowvar=False))
    if not np.any(np.diag(C) > 0):
        raise InvalidInputError("the training targets are constant: their covariance is zero, use output_matrix='identity'")
    return 0.5 * (C + C.T)


def check_output_matrix(M, d):
    """Validate a user-given output matrix: d x d, finite, symmetric PSD (within rounding)."""
    M = np.asarray(M, dtype=np.float64)
    if M.shape != (d, d):
        raise InvalidParameterError(f"the output matrix has shape {M.shape} but the targets have {d} columns; it must be {d} x {d}")
    if not np.all(np.isfinite(M)):
        raise InvalidParameterError("the output matrix contains NaN or inf")
    if not np.allclose(M, M.T, rtol=1e-8, atol=1e-12 * max(1.0, np.abs(M).max())):
        raise InvalidParameterError("the output matrix must be symmetric")
    M = 0.5 * (M + M.T)
    w = np.linalg.eigvalsh(M)
    if w[-1] <= 0 or w[0] < -1e-8 * w[-1]:
        raise InvalidParameterError("the output matrix must be positive semi-definite and non-zero")
    return M


def build_output_matrix(spec, Y, params=None, *, quantiles=None):
    """Resolve an output-matrix specification into a d x d array.

    Parameters
    ----------
    spec : None, {"identity", "quantile", "graph", "covariance"} or array-like
        None means the identity.
    Y : ndarray of shape (n, d)
        Training targets (d is read from it; the covariance uses it).
    params : dict, optional
        ``gamma`` for "quantile"; ``adjacency`` (array or path) and ``mu`` for "graph".
    quantiles : sequence of float, optional
        Levels for "quantile" when ``params`` has no ``quantiles``.

    Returns
    -------
    ndarray of shape (d, d)
    """
    params = dict(params or {})
    d = Y.shape[1]
    if spec is None:
        spec = "identity"
    if not isinstance(spec, str):
        return check_output_matrix(spec, d)
    name = spec.strip().lower()

    def _no_extra(allowed):
        extra = sorted(set(params) - set(allowed))
        if extra:
            raise InvalidParameterError(
                f"unknown parameter(s) {extra} for output matrix {name!r}; allowed: {sorted(allowed) or 'none'}"
            )

    if name == "identity":
        _no_extra(())
        return identity_matrix(d)
    if name == "quantile":
        _no_extra(("gamma", "quantiles"))
        q = params.get("quantiles", quantiles)
        if q is None:
            raise InvalidParameterError("output matrix 'quantile' needs quantile levels (--quantiles or output_matrix_params)")
        M = quantile_matrix(q, params.get("gamma", 1.0))
        return check_output_matrix(M, d)
    if name == "graph":
        _no_extra(("adjacency", "mu"))
        if "adjacency" not in params:
            raise InvalidParameterError(
                "output matrix 'graph' needs an adjacency matrix: output_matrix_params={'adjacency': path_or_array, 'mu': 0.5} "
                "(CLI: --output-matrix-param adjacency=FILE.csv --output-matrix-param mu=0.5)"
            )
        return check_output_matrix(graph_matrix(params["adjacency"], params.get("mu", 0.5)), d)
    if name == "covariance":
        _no_extra(())
        return covariance_matrix(Y)
    raise InvalidParameterError(
        f"unknown output matrix {spec!r}; use one of {', '.join(OUTPUT_MATRICES)} or pass a d x d array"
    )
