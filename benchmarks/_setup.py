"""Imported first by every benchmark script, before NumPy: the runtime settings they are measured with.

``OPENBLAS_THREAD_TIMEOUT=4`` makes idle OpenBLAS threads sleep almost at once instead of
spinning for ~2^28 cycles after each call, so they do not compete with numba's parallel
kernels for the cores. The ``skframe`` command line sets the same default. A value already
in the environment is kept.
"""

import os

os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")


def versions():
    """Interpreter, library versions and machine of the run (for the JSON reports)."""
    import platform

    import numba
    import numpy
    import scipy
    import sklearn

    return {
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "numba": numba.__version__,
        "sklearn": sklearn.__version__,
        "cpu_count": os.cpu_count(),
        "machine": platform.machine(),
    }
