"""The ``skframe`` application: its commands, the one-line usage errors, the plugins' commands and
:func:`main` (see :mod:`skframe.cli`)."""

from __future__ import annotations

import _thread
import os
import signal
import sys
import threading
from typing import Annotated, Optional

# Before NumPy loads OpenBLAS: idle OpenBLAS threads otherwise spin for ~2^28 cycles after
# every call and compete with numba's parallel kernels for the cores (measured on 2 cores:
# rf1 p-SR fit 0.14 s -> 0.05 s, Bibtex SISOKR fit 0.68 s -> 0.50 s). A user's setting wins.
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

import typer
import typer.core

from skframe._version import __version__
from skframe.cli import _watchdog
from skframe.cli._common import debug_enabled
from skframe.cli._help import HelpCommand, HelpGroup, ShortHelpCommand, TuneHelpCommand
from skframe.cli._warnings import install as install_warnings
from skframe.cli.fit import fit
from skframe.cli.model_commands import evaluate, predict
from skframe.cli.plugins_command import plugins
from skframe.cli.select import select
from skframe.cli.tune import tune

__all__ = ["app", "main", "register_plugin_commands", "CORE_COMMANDS"]

#: Click's UsageError as Typer uses it (Typer carries its own copy of Click): the parent class of BadParameter
_UsageError = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")


class _OneLineUsageErrors(HelpGroup):
    """The command group: a usage error (an unknown option, a missing argument, a value of the wrong type) is one
    ``Error:`` line naming the command's ``--help``, as every other error is, not Click's usage box."""

    def make_context(self, *args, **kwargs):
        try:
            return super().make_context(*args, **kwargs)
        except _UsageError as exc:
            _usage_error(exc)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except _UsageError as exc:
            _usage_error(exc)


def _usage_error(exc):
    if type(exc).__name__ == "NoArgsIsHelpError":  # `skframe` alone: the help, as before
        raise exc
    where = exc.ctx.command_path if exc.ctx is not None else "skframe"
    message = " ".join(exc.format_message().split()).rstrip(".")
    typer.echo(f"Error: {message}; see {where} --help", err=True)
    raise typer.Exit(exc.exit_code)


app = typer.Typer(
    name="skframe",
    cls=_OneLineUsageErrors,
    help="Sketched kernel machines: fit, predict and evaluate kernel models with random sketches.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.command("fit", cls=ShortHelpCommand)(fit)  # --help: the common options; --help-all: every one
app.command("predict", cls=HelpCommand)(predict)  # each option in one or two lines (skframe.cli._help)
app.command("evaluate", cls=HelpCommand)(evaluate)
app.command("select", cls=HelpCommand)(select)
app.command("tune", cls=TuneHelpCommand)(tune)
app.command("plugins")(plugins)
CORE_COMMANDS = frozenset({"fit", "predict", "evaluate", "select", "tune", "plugins"})
#: the commands that compute (watched after Ctrl-C, see skframe.cli._watchdog), and the options that only print help
_WORKING_COMMANDS = CORE_COMMANDS - {"plugins"}
_HELP = frozenset({"--help", "--help-all"})


def _print_version(value: bool):
    if value:
        typer.echo(f"skframe {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[Optional[bool], typer.Option("--version", callback=_print_version, is_eager=True,
                                                    help="Print the skframe version and exit.")] = None,
):
    """Sketched kernel machines: fit, predict and evaluate kernel models with random sketches."""


def _third_party_plugins():
    """True when a distribution other than skframe declares ``skframe`` entry points (no import)."""
    # lazy: plugin discovery reads the entry points (~15 ms); only the commands that need components pay it
    from importlib import metadata

    try:
        eps = metadata.entry_points(group="skframe")
    except TypeError:  # pragma: no cover - Python < 3.10
        eps = metadata.entry_points().get("skframe", [])
    for ep in eps:
        dist = getattr(ep, "dist", None)
        if dist is None or (dist.metadata["Name"] or "").lower() != "skframe":
            return True
    return False


def register_plugin_commands(app):
    """Let plugins add sub-commands to ``app``; a failing plugin is reported, not fatal.

    Only third-party distributions add commands (the built-in plugins provide none), so
    nothing is imported when none is installed, and only their plugin modules when some are.
    """
    if not _third_party_plugins():
        return
    # lazy: plugin discovery reads the entry points (~15 ms); only the commands that need components pay it
    from skframe.contract.loader import BrokenPlugin, command_registry

    try:
        reg = command_registry()  # the third-party plugins' modules only: no built-in component is imported
    except Exception as exc:  # duplicate names etc.: the core commands must still work
        if debug_enabled():
            raise
        typer.echo(f"Warning: plugins could not be loaded: {exc}", err=True)
        return
    for impl, src in reg.commands_hooks():
        try:
            impl.function(app=app)
        except Exception as exc:
            reg.broken.append(BrokenPlugin(src.name, src.distribution, src.version,
                                           f"{type(exc).__name__} in register_commands: {exc}"))


def _command_name(argv):
    """The sub-command named on the command line (first word that is not an option), or None."""
    return next((a for a in argv if not a.startswith("-")), None)


#: the exit status of a command stopped by Ctrl-C or SIGTERM (128 + SIGINT, the shell's convention)
INTERRUPTED = 130


def _terminated(signum, frame):
    raise KeyboardInterrupt  # SIGTERM ends a command as Ctrl-C does: temporary files removed, old files intact


def _interrupt_main_thread():
    """SIGINT sent to the main thread itself: it also wakes a blocking call there (a sleep, a wait on a lock),
    which :func:`_thread.interrupt_main` (a flag read at the next bytecode) does not."""
    if hasattr(signal, "pthread_kill"):
        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
    else:  # pragma: no cover - platforms without POSIX threads
        _thread.interrupt_main()


class _LostInterrupts:
    """Ctrl-C that lands where Python cannot raise it is raised again where the command can stop.

    A signal is delivered between two bytecodes of the main thread; when those belong to a callback whose
    exceptions Python only reports (a garbage-collector hook such as Dask's, a finaliser), the
    ``KeyboardInterrupt`` is printed as "Exception ignored in ..." and the command goes on. While a command
    runs, :data:`sys.unraisablehook` is this object: an interrupt lost that way is delivered again a moment
    later, from a timer thread (up to ``retries`` times), and counted; once the command is stopping, the
    interrupted callbacks' follow-on reports are not printed (the command ends with its one line).
    """

    retries = 20

    def __init__(self):
        self.lost = 0
        self.previous = None

    def __enter__(self):
        self.previous, sys.unraisablehook = sys.unraisablehook, self
        return self

    def __exit__(self, exc_type, exc, tb):
        stopped = isinstance(exc, KeyboardInterrupt) or (isinstance(exc, SystemExit) and exc.code == INTERRUPTED)
        if stopped or self.lost:  # the process is ending on an interrupt: its shutdown stays quiet too
            self.lost = max(self.lost, 1)
        else:
            sys.unraisablehook = self.previous

    def __call__(self, unraisable):
        if issubclass(unraisable.exc_type, KeyboardInterrupt):
            self.lost += 1
            if self.lost <= self.retries:  # from another thread, once this callback has returned
                threading.Timer(0.05, _interrupt_main_thread).start()
            return
        if not self.lost:
            self.previous(unraisable)


def main(argv=None):
    """Console-script entry point; plugin commands are loaded only when a core command is not asked for.

    SIGTERM is handled as Ctrl-C (SIGINT): the command stops, what it was writing is removed and the
    files it would have replaced are left as they were.
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminated) if main_thread else None
    if not debug_enabled():
        install_warnings()
    if _command_name(argv) not in CORE_COMMANDS and "--version" not in argv:
        register_plugin_commands(app)
    if main_thread and _command_name(argv) in _WORKING_COMMANDS and not _HELP.intersection(argv):
        _watchdog.start()  # Ctrl-C during a computation that holds the GIL: the command still ends, bounded
    lost = _LostInterrupts()
    try:
        with lost:
            app(args=argv, prog_name="skframe")
    except SystemExit as exc:
        if exc.code == INTERRUPTED:  # Typer's exit status for Ctrl-C: say it in one line, as every error is said
            print(interruption_message(), file=sys.stderr)
        elif lost.lost and exc.code in (0, None):  # every retry landed in a callback too: the command still ran
            print(interruption_message(), file=sys.stderr)
            raise SystemExit(INTERRUPTED) from None
        raise
    finally:
        # The command has ended: a SIGTERM from now on (the interpreter's shutdown restores the default action,
        # which would end the process without a word) leaves the finished files as they are
        if main_thread:
            signal.signal(signal.SIGTERM, signal.SIG_IGN if previous in (signal.SIG_DFL, None) else previous)


def interruption_message():
    """The line printed when Ctrl-C or SIGTERM stops a command: what was being written, what was complete."""
    atomic = sys.modules.get("skframe.io.atomic")  # loaded only by the commands that write files
    written, unfinished = atomic.writes() if atomic is not None else ([], [])
    if unfinished:
        done = f"; {', '.join(written)} had been written completely" if written else ""
        return (f"Interrupted: the unfinished {', '.join(unfinished)} was removed; the file it would have replaced "
                f"is unchanged{done}.")
    if written:
        return f"Interrupted after writing {', '.join(written)} completely."
    return "Interrupted; no file was written."


if __name__ == "__main__":  # pragma: no cover
    main()
