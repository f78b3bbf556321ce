"""The formats the readers know and what every reader checks first: which format a path
is in (:func:`resolve_format`), that the file is there and not empty (:func:`check_file`),
the ``missing`` / ``sparse`` / ``header`` options (:func:`check_options`), and the type of
the ``X`` a reader gives back (:func:`final_x`)."""

from __future__ import annotations

import os

import numpy as np
import scipy.sparse as sp

from skframe.exceptions import DataFormatError, InvalidInputError, InvalidParameterError, SkframeError
from skframe.io._common import name_of
from skframe.io.compressed import check_regular, compression_of, file_head, inner_suffix
from skframe.io.missing import check_strategy

__all__ = ["FORMATS", "resolve_format", "sniff_format", "check_file", "check_options", "final_x", "file_dependencies"]

# Each format and its file extensions; fmt= (CLI: --format) takes a format or an extension without its dot.
_EXTENSIONS = {"csv": (".csv", ".tsv", ".psv"), "npz": (".npz",), "npy": (".npy",), "arff": (".arff",),
               "libsvm": (".svm", ".libsvm", ".svmlight"), "parquet": (".parquet", ".pq"),
               "feather": (".feather", ".arrow", ".ipc")}
#: File extensions recognised by :func:`~skframe.io.load_dataset` and the format each one means.
FORMATS = {ext: fmt for fmt, exts in _EXTENSIONS.items() for ext in exts}
_ALIASES = {**{ext.lstrip("."): fmt for ext, fmt in FORMATS.items()}, **{fmt: fmt for fmt in _EXTENSIONS}}
_SPARSE_DENSITY_THRESHOLD = 0.3


def resolve_format(path, fmt=None):
    """The format of ``path``: ``fmt`` when given (a format or an extension), else its extension's.

    Examples
    --------
    >>> resolve_format("train.svmlight"), resolve_format("train.txt", "svm")
    ('libsvm', 'libsvm')
    """
    if fmt is not None:
        key = str(fmt).lower().lstrip(".")
        if key not in _ALIASES:
            raise InvalidParameterError(f"fmt={fmt!r} is not a known format; choose one of {sorted(_ALIASES)}")
        return _ALIASES[key]
    ext = inner_suffix(path)  # data.csv.gz -> .csv
    if ext not in FORMATS:
        check_regular(path)  # its content is read to tell its format: a FIFO is refused first, by its type
        sniffed = sniff_format(path)
        if sniffed is not None:
            return sniffed
        raise DataFormatError(
            f"cannot tell the format of {name_of(path)} from its extension {ext or '(none)'!r}; "
            f"use one of {sorted(FORMATS)} or pass fmt= (CLI: --format) with one of {sorted(_EXTENSIONS)}"
        )
    return FORMATS[ext]


def sniff_format(path):
    """The format a file's first bytes tell (Parquet, Arrow/Feather, or compressed text read as CSV), else None."""
    head = file_head(path, 8)
    if head.startswith(b"PAR1"):
        return "parquet"
    if head.startswith(b"ARROW1"):
        return "feather"
    if compression_of(path) is not None:
        return "csv"
    return None


def file_dependencies(path, fmt=None):
    """``(library, feature)`` pairs of the optional libraries reading ``path`` takes, for :func:`skframe.deps.check`.

    Parquet and Arrow/Feather files need pyarrow, zstd-compressed files zstandard; the others none. A file that
    is not there, or whose format cannot be told, needs nothing here (its reader says what is wrong).

    >>> file_dependencies("train.parquet")
    [('pyarrow', 'the parquet file train.parquet')]
    """
    needs = []
    try:
        kind = resolve_format(path, fmt)
    except SkframeError:  # an unknown format: the reader says so, with the fix
        kind = None
    if kind in ("parquet", "feather"):
        needs.append(("pyarrow", f"the {kind} file {name_of(path)}"))
    if str(path).lower().endswith(".zst") or compression_of(path) == "zstd":
        needs.append(("zstandard", f"the zstd-compressed file {name_of(path)}"))
    return needs


def check_file(path):
    """Raise unless ``path`` is an existing, non-empty regular file (a FIFO, device or socket is refused by its
    type, whatever its name: :func:`skframe.io.compressed.check_regular`)."""
    if not os.path.exists(path):
        raise InvalidInputError(f"data file {path!r} does not exist; check the path")
    if os.path.isdir(path):
        raise InvalidInputError(f"{path!r} is a directory; give the path of a data file")
    check_regular(path)
    if os.path.getsize(path) == 0:
        raise DataFormatError(f"{name_of(path)} is empty (0 bytes); give a file with data rows")


def check_options(missing, sparse, header):
    """Raise unless the readers' ``missing``, ``sparse`` and ``header`` options are known values."""
    check_strategy(missing)
    if not (sparse == "auto" or sparse is True or sparse is False):
        raise InvalidParameterError(f"sparse={sparse!r} must be 'auto', True or False")
    if header not in ("auto", True, False):
        raise InvalidParameterError(f"header={header!r} must be 'auto', True or False")


def final_x(X, sparse):
    """The ``X`` a reader gives back: CSR (sorted indices) or a C-contiguous ndarray, both float64.

    ``sparse="auto"`` keeps a sparse X sparse when its density is below 0.3 and a dense X
    dense; ``True`` / ``False`` force CSR / dense. A memory map is returned as it is.
    """
    if sp.issparse(X):
        density = X.nnz / max(1, X.shape[0] * X.shape[1])
        if sparse is False or (sparse == "auto" and density >= _SPARSE_DENSITY_THRESHOLD):
            return np.ascontiguousarray(X.toarray(), dtype=np.float64)
        X = sp.csr_matrix(X, dtype=np.float64)
        X.sort_indices()
        return X
    if sparse is True:
        return sp.csr_matrix(X)
    if isinstance(X, np.memmap):
        return X
    return np.ascontiguousarray(X, dtype=np.float64)
