"""The block engine: one chunk's k(X_rows, X_sub) S_mix^T on every loops and namespace, against the plain formula."""

import numpy as np
import pytest
import scipy.sparse as sp

from skframe.compute._engine_cupy import ArrayEngine
from skframe.compute.engines import NumpyEngine, get_engine
from skframe.contract.registry import get_kernel
from skframe.core.block_engine import BlockEngine
from skframe.core.sketch_matrix import diagonal_of_mix
from skframe.deps import numba_enabled
from skframe.options import ComputeOptions
from skframe_sketches.sketches import GaussianSketch, PSparsifiedSketch, SubSampleSketch
from tests.naive import RBF

LOOPS = ["numpy"] + (["numba"] if numba_enabled() else [])
SKETCHES = {"psr": PSparsifiedSketch(7, p=0.2), "gaussian": GaussianSketch(6), "subsample": SubSampleSketch(8)}


def _case(name):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(90, 4))
    R = SKETCHES[name].draw(90, np.random.default_rng(4))
    return X, R


def _naive(X, R, gamma=0.4):
    K = RBF(gamma)(X[:23], X[R.indices])
    mix = R.mix.toarray() if sp.issparse(R.mix) else np.asarray(R.mix)
    return K @ mix.T


@pytest.mark.parametrize("loops", LOOPS)
@pytest.mark.parametrize("name", sorted(SKETCHES))
@pytest.mark.parametrize("kernel", ["builtin", "plain"])
def test_kernel_times_mix_is_the_plain_formula(loops, name, kernel):
    X, R = _case(name)
    k = get_kernel("gaussian", gamma=0.4) if kernel == "builtin" else RBF(0.4)
    got = BlockEngine(loops).kernel_times_mix(k, X[:23], X[R.indices], R.mix, diagonal_of_mix(R.mix), np.dtype("f8"))
    np.testing.assert_allclose(got, _naive(X, R), rtol=1e-12, atol=1e-14)
    out = np.empty((23, R.m))
    assert BlockEngine(loops).kernel_times_mix(k, X[:23], X[R.indices], R.mix, diagonal_of_mix(R.mix),
                                            np.dtype("f8"), out) is out
    np.testing.assert_allclose(out, got, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", sorted(SKETCHES))
def test_array_engine_has_the_same_kernel_times_mix(name):
    """The GPU engine's code, run on NumPy: the same product as the CPU engine."""
    X, R = _case(name)
    k = get_kernel("gaussian", gamma=0.4)
    got = ArrayEngine(np).kernel_times_mix(k, X[:23], X[R.indices], R.mix, diagonal_of_mix(R.mix), np.float64)
    np.testing.assert_allclose(got, _naive(X, R), rtol=1e-12, atol=1e-14)


def test_streamed_chunks_use_the_block_engine():
    """``get_engine`` reads the plan's backend and loops; the former name stays the same class."""
    assert NumpyEngine is BlockEngine
    engine = get_engine(ComputeOptions(engine="numpy"))
    assert isinstance(engine, BlockEngine) and engine.loops == "numpy"
    X, R = _case("psr")
    k = get_kernel("gaussian", gamma=0.4)
    B = engine.times_mix(engine.block(k, X[:23], X[R.indices], np.float64), engine.prepare_mix(R.mix, np.float64))
    np.testing.assert_allclose(B, _naive(X, R), rtol=1e-12, atol=1e-14)
