"""``skframe predict`` and ``skframe evaluate``: use a saved model on new data."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, List, Optional

import typer

from skframe.automatic._raw_tables import read_saved
from skframe.automatic._services import call_predict, format_metrics, task_module, write_predictions
from skframe.cli._common import echo_json, handle_errors, to_jsonable
from skframe.cli._extrapolation import RangeFlags
from skframe.cli._help import help_all_command
from skframe.cli._outputs import check_predict_out
from skframe.exceptions import InvalidParameterError


def _load(model_path):
    from skframe.automatic.replay import load_model  # lazy: loads NumPy and SciPy (~0.3 s at start-up)

    return load_model(model_path)


def _inconsistent(model_path):
    from skframe.automatic.replay import inconsistent  # lazy: loads NumPy (~0.1 s at start-up)

    return inconsistent(model_path)


def _check_features(est, X, data, targets):
    from skframe.automatic.replay import check_features  # lazy: loads NumPy (~0.1 s at start-up)

    return check_features(est, X, data, targets)


def _apply_scaler(X, extra):
    """Scale X with the training statistics saved beside the model (:func:`skframe.automatic.replay.apply_scaler`)."""
    from skframe.automatic.replay import apply_scaler  # lazy: loads NumPy (~0.1 s at start-up)

    return apply_scaler(X, extra)


def _read(data, targets, missing, fmt, extra=None, columns=None, with_targets=None):
    from skframe.automatic.replay import read_file  # lazy: loads NumPy (~0.1 s at start-up)

    return read_file(data, targets, missing, fmt, extra, columns=columns, with_targets=with_targets)


def _layout(est, extra):
    from skframe.automatic.replay import model_layout  # lazy: loads NumPy (~0.1 s at start-up)

    return model_layout(est, extra)


def _plan(layout, data, fmt, *, with_targets, targets, columns, drop, target):
    from skframe.automatic.replay import read_plan_for  # lazy: loads NumPy (~0.1 s at start-up)

    return read_plan_for(layout, data, fmt, with_targets=with_targets, targets=targets, columns=columns, drop=drop,
                         target=target)


def prediction_names(est, layout):
    from skframe.automatic.replay import prediction_names as names  # lazy: loads NumPy (~0.1 s at start-up)

    return names(est, layout)


def _saved(extra, key, default=None):
    value = extra.get(key) if isinstance(extra, dict) else None
    return default if value is None else value


def _fit_settings(extra, missing, fmt):
    from skframe.automatic.replay import fit_settings  # lazy: loads NumPy (~0.1 s at start-up)

    return fit_settings(extra, missing, fmt)


def _options_for(extra, task):
    from skframe.automatic.replay import options_for  # lazy: loads NumPy (~0.1 s at start-up)

    return options_for(extra, task)


MISSING_HELP = "Missing values: error, zero, mean (training means) or drop (default: as at fit time)."
FORMAT_HELP = "File format when the extension does not tell: csv, npz, arff or libsvm (default: as at fit time)."


def _predict_in_blocks(est, extra, data, targets, missing, fmt, out, columns=None, header=None, flags=None):
    """CSV / LIBSVM / NPY data and a ``.csv`` --out: read, predict and write block by block (True when done)."""
    from skframe.automatic import _streamed  # lazy: loads NumPy (~0.1 s at start-up)

    task = _saved(extra, "task", "regression")
    if not _streamed.can_stream_predict(data, fmt, out, task):
        return False
    module, opts = task_module(task), _options_for(extra, task)
    _streamed.predict_streamed(est, extra, data, targets=targets, missing=missing, fmt=fmt, out=str(out),
                               predict_block=lambda X: (flags or (lambda P: P))(call_predict(module, est, X, opts)),
                               check_features=_check_features, scale=_apply_scaler, columns=columns, header=header)
    return True


COLUMNS_HELP = "Feature columns of DATA by name or position from 1 (default: the model's own, by name)."
DROP_HELP = "Columns of DATA to leave out (never read), by name or position from 1."
TARGET_HELP = "Target column(s) of DATA, by name or position from 1 (default: the model's own)."


def predict(
    model: Annotated[Path, typer.Argument(help="Model file written by `skframe fit --model-out`.", metavar="MODEL")],
    data: Annotated[Path, typer.Argument(help="Data file (CSV, NPZ, ARFF, LIBSVM).", metavar="DATA")],
    targets: Annotated[Optional[int], typer.Option(
        "--targets", help="Trailing target columns of DATA to ignore (default: none, or the model's own).",
        show_default=False)] = None,
    missing: Annotated[Optional[str], typer.Option("--missing", help=MISSING_HELP, show_default=False)] = None,
    fmt: Annotated[Optional[str], typer.Option("--format", help=FORMAT_HELP, show_default=False)] = None,
    out: Annotated[Optional[Path], typer.Option(
        "--out", help="Write predictions to this .csv or .npz file, atomically (default: CSV on stdout).")] = None,
    columns: Annotated[Optional[List[str]], typer.Option("--columns", help=COLUMNS_HELP, show_default=False,
                                                         metavar="NAME|POS")] = None,
    drop: Annotated[Optional[List[str]], typer.Option("--drop", help=DROP_HELP, show_default=False,
                                                      metavar="NAME|POS")] = None,
    target: Annotated[Optional[List[str]], typer.Option("--target", help="Target column(s) of DATA to ignore, by "
                                                        "name or position from 1.", show_default=False,
                                                        metavar="NAME|POS")] = None,
    header: Annotated[bool, typer.Option("--header/--no-header", help="Write a header row of the targets' names "
                                         "(default), or --no-header.")] = True,
    interval: Annotated[Optional[float], typer.Option(
        "--interval", help="Add <target>_lower/_upper columns: intervals at this coverage level (fit --interval).",
        show_default=False, metavar="LEVEL")] = None,
    proba: Annotated[bool, typer.Option("--proba", help="Class probabilities, one column per class (logistic or "
                                        "multinomial loss).")] = False,
    clip_range: Annotated[bool, typer.Option("--clip-range", help="Clip each prediction of a regression model to "
                                             "the training targets' range (off by default).")] = False,
):
    """Predict with a saved model; one row per sample, under a header row of the targets' names.

    A regression model notes on stderr the predictions outside the training targets' range widened by half its
    span on each side (rows from 1, with their values)."""
    if out is not None:
        check_predict_out(out, model, data)  # before any work: not the model, not DATA, a writable file
    est, extra = _load(model)
    if _saved(extra, "representation"):  # molecules or graphs: read as at fit time
        from skframe.automatic._graph_data import predict_file  # lazy: loads NumPy (~0.1 s at start-up)

        return predict_file(est, extra, data, str(out) if out else None, drop=missing == "drop")
    explicit = missing is not None
    missing, fmt = _fit_settings(extra, missing, fmt)
    if missing == "drop" and not explicit:
        missing = "error"  # dropping rows would misalign the predictions with DATA: only on request
    if targets is not None and targets < 0:
        raise InvalidParameterError(f"--targets {targets} must be >= 0: the number of trailing target columns")
    layout = _layout(est, extra)
    names = prediction_names(est, layout) if header else None
    flags = RangeFlags(est, clip=clip_range)  # predictions outside the training range: noted on stderr
    if proba:  # one column per class (skframe.automatic.classification)
        from skframe.automatic.classification import probability_columns  # lazy: loads NumPy

        names = probability_columns(est, names)
    if _saved(extra, "encoding"):  # a raw table: its columns typed and encoded as at fit time
        X, _, info = read_saved(extra, layout, data, with_targets=False, missing=missing, fmt=fmt)
        _report_unknown(info)
    else:
        cols, targets = _plan(layout, data, fmt, with_targets=False, targets=targets, columns=columns, drop=drop,
                              target=target)
        with _inconsistent(model):
            blocks = interval is None and not proba  # streamed in blocks: plain predictions only
            if blocks and _predict_in_blocks(est, extra, data, targets, missing, fmt, out, columns=cols, header=names,
                                             flags=flags):
                return flags.note()
        X, _ = _read(data, targets, missing, fmt, extra, columns=cols, with_targets=False)
    _check_features(est, X, data, targets)
    task = _saved(extra, "task", "regression")
    with _inconsistent(model):
        X = _apply_scaler(X, extra)
        P = est.predict_proba(X) if proba else flags(call_predict(task_module(task), est, X, _options_for(extra, task)))
    if interval is not None:  # lower/upper columns per target (skframe.automatic.intervals)
        from skframe.automatic.intervals import with_bounds  # lazy: loads NumPy and SciPy (~0.3 s at start-up)

        P, names = with_bounds(est, extra, X, P, names, interval)
    write_predictions(str(out) if out else None, P, names=names)
    flags.note()


def evaluate(
    model: Annotated[Path, typer.Argument(help="Model file written by `skframe fit --model-out`.", metavar="MODEL")],
    data: Annotated[Path, typer.Argument(help="Labelled data file (CSV, NPZ, ARFF, LIBSVM).", metavar="DATA")],
    targets: Annotated[Optional[int], typer.Option(
        "--targets", help="Number of trailing target columns in DATA (default: the model's own number of targets).",
        show_default=False)] = None,
    missing: Annotated[Optional[str], typer.Option("--missing", help=MISSING_HELP, show_default=False)] = None,
    fmt: Annotated[Optional[str], typer.Option("--format", help=FORMAT_HELP, show_default=False)] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    columns: Annotated[Optional[List[str]], typer.Option("--columns", help=COLUMNS_HELP, show_default=False,
                                                         metavar="NAME|POS")] = None,
    drop: Annotated[Optional[List[str]], typer.Option("--drop", help=DROP_HELP, show_default=False,
                                                      metavar="NAME|POS")] = None,
    target: Annotated[Optional[List[str]], typer.Option("--target", help=TARGET_HELP, show_default=False,
                                                        metavar="NAME|POS")] = None,
):
    """Evaluate a saved model on labelled data and print its metrics."""
    est, extra = _load(model)
    if _saved(extra, "representation"):  # molecules or graphs: read as at fit time
        from skframe.automatic._graph_data import evaluate_file  # lazy: loads NumPy (~0.1 s at start-up)

        return _print_evaluation(evaluate_file(est, extra, data, drop=missing == "drop"), json_out)
    if targets is not None and targets < 1:
        raise InvalidParameterError(f"--targets {targets} must be >= 1 to evaluate")
    missing, fmt = _fit_settings(extra, missing, fmt)
    layout = _layout(est, extra)
    info = {}
    if _saved(extra, "encoding"):  # a raw table: its columns typed and encoded as at fit time
        X, Y, info = read_saved(extra, layout, data, with_targets=True, missing=missing, target=target, fmt=fmt)
        targets = Y.shape[1]
    else:
        cols, targets = _plan(layout, data, fmt, with_targets=True, targets=targets, columns=columns, drop=drop,
                              target=target)
        X, Y = _read(data, targets, missing, fmt, extra, columns=cols, with_targets=True)
    _check_features(est, X, data, targets)
    task = _saved(extra, "task", "regression")
    module = task_module(task)
    opts = _options_for(extra, task)
    t0 = time.perf_counter()
    with _inconsistent(model):
        X = _apply_scaler(X, extra)
        P = call_predict(module, est, X, opts)
    seconds = time.perf_counter() - t0
    Yt = Y[:, 0] if (Y.shape[1] == 1 and task != "structured") else Y
    report = {"task": task, "metrics": module.metrics(est, X, Yt, P, opts), "predict_seconds": seconds,
              "n_samples": int(X.shape[0]), "model": type(est).__name__}
    if info.get("unknown_categories"):
        report["unknown_categories"] = info["unknown_categories"]
    if json_out:
        echo_json(report)
        return
    typer.echo(f"model      {report['model']} ({task}) on {report['n_samples']} samples, {seconds:.4f} s")
    typer.echo(format_metrics(to_jsonable(report["metrics"])))
    if report.get("unknown_categories"):
        typer.echo(f"unknown    categories not seen in training (rows of zeros): {report['unknown_categories']}")


def _report_unknown(info):
    """One stderr line counting the categories of DATA that the model never saw (encoded as rows of zeros)."""
    if info.get("unknown_categories"):
        counts = ", ".join(f"{k}: {v}" for k, v in info["unknown_categories"].items())
        typer.echo(f"note: categories not seen in training, encoded as zeros ({counts})", err=True)


def _print_evaluation(report, json_out):
    """Print an evaluation report (molecules and graphs) as ``evaluate`` prints its own."""
    if json_out:
        echo_json(report)
        return
    typer.echo(f"model      {report['model']} ({report['task']}) on {report['n_samples']} samples, "
               f"{report['predict_seconds']:.4f} s")
    typer.echo(format_metrics(to_jsonable(report["metrics"])))


predict = help_all_command(handle_errors(predict))  # --help-all: as every command (skframe.cli._help)
evaluate = help_all_command(handle_errors(evaluate))
