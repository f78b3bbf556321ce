"""``skframe fit``: fit a model on a data file (or the embedded default) and report test metrics."""

from __future__ import annotations

import contextlib
import inspect
import time

from skframe.cli._chosen import chosen_info, default_auto_gamma, training_info
from skframe.cli._common import (
    parse_float_list,
    progress_bar,
    to_jsonable,
)
from skframe.cli._explain import explain_report, print_explain
from skframe.cli._fit_data import DEFAULT_LAM, EMBEDDED_DATA_SEED, load_data  # noqa: F401  (public here too)
from skframe.cli._fit_report import fit_warnings, print_report
from skframe.cli._options import FitOptions, echo_report, options_command
from skframe.cli._outputs import check_fit_outputs
from skframe.cli._services import call_predict, task_module
from skframe.cli._tables import is_labels
from skframe.exceptions import InvalidParameterError


def choose_task(opts, Y=None):
    """The task module's name: ``structured``, ``machine`` or ``regression``.

    ``--task auto`` (the default) fits targets that are 0/1 labels over several columns as a
    multi-label problem (the structured task) when nothing asks for a regression loss, a
    solver or a Dask cluster (see :func:`is_multilabel`); one column of text labels, or of a few integers
    (:data:`skframe.cli._classification.AUTO_RULE`), as classes; other numbers by regression. ``opts.task_reason``
    says what decided.
    """
    if opts.task == "structured":
        return "structured"
    if opts.task in ("classification", "auto") and Y is not None:  # class labels (skframe.cli._classification)
        from skframe.cli._classification import (  # lazy: loads NumPy
            choose_loss,
            looks_like_classes,
            looks_like_labels,
        )

        auto = opts.task == "auto" and (looks_like_labels(Y) or (not opts.uses_machine() and task_is_numeric(Y)
                                                                 and looks_like_classes(Y)))
        if opts.task == "classification" or auto:
            loss_reason = choose_loss(opts, Y)  # None when --loss names a classification loss
            opts.task_reason = "; ".join(r for r in (auto, loss_reason) if r) or None
    if opts.uses_machine():
        return "machine"
    if opts.task == "auto" and Y is not None and is_multilabel(Y) and opts.dask_scheduler is None \
            and opts.dask_local is None:
        return "structured"
    if opts.task == "auto" and Y is not None and task_is_numeric(Y):
        from skframe.cli._classification import numbers_reason  # lazy: loads NumPy

        opts.task_reason = numbers_reason(Y)
    return "regression"


def check_class_weight(opts, task, reason=None):
    """Refuse ``--class-weight`` on a fit that is not a classification (it would be ignored), in one line."""
    from skframe.cli._classification import CLASSIFICATION_LOSSES  # lazy: loads NumPy

    if opts.class_weight is None or (task == "machine" and (opts.loss or "").strip().lower() in CLASSIFICATION_LOSSES):
        return
    why = f" ({reason})" if reason else ""
    raise InvalidParameterError(f"--class-weight {opts.class_weight} applies to classification, and this fit is a "
                                f"{'regression' if task != 'structured' else 'structured fit'}{why}: leave "
                                "--class-weight out, or fit class labels with --task classification")


def is_multilabel(Y):
    """True when the targets are 0/1 labels over at least two columns (a multi-label problem)."""
    import numpy as np  # lazy: NumPy costs ~0.1 s at start-up

    if len(getattr(Y, "shape", ())) != 2 or Y.shape[1] < 2 or not task_is_numeric(Y):
        return False
    Y = np.asarray(Y.toarray() if hasattr(Y, "toarray") else Y)
    return bool(np.isin(Y, (0.0, 1.0)).all())


def parse_lam(value):
    """``--lam``: None, ``"auto"``, one value (a float) or a regularisation path (a list of floats, fitted in
    order)."""
    if value is None or isinstance(value, (int, float, list, tuple)):
        return value
    if str(value).strip().lower() == "auto":
        return "auto"

    values = parse_float_list(str(value), "--lam")
    if not values:
        raise InvalidParameterError(f"--lam {value!r} is empty; give a value > 0 such as 1e-3, or a path 1e-2,1e-3")
    return values[0] if len(values) == 1 else values


def lam_path_report(model, module, X_eval, Y_eval, task, opts):
    """Per-λ metrics of a regularisation path (``--lam`` with several values), or None for one value.

    The model keeps the last value's solution; the path's other solutions (``coef_path_``)
    are swapped in one at a time to predict, then the last one is restored.
    """
    import numpy as np  # lazy: NumPy costs ~0.1 s at start-up

    lams = getattr(model, "lam_path_", None)
    coefs = getattr(model, "coef_path_", None)
    if lams is None or coefs is None or len(lams) < 2:
        return None
    kept, rows = model.coef_, []
    objectives = getattr(model, "objective_path_", None) or [None] * len(lams)
    try:
        for lam, coef, objective in zip(lams, coefs, objectives):
            model.coef_ = coef
            Y_pred = call_predict(module, model, X_eval, opts)
            metrics = module.metrics(model, X_eval, _targets_for_fit(Y_eval, task), Y_pred, opts)
            scalars = {k: v for k, v in metrics.items()
                       if isinstance(v, (int, float, np.floating)) and not isinstance(v, bool)
                       and k != "n_iter"} if metrics else {}
            rows.append({"lam": float(lam), "objective": objective, "metrics": scalars})
    finally:
        model.coef_ = kept
    return rows


def fit_model(model, X, Y, opts, description="fitting"):
    """Fit with a progress bar over kernel rows when the estimator supports it.

    Returns the seconds spent in ``model.fit`` itself (setting up the progress bar excluded).
    """
    accepts = "progress" in inspect.signature(model.fit).parameters
    with progress_bar(X.shape[0], "kernel rows", enabled=not opts.json and accepts) as advance:
        kwargs = {"progress": advance} if (accepts and advance is not None) else {}
        if getattr(opts, "sample_weight_values", None) is not None:  # --sample-weight COLUMN
            kwargs["sample_weight"] = opts.sample_weight_values
        t0 = time.perf_counter()
        model.fit(X, Y, **kwargs)
        return time.perf_counter() - t0


def task_is_numeric(Y):
    """True when the targets are numbers whose means make sense (not class labels as text)."""
    import numpy as np  # lazy: NumPy costs ~0.1 s at start-up

    from skframe.contract.collections import is_collection  # lazy: loads NumPy (~0.1 s at start-up)

    if is_collection(Y):  # molecules or graphs
        return False
    return np.asarray(Y).dtype.kind in "fiub" if not hasattr(Y, "toarray") else True


def _is_libsvm(opts):
    """True when the training file is a LIBSVM file (sparse features, whatever their density)."""
    from skframe.io.formats import resolve_format  # lazy: skframe.io loads SciPy

    try:
        return opts.train is not None and resolve_format(str(opts.train), opts.format) == "libsvm"
    except Exception:  # molecule and graph files have formats of their own
        return False


def _targets_for_fit(Y, task):
    if len(Y.shape) < 2:  # a collection of outputs (molecules)
        return Y
    return Y[:, 0] if (Y.shape[1] == 1 and task != "structured") else Y


def run_fit(opts):
    """Run ``skframe fit`` from options; returns the JSON-serialisable report."""
    from skframe.contract.loader import get_plugin_registry  # lazy: reads the plugins' entry points (~15 ms)

    check_fit_outputs(opts)  # before any work: a path that cannot be written, or one of the inputs, ends it now
    # Discover the plugins (kernels, sketches, ...) once, before anything is timed: like the
    # imports, it is a cost of the process, not of the fit.
    get_plugin_registry()
    opts.lam = parse_lam(opts.lam)
    opts.auto_gamma = True  # the fit command's default γ (not tune's, whose grid holds γ)
    with contextlib.ExitStack() as stack:
        return _run_fit(opts, stack)


class Prepared:
    """What :func:`prepare` read and built: the data (scaled), the task, its module and the unfitted estimator.

    Attributes: ``X_train``, ``Y_train``, ``X_test``, ``Y_test`` (None without a test file), ``data_info``,
    ``scaler``, ``feature_means``, ``task``, ``module``, ``model``, ``X_fit``, ``y_fit`` (what ``fit`` is given:
    Dask arrays on a cluster) and ``client`` (the Dask client, or None).
    """

    def __init__(self, **fields):
        self.__dict__.update(fields)


def prepare(opts, stack):
    """Read and scale the data, choose the task and build the unfitted estimator, as ``skframe fit`` does.

    ``stack`` (a :class:`contextlib.ExitStack`) holds what must live as long as the command: the spill
    folder of a streamed file, the Dask client. Returns a :class:`Prepared`.
    """
    import numpy as np  # lazy: NumPy costs ~0.1 s at start-up

    from skframe.cli import _streamed  # lazy: loads NumPy (~0.1 s at start-up)
    from skframe.cli._scaling import resolve_scale  # lazy: loads NumPy (~0.1 s at start-up)
    from skframe.datasets import FeatureScaler  # lazy: loads scikit-learn (~0.6 s at start-up)
    from skframe.io.missing import column_means  # lazy: loads NumPy and SciPy (~0.3 s at start-up)
    from skframe.models._degenerate import check_feature_range  # lazy: loads scikit-learn (~0.6 s at start-up)

    if _streamed.streams_file(opts):  # a budget: files read in blocks, memory-mapped (skframe.cli._streamed)
        if opts.lam is None:
            opts.lam = DEFAULT_LAM
        spill_dir = stack.enter_context(_streamed.spill_directory())  # removes those of killed fits first
        X_tr, Y_tr, X_te, Y_te, data_info, scaler = _streamed.load_streamed(opts, spill_dir)
        scale_reason = opts.scale_reason
        # saved: `--missing mean` fills new data with the training means (taken before any scaling)
        feature_means = scaler.mean_ if opts.scale == "standard" else column_means(X_tr)
    else:
        X_tr, Y_tr, X_te, Y_te, data_info = load_data(opts)
        check_feature_range(X_tr)  # features whose squares overflow: one clear error before any statistic
        feature_means = column_means(X_tr)  # saved: `--missing mean` fills new data with the training means
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
        # lazy: the plan's module loads NumPy and the compute room, which the command's start-up does not
        from skframe.compute.plan import default_sketch, describe_data

        opts.sketch, data_info["default_sketch"] = default_sketch(describe_data(X_tr).n,
                                                                  sketch_params=opts.sketch_params)
    if getattr(opts, "auto_gamma", False) and task != "structured":
        default_auto_gamma(opts, X_tr)
    model = module.build_estimator(opts)
    y_fit = _targets_for_fit(Y_tr, task)
    X_fit, client = X_tr, None
    if opts.dask_scheduler is not None or opts.dask_local is not None:  # the fit runs on a Dask cluster
        from skframe.compute.distributed import dask_client, to_dask  # lazy: loads NumPy and SciPy (~0.3 s at start-up)

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
    """``(metrics, seconds to predict, evaluated_on)``: the task's metrics on the test file, else the training data
    (``--holdout 0``: see skframe.cli._holdout)."""
    X_eval, Y_eval, evaluated_on = ((prep.X_test, prep.Y_test, "test") if prep.X_test is not None
                                    else (prep.X_train, prep.Y_train, "train"))
    t0 = time.perf_counter()
    Y_pred = call_predict(prep.module, model, X_eval, opts)
    predict_seconds = time.perf_counter() - t0
    metrics = prep.module.metrics(model, X_eval, _targets_for_fit(Y_eval, prep.task), Y_pred, opts)
    return metrics, predict_seconds, evaluated_on


def save_model(model, prep, opts):
    """Save ``model`` to ``opts.model_out`` with the preprocessing that ``skframe predict`` replays."""
    import numpy as np  # lazy: NumPy costs ~0.1 s at start-up

    from skframe.persistence import save  # lazy: loads NumPy and SciPy (~0.3 s at start-up)

    Y_tr, scaler = prep.Y_train, prep.scaler
    extra = {
        "task": prep.task,
        "targets": int(Y_tr.shape[1]) if len(Y_tr.shape) > 1 else 1,
        "missing": opts.missing,
        "format": opts.format,
        "train_target_means": opts.train_target_means,
        "train_feature_means": prep.feature_means,
        "top_k": opts.top_k,
        "columns": opts.layout.to_extra() if opts.layout is not None else None,
        "interval": getattr(opts, "interval_state", None),  # --interval: scores, folds, models (data, no pickle)
        "scaler": {"mean": scaler.mean_, "scale": scaler.scale_, "with_mean": bool(scaler.with_mean_),
                   "method": opts.scale} if hasattr(scaler, "scale_") else None,
    }
    from skframe.cli._graph_data import model_extra  # lazy: loads NumPy (~0.1 s at start-up)

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
    save(model, opts.model_out, extra=extra)  # atomic: checked, then renamed over the previous file
    return str(opts.model_out)


def _run_fit(opts, stack):
    from skframe.cli._holdout import holdout_evaluation, holdout_rows  # lazy: loads NumPy (~0.1 s at start-up)

    prep = prepare(opts, stack)
    model, task, X_tr, Y_tr, X_te = prep.model, prep.task, prep.X_train, prep.Y_train, prep.X_test
    if opts.explain:  # how the fit would run, and why; nothing is fitted
        return to_jsonable(explain_report(model, prep.X_fit, prep.y_fit, task, prep.data_info))
    if opts.interval is not None:  # an --interval this task cannot have ends the command before the fit
        from skframe.cli._intervals import check_task  # lazy: loads NumPy and SciPy (~0.3 s at start-up)

        check_task(prep, model, opts)
    rows = holdout_rows(prep, opts)  # no test set: the fit on every row, then metrics of a copy on held-out rows
    fit_seconds = fit_model(model, prep.X_fit, prep.y_fit, opts)  # first: data errors name every row
    if rows is not None:
        metrics, predict_seconds, path = holdout_evaluation(prep, opts, rows, fit_model, _targets_for_fit,
                                                            lam_path_report)
    if rows is None:
        metrics, predict_seconds, evaluated_on = evaluate_model(model, prep, opts)
        X_eval, Y_eval = (X_te, prep.Y_test) if X_te is not None else (X_tr, Y_tr)
        path = lam_path_report(model, prep.module, X_eval, Y_eval, task, opts)
    else:
        evaluated_on = "holdout"
        prep.data_info["holdout"] = {"share": float(opts.holdout), "rows": int(len(rows[1])), "seed": opts.seed,
                                     "refit": "the model kept is fitted on every training row"}
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
        "chosen": chosen_info(model),  # lam="auto" / gamma="auto": what was chosen, by which criterion
        "model": {"class": type(model).__name__, "params": _params(model)},
        "data": prep.data_info,
    }
    report["warnings"] = fit_warnings(report)  # e.g. a classifier that predicts one class only
    if opts.interval is not None:  # prediction intervals, kept in the model file (skframe.cli._intervals)
        from skframe.cli._intervals import fit_intervals  # lazy: loads NumPy and SciPy (~0.3 s at start-up)

        report["interval"], opts.interval_state = fit_intervals(prep, model, opts)
    if path is not None:
        report["lam_path"] = path
        report["lam_kept"] = path[-1]["lam"]
    if opts.model_out:
        report["model_path"] = save_model(model, prep, opts)
    if opts.png and opts.interval is None:  # ROC and calibration plots of a classifier (skframe.cli._classification)
        from skframe.cli._classification import save_plots  # lazy: loads matplotlib

        X_eval, Y_eval = (X_te, prep.Y_test) if X_te is not None else (X_tr, Y_tr)
        report["png"] = save_plots(model, X_eval, Y_eval, opts.png)
    return to_jsonable(report)


def _params(model):
    out = {}
    for k, v in model.get_params(deep=False).items():
        out[k] = v if isinstance(v, (str, int, float, bool, type(None), dict, list, tuple)) else repr(v)
    return out


def fit(**options):
    """Fit a sketched kernel model and report metrics, times and the sketch drawn."""
    opts = FitOptions(**options)
    echo_report(run_fit(opts), opts.json, print_explain if opts.explain else print_report)


fit = options_command(fit, FitOptions)
