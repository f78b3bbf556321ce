"""skframe: sketched kernel machines.

Kernel methods with random sketches (Nyström, Gaussian, p-sparsified, ...)
for scalar, multi-output and structured prediction, assembled from plugins.
"""

import importlib

from skframe._version import __version__
from skframe.contract.hookspecs import hookimpl  # pluggy only: importing skframe stays light (no NumPy yet)

__all__ = [
    "__version__",
    "hookimpl",
    "SkframeError",
    "SketchedKernelRidge",
    "SketchedKernelMachine",
    "SketchedKernelClassifier",
    "JointQuantileRegressor",
    "OutputKernelRegressor",
    "DeepOutputKernelRegressor",
    "save",
    "load",
    "TableModel",
    "fit_table",
    "get_kernel",
    "get_sketch",
    "get_loss",
    "get_solver",
    "get_decoder",
]

_LAZY = {
    "SkframeError": ("skframe.exceptions", "SkframeError"),
    "SketchedKernelRidge": ("skframe.models", "SketchedKernelRidge"),
    "SketchedKernelMachine": ("skframe.models", "SketchedKernelMachine"),
    "SketchedKernelClassifier": ("skframe.models", "SketchedKernelClassifier"),
    "JointQuantileRegressor": ("skframe.models", "JointQuantileRegressor"),
    "OutputKernelRegressor": ("skframe.models", "OutputKernelRegressor"),
    "DeepOutputKernelRegressor": ("skframe.models", "DeepOutputKernelRegressor"),
    "save": ("skframe.persistence", "save"),
    # a model file of `skframe fit` or TableModel.save loads as a TableModel; any other as its estimator
    "load": ("skframe.automatic.files", "load"),
    "TableModel": ("skframe.automatic.table_model", "TableModel"),
    "fit_table": ("skframe.automatic.table_model", "fit_table"),
    "get_kernel": ("skframe.contract.registry", "get_kernel"),
    "get_sketch": ("skframe.contract.registry", "get_sketch"),
    "get_loss": ("skframe.contract.registry", "get_loss"),
    "get_solver": ("skframe.contract.registry", "get_solver"),
    "get_decoder": ("skframe.contract.registry", "get_decoder"),
}


def __getattr__(name):
    if name in _LAZY:
        mod, attr = _LAZY[name]
        value = getattr(importlib.import_module(mod), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'skframe' has no attribute {name!r}")
