import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture(params=["numba", "numpy"])
def engine(request, monkeypatch):
    """Run a test with the compiled engine and again with the plain NumPy one (SKFRAME_DISABLE_NUMBA=1).

    The compiled run sets ``SKFRAME_NUMBA_MIN_WORK=0``: the small test problems would otherwise
    run on the plain NumPy engine (see :func:`skframe.core.engine.select_engine`).
    """
    if request.param == "numpy":
        monkeypatch.setenv("SKFRAME_DISABLE_NUMBA", "1")
    else:
        monkeypatch.delenv("SKFRAME_DISABLE_NUMBA", raising=False)
        monkeypatch.setenv("SKFRAME_NUMBA_MIN_WORK", "0")
    return request.param


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs CuPy and an NVIDIA GPU (skipped without one; "
                                       "benchmarks/gpu_check.sh runs them)")
    config.addinivalue_line("markers", "blas_free: checks no figure that BLAS rounding moves (a plan, an import, "
                                       "exact quantiles, a plot): .ci/run does not run it again under each OpenBLAS "
                                       "kernel family (-m 'not blas_free')")
