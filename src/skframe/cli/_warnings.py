"""Warnings at the terminal: one line each, ``Warning: ...``, in the command line's words.

Python shows a warning with the file, the line number and the source line that raised it, which means nothing to
a user of the command line; and skframe's warnings name the Python parameters (``max_epochs``,
``sketch_size=500``, ``solver='adam'``) where the user typed options (``--epochs``, ``--sketch-size 500``,
``--solver adam``). :func:`install` replaces the display of warnings for the running command;
``SKFRAME_DEBUG=1`` keeps Python's display.
"""

from __future__ import annotations

import re
import sys
import warnings

__all__ = ["install", "cli_wording"]

#: Python parameter -> the option that sets it on the command line
_OPTIONS = {
    "max_epochs": "--epochs", "max_iter": "--epochs", "sketch_size": "--sketch-size",
    "input_sketch_size": "--input-sketch-size", "output_sketch_size": "--output-sketch-size",
    "memory_budget": "--memory-budget", "lam": "--lam", "solver": "--solver", "loss": "--loss",
    "kernel": "--kernel", "sketch": "--sketch", "dtype": "--dtype", "backend": "--backend", "tol": "--tol",
    "batch_size": "--batch-size", "learning_rate": "--learning-rate", "patience": "--patience",
    "output_rank": "--output-rank", "n_draws": "--n-draws", "n_seeds": "--n-seeds", "random_state": "--seed",
    "cv_order": "--cv-order", "max_classes": "--max-classes",
}
#: solver parameters with no shortcut option: set with --solver-param NAME=VALUE
_SOLVER_ONLY = ("max_admm_iter", "max_newton_steps")
_OPTIONS.update({name: f"--solver-param {name}=..." for name in _SOLVER_ONLY})
_NAMES = "|".join(sorted(_OPTIONS, key=len, reverse=True))
_ASSIGN = re.compile(r"\b(" + _NAMES + r")=('([^']*)'|\"([^\"]*)\"|[^\s,;)]+)")
_BARE = re.compile(r"\b(raise|lower|increase|decrease|set) (" + _NAMES + r")\b(?: or (" + _NAMES + r")\b)?")


def cli_wording(text):
    """``text`` with Python parameter names replaced by the command-line options that set them.

    Examples
    --------
    >>> cli_wording("reached the maximum number of epochs (10); raise max_epochs or lam")
    'reached the maximum number of epochs (10); raise --epochs or --lam'
    >>> cli_wording("sketch_size=500 is larger than n_samples=100; using sketch_size=100")
    '--sketch-size 500 is larger than n_samples=100; using --sketch-size 100'
    >>> cli_wording("use solver='adam' (mini-batches)")
    'use --solver adam (mini-batches)'
    """

    def assign(m):
        value = m.group(3) if m.group(3) is not None else m.group(4) if m.group(4) is not None else m.group(2)
        return f"{_OPTIONS[m.group(1)]} {value}"

    text = _ASSIGN.sub(assign, text)
    def bare(m):
        alternative = f" or {_OPTIONS[m.group(3)]}" if m.group(3) else ""
        return f"{m.group(1)} {_OPTIONS[m.group(2)]}{alternative}"

    return _BARE.sub(bare, text)


def _show(message, category, filename, lineno, file=None, line=None):
    text = " ".join(str(message).split())  # one line, whatever the message's own line breaks
    stream = file if file is not None else sys.stderr
    try:
        stream.write(f"Warning: {cli_wording(text)}\n")
    except (OSError, ValueError):  # a closed stream: nothing to show it on
        pass


def install():
    """Show every warning of this process as one ``Warning: ...`` line on stderr, each message once.

    Dask's "Sending large graph" warning is not shown: the command line itself sends the data it read
    to the cluster, and nothing the user types would change it.
    """
    warnings.showwarning = _show
    warnings.simplefilter("default")  # once per message and place, as Python's default, also for DeprecationWarning
    warnings.filterwarnings("ignore", message="Sending large graph", category=UserWarning)
