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
passes the plan down and stores it as ``execution_`` (:meth:`ExecutionPlan.to_dict`);
``skframe fit --explain`` prints it without fitting.

Defaults take the fastest path that fits the machine:

* without ``memory_budget`` the budget is half the memory available to the process;
* the square loss streams (one pass of ``B^T B`` sums, never an n x m array) when the
  in-memory arrays do not fit the budget, or when ``n * m`` reaches :data:`STREAM_MIN_WORK`
  (:data:`SAMPLED_STREAM_MIN_WORK` for sketches that sample few points, such as Nyström),
  where the streamed fit was measured at least as fast (``benchmarks/bench_stream_crossover.py``);
* ``sketch_size="auto"`` follows ``ceil(2 sqrt(n))`` in ``[100, 1000]``, capped only by
  what the chosen executor can hold;
* iterative losses keep their features when they fit the budget, else recompute them
  chunk by chunk on every pass.

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

import math
import os
from dataclasses import asdict, dataclass, field

from skframe.compute._engine_cupy import device_kernel_name
from skframe.compute.backend import is_cupy_array
from skframe.compute.memory import MIN_CHUNK_ROWS, format_bytes, plan_stream
from skframe.compute.stream_fit import is_memory_mapped
from skframe.core.engine import numba_min_work
from skframe.core.threads import available_cores
from skframe.deps import available, disabled, is_dask_collection, numba_enabled
from skframe.exceptions import InvalidParameterError, MemoryBudgetError
from skframe.options import ComputeOptions, parse_bytes
from skframe.plugin.collections import is_collection, n_items
from skframe.plugin.registry import get_component
from skframe.plugin.tags import get_tags

__all__ = ["Machine", "DataShape", "ExecutionPlan", "plan_fit", "detect_machine", "describe_data",
           "expected_columns", "STREAM_MIN_WORK", "SAMPLED_STREAM_MIN_WORK", "GPU_MIN_WORK", "SERIAL_BLAS_MAX_FLOPS",
           "EXECUTORS", "BACKEND_CHOICES", "NYSTROM_MIN_ROWS", "auto_size_rule", "default_sketch"]

#: executors a plan chooses from
EXECUTORS = ("in-memory", "streamed", "dask")
#: values of the ``backend`` option: ``"auto"`` lets the plan choose
BACKEND_CHOICES = ("auto", "numpy", "cupy")

#: ``n * m`` from which the square loss streams by default: from there on the streamed fit (one
#: pass of B^T B sums by BLAS syrk) was measured at least as fast as the in-memory one (which
#: holds K R^T and the features, n x m each, and multiplies them by U D^{-1/2}) for every sketch,
#: p-SR included (``benchmarks/out/stream_crossover.json``, ``benchmarks/bench_stream_crossover.py``:
#: Gaussian kernel, d = 10, best of 3, 2 cores; p-SR n = 5e4, m = 1000 streamed 1.25x slower,
#: n = 2e5, m = 300 0.78x, m = 1000 0.74x).
STREAM_MIN_WORK = 60_000_000

#: ``n * m`` from which the square loss streams by default when the sketch samples few points
#: (s' <= 2 m, e.g. Nyström): the streamed pass then never evaluates the large s' x s' block of
#: ``R K R^T`` that makes it slower for p-SR at small n, and it skips the n x m x r product of the
#: in-memory path (same benchmark: 0.57x to 0.75x from n * m = 3e6; n = 2000, m = 1000: 1.13x).
SAMPLED_STREAM_MIN_WORK = 3_000_000

#: training rows from which the command line's default sketch (``--sketch auto``) is Nyström
#: sub-sampling instead of p-SR: at the auto size m the default p = 20/n samples s' ~ 20 m points,
#: which every kernel block and every prediction evaluates, for no accuracy gain on the measured data
#: (``benchmarks/out/default_sketch_1e5.json``: n = 1e5, m = 633: p-SR s' = 11 928, test R^2 0.8815,
#: Nyström s' = 633, R^2 0.8823, fit about 5x and prediction about 20x faster; n = 2e4: R^2 0.8540
#: and 0.8576). Below, a p-SR fit costs a second or less and keeps its documented results.
NYSTROM_MIN_ROWS = 50_000

#: kernel entries (n x s') from which ``backend="auto"`` computes on a GPU: below, CuPy's
#: start and the transfer of the data cost more than the CPU fit.
GPU_MIN_WORK = 200_000_000

#: fits with at most this many flops in their n x m x m products (about 50 ms on one core)
#: run their dense algebra on one BLAS thread (see :func:`skframe.compute.backend.serial_blas`)
SERIAL_BLAS_MAX_FLOPS = 1e9

#: share of the available memory a fit takes as its budget when none is given
DEFAULT_BUDGET_SHARE = 0.5

#: the auto sketch size rule: ``ceil(AUTO_FACTOR sqrt(n))`` within ``[min(n, AUTO_MIN), min(n, AUTO_MAX)]``
AUTO_FACTOR, AUTO_MIN, AUTO_MAX = 2.0, 100, 1000

_MEMINFO = "/proc/meminfo"
_CGROUP = "/sys/fs/cgroup"
_NO_LIMIT = 1 << 60  # cgroup v1 writes a huge number for "no limit"


# ----------------------------------------------------------------------------- the machine
@dataclass(frozen=True)
class Machine:
    """What the machine offers a fit.

    Parameters
    ----------
    memory_bytes : int
        Memory available to this process now: the system's available memory, lowered by a
        cgroup (container) limit when there is one.
    cores : int
        Cores this process may use (:func:`skframe.core.threads.available_cores`).
    gpu : bool
        A GPU usable through CuPy.
    gpu_free_bytes : int or None
        Free memory of that GPU.
    memory_source, gpu_source : str
        Where the figures come from (reported in the plan's reasons).
    """

    memory_bytes: int
    cores: int = 1
    gpu: bool = False
    gpu_free_bytes: int | None = None
    memory_source: str = "given"
    gpu_source: str = "not probed"

    def to_dict(self):
        return asdict(self)


def _read_int(path):
    try:
        with open(path) as fh:
            text = fh.read().strip()
    except OSError:
        return None
    if text == "max":
        return _NO_LIMIT
    try:
        return int(text.split()[0])
    except (ValueError, IndexError):
        return None


def _meminfo_available(path=_MEMINFO):
    """``MemAvailable`` of ``/proc/meminfo`` in bytes, or None."""
    try:
        with open(path) as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _cgroup_room(root=_CGROUP):
    """``(limit - usage, limit)`` of this process's memory cgroup (v2, then v1), or None without a limit."""
    for limit_file, usage_file in (("memory.max", "memory.current"),
                                   ("memory/memory.limit_in_bytes", "memory/memory.usage_in_bytes")):
        limit = _read_int(os.path.join(root, limit_file))
        if limit is None or limit >= _NO_LIMIT:
            continue
        usage = _read_int(os.path.join(root, usage_file)) or 0
        return max(0, limit - usage), limit
    return None


def available_memory(meminfo=_MEMINFO, cgroup=_CGROUP):
    """``(bytes, source)``: memory available to this process, and where the figure comes from.

    The smaller of ``MemAvailable`` (``/proc/meminfo``) and the room left under a cgroup
    limit (``/sys/fs/cgroup/memory.max`` less ``memory.current``, or their cgroup v1 names).
    Off Linux, the physical pages the system reports available; 4 GB when nothing is known.
    """
    avail = _meminfo_available(meminfo)
    source = f"MemAvailable {format_bytes(avail)}" if avail is not None else None
    room = _cgroup_room(cgroup)
    if room is not None and (avail is None or room[0] < avail):
        avail = room[0]
        source = f"cgroup limit {format_bytes(room[1])}, {format_bytes(room[0])} unused"
    if avail is None:
        try:
            avail = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
            source = f"available physical pages {format_bytes(avail)}"
        except (ValueError, OSError, AttributeError):
            avail, source = 4 * 10**9, "unknown (4 GB assumed)"
    return int(avail), source


_GPU_PROBE = []


def _probe_gpu():
    """``(present, free_bytes, source)`` of the current CUDA device, imported only when CuPy is installed."""
    if _GPU_PROBE:
        return _GPU_PROBE[0]
    if disabled("cupy"):
        found = (False, None, "CuPy disabled by SKFRAME_DISABLE_CUPY")
    elif not available("cupy"):
        found = (False, None, "CuPy is not installed")
    else:
        try:
            import cupy  # lazy: the optional GPU library, imported only to probe a GPU when it is installed

            if int(cupy.cuda.runtime.getDeviceCount()) < 1:
                found = (False, None, "no GPU is visible to CuPy")
            else:
                free, total = cupy.cuda.Device().mem_info
                found = (True, int(free), f"GPU {format_bytes(free)} free of {format_bytes(total)}")
        except Exception as exc:  # driver or runtime missing: the CPU it is
            found = (False, None, f"the CUDA runtime cannot be used ({type(exc).__name__})")
    _GPU_PROBE.append(found)
    return found


def detect_machine(*, probe_gpu=False):
    """The :class:`Machine` this process runs on; the GPU is probed only when ``probe_gpu`` (CuPy is
    imported only then, and only when installed)."""
    memory, source = available_memory()
    gpu, free, gpu_source = _probe_gpu() if probe_gpu else (False, None, "not probed")
    return Machine(memory, available_cores(), gpu, free, source, gpu_source)


# ----------------------------------------------------------------------------- the data
@dataclass(frozen=True)
class DataShape:
    """What a plan needs to know of the training data (see :func:`describe_data`).

    Parameters
    ----------
    n : int
        Rows (items).
    n_features : int or None
        Columns (None for collections such as molecules).
    n_outputs : int
        Columns of the targets.
    dtype : str
    sparse, memory_mapped, dask, collection : bool
    device : {"cpu", "cupy"}
        Where the array lives.
    partition_rows : int or None
        Rows of the largest Dask partition.
    """

    n: int
    n_features: int | None = None
    n_outputs: int = 1
    dtype: str = "float64"
    sparse: bool = False
    memory_mapped: bool = False
    dask: bool = False
    collection: bool = False
    device: str = "cpu"
    partition_rows: int | None = None


def describe_data(X, Y=None):
    """The :class:`DataShape` of training data ``X`` (and targets ``Y``) without reading them."""
    if isinstance(X, DataShape):
        return X

    d = 1 if Y is None or len(getattr(Y, "shape", (0,))) < 2 else int(Y.shape[1])
    if is_collection(X):
        return DataShape(n=int(n_items(X)), n_outputs=d, dtype="object", collection=True)
    shape = tuple(getattr(X, "shape", ()))
    n = int(shape[0]) if shape else int(n_items(X))
    dask = is_dask_collection(X)
    memmap = not dask and is_memory_mapped(X)
    rows = None
    if dask:
        chunks = getattr(X, "chunks", None)
        rows = int(max(chunks[0])) if chunks and chunks[0] else n
    return DataShape(n=n, n_features=int(shape[1]) if len(shape) > 1 else None, n_outputs=d,
                     dtype=str(getattr(X, "dtype", "float64")), sparse=hasattr(X, "tocsr") and hasattr(X, "nnz"),
                     memory_mapped=memmap, dask=dask, device="cupy" if is_cupy_array(X) else "cpu",
                     partition_rows=rows)


# ----------------------------------------------------------------------------- the sketch
def auto_size_rule(n):
    """``ceil(2 sqrt(n))`` within ``[min(n, 100), min(n, 1000)]``: the ``"auto"`` sketch size before any cap.

    >>> auto_size_rule(50), auto_size_rule(4000), auto_size_rule(10**6)
    (50, 127, 1000)
    """
    n = int(n)
    rule = math.ceil(AUTO_FACTOR * math.sqrt(max(n, 0)))
    return max(1, min(max(rule, min(n, AUTO_MIN)), min(n, AUTO_MAX)))


def default_sketch(n, *, sketch_params=None):
    """The sketch ``--sketch auto`` draws for n training rows: ``(name, reason)``.

    p-SR (with its default p = 20/n) below :data:`NYSTROM_MIN_ROWS` rows, Nyström sub-sampling
    from there on: the family with the best measured accuracy per second at the data's size
    (``benchmarks/bench_default_sketch.py``). Sketch parameters given by the user (``p``) are
    p-SR's: they keep p-SR.

    >>> default_sketch(10_000)[0], default_sketch(10**6)[0]
    ('psr', 'subsample')
    """
    if sketch_params:
        return "psr", "p-SR: --sketch-param given"
    if int(n) < NYSTROM_MIN_ROWS:
        return "psr", f"p-SR (p = 20/n): n = {int(n)} < {NYSTROM_MIN_ROWS} rows"
    return "subsample", (f"Nyström sub-sampling: n = {int(n)} >= {NYSTROM_MIN_ROWS} rows, where p-SR's s' ~ 20 m "
                         "sampled points cost more than they bring (benchmarks/out/default_sketch_1e5.json)")


def expected_columns(sketch, n, m=None):
    """Expected number s' of sampled points (non-null columns) of ``sketch`` of size ``m`` on n rows.

    A sketch may declare it with ``expected_columns(n)``; else p-sparsified sketches give
    ``n (1 - (1 - p)^m)``, sketches that sample m points (Nyström, leverage scores) give m,
    accumulation sketches ``min(n, m n_terms)`` and dense sketches n.
    """
    n = int(n)
    m = int(m if m is not None else getattr(sketch, "size", n) or n)
    own = getattr(sketch, "expected_columns", None)
    if callable(own):
        return max(1, min(n, int(own(n))))
    resolved_p = getattr(sketch, "resolved_p", None)
    if callable(resolved_p):
        p = float(resolved_p(n))
        q = 1.0 if p >= 1 else -math.expm1(m * math.log1p(-p))
        return max(1, min(n, int(round(n * q))))
    n_terms = getattr(sketch, "n_terms", None)
    if isinstance(n_terms, int):
        return max(1, min(n, m * n_terms))
    name = str(getattr(sketch, "name", type(sketch).__name__)).lower()
    if "subsample" in name or "nystr" in name or "leverage" in name:
        return max(1, min(n, m))
    return n


def _sketch_object(sketch, m, sketch_params):
    """A sketch object of size m for a registered name (constructors only validate), or the object itself."""
    if not isinstance(sketch, str):
        return sketch
    return get_component("sketch", sketch, **dict(sketch_params or {}, size=int(m)))


def _is_exact(sketch):
    return sketch is None or (isinstance(sketch, str) and sketch.strip().lower() in ("none", "exact"))


# ----------------------------------------------------------------------------- the plan
@dataclass(frozen=True)
class ExecutionPlan:
    """How one fit runs, and why (see :func:`plan_fit`).

    Attributes
    ----------
    executor : {"in-memory", "streamed", "dask"}
        ``"in-memory"`` holds ``K R^T`` and the features; ``"streamed"`` makes one pass over
        row chunks (m x m sums; features kept or recomputed); ``"dask"`` sums partitions on a
        Dask cluster.
    backend : {"numpy", "cupy"}
        Array backend of the kernel blocks and products.
    engine : {"numpy", "numba", "cupy"}
        Engine of the inner loops (plain NumPy formulas below the size where compiled code
        pays for its start).
    chunk_rows : int or None
        Rows per chunk (kernel blocks in memory; streamed chunks; rows per chunk of a partition).
    dtype : {"float64", "float32"}
        Precision of kernel blocks.
    products : {"float64", "float32"}
        Precision of the chunk products (float32 blocks switch to float64 products when
        ``R K R^T`` is ill-conditioned; the fit reports the final one in ``sketch_info_``).
    blas_threads : int
        BLAS threads of the dense algebra (1 for small fits).
    keep_features : bool
        Whether the n x r features are held (iterative losses pass over them many times).
    memory_budget : int
        Bytes the fit may use beyond the data.
    budget_source : {"given", "machine", "gpu"}
    sketch_size : int or None
        The sketch size m (None for an explicit feature map or a sketch object without size).
    size_rule : str
    s_prime : int or None
        Expected sampled points of the sketch.
    peak_bytes : int
        Planned peak of the fit's own arrays.
    n, n_features, n_outputs : int
    loss : {"square", "iterative"}
    work : int
        Kernel entries ``n x s'`` of the fit (sizes the engine).
    reasons : dict
        One sentence per choice.
    machine : dict
        The :class:`Machine` the plan was made for.
    """

    executor: str
    backend: str
    engine: str
    chunk_rows: int | None
    dtype: str
    products: str
    blas_threads: int
    keep_features: bool
    memory_budget: int
    budget_source: str
    sketch_size: int | None
    size_rule: str
    s_prime: int | None
    peak_bytes: int
    n: int
    n_features: int | None
    n_outputs: int
    loss: str
    work: int
    reasons: dict = field(default_factory=dict, hash=False, compare=False)
    machine: dict = field(default_factory=dict, hash=False, compare=False)

    @property
    def streams(self):
        """True when the fit makes chunked passes (streamed or Dask executors)."""
        return self.executor != "in-memory"

    def compute_options(self, base=None):
        """The :class:`~skframe.options.ComputeOptions` the fit passes down: the plan's backend and budget."""
        base = base or ComputeOptions()
        changes = {"backend": self.backend, "memory_budget": int(self.memory_budget), "dtype": self.dtype}
        if self.backend == "cupy" and not base.chunk_rows and self.chunk_rows:
            changes["chunk_rows"] = int(self.chunk_rows)  # from free device memory, not the CPU block size
        return base.replace(**changes)

    def to_dict(self):
        """The plan as a dict of JSON types (``execution_``, ``--json``)."""
        out = {k: v for k, v in asdict(self).items() if k not in ("reasons", "machine")}
        out["reasons"] = dict(self.reasons)
        out["machine"] = dict(self.machine)
        return out

    def explain(self):
        """Human-readable lines: each choice and its reason."""
        return explain_plan(self.to_dict())


def explain_plan(plan):
    """Lines describing a plan given as :meth:`ExecutionPlan.to_dict` (e.g. a saved ``execution_``)."""
    reasons = plan.get("reasons", {})
    values = {
        "executor": plan.get("executor"),
        "backend": plan.get("backend"),
        "engine": plan.get("engine"),
        "memory_budget": f"{format_bytes(plan['memory_budget'])} ({plan.get('budget_source')})"
        if plan.get("memory_budget") else None,
        "sketch_size": plan.get("sketch_size"),
        "chunk_rows": plan.get("chunk_rows"),
        "products": plan.get("products"),
        "blas_threads": plan.get("blas_threads"),
        "keep_features": plan.get("keep_features"),
    }
    lines = []
    for key, value in values.items():
        reason = reasons.get(key, "")
        lines.append(f"{key:<14}{value}" + (f"  ({reason})" if reason else ""))
    lines.append(f"{'peak':<14}{format_bytes(plan.get('peak_bytes', 0))} planned above the data")
    return lines


def _in_memory_bytes(n, m, s_prime, n_features, options, kind):
    """Peak of the in-memory representation: K R^T and the features (n x m each) and one kernel block."""
    d = int(n_features or 1)
    if kind == "exact":
        return 2 * n * n * 8
    if kind == "feature_map":
        return 2 * n * m * 8
    block = min(int(options.block_bytes), n * s_prime * 8)
    return 2 * n * m * 8 + block + s_prime * (d + m) * 8


def _stream_plan(n, m, s_prime, data, options, kernel):
    return plan_stream(n, m, s_prime, int(data.n_features or 1), data.n_outputs, options, kernel=kernel)


def _largest_size(fits, upper):
    """The largest m in [1, upper] with ``fits(m)`` (monotone), or 0."""
    lo, hi = 0, int(upper)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def plan_fit(data, *, kernel=None, sketch="psr", sketch_size="auto", sketch_params=None, loss="square",
             options=None, machine=None):
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
    if _is_exact(sketch):
        kind, m, rule, obj = "exact", n, "none: exact model", None
    else:
        auto = isinstance(sketch, str) and (sketch_size is None or str(sketch_size).strip().lower() == "auto")
        m = auto_size_rule(n) if auto else None
        if isinstance(sketch, str) and not auto:
            m = min(int(sketch_size), n) if int(sketch_size) >= 1 else int(sketch_size)
        obj = _sketch_object(sketch, m if m is not None else 1, sketch_params) if isinstance(sketch, str) else sketch
        kind = "feature_map" if get_tags(obj, "sketch").feature_map else "sketch"
        if m is None:
            size = getattr(obj, "size", None)
            m = None if isinstance(size, bool) or not isinstance(size, int) else \
                (int(size) if kind == "feature_map" else min(int(size), n))
        if kind == "feature_map" and isinstance(sketch, str) and not auto:
            m = int(sketch_size)  # explicit feature maps may have more features than rows
        rule = ("auto: ceil(2 sqrt(n)) in [min(n, 100), min(n, 1000)]" if auto else "given")
    m_eff = int(m) if m is not None else min(n, AUTO_MAX)

    def s_of(size):
        if kind == "exact":
            return n
        if kind == "feature_map":
            return 0
        return expected_columns(obj, n, size)

    # -- the machine and the backend
    wants_gpu = requested == "cupy" or (requested == "auto" and kind == "sketch" and not data.dask
                                        and not data.collection)
    if machine is None:
        machine = detect_machine(probe_gpu=wants_gpu and requested == "auto")
    backend, reasons["backend"] = _choose_backend(requested, data, kind, kernel, n * s_of(m_eff), machine)

    # -- the budget
    given = parse_bytes(options.memory_budget)
    if given is not None:
        budget, source = int(given), "given"
        reasons["memory_budget"] = "memory_budget given"
    elif backend == "cupy" and machine.gpu_free_bytes:
        budget, source = int(machine.gpu_free_bytes * DEFAULT_BUDGET_SHARE), "gpu"
        reasons["memory_budget"] = f"half the free GPU memory ({machine.gpu_source})"
    else:
        budget, source = int(machine.memory_bytes * DEFAULT_BUDGET_SHARE), "machine"
        reasons["memory_budget"] = f"half the memory available to this process ({machine.memory_source})"
    opts = options.replace(memory_budget=budget, backend=backend, dtype=dtype)

    # -- the executor (decided with the rule's m, then m is capped by what that executor holds)
    executor, reasons["executor"] = _choose_executor(data, kind, loss, backend, dtype, given, n, m_eff,
                                                     s_of(m_eff), opts)
    streamed = executor != "in-memory"
    rows_of = (data.partition_rows or n) if executor == "dask" else n

    def stream_fits(size):
        try:
            _stream_plan(rows_of, size, s_of(size), data, opts, kernel)
            return True
        except MemoryBudgetError:
            return False

    if kind == "sketch" and isinstance(sketch, str) and rule.startswith("auto"):
        if streamed:
            cap = _largest_size(stream_fits, m_eff)
        else:
            cap = _largest_size(lambda k: _in_memory_bytes(n, k, s_of(k), data.n_features, opts, kind) <= budget,
                                m_eff)
        if cap < m_eff:
            if cap < 1 and streamed:
                _stream_plan(rows_of, 1, s_of(1), data, opts, kernel)  # raises the budget's error
            m_eff = cap = max(cap, 1)
            rule += f", capped at {cap} by the {executor} path's memory budget ({format_bytes(budget)})"
    if kind != "feature_map":
        m = m_eff if m is not None or kind == "exact" else None
    s_prime = s_of(m_eff) if kind == "sketch" else (n if kind == "exact" else None)
    reasons["sketch_size"] = rule if m is not None else "set by the sketch object"

    # -- chunks, peak memory, kept features
    if streamed:
        sp = _stream_plan(rows_of, m_eff, s_prime, data, opts, kernel)  # refuses an impossible budget here
        chunk_rows, peak = sp.chunk_rows, sp.peak_bytes
        if backend == "cupy" and not options.chunk_rows:  # device chunks from the device memory, not block_bytes
            # a quarter of the room left: float32 blocks that switch to float64 products still fit
            chunk_rows = int(max(MIN_CHUNK_ROWS, min(rows_of, (budget - sp.fixed_bytes) // (4 * sp.per_row_bytes))))
            peak = sp.fixed_bytes + chunk_rows * sp.per_row_bytes
            reasons["chunk_rows"] = "a quarter of the device budget left by the m x m part, per chunk"
        else:
            reasons["chunk_rows"] = ("given" if options.chunk_rows else
                                     "kernel blocks of about block_bytes, within the budget")
    else:
        chunk_rows = max(1, min(n, opts.rows_per_block(max(s_prime or 1, 1), 8)))
        peak = _in_memory_bytes(n, m_eff, s_prime or 0, data.n_features, opts, kind)
        reasons["chunk_rows"] = "kernel blocks of about block_bytes"
    item = 4 if dtype == "float32" else 8
    if loss == "square" and streamed:
        keep = False
        reasons["keep_features"] = "the square loss needs only the m x m and m x d sums"
    elif not streamed:
        keep = True
        reasons["keep_features"] = "in memory: the features are formed once"
    else:
        keep = n * m_eff * item <= budget
        reasons["keep_features"] = (f"the n x r features ({format_bytes(n * m_eff * item)}) "
                                    + ("fit the budget: kept for every pass" if keep
                                       else "exceed the budget: recomputed chunk by chunk on every pass"))
        if keep:
            peak += n * m_eff * item

    # -- engine, products, BLAS threads
    work = int(n * (s_prime or 0)) if kind != "feature_map" else int(n * m_eff)
    engine, reasons["engine"] = _choose_engine(backend, work)
    products = dtype
    reasons["products"] = ("float64 blocks and products" if dtype == "float64" else
                           "float32 blocks; the products switch to float64 when R K R^T is ill-conditioned "
                           "(kappa > 8e4, decided from its eigenvalues)")
    flops = n * float(m_eff) ** 2
    threads = 1 if flops <= SERIAL_BLAS_MAX_FLOPS else int(machine.cores)
    reasons["blas_threads"] = (f"n m^2 = {flops:.3g} flops: one thread is as fast and never waits for a busy core"
                               if threads == 1 else f"n m^2 = {flops:.3g} flops: all {threads} cores")
    return ExecutionPlan(
        executor=executor, backend=backend, engine=engine, chunk_rows=int(chunk_rows) if chunk_rows else None,
        dtype=dtype, products=products, blas_threads=threads, keep_features=bool(keep), memory_budget=int(budget),
        budget_source=source, sketch_size=None if m is None else int(m), size_rule=rule,
        s_prime=None if s_prime is None else int(s_prime), peak_bytes=int(peak), n=n,
        n_features=None if data.n_features is None else int(data.n_features), n_outputs=int(data.n_outputs),
        loss=loss, work=work, reasons=reasons, machine=machine.to_dict(),
    )


def _kernel_runs_on_gpu(kernel):
    if kernel is None:
        return True
    return "cupy" in get_tags(kernel, "kernel").backends or device_kernel_name(kernel) is not None


def _choose_backend(requested, data, kind, kernel, work, machine):
    if requested == "numpy":
        return "numpy", "backend='numpy' given"
    if requested == "cupy":
        return "cupy", "backend='cupy' given"
    if data.device == "cupy":
        return "cupy", "the data are CuPy arrays on the GPU"
    if data.dask:
        return "numpy", "Dask partitions are computed by the workers' CPUs"
    if kind != "sketch" or data.collection or data.sparse:
        return "numpy", "only sketched fits of dense numeric arrays run on a GPU"
    if not machine.gpu:
        return "numpy", f"no GPU: {machine.gpu_source}" if machine.gpu_source != "not probed" else "no GPU"
    if not _kernel_runs_on_gpu(kernel):
        return "numpy", "the kernel has no GPU formula"
    if work < GPU_MIN_WORK:
        return "numpy", (f"n x s' = {work:.3g} kernel entries, below {GPU_MIN_WORK:.0e}: CuPy's start and the "
                         "transfer cost more than the CPU fit")
    return "cupy", f"{machine.gpu_source}; n x s' = {work:.3g} kernel entries"


def _choose_executor(data, kind, loss, backend, dtype, given, n, m, s_prime, options):
    if kind == "exact":
        return "in-memory", "the exact model holds the n x n Gram matrix"
    if kind == "feature_map":
        return "in-memory", "an explicit feature map is computed in memory"
    if data.collection:
        return "in-memory", "collections (molecules, graphs) are fitted in memory"
    if data.dask:
        return "dask", "Dask arrays: partitions are summed on the workers"
    if data.memory_mapped:
        return "streamed", "memory-mapped data are read in chunks, never loaded"
    if backend == "cupy":
        return "streamed", "the GPU accumulates chunk products on the device"
    if dtype == "float32":
        return "streamed", "float32 blocks and products are computed chunk by chunk"
    if given is not None:
        return "streamed", f"memory_budget={format_bytes(given)} given: one bounded-memory pass"
    held = _in_memory_bytes(n, m, s_prime, data.n_features, options, kind)
    if held > options.memory_budget:
        return "streamed", (f"the in-memory arrays ({format_bytes(held)}) exceed the budget "
                            f"({format_bytes(options.memory_budget)})")
    if loss == "iterative":
        return "in-memory", "an iterative loss passes over the features many times: kept in memory (they fit)"
    sampled = s_prime <= 2 * m
    limit = SAMPLED_STREAM_MIN_WORK if sampled else STREAM_MIN_WORK
    which = f"s' = {s_prime} <= 2 m" if sampled else f"s' = {s_prime} > 2 m"
    if n * m >= limit:
        return "streamed", (f"n x m = {n * m:.3g} >= {limit:.0e} ({which}): the streamed fit is at least as fast "
                            "(benchmarks/out/stream_crossover.json)")
    return "in-memory", (f"n x m = {n * m:.3g} < {limit:.0e} ({which}): the in-memory fit is faster "
                         "(benchmarks/out/stream_crossover.json)")


def _choose_engine(backend, work):
    if backend == "cupy":
        return "cupy", "the CuPy backend"
    if not numba_enabled():
        return "numpy", "numba is not installed or disabled (SKFRAME_DISABLE_NUMBA)"
    limit = numba_min_work()
    if work < limit:
        return "numpy", (f"n x s' = {work:.3g} kernel entries < {limit:.0e}: compiled code would not pay for "
                         "its start")
    return "numba", f"n x s' = {work:.3g} kernel entries >= {limit:.0e}"
