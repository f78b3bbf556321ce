"""Hook implementations of the example plugin (found through the ``skframe`` entry point)."""

import numpy as np
import scipy.sparse as sp

import skframe
from skframe.exceptions import InvalidInputError, InvalidParameterError
from skframe.protocols import Kernel


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
        for name, value in (("alpha", alpha), ("length_scale", length_scale)):
            if not np.isfinite(value) or value <= 0:
                raise InvalidParameterError(f"{name}={value!r} must be a positive number")
        self.alpha = float(alpha)
        self.length_scale = float(length_scale)

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


@skframe.hookimpl
def register_kernels(register):
    register("rational-quadratic", RationalQuadraticKernel)


@skframe.hookimpl
def register_commands(app):
    @app.command("example-info")
    def example_info():
        """Say what the example plugin provides."""
        print("skframe-example-plugin 0.1.0: kernel 'rational-quadratic'")
