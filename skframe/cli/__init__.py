"""The ``skframe`` command line: fit, predict, evaluate, plugins (+ commands added by plugins).

Domain errors print one line on stderr and exit with status 2; set
``SKFRAME_DEBUG=1`` to see the traceback instead.
"""

from __future__ import annotations

import os

# Before NumPy loads OpenBLAS: idle OpenBLAS threads otherwise spin for ~2^28 cycles after
# every call and compete with numba's parallel kernels for the cores (measured on 2 cores:
# rf1 p-SR fit 0.14 s -> 0.05 s, Bibtex SISOKR fit 0.68 s -> 0.50 s). A user's setting wins.
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

import typer

from .fit import fit
from .model_commands import evaluate, predict
from .plugins_command import plugins

__all__ = ["app", "main"]

app = typer.Typer(
    name="skframe",
    help="Sketched kernel machines: fit, predict and evaluate kernel models with random sketches.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.command("fit")(fit)
app.command("predict")(predict)
app.command("evaluate")(evaluate)
app.command("plugins")(plugins)


def _register_builtin_extras():
    try:
        from . import select as _select
    except ImportError:
        return
    register = getattr(_select, "register", None)
    if register is not None:
        register(app)


def _register_plugin_commands():
    """Let plugins add sub-commands; a failing plugin is reported, not fatal."""
    from ..plugins import BrokenPlugin, get_plugin_registry

    try:
        reg = get_plugin_registry()
    except Exception as exc:  # duplicate names etc.: the core commands must still work
        if os.environ.get("SKFRAME_DEBUG", "") not in ("", "0"):
            raise
        typer.echo(f"Warning: plugins could not be loaded: {exc}", err=True)
        return
    for impl, src in reg.commands_hooks():
        try:
            impl.function(app=app)
        except Exception as exc:
            reg.broken.append(BrokenPlugin(src.name, src.distribution, src.version, f"{type(exc).__name__} in register_commands: {exc}"))


_register_builtin_extras()
_register_plugin_commands()


def main():
    """Console-script entry point."""
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
