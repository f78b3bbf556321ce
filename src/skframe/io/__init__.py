"""Data files: readers and writers by format, the missing-value policy and atomic writes.

- :func:`load_dataset` (also :func:`read_dataset`): CSV, ARFF (dense and sparse Mulan
  rows), LIBSVM/SVMlight, NPZ and memory-mapped NPY files into a :class:`Dataset`.
- :func:`iter_chunks`: CSV, LIBSVM and NPY files block by block, for data larger than memory;
  :func:`scan_file` gives their shape in one streaming pass.
- :func:`save_dataset`: CSV or NPZ, written atomically (:func:`atomic_write`).
- :mod:`skframe.io.missing`: what ``missing="error"|"zero"|"mean"|"drop"`` does.
- :mod:`skframe.io.columns`: choosing the feature and target columns by name or position
  (``columns=``, ``drop=``, ``target_columns=`` of the readers); :func:`column_names` gives a
  file's column names.

One module per format: :mod:`skframe.io.csv`, :mod:`skframe.io.arff`,
:mod:`skframe.io.libsvm`, :mod:`skframe.io.npy`. Input files are only ever opened
read-only.
"""

from skframe.io._common import Dataset
from skframe.io.atomic import atomic_write
from skframe.io.columns import Columns
from skframe.io.front import FORMATS, column_names, iter_chunks, load_dataset, read_dataset, save_dataset, scan_file
from skframe.io.missing import MISSING_STRATEGIES

__all__ = [
    "Columns",
    "Dataset",
    "FORMATS",
    "MISSING_STRATEGIES",
    "atomic_write",
    "column_names",
    "iter_chunks",
    "load_dataset",
    "read_dataset",
    "save_dataset",
    "scan_file",
]
