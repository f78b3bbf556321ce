"""``skframe predict`` and ``skframe evaluate``: use a saved model on new data."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import Annotated, List, Optional

import typer

from skframe.cli._common import echo_json, handle_errors, to_jsonable
from skframe.cli._extrapolation import RangeFlags
from skframe.cli._help import help_all_command
from skframe.cli._options import FORMATS, MISSING, FitOptions, _choice
from skframe.cli._outputs import check_predict_out
from skframe.cli._services import call_predict, format_metrics, task_module, write_predictions
from skframe.cli._tables import check_saved, read_saved
from skframe.exceptions import InvalidParameterError, PersistenceError, SkframeError


def _load(model_path):
    from skframe.persistence import load_bundle  # lazy: loads NumPy and SciPy (~0.3 s at start-up)

    model, extra = load_bundle(model_path)
    check_saved(model, extra, model_path)  # the table encoding and the class labels kept beside the model
    return model, extra


def _inconsistent(model_path):
    """A context in which an estimator's own ValueError, TypeError or IndexError (arrays of a loaded model that do
    not fit together: a file tampered with, checksums and all) becomes one PersistenceError naming the file."""
    @contextlib.contextmanager
    def guard():
        try:
            yield
        except SkframeError:
            raise
        except (ValueError, TypeError, IndexError) as exc:
            raise PersistenceError(f"the model file {str(model_path)!r} holds arrays that do not fit together "
                                   f"({type(exc).__name__}: {str(exc)[:200]}); it was tampered with or written by "
                                   "an incompatible version: fit the model again") from exc

    return guard()


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
    import numpy as np  # lazy: NumPy costs ~0.1 s at start-up

    from skframe.datasets import FeatureScaler  # lazy: loads scikit-learn (~0.6 s at start-up)

    sc = extra.get("scaler") if isinstance(extra, dict) else None
    if not sc or sc.get("method", "none") == "none":
        return X
    scaler = FeatureScaler(sc["method"])
    scaler.mean_ = np.asarray(sc["mean"])
    scaler.scale_ = np.asarray(sc["scale"])
    scaler.with_mean_ = bool(sc.get("with_mean"))
    scaler.n_features_in_ = scaler.scale_.shape[0]
    return scaler.transform(X)


def _read(data, targets, missing, fmt, extra=None, columns=None, with_targets=None):
    """Features and targets of a data file; ``targets=0`` reads a features-only CSV/ARFF file.

    ``columns`` (a :class:`skframe.io.Columns`) chooses the feature and target columns, and
    ``with_targets`` says whether targets are read (default: ``targets > 0``).
    ``missing="mean"`` fills missing cells with the TRAINING means saved beside the model
    (``train_feature_means``, ``train_target_means``), not with the means of DATA.
    """
    from skframe.datasets import load_dataset  # lazy: loads scikit-learn (~0.6 s at start-up)

    with_targets = bool(targets) if with_targets is None else with_targets
    means = None
    if missing == "mean":
        means = (_saved(extra, "train_feature_means"), _saved(extra, "train_target_means") if with_targets else None)
    ds = load_dataset(str(data), targets=targets, missing=missing, fmt=fmt, means=means, columns=columns)
    return ds.X, (ds.Y if with_targets else None)


def _layout(est, extra):
    """The model's columns (skframe.cli._columns.Layout); the model's feature names are matched here, once."""
    from skframe.cli._columns import Layout  # lazy: loads NumPy (~0.1 s at start-up)

    layout = Layout.of_model(est, extra)
    # DATA's columns are chosen by name and put in the model's order before predicting: the model then takes
    # plain arrays (scikit-learn would warn that they carry no names)
    est.__dict__.pop("feature_names_in_", None)
    return layout


def _plan(layout, data, fmt, *, with_targets, targets, columns, drop, target):
    from skframe.cli._columns import cli_columns, read_plan  # lazy: loads NumPy (~0.1 s at start-up)

    return read_plan(layout, str(data), fmt, with_targets=with_targets, targets=targets,
                     choice=cli_columns(columns, drop, target))


def prediction_names(est, layout):
    """Column names of the predictions: the targets' names; one column per level for quantiles (``y@0.5``)."""
    names = layout.target_labels
    levels = getattr(est, "quantiles_", None)
    if levels is not None and len(names) == 1:
        return [f"{names[0]}@{float(q):g}" for q in levels]
    return names


def _saved(extra, key, default=None):
    value = extra.get(key) if isinstance(extra, dict) else None
    return default if value is None else value


def _fit_settings(extra, missing, fmt):
    """The ``--missing`` policy and ``--format`` of this command, defaulting to those used at fit time."""
    missing = _choice(missing, MISSING, "--missing") or _saved(extra, "missing", "error")
    fmt = _choice(fmt, FORMATS, "--format") or _saved(extra, "format")
    return missing, fmt


def _options_for(extra, task):
    """Fit options carrying what the task modules need at prediction time (training target means)."""
    import numpy as np  # lazy: NumPy costs ~0.1 s at start-up

    means = _saved(extra, "train_target_means")
    return FitOptions(task=task if task == "structured" else "regression", top_k=_saved(extra, "top_k"),
                      train_target_means=None if means is None else np.asarray(means, dtype=np.float64))


MISSING_HELP = "Missing values: error, zero, mean (training means) or drop (default: as at fit time)."
FORMAT_HELP = "File format when the extension does not tell: csv, npz, arff or libsvm (default: as at fit time)."


def _predict_in_blocks(est, extra, data, targets, missing, fmt, out, columns=None, header=None, flags=None):
    """CSV / LIBSVM / NPY data and a ``.csv`` --out: read, predict and write block by block (True when done)."""
    from skframe.cli import _streamed  # lazy: loads NumPy (~0.1 s at start-up)

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
        from skframe.cli._graph_data import predict_file  # lazy: loads NumPy (~0.1 s at start-up)

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
    if proba:  # one column per class (skframe.cli._classification)
        from skframe.cli._classification import probability_columns  # lazy: loads NumPy

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
    if interval is not None:  # lower/upper columns per target (skframe.cli._intervals)
        from skframe.cli._intervals import with_bounds  # lazy: loads NumPy and SciPy (~0.3 s at start-up)

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
        from skframe.cli._graph_data import evaluate_file  # lazy: loads NumPy (~0.1 s at start-up)

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
