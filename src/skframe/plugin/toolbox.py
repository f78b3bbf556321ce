"""The toolbox of component authors: the numerical helpers skframe's own components are written with.

:mod:`skframe.plugin.api` is the contract a component implements; this module is what a component may use to
compute fast, the way the built-in kernels, sketches, losses, solvers and decoders do: array namespaces (NumPy or
CuPy), the choice between compiled (numba) and plain NumPy inner loops, the shared thread pool, memory budgets,
eigenvalue-tolerance linear algebra, leverage scores, input collections and the less common registry and
validation helpers. It loads SciPy; a plugin module that only registers components need not import it.

Contents
--------
Options and optional dependencies
    :class:`ComputeOptions`, :data:`DEFAULT_OPTIONS`, :func:`compute_dtype`, :func:`available`, :func:`require`,
    :func:`numba_enabled`.
Arrays
    :func:`get_array_module`, :func:`to_numpy` (NumPy or CuPy), :func:`is_sparse`, :func:`csr_arrays`,
    :func:`as_float_array`, :func:`check_same_features`.
Inner loops (compiled or NumPy)
    :func:`lazy_module` (a module of compiled functions, imported on first use), :func:`engine_module` (the module
    of the loops chosen), :func:`select_engine` (``"numpy"`` or ``"numba"`` for a block of a given size),
    :func:`numba_min_work` (the size from which compiled loops pay), :func:`elementwise_engine` (the engine of an
    entry-by-entry formula such as a loss's values).
Threads and BLAS
    :func:`run_row_ranges` (row ranges of a block on the shared pool), :func:`threads_for`,
    :func:`available_cores`, :func:`serial_blas` (BLAS on one thread within a block).
Memory
    :func:`rows_within_budget`.
Linear algebra
    :func:`default_rtol`, :func:`eigh_truncated`, :func:`pinv_sym`, :func:`sqrt_pinv_sym`, :func:`solve_psd`,
    :func:`weighted_gram`, :func:`weighted_outer`, :func:`nystrom_leverage_scores`; output matrices
    :func:`check_output_matrix`, :func:`load_adjacency`.
Kernels of any kind
    :func:`kernel_block`, :func:`kernel_diag`, :func:`kernel_matvec` (through the kernel's own methods when it has
    them); :func:`engine_matvec` (``k(X, Y) W`` by the block engine, a kernel's ``matvec`` marked
    :data:`ENGINE_PRODUCT` when it is that product and no override); :func:`normal_pass` (``k(X, C)^T (a k(X, C) V
    + W)`` in one pass over the rows, each kernel entry computed once); :func:`lowrank_sizes`,
    :func:`lowrank_bytes` (the low-rank preconditioner's sub-sample, rank and bytes, the plan's rule).
Sketches, problems and inputs
    :class:`SketchMatrix`, :func:`from_entries`, :func:`as_problem`, :class:`InputCollection`,
    :func:`is_collection`, :func:`n_items`, :func:`take`, :func:`chunks`.
Registry and validation
    :func:`build_component`, :func:`list_components`, :func:`spec_of`, :class:`HasMethods`, :func:`check_param`,
    :func:`validate_params`.

These names are kept stable as the API's are; what they call inside skframe may change.
"""

from skframe.compute.backend import get_array_module, serial_blas, to_numpy
from skframe.compute.fused import normal_pass
from skframe.compute.plan_newton import choose_newton_step, newton_precond_rows
from skframe.compute.plan_square import lowrank_bytes, lowrank_sizes
from skframe.constraints import HasMethods, check_param, validate_params
from skframe.contract.collections import InputCollection, chunks, is_collection, n_items, take
from skframe.contract.problems import as_problem
from skframe.contract.protocols import kernel_block, kernel_diag, kernel_matvec
from skframe.contract.registry import build_component, list_components, spec_of
from skframe.core.block_engine import ENGINE_PRODUCT, engine_matvec
from skframe.core.engine import elementwise_engine, engine_module, lazy_module, numba_min_work, select_engine
from skframe.core.leverage import nystrom_leverage_scores
from skframe.core.linalg import (
    default_rtol,
    eigh_truncated,
    pinv_sym,
    solve_psd,
    sqrt_pinv_sym,
    weighted_gram,
    weighted_outer,
)
from skframe.core.output_matrices import check_output_matrix, load_adjacency
from skframe.core.sketch_matrix import SketchMatrix, from_entries
from skframe.core.sketching import rows_within_budget
from skframe.core.sparsetools import csr_arrays, is_sparse
from skframe.core.threads import available_cores, run_row_ranges, threads_for
from skframe.deps import available, numba_enabled, require
from skframe.options import DEFAULT_OPTIONS, ComputeOptions, compute_dtype
from skframe.validation import as_float_array, check_same_features

__all__ = [
    # options and optional dependencies
    "ComputeOptions",
    "DEFAULT_OPTIONS",
    "compute_dtype",
    "available",
    "require",
    "numba_enabled",
    # arrays
    "get_array_module",
    "to_numpy",
    "is_sparse",
    "csr_arrays",
    "as_float_array",
    "check_same_features",
    # inner loops
    "lazy_module",
    "engine_module",
    "select_engine",
    "numba_min_work",
    "elementwise_engine",
    # threads and BLAS
    "run_row_ranges",
    "threads_for",
    "available_cores",
    "serial_blas",
    # memory
    "rows_within_budget",
    # the plan's rule for a Newton step (direct or conjugate gradients)
    "choose_newton_step",
    "newton_precond_rows",
    "lowrank_sizes",
    "lowrank_bytes",
    # linear algebra
    "default_rtol",
    "eigh_truncated",
    "pinv_sym",
    "sqrt_pinv_sym",
    "solve_psd",
    "weighted_gram",
    "weighted_outer",
    "nystrom_leverage_scores",
    "check_output_matrix",
    "load_adjacency",
    # kernels of any kind
    "kernel_block",
    "kernel_diag",
    "kernel_matvec",
    "engine_matvec",
    "ENGINE_PRODUCT",
    "normal_pass",
    # sketches, problems and inputs
    "SketchMatrix",
    "from_entries",
    "as_problem",
    "InputCollection",
    "is_collection",
    "n_items",
    "take",
    "chunks",
    # registry and validation
    "build_component",
    "list_components",
    "spec_of",
    "HasMethods",
    "check_param",
    "validate_params",
]
