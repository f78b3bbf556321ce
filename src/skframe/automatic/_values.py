"""Plain values for the automatic model and the command line: ``KEY=VALUE`` options, comma-separated numbers, a
progress bar on a terminal, and NumPy values made JSON-ready.

This module imports only the standard library and :mod:`skframe.exceptions`: the command line's start-up loads it.
"""

from __future__ import annotations

import sys

from skframe.exceptions import InvalidParameterError

__all__ = ["parse_kv", "parse_float_list", "progress_bar", "to_jsonable"]


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
