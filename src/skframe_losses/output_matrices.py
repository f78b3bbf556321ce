"""Built-in output matrices ``M`` of decomposable kernels ``K(x, x') = k(x, x') M``.

Registered under ``identity``, ``quantile``, ``graph`` and ``covariance`` by this
package's plugin module. The formulas follow El Ahmad et al., *Fast Kernel Methods
for Generic Lipschitz Losses via p-Sparsified Sketches* (TMLR 2023), Section 2.2:
joint quantile regression after Sangnier, Fercoq and d'Alché-Buc, *Joint quantile
regression in vector-valued RKHSs* (NeurIPS 2016), and multi-task learning on a task
graph after Evgeniou, Micchelli and Pontil, *Learning multiple tasks with kernel
methods* (JMLR 2005).
"""

from __future__ import annotations

import os

import numpy as np

from skframe.plugin.api import (
    Interval,
    InvalidInputError,
    InvalidParameterError,
    OutputMatrix,
    OutputMatrixTags,
    validate_component,
)
from skframe.plugin.toolbox import check_param, load_adjacency, pinv_sym

__all__ = ["IdentityOutputMatrix", "QuantileOutputMatrix", "GraphOutputMatrix", "CovarianceOutputMatrix"]


def _dimension(d, Y):
    if d is None and Y is not None:
        Y = np.asarray(Y)
        d = 1 if Y.ndim == 1 else Y.shape[1]
    if d is None:
        raise InvalidParameterError("the identity output matrix needs its size: pass d or the training targets Y")
    return int(check_param("d", d, [Interval("int", 1, None)]))


class IdentityOutputMatrix(OutputMatrix):
    """``M = I``: d independent outputs.

    Examples
    --------
    >>> IdentityOutputMatrix().matrix(2)
    array([[1., 0.],
           [0., 1.]])
    """

    name = "identity"

    def matrix(self, d=None, *, Y=None, quantiles=None):
        return np.eye(_dimension(d, Y))


class QuantileOutputMatrix(OutputMatrix):
    """``M_ij = exp(-gamma (tau_i - tau_j)^2)`` for quantile levels ``tau``.

    Parameters
    ----------
    gamma : float, default=1.0
        Coupling: 0 gives the all-ones matrix (one shared function), large values
        approach the identity (independent quantiles).
    quantiles : sequence of float, optional
        Levels in (0, 1); otherwise the levels the model is fitted at (``quantiles=`` of
        :meth:`matrix`).

    Examples
    --------
    >>> QuantileOutputMatrix(gamma=0.0, quantiles=[0.1, 0.9]).matrix()
    array([[1., 1.],
           [1., 1.]])
    """

    name = "quantile"

    _parameter_constraints = {"gamma": [Interval("real", 0, None)]}
    _parameter_hints = {"gamma": "the quantile matrix needs gamma >= 0, e.g. gamma=1"}

    def __init__(self, gamma=1.0, quantiles=None):
        self.gamma = gamma
        validate_component(self)
        self.quantiles = None if quantiles is None else _levels(quantiles).tolist()

    @property
    def params(self):
        out = {"gamma": self.gamma}
        if self.quantiles is not None:
            out["quantiles"] = list(self.quantiles)
        return out

    def matrix(self, d=None, *, Y=None, quantiles=None):
        q = self.quantiles if self.quantiles is not None else quantiles
        if q is None:
            raise InvalidParameterError(
                "output matrix 'quantile' needs quantile levels "
                "(--quantiles or output_matrix_params={'quantiles': [...]})"
            )
        q = _levels(q)
        return np.exp(-self.gamma * (q[:, None] - q[None, :]) ** 2)


def _levels(quantiles):
    q = np.atleast_1d(np.asarray(quantiles, dtype=np.float64))
    if q.ndim != 1 or q.size == 0 or np.any(q <= 0) or np.any(q >= 1):
        raise InvalidParameterError(f"quantiles={quantiles!r} must be levels strictly between 0 and 1")
    return q


class GraphOutputMatrix(OutputMatrix):
    """``M = (mu L + (1 - mu) I)^+`` with ``L = diag(P 1) - P`` the Laplacian of a task graph.

    Parameters
    ----------
    adjacency : array-like of shape (d, d) or path
        Symmetric non-negative adjacency matrix P of the task graph, or a ``.npy`` /
        delimited text file holding it.
    mu : float in [0, 1], default=0.5
        0 gives the identity (independent tasks); 1 relies only on the graph (the
        Laplacian is singular and its pseudo-inverse is used).

    Examples
    --------
    >>> GraphOutputMatrix([[0, 1], [1, 0]], mu=0.0).matrix()
    array([[1., 0.],
           [0., 1.]])
    """

    name = "graph"

    _parameter_constraints = {"mu": [Interval("real", 0, 1)]}
    _parameter_hints = {"mu": "mu weighs the graph prior, choose it in [0, 1]"}

    def __init__(self, adjacency, mu=0.5):
        self.adjacency = os.fspath(adjacency) if isinstance(adjacency, (str, os.PathLike)) else adjacency
        self.mu = mu
        validate_component(self)

    @property
    def params(self):
        P = self.adjacency
        return {"adjacency": P if isinstance(P, str) else np.asarray(P, dtype=np.float64).tolist(), "mu": self.mu}

    def matrix(self, d=None, *, Y=None, quantiles=None):
        if isinstance(self.adjacency, str):
            P = load_adjacency(self.adjacency)
        else:
            P = np.asarray(self.adjacency, dtype=np.float64)
        if P.ndim != 2 or P.shape[0] != P.shape[1]:
            raise InvalidInputError(f"the adjacency matrix must be square, got shape {P.shape}")
        if not np.all(np.isfinite(P)) or np.any(P < 0) or not np.allclose(P, P.T):
            raise InvalidInputError("the adjacency matrix must be symmetric with finite non-negative entries")
        L = np.diag(P.sum(axis=1)) - P
        M = pinv_sym(self.mu * L + (1 - self.mu) * np.eye(P.shape[0]))
        return 0.5 * (M + M.T)


class CovarianceOutputMatrix(OutputMatrix):
    """The empirical covariance of the training targets (d x d, PSD).

    Examples
    --------
    >>> CovarianceOutputMatrix().matrix(Y=[[0.0, 0.0], [2.0, 2.0]])
    array([[2., 2.],
           [2., 2.]])
    """

    name = "covariance"
    __skframe_tags__ = OutputMatrixTags(needs_targets=True)

    def matrix(self, d=None, *, Y=None, quantiles=None):
        if Y is None:
            raise InvalidParameterError("the covariance output matrix is computed from the training targets: pass Y")
        Y = np.asarray(Y, dtype=np.float64)
        if Y.ndim == 1:
            Y = Y[:, None]
        if Y.shape[0] < 2:
            raise InvalidInputError("the covariance output matrix needs at least 2 training targets")
        C = np.atleast_2d(np.cov(Y, rowvar=False))
        if not np.any(np.diag(C) > 0):
            raise InvalidInputError(
                "the training targets are constant: their covariance is zero, use output_matrix='identity'"
            )
        return 0.5 * (C + C.T)
