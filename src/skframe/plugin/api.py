"""The public API for plugin authors: what a kernel, sketch, loss, solver, decoder or output matrix is written against.

A plugin writes::

    from skframe.plugin.api import Kernel, KernelTags, hookimpl, check_component

and tests its components with the conformance kit (:func:`check_component` here; every check and a pytest
helper in :mod:`skframe.plugin.testing`). The numerical helpers skframe's own components use (array
namespaces, compiled loops, threads, linear algebra, input collections, ...) are in
:mod:`skframe.plugin.toolbox`; exceptions in :mod:`skframe.exceptions`; graph and string inputs in
:mod:`skframe.graphs`. Every other module of skframe is internal and may change; the names below are kept
stable.

Importing this module loads the plugin contract (:mod:`skframe.contract`) and NumPy only: no SciPy and no
compiled code, so that finding a plugin that imports it, e.g. for ``skframe --help``, stays light.
:class:`SketchMatrix`, :func:`from_entries` and :func:`check_component` are loaded on first use.

Contents
--------
Hooks
    :data:`hookimpl`.
Protocols
    :class:`Kernel`, :class:`Sketch`, :class:`Loss`, :class:`Solver`, :class:`Decoder`, :class:`OutputMatrix`.
Tags
    :class:`KernelTags`, :class:`SketchTags`, :class:`LossTags`, :class:`SolverTags`, :class:`DecoderTags`,
    :class:`OutputMatrixTags`, :func:`get_tags`.
What solvers and sketches receive and return
    :class:`Problem`, :class:`ArrayProblem`, :class:`SolveResult`, :class:`SketchMatrix`, :func:`from_entries`.
Helpers
    :func:`repr_from_params`, :func:`kernel_prepare`.
Parameters
    :class:`Interval`, :class:`Options`, :func:`validate_component` (declarative ``_parameter_constraints``).
Registry
    :class:`ComponentSpec`, :func:`get_component`.
Conformance kit
    :func:`check_component`.
Errors
    :class:`InvalidParameterError`, :class:`InvalidInputError`.

Deprecated: the other names this module exported before (numerical helpers, the other checks, the other
exceptions) still import from here, with a :class:`DeprecationWarning` naming their module; they will be
removed in a later release.
"""

import importlib
import warnings

from skframe.constraints import Interval, Options
from skframe.contract.hookspecs import hookimpl
from skframe.contract.parameters import validate_component
from skframe.contract.problems import ArrayProblem, Problem, SolveResult
from skframe.contract.protocols import (
    Decoder,
    Kernel,
    Loss,
    OutputMatrix,
    Sketch,
    Solver,
    kernel_prepare,
    repr_from_params,
)
from skframe.contract.registry import get_component
from skframe.contract.specs import ComponentSpec
from skframe.contract.tags import (
    DecoderTags,
    KernelTags,
    LossTags,
    OutputMatrixTags,
    SketchTags,
    SolverTags,
    get_tags,
)
from skframe.exceptions import InvalidInputError, InvalidParameterError

__all__ = [
    # hooks
    "hookimpl",
    # protocols
    "Kernel",
    "Sketch",
    "Loss",
    "Solver",
    "Decoder",
    "OutputMatrix",
    # tags
    "KernelTags",
    "SketchTags",
    "LossTags",
    "SolverTags",
    "DecoderTags",
    "OutputMatrixTags",
    "get_tags",
    # what solvers and sketches receive and return
    "Problem",
    "ArrayProblem",
    "SolveResult",
    "SketchMatrix",  # noqa: F822 (on first use, see __getattr__)
    "from_entries",  # noqa: F822
    # helpers
    "repr_from_params",
    "kernel_prepare",
    # parameters
    "Interval",
    "Options",
    "validate_component",
    # registry
    "ComponentSpec",
    "get_component",
    # conformance kit
    "check_component",  # noqa: F822
    # errors
    "InvalidParameterError",
    "InvalidInputError",
]

# names of __all__ that load SciPy (the sketch matrix) or the kit (persistence, SciPy): imported on first use
_ON_FIRST_USE = {"SketchMatrix": "skframe.plugin.toolbox", "from_entries": "skframe.plugin.toolbox",
                 "check_component": "skframe.plugin.testing"}

_EXCEPTIONS = ("SkframeError", "SkframeWarning", "DataFormatError", "DependencyError", "PluginError",
               "DuplicateComponentError", "UnknownComponentError", "MemoryBudgetError")
_CHECKS = ("check_kernel", "check_sketch", "check_loss", "check_solver", "check_decoder",
           "check_output_matrix_component", "check_tags")
#: the release that stops exporting the names of :data:`MOVED` from this module (CHANGELOG.md)
REMOVED_IN = "0.3.0"
#: names this module exported before, and where they are now; deprecated, removed in :data:`REMOVED_IN`
MOVED = {
    **{name: "skframe.exceptions" for name in _EXCEPTIONS},
    **{name: "skframe.plugin.testing" for name in _CHECKS},
    **{name: "skframe.plugin.toolbox" for name in (
        "ComputeOptions", "DEFAULT_OPTIONS", "compute_dtype", "available", "require", "numba_enabled",
        "get_array_module", "to_numpy", "is_sparse", "csr_arrays", "lazy_module", "engine_module", "select_engine",
        "numba_min_work", "serial_blas", "run_row_ranges", "threads_for", "available_cores", "rows_within_budget",
        "default_rtol", "eigh_truncated", "pinv_sym", "sqrt_pinv_sym", "solve_psd", "nystrom_leverage_scores",
        "check_output_matrix", "load_adjacency", "kernel_block", "kernel_diag", "kernel_matvec", "InputCollection",
        "is_collection", "n_items", "take", "chunks", "as_problem", "build_component", "list_components", "spec_of",
        "HasMethods", "check_param", "validate_params", "as_float_array", "check_same_features")},
}


def __getattr__(name):
    # the toolbox and the kit load SciPy, persistence and compiled-code helpers, which finding a plugin must not
    # pay for: they are imported on first use of one of their names
    if name in _ON_FIRST_USE:
        return getattr(importlib.import_module(_ON_FIRST_USE[name]), name)
    if name in MOVED:
        warnings.warn(f"skframe.plugin.api.{name} is deprecated; import it from {MOVED[name]} (it leaves "
                      f"skframe.plugin.api in skframe {REMOVED_IN})", DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module(MOVED[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
