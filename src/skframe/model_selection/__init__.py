"""Choosing a model: cross-validated search of λ and kernel parameters, sketch-size selection curves."""

from skframe.model_selection.search import KernelSearchCV, default_param_grid

__all__ = ["KernelSearchCV", "default_param_grid"]
