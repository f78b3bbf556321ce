"""Array backends: which array namespace holds the data, and moving arrays between host and device.

skframe computes on NumPy arrays by default. :func:`get_array_module` returns ``numpy`` or
``cupy`` for an array (CuPy is recognised by the module of the array's type, so it is never
imported for NumPy data); :func:`to_numpy` and :func:`to_backend` move arrays between host
and device; :func:`resolve_backend` turns a backend name (``ComputeOptions.backend``) into its
namespace, raising :class:`~skframe.exceptions.DependencyError` when it cannot be used.
:func:`serial_blas` runs a block on one BLAS thread.

Which engine runs a numerical routine's inner loops (plain NumPy, the compiled numba sibling
or CuPy) is chosen by :mod:`skframe.core.engine`, below this room, since the mathematics of
:mod:`skframe.core` and of the plugins asks for it.

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
import importlib
import mmap
import sys

import numpy as np

from skframe.deps import require
from skframe.exceptions import DependencyError, InvalidParameterError

__all__ = [
    "BACKENDS",
    "get_array_module",
    "is_cupy_array",
    "to_numpy",
    "to_backend",
    "resolve_backend",
    "serial_blas",
    "is_memory_mapped",
    "device_solve_psd",
]

#: backend names accepted by ``ComputeOptions.backend``
BACKENDS = ("numpy", "cupy")

_GPU_CHECKED = {}


def _type_root(x):
    return type(x).__module__.split(".", 1)[0]


def is_cupy_array(x):
    """True when ``x`` is a CuPy array or a ``cupyx.scipy.sparse`` matrix (CuPy is not imported to tell)."""
    return _type_root(x) in ("cupy", "cupyx")


def get_array_module(x):
    """The array namespace of ``x``: ``cupy`` for CuPy arrays, else ``numpy``.

    An array of another namespace that declares it (``x.__array_namespace__()``, the array API
    standard's protocol) gets that namespace: code written against a namespace runs on it.

    Parameters
    ----------
    x : array-like
        NumPy array, SciPy sparse matrix, CuPy array, or anything NumPy accepts.

    Returns
    -------
    module
        ``numpy``, ``cupy`` or the namespace ``x`` declares.
    """
    if is_cupy_array(x):
        return sys.modules.get("cupy") or require("cupy", "a CuPy array")
    declared = None if isinstance(x, np.ndarray) else getattr(x, "__array_namespace__", None)
    if declared is not None:
        try:
            xp = declared()
        except Exception:  # a half-implemented protocol: treated as host data
            xp = None
        if xp is not None and xp is not np and getattr(xp, "__name__", "") != "numpy":
            return xp
    return np


def to_numpy(x):
    """``x`` as a host array: CuPy arrays are copied to the host, SciPy sparse matrices are kept.

    Arrays of another declared namespace are copied by its ``asnumpy`` (CuPy's name for it).

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
    xp = get_array_module(x)
    if xp is not np and hasattr(xp, "asnumpy"):
        return xp.asnumpy(x)
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
            # lazy: optional (it comes with scikit-learn); read when a solver first limits BLAS threads
            from threadpoolctl import ThreadpoolController
        except ImportError:  # pragma: no cover
            _CONTROLLER.append(None)
        else:
            _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0]


def is_memory_mapped(X):
    """True when ``X`` is (a view of) a memory-mapped array, e.g. ``np.load(path, mmap_mode="r")``."""
    seen = 0
    while X is not None and seen < 16:
        if isinstance(X, (np.memmap, mmap.mmap)):
            return True
        X, seen = getattr(X, "base", None), seen + 1
    return False


def device_solve_psd(xp, A, B, rtol):
    """``A^{-1} B`` for a symmetric positive semi-definite ``A`` on a device, as
    :func:`skframe.core.linalg.solve_psd` does on the host: a Cholesky factorisation decides whether ``A`` is
    positive definite (then a dense solve), else the truncated eigendecomposition gives the minimum-norm
    solution (eigenvalues ``<= rtol * max`` dropped). A plain LU solve of a system that rounding made
    indefinite (a tiny λ on streamed sums) returns huge weights: the GPU test error of one such fit rose
    a thousandfold.
    """
    try:
        with _linalg_errors_raise(xp):
            L = xp.linalg.cholesky(A)
        definite = bool(xp.isfinite(L).all()) and bool((xp.diagonal(L) > 0).all())
    except (np.linalg.LinAlgError, ValueError, ArithmeticError):
        definite = False
    if definite:
        return xp.linalg.solve(A, B)
    w, V = xp.linalg.eigh(A)
    keep = w > rtol * w.max()
    Vk = V[:, keep]
    return Vk @ ((Vk.T @ B) / w[keep][:, None])


def _linalg_errors_raise(xp):
    """CuPy reports a failed factorisation only inside ``cupyx.errstate(linalg="raise")``; NumPy always raises."""
    if getattr(xp, "__name__", "") != "cupy":
        return contextlib.nullcontext()
    try:
        import cupyx  # lazy: CuPy is optional (the gpu extra)

        return cupyx.errstate(linalg="raise")
    except (ImportError, AttributeError, TypeError):
        return contextlib.nullcontext()
