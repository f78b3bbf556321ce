"""Hook implementations of the example plugin (found through the ``skframe`` entry point)."""

import numpy as np
import scipy.sparse as sp

import skframe
from skframe.core.output_matrices import OutputMatrix
from skframe.exceptions import InvalidInputError
from skframe.plugin.protocols import Kernel
from skframe.validation import check_scalar


class RationalQuadraticKernel(Kernel):
    """``k(x, y) = (1 + ||x - y||^2 / (2 alpha l^2))^(-alpha)``.

    Parameters
    ----------
    alpha : float > 0, default 1.0
        Scale mixture parameter.
    length_scale : float > 0, default 1.0
    """

    normalized = True

    def __init__(self, alpha=1.0, length_scale=1.0):
        self.alpha = check_scalar(alpha, "alpha", low=0, low_inclusive=False)
        self.length_scale = check_scalar(length_scale, "length_scale", low=0, low_inclusive=False)

    @property
    def params(self):
        return {"alpha": self.alpha, "length_scale": self.length_scale}

    def __call__(self, X, Y=None):
        if sp.issparse(X) or (Y is not None and sp.issparse(Y)):
            raise InvalidInputError("rational-quadratic kernel needs dense inputs; call X.toarray()")
        X = np.asarray(X, dtype=float)
        Y = X if Y is None else np.asarray(Y, dtype=float)
        d2 = (X**2).sum(1)[:, None] + (Y**2).sum(1)[None, :] - 2 * X @ Y.T
        np.maximum(d2, 0, out=d2)
        return (1 + d2 / (2 * self.alpha * self.length_scale**2)) ** (-self.alpha)

    def diag(self, X):
        return np.ones(X.shape[0])


class UniformCouplingMatrix(OutputMatrix):
    """Output matrix ``M = (1 - rho) I + rho 1 1^T``: every pair of outputs shares the same coupling.

    Parameters
    ----------
    rho : float in [0, 1], default 0.5
        0 gives independent outputs, 1 a single shared function.
    """

    name = "uniform-coupling"

    def __init__(self, rho=0.5):
        self.rho = check_scalar(rho, "rho", low=0, high=1)

    @property
    def params(self):
        return {"rho": self.rho}

    def matrix(self, d=None, *, Y=None, quantiles=None):
        if d is None:
            d = np.asarray(Y).shape[1]
        return (1 - self.rho) * np.eye(d) + self.rho * np.ones((d, d))


@skframe.hookimpl
def register_kernels(register):
    # "rq" is an alias: the same entry under a second name (listed by `skframe plugins`)
    register("rational-quadratic", RationalQuadraticKernel, aliases=("rq",))


@skframe.hookimpl
def register_output_matrices(register):
    register("uniform-coupling", UniformCouplingMatrix)


@skframe.hookimpl
def register_commands(app):
    @app.command("example-info")
    def example_info():
        """Say what the example plugin provides."""
        print("skframe-example-plugin 0.1.0: kernel 'rational-quadratic' (alias 'rq'), "
              "output matrix 'uniform-coupling'")
