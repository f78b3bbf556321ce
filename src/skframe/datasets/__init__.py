"""Data sets and data-file loaders.

- :func:`load_default` / :func:`make_friedman_outliers`: the Friedman robust-regression
  problem (El Ahmad et al., *Fast Kernel Methods for Generic Lipschitz Losses via
  p-Sparsified Sketches*, TMLR 2023, §4.1), the default data set of ``skframe fit``.
- :func:`load_rf1`, :func:`load_bibtex`, :func:`load_solubility`: published data sets read
  from the local data directory (``$SKFRAME_DATA``, default ``~/skframe_data``), checked by
  SHA-256; :func:`data_home` says where it is.
- :func:`load_dataset` / :func:`iter_chunks` / :func:`save_dataset`: CSV, NPZ, NPY, ARFF
  (Mulan) and LIBSVM files (see :mod:`skframe.io`).
- :class:`FeatureScaler` / :func:`scale_features`: standardisation that keeps sparse data
  sparse (see :mod:`skframe.core.preprocessing`).
"""

from skframe.core.preprocessing import FeatureScaler, scale_features
from skframe.datasets.published import DATA_ENV, data_home, dataset_file, load_bibtex, load_rf1, load_solubility
from skframe.datasets.synthetic import TrainTestDataset, friedman_function, load_default, make_friedman_outliers
from skframe.io import FORMATS, MISSING_STRATEGIES, Dataset, iter_chunks, load_dataset, read_dataset, save_dataset

__all__ = [
    "DATA_ENV",
    "Dataset",
    "TrainTestDataset",
    "FeatureScaler",
    "FORMATS",
    "MISSING_STRATEGIES",
    "data_home",
    "dataset_file",
    "friedman_function",
    "iter_chunks",
    "load_bibtex",
    "load_dataset",
    "load_default",
    "load_rf1",
    "load_solubility",
    "make_friedman_outliers",
    "read_dataset",
    "save_dataset",
    "scale_features",
]
