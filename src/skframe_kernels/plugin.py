"""Hook implementation registering the built-in kernels.

This module is the value of the ``kernels`` entry point in group ``skframe``;
it uses only skframe's public plugin API, exactly as a third-party plugin would.
"""

import skframe_kernels as kernels
from skframe.plugin.api import hookimpl
from skframe_kernels._ard import GaussianARDKernel

__all__ = ["register_kernels"]


@hookimpl
def register_kernels(register):
    """Register the built-in kernels (the hook specification documents ``register``)."""
    register("gaussian", kernels.GaussianKernel, aliases=("rbf",))
    register("laplacian", kernels.LaplacianKernel)
    register("linear", kernels.LinearKernel)
    register("polynomial", kernels.PolynomialKernel)
    register("cosine", kernels.CosineKernel)
    register("tanimoto", kernels.TanimotoKernel)
    register("gaussian-tanimoto", kernels.GaussianTanimotoKernel)
    register("gaussian-ard", GaussianARDKernel)
    register("precomputed", kernels.PrecomputedKernel)
