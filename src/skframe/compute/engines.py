"""Which block engine a fit's chunks run on: the CPU's or the GPU's.

The block engine (:mod:`skframe.core.block_engine`) turns one chunk of rows into ``k(X_rows, X_sub) · S_mix^T``
and its sums. :class:`~skframe.core.block_engine.BlockEngine` runs on the CPU (its loops NumPy or numba, the
execution plan's); :mod:`skframe.compute._engine_cupy` provides the same methods on a GPU. :func:`get_engine`
reads ``options.backend`` (the plan's) and returns the engine, the only place where the backend is looked at.
"""

from __future__ import annotations

from skframe.compute._engine_cupy import cupy_engine
from skframe.core.block_engine import BlockEngine
from skframe.core.sketching import diagonal_of_mix
from skframe.exceptions import InvalidParameterError
from skframe.options import DEFAULT_OPTIONS

__all__ = ["BlockEngine", "NumpyEngine", "get_engine"]

#: the CPU block engine under its former name (``NumpyEngine(loops)``)
NumpyEngine = BlockEngine


def _mix_diagonal(mix):
    return diagonal_of_mix(mix)


_NUMPY = BlockEngine()


def get_engine(options=None):
    """The block engine of ``options.backend``: the CPU's (with the loops of ``options.engine``), or CuPy's
    (imported only then)."""
    options = options or DEFAULT_OPTIONS
    backend = str(getattr(options, "backend", "numpy") or "numpy").lower()
    if backend == "numpy":
        loops = getattr(options, "engine", None)
        return _NUMPY if loops is None else BlockEngine(loops)
    if backend == "cupy":
        return cupy_engine()  # one per process: its compiled kernels are reused by every fit
    raise InvalidParameterError(f"backend={backend!r} is not known; use 'numpy' or 'cupy'")
