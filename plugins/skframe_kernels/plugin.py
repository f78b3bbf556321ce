"""Hook implementation registering the built-in kernels.

This module is the value of the ``kernels`` entry point in group ``skframe``;
it uses only skframe's public plugin API, exactly as a third-party plugin would.
"""

from skframe.plugin.api import hookimpl
from skframe_kernels.kernels import (
    CosineKernel,
    GaussianKernel,
    GaussianTanimotoKernel,
    LaplacianKernel,
    LinearKernel,
    PolynomialKernel,
    PrecomputedKernel,
    TanimotoKernel,
)

__all__ = ["register_kernels"]


@hookimpl
def register_kernels(register):
    """Register the built-in kernel factories.

    Parameters
    ----------
    register : callable
        ``register(name, factory, aliases=())`` callback provided by skframe.
    """
    register("gaussian", GaussianKernel, aliases=("rbf",))
    register("laplacian", LaplacianKernel)
    register("linear", LinearKernel)
    register("polynomial", PolynomialKernel)
    register("cosine", CosineKernel)
    register("tanimoto", TanimotoKernel)
    register("gaussian-tanimoto", GaussianTanimotoKernel)
    register("precomputed", PrecomputedKernel)
