"""The execution plan of a fit: every choice of how it runs, made once, with its reason.

At the start of ``fit`` one call, :func:`plan_fit`, looks at

* the **data** (:class:`DataShape`: rows, columns, dtype, sparse, memory-mapped, Dask, on a GPU),
* the **components** (the kernel, the sketch: its size m and the expected number s' of
  sampled points; the loss: ``"square"``, solved from m x m sums, or ``"iterative"``, which
  passes over the features many times),
* the **options** (``memory_budget``, ``dtype``, ``backend``, ``chunk_rows``),
* the **machine** (:class:`Machine`: available memory, a cgroup limit included; cores; a GPU
  and its free memory when CuPy is installed),

and returns a frozen :class:`ExecutionPlan`: the executor (``"in-memory"``, ``"streamed"``
or ``"dask"``), the array backend, the engine of the inner loops, the chunk rows, the
precision of the products, the BLAS threads, whether an iterative loss keeps its features,
the memory budget, the sketch size, and a human-readable reason for each choice. The fit
passes the plan's decisions down as one options object (:meth:`ExecutionPlan.compute_options`:
backend, engine, precision, budget, BLAS threads; no ambient state) and stores the plan as
``execution_`` (:meth:`ExecutionPlan.to_dict`); ``skframe fit --explain`` prints it without fitting.

The plan lives in three modules: :mod:`skframe.compute.machine` (what the machine offers),
:mod:`skframe.compute.execution` (the data shape, the plan and its JSON form) and
:mod:`skframe.compute.plan_rules` (one function per choice, and the measured thresholds);
this module runs them in order and re-exports their names.

Defaults take the fastest path that fits the machine:

* without ``memory_budget`` the budget is half the memory available to the process;
* the square loss streams (one pass of ``B^T B`` sums, never an n x m array) when the
  in-memory arrays do not fit the budget, or when ``n * m`` reaches :data:`STREAM_MIN_WORK`
  (:data:`SAMPLED_STREAM_MIN_WORK` for sketches that sample few points, such as Nyström),
  where the streamed fit was measured at least as fast (``benchmarks/bench_stream_crossover.py``);
* ``sketch_size="auto"`` follows ``ceil(2 sqrt(n))`` in ``[100, 1000]``, capped only by
  what the chosen executor can hold;
* iterative losses keep their features when they fit the budget beside the stream's own
  buffers (whose chunks then shrink to the room left), else recompute them chunk by chunk
  on every pass; the fit that forms them applies the same rule
  (:func:`skframe.compute.memory.kept_features_rows`); a fit whose solver reads them as two
  factors (``factored``: the Newton solver) streams from :data:`STREAM_MIN_WORK`, keeping the
  kernel block instead of forming the features in memory.

An explicit ``memory_budget`` wins (the fit streams within it) and an impossible one is
refused by :class:`~skframe.exceptions.MemoryBudgetError` before anything is allocated.

Examples
--------
>>> plan = plan_fit(DataShape(n=10**6, n_features=10), sketch="subsample", sketch_size="auto",
...                 machine=Machine(memory_bytes=16 * 10**9, cores=2))
>>> plan.executor, plan.sketch_size, plan.memory_budget
('streamed', 1000, 8000000000)
>>> plan.reasons["executor"]
'the in-memory arrays (16.1 GB) exceed the budget (8 GB)'
>>> plan_fit(DataShape(n=2000, n_features=10), sketch="psr", machine=Machine(memory_bytes=16 * 10**9)).executor
'in-memory'
"""

from __future__ import annotations

from dataclasses import replace

import scipy.sparse as sp

from skframe.compute import plan_rules as rules
from skframe.compute.execution import DataShape, ExecutionPlan, describe_data, explain_plan
from skframe.compute.machine import Machine, available_memory, detect_machine
from skframe.compute.memory import MIN_CHUNK_ROWS, check_allocation, format_bytes, kept_features_rows, plan_stream
from skframe.compute.plan_newton import choose_newton_step, kept_block_dtype
from skframe.compute.plan_rules import (
    AUTO_MAX,
    BACKEND_CHOICES,
    DEFAULT_BUDGET_SHARE,
    EXECUTORS,
    GPU_MIN_WORK,
    NYSTROM_MIN_ROWS,
    SAMPLED_STREAM_MIN_WORK,
    SERIAL_BLAS_MAX_FLOPS,
    STREAM_MIN_WORK,
    auto_size_rule,
    default_sketch,
    expected_columns,
)
from skframe.compute.plan_square import choose_square_solver, pcg_peak_bytes, preconditioner_bytes
from skframe.contract.collections import n_items
from skframe.contract.tags import get_tags
from skframe.core.sketching import rows_within_budget
from skframe.exceptions import InvalidParameterError, MemoryBudgetError
from skframe.options import DEFAULT_OPTIONS, ComputeOptions, parse_bytes

__all__ = ["Machine", "DataShape", "ExecutionPlan", "plan_fit", "detect_machine", "describe_data", "explain_plan",
           "available_memory", "expected_columns", "STREAM_MIN_WORK", "SAMPLED_STREAM_MIN_WORK", "GPU_MIN_WORK",
           "SERIAL_BLAS_MAX_FLOPS", "DEFAULT_BUDGET_SHARE", "EXECUTORS", "BACKEND_CHOICES", "NYSTROM_MIN_ROWS",
           "auto_size_rule", "default_sketch", "plan_predict"]


def _stream_plan(n, m, s_prime, data, options, kernel):
    return plan_stream(n, m, s_prime, int(data.n_features or 1), data.n_outputs, options, kernel=kernel)


def _sketch_kind_and_size(sketch, sketch_size, sketch_params, n):
    """``(kind, m or None, rule, sketch object)``: kind "exact", "feature_map" or "sketch"; m by the auto rule."""
    if rules.is_exact(sketch):
        return "exact", n, "none: exact model", None
    auto = isinstance(sketch, str) and (sketch_size is None or str(sketch_size).strip().lower() == "auto")
    m = auto_size_rule(n) if auto else None
    if isinstance(sketch, str) and not auto:
        m = min(int(sketch_size), n) if int(sketch_size) >= 1 else int(sketch_size)
    obj = rules.sketch_object(sketch, m if m is not None else 1, sketch_params) if isinstance(sketch, str) else sketch
    kind = "feature_map" if get_tags(obj, "sketch").feature_map else "sketch"
    if m is None:
        size = getattr(obj, "size", None)
        m = None if isinstance(size, bool) or not isinstance(size, int) else \
            (int(size) if kind == "feature_map" else min(int(size), n))
    if kind == "feature_map" and isinstance(sketch, str) and not auto:
        m = int(sketch_size)  # explicit feature maps may have more features than rows
    rule = rules.AUTO_RULE_TEXT if auto else "given"
    return kind, m, rule, obj


def _budget(options, backend, machine):
    """``(bytes, source, reason)``: a given ``memory_budget`` wins, else half the (device) memory available."""
    given = parse_bytes(options.memory_budget)
    if given is not None:
        return int(given), "given", "memory_budget given"
    if backend == "cupy" and machine.gpu_free_bytes:
        return (int(machine.gpu_free_bytes * DEFAULT_BUDGET_SHARE), "gpu",
                f"half the free GPU memory ({machine.gpu_source})")
    return (int(machine.memory_bytes * DEFAULT_BUDGET_SHARE), "machine",
            f"half the memory available to this process ({machine.memory_source})")


def _chunks_and_peak(streamed, sizes, data, opts, options, kernel, reasons):
    """The streamed executor's :class:`~skframe.compute.memory.StreamPlan`, or ``(chunk_rows, peak bytes)`` in
    memory; an impossible streamed budget is refused here.

    ``sizes = (rows_of, n, m, s_prime, kind)``: the rows per pass, the data rows, the sketch's rows and columns
    and the representation's kind."""
    rows_of, n, m, s_prime, kind = sizes
    if streamed:
        sp = _stream_plan(rows_of, m, s_prime, data, opts, kernel)
        if opts.backend == "cupy" and not options.chunk_rows:  # device chunks from the device memory
            # a quarter of the room left: float32 blocks that switch to float64 products still fit
            room = (opts.memory_budget - sp.fixed_bytes) // (4 * sp.per_row_bytes)
            sp = replace(sp, chunk_rows=int(max(MIN_CHUNK_ROWS, min(rows_of, room))))
            reasons["chunk_rows"] = "a quarter of the device budget left by the m x m part, per chunk"
        else:
            reasons["chunk_rows"] = ("given" if options.chunk_rows else "kernel blocks of about block_bytes, "
                                     "within the budget (the fit sizes them again from the sketch it draws)")
        return sp
    reasons["chunk_rows"] = "kernel blocks of about block_bytes"
    peak = rules.in_memory_bytes(n, m, s_prime or 0, data.n_features, opts, kind)
    return _block_rows(n, max(s_prime or m or 1, 1), opts, kernel), peak


def _block_rows(n, cols, opts, kernel):
    """Rows of a kernel block of ``cols`` columns within ``opts.block_bytes`` (the kernel's own estimate when
    known), at most n."""
    rows = rows_within_budget(kernel, cols, opts) if kernel is not None else opts.rows_per_block(cols, 8)
    return max(1, min(n, rows))


def _pcg_chunks_and_peak(n, m, data, opts, kernel, budget, machine, reasons):
    """``(chunk_rows, peak bytes, keep)`` of the square loss solved by conjugate gradients over m centres: the
    preconditioner (Falkon's m x m factor where it fits the budget, else the low-rank one), the centres and the
    fused passes' buffers (:func:`skframe.compute.plan_square.pcg_peak_bytes`); no m x m sums, no features."""
    _, pre = preconditioner_bytes(m, budget)
    peak = pcg_peak_bytes(m, data.n_features, data.n_outputs, pre, opts.block_bytes, machine.cores)
    check_allocation(peak, f"conjugate gradients over m={m} centres", opts, fix="reduce sketch_size")
    reasons["chunk_rows"] = "kernel blocks of about block_bytes (each pass over the rows computes its blocks)"
    reasons["keep_features"] = "conjugate gradients over the centres form no features"
    return _block_rows(n, m, opts, kernel), peak, None


def _keep_features(loss, streamed, n, m, item, budget, stream, reasons):
    """Rows per chunk when a streamed fit keeps its n x m features (:func:`skframe.compute.memory.kept_features_rows`,
    the fit's own rule), None when it does not; True for the in-memory executor."""
    if loss == "square" and streamed:
        reasons["keep_features"] = "the square loss needs only the m x m and m x d sums"
        return None
    if not streamed:
        reasons["keep_features"] = "in memory: the features are formed once"
        return True
    rows = kept_features_rows(n, m, item, budget, stream)
    reasons["keep_features"] = (f"the n x r features ({format_bytes(n * m * item)}) "
                                + ("fit the budget beside the stream's buffers: kept for every pass" if rows
                                   else "exceed the budget beside the stream's buffers: recomputed chunk by chunk "
                                        "on every pass"))
    return rows


def plan_fit(data, *, kernel=None, sketch="psr", sketch_size="auto", sketch_params=None, loss="square",
             options=None, machine=None, streamable=True, factored=False):
    """Decide how a fit runs: the :class:`ExecutionPlan`, with a reason for each choice.

    Parameters
    ----------
    data : array, sparse matrix, memory map, dask array, CuPy array, InputCollection or DataShape
        The training inputs (only their shape and kind are read).
    kernel : kernel object, optional
        Its ``block_bytes`` estimate sizes the chunks; its backends decide whether a GPU can run it.
    sketch : str, sketch object or None
        A registered sketch name, a sketch object, or None / ``"none"`` for the exact model.
    sketch_size : int or "auto"
        m for a named sketch.
    sketch_params : dict, optional
    loss : {"square", "iterative"}
        The square loss is solved from m x m sums; iterative losses pass over the features.
    options : ComputeOptions, optional
        ``memory_budget`` (None: half the available memory), ``dtype``, ``backend``
        (``"auto"``, ``"numpy"`` or ``"cupy"``) and ``chunk_rows``. Default: all defaults and
        ``backend="auto"``.
    machine : Machine, optional
        Detected when omitted (:func:`detect_machine`).
    streamable : bool, default True
        False for models that fit in memory only (the structured models): the executor is then
        in-memory and the auto size is capped by what the in-memory arrays may hold.
    factored : bool, default False
        The iterative loss's solver reads kept features as two factors (the ``newton`` solver): from
        :data:`STREAM_MIN_WORK` kernel entries the fit streams, keeping the n x m kernel block and the
        projection apart instead of forming the features in memory.

    Returns
    -------
    ExecutionPlan

    Raises
    ------
    MemoryBudgetError
        When the chosen path cannot run within the budget (before anything is allocated).
    InvalidParameterError
        For an unknown backend or loss kind.
    """
    options = options or ComputeOptions(backend="auto")
    data = describe_data(data)
    n, reasons = int(data.n), {}
    if loss not in ("square", "iterative"):
        raise InvalidParameterError(f"loss={loss!r} is not a loss kind; use 'square' or 'iterative'")
    requested = str(options.backend or "auto").lower()
    if requested not in BACKEND_CHOICES:
        raise InvalidParameterError(f"backend={options.backend!r} is not known; choose one of "
                                    f"{', '.join(BACKEND_CHOICES)}")
    dtype = str(options.dtype or "float64")

    # -- the sketch: kind, size m (the rule for "auto"), expected sampled points s'
    kind, m, rule, obj = _sketch_kind_and_size(sketch, sketch_size, sketch_params, n)
    m_eff = int(m) if m is not None else min(n, AUTO_MAX)

    def s_of(size):
        return n if kind == "exact" else 0 if kind == "feature_map" else expected_columns(obj, n, size)

    # -- the machine, the backend and the budget
    wants_gpu = (requested == "auto" and kind == "sketch" and streamable and not data.dask and not data.collection
                 and n * s_of(m_eff) >= rules.GPU_MIN_WORK)  # CuPy is imported to ask only for work that would use it
    if machine is None:
        machine = detect_machine(probe_gpu=wants_gpu)
    if not streamable and requested == "auto":
        backend, reasons["backend"] = "numpy", "this model computes in memory on the CPU"
    else:
        backend, reasons["backend"] = rules.choose_backend(requested, data, kind, kernel, n * s_of(m_eff), machine)
    budget, source, reasons["memory_budget"] = _budget(options, backend, machine)
    opts = options.replace(memory_budget=budget, backend=backend, dtype=dtype)

    # -- the executor (decided with the rule's m, then m is capped by what that executor holds)
    executor, reasons["executor"] = rules.choose_executor(
        data, kind, loss, backend, dtype, parse_bytes(options.memory_budget), n, m_eff, s_of(m_eff), opts,
        streamable=streamable, factored=factored)
    streamed = executor != "in-memory"
    rows_of = (data.partition_rows or n) if executor == "dask" else n

    def fits(size):
        if not streamed:
            return rules.in_memory_bytes(n, size, s_of(size), data.n_features, opts, kind) <= budget
        try:
            _stream_plan(rows_of, size, s_of(size), data, opts, kernel)
            return True
        except MemoryBudgetError:
            return False

    if kind == "sketch" and isinstance(sketch, str) and rule.startswith("auto"):
        cap = rules.largest_size(fits, m_eff)
        if cap < m_eff:
            if cap < 1 and streamed:
                _stream_plan(rows_of, 1, s_of(1), data, opts, kernel)  # raises the budget's error
            m_eff = cap = max(cap, 1)
            rule += f", capped at {cap} by the {executor} path's memory budget ({format_bytes(budget)})"
    if kind != "feature_map":
        m = m_eff if m is not None or kind == "exact" else None
    s_prime = s_of(m_eff) if kind == "sketch" else (n if kind == "exact" else None)
    reasons["sketch_size"] = rule if m is not None else "set by the sketch object"

    # -- the square loss's solver: closed form from the m x m sums, or conjugate gradients over the centres
    if loss == "square":  # (compute.plan_square)
        solver, why = choose_square_solver(n, m_eff if kind == "sketch" else None, s_prime, budget, backend)
        reasons["square_solver"] = f"{solver}: {why}"

    # -- chunks, peak memory, kept features
    item = 4 if dtype == "float32" else 8
    if loss == "square" and reasons["square_solver"].startswith("pcg"):  # no sums, no features: passes
        chunk_rows, peak, keep = _pcg_chunks_and_peak(n, m_eff, data, opts, kernel, budget, machine, reasons)
    else:
        chunks = _chunks_and_peak(streamed, (rows_of, n, m_eff, s_prime, kind), data, opts, options, kernel,
                                  reasons)
        keep = _keep_features(loss, streamed, n, m_eff, item, budget, chunks if streamed else None, reasons)
        if streamed:  # a StreamPlan: the chunks shrink to the room kept features leave them
            stream = chunks if not keep else replace(chunks, chunk_rows=keep)
            chunk_rows, peak = stream.chunk_rows, stream.peak_bytes + (n * m_eff * item if keep else 0)
        else:
            chunk_rows, peak = chunks

    # -- engine, products, BLAS threads
    work = int(n * (s_prime or 0)) if kind != "feature_map" else int(n * m_eff)
    engine, reasons["engine"] = rules.choose_engine(backend, work, sparse=bool(data.sparse))
    reasons["products"] = ("float64 blocks and products" if dtype == "float64" else
                           "float32 blocks; the products switch to float64 when R K R^T is ill-conditioned "
                           "(kappa > 8e4, decided from its eigenvalues)")
    threads, reasons["blas_threads"] = rules.choose_blas_threads(n, m_eff, machine.cores)
    kept_dtype, why = kept_block_dtype(options)
    if loss == "iterative":  # the newton solver's step (the same rule, applied by the solver to its own r)
        method, why_step = choose_newton_step(n, m_eff, data.n_outputs, kept=not streamed or bool(keep))
        reasons["newton_step"] = f"{method}: {why_step}"
        if streamed and keep:  # where a Newton fit keeps the kernel block as the left factor of its features
            reasons["kept_dtype"] = f"{kept_dtype}: {why}"
    return ExecutionPlan(
        executor=executor, backend=backend, engine=engine, chunk_rows=int(chunk_rows) if chunk_rows else None,
        dtype=dtype, products=dtype, blas_threads=threads, keep_features=bool(keep), memory_budget=int(budget),
        budget_source=source, sketch_size=None if m is None else int(m), size_rule=rule,
        s_prime=None if s_prime is None else int(s_prime), peak_bytes=int(peak), n=n,
        n_features=None if data.n_features is None else int(data.n_features), n_outputs=int(data.n_outputs),
        loss=loss, work=work, reasons=reasons, machine=machine.to_dict(), kept_dtype=kept_dtype,
    )


def plan_predict(X, n_ref, options=None):
    """The light plan of a prediction ``k(X, X_ref) @ coef`` over ``n_ref`` reference points.

    :class:`~skframe.options.ComputeOptions` whose engine is fixed once, for every row chunk of the
    prediction, by the one engine rule (:func:`skframe.compute.plan_rules.choose_engine`: ``len(X) x n_ref``
    kernel entries, sparse rows counted as such); its chunk rows come from the block budget
    (:meth:`~skframe.options.ComputeOptions.rows_per_block`) and its backend is the fitted model's
    (NumPy arrays). An engine already named in ``options`` is kept.
    """
    options = options or DEFAULT_OPTIONS
    if options.engine:
        return options
    engine, _ = rules.choose_engine(options.backend, n_items(X) * int(n_ref), sparse=sp.issparse(X))
    return options.replace(engine=engine)
