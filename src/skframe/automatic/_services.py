"""What the automatic model and the command modules share: the task modules, predicting with one, formatting and
writing results.

:class:`~skframe.automatic.TableModel`, ``skframe fit``, ``skframe predict`` / ``evaluate`` and the molecule and graph
files (:mod:`skframe.automatic._graph_data`) all use these services; they live here, below the command modules,
so that no command module imports another. Importing this module is light (the standard library); text goes to
``sys.stdout`` (:func:`echo`), so the library writes no line through the command line's printer.
"""

from __future__ import annotations

import csv
import importlib
import inspect
import io
import sys
from pathlib import Path

from skframe.exceptions import InvalidParameterError

__all__ = ["TASK_MODULES", "task_module", "call_predict", "format_value", "write_predictions", "echo"]


def echo(text):
    """Write ``text`` to standard output now (the caller adds the line ends)."""
    sys.stdout.write(text)
    sys.stdout.flush()

TASK_MODULES = {
    "regression": "skframe.automatic._task_regression",
    "machine": "skframe.automatic._task_machine",
    "structured": "skframe.automatic._task_structured",
}


def task_module(name):
    """Import the module implementing a CLI task (build_estimator, predict, metrics)."""
    try:
        return importlib.import_module(TASK_MODULES[name])
    except ModuleNotFoundError as exc:  # pragma: no cover - partial installs
        raise InvalidParameterError(f"task {name!r} is not available in this installation ({exc})") from exc


def call_predict(module, model, X, opts):
    """``module.predict(model, X, opts)``, or ``module.predict(model, X)`` for a task that takes no options."""
    params = inspect.signature(module.predict).parameters
    return module.predict(model, X, opts) if len(params) >= 3 else module.predict(model, X)


def format_metrics(metrics):
    """The metrics block of a command's summary: one indented ``name  value`` line per metric."""
    width = max([16] + [len(k) + 2 for k in metrics])
    return "\n".join(f"  {k:<{width}}{format_value(v)}" for k, v in metrics.items())


def format_value(value):
    """Short human form of a report value (details stay in --json)."""
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, dict):
        return ", ".join(f"{k}={format_value(v)}" for k, v in value.items() if not isinstance(v, (list, dict)))
    if isinstance(value, list):
        if value and all(isinstance(x, (float, int)) for x in value):
            return " ".join(f"{x:.4g}" for x in value)
        if 0 < len(value) <= 12 and all(isinstance(r, list) and all(isinstance(x, int) for x in r) for r in value):
            return " | ".join(" ".join(str(x) for x in r) for r in value)  # a small matrix of counts, row by row
        return f"[{len(value)} items; see --json]"
    return str(value)


def _write_labels(out, P, names):
    """Text labels as a CSV column (quoted where needed) on stdout or to a ``.csv`` / ``.npz`` file, atomically."""
    import numpy as np  # lazy: NumPy costs ~0.1 s at the start of every command

    rows = P.reshape(P.shape[0], -1)
    if names is not None and len(names) != rows.shape[1]:
        names = [f"y{j}" for j in range(rows.shape[1])]
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    if names is not None:
        writer.writerow(names)
    writer.writerows([[str(v) for v in row] for row in rows])
    if out is None:
        echo(buf.getvalue())
        return
    suffix = Path(out).suffix.lower()
    if suffix not in (".csv", ".npz"):
        raise InvalidParameterError(f"--out {out}: use a .csv or .npz file name")
    from skframe.io import atomic_write  # lazy: skframe.io loads SciPy's sparse matrices

    with atomic_write(out, "wb") as fh:  # an interrupted write leaves the previous file intact
        if suffix == ".npz":  # fixed-width strings, read back without pickle
            np.savez(fh, predictions=P.astype(str), **({"names": np.asarray(names, dtype=str)} if names else {}))
        else:
            fh.write(buf.getvalue().encode("utf-8"))


def write_predictions(out, P, names=None):
    """Predictions as CSV on stdout (``out=None``), or to a ``.csv`` / ``.npz`` file, atomically.

    ``names``: the columns' names, written as a header row (CSV) or as ``names`` (NPZ); None for none.
    """
    import numpy as np  # lazy: NumPy costs ~0.1 s at the start of every command

    P = np.asarray(P)
    if P.dtype.kind in "OUS":  # class labels as text (a classifier fitted on them): written as they are
        return _write_labels(out, P, names)
    if names is not None and len(names) != (1 if P.ndim == 1 else P.shape[1]):
        names = [f"y{j}" for j in range(1 if P.ndim == 1 else P.shape[1])]  # as a file without a header
    if out is None:
        if names is not None:
            echo(",".join(names) + "\n")
        rows = P[:, None] if P.ndim == 1 else P
        for start in range(0, len(rows), 4096):  # a block of lines per write
            echo("".join(",".join(repr(float(v)) for v in np.ravel(row)) + "\n" for row in rows[start:start + 4096]))
        return
    suffix = Path(out).suffix.lower()
    if suffix not in (".csv", ".npz"):
        raise InvalidParameterError(f"--out {out}: use a .csv or .npz file name")
    from skframe.io import atomic_write  # lazy: skframe.io loads SciPy's sparse matrices

    with atomic_write(out, "wb") as fh:  # an interrupted write leaves the previous file intact
        if suffix == ".npz":
            np.savez(fh, predictions=P, **({"names": np.asarray(names, dtype=str)} if names is not None else {}))
        else:
            if names is not None:
                fh.write((",".join(names) + "\n").encode("utf-8"))
            np.savetxt(fh, P[:, None] if P.ndim == 1 else P, delimiter=",", fmt="%.17g")
