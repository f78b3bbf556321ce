"""scikit-learn estimators assembled from skframe components."""

from .ridge import SketchedKernelRidge

__all__ = ["SketchedKernelRidge"]
