"""The options of ``skframe fit``, declared once.

The fields, their types, defaults and checks are the library's (:class:`skframe.automatic.options.TableOptions`);
:class:`FitOptions` is that class with a ``typer.Option`` (or ``typer.Argument``) attached, in an ``Annotated`` type,
to each field listed in :data:`CLI_OPTIONS`. :func:`command_signature` turns those fields into the signature of the
``fit`` command, so the option's name, type, default, help text and help panel are written in exactly one place.
Repeatable ``--X-param KEY=VALUE`` options are parsed into the matching ``X_params`` dictionary, which is passed
to the estimator unchanged (e.g. ``--solver-param max_iter=50`` becomes ``solver_params={"max_iter": 50}``).

This module imports only Typer, the standard library and the light :mod:`skframe.automatic.options`: ``skframe
--help`` must stay fast.
"""

# No ``from __future__ import annotations``: Typer reads the Annotated types at run time.
import inspect
import typing
from dataclasses import field, fields, make_dataclass
from typing import Annotated

import typer

from skframe.automatic.options import (  # noqa: F401  (re-exported: the command modules' names)
    CALIBRATIONS,
    CQR_SCORES,
    FORMATS,
    INTERVAL_METHODS,
    KV,
    MISSING,
    SCALES,
    TASKS,
    TableOptions,
    _choice,
)
from skframe.cli._common import echo_json, handle_errors
from skframe.cli._help import with_help_all

__all__ = ["FitOptions", "command_signature", "PANELS", "TASKS", "SCALES", "MISSING", "FORMATS"]

DATA, KERNEL, SKETCH, SOLVER, STRUCTURED, COMPUTE, OUTPUT = (
    "Data", "Kernel", "Sketch", "Loss and solver", "Structured outputs", "Compute", "Output")
INTERVALS = "Prediction intervals"
PANELS = (DATA, KERNEL, SKETCH, SOLVER, STRUCTURED, COMPUTE, OUTPUT, INTERVALS)  # COMPUTE: block size, backend, ...


def _opt(name, help, panel, **kw):
    return typer.Option(name, help=help, rich_help_panel=panel, **kw)


def _kv(name, help, panel):
    return typer.Option(name, help=help, rich_help_panel=panel, metavar="KEY=VALUE")


#: the command-line option of each field of :class:`~skframe.automatic.options.TableOptions` that ``skframe fit``
#: exposes (the other fields are set by the pipeline or by Python callers); names, types and defaults are the
#: library's
CLI_OPTIONS = {
    "train": typer.Argument(help="Training data (CSV, Parquet, ARFF, LIBSVM, NPZ); without it, the embedded demo "
        "data.", show_default=False, metavar="TRAIN"),
    "test": _opt("--test", "Test data, scored (else --holdout rows of the training file).", DATA),
    "holdout": _opt("--holdout", "Share of rows scored when there is no --test.", DATA),
    "targets": _opt("--targets", "Number of trailing target columns.", DATA),
    "columns": _opt("--columns", "Feature columns by name or position from 1 (comma-separated or repeated).", DATA,
        show_default=False, metavar="NAME|POS"),
    "drop": _opt("--drop", "Columns left out (never read), by name or position from 1; comma-separated or repeated.",
        DATA, show_default=False, metavar="NAME|POS"),
    "target": _opt("--target", "Target column(s) by name or position (instead of the last --targets).", DATA,
        show_default=False, metavar="NAME|POS"),
    "format": _opt("--format", "File format when the file does not tell: csv, npz, arff, libsvm, parquet or feather.",
        DATA),
    "delimiter": _opt("--delimiter", "Field delimiter of a text table: ',' ';' tab or '|' (default: detected and "
        "reported).", DATA, show_default=False),
    "column_types": _opt("--column-types", "NAME=numeric|categorical|date|text instead of the detected type; "
        "repeatable.", DATA, show_default=False, metavar="NAME=TYPE"),
    "missing": _opt("--missing", "Missing values: error, zero, mean or drop.", DATA),
    "scale": _opt("--scale", "auto (standard when feature spreads differ >10-fold), none or standard.", DATA),
    "seed": _opt("--seed", "Seed of the sketch, solver and folds.", DATA),
    "cv_order": _opt("--cv-order", "Folds: shuffle (seeded) or keep (file order).", DATA),
    "sample_weight": _opt("--sample-weight", "Column of each row's weight, by name or position from 1 (not a "
        "feature).", DATA, show_default=False, metavar="COLUMN"),
    "task": _opt("--task", "auto (default; the report says why), regression, structured, classification.", DATA,
        show_default=False),
    "max_classes": _opt("--max-classes", "Most classes a classification target may have.", DATA),
    "inputs": _opt("--inputs", "table, smiles (a CSV column) or graphs (default: graphs for .jsonl/.sdf, else "
        "table).", "Molecules and graphs", show_default=False),
    "input_column": _opt("--input-column", "CSV column holding the SMILES inputs.", "Molecules and graphs"),
    "outputs": _opt("--outputs", "table (numeric targets) or smiles (molecules; with --task structured).",
        "Molecules and graphs"),
    "output_column": _opt("--output-column", "CSV column holding the SMILES outputs (default: --input-column).",
        "Molecules and graphs", show_default=False),
    "target_field": _opt("--target-field", "Target: CSV column, SDF field or JSON key; repeatable (default: y in "
        "JSON).", "Molecules and graphs", show_default=False, metavar="NAME"),
    "split_column": _opt("--split-column", "CSV column marking each row train or test (instead of --test).",
        "Molecules and graphs", show_default=False),
    "featurize": _opt("--featurize", "SMILES to features: morgan (Morgan fingerprint bits, for tanimoto kernels).",
        "Molecules and graphs", show_default=False),
    "featurize_param": _kv("--featurize-param", "Featurizer parameter KEY=VALUE, repeatable (radius=2, n_bits=2048).",
        "Molecules and graphs"),
    "kernel": _opt("--kernel", "Kernel name (see `skframe plugins`).", KERNEL),
    "kernel_param": _kv("--kernel-param", "Kernel parameter KEY=VALUE, repeatable (gamma=0.1; else chosen from the "
        "data).", KERNEL),
    "sketch": _opt("--sketch", "auto (default: p-SR, Nystrom from 50 000 rows), none (exact), psr, rff, ...", SKETCH,
        show_default=False),
    "sketch_size": _opt("--sketch-size", "Rows m of the sketch, or auto.", SKETCH),
    "sketch_param": _kv("--sketch-param", "Sketch parameter KEY=VALUE, repeatable (e.g. p=0.005).", SKETCH),
    "fit_intercept": _opt("--fit-intercept/--no-fit-intercept", "Centre the targets (default: the model's own), or "
        "--no-fit-intercept.", SOLVER, show_default=False),
    "lam": _opt("--lam", "lambda > 0, auto (default: by CV) or a warm-started path 1e-2,1e-3.", SOLVER,
        show_default=False, metavar="LAM[,LAM...]"),
    "loss": _opt("--loss", "square, huber, pinball, logistic, ... (skframe plugins).", SOLVER),
    "class_weight": _opt("--class-weight", "balanced: weigh each class by n / (classes x its count) "
        "(classification).", SOLVER, show_default=False),
    "calibration": _opt("--calibration", "Probability map of --loss logistic: none, sigmoid or lapse (default).",
        SOLVER, show_default=False),
    "lam_criterion": _opt("--lam-criterion", "Classifier --lam auto by auto, alo, holdout or kfold.",
        SOLVER),
    "loss_param": _kv("--loss-param", "Loss parameter KEY=VALUE, repeatable (e.g. kappa=1, epsilon=0.1).", SOLVER),
    "solver": _opt("--solver", "closed-form, admm, dual-cd, lbfgs or adam (default: the loss's own).", SOLVER,
        show_default=False),
    "solver_param": _kv("--solver-param", "Solver parameter KEY=VALUE, repeatable (e.g. max_iter=200).", SOLVER),
    "epochs": _opt("--epochs", "Epochs (adam); the iteration cap of lbfgs, admm and dual-cd.", SOLVER),
    "batch_size": _opt("--batch-size", "Mini-batch size (adam).", SOLVER),
    "learning_rate": _opt("--learning-rate", "Step size (adam).", SOLVER),
    "tol": _opt("--tol", "Convergence tolerance (adam, lbfgs; relative duality gap of admm, dual-cd).", SOLVER),
    "early_stopping": _opt("--early-stopping", "Stop when the validation loss stops improving (adam).", SOLVER),
    "validation_fraction": _opt("--validation-fraction", "Share held out for early stopping.", SOLVER),
    "quantiles": _opt("--quantiles", "Comma-separated levels for joint quantile regression, e.g. 0.1,0.5,0.9.", SOLVER),
    "output_matrix": _opt("--output-matrix", "M of the kernel k*M: identity, quantile, graph or covariance.", SOLVER),
    "output_matrix_param": _kv("--output-matrix-param", "Output matrix parameter KEY=VALUE (e.g. mu=0.5, "
        "adjacency=FILE).", SOLVER),
    "input_kernel": _opt("--input-kernel", "Input kernel (default: --kernel).", STRUCTURED, show_default=False),
    "input_kernel_param": _kv("--input-kernel-param", "Input kernel parameter KEY=VALUE.", STRUCTURED),
    "output_kernel": _opt("--output-kernel", "Output kernel (default: gaussian).", STRUCTURED, show_default=False),
    "output_kernel_param": _kv("--output-kernel-param", "Output kernel parameter KEY=VALUE.", STRUCTURED),
    "input_sketch": _opt("--input-sketch", "Input sketch name or none (default: --sketch).", STRUCTURED,
        show_default=False),
    "input_sketch_size": _opt("--input-sketch-size", "Input sketch size m_X (default: --sketch-size).", STRUCTURED,
        show_default=False),
    "input_sketch_param": _kv("--input-sketch-param", "Input sketch parameter KEY=VALUE.", STRUCTURED),
    "output_sketch": _opt("--output-sketch", "Output sketch name or none.", STRUCTURED),
    "output_sketch_size": _opt("--output-sketch-size", "Output sketch size m_Y (default: 100).", STRUCTURED,
        show_default=False),
    "output_sketch_param": _kv("--output-sketch-param", "Output sketch parameter KEY=VALUE.", STRUCTURED),
    "candidates": _opt("--candidates", "Candidate outputs file (default: the distinct training outputs).", STRUCTURED,
        show_default=False),
    "top_k": _opt("--top-k", "Keep the K best candidates; report Hits@1/5/10, MRR and mean rank.", STRUCTURED),
    "n_draws": _opt("--n-draws", "Ensemble over this many sketch draws.", STRUCTURED),
    "aggregate": _opt("--aggregate", "Ensemble score aggregation: mean or max.", STRUCTURED),
    "model": _opt("--model", "sisokr (kernels) or dsokr (a network; pip install \"skframe\\[deep]\").",
        "Neural network"),
    "network": _opt("--network", "dsokr network: mlp, text-cnn or transformer.", "Neural network"),
    "network_param": _kv("--network-param", "Network parameter KEY=VALUE, repeatable (e.g. hidden=256,128 "
        "dropout=0.1).", "Neural network"),
    "weight_decay": _opt("--weight-decay", "Weight decay of the network (default: the model's, 0.01 decoupled).",
        "Neural network", show_default=False),
    "patience": _opt("--patience", "Epochs without progress before stopping early (default 10 with "
        "--early-stopping).", "Neural network", show_default=False),
    "n_seeds": _opt("--n-seeds", "Networks per sketch draw, from different seeds (see --aggregate).", "Neural network"),
    "device": _opt("--device", "Where the network trains: cpu or cuda.", "Neural network"),
    "mixed_precision": _opt("--mixed-precision", "dsokr: forward passes in bfloat16 in training (faster on a GPU).",
        "Neural network"),
    "output_rank": _opt("--output-rank", "dsokr: keep the p_Y leading directions of the output basis (default: all).",
        "Neural network", show_default=False),
    "memory_budget": _opt("--memory-budget", "Memory a fit may use beyond the data, e.g. 2GB (streams row chunks).",
        COMPUTE, show_default=False),
    "dtype": _opt("--dtype", "Kernel blocks: auto (float64; a Newton fit's kept block float32), float64 or float32.",
        COMPUTE),
    "backend": _opt("--backend", "auto (GPU when worth it), numpy (CPU) or cupy (GPU; pip install \"skframe\\[gpu]\").",
        COMPUTE),
    "dask_scheduler": _opt("--dask-scheduler", "Dask scheduler to fit on, e.g. tcp://10.0.0.5:8786 (pip install "
        "\"skframe\\[dask]\").", COMPUTE, show_default=False),
    "dask_local": _opt("--dask-local", "Fit on a local Dask cluster of N worker processes (pip install "
        "\"skframe\\[dask]\").", COMPUTE, show_default=False, metavar="N"),
    "model_out": _opt("--model-out", "Save the model and its preprocessing to this file (no pickle).", OUTPUT),
    "json": _opt("--json", "Print one JSON object instead of the summary.", OUTPUT),
    "interval": _opt("--interval", "Prediction intervals at this coverage level, e.g. 0.9 (kept by --model-out).",
        INTERVALS, show_default=False, metavar="LEVEL"),
    "interval_method": _opt("--interval-method", "cv+ (default), split, cqr, jackknife+ or posterior (square loss).",
        INTERVALS, show_default=False),
    "cqr_score": _opt("--cqr-score", "cqr: symmetric (one widening of both bounds; default) or asymmetric (each "
        "side's own).", INTERVALS, show_default=False),
    "png": _opt("--png", "Plot to this PNG: the intervals, or a classifier's ROC and calibration.", OUTPUT,
        show_default=False),
    "explain": _opt("--explain", "Print how the fit would run (backend, engine, chunks, sketch size) and why; no "
        "fit.", OUTPUT),
}


def with_options(base, options, name):
    """``base`` (a dataclass) as a dataclass ``name`` whose fields in ``options`` carry their Typer option in an
    ``Annotated`` type: same names, types, defaults and order, so that the command and the library cannot drift."""
    hints = typing.get_type_hints(base)
    unknown = sorted(set(options) - {f.name for f in fields(base)})
    if unknown:
        raise TypeError(f"options of no field of {base.__name__}: {', '.join(unknown)}")
    own = [(f.name, Annotated[hints[f.name], options[f.name]], field(default=f.default))
           for f in fields(base) if f.name in options]
    cls = make_dataclass(name, own, bases=(base,))
    cls.__module__ = __name__
    return cls


#: Everything ``skframe fit`` was asked to do (see ``skframe fit --help``): :class:`TableOptions` with its options.
FitOptions = with_options(TableOptions, CLI_OPTIONS, "FitOptions")


def _is_cli(annotation):
    meta = getattr(annotation, "__metadata__", ())
    return any(type(m).__name__ in ("OptionInfo", "ArgumentInfo") for m in meta)


def command_signature(cls):
    """The ``inspect.Signature`` of a command whose parameters are ``cls``'s command-line fields."""
    hints = typing.get_type_hints(cls, include_extras=True)
    params = [
        inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default, annotation=hints[f.name])
        for f in fields(cls) if _is_cli(hints[f.name])
    ]
    return inspect.Signature(params)


def options_command(func, cls):
    """``func`` as a command whose parameters are ``cls``'s command-line fields; errors print one line
    (:func:`~skframe.cli._common.handle_errors`)."""
    return with_help_all(handle_errors(func), command_signature(cls))  # --help-all: every option (skframe.cli._help)


def echo_report(report, as_json, show):
    """Print a command's report: as JSON with ``--json``, else with ``show(report)``."""
    if as_json:
        echo_json(report)
    else:
        show(report)

