"""Shared fit/predict of the sketched kernel machines (El Ahmad et al., "Fast Kernel Methods for
Generic Lipschitz Losses via p-Sparsified Sketches", TMLR 2023, eq. 3, Prop. 1 and §2.2).

The fit steps are those of every sketched model (:mod:`skframe.models._core`): draw the
sketch, build the feature map ``z(x) = D_r^{-1/2} U_r^T R k_x``, then solve the linear problem

    min_W (1/n) sum_i l(z(x_i)^T W M, y_i) + (lam/2) tr(W M W^T)

with a registered solver, for a decomposable matrix-valued kernel ``k M`` (``M = I``
when no output matrix is given). Predictions are ``z(x)^T W M = k(x, X_sub) coef_``.
The exact (unsketched) model, ``sketch=None``, uses the same code with ``R = I``: the
features are ``Z = U D^{1/2}`` from the eigendecomposition of the full Gram matrix.
"""

from __future__ import annotations

import time

from sklearn.base import BaseEstimator

from skframe.constraints import HasMethods, validate_params
from skframe.contract.model_tags import ModelTags
from skframe.contract.tags import get_tags
from skframe.models._base import KERNEL_MODEL_CONSTRAINTS, KERNEL_MODEL_HINTS, KernelModelMixin, check_lam
from skframe.models._core import default_solver_name, resolve_solver, run_solver
from skframe.models._fit import Fit, Recipe
from skframe.models.machine._labels import check_sample_weight

__all__ = ["MachineBase", "COMMON_CONSTRAINTS", "default_solver_name", "finish_machine_class",
           "SHARED_PARAMETERS", "SHARED_PARAMETERS_ENTRY", "include_shared_parameters"]

# The entries of the parameters every machine shares (kernel ... backend), written once. Each machine's class
# docstring holds SHARED_PARAMETERS_ENTRY in their place; include_shared_parameters sets them in when the class is
# defined (finish_machine_class) and when the API reference reads the source (docs/_hooks/shared_parameters.py).
SHARED_PARAMETERS = """\
kernel : str or kernel object, default="gaussian"
    Registered kernel name or an object with ``__call__(X, Y)``.
kernel_params : dict, optional
    Parameters of the named kernel, e.g. ``{"gamma": 0.1}``.
sketch : str, sketch object or None, default="psr"
    Registered sketch name (``"psr"``, ``"psg"``, ``"subsample"``, ``"gaussian"``,
    ``"accumulation"``, ``"countsketch"``, ``"leverage"``, ``"rff"``), a sketch object,
    or None / ``"none"`` for the exact model (features ``U D^{1/2}`` of the full Gram).
sketch_size : int or "auto", default="auto"
    Number of rows m of the sketch; ``"auto"`` chooses it from the number of
    training points (:func:`skframe.compute.plan.auto_size_rule`, capped by what the fit's
    execution plan can hold; reported in ``sketch_info_["size_rule"]``). A size above n is clamped to n with a
    :class:`skframe.exceptions.SketchSizeWarning`.
sketch_params : dict, optional
    Extra parameters of the named sketch, e.g. ``{"p": 0.005}``.
warm_start : bool, default=False
    When True, a refit starts the solver from the previous weights ``weights_``
    (meaningful when the sketch is the same, i.e. with a fixed ``random_state``).
memory_budget : int, str or None, default=None
    Bytes the fit may use beyond the data, e.g. ``"2GB"``; None takes half the memory
    available to the process. The features are kept in memory when they fit, else
    recomputed chunk by chunk on every pass; ``representation_`` says which
    (``"in-memory"`` or ``"streamed"``) and ``execution_`` how the fit ran and why
    (:mod:`skframe.compute.plan`). An impossible budget raises
    :class:`skframe.exceptions.MemoryBudgetError` before allocating.
dtype : {"auto", "float64", "float32"}, default="auto"
    Precision of kernel blocks and kept features. ``"auto"``: float64, except the n x m kernel block a Newton
    fit keeps in memory (the left factor of its features), held in float32 and read with every product in
    float64 (:func:`skframe.compute.plan_newton.kept_block_dtype`; ``execution_["kept_dtype"]``).
backend : {"auto", "numpy", "cupy"}, default="auto"
    ``"auto"`` computes on an NVIDIA GPU when CuPy sees one and the fit is large enough to
    pay for the transfer, else on the CPU; ``"numpy"`` and ``"cupy"`` force one
    (``pip install "skframe[gpu]"``).
"""

SHARED_PARAMETERS_ENTRY = """\
kernel, kernel_params, sketch, sketch_size, sketch_params, warm_start, memory_budget, dtype, backend
    The parameters every sketched kernel machine shares, documented in full in the class's rendered docstring.
"""


def include_shared_parameters(doc):
    """``doc`` with :data:`SHARED_PARAMETERS` in place of the entry :data:`SHARED_PARAMETERS_ENTRY`.

    The entry may be indented (a class docstring as written) or not (a cleaned docstring); the shared
    entries take its indentation.

    Parameters
    ----------
    doc : str
        A docstring whose parameters hold the entry once.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        When the entry is not in ``doc`` exactly once (a programming error in a machine's docstring).

    Examples
    --------
    >>> doc = include_shared_parameters("Parameters\\n----------\\n" + SHARED_PARAMETERS_ENTRY)
    >>> doc.split("\\n")[2]
    'kernel : str or kernel object, default="gaussian"'
    """
    head = SHARED_PARAMETERS_ENTRY.split("\n")[0]
    lines = doc.split("\n")
    found = [i for i, line in enumerate(lines) if line.strip() == head]
    if len(found) != 1:
        raise ValueError(f"the docstring holds the shared parameters' entry {len(found)} times, not once")
    i = found[0]
    indent = lines[i][:len(lines[i]) - len(lines[i].lstrip())]
    entry = [indent + line if line else line for line in SHARED_PARAMETERS_ENTRY.rstrip("\n").split("\n")]
    if lines[i:i + len(entry)] != entry:
        raise ValueError("the shared parameters' entry is not written as SHARED_PARAMETERS_ENTRY")
    shared = [indent + line if line else line for line in SHARED_PARAMETERS.rstrip("\n").split("\n")]
    return "\n".join(lines[:i] + shared + lines[i + len(entry):])

COMMON_CONSTRAINTS = {
    **KERNEL_MODEL_CONSTRAINTS,
    "solver": [str, HasMethods("solve"), None],
    "solver_params": [dict, None],
    "warm_start": ["boolean"],
}


_FIT_DOC = """{summary}

        Parameters
        ----------
        X : array-like, sparse matrix or InputCollection
            The n_samples training inputs.
        y : {y}
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weight of each sample: the data term is ``sum_i w_i l_i / sum_i w_i``, so integer
            weights fit as the rows repeated that many times, and zero weights as the rows dropped.
        progress : callable or progress object, optional
            Advanced after each kernel block and solver epoch (see :meth:`SketchedKernelRidge.fit`).

        Returns
        -------
        self : {cls}
        """


def _dual_without_weights(solver, loss):
    """A dual solver on a smooth loss whose dual is not a box (its weighted form is not what the solver runs)."""
    dual = getattr(loss, "dual", None)
    box = getattr(dual, "structure", None) == "separable" and not (dual.quad or dual.l1)
    return get_tags(solver, "solver").requires_dual and not box and get_tags(loss, "loss").smooth


class MachineBase(KernelModelMixin, BaseEstimator):
    """Shared fit/predict of the sketched kernel machines.

    A subclass implements :meth:`_prepare_fit` (its targets, loss and output matrix) and
    is finished by :func:`finish_machine_class`.
    """

    _parameter_hints = KERNEL_MODEL_HINTS
    #: the warm-started (or batched) certified λ path on each fold's shared features
    __skframe_model_tags__ = ModelTags(lam_path="machine")

    def fit(self, X, y, sample_weight=None, progress=None):
        self._new_fit(X, y, progress=progress, sample_weight=sample_weight).run()
        return self

    fit.__doc__ = _FIT_DOC.format(summary="Fit the model: draw the sketch, build the sketched features, solve.",
                                  y="array-like of shape (n_samples,) or (n_samples, n_targets)", cls="estimator")

    def _prepare_fit(self, X, y):
        """Fit steps 2-3: resolve the loss (setting ``loss_spec_``), validate ``X`` and ``y``.

        Returns ``(X, Y, loss, M)``: the validated inputs, the (n, d) targets the solver
        fits, the loss object and the output matrix (None for the identity).
        """
        raise NotImplementedError

    def _fit_weights(self, sample_weight, Y):
        """The per-row weights of the fit (None: equal weights); the classifier adds its class weights."""
        return check_sample_weight(sample_weight, Y.shape[0])

    def _new_fit(self, X, y, progress=None, sample_weight=None):
        """Validate, resolve the loss and the solver: the :class:`~skframe.models._fit.Fit` of ``(X, y)``."""
        t0 = self._start_fit()
        X, Y, loss, M = self._prepare_fit(X, y)
        weights = self._fit_weights(sample_weight, Y)
        recipe = Recipe(None, loss=loss, M=M, fit_intercept=getattr(self, "fit_intercept", False), n_rngs=2)
        fit = Fit(self, X, Y, recipe, progress=progress, t0=t0, sample_weight=weights)
        solver, self.solver_spec_ = resolve_solver(self.solver, self.solver_params, loss)
        if weights is not None and self.solver is None and _dual_without_weights(solver, loss):
            # e.g. Huber: its dual solvers take no weights, L-BFGS does (the smooth losses)
            solver, self.solver_spec_ = resolve_solver("lbfgs", None, loss)
        if self.solver is None and fit.plan.executor == "dask" and get_tags(solver, "solver").in_memory:
            # the features of dask data stay on the workers: the default is a solver that passes over them
            solver, self.solver_spec_ = resolve_solver("lbfgs" if get_tags(loss, "loss").smooth else "adam",
                                                       self.solver_params, loss)

        def solve_with(w):  # the solve step with the row weights w (None: equal weights)
            def solve(rep, Yc, lam, init, rng):
                problem = rep.problem(Yc)
                problem.blas_threads = fit.plan.solver_threads(Yc.shape[1])  # the plan's threads, passed on
                if w is not None:  # the weights travel with the problem to the solver
                    problem.sample_weight = w
                return run_solver(solver, problem, loss, lam, M=M, rng=rng, init=init, progress=progress)
            return solve

        recipe.solve, recipe.solver, recipe.reweigh = solve_with(weights), solver, solve_with
        recipe.attributes = {"output_matrix_": M, "loss_": loss, "solver_": solver}
        return fit

    def _start_fit(self):
        """Validate the parameters (fit step 1) and return the start time of the fit."""
        t0 = time.perf_counter()
        validate_params(self)
        check_lam(self.lam)
        return t0

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


def finish_machine_class(cls, fit_summary, y_doc):
    """Give ``cls`` its own documented ``fit`` and the entries of the parameters the machines share.

    The ``fit`` is :meth:`MachineBase.fit`; only its docstring (``fit_summary``, the
    description ``y_doc`` of ``y`` and the class name) is specific to ``cls``. The parameters
    the machines share (``kernel`` to ``backend``) are written once, in :data:`SHARED_PARAMETERS`;
    the class docstring holds :data:`SHARED_PARAMETERS_ENTRY` in their place, which
    :func:`include_shared_parameters` replaces here.
    """

    def fit(self, X, y, sample_weight=None, progress=None):
        return MachineBase.fit(self, X, y, sample_weight=sample_weight, progress=progress)

    cls.__doc__ = include_shared_parameters(cls.__doc__)
    fit.__doc__ = _FIT_DOC.format(summary=fit_summary, y=y_doc, cls=cls.__name__)
    fit.__module__ = cls.__module__
    fit.__qualname__ = f"{cls.__qualname__}.fit"
    cls.fit = fit
    return cls
