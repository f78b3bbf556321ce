"""``skframe fit``: fit a model on a data file (or the embedded default) and report test metrics."""

from __future__ import annotations

import importlib
import inspect
import time
from pathlib import Path
from typing import Annotated, List, Optional

import typer

from ..exceptions import InvalidParameterError
from ._common import echo_json, handle_errors, parse_float_list, parse_kv, progress_bar, to_jsonable
from ._options import FitOptions

TASK_MODULES = {
    "regression": "skframe.cli._task_regression",
    "machine": "skframe.cli._task_machine",
    "structured": "skframe.cli._task_structured",
}
SCALES = ("none", "standard")
MISSING = ("error", "zero", "mean", "drop")
TASKS = ("regression", "structured")


def task_module(name):
    """Import the module implementing a CLI task (build_estimator, predict, metrics)."""
    try:
        return importlib.import_module(TASK_MODULES[name])
    except ModuleNotFoundError as exc:  # pragma: no cover - partial installs
        raise InvalidParameterError(f"task {name!r} is not available in this installation ({exc})") from exc


def choose_task(opts):
    if opts.task == "structured":
        return "structured"
    return "machine" if opts.uses_machine() else "regression"


def call_predict(module, model, X, opts):
    params = inspect.signature(module.predict).parameters
    return module.predict(model, X, opts) if len(params) >= 3 else module.predict(model, X)


DEFAULT_LAM = 1e-3


def _apply_suggestions(opts, suggested):
    """Fill in the embedded data set's hyper-parameters that the user left unset; return what was used."""
    used = {}
    kernel_is_suggested = (opts.input_kernel or opts.kernel) == suggested.get("kernel")
    if kernel_is_suggested and not opts.kernel_params and not opts.input_kernel_params:
        opts.kernel_params = dict(suggested.get("kernel_params", {}))
        used["kernel_params"] = opts.kernel_params
    if opts.lam is None:
        if kernel_is_suggested and "lam" in suggested:
            opts.lam = suggested["lam"]
            used["lam"] = opts.lam
        else:
            opts.lam = DEFAULT_LAM
    return used


def load_data(opts):
    """Return (X_train, Y_train, X_test, Y_test, dataset_info); Y are 2-D."""
    from ..datasets import load_dataset, load_default

    if opts.train is None:
        ds = load_default(random_state=opts.seed)
        info = {"name": ds.name, "source": "embedded", "description": ds.description}
        info["suggested_defaults_used"] = _apply_suggestions(opts, ds.suggested)
        return ds.X_train, ds.y_train[:, None], ds.X_test, ds.y_test[:, None], info
    if opts.lam is None:
        opts.lam = DEFAULT_LAM
    tr = load_dataset(opts.train, targets=opts.targets, missing=opts.missing)
    info = {"name": Path(opts.train).name, "source": str(opts.train), "n_missing_train": tr.n_missing,
            "missing": opts.missing}
    if opts.test is None:
        return tr.X, tr.Y, None, None, info
    te = load_dataset(opts.test, targets=opts.targets, missing=opts.missing)
    info["test"] = str(opts.test)
    info["n_missing_test"] = te.n_missing
    if te.X.shape[1] != tr.X.shape[1]:
        raise InvalidParameterError(
            f"the test file has {te.X.shape[1]} features but the training file has {tr.X.shape[1]}; "
            "check --targets and the files"
        )
    return tr.X, tr.Y, te.X, te.Y, info


def fit_model(model, X, Y, opts, description="fitting"):
    """Fit with a progress bar over kernel rows when the estimator supports it."""
    accepts = "progress" in inspect.signature(model.fit).parameters
    with progress_bar(X.shape[0], "kernel rows", enabled=not opts.json and accepts) as advance:
        if accepts and advance is not None:
            return model.fit(X, Y, progress=advance)
        return model.fit(X, Y)


def _targets_for_fit(Y, task):
    return Y[:, 0] if (Y.shape[1] == 1 and task != "structured") else Y


def run_fit(opts):
    """Run ``skframe fit`` from options; returns the JSON-serialisable report."""
    from ..datasets import FeatureScaler
    from ..persistence import save

    X_tr, Y_tr, X_te, Y_te, data_info = load_data(opts)
    scaler = FeatureScaler(opts.scale).fit(X_tr)
    X_tr = scaler.transform(X_tr)
    if X_te is not None:
        X_te = scaler.transform(X_te)
    task = choose_task(opts)
    module = task_module(task)
    model = module.build_estimator(opts)
    y_fit = _targets_for_fit(Y_tr, task)
    t0 = time.perf_counter()
    fit_model(model, X_tr, y_fit, opts)
    fit_seconds = time.perf_counter() - t0
    X_eval, Y_eval, evaluated_on = (X_te, Y_te, "test") if X_te is not None else (X_tr, Y_tr, "train")
    t0 = time.perf_counter()
    Y_pred = call_predict(module, model, X_eval, opts)
    predict_seconds = time.perf_counter() - t0
    metrics = module.metrics(model, X_eval, _targets_for_fit(Y_eval, task), Y_pred, opts)
    report = {
        "task": task,
        "metrics": metrics,
        "evaluated_on": evaluated_on,
        "fit_seconds": fit_seconds,
        "predict_seconds": predict_seconds,
        "n_train": int(X_tr.shape[0]),
        "n_test": int(X_te.shape[0]) if X_te is not None else 0,
        "n_features": int(X_tr.shape[1]),
        "n_targets": int(Y_tr.shape[1]),
        "sketch": getattr(model, "sketch_info_", None),
        "model": {"class": type(model).__name__, "params": _params(model)},
        "data": data_info,
    }
    if opts.model_out:
        extra = {
            "task": task,
            "targets": int(Y_tr.shape[1]),
            "scaler": {"mean": scaler.mean_, "scale": scaler.scale_, "with_mean": bool(scaler.with_mean_),
                       "method": opts.scale},
        }
        save(model, opts.model_out, extra=extra)
        report["model_path"] = str(opts.model_out)
    return to_jsonable(report)


def _params(model):
    out = {}
    for k, v in model.get_params(deep=False).items():
        out[k] = v if isinstance(v, (str, int, float, bool, type(None), dict, list, tuple)) else repr(v)
    return out


def _fmt(value):
    """Short human form of a report value (details stay in --json)."""
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, dict):
        return ", ".join(f"{k}={_fmt(v)}" for k, v in value.items() if not isinstance(v, (list, dict)))
    if isinstance(value, list):
        if value and all(isinstance(x, (float, int)) for x in value):
            return " ".join(f"{x:.4g}" for x in value)
        return f"[{len(value)} items; see --json]"
    return str(value)


def print_report(report):
    """Human-readable summary of a fit report."""
    typer.echo(f"model      {report['model']['class']} ({report['task']})")
    d = report["data"]
    typer.echo(f"data       {d.get('name')}: n_train={report['n_train']} n_test={report['n_test']} "
               f"features={report['n_features']} targets={report['n_targets']}")
    if d.get("suggested_defaults_used"):
        used = d["suggested_defaults_used"]
        shown = {**used.get("kernel_params", {}), **{k: v for k, v in used.items() if k != "kernel_params"}}
        typer.echo(f"defaults   {_fmt(shown)} (the data set's published hyper-parameters)")
    s = report.get("sketch")
    if s:
        nested = {k: v for k, v in s.items() if isinstance(v, dict)}
        flat = {k: v for k, v in s.items() if not isinstance(v, dict) and k != "n"}
        if flat:
            typer.echo(f"sketch     {_fmt(flat)}")
        for k, v in nested.items():
            typer.echo(f"sketch     {k}: {_fmt(v)}")
    typer.echo(f"fit        {report['fit_seconds']:.4f} s")
    typer.echo(f"predict    {report['predict_seconds']:.4f} s")
    typer.echo(f"metrics on the {report['evaluated_on']} set:")
    width = max([16] + [len(k) + 2 for k in report["metrics"]])
    for k, v in report["metrics"].items():
        typer.echo(f"  {k:<{width}}{_fmt(v)}")
    if report.get("model_path"):
        typer.echo(f"saved      {report['model_path']}")


def _choice(value, allowed, option):
    if value is None:
        return None
    v = value.lower()
    if v not in allowed:
        raise InvalidParameterError(f"{option} {value!r} is not one of {', '.join(allowed)}")
    return v


def fit(
    train: Annotated[Optional[Path], typer.Argument(help="Training data (CSV, NPZ, ARFF, LIBSVM). Omit to use the embedded Friedman-with-outliers set.")] = None,
    test: Annotated[Optional[Path], typer.Option("--test", help="Test data in the same format; metrics are computed on it (else on the training data).")] = None,
    targets: Annotated[int, typer.Option("--targets", help="Number of trailing target columns/attributes in the data files.")] = 1,
    task: Annotated[str, typer.Option("--task", help="regression (scalar/multi-output, any loss) or structured (IOKR family).")] = "regression",
    kernel: Annotated[str, typer.Option("--kernel", help="Kernel name (see `skframe plugins`).")] = "gaussian",
    kernel_param: Annotated[Optional[List[str]], typer.Option("--kernel-param", help="Kernel parameter KEY=VALUE, repeatable (e.g. gamma=0.1).")] = None,
    sketch: Annotated[str, typer.Option("--sketch", help="Sketch name (psr, psg, subsample, gaussian, accumulation, countsketch, leverage, rff) or none for the exact model.")] = "psr",
    sketch_size: Annotated[int, typer.Option("--sketch-size", help="Sketch size m (rows of R).")] = 100,
    sketch_param: Annotated[Optional[List[str]], typer.Option("--sketch-param", help="Sketch parameter KEY=VALUE, repeatable (e.g. p=0.005).")] = None,
    lam: Annotated[Optional[float], typer.Option("--lam", help="Regularisation lambda > 0 (default 1e-3; 1e-7 on the embedded data).")] = None,
    loss: Annotated[str, typer.Option("--loss", help="Loss: square, huber, epsilon-svr, epsilon-ridge, pinball, hinge.")] = "square",
    loss_param: Annotated[Optional[List[str]], typer.Option("--loss-param", help="Loss parameter KEY=VALUE, repeatable (e.g. kappa=1, epsilon=0.1).")] = None,
    solver: Annotated[Optional[str], typer.Option("--solver", help="Solver: closed-form, admm, dual-cd, lbfgs or adam (default: the loss's default_solver).")] = None,
    epochs: Annotated[Optional[int], typer.Option("--epochs", help="Epochs of the iterative solvers.")] = None,
    batch_size: Annotated[Optional[int], typer.Option("--batch-size", help="Mini-batch size of the Adam solver.")] = None,
    learning_rate: Annotated[Optional[float], typer.Option("--learning-rate", help="Step size of the Adam solver.")] = None,
    tol: Annotated[Optional[float], typer.Option("--tol", help="Convergence tolerance of the iterative solvers.")] = None,
    early_stopping: Annotated[bool, typer.Option("--early-stopping/--no-early-stopping", help="Stop when the validation loss stops improving.")] = False,
    validation_fraction: Annotated[float, typer.Option("--validation-fraction", help="Fraction of training data held out for early stopping.")] = 0.1,
    quantiles: Annotated[Optional[str], typer.Option("--quantiles", help="Comma-separated quantile levels for joint quantile regression, e.g. 0.1,0.5,0.9.")] = None,
    output_matrix: Annotated[Optional[str], typer.Option("--output-matrix", help="Output matrix M of the decomposable kernel k*M: identity, quantile, graph, covariance.")] = None,
    output_matrix_param: Annotated[Optional[List[str]], typer.Option("--output-matrix-param", help="Output matrix parameter KEY=VALUE (e.g. mu=0.5, adjacency=FILE, gamma=1).")] = None,
    input_kernel: Annotated[Optional[str], typer.Option("--input-kernel", help="Structured task: input kernel (default: --kernel).")] = None,
    input_kernel_param: Annotated[Optional[List[str]], typer.Option("--input-kernel-param", help="Input kernel parameter KEY=VALUE, repeatable.")] = None,
    output_kernel: Annotated[Optional[str], typer.Option("--output-kernel", help="Structured task: output kernel.")] = None,
    output_kernel_param: Annotated[Optional[List[str]], typer.Option("--output-kernel-param", help="Output kernel parameter KEY=VALUE, repeatable.")] = None,
    input_sketch: Annotated[Optional[str], typer.Option("--input-sketch", help="Structured task: input sketch name or none.")] = None,
    input_sketch_size: Annotated[Optional[int], typer.Option("--input-sketch-size", help="Input sketch size m_X.")] = None,
    input_sketch_param: Annotated[Optional[List[str]], typer.Option("--input-sketch-param", help="Input sketch parameter KEY=VALUE, repeatable.")] = None,
    output_sketch: Annotated[Optional[str], typer.Option("--output-sketch", help="Structured task: output sketch name or none.")] = None,
    output_sketch_size: Annotated[Optional[int], typer.Option("--output-sketch-size", help="Output sketch size m_Y.")] = None,
    output_sketch_param: Annotated[Optional[List[str]], typer.Option("--output-sketch-param", help="Output sketch parameter KEY=VALUE, repeatable.")] = None,
    candidates: Annotated[Optional[Path], typer.Option("--candidates", help="Structured task: candidate outputs file (default: distinct training outputs).")] = None,
    top_k: Annotated[Optional[int], typer.Option("--top-k", help="Structured task: also return the K best candidates with scores.")] = None,
    n_draws: Annotated[int, typer.Option("--n-draws", help="Structured task: ensemble over this many sketch draws.")] = 1,
    aggregate: Annotated[str, typer.Option("--aggregate", help="Structured task: ensemble score aggregation, mean or max.")] = "mean",
    scale: Annotated[str, typer.Option("--scale", help="Input scaling: none or standard (train statistics; sparse data stay sparse).")] = "none",
    missing: Annotated[str, typer.Option("--missing", help="Missing values: error (default), zero, mean or drop.")] = "error",
    seed: Annotated[int, typer.Option("--seed", help="Random seed of the sketch draw (and of the default data).")] = 0,
    model_out: Annotated[Optional[Path], typer.Option("--model-out", help="Save the fitted model to this file (safe format, no pickle).")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of the human summary.")] = False,
):
    """Fit a sketched kernel model and report metrics, times and the sketch drawn."""
    opts = FitOptions(
        train=str(train) if train else None,
        test=str(test) if test else None,
        targets=targets,
        task=_choice(task, TASKS, "--task"),
        kernel=kernel,
        kernel_params=parse_kv(kernel_param, "--kernel-param"),
        sketch=sketch,
        sketch_size=sketch_size,
        sketch_params=parse_kv(sketch_param, "--sketch-param"),
        lam=lam,
        loss=loss,
        loss_params=parse_kv(loss_param, "--loss-param"),
        solver=solver,
        epochs=epochs,
        batch_size=batch_size,
        learning_rate=learning_rate,
        tol=tol,
        early_stopping=early_stopping,
        validation_fraction=validation_fraction,
        quantiles=parse_float_list(quantiles, "--quantiles"),
        output_matrix=output_matrix,
        output_matrix_params=parse_kv(output_matrix_param, "--output-matrix-param"),
        input_kernel=input_kernel,
        input_kernel_params=parse_kv(input_kernel_param, "--input-kernel-param"),
        output_kernel=output_kernel,
        output_kernel_params=parse_kv(output_kernel_param, "--output-kernel-param"),
        input_sketch=input_sketch,
        input_sketch_size=input_sketch_size,
        input_sketch_params=parse_kv(input_sketch_param, "--input-sketch-param"),
        output_sketch=output_sketch,
        output_sketch_size=output_sketch_size,
        output_sketch_params=parse_kv(output_sketch_param, "--output-sketch-param"),
        candidates=str(candidates) if candidates else None,
        top_k=top_k,
        n_draws=n_draws,
        aggregate=aggregate,
        scale=_choice(scale, SCALES, "--scale"),
        missing=_choice(missing, MISSING, "--missing"),
        seed=seed,
        model_out=str(model_out) if model_out else None,
        json=json_out,
    )
    if targets < 1:
        raise InvalidParameterError(f"--targets {targets} must be >= 1: the number of trailing target columns")
    report = run_fit(opts)
    if json_out:
        echo_json(report)
    else:
        print_report(report)


fit = handle_errors(fit)
