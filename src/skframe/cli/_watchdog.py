"""A command stopped by Ctrl-C ends within a bounded time, even inside a long computation that holds the GIL.

Python acts on a signal only between two bytecodes of the main thread. A long call into compiled code that
keeps the GIL (a LAPACK eigendecomposition of a large sketch: a minute on a loaded machine) delays the
``KeyboardInterrupt`` until it returns, and no Python thread of the process can run meanwhile either.
The C-level signal handler still runs at once, and :func:`signal.set_wakeup_fd` makes it write the
signal's number into a pipe. :func:`start` gives that pipe to a small watcher process: once it reads
SIGINT or SIGTERM, it waits ``grace`` seconds for the command to end on its own (the pipe's other end
closes when it does); a command still running then is ended with SIGKILL, and the watcher prints the
command's one line. Worker processes of a local Dask cluster end with it (they watch their parent), and
a temporary file it was writing is removed by the next write into its folder
(see :mod:`skframe.io.atomic`).
"""

from __future__ import annotations

import os
import signal
import sys
import threading

__all__ = ["start", "GRACE", "GRACE_ENV"]

#: seconds a command has after Ctrl-C or SIGTERM to end on its own; the environment variable changes them
GRACE, GRACE_ENV = 20.0, "SKFRAME_INTERRUPT_GRACE"

_WATCHER = r"""
import os, select, signal, sys, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
fd, pid, grace = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
stops = {int(signal.SIGINT), int(signal.SIGTERM)}
while True:
    data = os.read(fd, 256)
    if not data:
        sys.exit(0)
    if stops.intersection(data):
        break
deadline = time.monotonic() + grace
while True:
    left = deadline - time.monotonic()
    if left <= 0:
        break
    if select.select([fd], [], [], left)[0] and not os.read(fd, 256):
        sys.exit(0)
if (select.select([fd], [], [], 0)[0] and not os.read(fd, 256)) or os.getppid() != pid:
    sys.exit(0)
try:
    os.kill(pid, signal.SIGKILL)
except OSError:
    sys.exit(0)
os.write(2, ("Interrupted; the command was still inside a computation %g s later and was ended; a file it was "
             "writing is removed by the next write into its folder.\n" % grace).encode())
"""
_started = []  # the watcher's process id: one watcher per process, ending with it


def _grace():
    text = os.environ.get(GRACE_ENV, "").strip()
    try:
        value = float(text) if text else GRACE
    except ValueError:
        value = GRACE
    return value if 0 < value < float("inf") else GRACE


def start():
    """Start the watcher for this process; False where it cannot run (not the main thread, no ``posix_spawn``).

    Call it once, from the main thread, before the command's work. The command's own handling of Ctrl-C
    (its one line, exit status 130) is unchanged whenever the command ends within the grace period.
    """
    if _started:
        return True
    if threading.current_thread() is not threading.main_thread() or not hasattr(os, "posix_spawn"):
        return False
    read, write = os.pipe()
    try:
        os.set_blocking(write, False)
        os.set_inheritable(read, True)
        quiet = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, flag, 0) for fd, flag in ((0, os.O_RDONLY), (1, os.O_WRONLY))]
        # the watcher ignores Ctrl-C from its start: a terminal's Ctrl-C reaches the whole process group
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            pid = os.posix_spawn(sys.executable, [sys.executable, "-I", "-S", "-c", _WATCHER, str(read),
                                                  str(os.getpid()), f"{_grace():g}"],
                                 os.environ, file_actions=quiet)
        finally:
            signal.signal(signal.SIGINT, previous)
        signal.set_wakeup_fd(write, warn_on_full_buffer=False)
        _started.append(pid)
    except (OSError, ValueError):  # no process can be started: the command runs without the bound
        os.close(write)
        return False
    finally:
        os.close(read)
    return True
