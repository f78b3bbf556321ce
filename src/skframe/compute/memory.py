"""Memory budget: chunk sizes from ``memory_budget`` and refusal before allocating.

A streamed fit holds, besides the data itself, a fixed part (the m x m and m x d
accumulators, the sampled points, an eigendecomposition workspace) and a part per
row of the current chunk (the kernel block against the s' sampled points and the
chunk of ``K R^T``). :func:`plan_stream` sizes the chunk so that both fit within
the budget, and raises :class:`~skframe.exceptions.MemoryBudgetError` when even the
smallest chunk cannot, *before* anything is allocated. The message names the size
needed and the option that fixes it.

>>> from skframe.options import ComputeOptions
>>> plan = plan_stream(n=10**6, m=1000, s_prime=1000, n_features=10, n_outputs=1,
...                    options=ComputeOptions(memory_budget="2GB"))
>>> plan.chunk_rows > 1000, plan.peak_bytes <= 2 * 10**9
(True, True)
"""

from __future__ import annotations

import mmap
from dataclasses import dataclass

import numpy as np

from skframe.core.threads import run_row_ranges
from skframe.exceptions import MemoryBudgetError
from skframe.options import DEFAULT_OPTIONS, compute_dtype, parse_bytes

__all__ = ["StreamPlan", "plan_stream", "check_allocation", "budget_of", "format_bytes", "empty_mapped",
           "MIN_CHUNK_ROWS", "MAX_CHUNK_ROWS", "kept_features_rows"]

#: The smallest chunk a streamed fit accepts (below it BLAS products are inefficient).
MIN_CHUNK_ROWS = 64
#: Chunks larger than this bring no speed and only cost memory.
MAX_CHUNK_ROWS = 32768


def format_bytes(nbytes):
    """Human-readable size, e.g. ``'1.5 GB'``.

    >>> format_bytes(1_500_000_000)
    '1.5 GB'
    """
    nbytes = float(nbytes)
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if nbytes >= size:
            return f"{nbytes / size:.3g} {unit}"
    return f"{int(nbytes)} B"


def budget_of(options):
    """``options.memory_budget`` in bytes (strings such as ``"2GB"`` accepted), or None."""
    return parse_bytes(getattr(options, "memory_budget", None))


def check_allocation(nbytes, what, options, *, fix=None):
    """Raise :class:`MemoryBudgetError` when ``nbytes`` exceed the budget; return ``nbytes``.

    Parameters
    ----------
    nbytes : int
        Size of the allocation about to be made.
    what : str
        What it is, e.g. ``"the n x r feature matrix"``; named in the message.
    options : ComputeOptions
    fix : str, optional
        An extra remedy besides raising ``memory_budget``.
    """
    budget = budget_of(options)
    if budget is not None and nbytes > budget:
        remedy = f"raise memory_budget (e.g. memory_budget='{format_bytes(1.25 * nbytes).replace(' ', '')}')"
        if fix:
            remedy += f" or {fix}"
        raise MemoryBudgetError(
            f"{what} needs {format_bytes(nbytes)} but memory_budget is {format_bytes(budget)}; {remedy}"
        )
    return int(nbytes)


@dataclass(frozen=True)
class StreamPlan:
    """How a streamed accumulation runs within the budget.

    Attributes
    ----------
    chunk_rows : int
        Rows of the data per chunk.
    fixed_bytes : int
        Accumulators, sampled points and solve workspace.
    per_row_bytes : int
        Bytes each row of a chunk costs at the peak.
    peak_bytes : int
        ``fixed_bytes + chunk_rows * per_row_bytes``.
    """

    chunk_rows: int
    fixed_bytes: int
    per_row_bytes: int

    @property
    def peak_bytes(self):
        return self.fixed_bytes + self.chunk_rows * self.per_row_bytes


def _kernel_row_bytes(kernel, s_prime, itemsize):
    """Peak bytes per row of one kernel block against ``s_prime`` points (``kernel.block_bytes`` when given)."""
    estimate = getattr(kernel, "block_bytes", None) if kernel is not None else None
    if estimate is not None:
        try:
            # evaluated on 1000 rows and divided: avoids a rounding to zero for tiny blocks
            return max(1, int(np.ceil(estimate(1000, s_prime, 8) / 1000)))
        except TypeError:
            pass
    return 2 * s_prime * 8  # float64 block plus one temporary of the same size


def plan_stream(n, m, s_prime, n_features, n_outputs, options=None, *, kernel=None):
    """Chunk size and memory of a streamed accumulation; refuses impossible budgets.

    Parameters
    ----------
    n : int
        Number of training rows.
    m, s_prime : int
        Sketch size and number of sampled points.
    n_features, n_outputs : int
        Columns of X and of Y.
    options : ComputeOptions, optional
        ``block_bytes`` (the size of one kernel block, which sets the chunk), ``memory_budget``
        (None: no limit; else chunks shrink to fit it), ``chunk_rows`` (forced chunk size)
        and ``dtype``.
    kernel : kernel object, optional
        Its ``block_bytes(n_rows, n_cols, itemsize)`` estimate, when given, sizes the blocks.

    Returns
    -------
    StreamPlan

    Raises
    ------
    MemoryBudgetError
        When the fixed part plus a chunk of :data:`MIN_CHUNK_ROWS` rows exceeds the budget.
    """
    options = options or DEFAULT_OPTIONS
    item = compute_dtype(options).itemsize
    # m x m: C (float64), the float32 chunk product, R K R^T, eigh workspace (~3 m^2); m x d; sampled points
    fixed = 8 * m * m * 5 + item * m * m + 8 * m * (n_outputs + 2) + 8 * s_prime * (n_features + m)
    # kernel block (float64 temporaries, cast to item), K R^T chunk, X chunk copy, Y chunk (+ ones column)
    per_row = (_kernel_row_bytes(kernel, s_prime, item) + item * (s_prime + m)
               + 8 * n_features + 8 * (n_outputs + 1))
    budget = budget_of(options)
    if options.chunk_rows:
        rows = int(options.chunk_rows)
    else:  # blocks of about block_bytes: larger ones bring no speed; a tight budget makes them smaller
        rows = min(options.rows_per_block(max(s_prime, m), 8), MAX_CHUNK_ROWS)
        if budget is not None:
            rows = min(rows, (budget - fixed) // per_row)
    rows = int(max(1, min(rows, max(int(n), 1))))
    plan = StreamPlan(rows, int(fixed), int(per_row))
    if budget is not None:
        need = fixed + min(MIN_CHUNK_ROWS, max(int(n), 1)) * per_row
        if options.chunk_rows:
            need = max(need, plan.peak_bytes)
        if need > budget:
            check_allocation(
                need, f"a streamed fit with sketch size m={m} ({s_prime} sampled points)", options,
                fix="reduce sketch_size",
            )
    return plan


def kept_features_rows(n, r, itemsize, budget, stream):
    """Rows per chunk of a streamed pass that keeps the n x r features beside its own buffers, or None when the
    features do not fit.

    The one rule of the plan (:func:`skframe.compute.plan.plan_fit`'s ``keep_features``) and of the fit that forms
    them (:func:`skframe.compute.stream_problems.make_feature_problem`): the features (``n r itemsize`` bytes) are
    kept when they fit the budget beside the stream's fixed part and a chunk of :data:`MIN_CHUNK_ROWS` rows; the
    chunks then shrink to the room the features leave (the stream's own chunks would otherwise fill the budget
    and leave the features none).

    Parameters
    ----------
    n, r : int
        Rows and columns of the features.
    itemsize : int
        Bytes per entry of the kept features.
    budget : int or None
        The memory budget (None: no limit; the stream's chunks are kept).
    stream : StreamPlan
        The streamed pass's chunks and bytes (:func:`plan_stream`).

    >>> stream = StreamPlan(chunk_rows=3000, fixed_bytes=10**6, per_row_bytes=13_000)
    >>> kept_features_rows(3000, 110, 8, 40 * 10**6, stream)  # 2.6 MB of features beside the chunks
    2796
    >>> kept_features_rows(10**6, 1000, 8, 4 * 10**9, stream) is None  # 8 GB of features
    True
    """
    if budget is None:
        return int(stream.chunk_rows)
    room = int(budget) - int(n) * int(r) * int(itemsize) - int(stream.fixed_bytes)
    rows = room // max(int(stream.per_row_bytes), 1)
    if rows < min(MIN_CHUNK_ROWS, max(int(n), 1)):
        return None
    return int(max(1, min(int(stream.chunk_rows), rows)))


#: arrays from this many bytes on get their own memory map (:func:`empty_mapped`)
MAPPED_BYTES = 1 << 28


def empty_mapped(shape, dtype):
    """An uninitialised array of ``shape`` and ``dtype`` on its own anonymous memory map (from
    :data:`MAPPED_BYTES`; smaller ones from ``np.empty``), released with the array.

    For the large arrays a fit fills once and reads many times (the kept kernel block, the kept features). NumPy
    asks the kernel for transparent huge pages for its large arrays; where huge pages must first be made by
    compacting memory (``/sys/kernel/mm/transparent_hugepage/defrag`` set to ``madvise``, common), the first write
    of each page stalls: filling a 1 GB array cost 2 s on a two-core machine, against 0.33 s on a private anonymous
    map's ordinary pages (0.54 s on a shared one), and the passes over the filled array ran as fast
    (``benchmarks/README.md``).

    >>> a = empty_mapped((1000, 1000), np.float32)
    >>> a.shape, a.dtype.name, a.flags.writeable
    ((1000, 1000), 'float32', True)
    """
    dtype = np.dtype(dtype)
    shape = tuple(int(v) for v in np.atleast_1d(shape))
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if nbytes < MAPPED_BYTES:
        return np.empty(shape, dtype=dtype)
    private = getattr(mmap, "MAP_PRIVATE", None)  # (POSIX: a private map, never shared with a forked process)
    try:
        region = (mmap.mmap(-1, nbytes) if private is None else
                  mmap.mmap(-1, nbytes, flags=private | getattr(mmap, "MAP_ANONYMOUS", 0x20)))
    except (OSError, ValueError, OverflowError):  # no map of that size: NumPy's allocation
        return np.empty(shape, dtype=dtype)
    _touch_pages(region, nbytes)
    return np.frombuffer(region, dtype=dtype, count=nbytes // dtype.itemsize).reshape(shape)


#: bytes between the writes of :func:`_touch_pages` (the common page size)
PAGE_BYTES = 4096


def _touch_pages(region, nbytes):
    """Write a zero into every page of a fresh map from the machine's cores at once: the first write of a page is a
    fault the kernel serves (and, in a virtual machine, often its host), and faults in several threads overlap
    (2 GB on two cores: 0.36 s against 0.65 s from one thread; the fill that follows then writes mapped pages)."""
    flat = np.frombuffer(region, dtype=np.uint8, count=nbytes)
    pages = -(-nbytes // PAGE_BYTES)

    def touch(start, stop):
        flat[start * PAGE_BYTES:stop * PAGE_BYTES:PAGE_BYTES] = 0

    run_row_ranges(touch, pages)
