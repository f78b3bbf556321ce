"""One shared thread pool for the plain-NumPy engine: row ranges of a block on the cores.

SciPy's distances and sparse products and NumPy's ufuncs release the GIL on large arrays,
so splitting a block's rows over threads uses every core without copying anything. The
pool is created on first use and forgotten in a forked child (which has none of the
parent's threads). Work submitted from a thread other than the main one runs inline
(no nested pools, e.g. inside a Dask worker or a user's thread).

This module and the execution plan (:mod:`skframe.compute.plan`, :mod:`skframe.compute.plan_rules`,
:mod:`skframe.compute.execution`) are the only places that create threads or set a library's thread count:
:func:`map_threads` runs the items of a plan's pool (e.g. the folds of a cross-validation path) and
:func:`set_torch_threads` applies a plan's thread count to PyTorch.
"""

from __future__ import annotations

import contextvars
import os
import threading
from concurrent.futures import ThreadPoolExecutor

from skframe.limits import parse_count

__all__ = ["THREADED_ENTRIES", "available_cores", "run_row_ranges", "threads_for", "map_threads", "set_torch_threads"]

#: Blocks of at least this many entries are split by rows over the cores (smaller ones cost less
#: than handing them to the threads); each row is computed as in one pass, so results do not
#: depend on the split
THREADED_ENTRIES = 1 << 21

_POOL = None
_POOL_SIZE = 0
_POOL_LOCK = threading.Lock()


def _forget_pool():
    global _POOL, _POOL_SIZE, _POOL_LOCK
    _POOL, _POOL_SIZE, _POOL_LOCK = None, 0, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def available_cores():
    """Cores this process may use, capped by ``SKFRAME_NUM_THREADS`` when set."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    env = os.environ.get("SKFRAME_NUM_THREADS", "").strip()
    if env:  # a count of at least 1; nonsense ("four", "0", "1.5") is refused in one line naming the variable
        cores = min(cores, parse_count("SKFRAME_NUM_THREADS", env, example=2))
    return max(1, cores)


def threads_for(entries):
    """Threads for a block of ``entries`` entries: 1 below :data:`THREADED_ENTRIES`, else :func:`available_cores`."""
    return 1 if entries < THREADED_ENTRIES else available_cores()


def run_row_ranges(func, n, n_threads=None):
    """Call ``func(start, stop)`` on ``n_threads`` contiguous ranges covering ``range(n)``, in parallel.

    Runs inline (one call) when one thread is asked for, when there are fewer rows than
    threads, or when called from a thread other than the main one. Each range runs in a
    copy of the caller's :mod:`contextvars` context. Exceptions of any range are raised here.
    """
    global _POOL, _POOL_SIZE
    n_threads = available_cores() if n_threads is None else max(1, int(n_threads))
    if n_threads == 1 or n < 2 * n_threads or threading.current_thread() is not threading.main_thread():
        func(0, n)
        return
    with _POOL_LOCK:
        if _POOL is None or _POOL_SIZE < n_threads:
            _POOL = ThreadPoolExecutor(max_workers=n_threads, thread_name_prefix="skframe-rows")
            _POOL_SIZE = n_threads
        pool = _POOL
    bounds = [n * k // n_threads for k in range(n_threads + 1)]
    # each range runs in a copy of the caller's contextvars context, as an inline call would
    futures = [pool.submit(contextvars.copy_context().run, func, a, b)
               for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
    for f in futures:
        f.result()


def map_threads(func, items, n_jobs):
    """``[func(item) for item in items]``, on ``n_jobs`` threads when more than one is given (a plan's count).

    The results keep the order of ``items``; exceptions are raised here.
    """
    items = list(items)
    if n_jobs is None or int(n_jobs) <= 1 or len(items) < 2:
        return [func(item) for item in items]
    with ThreadPoolExecutor(max_workers=int(n_jobs), thread_name_prefix="skframe-jobs") as pool:
        return list(pool.map(func, items))


def set_torch_threads(torch, n_threads):
    """Set PyTorch's thread count to ``n_threads`` (a plan's decision; None or 0 leaves it) and return the count
    it had, for the caller to restore. ``torch`` is the module, passed by the caller (nothing is imported here)."""
    before = torch.get_num_threads()
    if n_threads and int(n_threads) != before:
        torch.set_num_threads(int(n_threads))
    return before
