"""Output matrices ``M`` of matrix-valued decomposable kernels ``K(x, x') = k(x, x') M``.

A decomposable kernel couples the d outputs through a d x d positive semi-definite
matrix M: the model predicts ``f(x) = z(x)^T W M`` and is penalised by
``tr(W M W^T)`` (El Ahmad et al., *Fast Kernel Methods for Generic Lipschitz Losses
via p-Sparsified Sketches*, TMLR 2023, Section 2.2). ``M = I`` gives d independent
models.

Output matrices are a plugin kind: plugins register factories through the
``register_output_matrices`` hook and :func:`skframe.contract.registry.get_output_matrix`
builds them by name. The built-in ones are

* ``identity`` — independent outputs;
* ``quantile`` — ``M_ij = exp(-gamma (tau_i - tau_j)^2)`` for joint quantile regression;
* ``graph`` — ``(mu L + (1 - mu) I)^{-1}`` from a task adjacency matrix P with
  Laplacian ``L = diag(P 1) - P``; a pseudo-inverse when singular;
* ``covariance`` — the empirical covariance of the training targets.

This module holds the base class :class:`OutputMatrix`, the checks, and thin
functions (:func:`quantile_matrix`, ...) that resolve the built-ins through the
registry. :func:`build_output_matrix` resolves a name (as used by the CLI's
``--output-matrix``), a component object or an explicit array.
"""

from __future__ import annotations

import os

import numpy as np

from skframe.contract.protocols import OutputMatrix  # the protocol of the kind; re-exported here
from skframe.contract.registry import get_output_matrix
from skframe.exceptions import DataFormatError, InvalidParameterError

__all__ = [
    "OUTPUT_MATRICES",
    "OutputMatrix",
    "identity_matrix",
    "quantile_matrix",
    "graph_matrix",
    "covariance_matrix",
    "load_adjacency",
    "check_output_matrix",
    "build_output_matrix",
]

#: Names of the built-in output matrices (plugins may register more; see ``skframe plugins``).
OUTPUT_MATRICES = ("identity", "quantile", "graph", "covariance")


def _get(name, **params):
    return get_output_matrix(name, **params)


def identity_matrix(d):
    """The d x d identity: independent outputs.

    Examples
    --------
    >>> identity_matrix(2)
    array([[1., 0.],
           [0., 1.]])
    """
    return _get("identity").matrix(d)


def quantile_matrix(quantiles, gamma=1.0):
    """``M_ij = exp(-gamma (tau_i - tau_j)^2)`` for quantile levels ``tau``.

    Parameters
    ----------
    quantiles : sequence of float
        Quantile levels in (0, 1).
    gamma : float, default=1.0
        Coupling: 0 gives the all-ones matrix, large values approach the identity.

    Returns
    -------
    ndarray of shape (d, d)

    Examples
    --------
    >>> quantile_matrix([0.1, 0.9], gamma=0.0)
    array([[1., 1.],
           [1., 1.]])
    """
    return _get("quantile", gamma=gamma, quantiles=quantiles).matrix()


def graph_matrix(adjacency, mu=0.5):
    """``M = (mu L + (1 - mu) I)^{-1}`` with L the Laplacian of a task graph.

    Parameters
    ----------
    adjacency : array-like of shape (d, d) or path
        Symmetric non-negative adjacency matrix P (or a file, see :func:`load_adjacency`).
    mu : float in [0, 1], default=0.5
        0 gives the identity; 1 relies only on the graph (pseudo-inverse of the Laplacian).

    Examples
    --------
    >>> graph_matrix([[0, 1], [1, 0]], mu=0.0)
    array([[1., 0.],
           [0., 1.]])
    """
    return _get("graph", adjacency=adjacency, mu=mu).matrix()


def covariance_matrix(Y):
    """Empirical covariance of the training targets Y of shape (n, d) (d x d, PSD)."""
    return _get("covariance").matrix(Y=Y)


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


def check_output_matrix(M, d):
    """Validate an output matrix: d x d, finite, symmetric PSD (within rounding); return it symmetrised."""
    M = np.asarray(M, dtype=np.float64)
    if M.shape != (d, d):
        raise InvalidParameterError(
            f"the output matrix has shape {M.shape} but the targets have {d} columns; it must be {d} x {d}"
        )
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
    spec : None, str, ComponentSpec, OutputMatrix or array-like
        A registered name (``"identity"``, ``"quantile"``, ``"graph"``, ``"covariance"``
        or one a plugin adds), a component object, or an explicit matrix. None means
        the identity.
    Y : ndarray of shape (n, d)
        Training targets (d is read from it; the covariance uses it).
    params : dict, optional
        Parameters of a named matrix: ``gamma`` (and ``quantiles``) for "quantile";
        ``adjacency`` (array or path) and ``mu`` for "graph".
    quantiles : sequence of float, optional
        The levels the model is fitted at (used by "quantile" when ``params`` has none).

    Returns
    -------
    ndarray of shape (d, d)
    """
    d = Y.shape[1]
    if spec is None:
        spec = "identity"
    if isinstance(spec, (list, tuple, np.ndarray)):
        return check_output_matrix(spec, d)
    component = _get(spec, **dict(params or {}))
    return check_output_matrix(component.matrix(d, Y=Y, quantiles=quantiles), d)
