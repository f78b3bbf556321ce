"""Embedded data sets and data-file loaders.

- :func:`load_default` / :func:`make_friedman_outliers`: the Friedman robust-regression
  problem of seed 002 §4.1, the default data set of ``skframe fit``.
- :func:`load_dataset` / :func:`save_dataset`: CSV, NPZ, ARFF (Mulan) and LIBSVM files.
- :class:`FeatureScaler` / :func:`scale_features`: standardisation that keeps sparse data sparse.
"""

from .loaders import (
    FORMATS,
    MISSING_STRATEGIES,
    Dataset,
    FeatureScaler,
    load_dataset,
    save_dataset,
    scale_features,
)
from .synthetic import TrainTestDataset, friedman_function, load_default, make_friedman_outliers

__all__ = [
    "Dataset",
    "TrainTestDataset",
    "FeatureScaler",
    "FORMATS",
    "MISSING_STRATEGIES",
    "friedman_function",
    "load_dataset",
    "load_default",
    "make_friedman_outliers",
    "save_dataset",
    "scale_features",
]
