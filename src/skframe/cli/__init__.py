"""The ``skframe`` command line: fit, predict, evaluate, select, tune, plugins (+ commands added by plugins).

Domain errors print one line on stderr and exit with status 2; set
``SKFRAME_DEBUG=1`` to see the traceback instead.

Importing this module is light (Typer and the standard library): scikit-learn,
SciPy, numba and the plugins are imported only when a command runs and needs
them, so ``skframe --help`` and ``skframe --version`` answer at once.
"""

from skframe.cli._app import CORE_COMMANDS, app, main, register_plugin_commands

__all__ = ["app", "main", "register_plugin_commands", "CORE_COMMANDS"]
