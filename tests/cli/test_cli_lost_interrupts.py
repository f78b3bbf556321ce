"""Ctrl-C that lands inside a callback Python only reports (a garbage-collector hook, as Dask installs) still
stops the command with one line."""

import gc
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from skframe.cli._app import INTERRUPTED, _LostInterrupts


def test_an_interrupt_lost_in_a_gc_callback_is_raised_again_after_it():
    fired = []

    def callback(phase, info):
        if phase == "start" and not fired:
            fired.append(phase)
            raise KeyboardInterrupt  # what a signal delivered during the callback does

    # a command's process has Python's own Ctrl-C handler; the test process may have been left another one
    handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    gc.callbacks.append(callback)
    try:
        with pytest.raises(KeyboardInterrupt):
            with _LostInterrupts() as lost:
                gc.collect()
                for _ in range(300):  # the interrupt is delivered again a moment later
                    time.sleep(0.1)
    finally:
        gc.callbacks.remove(callback)
        sys.unraisablehook = sys.__unraisablehook__
        if handler is not None:  # None: a handler installed outside Python, which cannot be set back
            signal.signal(signal.SIGINT, handler)
    assert fired and lost.lost >= 1  # a retry may land in another callback too (then it is delivered again)


def test_other_reports_are_printed_until_an_interrupt_is_lost():
    seen = []
    with _LostInterrupts() as lost:
        lost.previous = seen.append
        lost(type("U", (), {"exc_type": ValueError})())
        assert len(seen) == 1
        lost.retries = 0  # a lost interrupt, not delivered again here
        lost(type("U", (), {"exc_type": KeyboardInterrupt})())
        lost(type("U", (), {"exc_type": AssertionError})())  # the interrupted callback's follow-on report
    assert len(seen) == 1 and lost.lost == 1
    sys.unraisablehook = sys.__unraisablehook__


def test_a_command_whose_every_interrupt_was_lost_still_ends_interrupted(tmp_path):
    # Every retry lands in a callback again: the command runs to its end, then says it was interrupted
    script = textwrap.dedent("""
        import gc
        from skframe.cli import _app
        _app._LostInterrupts.retries = 0
        def callback(phase, info):
            if phase == "start" and not getattr(callback, "done", False):
                callback.done = True
                raise KeyboardInterrupt
        orig = _app.app
        def app(*a, **k):
            gc.callbacks.append(callback)
            gc.collect()
            orig(*a, **k)
        _app.app = app
        _app.main(["--version"])
    """)
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == INTERRUPTED, proc.stderr
    assert len(lines) == 1 and lines[0].startswith("Interrupted"), proc.stderr
