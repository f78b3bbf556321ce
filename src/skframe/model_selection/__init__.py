"""Choosing a model: cross-validated search of λ and kernel parameters, sketch-size selection curves, and the
default folds every automatic choice uses (:func:`default_folds`)."""

from skframe.model_selection.search import KernelSearchCV, default_param_grid
from skframe.models._folds import CV_ORDERS, default_folds, fold_splitter

__all__ = ["KernelSearchCV", "default_param_grid", "default_folds", "fold_splitter", "CV_ORDERS"]
