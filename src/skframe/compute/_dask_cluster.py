"""The client's side of a Dask fit: the cluster, the array layout, and computing with retries.

:func:`dask_client` opens a client (to a running scheduler or on a local cluster), :func:`to_dask` cuts
NumPy arrays into partitions, :func:`tree_reduce` adds delayed partial results in a fixed binary tree (so
the sum does not depend on which worker computed what), and every computation goes through one routine
that retries lost partitions and turns a cluster that keeps failing into
:class:`~skframe.exceptions.DistributedError`. Requires the ``dask`` extra (``pip install "skframe[dask]"``).
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import operator
import os
import signal
import sys
import threading
import time
from multiprocessing import resource_tracker

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
                try:
                    _quiet_resource_tracker()
                    # no worker yet: the workers are added below, Ctrl-C ignored only while they are spawned
                    cluster = stack.enter_context(distributed.LocalCluster(
                        n_workers=0, threads_per_worker=1, processes=True,
                        # the scheduler's HTTP server on a free port: its default, 8787, is taken by any other
                        # cluster on the machine, and the fallback prints two warning lines
                        dashboard_address=":0",
                        silence_logs=50))  # CRITICAL: their errors reach the client as exceptions
                    _spawn_workers(cluster, int(local))
                except (RuntimeError, OSError, MemoryError) as exc:  # "can't start new thread", fork refused
                    raise DistributedError(
                        f"could not start a local Dask cluster of {int(local)} workers ({type(exc).__name__}: "
                        f"{str(exc)[:120]}); use a smaller --dask-local, or give the process more memory") from exc
                address = cluster
            else:
                address = str(scheduler)
                _handshake(distributed, address, _seconds(WORKER_TIMEOUT_ENV, WORKER_TIMEOUT))
            try:
                client = stack.enter_context(distributed.Client(address, timeout="10s"))
            except OSError as exc:
                raise DistributedError(f"cannot reach the Dask scheduler at {scheduler} ({exc}); check the address "
                                       "and that the scheduler is running") from exc
            except RuntimeError as exc:  # "can't start new thread": the client's own threads
                raise DistributedError(f"could not start the Dask client ({str(exc)[:120]}); give the process more "
                                       "memory, or fewer --dask-local workers") from exc
            wait = _seconds(WORKER_TIMEOUT_ENV, WORKER_TIMEOUT)
            try:
                client.wait_for_workers(1, timeout=wait)
            except (TimeoutError, OSError) as exc:
                raise DistributedError(
                    f"the Dask scheduler at {client.scheduler.address} has no worker after {wait:g} s; start workers "
                    f"(dask worker {client.scheduler.address}), or wait longer with {WORKER_TIMEOUT_ENV}=SECONDS"
                ) from exc
            yield client

    return session()


def _handshake(distributed, address, timeout):
    """Connect to ``address`` and ask it who it is, all within ``timeout`` seconds; a peer that is not a Dask
    scheduler (silent, or answering other bytes) ends in one :class:`DistributedError` instead of a hang.

    ``distributed.Client`` waits for the scheduler's handshake without a time limit, so this runs first.
    """
    from distributed.comm import addressing, registry  # lazy: distributed is an optional extra

    try:
        registry.get_backend(addressing.parse_address(address)[0])
    except ValueError as exc:
        raise InvalidParameterError(f"--dask-scheduler {address!r} is not a Dask address ({exc}); write e.g. "
                                    "tcp://HOST:8786") from None

    async def talk():
        comm = await distributed.comm.connect(address, timeout=min(timeout, 10.0))  # as the client did before
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    fix = f"check the address (a scheduler listens on tcp://HOST:8786), or wait longer with {WORKER_TIMEOUT_ENV}"
    try:
        reply = asyncio.run(asyncio.wait_for(talk(), timeout))
    except (asyncio.TimeoutError, TimeoutError) as exc:
        raise DistributedError(f"the peer at {address} did not answer as a Dask scheduler within {timeout:g} s; "
                               f"{fix}") from exc
    except OSError as exc:
        raise DistributedError(f"cannot reach the Dask scheduler at {address} ({str(exc)[:160]}); check the address "
                               "and that the scheduler is running") from exc
    except Exception as exc:  # noqa: BLE001 - whatever a non-Dask peer's bytes give (a MemoryError from a frame
        # length read in another protocol's bytes included): not "out of memory", not a traceback
        raise DistributedError(f"the peer at {address} does not speak the Dask protocol ({type(exc).__name__}); "
                               f"{fix}") from exc
    if not isinstance(reply, dict) or reply.get("type") != "Scheduler":
        raise DistributedError(f"the peer at {address} is not a Dask scheduler (it answered as "
                               f"{str(reply.get('type') if isinstance(reply, dict) else type(reply).__name__)[:40]}"
                               f"); {fix}")


def _spawn_workers(cluster, n, timeout=60.0):
    """Add ``n`` worker processes to ``cluster``: they start with Ctrl-C ignored, the client only while they are
    spawned (not while they start up, which takes seconds on a loaded machine: Ctrl-C then stops the client)."""
    before = len(multiprocessing.active_children())
    deadline = time.monotonic() + timeout
    with _ignoring_ctrl_c():
        cluster.scale(n)
        while len(multiprocessing.active_children()) < before + n and time.monotonic() < deadline:
            time.sleep(0.01)


@contextlib.contextmanager
def _ignoring_ctrl_c():
    """Processes started inside ignore SIGINT (a disposition they keep); the caller's handler is restored after.

    A terminal's Ctrl-C reaches every process of its group: the local workers would each print
    their traceback. They are closed by the client instead, which alone sees the interrupt.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _quiet_resource_tracker():
    """Start multiprocessing's resource tracker (it unlinks the semaphores of the local workers' queues) with
    its standard error on the null device, before the workers start it.

    A command ended by force after Ctrl-C (:mod:`skframe.cli._watchdog`) leaves the tracker to clean up; its
    report of the leaked semaphores would be two more lines after the command's one. Nothing else is lost:
    the tracker reports nothing while the command ends in order.
    """
    if threading.current_thread() is not threading.main_thread() or os.name != "posix":
        return
    if getattr(resource_tracker._resource_tracker, "_pid", None) is not None:
        return  # already running (the inherited standard error kept)
    saved = os.dup(2)
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            sys.stderr.flush()
            os.dup2(devnull, 2)  # the tracker inherits descriptor 2 as it is at its start
            resource_tracker.ensure_running()
        finally:
            os.dup2(saved, 2)
            os.close(devnull)
    except OSError:  # the workers start it themselves, with the usual standard error
        pass
    finally:
        os.close(saved)


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
            futures = client.compute(obj, retries=retries)  # one future, or a list of them for a list
            try:
                _watch(client, futures if isinstance(futures, (list, tuple)) else [futures])
                return client.gather(futures)
            except BaseException:  # Ctrl-C, a timeout: the cluster stops working for this fit
                with contextlib.suppress(Exception):
                    client.cancel(futures)
                raise
        return dask.compute(obj)[0]
    except DistributedError:
        raise
    except Exception as exc:  # KilledWorker, CommClosedError, ... : no partial model may come out
        name = type(exc).__name__
        if name in ("KilledWorker", "CommClosedError", "FutureCancelledError", "CancelledError") or \
                type(exc).__module__.split(".")[0] == "distributed":
            raise DistributedError(
                f"the Dask computation failed ({name}: {exc}); no model was produced. Workers kept dying on "
                "a partition: give them more memory or lower memory_budget / the partition size, then fit again"
            ) from exc
        raise


#: Seconds a fit waits for a worker (none connected, or all lost) and for a computation that stops
#: progressing, before it stops with DistributedError; the environment variables change them.
WORKER_TIMEOUT_ENV, STALL_TIMEOUT_ENV = "SKFRAME_DASK_WORKER_TIMEOUT", "SKFRAME_DASK_STALL_TIMEOUT"
WORKER_TIMEOUT, STALL_TIMEOUT = 60.0, 600.0


def _seconds(env, default):
    text = os.environ.get(env, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < float("inf"):  # "inf" would wait forever, "nan" never compares
        raise InvalidParameterError(f"{env}={text!r} is not a positive, finite number of seconds; write e.g. "
                                    f"{env}={default:g}")
    return value


def _progress(client):
    """A number the scheduler increases with every task transition (None when it cannot be asked)."""
    try:
        return client.run_on_scheduler(lambda dask_scheduler: dask_scheduler.transition_counter)
    except Exception:  # an older scheduler, or `run` disabled: the worker check alone applies
        return None


def _watch(client, futures):
    """Wait for ``futures``; DistributedError when the cluster has no worker, or nothing progresses, for too long.

    The wait sleeps in this thread (so Ctrl-C interrupts it at once, with nothing left pending) and
    asks the scheduler about its workers every second and about its progress every five.
    """
    worker_timeout = _seconds(WORKER_TIMEOUT_ENV, WORKER_TIMEOUT)
    stall_timeout = _seconds(STALL_TIMEOUT_ENV, STALL_TIMEOUT)
    start = last_change = time.monotonic()
    no_worker_since, asked_workers, asked_progress, counter = None, start, start, None
    pause = 0.002
    while not all(f.done() for f in futures):
        time.sleep(pause)
        pause = min(2 * pause, 0.1)
        now = time.monotonic()
        if now - asked_workers >= 1.0:
            asked_workers = now
            if client.nthreads():
                no_worker_since = None
            else:
                no_worker_since = no_worker_since or now
                if now - no_worker_since >= worker_timeout:
                    raise DistributedError(
                        f"the Dask cluster at {client.scheduler.address} has had no worker for {worker_timeout:g} s "
                        f"(none connected, or all lost); no model was produced. Start workers (dask worker "
                        f"{client.scheduler.address}), or wait longer with {WORKER_TIMEOUT_ENV}=SECONDS")
        if now - asked_progress >= 5.0:
            asked_progress, seen = now, _progress(client)
            if seen != counter or seen is None:
                counter, last_change = seen, now
        if now - last_change >= stall_timeout:
            raise DistributedError(
                f"the Dask computation made no progress for {stall_timeout:g} s (no task started or finished); "
                f"no model was produced. Check the workers' logs, or wait longer with {STALL_TIMEOUT_ENV}=SECONDS")


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
