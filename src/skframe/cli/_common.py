"""Helpers shared by the CLI commands: error mapping, KEY=VALUE parsing, progress, output."""

from __future__ import annotations

import functools
import json
import os
import sys

import typer

from skframe.cli._warnings import cli_wording
from skframe.exceptions import InvalidParameterError, SkframeError

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


def _parse_value(text):
    low = text.strip().lower()
    if low in ("true", "yes"):
        return True
    if low in ("false", "no"):
        return False
    if low in ("none", "null"):
        return None
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    if "," in text:
        return [_parse_value(t) for t in text.split(",")]
    return text


def parse_kv(items, option):
    """Parse repeated ``KEY=VALUE`` options into a dict (numbers, booleans and lists recognised)."""
    out = {}
    for item in items or []:
        if "=" not in item:
            raise InvalidParameterError(f"{option} {item!r} must look like KEY=VALUE, e.g. {option} gamma=0.1")
        key, value = item.split("=", 1)
        key = key.strip().replace("-", "_")
        if not key:
            raise InvalidParameterError(f"{option} {item!r} has an empty key; use KEY=VALUE")
        out[key] = _parse_value(value.strip())
    return out


def parse_float_list(text, option):
    """Parse ``0.1,0.3,0.5`` into a list of floats."""
    if text is None:
        return None
    try:
        values = [float(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise InvalidParameterError(f"{option} {text!r} must be comma-separated numbers, e.g. 0.1,0.5,0.9") from None
    if not values:
        raise InvalidParameterError(f"{option} is empty; give comma-separated numbers, e.g. 0.1,0.5,0.9")
    return values


class _Advance:
    """Callable handed to ``fit(progress=...)``: ``advance(n)``; ``new_stage(text, total)`` starts a new bar."""

    def __init__(self, bar, task):
        self._bar = bar
        self._task = task

    def __call__(self, n=1):
        self._bar.update(self._task, advance=n)

    def new_stage(self, description, total=None):
        self._bar.update(self._task, visible=False)
        self._task = self._bar.add_task(description, total=total)


class progress_bar:
    """Context manager giving a progress callable on a terminal, or None (no terminal, ``--json``).

    The callable advances the bar by ``n`` rows; its ``new_stage(description, total)``
    starts a second bar (e.g. solver epochs after the kernel rows).
    """

    def __init__(self, total, description, enabled=True):
        self.total = int(total)
        self.description = description
        self.enabled = enabled and sys.stderr.isatty()
        self._bar = None

    def __enter__(self):
        if not self.enabled:
            return None
        from rich.console import Console  # lazy: rich loads only when a progress bar is shown

        # lazy: rich loads only when a progress bar is shown
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        self._bar = Progress(
            TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
            TimeElapsedColumn(), console=Console(stderr=True), transient=True,
        )
        self._bar.__enter__()
        return _Advance(self._bar, self._bar.add_task(self.description, total=self.total))

    def __exit__(self, *exc):
        if self._bar is not None:
            self._bar.__exit__(*exc)
        return False


def to_jsonable(value):
    """Convert NumPy scalars/arrays (recursively) into plain JSON types."""
    import numpy as np  # lazy: NumPy costs ~0.1 s at the start of every command

    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return to_jsonable(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


def echo_json(obj):
    typer.echo(json.dumps(to_jsonable(obj), indent=None, sort_keys=False))
