"""Documented commands started as forks of one warm interpreter: each is still a process of its own.

A documented command (``skframe fit ...``, ``python script.py``, ``python -c ...``) spends most of its time on
imports (scikit-learn, SciPy, pandas: about 3 s of CPU on a 2-core machine), not on its small data. The
documentation tests run about 150 of them, so :class:`WarmInterpreter` starts one helper interpreter that imports
those packages once and then, for each command, forks a child that runs it exactly as ``python`` would: its own
working directory, environment, arguments, ``sys.path[0]``, standard streams (files here), exit status, ``atexit``
handlers and signals. Nothing a command does reaches the next one or the test process.

The helper is used only where that is exact: on a system with ``fork`` and when the command's environment is the
one the helper started with (a variable read at import time, e.g. ``OPENBLAS_NUM_THREADS``, then has its value;
``run_time`` names the variables a command reads only while it runs, which may differ); any other command runs as
a plain ``subprocess``. A run may ask for the limits a ``preexec_fn`` would set (address space, file size, Ctrl-C
delivered as in a fresh ``python``) and for pipes as its standard output and error (named pipes: a command sees a
pipe, as under ``subprocess.PIPE``, not a file). The hostile-input tests (tests/hostile.py,
tests/test_hostile_runs.py) run their completed commands so; the runs that are signalled stay plain processes.
Run as a script, this file is the helper (its arguments: the modules to import, else :data:`PRELOAD`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time

# What a documented command imports before it does anything; the CLI first (it sets OpenBLAS variables before
# NumPy loads, as in a fresh ``skframe`` process). Importing is all the helper does: no command state is made. A
# module that fails to import is left out: the command that needs it then fails on it as a fresh process would.
# PyTorch (the DSOKR pages: about 2.7 s of CPU to import, and 2.3 s more for the modules that
# ``torch.use_deterministic_algorithms`` imports on its first call) and Matplotlib's figure (``select``'s plot)
# are imported too; no documented command asserts that a module is absent.
PRELOAD = ("skframe.cli._app", "skframe.automatic.pipeline", "skframe.models", "skframe.preprocessing",
           "skframe.plugin", "sklearn.base", "scipy.stats", "pandas", "rich", "pydantic", "skframe_kernels.plugin",
           "skframe_losses.plugin", "skframe_solvers.plugin", "skframe_sketches.plugin", "skframe_decoders.plugin",
           "skframe_graphs.plugin", "torch", "torch._dynamo", "torch._inductor.config", "matplotlib.figure",
           "matplotlib.backends.backend_agg")


class WarmInterpreter:
    """One helper interpreter (started with ``env``) that runs each command in a child forked from it.

    ``preload``: the modules the helper imports (the commands' own libraries, in the order a fresh command imports
    them); ``run_time``: the names of the variables that commands read only while they run (they may differ from
    the helper's).
    """

    def __init__(self, env, preload=None, run_time=()):
        self.run_time = frozenset(run_time)
        self.env = _at_start(env, self.run_time)
        self._helper = subprocess.Popen([sys.executable, os.path.abspath(__file__), *(preload or ())],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=self.env, text=True)
        if self._helper.stdout.readline().strip() != "ready":
            raise RuntimeError("the warm interpreter did not start")

    def fits(self, argv, env):
        """Whether ``argv`` (``[sys.executable, ...]``) with ``env`` runs exactly as a fresh process would."""
        return (argv[0] == sys.executable and _at_start(env, self.run_time) == self.env
                and self._helper.poll() is None)

    def run(self, argv, cwd, env, timeout, limits=None, pipes=False):
        """Run ``argv`` in ``cwd``: a :class:`subprocess.CompletedProcess` with text stdout and stderr.

        ``limits``: ``address_space`` and ``file_size`` (bytes, for ``RLIMIT_AS`` and ``RLIMIT_FSIZE``; a file
        size limit also ignores ``SIGXFSZ``) and ``sigint`` (true: Ctrl-C raises ``KeyboardInterrupt``, as in a
        ``python`` started with ``SIGINT`` at its default). ``pipes``: the command's standard output and error are
        pipes read while it runs (their text decoded as ``subprocess.run(..., text=True)`` does), else files.
        """
        with tempfile.TemporaryDirectory() as where:
            out, err = os.path.join(where, "stdout"), os.path.join(where, "stderr")
            drains = [_Drain(out), _Drain(err)] if pipes else None
            request = {"args": list(argv[1:]), "cwd": str(cwd), "env": dict(env), "stdout": out, "stderr": err,
                       "timeout": timeout, "limits": dict(limits or {})}
            try:
                self._helper.stdin.write(json.dumps(request) + "\n")
                self._helper.stdin.flush()
                reply = self._helper.stdout.readline()
            finally:
                texts = [d.finish() for d in drains] if drains else None
            if not reply:
                raise RuntimeError("the warm interpreter ended")
            code = json.loads(reply)["returncode"]
            if code == "timeout":
                raise subprocess.TimeoutExpired(argv, timeout)
            if texts is not None:
                return subprocess.CompletedProcess(argv, code, *texts)
            with open(out, encoding="utf-8", errors="replace") as fo, open(err, encoding="utf-8",
                                                                               errors="replace") as fe:
                return subprocess.CompletedProcess(argv, code, fo.read(), fe.read())

    def close(self):
        if self._helper.poll() is None:
            self._helper.stdin.close()
            self._helper.wait(timeout=30)


def _at_start(env, run_time=frozenset()):
    """The variables that matter when an interpreter starts (pytest names the current test in another one)."""
    return {k: v for k, v in env.items() if k != "PYTEST_CURRENT_TEST" and k not in run_time}


class _Drain(threading.Thread):
    """A named pipe at ``path`` whose writer's output is read, until it closes, while the command runs."""

    def __init__(self, path):
        super().__init__(daemon=True)
        os.mkfifo(path, 0o600)
        self.path, self.data = path, b""
        self.start()

    def run(self):
        with open(self.path, "rb") as fh:  # waits for the command to open its end
            self.data = fh.read()

    def finish(self):
        """The text written (newlines translated, strict UTF-8 as ``subprocess.run(..., text=True)``)."""
        while self.is_alive():  # a command that never opened its end (it failed first): end the wait
            try:
                os.close(os.open(self.path, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass
            self.join(0.05)
        return self.data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")


def apply_limits(limits, sigint_handler):
    """Apply a command's ``limits`` to this process: ``sigint`` (true: SIGINT gets ``sigint_handler``, Ctrl-C at
    its default), ``address_space`` (RLIMIT_AS) and ``file_size`` (RLIMIT_FSIZE, SIGXFSZ ignored), in bytes."""
    import resource
    import signal

    if limits.get("sigint"):
        signal.signal(signal.SIGINT, sigint_handler)
    if limits.get("address_space") is not None:
        resource.setrlimit(resource.RLIMIT_AS, (limits["address_space"],) * 2)
    if limits.get("file_size") is not None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits["file_size"],) * 2)


def _child(request):
    """In the forked child: become ``python ARGS`` started in ``cwd`` with ``env`` (never returns normally)."""
    import signal

    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    for fd, path, flags in ((0, os.devnull, os.O_RDONLY), (1, request["stdout"], os.O_WRONLY | os.O_CREAT),
                            (2, request["stderr"], os.O_WRONLY | os.O_CREAT)):
        opened = os.open(path, flags, 0o600)
        os.dup2(opened, fd)
        os.close(opened)
    apply_limits(request.get("limits") or {}, signal.default_int_handler)
    sys.stdin = open(0, closefd=False)  # noqa: SIM115 - the helper's buffered requests are not the command's input
    args = request["args"]
    try:
        _run_args(args)
    except SystemExit as exc:
        _exit_as_python(exc.code)
    _exit_as_python(0)


def _exit_as_python(code):
    """End the child as ``python`` ends after ``sys.exit(code)``, without tearing its modules down.

    What a fresh interpreter does at exit and a command can see is done: non-daemon threads are joined, the
    ``atexit`` functions run (temporary folders, ``weakref.finalize``, multiprocessing), a code that is not an
    integer is printed to stderr (status 1) and the standard streams are flushed (status 120 where that fails).
    The teardown itself is skipped: it touches every object the helper imported, which copies the forked child's
    pages (0.6 s with skframe's modules, 2 s with PyTorch, per command). An uncaught exception other than
    ``SystemExit`` never comes here: the interpreter ends the child as it ends ``python``.
    """
    import atexit
    import threading

    threading._shutdown()  # noqa: SLF001 - what the interpreter's own exit calls first
    atexit._run_exitfuncs()  # noqa: SLF001
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:
        print(code, file=sys.stderr)
        status = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - python's own exit: status 120 when its streams cannot be flushed
            status = 120
    os._exit(status & 0xFF)


def _run_args(args):
    """``python ARGS`` in this process: ``-m MODULE``, ``-c CODE`` or a script's path, with their arguments."""
    import runpy
    import types

    if args[0] == "-m":
        sys.argv = [args[1], *args[2:]]
        sys.path[0] = os.getcwd()
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    elif args[0] == "-c":
        sys.argv = ["-c", *args[2:]]
        sys.path[0] = ""
        main = types.ModuleType("__main__")
        sys.modules["__main__"] = main
        exec(compile(args[1], "<string>", "exec"), main.__dict__)
    else:
        sys.argv = list(args)
        sys.path[0] = os.path.dirname(os.path.realpath(args[0]))
        runpy.run_path(args[0], run_name="__main__")


def _wait(pid, timeout):
    end = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > end:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            return "timeout"
        time.sleep(0.01)


def serve():
    """The helper: import :data:`PRELOAD`, say ``ready``, then fork one child per request line."""
    import importlib

    replies = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # an import that prints does not garble the replies
    for name in sys.argv[1:] or PRELOAD:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001, S112 - see PRELOAD
            continue
    replies.write("ready\n")
    for line in sys.stdin:
        request = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            replies.close()
            _child(request)
        replies.write(json.dumps({"returncode": _wait(pid, request["timeout"])}) + "\n")


if __name__ == "__main__":
    serve()
