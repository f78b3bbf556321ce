"""The client's side of a Dask fit: the cluster, the array layout, and computing with retries.

:func:`dask_client` opens a client (to a running scheduler or on a local cluster), :func:`to_dask` cuts
NumPy arrays into partitions, :func:`tree_reduce` adds delayed partial results in a fixed binary tree (so
the sum does not depend on which worker computed what), and every computation goes through one routine
that retries lost partitions and turns a cluster that keeps failing into
:class:`~skframe.exceptions.DistributedError`. Requires the ``dask`` extra (``pip install "skframe[dask]"``).
"""

from __future__ import annotations

import contextlib
import operator

import numpy as np

from skframe.deps import is_dask_collection, require
from skframe.exceptions import DistributedError, InvalidInputError, InvalidParameterError

__all__ = ["dask_client", "to_dask", "tree_reduce"]


def _dask():
    return require("dask", "dask-array inputs (fitting on a Dask cluster)")


def dask_client(scheduler=None, local=None):
    """A context manager giving a ``distributed.Client``: to a running scheduler, or on a new local cluster.

    Parameters
    ----------
    scheduler : str, optional
        Address of a running Dask scheduler, e.g. ``"tcp://10.0.0.5:8786"``.
    local : int, optional
        Start a ``LocalCluster`` of this many single-threaded worker processes (closed on exit).

    Exactly one of them is given. Without the ``dask`` extra, one
    :class:`~skframe.exceptions.DependencyError` names it.
    """
    if (scheduler is None) == (local is None):
        raise InvalidParameterError("give either a Dask scheduler address (--dask-scheduler tcp://HOST:8786) or a "
                                    "number of local workers (--dask-local N), not both and not neither")
    if local is not None and (isinstance(local, bool) or int(local) < 1):
        raise InvalidParameterError(f"--dask-local {local!r} must be a positive number of worker processes")
    if scheduler is not None and "://" not in str(scheduler) and ":" not in str(scheduler):
        raise InvalidParameterError(f"--dask-scheduler {scheduler!r} is not an address; write e.g. tcp://HOST:8786")
    require("dask", "a Dask cluster (--dask-scheduler / --dask-local)")
    distributed = require("distributed", "a Dask cluster (--dask-scheduler / --dask-local)")

    @contextlib.contextmanager
    def session():
        with contextlib.ExitStack() as stack:
            if local is not None:
                cluster = stack.enter_context(distributed.LocalCluster(
                    n_workers=int(local), threads_per_worker=1, processes=True, dashboard_address=None,
                    silence_logs=40))
                address = cluster
            else:
                address = str(scheduler)
            try:
                client = stack.enter_context(distributed.Client(address, timeout="10s"))
            except OSError as exc:
                raise DistributedError(f"cannot reach the Dask scheduler at {scheduler} ({exc}); check the address "
                                       "and that the scheduler is running") from exc
            yield client

    return session()


def to_dask(X, Y=None, rows=None):
    """NumPy arrays or memory maps as dask arrays of ``rows`` rows per partition (default: about 8 partitions)."""
    _dask()
    import dask.array as da  # lazy: Dask is optional (the dask extra)

    n = int(X.shape[0])
    rows = int(rows or max(1, -(-n // 8)))
    Xd = X if is_dask_collection(X) else da.from_array(X, chunks=(rows, -1))
    if Y is None:
        return Xd
    Y = np.asarray(Y)
    Yd = Y if is_dask_collection(Y) else da.from_array(Y, chunks=(rows,) + ((-1,) if Y.ndim > 1 else ()))
    return Xd, Yd


def tree_reduce(items, func=operator.add):
    """Combine delayed values pairwise in a fixed binary tree (deterministic summation order)."""
    dask = _dask()
    items = list(items)
    while len(items) > 1:
        nxt = [dask.delayed(func, pure=True)(items[i], items[i + 1]) for i in range(0, len(items) - 1, 2)]
        if len(items) % 2:
            nxt.append(items[-1])
        items = nxt
    return items[0]


def _compute(obj, retries):
    """Compute on the active distributed client (with retries), else on the local scheduler."""
    dask = _dask()
    client = None
    try:
        from distributed import default_client  # lazy: Dask is optional (the dask extra)

        client = default_client()
    except (ImportError, ValueError):
        client = None
    try:
        if client is not None:
            return client.gather(client.compute(obj, retries=retries))
        return dask.compute(obj)[0]
    except Exception as exc:  # KilledWorker, CommClosedError, ... : no partial model may come out
        name = type(exc).__name__
        if name in ("KilledWorker", "CommClosedError", "FutureCancelledError", "CancelledError") or \
                type(exc).__module__.split(".")[0] == "distributed":
            raise DistributedError(
                f"the Dask computation failed ({name}: {exc}); no model was produced. Workers kept dying on "
                "a partition: give them more memory or lower memory_budget / the partition size, then fit again"
            ) from exc
        raise


def _aligned(X, Y):
    """X with one column chunk and Y as a 2-D dask array with X's row chunks."""
    _dask()
    import dask.array as da  # lazy: Dask is optional (the dask extra)
    if Y is None:
        raise InvalidInputError("y is missing: pass y as a dask array (or NumPy array) with X's rows")
    if not is_dask_collection(Y):
        Y = da.from_array(np.asarray(Y), chunks=(X.chunks[0],) + ((-1,) if np.ndim(Y) > 1 else ()))
    if Y.shape[0] != X.shape[0]:
        raise InvalidInputError(f"X has {X.shape[0]} rows but y has {Y.shape[0]}; they must have the same length")
    if Y.ndim == 1:
        Y = Y[:, None]
    return X.rechunk({1: -1}), Y.rechunk({0: X.chunks[0], 1: -1})
