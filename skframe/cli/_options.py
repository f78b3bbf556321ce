"""The parsed options of ``skframe fit``, shared by the task modules."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional


@dataclass
class FitOptions:
    """Everything ``skframe fit`` was asked to do (see ``skframe fit --help``)."""

    train: Optional[str] = None
    test: Optional[str] = None
    targets: int = 1
    task: str = "regression"
    # scalar / multi-output models
    kernel: str = "gaussian"
    kernel_params: dict = field(default_factory=dict)
    sketch: str = "psr"
    sketch_size: int = 100
    sketch_params: dict = field(default_factory=dict)
    lam: Optional[float] = None  # None: the data set's suggestion for the embedded data, else 1e-3
    # losses and solvers
    loss: str = "square"
    loss_params: dict = field(default_factory=dict)
    solver: Optional[str] = None
    epochs: Optional[int] = None
    batch_size: Optional[int] = None
    learning_rate: Optional[float] = None
    tol: Optional[float] = None
    early_stopping: bool = False
    validation_fraction: float = 0.1
    quantiles: Optional[list] = None
    output_matrix: Optional[str] = None
    output_matrix_params: dict = field(default_factory=dict)
    # structured prediction
    input_kernel: Optional[str] = None
    input_kernel_params: dict = field(default_factory=dict)
    output_kernel: Optional[str] = None
    output_kernel_params: dict = field(default_factory=dict)
    input_sketch: Optional[str] = None
    input_sketch_size: Optional[int] = None
    input_sketch_params: dict = field(default_factory=dict)
    output_sketch: Optional[str] = None
    output_sketch_size: Optional[int] = None
    output_sketch_params: dict = field(default_factory=dict)
    candidates: Optional[str] = None
    top_k: Optional[int] = None
    n_draws: int = 1
    aggregate: str = "mean"
    # data handling and output
    scale: str = "none"
    missing: str = "error"
    seed: int = 0
    model_out: Optional[str] = None
    json: bool = False
    progress: Optional[Callable] = None

    def uses_machine(self):
        """True when the options ask for a non-square loss, an iterative solver or an output matrix."""
        return (
            (self.loss or "square").lower() != "square"
            or (self.solver is not None and self.solver.lower() not in ("closed-form", "closed_form"))
            or bool(self.quantiles)
            or self.output_matrix is not None
        )
