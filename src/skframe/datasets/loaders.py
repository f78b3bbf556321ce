"""Data-file loaders, kept under this name for existing imports.

The readers live in :mod:`skframe.io` (one module per format, the missing-value policy,
atomic writes) and the scaler in :mod:`skframe.core.preprocessing`; this module re-exports them.
"""

from skframe.core.preprocessing import FeatureScaler, scale_features
from skframe.io import FORMATS, MISSING_STRATEGIES, Dataset, iter_chunks, load_dataset, read_dataset, save_dataset

__all__ = [
    "Dataset",
    "load_dataset",
    "read_dataset",
    "iter_chunks",
    "save_dataset",
    "FeatureScaler",
    "scale_features",
    "FORMATS",
    "MISSING_STRATEGIES",
]
