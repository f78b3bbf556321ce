"""The options of the automatic model, declared once: names, types and defaults, with their checks.

:class:`TableOptions` holds everything a fit of :class:`skframe.automatic.TableModel` or ``skframe fit`` is asked to
do; the command line's :class:`skframe.cli._options.FitOptions` is this class with a Typer option attached to each
field the command line exposes (same names, same defaults). Repeatable ``X_param`` lists of ``KEY=VALUE`` strings
are parsed into the matching ``X_params`` dictionary, which is passed to the estimator unchanged (e.g.
``solver_param=["max_iter=50"]`` becomes ``solver_params={"max_iter": 50}``). Errors name the command-line option
(``--task``), the spelling both doors share.

This module imports only the standard library and :mod:`skframe.exceptions`: the command line's start-up loads it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Callable, List, Optional

from skframe.automatic._values import parse_float_list, parse_kv
from skframe.exceptions import InvalidParameterError

__all__ = ["TableOptions", "TASKS", "SCALES", "MISSING", "FORMATS", "INTERVAL_METHODS", "CQR_SCORES",
           "CALIBRATIONS", "LAM_CRITERIA"]

TASKS = ("auto", "regression", "structured", "classification")
SCALES = ("auto", "none", "standard")
MISSING = ("error", "zero", "mean", "drop")
FORMATS = ("csv", "npz", "arff", "libsvm", "parquet", "feather")
INTERVAL_METHODS = ("cv+", "split", "cqr", "jackknife+", "posterior")  # skframe.uncertainty.INTERVAL_METHODS
CQR_SCORES = ("symmetric", "asymmetric")  # skframe.uncertainty._quantiles.CQR_SCORES
CALIBRATIONS = ("none", "sigmoid", "lapse")  # skframe.models.machine._calibration.METHODS, and none
LAM_CRITERIA = ("auto", "alo", "holdout", "kfold")  # skframe.models.machine._alo.CRITERIA: how lam="auto" is scored

KV = Optional[List[str]]


@dataclass
class TableOptions:
    """Everything a fit of the automatic model is asked to do (see ``skframe fit --help`` for each option)."""

    # -- data -------------------------------------------------------------------------
    train: Optional[Path] = None
    test: Optional[Path] = None
    holdout: float = 0.2
    targets: int = 1
    columns: Optional[List[str]] = None
    drop: Optional[List[str]] = None
    target: Optional[List[str]] = None
    format: Optional[str] = None
    delimiter: Optional[str] = None
    column_types: Optional[List[str]] = None
    missing: str = "error"
    scale: str = "auto"
    seed: int = 0
    cv_order: str = "shuffle"
    sample_weight: Optional[str] = None
    task: str = "auto"
    max_classes: int = 50
    # -- molecules and graphs ----------------------------------------------------------
    inputs: Optional[str] = None
    input_column: str = "smiles"
    outputs: str = "table"
    output_column: Optional[str] = None
    target_field: Optional[List[str]] = None
    split_column: Optional[str] = None
    featurize: Optional[str] = None
    featurize_param: KV = None
    featurize_params: dict = field(default_factory=dict)
    candidate_molecules: Optional[object] = None  # the --candidates molecules, read once (a GraphBatch)
    # -- kernel -----------------------------------------------------------------------
    kernel: str = "gaussian"
    kernel_param: KV = None
    # -- sketch -----------------------------------------------------------------------
    sketch: str = "auto"
    sketch_size: str = "auto"
    sketch_param: KV = None
    # -- loss and solver --------------------------------------------------------------
    fit_intercept: Optional[bool] = None
    lam: Optional[str] = None
    loss: str = "square"
    class_weight: Optional[str] = None
    calibration: Optional[str] = None
    lam_criterion: str = "auto"
    loss_param: KV = None
    solver: Optional[str] = None
    solver_param: KV = None
    epochs: Optional[int] = None
    batch_size: Optional[int] = None
    learning_rate: Optional[float] = None
    tol: Optional[float] = None
    early_stopping: bool = False
    validation_fraction: float = 0.1
    quantiles: Optional[str] = None
    output_matrix: Optional[str] = None
    output_matrix_param: KV = None
    # -- structured outputs -----------------------------------------------------------
    input_kernel: Optional[str] = None
    input_kernel_param: KV = None
    output_kernel: Optional[str] = None
    output_kernel_param: KV = None
    input_sketch: Optional[str] = None
    input_sketch_size: Optional[int] = None
    input_sketch_param: KV = None
    output_sketch: Optional[str] = None
    output_sketch_size: Optional[int] = None
    output_sketch_param: KV = None
    candidates: Optional[Path] = None
    top_k: Optional[int] = None
    n_draws: int = 1
    aggregate: str = "mean"
    # -- neural network (structured task, model="dsokr") -------------------------------
    model: str = "sisokr"
    network: str = "mlp"
    network_param: KV = None
    weight_decay: Optional[float] = None
    patience: Optional[int] = None
    n_seeds: int = 1
    device: str = "cpu"
    mixed_precision: bool = False
    output_rank: Optional[int] = None
    # -- compute ----------------------------------------------------------------------
    memory_budget: Optional[str] = None
    dtype: str = "auto"
    backend: str = "auto"
    dask_scheduler: Optional[str] = None
    dask_local: Optional[int] = None
    # -- output -----------------------------------------------------------------------
    model_out: Optional[Path] = None
    json: bool = False
    interval: Optional[float] = None
    interval_method: Optional[str] = None
    cqr_score: Optional[str] = None
    png: Optional[Path] = None
    explain: bool = False
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
    layout: Optional[object] = None  # the columns read from the training file (skframe.automatic._columns.Layout)
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
        self.lam_criterion = _choice(self.lam_criterion, LAM_CRITERIA, "--lam-criterion")
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
