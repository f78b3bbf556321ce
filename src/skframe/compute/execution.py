"""What a plan reads and what it returns: :class:`DataShape` and :class:`ExecutionPlan`, with its JSON form.

:func:`describe_data` reads the shape and kind of training data without reading the data;
:func:`skframe.compute.plan.plan_fit` turns it into an :class:`ExecutionPlan`, whose
:meth:`~ExecutionPlan.to_dict` is the ``execution_`` a fitted model saves and the
``execution`` of the command line's reports, and whose :meth:`~ExecutionPlan.compute_options`
is the options object the fit passes down (backend, engine, precision, budget, BLAS threads).
:func:`explain_plan` gives the human-readable lines of either form.

>>> import numpy as np
>>> describe_data(np.zeros((5, 3))).n_features
3
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from skframe.compute.backend import is_cupy_array, is_memory_mapped, serial_blas
from skframe.compute.machine import available_memory
from skframe.compute.memory import format_bytes
from skframe.compute.plan_rules import choose_device, choose_network_threads, fold_jobs, solver_blas_threads
from skframe.contract.collections import is_collection, n_items
from skframe.core.threads import available_cores, map_threads
from skframe.deps import is_dask_collection
from skframe.options import ComputeOptions

__all__ = ["DataShape", "describe_data", "ExecutionPlan", "explain_plan", "FoldThreads", "plan_folds", "NetworkPlan",
           "plan_network"]


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
    kept_dtype : {"float64", "float32"}
        Precision of the kernel block a Newton fit keeps in memory as the left factor of its features
        (:func:`skframe.compute.plan_newton.kept_block_dtype`).
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
    kept_dtype: str = "float64"

    @property
    def streams(self):
        """True when the fit makes chunked passes (streamed or Dask executors)."""
        return self.executor != "in-memory"

    def solver_threads(self, n_columns):
        """BLAS threads of the solver's iterations on ``n_columns`` target columns (one for a few columns, else
        :attr:`blas_threads`): the value a fit hands to the solver as its problem's ``blas_threads``."""
        return solver_blas_threads(n_columns, int(self.blas_threads))

    def compute_options(self, base=None):
        """The :class:`~skframe.options.ComputeOptions` the fit passes down: the plan's decisions.

        Backend, engine of the inner loops, precision, memory budget and BLAS threads (and the
        device chunk rows of a GPU plan); the routines below read them from this one object.
        """
        base = base or ComputeOptions()
        changes = {"backend": self.backend, "memory_budget": int(self.memory_budget), "dtype": self.dtype,
                   "engine": self.engine, "blas_threads": int(self.blas_threads), "kept_dtype": self.kept_dtype}
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


# ----------------------------------------------------------------------------- the threads of a path over folds
@dataclass(frozen=True)
class FoldThreads:
    """The thread plan of a path over cross-validation folds (see :func:`plan_folds`).

    ``jobs`` folds (or groups of rows) run at once on a pool; when there is a pool (``jobs > 1``) each of its
    threads runs its dense algebra on one BLAS thread. m x m algebra (eigen-decompositions, fold systems) always
    runs on one BLAS thread: as fast, and immune to threads waiting for a core another process holds.
    """

    jobs: int

    @property
    def pool_serial(self):
        """True when the folds run on a pool of threads, each with one BLAS thread."""
        return self.jobs > 1

    def map(self, func, items):
        """``[func(item) for item in items]`` on the plan's threads (one BLAS thread each when they are several)."""
        with serial_blas(self.pool_serial):
            return map_threads(func, items, self.jobs)

    def fit_blas(self, options):
        """The BLAS threads of a fit's algebra inside the path: one in a pool's thread or when the fit's plan
        says one (``options.blas_threads == 1``), else as they are."""
        return serial_blas(self.pool_serial or getattr(options, "blas_threads", None) == 1)

    @staticmethod
    def small_blas():
        """m x m algebra: one BLAS thread."""
        return serial_blas(True)


def plan_folds(n_jobs, n_folds, per_fold_bytes):
    """The :class:`FoldThreads` of ``n_folds`` folds holding ``per_fold_bytes`` each, for ``n_jobs``
    (:func:`skframe.compute.plan_rules.fold_jobs` with the memory and the cores available to this process)."""
    return FoldThreads(fold_jobs(n_jobs, n_folds, per_fold_bytes, available_memory()[0], available_cores()))


# ----------------------------------------------------------------------------- a network's device and threads
@dataclass(frozen=True)
class NetworkPlan:
    """Where and on how many threads a network (DSOKR's) trains and predicts (see :func:`plan_network`)."""

    device: str
    n_threads: int | None
    reasons: dict = field(default_factory=dict, hash=False, compare=False)

    def threads(self, n_weights):
        """Threads for a network of ``n_weights`` weights (:func:`~skframe.compute.plan_rules.
        choose_network_threads`): the given count, one for a small network, else None (PyTorch's own)."""
        return choose_network_threads(self.n_threads, n_weights)[0]


def plan_network(device, n_threads, gpu_seen):
    """The :class:`NetworkPlan` of a network for the ``device`` and ``n_threads`` an estimator was given.

    ``gpu_seen`` is a callable asked only when the device depends on it (e.g. ``torch.cuda.is_available``).

    >>> plan_network("auto", None, lambda: False).device
    'cpu'
    """
    name, reason = choose_device(device, gpu_seen)
    return NetworkPlan(name, None if n_threads is None else int(n_threads), {"device": reason})
