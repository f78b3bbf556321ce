"""The public API for plugin authors: the one module a skframe plugin imports.

Everything a component needs is here — the hook marker, the protocols of the six component
kinds, their tags, the conformance kit, parameter validation, the exceptions, and the numerical
helpers the built-in components use — so that a plugin writes::

    from skframe.plugin.api import Kernel, KernelTags, hookimpl, check_kernel

and nothing else from skframe (the data types of :mod:`skframe.graphs` aside, for graph and
string inputs). Every other module of skframe is internal to it and may change; the names below
are kept stable. The built-in plugins (``skframe_kernels``, ``skframe_sketches``,
``skframe_losses``, ``skframe_solvers``, ``skframe_decoders``, ``skframe_graphs``) are written
against this module only, and pass the kit.

Contents
--------
Hooks
    :data:`hookimpl`.
Protocols (one per kind)
    :class:`Kernel`, :class:`Sketch`, :class:`Loss`, :class:`Solver`, :class:`Decoder`,
    :class:`OutputMatrix`; the kernel helpers :func:`kernel_block`, :func:`kernel_diag`,
    :func:`kernel_matvec`, :func:`kernel_prepare`; :func:`repr_from_params`.
Tags
    :class:`KernelTags`, :class:`SketchTags`, :class:`LossTags`, :class:`SolverTags`,
    :class:`DecoderTags`, :class:`OutputMatrixTags`, :func:`get_tags`, :func:`check_tags`.
Conformance kit
    :func:`check_component`, :func:`check_kernel`, :func:`check_sketch`, :func:`check_loss`,
    :func:`check_solver`, :func:`check_decoder`, :func:`check_output_matrix_component`.
What solvers and sketches receive and return
    :class:`Problem`, :class:`ArrayProblem`, :class:`SolveResult`, :func:`as_problem`,
    :class:`SketchMatrix`, :func:`from_entries`; input collections :class:`InputCollection`,
    :func:`is_collection`, :func:`n_items`, :func:`take`, :func:`chunks`.
Registry
    :class:`ComponentSpec`, :func:`get_component`, :func:`build_component`,
    :func:`list_components`, :func:`spec_of`.
Validation
    :class:`Interval`, :class:`Options`, :class:`HasMethods`, :func:`check_param`,
    :func:`validate_params`, :func:`validate_component` (declarative ``_parameter_constraints``),
    :func:`as_float_array`,
    :func:`check_same_features`, :func:`check_output_matrix`, :func:`load_adjacency`.
Exceptions
    :class:`SkframeError`, :class:`InvalidParameterError`, :class:`InvalidInputError`,
    :class:`DataFormatError`, :class:`DependencyError`, :class:`PluginError`, ...
Numerics
    compute options (:class:`ComputeOptions`, :data:`DEFAULT_OPTIONS`, :func:`compute_dtype`), optional dependencies
    (:func:`available`, :func:`require`, :func:`numba_enabled`), array namespaces
    (:func:`get_array_module`, :func:`to_numpy`), compiled engines (:func:`lazy_module`,
    :func:`engine_module`, :func:`select_engine`, :func:`numba_min_work`, :func:`serial_blas`), threads
    (:func:`run_row_ranges`, :func:`threads_for`, :func:`available_cores`), memory
    (:func:`rows_within_budget`), CSR arrays (:func:`csr_arrays`, :func:`is_sparse`) and
    eigenvalue-tolerance linear algebra (:func:`eigh_truncated`, :func:`pinv_sym`,
    :func:`sqrt_pinv_sym`, :func:`solve_psd`, :func:`default_rtol`), ridge leverage scores
    (:func:`nystrom_leverage_scores`).

This module is a facade: it defines nothing, and nothing inside skframe below the models
imports it.
"""

from skframe.compute.backend import get_array_module, serial_blas, to_numpy
from skframe.constraints import HasMethods, Interval, Options, check_param, validate_params
from skframe.core.engine import engine_module, lazy_module, numba_min_work, select_engine
from skframe.core.leverage import nystrom_leverage_scores
from skframe.core.linalg import default_rtol, eigh_truncated, pinv_sym, solve_psd, sqrt_pinv_sym
from skframe.core.output_matrices import check_output_matrix, load_adjacency
from skframe.core.sketch_matrix import SketchMatrix, from_entries
from skframe.core.sketching import rows_within_budget
from skframe.core.sparsetools import csr_arrays, is_sparse
from skframe.core.threads import available_cores, run_row_ranges, threads_for
from skframe.deps import available, numba_enabled, require
from skframe.exceptions import (
    DataFormatError,
    DependencyError,
    DuplicateComponentError,
    InvalidInputError,
    InvalidParameterError,
    MemoryBudgetError,
    PluginError,
    SkframeError,
    SkframeWarning,
    UnknownComponentError,
)
from skframe.options import DEFAULT_OPTIONS, ComputeOptions, compute_dtype
from skframe.plugin.checks import (
    check_component,
    check_decoder,
    check_kernel,
    check_loss,
    check_output_matrix_component,
    check_sketch,
    check_solver,
    check_tags,
)
from skframe.plugin.collections import InputCollection, chunks, is_collection, n_items, take
from skframe.plugin.hookspecs import hookimpl
from skframe.plugin.parameters import validate_component
from skframe.plugin.problems import ArrayProblem, Problem, SolveResult, as_problem
from skframe.plugin.protocols import (
    Decoder,
    Kernel,
    Loss,
    OutputMatrix,
    Sketch,
    Solver,
    kernel_block,
    kernel_diag,
    kernel_matvec,
    kernel_prepare,
    repr_from_params,
)
from skframe.plugin.registry import build_component, get_component, list_components, spec_of
from skframe.plugin.specs import ComponentSpec
from skframe.plugin.tags import (
    DecoderTags,
    KernelTags,
    LossTags,
    OutputMatrixTags,
    SketchTags,
    SolverTags,
    get_tags,
)
from skframe.validation import as_float_array, check_same_features

# Listed in full on purpose, though protocols, tags and checks list most of these names in their
# own __all__: this list is the contract kept stable for plugin authors; theirs may change.
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
    "kernel_block",
    "kernel_diag",
    "kernel_matvec",
    "kernel_prepare",
    "repr_from_params",
    # tags
    "KernelTags",
    "SketchTags",
    "LossTags",
    "SolverTags",
    "DecoderTags",
    "OutputMatrixTags",
    "get_tags",
    "check_tags",
    # conformance kit
    "check_component",
    "check_kernel",
    "check_sketch",
    "check_loss",
    "check_solver",
    "check_decoder",
    "check_output_matrix_component",
    # what solvers and sketches receive and return
    "Problem",
    "ArrayProblem",
    "SolveResult",
    "as_problem",
    "SketchMatrix",
    "from_entries",
    "InputCollection",
    "is_collection",
    "n_items",
    "take",
    "chunks",
    # registry
    "ComponentSpec",
    "get_component",
    "build_component",
    "list_components",
    "spec_of",
    # validation
    "Interval",
    "Options",
    "HasMethods",
    "check_param",
    "validate_params",
    "validate_component",
    "as_float_array",
    "check_same_features",
    "check_output_matrix",
    "load_adjacency",
    # exceptions
    "SkframeError",
    "SkframeWarning",
    "InvalidParameterError",
    "InvalidInputError",
    "DataFormatError",
    "DependencyError",
    "PluginError",
    "DuplicateComponentError",
    "UnknownComponentError",
    "MemoryBudgetError",
    # numerics
    "ComputeOptions",
    "DEFAULT_OPTIONS",
    "compute_dtype",
    "available",
    "require",
    "numba_enabled",
    "get_array_module",
    "to_numpy",
    "lazy_module",
    "engine_module",
    "select_engine",
    "numba_min_work",
    "serial_blas",
    "run_row_ranges",
    "threads_for",
    "available_cores",
    "rows_within_budget",
    "csr_arrays",
    "is_sparse",
    "default_rtol",
    "eigh_truncated",
    "pinv_sym",
    "sqrt_pinv_sym",
    "solve_psd",
    "nystrom_leverage_scores",
]
