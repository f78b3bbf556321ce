"""Hook implementations of the example plugin (found through the ``skframe`` entry point).

Everything comes from skframe's public module for plugin authors, ``skframe.plugin.api``. skframe imports this
module whenever it looks for plugin commands (``skframe --help`` included), so it imports nothing heavier than
NumPy: the API loads no SciPy, and sparse inputs are recognised without importing SciPy either.
"""

import numpy as np

from skframe.plugin.api import (
    Interval,
    InvalidInputError,
    Kernel,
    KernelTags,
    OutputMatrix,
    hookimpl,
    repr_from_params,
    validate_component,
)

POSITIVE = [Interval("real", 0, None, closed="neither")]


def _is_sparse(A):
    """A SciPy sparse matrix or array (recognised without importing SciPy)."""
    return callable(getattr(A, "tocsr", None)) and hasattr(A, "nnz")


class RationalQuadraticKernel(Kernel):
    """``k(x, y) = (1 + ||x - y||^2 / (2 alpha l^2))^(-alpha)``.

    Parameters
    ----------
    alpha : float > 0, default 1.0
        Scale mixture parameter.
    length_scale : float > 0, default 1.0
    """

    # k(x, x) = 1, and a call changes no state: skframe may call it from several threads
    __skframe_tags__ = KernelTags(normalized=True, thread_safe=True)
    _parameter_constraints = {"alpha": POSITIVE, "length_scale": POSITIVE}
    __repr__ = repr_from_params

    def __init__(self, alpha=1.0, length_scale=1.0):
        self.alpha, self.length_scale = alpha, length_scale
        validate_component(self)

    @property
    def params(self):
        return {"alpha": self.alpha, "length_scale": self.length_scale}

    def __call__(self, X, Y=None):
        if _is_sparse(X) or (Y is not None and _is_sparse(Y)):
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
    _parameter_constraints = {"rho": [Interval("real", 0, 1)]}
    _parameter_hints = {"rho": "0 gives independent outputs, 1 a single shared function"}

    def __init__(self, rho=0.5):
        self.rho = rho
        validate_component(self)  # params: the declared parameters (OutputMatrix's default)

    def matrix(self, d=None, *, Y=None, quantiles=None):
        if d is None:
            d = np.asarray(Y).shape[1]
        return (1 - self.rho) * np.eye(d) + self.rho * np.ones((d, d))


@hookimpl
def register_kernels(register):
    # "rq" is an alias: the same entry under a second name (listed by `skframe plugins`)
    register("rational-quadratic", RationalQuadraticKernel, aliases=("rq",))


@hookimpl
def register_output_matrices(register):
    register("uniform-coupling", UniformCouplingMatrix)


@hookimpl
def register_commands(app):
    @app.command("example-info")
    def example_info():
        """Say what the example plugin provides."""
        print("skframe-example-plugin 0.1.0: kernel 'rational-quadratic' (alias 'rq'), "
              "output matrix 'uniform-coupling'")
