"""``python -c CODE ARGS`` run to completion, as a fork of a warm interpreter where that is exact.

The hostile-input tests (tests/hostile.py, tests/test_hostile_runs.py) start about a hundred ``skframe`` commands,
each under memory limits; a fresh interpreter spends about 3 s of CPU importing NumPy, SciPy, scikit-learn and
numba before the command starts. :func:`run_python` runs such a command in a child forked from a helper that has
imported them (tests/docs/_warm.py): its own process with its own working directory, environment, arguments,
pipes as standard output and error, exit status and ``atexit`` handlers, and the limits a ``preexec_fn`` would
set (``RLIMIT_AS``, ``RLIMIT_FSIZE``, Ctrl-C delivered as in a fresh ``python``). A forked child's peak memory
(``VmPeak``, ``VmHWM``, ``ru_maxrss``) starts at its size when forked, as a fresh process's starts at its own.

One helper serves each base environment (``warm_base``: the caller's usual one). A command whose environment
differs from its base in a variable read at start-up (one a test sets, such as ``SKFRAME_MAX_FEATURES``) runs as a
plain ``subprocess``; so does everything where ``SKFRAME_TEST_FRESH=1``. Runs that a test signals while they run are
started by the tests themselves, always as plain processes.
"""

from __future__ import annotations

import atexit
import os
import signal
import subprocess
import sys

#: the libraries the commands load, the CLI first (it sets OpenBLAS variables before NumPy loads); RDKit where
#: installed (tests/hostile.py's runs load it before their cap)
PRELOAD = ("skframe.cli", "numpy", "scipy.sparse", "numba", "sklearn.linear_model", "sklearn.model_selection",
           "skframe.automatic.pipeline", "skframe.models", "skframe.io", "skframe.persistence", "skframe.graphs",
           "skframe_kernels.plugin", "skframe_losses.plugin", "skframe_solvers.plugin", "skframe_sketches.plugin",
           "skframe_decoders.plugin", "skframe_graphs.plugin", "rdkit.Chem", "rdkit.Chem.rdFingerprintGenerator")

#: the variables the tests' child code reads only while the command runs (file names, a cap's size)
RUN_TIME = ("HOSTILE_PEAK_FILE", "HOSTILE_REPORT", "HOSTILE_EXTRA_BYTES")

_HELPERS = {}  # start-up environment -> its WarmInterpreter (or None where one did not start)


def _helper(env):
    from tests.docs._warm import WarmInterpreter, _at_start

    key = frozenset(_at_start(env, frozenset(RUN_TIME)).items())
    if key not in _HELPERS:
        try:
            _HELPERS[key] = WarmInterpreter(env, preload=PRELOAD, run_time=RUN_TIME)
            atexit.register(_HELPERS[key].close)
        except (OSError, RuntimeError):
            _HELPERS[key] = None
    return _HELPERS[key]


def _preexec(limits):
    from tests.docs._warm import apply_limits

    def apply():
        apply_limits(limits, signal.SIG_DFL)

    return apply if limits else None


def run_python(code, args, cwd, env, timeout, limits=None, warm_base=None):
    """``python -c code *args`` in ``cwd`` with ``env``: a :class:`subprocess.CompletedProcess` (text output).

    ``limits``: ``address_space``, ``file_size`` (bytes) and ``sigint`` (true: Ctrl-C at its default, so that
    Python raises ``KeyboardInterrupt``), applied as a ``preexec_fn`` would apply them. ``warm_base``: the
    environment of the helper to fork from (None: a plain process).
    """
    argv = [sys.executable, "-c", code, *map(str, args)]
    limits = dict(limits or {})
    if warm_base is not None and hasattr(os, "fork") and os.environ.get("SKFRAME_TEST_FRESH", "") in ("", "0"):
        helper = _helper(warm_base)
        if helper is not None and helper.fits(argv, env):
            return helper.run(argv, cwd, env, timeout, limits=limits, pipes=True)
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
                          preexec_fn=_preexec(limits))
