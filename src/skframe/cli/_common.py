"""Helpers shared by the CLI commands: error mapping and output (the KEY=VALUE parsing, progress bar and JSON
values are the library's, :mod:`skframe.automatic._values`, re-exported here)."""

from __future__ import annotations

import functools
import json
import os
import sys

import typer

from skframe.automatic._values import parse_float_list, parse_kv, progress_bar, to_jsonable
from skframe.cli._warnings import cli_wording
from skframe.exceptions import SkframeError

__all__ = ["handle_errors", "parse_kv", "parse_float_list", "progress_bar", "to_jsonable", "echo_json", "fail",
           "debug_enabled", "replace_via_temp_path"]


#: characters of an error line before it is cut
MAX_MESSAGE = 2000


def debug_enabled():
    """True when ``SKFRAME_DEBUG`` asks for tracebacks instead of one-line errors."""
    return os.environ.get("SKFRAME_DEBUG", "") not in ("", "0")


def fail(message, code=2):
    """Print one line on stderr and exit with ``code``."""
    typer.echo(f"Error: {message}", err=True)
    raise typer.Exit(code=code)


def handle_errors(func):
    """Map skframe errors (and file errors) to one stderr line and a non-zero exit.

    With ``SKFRAME_DEBUG=1`` the exception propagates with its traceback.
    """

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except typer.Exit:
            raise
        except SystemExit as exc:  # sys.exit() in component code (a plugin): the command did not finish
            if debug_enabled():
                raise
            atomic = sys.modules.get("skframe.io.atomic")  # loaded only by the commands that write files
            written = atomic.writes()[0] if atomic is not None else []
            done = f" ({', '.join(written)} had been written completely)" if written else " and wrote no file"
            fail(f"the command was ended from inside by SystemExit({exc.code!r}), raised by component code (a "
                 "plugin's kernel, sketch, loss or solver, or a callback) instead of an exception: it did not "
                 f"finish{done}; fix or uninstall that component (SKFRAME_DEBUG=1 shows where)")
        except BrokenPipeError:  # output piped into e.g. `head`: stop quietly
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            raise typer.Exit(code=0) from None
        except Exception as exc:
            if debug_enabled() or not isinstance(exc, (SkframeError, OSError, MemoryError)):
                raise
            msg = str(exc).replace("\n", " ")
            if isinstance(exc, SkframeError):  # in the command line's words: --solver adam, not solver='adam'
                msg = cli_wording(msg)
            if isinstance(exc, OSError) and not isinstance(exc, SkframeError):
                msg = f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc)
            if isinstance(exc, MemoryError):  # worded after where it happened: reading a file, or fitting
                from skframe.limits import out_of_memory  # lazy: loads NumPy

                msg = out_of_memory(exc, "use a smaller --sketch-size or a sparser sketch, or set --memory-budget")
            if len(msg) > MAX_MESSAGE:  # a value quoted from a file must not make a 100 kB line
                msg = f"{msg[:MAX_MESSAGE]}... ({len(msg)} characters; SKFRAME_DEBUG=1 shows all)"
            fail(msg)

    return wrapper


def replace_via_temp_path(path, write):
    """Call ``write(tmp)`` with a temporary path beside ``path``, then move it onto ``path``.

    For writers that take a path; writers that take a file object use
    :func:`skframe.io.atomic_write`, and ``skframe.save`` is atomic by itself. The move is atomic
    (``os.replace`` within one directory): an exception, Ctrl-C, SIGTERM or a full disk during
    ``write`` leaves the previous ``path`` untouched and removes the temporary file (one, named
    so that a later write removes it if the process is killed: :mod:`skframe.io.atomic`). A
    replaced file keeps its permissions; a new one gets those ``open`` would give it. Errors
    name ``path``, not the temporary file.
    """
    from skframe.io.atomic import atomic_path  # lazy: skframe.io loads SciPy's sparse matrices

    return atomic_path(path, write)


def echo_json(obj):
    typer.echo(json.dumps(to_jsonable(obj), indent=None, sort_keys=False))
