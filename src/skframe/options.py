"""Tuning knobs of the numerical core, passed down as one object instead of module constants."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from skframe.exceptions import InvalidParameterError

__all__ = ["ComputeOptions", "DEFAULT_OPTIONS", "PRECISIONS", "compute_dtype", "parse_bytes"]

#: the precisions of kernel blocks and sketch products (``ComputeOptions.dtype``)
PRECISIONS = ("float64", "float32")

_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}


def parse_bytes(value):
    """Bytes from an int or a string such as ``"2GB"``, ``"512 MiB"`` or ``"1e9"``.

    A number without a unit counts bytes and must be a whole number (``1.5`` is refused, not read as 1 byte:
    write ``"1.5GB"``); with a unit (kB, MB, GB, TB = powers of 1000, KiB, MiB, GiB, TiB = powers of 1024, B) a
    fraction is rounded down to whole bytes (``"1.5GB"`` = 1 500 000 000). One-letter units (``"2G"``) are refused,
    as they are read as powers of 1000 by some tools and of 1024 by others.

    >>> parse_bytes("2GB")
    2000000000
    >>> parse_bytes("64 MiB")
    67108864
    """
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if not 0 < value < float("inf"):
            raise InvalidParameterError(f"memory size {value!r} must be positive, e.g. '2GB'")
        if value != int(value) or value < 1:
            raise InvalidParameterError(_fraction_of_bytes(value, value))
        return int(value)
    text = str(value).strip().lower().replace(" ", "")
    num = text.rstrip("abcdefghijklmnopqrstuvwxyz")
    unit = text[len(num):]
    try:
        number = float(num)
    except ValueError:
        number = None
    if number is None or unit not in _UNITS or not 0 < number < float("inf"):  # "inf" and "nan" included
        raise InvalidParameterError(
            f"memory size {value!r} is not understood; write a positive number with a unit, e.g. '2GB' or '512MiB' "
            "(kB, MB, GB, TB: powers of 1000; KiB, MiB, GiB, TiB: of 1024; a one-letter unit such as G is ambiguous)"
        )
    if unit in ("", "b") and number != int(number):  # a fraction of a byte: a unit was left out
        raise InvalidParameterError(_fraction_of_bytes(value, num))
    size = int(number * _UNITS[unit])
    if size < 1:
        raise InvalidParameterError(f"memory size {value!r} is less than one byte; write e.g. '2GB' or '512MiB'")
    return size


def _fraction_of_bytes(value, number):
    return (f"memory size {value!r} counts bytes (no unit, or B) and is no whole number of bytes; write a unit, "
            f"e.g. '{number}GB' (powers of 1000) or '{number}GiB' (powers of 1024)")


@dataclass(frozen=True)
class ComputeOptions:
    """How the core computes: block sizes, tolerances, precision and backend.

    Parameters
    ----------
    block_bytes : int
        Budget for one dense temporary block (a kernel block, a chunk of features).
    chunk_rows : int or None
        Rows per chunk; None derives it from ``block_bytes``.
    rtol : float or None
        Relative eigenvalue tolerance of sketched Gram matrices (None: size-based default).
    dtype : {"float64", "float32"}
        Precision of kernel blocks and sketch products (m x m accumulations stay float64).
    backend : str
        Array backend (``"numpy"``; others come from :mod:`skframe.compute.backend`).
    memory_budget : int or None
        Total bytes a fit may allocate beyond the data; None means no limit is enforced.
    engine : {"numpy", "numba", "cupy"} or None
        Engine of the inner loops (kernel blocks, sparse sketch products). A fit's execution
        plan sets it from the size of the whole fit; None lets each routine choose from the
        size of its own work (:func:`skframe.core.engine.select_engine`).
    blas_threads : int or None
        BLAS threads of the fit's dense algebra (the execution plan's choice; 1 for small fits);
        None leaves BLAS as it is.
    kept_dtype : {"auto", "float64", "float32"}
        Precision of the n x m kernel block a Newton fit keeps in memory (its features kept as two factors,
        every product in float64): ``"auto"`` is float32, the rule
        :func:`skframe.compute.plan_newton.kept_block_dtype`; ``"float64"`` keeps it exactly. With
        ``dtype="float32"`` every kernel block is float32.
    """

    block_bytes: int = 64_000_000
    chunk_rows: int | None = None
    rtol: float | None = None
    dtype: str = "float64"
    backend: str = "numpy"
    memory_budget: int | None = None
    engine: str | None = None
    blas_threads: int | None = None
    kept_dtype: str = "auto"

    def rows_per_block(self, n_cols, itemsize=8):
        """Rows per chunk so that a (rows x n_cols) block stays within ``block_bytes``."""
        if self.chunk_rows:
            return int(self.chunk_rows)
        return int(max(1, self.block_bytes // (max(int(n_cols), 1) * int(itemsize))))

    def replace(self, **changes):
        """A copy with some fields changed."""
        return replace(self, **changes)


DEFAULT_OPTIONS = ComputeOptions()


def compute_dtype(precision=None):
    """The NumPy dtype of a compute precision: the one dtype helper of skframe.

    Parameters
    ----------
    precision : ComputeOptions, str, NumPy dtype or scalar type, or None
        ``ComputeOptions`` (its ``dtype``), ``"float64"`` / ``"float32"``, ``np.float32``,
        ``np.dtype("float64")``, ...; None (or options without ``dtype``) is float64.

    Returns
    -------
    numpy.dtype
        ``float64`` or ``float32``.

    Raises
    ------
    InvalidParameterError
        Any other precision.

    >>> compute_dtype(ComputeOptions(dtype="float32"))
    dtype('float32')
    >>> compute_dtype("float64").itemsize
    8
    """
    if isinstance(precision, (str, np.dtype, type)) or precision is None:
        name = precision
    else:
        name = getattr(precision, "dtype", None)
    name = "float64" if name is None else name
    try:
        dtype = np.dtype(name)
    except TypeError:
        dtype = None
    if dtype is None or dtype.name not in PRECISIONS:
        raise InvalidParameterError(f"dtype={name!r} is not supported; use 'float64' or 'float32'")
    return dtype
