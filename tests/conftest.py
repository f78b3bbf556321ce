import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture(params=["numba", "numpy"])
def engine(request, monkeypatch):
    """Run a test with the compiled engine and again with the plain NumPy one (SKFRAME_DISABLE_NUMBA=1)."""
    if request.param == "numpy":
        monkeypatch.setenv("SKFRAME_DISABLE_NUMBA", "1")
    else:
        monkeypatch.delenv("SKFRAME_DISABLE_NUMBA", raising=False)
    return request.param
