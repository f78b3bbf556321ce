"""Built-in skframe kernels, registered through the ``skframe`` entry-point group.

Import the classes from here or look them up by name with
:func:`skframe.contract.registry.get_kernel` (``"gaussian"``/``"rbf"``, ``"laplacian"``,
``"linear"``, ``"polynomial"``, ``"cosine"``, ``"tanimoto"``,
``"gaussian-tanimoto"``, ``"precomputed"``). The names are those of
:mod:`skframe_kernels.kernels`: the kernel classes and the sizes that tune their Gram blocks.
"""

from skframe_kernels.kernels import *  # noqa: F403
from skframe_kernels.kernels import __all__  # noqa: F401  (the package exports what the module does)
