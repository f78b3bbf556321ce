"""Built-in skframe kernels, registered through the ``skframe`` entry-point group.

Import the classes from here or look them up by name with
:func:`skframe.plugin.registry.get_kernel` (``"gaussian"``/``"rbf"``, ``"laplacian"``,
``"linear"``, ``"polynomial"``, ``"cosine"``, ``"tanimoto"``,
``"gaussian-tanimoto"``, ``"precomputed"``).
"""

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

__all__ = [
    "GaussianKernel",
    "LaplacianKernel",
    "LinearKernel",
    "PolynomialKernel",
    "CosineKernel",
    "TanimotoKernel",
    "GaussianTanimotoKernel",
    "PrecomputedKernel",
]
