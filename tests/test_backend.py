"""skframe.backend: array namespaces, host/device moves, backend resolution and engine selection."""

import sys
import types

import numpy as np
import pytest
import scipy.sparse as sp

from skframe import backend
from skframe.exceptions import DependencyError, InvalidParameterError
from skframe.options import ComputeOptions


def test_numpy_namespace_and_moves():
    x = np.arange(4.0)
    assert backend.get_array_module(x) is np and not backend.is_cupy_array(x)
    assert backend.to_numpy([1, 2]).tolist() == [1, 2]
    S = sp.csr_matrix(np.eye(3))
    assert backend.to_numpy(S) is S
    assert backend.to_backend(x, "numpy") is x or np.array_equal(backend.to_backend(x, "numpy"), x)
    assert backend.resolve_backend(None) is np and backend.resolve_backend("NumPy") is np


def test_unknown_backend_names_the_choices():
    with pytest.raises(InvalidParameterError, match="numpy, cupy"):
        backend.resolve_backend("jax")


def test_cupy_missing_or_disabled_raises_dependency_error(monkeypatch):
    monkeypatch.setenv("SKFRAME_DISABLE_CUPY", "1")
    with pytest.raises(DependencyError, match="backend='cupy'"):
        backend.resolve_backend("cupy")


def _fake_cupy(n_devices):
    cupy = types.ModuleType("cupy")
    cupy.cuda = types.SimpleNamespace(runtime=types.SimpleNamespace(getDeviceCount=lambda: n_devices))
    cupy.asarray = lambda x: ("on-device", np.asarray(x))
    return cupy


def test_cupy_without_gpu_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(backend, "require", lambda name, feature=None: _fake_cupy(0))
    monkeypatch.setattr(backend, "_GPU_CHECKED", {})
    with pytest.raises(DependencyError, match="no GPU is visible"):
        backend.resolve_backend("cupy")


def test_cupy_with_a_gpu_resolves(monkeypatch):
    fake = _fake_cupy(1)
    monkeypatch.setattr(backend, "require", lambda name, feature=None: fake)
    monkeypatch.setattr(backend, "_GPU_CHECKED", {})
    assert backend.resolve_backend("cupy") is fake
    assert backend.to_backend(np.ones(2), "cupy")[0] == "on-device"


def test_cupy_arrays_are_recognised_by_their_type_module(monkeypatch):
    Fake = type("ndarray", (), {"__module__": "cupy._core.core", "get": lambda self: np.zeros(2)})
    fake = _fake_cupy(1)
    monkeypatch.setitem(sys.modules, "cupy", fake)
    x = Fake()
    assert backend.is_cupy_array(x)
    assert backend.get_array_module(x) is fake
    assert backend.to_numpy(x).tolist() == [0.0, 0.0]


def test_engine_selection(monkeypatch):
    monkeypatch.delenv("SKFRAME_DISABLE_NUMBA", raising=False)
    assert backend.select_engine() == ("numba" if backend.numba_enabled() else "numpy")
    assert backend.select_engine(ComputeOptions(backend="cupy")) == "cupy"
    assert backend.engine_module("skframe.sketching", engine="numpy") is None
    assert backend.engine_module("skframe.sketching", engine="cupy") is None  # no GPU engine written yet
    with pytest.raises(InvalidParameterError, match="engine"):
        backend.engine_module("skframe.sketching", engine="fortran")
    if backend.numba_enabled():
        assert backend.engine_module("skframe.sketching").__name__ == "skframe._sketching_numba"
    monkeypatch.setenv("SKFRAME_DISABLE_NUMBA", "1")
    assert backend.select_engine() == "numpy"
    assert backend.engine_module("skframe.sketching") is None
