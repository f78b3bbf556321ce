"""The options of ``skframe fit``, declared once.

Each field of :class:`FitOptions` that carries a ``typer.Option`` (or ``typer.Argument``) in its ``Annotated``
type is a command-line option; :func:`command_signature` turns those fields into the signature of the ``fit``
command, so the option's name, type, default, help text and help panel are written in exactly one place.
Repeatable ``--X-param KEY=VALUE`` options are parsed into the matching ``X_params`` dictionary, which is passed
to the estimator unchanged (e.g. ``--solver-param max_iter=50`` becomes ``solver_params={"max_iter": 50}``).

This module imports only Typer and the standard library: ``skframe --help`` must stay fast.
"""

# No ``from __future__ import annotations``: Typer reads the Annotated types at run time.
import inspect
import typing
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Annotated, Callable, List, Optional

import typer

from skframe.cli._common import echo_json, handle_errors, parse_float_list, parse_kv
from skframe.cli._help import with_help_all
from skframe.exceptions import InvalidParameterError

__all__ = ["FitOptions", "command_signature", "PANELS", "TASKS", "SCALES", "MISSING", "FORMATS"]

DATA, KERNEL, SKETCH, SOLVER, STRUCTURED, COMPUTE, OUTPUT = (
    "Data", "Kernel", "Sketch", "Loss and solver", "Structured outputs", "Compute", "Output")
INTERVALS = "Prediction intervals"
PANELS = (DATA, KERNEL, SKETCH, SOLVER, STRUCTURED, COMPUTE, OUTPUT, INTERVALS)  # COMPUTE: block size, backend, ...
TASKS = ("auto", "regression", "structured", "classification")
SCALES = ("auto", "none", "standard")
MISSING = ("error", "zero", "mean", "drop")
FORMATS = ("csv", "npz", "arff", "libsvm", "parquet", "feather")
INTERVAL_METHODS = ("cv+", "split", "cqr", "jackknife+", "posterior")  # skframe.uncertainty.INTERVAL_METHODS
CQR_SCORES = ("symmetric", "asymmetric")  # skframe.uncertainty._quantiles.CQR_SCORES
CALIBRATIONS = ("none", "sigmoid", "lapse")  # skframe.models.machine._calibration.METHODS, and none

KV = Optional[List[str]]


def _opt(name, help, panel, **kw):
    return typer.Option(name, help=help, rich_help_panel=panel, **kw)


def _kv(name, help, panel):
    return typer.Option(name, help=help, rich_help_panel=panel, metavar="KEY=VALUE")


@dataclass
class FitOptions:
    """Everything ``skframe fit`` was asked to do (see ``skframe fit --help``)."""

    # -- data -------------------------------------------------------------------------
    train: Annotated[Optional[Path], typer.Argument(
        help="Training data (CSV, Parquet, ARFF, LIBSVM, NPZ); without it, the embedded demo data.", show_default=False,
        metavar="TRAIN")] = None
    test: Annotated[Optional[Path], _opt("--test", "Test data, scored (else --holdout rows of the training file).",
                                                   DATA)] = None
    holdout: Annotated[float, _opt("--holdout", "Share of rows scored when there is no --test.", DATA)] = 0.2
    targets: Annotated[int, _opt("--targets", "Number of trailing target columns.", DATA)] = 1
    columns: Annotated[Optional[List[str]], _opt("--columns", "Feature columns by name or position from 1 "
                                                              "(comma-separated or repeated).",
                                                              DATA, show_default=False, metavar="NAME|POS")] = None
    drop: Annotated[Optional[List[str]], _opt("--drop", "Columns left out (never read), by name or position from 1; "
                                                        "comma-separated or repeated.", DATA,
                                              show_default=False, metavar="NAME|POS")] = None
    target: Annotated[Optional[List[str]], _opt("--target", "Target column(s) by name or position (instead of the "
                                                            "last --targets).",
                                                            DATA, show_default=False, metavar="NAME|POS")] = None
    format: Annotated[Optional[str], _opt("--format", "File format when the file does not tell: csv, npz, arff, "
                                                      "libsvm, parquet or feather.", DATA)] = None
    delimiter: Annotated[Optional[str], _opt("--delimiter", "Field delimiter of a text table: ',' ';' tab or '|' "
                                             "(default: detected and reported).", DATA, show_default=False)] = None
    column_types: Annotated[Optional[List[str]], _opt("--column-types", "NAME=numeric|categorical|date|text instead of "
                                                                        "the detected type; "
                                                                        "repeatable.", DATA, show_default=False,
                                                      metavar="NAME=TYPE")] = None
    missing: Annotated[str, _opt("--missing", "Missing values: error, zero, mean or drop.", DATA)] = "error"
    scale: Annotated[str, _opt("--scale", "auto (standard when feature spreads differ >10-fold), none or "
                                          "standard.", DATA)] = "auto"
    seed: Annotated[int, _opt("--seed", "Seed of the sketch, solver and folds.", DATA)] = 0
    cv_order: Annotated[str, _opt("--cv-order", "Folds: shuffle (seeded) or keep (file order).", DATA)] = "shuffle"
    sample_weight: Annotated[Optional[str], _opt(
        "--sample-weight", "Column of each row's weight, by name or position from 1 (not a "
                           "feature).", DATA, show_default=False,
        metavar="COLUMN")] = None
    task: Annotated[str, _opt("--task", "auto (default; the report says why), regression, structured, classification.",
                                        DATA, show_default=False)] = "auto"
    max_classes: Annotated[int, _opt("--max-classes", "Most classes a classification target may have.", DATA)] = 50
    # -- molecules and graphs (panel after Data) ---------------------------------------
    inputs: Annotated[Optional[str], _opt("--inputs", "table, smiles (a CSV column) or graphs (default: graphs for "
                                                      ".jsonl/.sdf, else table).", "Molecules and graphs",
                                          show_default=False)] = None
    input_column: Annotated[str, _opt("--input-column", "CSV column holding the SMILES inputs.",
                                      "Molecules and graphs")] = "smiles"
    outputs: Annotated[str, _opt("--outputs", "table (numeric targets) or smiles (molecules; with --task structured).",
                                 "Molecules and graphs")] = "table"
    output_column: Annotated[Optional[str], _opt("--output-column", "CSV column holding the SMILES outputs "
                                                 "(default: --input-column).", "Molecules and graphs",
                                                 show_default=False)] = None
    target_field: Annotated[Optional[List[str]], _opt("--target-field", "Target: CSV column, SDF field or JSON key; "
                                                                        "repeatable (default: y in JSON).",
                                                      "Molecules and graphs", show_default=False,
                                                      metavar="NAME")] = None
    split_column: Annotated[Optional[str], _opt("--split-column", "CSV column marking each row train or test "
                                                "(instead of --test).", "Molecules and graphs",
                                                show_default=False)] = None
    featurize: Annotated[Optional[str], _opt("--featurize", "SMILES to features: morgan (Morgan fingerprint bits, for "
                                                            "tanimoto kernels).",
                                             "Molecules and graphs", show_default=False)] = None
    featurize_param: Annotated[KV, _kv("--featurize-param", "Featurizer parameter KEY=VALUE, repeatable "
                                        "(radius=2, n_bits=2048).", "Molecules and graphs")] = None
    featurize_params: dict = field(default_factory=dict)
    candidate_molecules: Optional[object] = None  # the --candidates molecules, read once (a GraphBatch)
    # -- kernel -----------------------------------------------------------------------
    kernel: Annotated[str, _opt("--kernel", "Kernel name (see `skframe plugins`).", KERNEL)] = "gaussian"
    kernel_param: Annotated[KV, _kv("--kernel-param", "Kernel parameter KEY=VALUE, repeatable (gamma=0.1; else chosen "
                                                      "from the data).", KERNEL)] = None
    # -- sketch -----------------------------------------------------------------------
    sketch: Annotated[str, _opt("--sketch", "auto (default: p-SR, Nystrom from 50 000 rows), none (exact), psr, "
                                            "rff, ...", SKETCH, show_default=False)] = "auto"
    sketch_size: Annotated[str, _opt("--sketch-size", "Rows m of the sketch, or auto.", SKETCH)] = "auto"
    sketch_param: Annotated[KV, _kv("--sketch-param", "Sketch parameter KEY=VALUE, repeatable "
                                     "(e.g. p=0.005).", SKETCH)] = None
    # -- loss and solver --------------------------------------------------------------
    fit_intercept: Annotated[Optional[bool], _opt("--fit-intercept/--no-fit-intercept", "Centre the targets (default: "
                                                                                        "the model's own), or "
                                                                                        "--no-fit-intercept.", SOLVER,
                                                  show_default=False)] = None
    lam: Annotated[Optional[str], _opt("--lam", "lambda > 0, auto (default: by CV) or a warm-started path "
                                                "1e-2,1e-3.", SOLVER, show_default=False,
                                       metavar="LAM[,LAM...]")] = None
    loss: Annotated[str, _opt("--loss", "square, huber, pinball, logistic, ... (skframe plugins).", SOLVER)] = "square"
    class_weight: Annotated[Optional[str], _opt("--class-weight", "balanced: weigh each class by n / (classes x "
                                                "its count) (classification).", SOLVER, show_default=False)] = None
    calibration: Annotated[Optional[str], _opt("--calibration", "Probability map of --loss logistic: none, sigmoid or "
                                                                "lapse (default).", SOLVER, show_default=False)] = None
    loss_param: Annotated[KV, _kv("--loss-param", "Loss parameter KEY=VALUE, repeatable "
                                   "(e.g. kappa=1, epsilon=0.1).", SOLVER)] = None
    solver: Annotated[Optional[str], _opt("--solver", "closed-form, admm, dual-cd, lbfgs or adam (default: the loss's "
                                                      "own).", SOLVER, show_default=False)] = None
    solver_param: Annotated[KV, _kv("--solver-param", "Solver parameter KEY=VALUE, repeatable (e.g. "
                                                      "max_iter=200).", SOLVER)] = None
    epochs: Annotated[Optional[int], _opt("--epochs", "Epochs (adam); the iteration cap of lbfgs, admm and "
                                          "dual-cd.", SOLVER)] = None
    batch_size: Annotated[Optional[int], _opt("--batch-size", "Mini-batch size (adam).", SOLVER)] = None
    learning_rate: Annotated[Optional[float], _opt("--learning-rate", "Step size (adam).", SOLVER)] = None
    tol: Annotated[Optional[float], _opt("--tol", "Convergence tolerance (adam, lbfgs; relative duality gap "
                                         "of admm, dual-cd).", SOLVER)] = None
    early_stopping: Annotated[bool, _opt("--early-stopping", "Stop when the validation "
                                         "loss stops improving (adam).", SOLVER)] = False
    validation_fraction: Annotated[float, _opt("--validation-fraction", "Share held out for early "
                                                                        "stopping.", SOLVER)] = 0.1
    quantiles: Annotated[Optional[str], _opt("--quantiles", "Comma-separated levels for joint quantile "
                                             "regression, e.g. 0.1,0.5,0.9.", SOLVER)] = None
    output_matrix: Annotated[Optional[str], _opt("--output-matrix", "M of the kernel k*M: identity, quantile, graph or "
                                                                    "covariance.", SOLVER)] = None
    output_matrix_param: Annotated[KV, _kv("--output-matrix-param", "Output matrix parameter KEY=VALUE "
                                            "(e.g. mu=0.5, adjacency=FILE).", SOLVER)] = None
    # -- structured outputs -----------------------------------------------------------
    input_kernel: Annotated[Optional[str], _opt("--input-kernel", "Input kernel (default: --kernel).",
                                                STRUCTURED, show_default=False)] = None
    input_kernel_param: Annotated[KV, _kv("--input-kernel-param", "Input kernel parameter KEY=VALUE.",
                                           STRUCTURED)] = None
    output_kernel: Annotated[Optional[str], _opt("--output-kernel", "Output kernel (default: gaussian).",
                                                 STRUCTURED, show_default=False)] = None
    output_kernel_param: Annotated[KV, _kv("--output-kernel-param", "Output kernel parameter KEY=VALUE.",
                                            STRUCTURED)] = None
    input_sketch: Annotated[Optional[str], _opt("--input-sketch", "Input sketch name or none "
                                                "(default: --sketch).", STRUCTURED, show_default=False)] = None
    input_sketch_size: Annotated[Optional[int], _opt("--input-sketch-size", "Input sketch size m_X "
                                                     "(default: --sketch-size).", STRUCTURED,
                                                     show_default=False)] = None
    input_sketch_param: Annotated[KV, _kv("--input-sketch-param", "Input sketch parameter KEY=VALUE.",
                                           STRUCTURED)] = None
    output_sketch: Annotated[Optional[str], _opt("--output-sketch", "Output sketch name or none.",
                                                 STRUCTURED)] = None
    output_sketch_size: Annotated[Optional[int], _opt("--output-sketch-size", "Output sketch size m_Y "
                                                      "(default: 100).", STRUCTURED, show_default=False)] = None
    output_sketch_param: Annotated[KV, _kv("--output-sketch-param", "Output sketch parameter KEY=VALUE.",
                                            STRUCTURED)] = None
    candidates: Annotated[Optional[Path], _opt("--candidates", "Candidate outputs file (default: the distinct "
                                               "training outputs).", STRUCTURED, show_default=False)] = None
    top_k: Annotated[Optional[int], _opt("--top-k", "Keep the K best candidates; report Hits@1/5/10, MRR and "
                                         "mean rank.", STRUCTURED)] = None
    n_draws: Annotated[int, _opt("--n-draws", "Ensemble over this many sketch draws.", STRUCTURED)] = 1
    aggregate: Annotated[str, _opt("--aggregate", "Ensemble score aggregation: mean or max.",
                                   STRUCTURED)] = "mean"
    # -- neural network (structured task, --model dsokr) -------------------------------
    model: Annotated[str, _opt("--model", 'sisokr (kernels) or dsokr (a network; pip install "skframe\\[deep]").',
                               "Neural network")] = "sisokr"
    network: Annotated[str, _opt("--network", "dsokr network: mlp, text-cnn or transformer.",
                                 "Neural network")] = "mlp"
    network_param: Annotated[KV, _kv("--network-param", "Network parameter KEY=VALUE, repeatable "
                                      "(e.g. hidden=256,128 dropout=0.1).", "Neural network")] = None
    weight_decay: Annotated[Optional[float], _opt("--weight-decay", "Weight decay of the network (default: the "
                                                  "model's, 0.01 decoupled).", "Neural network",
                                                  show_default=False)] = None
    patience: Annotated[Optional[int], _opt("--patience", "Epochs without progress before stopping early (default 10 "
                                                          "with --early-stopping).", "Neural network",
                                            show_default=False)] = None
    n_seeds: Annotated[int, _opt("--n-seeds", "Networks per sketch draw, from different seeds (see "
                                              "--aggregate).", "Neural network")] = 1
    device: Annotated[str, _opt("--device", "Where the network trains: cpu or cuda.", "Neural network")] = "cpu"
    mixed_precision: Annotated[bool, _opt("--mixed-precision", "dsokr: forward passes in bfloat16 in training (faster "
                                                               "on a GPU).", "Neural network")] = False
    output_rank: Annotated[Optional[int], _opt("--output-rank", "dsokr: keep the p_Y leading directions of the output "
                                                                "basis (default: "
                                                                "all).", "Neural network", show_default=False)] = None
    # -- compute ----------------------------------------------------------------------
    memory_budget: Annotated[Optional[str], _opt("--memory-budget", "Memory a fit may use beyond the data, e.g. 2GB "
                                                                    "(streams row "
                                                                    "chunks).", COMPUTE, show_default=False)] = None
    dtype: Annotated[str, _opt("--dtype", "float64, or float32 for kernel blocks and sketch "
                                          "products.", COMPUTE)] = "float64"
    backend: Annotated[str, _opt("--backend", "auto (GPU when worth it), numpy (CPU) or cupy (GPU; pip install "
                                              '"skframe\\[gpu]").', COMPUTE)] = "auto"
    dask_scheduler: Annotated[Optional[str], _opt("--dask-scheduler", "Dask scheduler to fit on, e.g. "
                                                                      "tcp://10.0.0.5:8786 (pip install "
                                                                      '"skframe\\[dask]").', COMPUTE,
                                                  show_default=False)] = None
    dask_local: Annotated[Optional[int], _opt("--dask-local", "Fit on a local Dask cluster of N worker processes "
                                              "(pip install \"skframe\\[dask]\").", COMPUTE, show_default=False,
                                              metavar="N")] = None
    # -- output -----------------------------------------------------------------------
    model_out: Annotated[Optional[Path], _opt("--model-out", "Save the model and its preprocessing to this file (no "
                                                             "pickle).", OUTPUT)] = None
    json: Annotated[bool, _opt("--json", "Print one JSON object instead of the summary.", OUTPUT)] = False
    interval: Annotated[Optional[float], _opt("--interval", "Prediction intervals at this coverage level, e.g. 0.9 "
                                                            "(kept by --model-out).", INTERVALS,
                                              show_default=False, metavar="LEVEL")] = None
    interval_method: Annotated[Optional[str], _opt("--interval-method", "cv+ (default), split, cqr, jackknife+ or "
                                                                        "posterior (square loss).",
                                                   INTERVALS, show_default=False)] = None
    cqr_score: Annotated[Optional[str], _opt("--cqr-score", "cqr: symmetric (one widening of both bounds; default) or "
                                                            "asymmetric (each side's "
                                                            "own).", INTERVALS, show_default=False)] = None
    png: Annotated[Optional[Path], _opt("--png", "Plot to this PNG: the intervals, or a classifier's ROC and "
                                                 "calibration.", OUTPUT,
                                        show_default=False)] = None
    explain: Annotated[bool, _opt("--explain", "Print how the fit would run (backend, engine, chunks, sketch size) and "
                                               "why; no fit.", OUTPUT)] = False
    # -- not options: parsed from the options above, or set by Python callers ---------
    kernel_params: dict = field(default_factory=dict)
    sketch_params: dict = field(default_factory=dict)
    loss_params: dict = field(default_factory=dict)
    solver_params: dict = field(default_factory=dict)
    output_matrix_params: dict = field(default_factory=dict)
    input_kernel_params: dict = field(default_factory=dict)
    output_kernel_params: dict = field(default_factory=dict)
    input_sketch_params: dict = field(default_factory=dict)
    output_sketch_params: dict = field(default_factory=dict)
    network_params: dict = field(default_factory=dict)
    progress: Optional[Callable] = None
    train_target_means: Optional[object] = None  # RRMSE/ARRMSE reference (the training means) when known
    topk: Optional[dict] = None  # the K best candidates found by the structured task's predict
    layout: Optional[object] = None  # the columns read from the training file (skframe.cli._columns.Layout)
    scale_reason: Optional[str] = None  # why --scale auto chose what it chose (skframe.automatic.scaling)
    table_encoder: Optional[object] = None  # the typed columns of a raw table (skframe.preprocessing.TableEncoder)
    interval_state: Optional[dict] = None  # --interval: what the model file keeps (skframe.uncertainty.state)

    def __post_init__(self):
        for name in ("train", "test", "candidates", "model_out", "png"):
            value = getattr(self, name)
            setattr(self, name, str(value) if value is not None else None)
        for f in fields(self):  # --X-param KEY=VALUE (repeatable) -> X_params dict
            if f.name.endswith("_param") and getattr(self, f.name):
                getattr(self, f.name + "s").update(parse_kv(getattr(self, f.name), "--" + f.name.replace("_", "-")))
        if isinstance(self.quantiles, str):
            self.quantiles = parse_float_list(self.quantiles, "--quantiles")
        self.task = _choice(self.task, TASKS, "--task")
        self.class_weight = _choice(self.class_weight, ("balanced",), "--class-weight")
        self.calibration = _choice(self.calibration, CALIBRATIONS, "--calibration")
        self.cv_order = _choice(self.cv_order, ("shuffle", "keep"), "--cv-order")  # skframe.models._folds.CV_ORDERS
        self.scale = _choice(self.scale, SCALES, "--scale")
        self.missing = _choice(self.missing, MISSING, "--missing")
        self.format = _choice(self.format, FORMATS, "--format")
        self.sketch_size = _size(self.sketch_size, "--sketch-size")
        if not 0.0 <= float(self.holdout) < 1.0:
            raise InvalidParameterError(f"--holdout {self.holdout} must be in [0, 1): the share of rows held out")
        self.interval_method = _choice(self.interval_method, INTERVAL_METHODS, "--interval-method")
        if self.interval is not None and not 0 < self.interval < 1:
            raise InvalidParameterError(f"--interval {self.interval!r} must be a coverage level in (0, 1), e.g. 0.9")
        if self.interval is None and self.interval_method is not None:
            raise InvalidParameterError("--interval-method needs --interval LEVEL, e.g. --interval 0.9")
        self.cqr_score = _choice(self.cqr_score, CQR_SCORES, "--cqr-score")
        if self.cqr_score is not None and self.interval_method != "cqr":
            raise InvalidParameterError(f"--cqr-score {self.cqr_score} applies to CQR intervals only; "
                                        "add --interval 0.9 --interval-method cqr, or drop --cqr-score")
        if self.targets < 1:
            raise InvalidParameterError(f"--targets {self.targets} must be >= 1: the number of trailing target columns")
        from skframe.validation import check_seed  # lazy: loads NumPy (~0.1 s at start-up)

        check_seed(self.seed, "--seed")  # [0, 2**32-1], before any draw

    def estimator_params(self, *names):
        """``{name: value}`` of options named as the estimator's parameters, plus ``random_state``.

        Options are named after the estimator parameters they set, so they pass through
        unchanged; an empty parameter dictionary becomes None (the estimator's default).
        """
        out = {name: getattr(self, name) for name in names}
        if "sketch" in out:
            out["sketch"] = self.named_sketch()
        out.update({k: (v or None) for k, v in out.items() if k.endswith("_params")})
        out = {k: v for k, v in out.items() if not (k == "fit_intercept" and v is None)}  # None: the model's own
        out["random_state"] = self.seed
        return out

    def named_sketch(self):
        """``--sketch``; ``auto`` not yet resolved from the data (a Python caller) reads as p-SR, its choice for
        small data (``skframe fit`` resolves it from the number of rows: skframe.compute.plan.default_sketch)."""
        return "psr" if str(self.sketch).lower() == "auto" else self.sketch

    def uses_machine(self):
        """True when the options ask for a non-square loss, an iterative solver or an output matrix."""
        return (
            (self.loss or "square").lower() != "square"
            or (self.solver is not None and self.solver.lower() not in ("closed-form", "closed_form"))
            or bool(self.quantiles)
            or self.output_matrix is not None
        )


def _choice(value, allowed, option):
    if value is None:
        return None
    v = str(value).lower()
    if v not in allowed:
        raise InvalidParameterError(f"{option} {value!r} is not one of {', '.join(allowed)}")
    return v


def _size(value, option):
    """A sketch size: a positive integer or ``"auto"``."""
    if isinstance(value, int) or value is None or str(value).lower() == "auto":
        return value if not isinstance(value, str) else "auto"
    try:
        return int(value)
    except ValueError:
        raise InvalidParameterError(f"{option} {value!r} must be a positive integer or auto") from None


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

