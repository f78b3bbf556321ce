"""``skframe fit``: fit a model on a data file (or the embedded default) and report test metrics.

The decisions and the pipeline are the automatic model's (:mod:`skframe.automatic`, the library object
:class:`skframe.automatic.TableModel`): this command parses the options, runs the same pipeline, and adds what only
a terminal has: ``--explain``, ``--png``, ``--model-out`` and the printed report.
"""

from __future__ import annotations

import contextlib

from skframe.automatic._fit_data import DEFAULT_LAM, EMBEDDED_DATA_SEED, load_data  # noqa: F401  (public here too)
from skframe.automatic.chosen import default_auto_gamma  # noqa: F401  (public here too)
from skframe.cli._common import to_jsonable
from skframe.cli._explain import explain_report, print_explain
from skframe.cli._fit_report import print_report
from skframe.cli._options import FitOptions, echo_report, options_command
from skframe.cli._outputs import check_fit_outputs

_TASK_RULES = ("choose_task", "check_class_weight", "is_multilabel", "task_is_numeric")


def __getattr__(name):
    """The task rules (:mod:`skframe.automatic.task`) and the pipeline's parts (:mod:`skframe.automatic.pipeline`),
    loaded on first use: they import NumPy."""
    if name in _TASK_RULES:
        from skframe.automatic import task  # lazy: loads NumPy (~0.1 s at start-up)

        return getattr(task, name)
    if name in ("fit_model", "lam_path_report", "parse_lam", "Prepared"):
        from skframe.automatic import pipeline  # lazy: loads NumPy (~0.1 s at start-up)

        return getattr(pipeline, name)
    raise AttributeError(f"module 'skframe.cli.fit' has no attribute {name!r}")


def prepare(opts, stack):
    """Read and scale the data, choose the task and build the unfitted estimator
    (:func:`skframe.automatic.pipeline.prepare`)."""
    from skframe.automatic.pipeline import prepare as library_prepare  # lazy: loads NumPy (~0.1 s at start-up)

    return library_prepare(opts, stack)


def evaluate_model(model, prep, opts):
    """``(metrics, seconds to predict, evaluated_on)`` (:func:`skframe.automatic.pipeline.evaluate_model`)."""
    from skframe.automatic.pipeline import evaluate_model as library_evaluate  # lazy: loads NumPy (~0.1 s)

    return library_evaluate(model, prep, opts)


def _params(model):
    from skframe.automatic.pipeline import estimator_params  # lazy: loads NumPy (~0.1 s at start-up)

    return estimator_params(model)


def run_fit(opts):
    """Run ``skframe fit`` from options; returns the JSON-serialisable report."""
    from skframe.automatic.pipeline import parse_lam  # lazy: loads NumPy (~0.1 s at start-up)
    from skframe.contract.loader import get_plugin_registry  # lazy: reads the plugins' entry points (~15 ms)

    check_fit_outputs(opts)  # before any work: a path that cannot be written, or one of the inputs, ends it now
    # Discover the plugins (kernels, sketches, ...) once, before anything is timed: like the
    # imports, it is a cost of the process, not of the fit.
    get_plugin_registry()
    opts.lam = parse_lam(opts.lam)
    opts.auto_gamma = True  # the fit command's default γ (not tune's, whose grid holds γ)
    with contextlib.ExitStack() as stack:
        return _run_fit(opts, stack)


def save_model(model, prep, opts, report=None):
    """Save ``model`` to ``opts.model_out`` with the preprocessing that ``skframe predict`` replays: the automatic
    model's file (:meth:`skframe.automatic.TableModel.save`; the decisions of ``report`` kept in it), which
    ``skframe.load`` reads as a TableModel."""
    from skframe.automatic.pipeline import table_state  # lazy: loads NumPy (~0.1 s at start-up)
    from skframe.automatic.table_model import decisions, options_state, save_state  # lazy: loads scikit-learn

    state = table_state(model, prep, opts)
    state["options"] = options_state(opts)
    if report is not None:
        state["decisions"] = decisions(to_jsonable(report))
    save_state(model, state, opts.model_out)  # atomic: checked, then renamed
    return str(opts.model_out)


def _run_fit(opts, stack):
    from skframe.automatic.pipeline import fit_prepared, prepare  # lazy: loads NumPy (~0.1 s at start-up)

    prep = prepare(opts, stack)
    if opts.explain:  # how the fit would run, and why; nothing is fitted
        return to_jsonable(explain_report(prep.model, prep.X_fit, prep.y_fit, prep.task, prep.data_info))
    report = fit_prepared(prep, opts)
    model = prep.model
    if opts.model_out:
        report["model_path"] = save_model(model, prep, opts, report)
    if opts.png and opts.interval is None:  # ROC and calibration plots of a classifier
        from skframe.automatic.classification import save_plots  # lazy: loads matplotlib

        X_eval, Y_eval = ((prep.X_test, prep.Y_test) if prep.X_test is not None else (prep.X_train, prep.Y_train))
        report["png"] = save_plots(model, X_eval, Y_eval, opts.png)
    return to_jsonable(report)


def fit(**options):
    """Fit a sketched kernel model and report metrics, times and the sketch drawn."""
    opts = FitOptions(**options)
    echo_report(run_fit(opts), opts.json, print_explain if opts.explain else print_report)


fit = options_command(fit, FitOptions)
