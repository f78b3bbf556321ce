"""Ctrl-C during a computation that holds the GIL (a long call into compiled code) still ends the command:
the watcher process of :mod:`skframe.cli._watchdog` ends it after the grace period, with one line."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

pytestmark = pytest.mark.skipif(os.name != "posix", reason="signals and the watcher process are POSIX only")

# A call into C that keeps the GIL and that no signal interrupts: locking a mutex the thread already holds
_STUCK = textwrap.dedent("""
    import ctypes, signal, sys, time
    from skframe.cli import _app, _watchdog
    signal.signal(signal.SIGTERM, _app._terminated)  # as skframe's main() does
    assert _watchdog.start()
    libc = ctypes.PyDLL(None)
    mutex = ctypes.create_string_buffer(128)
    libc.pthread_mutex_init(mutex, None)
    libc.pthread_mutex_lock(mutex)
    print("ready", flush=True)
    if sys.argv[1] == "stuck":
        libc.pthread_mutex_lock(mutex)
    else:
        time.sleep(60)
""")


def _run(kind, grace="1", sig=signal.SIGINT):
    proc = subprocess.Popen([sys.executable, "-c", _STUCK, kind], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=dict(os.environ, SKFRAME_INTERRUPT_GRACE=grace),
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert proc.stdout.readline() == "ready\n"
        time.sleep(1)  # the process is inside the call that follows the line
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, err


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_command_stuck_in_compiled_code_is_ended_with_one_line(sig):
    code, err = _run("stuck", sig=sig)
    assert code == -signal.SIGKILL
    assert len(err.strip().splitlines()) == 1 and err.startswith("Interrupted;"), err
    assert "1 s later" in err


def test_a_command_that_stops_in_time_is_left_alone():
    code, err = _run("sleeping", grace="30")
    assert code == -signal.SIGINT and "KeyboardInterrupt" in err  # Python's own ending; the watcher is silent
    assert not err.startswith("Interrupted;")


def test_the_watcher_ends_with_the_command():
    proc = subprocess.run([sys.executable, "-c", "from skframe.cli import _watchdog; print(_watchdog.start())"],
                          capture_output=True, text=True, timeout=60)  # the pipes close: the watcher has ended
    assert proc.returncode == 0 and proc.stdout == "True\n" and proc.stderr == ""
