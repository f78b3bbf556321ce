"""Imported first by every benchmark script, before NumPy: the runtime settings they are measured with.

``OPENBLAS_THREAD_TIMEOUT=4`` makes idle OpenBLAS threads sleep almost at once instead of
spinning for ~2^28 cycles after each call, so they do not compete with numba's parallel
kernels for the cores. The ``skframe`` command line sets the same default. A value already
in the environment is kept.

``SKFRAME_DATA`` (the data directory of :mod:`skframe.datasets`) is set to the folder
``../shared/data`` beside the repository when that folder exists and the variable is unset,
so the benchmarks find rf1, Bibtex and the molecules there; :func:`load_or_exit` turns a
missing data file into one message and exit status 3.
"""

import os
import sys

os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

_SHARED_DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "..", "shared", "data")
if "SKFRAME_DATA" not in os.environ and os.path.isdir(_SHARED_DATA):
    os.environ["SKFRAME_DATA"] = os.path.normpath(_SHARED_DATA)

#: Exit status of a benchmark whose data files are missing.
EXIT_NO_DATA = 3


def load_or_exit(loader, **kwargs):
    """Call a ``skframe.datasets`` loader; on a missing or corrupt file print why and exit with status 3."""
    from skframe.exceptions import SkframeError

    try:
        return loader(**kwargs)
    except SkframeError as exc:
        print(f"{os.path.basename(sys.argv[0])}: {exc}", file=sys.stderr)
        raise SystemExit(EXIT_NO_DATA) from None


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
