"""``skframe predict`` and ``skframe evaluate``: use a saved model on new data."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Optional

import numpy as np
import typer

from ..exceptions import InvalidParameterError
from ._common import echo_json, handle_errors, to_jsonable
from ._options import FitOptions
from .fit import _fmt, call_predict, task_module


def _load(model_path):
    from ..persistence import load_bundle

    model, extra = load_bundle(model_path)
    return model, extra


def _check_features(est, X, data, targets):
    expected = getattr(est, "n_features_in_", None)
    if expected is not None and X.shape[1] != expected:
        hint = (f"use --targets {targets + X.shape[1] - expected} if its last columns are targets"
                if X.shape[1] > expected else "check that it is the same kind of data (and --targets)")
        raise InvalidParameterError(
            f"{data} has {X.shape[1]} feature columns but the model was trained on {expected}; {hint}"
        )


def _apply_scaler(X, extra):
    """Scale X with the training statistics saved beside the model (the fit's FeatureScaler)."""
    from ..datasets import FeatureScaler

    sc = extra.get("scaler") if isinstance(extra, dict) else None
    if not sc or sc.get("method", "none") == "none":
        return X
    scaler = FeatureScaler(sc["method"])
    scaler.mean_ = np.asarray(sc["mean"])
    scaler.scale_ = np.asarray(sc["scale"])
    scaler.with_mean_ = bool(sc.get("with_mean"))
    scaler.n_features_in_ = scaler.scale_.shape[0]
    return scaler.transform(X)


def _read(data, targets, missing):
    """Features and targets of a data file; ``targets=0`` reads a features-only CSV/ARFF file."""
    from ..datasets import load_dataset

    ds = load_dataset(str(data), targets=targets, missing=missing)
    return ds.X, (ds.Y if targets else None)


def _write(out, P):
    P = np.asarray(P)
    if out is None:
        rows = P[:, None] if P.ndim == 1 else P
        for row in rows:
            typer.echo(",".join(repr(float(v)) for v in np.ravel(row)))
        return

    suffix = Path(out).suffix.lower()
    if suffix not in (".csv", ".npz"):
        raise InvalidParameterError(f"--out {out}: use a .csv or .npz file name")
    if suffix == ".npz":
        np.savez(out, predictions=P)
    else:
        mat = P[:, None] if P.ndim == 1 else P
        np.savetxt(out, mat, delimiter=",", fmt="%.17g")


def predict(
    model: Annotated[Path, typer.Argument(help="Model file written by `skframe fit --model-out`.")],
    data: Annotated[Path, typer.Argument(help="Data file (CSV, NPZ, ARFF, LIBSVM).")],
    targets: Annotated[int, typer.Option("--targets", help="Number of trailing target columns in DATA to ignore (0: features only).")] = 0,
    missing: Annotated[str, typer.Option("--missing", help="Missing values: error, zero, mean or drop.")] = "error",
    out: Annotated[Optional[Path], typer.Option("--out", help="Write predictions to this .csv or .npz file (default: CSV on stdout).")] = None,
):
    """Predict with a saved model; one row per sample."""
    est, extra = _load(model)
    X, _ = _read(data, targets, missing)
    _check_features(est, X, data, targets)
    X = _apply_scaler(X, extra)
    task = extra.get("task", "regression") if isinstance(extra, dict) else "regression"
    P = call_predict(task_module(task), est, X, FitOptions(task=task))
    _write(str(out) if out else None, P)


def evaluate(
    model: Annotated[Path, typer.Argument(help="Model file written by `skframe fit --model-out`.")],
    data: Annotated[Path, typer.Argument(help="Labelled data file (CSV, NPZ, ARFF, LIBSVM).")],
    targets: Annotated[int, typer.Option("--targets", help="Number of trailing target columns in DATA.")] = 1,
    missing: Annotated[str, typer.Option("--missing", help="Missing values: error, zero, mean or drop.")] = "error",
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
):
    """Evaluate a saved model on labelled data and print its metrics."""
    est, extra = _load(model)
    if targets < 1:
        raise InvalidParameterError(f"--targets {targets} must be >= 1 to evaluate")
    X, Y = _read(data, targets, missing)
    _check_features(est, X, data, targets)
    X = _apply_scaler(X, extra)
    task = extra.get("task", "regression") if isinstance(extra, dict) else "regression"
    module = task_module(task)
    opts = FitOptions(task=task)
    t0 = time.perf_counter()
    P = call_predict(module, est, X, opts)
    seconds = time.perf_counter() - t0
    Yt = Y[:, 0] if (Y.shape[1] == 1 and task != "structured") else Y
    report = {"task": task, "metrics": module.metrics(est, X, Yt, P, opts), "predict_seconds": seconds,
              "n_samples": int(X.shape[0]), "model": type(est).__name__}
    if json_out:
        echo_json(report)
        return
    typer.echo(f"model      {report['model']} ({task}) on {report['n_samples']} samples, {seconds:.4f} s")
    metrics = to_jsonable(report["metrics"])
    width = max([16] + [len(k) + 2 for k in metrics])
    for k, v in metrics.items():
        typer.echo(f"  {k:<{width}}{_fmt(v)}")


predict = handle_errors(predict)
evaluate = handle_errors(evaluate)
