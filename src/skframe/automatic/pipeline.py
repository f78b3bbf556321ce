"""The automatic model's pipeline: read the data, decide, build, fit, evaluate, and the state a model file keeps.

Both doors run this code: :class:`skframe.automatic.TableModel` (Python) and ``skframe fit`` (the command line,
which adds its outputs: ``--explain``, ``--png``, the printed report). ``opts`` is the fit options object
(:class:`skframe.automatic.options.TableOptions`: one table of names and defaults for both doors); every decision taken
here is written into the report with its reason (``data.scale``, ``data.task_reason``, ``data.target``,
``chosen``, ``interval``).
"""

from __future__ import annotations

import inspect
import time

import numpy as np

from skframe.automatic import _streamed
from skframe.automatic._fit_data import DEFAULT_LAM, load_data
from skframe.automatic._fit_warnings import fit_warnings
from skframe.automatic._graph_data import model_extra
from skframe.automatic._raw_tables import is_labels
from skframe.automatic._services import call_predict, task_module
from skframe.automatic._values import parse_float_list, progress_bar
from skframe.automatic.chosen import chosen_info, default_auto_gamma, solver_report, training_info
from skframe.automatic.holdout import fit_held_out, holdout_evaluation, holdout_rows
from skframe.automatic.intervals import check_task, fit_intervals
from skframe.automatic.replay import scaler_state
from skframe.automatic.scaling import resolve_scale
from skframe.automatic.task import check_class_weight, choose_task, is_multilabel, targets_for_fit, task_is_numeric
from skframe.compute.distributed import dask_client, to_dask
from skframe.compute.plan import default_sketch, describe_data
from skframe.datasets import FeatureScaler
from skframe.exceptions import InvalidParameterError
from skframe.io.formats import resolve_format
from skframe.io.missing import column_means
from skframe.models import check_feature_range

__all__ = ["Prepared", "prepare", "fit_prepared", "fit_model", "evaluate_model", "lam_path_report", "parse_lam",
           "table_state", "estimator_params"]


def parse_lam(value):
    """``lam``: None, ``"auto"``, one value (a float) or a regularisation path (a list of floats, fitted in
    order)."""
    if value is None or isinstance(value, (int, float, list, tuple)):
        return value
    if str(value).strip().lower() == "auto":
        return "auto"
    values = parse_float_list(str(value), "--lam")
    if not values:
        raise InvalidParameterError(f"--lam {value!r} is empty; give a value > 0 such as 1e-3, or a path 1e-2,1e-3")
    return values[0] if len(values) == 1 else values


def _predict(module, model, X, opts):
    return call_predict(module, model, X, opts)


def lam_path_report(model, module, X_eval, Y_eval, task, opts):
    """Per-λ metrics of a regularisation path (``lam`` with several values), or None for one value.

    The model keeps the last value's solution; the path's other solutions (``coef_path_``)
    are swapped in one at a time to predict, then the last one is restored.
    """
    lams = getattr(model, "lam_path_", None)
    coefs = getattr(model, "coef_path_", None)
    if lams is None or coefs is None or len(lams) < 2:
        return None
    kept, rows = model.coef_, []
    objectives = getattr(model, "objective_path_", None) or [None] * len(lams)
    try:
        for lam, coef, objective in zip(lams, coefs, objectives):
            model.coef_ = coef
            Y_pred = _predict(module, model, X_eval, opts)
            metrics = module.metrics(model, X_eval, targets_for_fit(Y_eval, task), Y_pred, opts)
            scalars = {k: v for k, v in metrics.items()
                       if isinstance(v, (int, float, np.floating)) and not isinstance(v, bool)
                       and k != "n_iter"} if metrics else {}
            rows.append({"lam": float(lam), "objective": objective, "metrics": scalars})
    finally:
        model.coef_ = kept
    return rows


def fit_model(model, X, Y, opts, description="fitting"):
    """Fit with a progress bar over kernel rows when the estimator supports it (none with ``opts.json``).

    Returns the seconds spent in ``model.fit`` itself (setting up the progress bar excluded).
    """
    accepts = "progress" in inspect.signature(model.fit).parameters
    with progress_bar(X.shape[0], "kernel rows", enabled=not opts.json and accepts) as advance:
        kwargs = {"progress": advance} if (accepts and advance is not None) else {}
        if getattr(opts, "sample_weight_values", None) is not None:  # a weight column
            kwargs["sample_weight"] = opts.sample_weight_values
        t0 = time.perf_counter()
        model.fit(X, Y, **kwargs)
        return time.perf_counter() - t0


def _is_libsvm(opts):
    """True when the training file is a LIBSVM file (sparse features, whatever their density)."""
    try:
        return opts.train is not None and resolve_format(str(opts.train), opts.format) == "libsvm"
    except Exception:  # molecule and graph files have formats of their own; in-memory tables none
        return False


class Prepared:
    """What :func:`prepare` read and built: the data (scaled), the task, its module and the unfitted estimator.

    Attributes: ``X_train``, ``Y_train``, ``X_test``, ``Y_test`` (None without test data), ``data_info``,
    ``scaler``, ``feature_means``, ``task``, ``module``, ``model``, ``X_fit``, ``y_fit`` (what ``fit`` is given:
    Dask arrays on a cluster) and ``client`` (the Dask client, or None).
    """

    def __init__(self, **fields):
        self.__dict__.update(fields)


def prepare(opts, stack):
    """Read and scale the data, choose the task and build the unfitted estimator.

    ``stack`` (a :class:`contextlib.ExitStack`) holds what must live as long as the fit: the spill
    folder of a streamed file, the Dask client. Returns a :class:`Prepared`.
    """
    if _streamed.streams_file(opts):  # a budget: files read in blocks, memory-mapped (skframe.automatic._streamed)
        if opts.lam is None:
            opts.lam = DEFAULT_LAM
        spill_dir = stack.enter_context(_streamed.spill_directory())  # removes those of killed fits first
        X_tr, Y_tr, X_te, Y_te, data_info, scaler = _streamed.load_streamed(opts, spill_dir)
        scale_reason = opts.scale_reason
        # saved: `missing="mean"` fills new data with the training means (taken before any scaling)
        feature_means = scaler.mean_ if opts.scale == "standard" else column_means(X_tr)
    else:
        X_tr, Y_tr, X_te, Y_te, data_info = load_data(opts)
        check_feature_range(X_tr)  # features whose squares overflow: one clear error before any statistic
        feature_means = column_means(X_tr)  # saved: `missing="mean"` fills new data with the training means
        opts.scale, scale_reason = resolve_scale(opts.scale, X_tr, embedded=opts.train is None,
                                                 sparse=_is_libsvm(opts))
        scaler = FeatureScaler(opts.scale if len(X_tr.shape) > 1 else "none")
        if len(X_tr.shape) > 1:  # a numeric table (molecule and graph collections are not scaled)
            scaler.fit(X_tr)
            X_tr = scaler.transform(X_tr)
            if X_te is not None:
                X_te = scaler.transform(X_te)
    data_info["scale"] = {"method": opts.scale, "reason": scale_reason}
    opts.train_target_means = np.asarray(Y_tr, dtype=np.float64).mean(axis=0) if task_is_numeric(Y_tr) else None
    task = choose_task(opts, Y_tr)
    if getattr(opts, "task_reason", None):
        data_info["task_reason"] = opts.task_reason
    if task == "structured" and opts.task == "auto":
        data_info["task_reason"] = (f"auto: the {Y_tr.shape[1]} targets are 0/1 labels, fitted as a multi-label "
                                    "problem; --task regression fits them as numbers")
    module = task_module(task)
    if hasattr(module, "check_targets"):  # a loss that fits one target column refuses several, with the fix
        module.check_targets(opts, Y_tr, multilabel=is_multilabel(Y_tr))
    check_class_weight(opts, task, data_info.get("task_reason"))  # before any work: never ignored silently
    if str(opts.sketch).lower() == "auto":  # the default family at the data's size
        opts.sketch, data_info["default_sketch"] = default_sketch(describe_data(X_tr).n,
                                                                  sketch_params=opts.sketch_params)
    if getattr(opts, "auto_gamma", False) and task != "structured":
        default_auto_gamma(opts, X_tr)
    model = module.build_estimator(opts)
    y_fit = targets_for_fit(Y_tr, task)
    X_fit, client = X_tr, None
    if opts.dask_scheduler is not None or opts.dask_local is not None:  # the fit runs on a Dask cluster
        if task == "structured":
            raise InvalidParameterError("--dask-scheduler / --dask-local fit regression and kernel-machine models; "
                                        "structured prediction runs on one machine (drop the Dask option)")
        client = stack.enter_context(dask_client(opts.dask_scheduler, opts.dask_local))
        X_fit, y_fit = to_dask(X_tr, y_fit)
        data_info["dask"] = {"scheduler": str(client.scheduler.address), "workers": len(client.nthreads()),
                             "partitions": int(X_fit.numblocks[0])}
    return Prepared(X_train=X_tr, Y_train=Y_tr, X_test=X_te, Y_test=Y_te, data_info=data_info, scaler=scaler,
                    feature_means=feature_means, task=task, module=module, model=model, X_fit=X_fit, y_fit=y_fit,
                    client=client)


def evaluate_model(model, prep, opts):
    """``(metrics, seconds to predict, evaluated_on)``: the task's metrics on the test data, else the training data
    (``holdout=0``: see :mod:`skframe.automatic.holdout`)."""
    X_eval, Y_eval, evaluated_on = ((prep.X_test, prep.Y_test, "test") if prep.X_test is not None
                                    else (prep.X_train, prep.Y_train, "train"))
    t0 = time.perf_counter()
    Y_pred = _predict(prep.module, model, X_eval, opts)
    predict_seconds = time.perf_counter() - t0
    metrics = prep.module.metrics(model, X_eval, targets_for_fit(Y_eval, prep.task), Y_pred, opts)
    return metrics, predict_seconds, evaluated_on


def fit_prepared(prep, opts):
    """Fit ``prep.model``, evaluate it (test data, else held-out rows, else the training rows), fit the intervals;
    returns the report (a dict of plain values and arrays; every decision with its reason)."""
    model, task, X_tr, Y_tr, X_te = prep.model, prep.task, prep.X_train, prep.Y_train, prep.X_test
    if opts.interval is not None:  # an interval this task cannot have ends the fit before it starts
        check_task(prep, model, opts)
    rows = holdout_rows(prep, opts)  # no test set: the fit on every row, then metrics of a copy on held-out rows
    fit_seconds = fit_model(model, prep.X_fit, prep.y_fit, opts)  # first: data errors name every row
    held = fit_held_out(prep, model) if rows is not None else None  # the fit's own held-out values: no second fit
    if held is not None:
        (metrics, predict_seconds, path), evaluated_on = held, prep.data_info["holdout"]["method"]
        rows = (None, range(prep.data_info["holdout"]["rows"]))  # n_test: every training row, each left out
    elif rows is not None:
        metrics, predict_seconds, path = holdout_evaluation(prep, opts, rows, fit_model, targets_for_fit,
                                                            lam_path_report)
        evaluated_on = "holdout"
        prep.data_info["holdout"] = {"share": float(opts.holdout), "rows": int(len(rows[1])), "seed": opts.seed,
                                     "refit": "the model kept is fitted on every training row"}
    else:
        metrics, predict_seconds, evaluated_on = evaluate_model(model, prep, opts)
        X_eval, Y_eval = (X_te, prep.Y_test) if X_te is not None else (X_tr, Y_tr)
        path = lam_path_report(model, prep.module, X_eval, Y_eval, task, opts)
    report = {
        "task": task,
        "metrics": metrics,
        "evaluated_on": evaluated_on,
        "fit_seconds": fit_seconds,
        "predict_seconds": predict_seconds,
        "n_train": int(X_tr.shape[0]),
        "n_test": int(X_te.shape[0]) if X_te is not None else (int(len(rows[1])) if rows is not None else 0),
        "n_features": int(X_tr.shape[1]) if len(X_tr.shape) > 1 else None,
        "n_targets": int(Y_tr.shape[1]) if len(Y_tr.shape) > 1 else 1,
        "sketch": getattr(model, "sketch_info_", None),
        "execution": getattr(model, "execution_", None),
        "training": training_info(model),  # dsokr: the recipe used and each network's epochs
        "solver": solver_report(model),  # an iterative square-loss solve (pcg): residual, passes, stop reason
        "chosen": chosen_info(model),  # lam="auto" / gamma="auto": what was chosen, by which criterion
        "model": {"class": type(model).__name__, "params": estimator_params(model)},
        "data": prep.data_info,
    }
    report["warnings"] = fit_warnings(report)  # e.g. a classifier that predicts one class only
    if opts.interval is not None:  # prediction intervals, kept in the model file (skframe.automatic.intervals)
        report["interval"], opts.interval_state = fit_intervals(prep, model, opts)
    if path is not None:
        report["lam_path"] = path
        report["lam_kept"] = path[-1]["lam"]
    return report


def table_state(model, prep, opts):
    """What a model file keeps beside the estimator (JSON data and arrays, no pickle): the task, the columns and
    their encoding, the scaler, the training means, the class labels, the intervals. Sets the estimator's
    ``feature_names_in_`` when the table's columns have names (scikit-learn's convention)."""
    Y_tr = prep.Y_train
    extra = {
        "task": prep.task,
        "targets": int(Y_tr.shape[1]) if len(Y_tr.shape) > 1 else 1,
        "missing": opts.missing,
        "format": opts.format,
        "train_target_means": opts.train_target_means,
        "train_feature_means": prep.feature_means,
        "top_k": opts.top_k,
        "columns": opts.layout.to_extra() if opts.layout is not None else None,
        "interval": getattr(opts, "interval_state", None),  # intervals: scores, folds, models (data, no pickle)
        "scaler": scaler_state(prep.scaler, opts.scale),
    }
    extra.update(model_extra(opts, prep.data_info))
    names = opts.layout.feature_names if opts.layout is not None else None
    if is_labels(Y_tr) and hasattr(model, "classes_"):  # class labels as text: a JSON list, no pickle
        extra["classes"] = [str(c) for c in model.classes_]
    if opts.table_encoder is not None:  # a raw table: its typed columns, as data (skframe.preprocessing)
        extra["encoding"] = opts.table_encoder.to_dict()
        extra["table"] = {k: v for k, v in prep.data_info.get("read", {}).items() if k in ("delimiter", "format")}
        names = list(opts.table_encoder.get_feature_names_out())
    if names and len(prep.X_train.shape) > 1:  # a table with a header: scikit-learn's feature_names_in_
        model.feature_names_in_ = np.asarray(names, dtype=object)
    return extra


def estimator_params(model):
    """The estimator's parameters as the report shows them (plain values; others by their ``repr``)."""
    out = {}
    for k, v in model.get_params(deep=False).items():
        out[k] = v if isinstance(v, (str, int, float, bool, type(None), dict, list, tuple)) else repr(v)
    return out
