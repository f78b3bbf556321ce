"""Array backends and compute engines, chosen in one place.

skframe computes on NumPy arrays by default. Two questions are answered here and
nowhere else:

* **Which array namespace holds the data?** :func:`get_array_module` returns
  ``numpy`` or ``cupy`` for an array (CuPy is recognised by the module of the
  array's type, so it is never imported for NumPy data); :func:`to_numpy` and
  :func:`to_backend` move arrays between host and device; :func:`resolve_backend`
  turns a backend name (``ComputeOptions.backend``) into its namespace, raising
  :class:`~skframe.exceptions.DependencyError` when it cannot be used.
* **Which engine runs the inner loops?** :func:`select_engine` returns
  ``"cupy"`` for the CuPy backend; ``"numba"`` when numba is installed, not
  disabled (``SKFRAME_DISABLE_NUMBA=1``) and the problem is large enough to pay
  for numba's start in a fresh process (:data:`NUMBA_MIN_WORK` kernel entries,
  declared by fits and predictions through :func:`engine_work`); else ``"numpy"``
  (the plain formulas, which the fast engines are tested against). A small fit
  therefore never imports numba. :func:`engine_module` imports the private
  sibling module that implements an engine.

How an engine plugs in
----------------------
A numerical module ``skframe/<name>.py`` keeps its plain NumPy formulas and puts
each accelerated version of a function in a private sibling module named after
the engine: ``skframe/_<name>_numba.py``, ``skframe/_<name>_cupy.py``. Each
sibling defines the same function names with the same signatures. The module
asks :func:`engine_module` for the sibling of the selected engine and calls its
function, or falls back to its own formula when the engine is ``"numpy"`` or
the sibling lacks the function::

    from skframe.compute.backend import engine_module

    def times_mixT(block, mix, out, options=None):
        fast = engine_module("skframe.core.sketching", options)
        if fast is not None and hasattr(fast, "dense_times_csr_t"):
            return fast.dense_times_csr_t(block, mix, out)
        ...  # plain NumPy / SciPy formula

The sibling modules are imported lazily, so ``import skframe`` never imports
numba or CuPy.

Examples
--------
>>> import numpy as np
>>> from skframe.compute.backend import get_array_module, to_numpy
>>> get_array_module(np.zeros(3)) is np
True
>>> to_numpy([1.0, 2.0]).tolist()
[1.0, 2.0]
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import importlib
import os
import sys

import numpy as np

from skframe.deps import numba_enabled, require
from skframe.exceptions import DependencyError, InvalidParameterError

__all__ = [
    "BACKENDS",
    "ENGINES",
    "get_array_module",
    "is_cupy_array",
    "to_numpy",
    "to_backend",
    "resolve_backend",
    "select_engine",
    "engine_module",
    "engine_work",
    "declares_work",
    "lazy_module",
    "serial_blas",
    "NUMBA_MIN_WORK",
]

#: backend names accepted by ``ComputeOptions.backend``
BACKENDS = ("numpy", "cupy")

#: engine names returned by :func:`select_engine`
ENGINES = ("numpy", "numba", "cupy")

_GPU_CHECKED = {}
_ENGINE_MODULES = {}  # (module, engine) -> imported engine module or None


def _type_root(x):
    return type(x).__module__.split(".", 1)[0]


def is_cupy_array(x):
    """True when ``x`` is a CuPy array or a ``cupyx.scipy.sparse`` matrix (CuPy is not imported to tell)."""
    return _type_root(x) in ("cupy", "cupyx")


def get_array_module(x):
    """The array namespace of ``x``: ``cupy`` for CuPy arrays, else ``numpy``.

    Parameters
    ----------
    x : array-like
        NumPy array, SciPy sparse matrix, CuPy array, or anything NumPy accepts.

    Returns
    -------
    module
        ``numpy`` or ``cupy``.
    """
    if is_cupy_array(x):
        return sys.modules.get("cupy") or require("cupy", "a CuPy array")
    return np


def to_numpy(x):
    """``x`` as a host array: CuPy arrays are copied to the host, SciPy sparse matrices are kept.

    Parameters
    ----------
    x : array-like, CuPy array or sparse matrix

    Returns
    -------
    ndarray or scipy.sparse matrix
    """
    if is_cupy_array(x):
        return x.get()
    if hasattr(x, "tocsr") and hasattr(x, "nnz"):  # scipy.sparse: stays sparse on the host
        return x
    return np.asarray(x)


def to_backend(x, name="numpy"):
    """``x`` moved to the backend ``name`` (``"numpy"`` or ``"cupy"``).

    Sparse inputs become ``cupyx.scipy.sparse`` CSR matrices on the CuPy backend.

    Raises
    ------
    skframe.exceptions.DependencyError
        When the backend cannot be used (see :func:`resolve_backend`).
    """
    xp = resolve_backend(name)
    if xp is np:
        return to_numpy(x)
    if is_cupy_array(x):
        return x
    if hasattr(x, "tocsr") and hasattr(x, "nnz"):
        sparse = importlib.import_module("cupyx.scipy.sparse")
        return sparse.csr_matrix(x.tocsr())
    return xp.asarray(x)


def _check_gpu(cupy):
    if "cupy" not in _GPU_CHECKED:
        try:
            count = int(cupy.cuda.runtime.getDeviceCount())
            reason = None if count > 0 else "no GPU is visible"
        except Exception as exc:  # CUDA driver or runtime missing
            reason = f"the CUDA runtime cannot be used ({exc})"
        _GPU_CHECKED["cupy"] = reason
    reason = _GPU_CHECKED["cupy"]
    if reason:
        raise DependencyError(
            f"backend='cupy' needs a GPU but {reason}; check CUDA_VISIBLE_DEVICES and the driver, "
            "or use backend='numpy'"
        )


def resolve_backend(name="numpy"):
    """The array namespace for the backend ``name``.

    Parameters
    ----------
    name : {"numpy", "cupy"} or None
        None means ``"numpy"``.

    Returns
    -------
    module
        ``numpy`` or ``cupy``.

    Raises
    ------
    skframe.exceptions.InvalidParameterError
        For an unknown name.
    skframe.exceptions.DependencyError
        When CuPy is not installed (naming the ``skframe[gpu]`` extra), is disabled by
        ``SKFRAME_DISABLE_CUPY``, or is installed but no GPU is visible.
    """
    name = "numpy" if name is None else str(name).lower()
    if name == "numpy":
        return np
    if name == "cupy":
        cupy = require("cupy", "backend='cupy'")
        _check_gpu(cupy)
        return cupy
    raise InvalidParameterError(f"backend={name!r} is not known; choose one of {', '.join(BACKENDS)}")


#: Kernel entries (rows x columns of the kernel blocks) of one fit or prediction below which
#: the plain NumPy engine runs it even when numba is installed. A fresh process pays 0.7-1 s
#: to import numba and load its cached compiled functions (measured on 2 cores); on Gaussian
#: p-SR fits the warm NumPy and numba times are equal at about 4e7 entries and numba is faster
#: above (1.6e8 entries: 3.9 s vs 5.3 s), so below this size numba cannot pay for its start
#: (see ``benchmarks/bench_cli_startup.py --sweep``). ``SKFRAME_NUMBA_MIN_WORK`` overrides it
#: (0: numba always).
NUMBA_MIN_WORK = 40_000_000

_WORK = contextvars.ContextVar("skframe_engine_work", default=None)


def numba_min_work():
    """:data:`NUMBA_MIN_WORK`, or the integer in ``SKFRAME_NUMBA_MIN_WORK`` when set."""
    value = os.environ.get("SKFRAME_NUMBA_MIN_WORK", "").strip()
    if value:
        try:
            return max(0, int(float(value)))
        except ValueError:
            raise InvalidParameterError(
                f"SKFRAME_NUMBA_MIN_WORK={value!r} is not a number; give a count of kernel entries, e.g. 4e7"
            ) from None
    return NUMBA_MIN_WORK


@contextlib.contextmanager
def engine_work(work):
    """Declare the size of the computation inside the ``with`` block (kernel entries).

    :func:`select_engine` then picks the plain NumPy engine when ``work`` is below
    :func:`numba_min_work`. A fit declares ``n x s'`` (its kernel columns against all rows),
    a prediction ``n_rows x s'``; nested blocks override the outer one.

    Examples
    --------
    >>> from skframe.compute.backend import engine_work, select_engine
    >>> with engine_work(100):
    ...     select_engine()
    'numpy'
    """
    token = _WORK.set(None if work is None else int(work))
    try:
        yield
    finally:
        _WORK.reset(token)


def declares_work(size_of):
    """Decorator: run the function inside :func:`engine_work` of ``size_of(*args, **kwargs)``."""

    def decorate(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with engine_work(size_of(*args, **kwargs)):
                return func(*args, **kwargs)

        return wrapper

    return decorate


def select_engine(options=None, work=None):
    """The engine that runs the inner loops for ``options`` (a ComputeOptions or None).

    ``"cupy"`` when ``options.backend == "cupy"``; otherwise ``"numba"`` when numba is
    installed and not disabled by ``SKFRAME_DISABLE_NUMBA=1`` and the computation is
    large enough for compiled code to pay for its start in a fresh process, else ``"numpy"``.

    Parameters
    ----------
    options : ComputeOptions, optional
    work : int, optional
        Kernel entries of the computation; default: the one declared by the innermost
        :func:`engine_work` block, and when none is declared the size is taken as large.
        Below :func:`numba_min_work` the plain NumPy engine is chosen: the choice depends
        on the problem size only, never on what the process ran before, so a model fitted
        or loaded in any process computes the same numbers.
    """
    backend = getattr(options, "backend", "numpy") or "numpy"
    if str(backend).lower() == "cupy":
        return "cupy"
    if not numba_enabled():
        return "numpy"
    work = _WORK.get() if work is None else work
    if work is not None and work < numba_min_work():
        return "numpy"
    return "numba"


class _LazyModule:
    """A module imported at its first attribute access (see :func:`lazy_module`)."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return getattr(importlib.import_module(self._name), attr)

    def __repr__(self):
        return f"<lazy module {self._name!r}>"


def lazy_module(name):
    """A stand-in for the module ``name`` that imports it at the first attribute access.

    Plugins keep their compiled (numba) siblings behind one, so that discovering the plugins
    never imports numba.
    """
    return _LazyModule(name)


def engine_module(module, options=None, engine=None):
    """The private engine sibling of ``module`` for the selected engine, or None for plain NumPy.

    Parameters
    ----------
    module : str
        Dotted name of the numerical module, e.g. ``"skframe.core.sketching"``; the numba
        engine of it is ``"skframe.core._sketching_numba"``.
    options : ComputeOptions, optional
        Decides the engine through :func:`select_engine`.
    engine : str, optional
        Force an engine (``"numpy"``, ``"numba"`` or ``"cupy"``), e.g. in tests.

    Returns
    -------
    module or None
        None when the engine is ``"numpy"`` or when no sibling exists for a GPU
        engine (the caller then runs its plain formula, on CuPy arrays for the
        CuPy backend).
    """
    engine = engine or select_engine(options)
    key = (module, engine)
    if key in _ENGINE_MODULES:
        return _ENGINE_MODULES[key]
    if engine not in ENGINES:
        raise InvalidParameterError(f"engine={engine!r} is not known; choose one of {', '.join(ENGINES)}")
    found = None
    if engine != "numpy":
        package, _, stem = module.rpartition(".")
        name = f"{package}._{stem}_{engine}" if package else f"_{stem}_{engine}"
        if engine == "numba":
            require("numba", f"the compiled engine of {module}")
        try:
            found = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
    _ENGINE_MODULES[key] = found
    return found


@contextlib.contextmanager
def serial_blas(enabled=True):
    """Run the block with one BLAS thread (threadpoolctl, a scikit-learn dependency).

    Iterative solvers multiply the features by one or a few vectors per iteration: such
    products gain nothing from BLAS threads, and threaded BLAS waiting for a core that
    another process holds slowed a 180-iteration ADMM solve from 0.65 s to 5 s on a
    2-core machine. Large products outside the loop (``Z^T Z``) keep their threads.
    """
    if not enabled:
        yield
        return
    controller = _blas_controller()
    if controller is None:  # pragma: no cover - scikit-learn requires threadpoolctl
        yield
        return
    with controller.limit(limits=1, user_api="blas"):
        yield


_CONTROLLER = []


def _blas_controller():
    """threadpoolctl's controller of the loaded BLAS libraries, built once per process.

    Building one scans the process's shared libraries (about 15 ms); NumPy's BLAS, the one
    the solvers use, is loaded with NumPy, before any solver runs.
    """
    if not _CONTROLLER:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:  # pragma: no cover
            _CONTROLLER.append(None)
        else:
            _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0]
