"""The rules of the execution plan: one function per choice, each returning ``(value, reason)``.

:func:`skframe.compute.plan.plan_fit` calls them in order: the backend
(:func:`choose_backend`), the executor (:func:`choose_executor`), the engine of the inner loops
(:func:`choose_engine`) and the BLAS threads (:func:`choose_blas_threads`); the sketch size
``"auto"`` follows :func:`auto_size_rule`, and :func:`default_sketch` is the command line's
default family. The thresholds are module constants, each with the measurement it comes from.

>>> from skframe.compute.execution import DataShape
>>> from skframe.options import ComputeOptions
>>> choose_executor(DataShape(n=10**6, n_features=10), "sketch", "square", "numpy", "float64", None,
...                 10**6, 1000, 1000, ComputeOptions(memory_budget=10**11))[0]
'streamed'
>>> choose_blas_threads(2000, 100, cores=8)
(1, 'n m^2 = 2e+07 flops: one thread is as fast and never waits for a busy core')
"""

from __future__ import annotations

import math

from skframe.compute._engine_cupy import runs_on_device
from skframe.compute.memory import format_bytes
from skframe.contract.registry import get_component
from skframe.core.engine import SPARSE_ENGINE_SHARE, engine_rule, numba_min_work  # noqa: F401 - names kept
from skframe.deps import numba_enabled  # noqa: F401 - the doctest of choose_engine reads it
from skframe.exceptions import InvalidParameterError

__all__ = ["SPARSE_ENGINE_SHARE", "EXECUTORS", "BACKEND_CHOICES", "STREAM_MIN_WORK", "SAMPLED_STREAM_MIN_WORK",
           "NYSTROM_MIN_ROWS",
           "GPU_MIN_WORK", "SERIAL_BLAS_MAX_FLOPS", "DEFAULT_BUDGET_SHARE", "AUTO_FACTOR", "AUTO_MIN", "AUTO_MAX",
           "auto_size_rule", "default_sketch", "expected_columns", "sketch_object", "is_exact", "in_memory_bytes",
           "largest_size", "choose_backend", "choose_executor", "choose_engine", "choose_blas_threads",
           "EXACT_SKETCH_NAMES", "AUTO_RULE_TEXT", "SERIAL_HELD_OUT", "one_blas_thread", "fold_jobs",
           "SOLVER_SERIAL_COLUMNS", "solver_blas_threads", "SMALL_NETWORK", "choose_network_threads",
           "choose_device"]

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


# ----------------------------------------------------------------------------- the sketch
#: how ``sketch_info_["size_rule"]`` and the plan's reasons name the ``"auto"`` rule
AUTO_RULE_TEXT = f"auto: ceil({AUTO_FACTOR:g} sqrt(n)) in [min(n, {AUTO_MIN}), min(n, {AUTO_MAX})]"


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


def sketch_object(sketch, m, sketch_params):
    """A sketch object of size m for a registered name (constructors only validate), or the object itself."""
    if not isinstance(sketch, str):
        return sketch
    return get_component("sketch", sketch, **dict(sketch_params or {}, size=int(m)))


#: sketch names meaning "no sketch": the exact kernel model
EXACT_SKETCH_NAMES = ("none", "exact")


def is_exact(sketch):
    """True for ``None``, ``"none"`` and ``"exact"`` (any case): the exact kernel model."""
    return sketch is None or (isinstance(sketch, str) and sketch.strip().lower() in EXACT_SKETCH_NAMES)


# ----------------------------------------------------------------------------- memory
def in_memory_bytes(n, m, s_prime, n_features, options, kind):
    """Peak of the in-memory representation: K R^T and the features (n x m each) and one kernel block."""
    d = int(n_features or 1)
    if kind == "exact":
        return 2 * n * n * 8
    if kind == "feature_map":
        return 2 * n * m * 8
    block = min(int(options.block_bytes), n * s_prime * 8)
    return 2 * n * m * 8 + block + s_prime * (d + m) * 8


def largest_size(fits, upper):
    """The largest m in [1, upper] with ``fits(m)`` (monotone), or 0."""
    lo, hi = 0, int(upper)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


# ----------------------------------------------------------------------------- the choices
def kernel_runs_on_gpu(kernel):
    """True when the kernel computes blocks of device arrays itself (its tags list ``"cupy"``)."""
    if kernel is None:
        return True
    return runs_on_device(kernel)


def choose_backend(requested, data, kind, kernel, work, machine):
    """The array backend, ``"numpy"`` or ``"cupy"``: a given one wins; ``"auto"`` takes a GPU for large work."""
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
    if work < GPU_MIN_WORK:  # before the GPU question: a small fit never imports CuPy to ask it
        return "numpy", (f"n x s' = {work:.3g} kernel entries, below {GPU_MIN_WORK:.0e}: CuPy's start and the "
                         "transfer cost more than the CPU fit")
    if not machine.gpu:
        return "numpy", f"no GPU: {machine.gpu_source}" if machine.gpu_source != "not probed" else "no GPU"
    if not kernel_runs_on_gpu(kernel):
        return "numpy", "the kernel has no GPU formula"
    return "cupy", f"{machine.gpu_source}; n x s' = {work:.3g} kernel entries"


def choose_executor(data, kind, loss, backend, dtype, given, n, m, s_prime, options, *, streamable=True,
                    factored=False):
    """The executor, ``"in-memory"``, ``"streamed"`` or ``"dask"``, for a sketch of size m sampling s' points.

    ``options.memory_budget`` is the plan's budget and ``given`` the user's (None when none was given);
    ``streamable=False`` is for models that fit in memory only; ``factored``: the solver of an iterative loss
    reads kept features as two factors (the ``newton`` solver), which only the streamed executor keeps.
    """
    if not streamable:
        return "in-memory", "this model fits in memory (it has no streamed path)"
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
    held = in_memory_bytes(n, m, s_prime, data.n_features, options, kind)
    if held > options.memory_budget:
        return "streamed", (f"the in-memory arrays ({format_bytes(held)}) exceed the budget "
                            f"({format_bytes(options.memory_budget)})")
    if loss == "iterative" and factored and n * m >= STREAM_MIN_WORK:
        return "streamed", (f"n x m = {n * m:.3g} >= {STREAM_MIN_WORK:.0e} and the newton solver reads the kernel "
                            "block and the projection apart: the streamed executor keeps the n x m block and never "
                            "forms the features (benchmarks/out/classification_executor.json)")
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


def choose_engine(backend, work, *, sparse=False):
    """The engine of the inner loops for ``work`` kernel entries (n x s'): :func:`skframe.core.engine.engine_rule`.

    >>> choose_engine("numpy", 10**7, sparse=True)[0] == ("numba" if numba_enabled() else "numpy")
    True
    """
    return engine_rule(backend, work, sparse=sparse)


#: dense work of model selection's folds (a fold's features, at most ``n_train^3`` multiply-adds; its held-out
#: work, ``n_test x r x r``) runs on one BLAS thread up to this many multiply-adds: threads gain nothing on such
#: products, and a thread waiting for a core another process holds slowed the 71 x 283 x 283 product of the
#: exact Boston model from 0.3 ms to 15 ms (2 cores, load 4)
SERIAL_HELD_OUT = 2**26


def one_blas_thread(flops, limit=SERIAL_BLAS_MAX_FLOPS):
    """True when dense algebra of ``flops`` multiply-adds runs on one BLAS thread (at most ``limit``)."""
    return float(flops) <= limit


def fold_jobs(n_jobs, n_folds, per_fold_bytes, memory_bytes, cores):
    """Threads that compute cross-validation folds at once: ``n_jobs`` (None: 1; negative: ``cores``), at most
    one per fold and as many as half of ``memory_bytes`` holds folds of ``per_fold_bytes``. Each thread of
    such a pool runs its dense algebra on one BLAS thread.

    >>> fold_jobs(-1, 5, 10**6, 10**9, cores=2), fold_jobs(None, 5, 1, 10**9, cores=8)
    (2, 1)
    """
    jobs = 1 if n_jobs is None else (max(1, int(cores)) if n_jobs < 0 else int(n_jobs))
    jobs = min(jobs, int(n_folds))
    if jobs <= 1:
        return 1
    return int(max(1, min(jobs, (int(memory_bytes) // 2) // max(int(per_fold_bytes), 1))))


#: a solver's iterations that multiply the features by at most this many target columns at a time run on one BLAS
#: thread: as fast, and immune to threads waiting for a core another process holds (ADMM's loop)
SOLVER_SERIAL_COLUMNS = 16


def solver_blas_threads(n_columns, blas_threads):
    """BLAS threads of a solver's iterations on targets of ``n_columns`` columns: one up to
    :data:`SOLVER_SERIAL_COLUMNS`, else ``blas_threads`` (the fit's choice; None leaves BLAS as it is).

    >>> solver_blas_threads(1, 8), solver_blas_threads(40, 8), solver_blas_threads(40, None)
    (1, 8, None)
    """
    return 1 if int(n_columns) <= SOLVER_SERIAL_COLUMNS else blas_threads


def choose_blas_threads(n, m, cores):
    """BLAS threads of the dense algebra: one for fits of at most :data:`SERIAL_BLAS_MAX_FLOPS` in n m^2."""
    flops = int(n) * float(m) ** 2
    if flops <= SERIAL_BLAS_MAX_FLOPS:
        return 1, f"n m^2 = {flops:.3g} flops: one thread is as fast and never waits for a busy core"
    return int(cores), f"n m^2 = {flops:.3g} flops: all {int(cores)} cores"


#: weights of a network (DSOKR's) below which it trains and predicts on one thread when no ``n_threads`` is given
SMALL_NETWORK = 100_000


def choose_network_threads(n_threads, n_weights):
    """Threads of a network's training and prediction: ``(threads or None, reason)``.

    A given ``n_threads`` wins; else one thread for a network of fewer than :data:`SMALL_NETWORK` weights (its
    products are too small to share), else None: PyTorch's own thread count.

    >>> choose_network_threads(None, 10)[0], choose_network_threads(4, 10)[0], choose_network_threads(None, 10**6)[0]
    (1, 4, None)
    """
    if n_threads is not None:
        return int(n_threads), "n_threads given"
    if n_weights < SMALL_NETWORK:
        return 1, f"{int(n_weights)} weights < {SMALL_NETWORK}: one thread"
    return None, f"{int(n_weights)} weights: PyTorch's own thread count"


def choose_device(requested, gpu_seen):
    """The device of a network, ``"cpu"`` or ``"cuda"``: ``(name, reason)``.

    ``requested`` is ``"cpu"``, ``"cuda"`` or ``"auto"`` (a CUDA GPU when one is seen); ``gpu_seen`` is a
    callable asked only when the answer depends on it (e.g. ``torch.cuda.is_available``).

    Raises
    ------
    InvalidParameterError
        ``"cuda"`` when no CUDA GPU is seen.

    >>> choose_device("cpu", lambda: True)[0], choose_device("auto", lambda: False)[0]
    ('cpu', 'cpu')
    """
    name = str(requested).strip().lower()
    if name == "auto":
        return ("cuda", "device='auto': a CUDA GPU is seen") if gpu_seen() else \
            ("cpu", "device='auto': no CUDA GPU is seen")
    if name == "cuda" and not gpu_seen():
        raise InvalidParameterError("device='cuda' but PyTorch sees no CUDA GPU; use device='cpu'")
    return name, f"device={name!r} given"
