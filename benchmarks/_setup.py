"""Imported first by every benchmark script, before NumPy: the runtime settings they are measured with.

``OPENBLAS_THREAD_TIMEOUT=4`` makes idle OpenBLAS threads sleep almost at once instead of
spinning for ~2^28 cycles after each call, so they do not compete with numba's parallel
kernels for the cores. The ``skframe`` command line sets the same default. A value already
in the environment is kept.
"""

import os

os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
