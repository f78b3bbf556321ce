"""Every k(X, .) W of a prediction and R K R^T of a streamed fit through the block engine, against NumPy formulas."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics.pairwise import rbf_kernel

from skframe.compute.streaming import sketch_gram
from skframe.contract.protocols import Kernel
from skframe.core import block_engine
from skframe.core.block_engine import BlockEngine, engine_matvec, own_matvec
from skframe.core.feature_map import kernel_times
from skframe.deps import numba_enabled
from skframe.options import ComputeOptions
from skframe_kernels.kernels import GaussianKernel
from skframe_sketches.sketches import GaussianSketch, PSparsifiedSketch, SubSampleSketch

LOOPS = ["numpy"] + (["numba"] if numba_enabled() else [])
G = 0.4


class Plain(Kernel):
    """A kernel written to the protocol only: ``__call__``, no ``matvec`` of its own."""

    def __call__(self, X, Y=None):
        return rbf_kernel(X, X if Y is None else Y, gamma=G)


class Fused(Plain):
    """A plugin kernel offering its own product (an override the engine must ask)."""

    calls = 0

    def matvec(self, X, Y, W, options=None):
        Fused.calls += 1
        return self(X, Y) @ W


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    return rng.normal(size=(41, 5)), rng.normal(size=(13, 5)), rng.normal(size=(13, 3))


@pytest.mark.parametrize("loops", LOOPS)
@pytest.mark.parametrize("chunk_rows", [None, 1, 6])
@pytest.mark.parametrize("sparse_rows", [False, True])
def test_engine_matvec_equals_the_block_times_w(data, loops, chunk_rows, sparse_rows):
    X, Y, W = data
    ref = rbf_kernel(X, Y, gamma=G) @ W
    Xin = sp.csr_matrix(X) if sparse_rows else X
    opts = ComputeOptions(engine=loops, chunk_rows=chunk_rows)
    for kernel in (GaussianKernel(G), Plain()):
        np.testing.assert_allclose(engine_matvec(kernel, Xin, Y, W, opts), ref, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(engine_matvec(kernel, Xin, Y, W[:, 0], opts), ref[:, 0], rtol=1e-12, atol=1e-12)
    out32 = engine_matvec(GaussianKernel(G), X, Y, W.astype(np.float32), opts.replace(dtype="float32"))
    assert out32.dtype == np.float32
    np.testing.assert_allclose(out32, ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())


def test_the_engine_takes_the_plans_chunks(data, monkeypatch):
    X, Y, W = data
    seen = []
    real = block_engine.native_block

    def spy(kernel, A, B, dtype, loops=None):
        seen.append((A.shape[0], loops))
        return real(kernel, A, B, dtype, loops)

    monkeypatch.setattr(block_engine, "native_block", spy)
    out = kernel_times(GaussianKernel(G), X, Y, W, options=ComputeOptions(engine="numpy", chunk_rows=10))
    assert [r for r, _ in seen] == [10, 10, 10, 10, 1] and {lo for _, lo in seen} == {"numpy"}
    np.testing.assert_allclose(out, rbf_kernel(X, Y, gamma=G) @ W, rtol=1e-12)


def test_only_a_plugins_own_matvec_is_an_override(data):
    X, Y, W = data
    assert own_matvec(GaussianKernel(G)) is None  # the built-in kernels' matvec is the engine's product
    assert own_matvec(Plain()) is None  # the protocol's default
    assert own_matvec(lambda A, B: A @ B.T) is None  # a bare callable
    k = Fused()
    assert own_matvec(k) is not None
    Fused.calls = 0
    np.testing.assert_allclose(kernel_times(k, X, Y, W), rbf_kernel(X, Y, gamma=G) @ W, rtol=1e-12)
    assert Fused.calls == 1


def test_the_builtin_matvec_is_the_engine(data):
    X, Y, W = data
    opts = ComputeOptions(chunk_rows=7)
    np.testing.assert_array_equal(GaussianKernel(G).matvec(X, Y, W, opts), engine_matvec(GaussianKernel(G), X, Y, W,
                                                                                         opts))


SKETCHES = {"psr": PSparsifiedSketch(7, p=0.3), "gaussian": GaussianSketch(6), "subsample": SubSampleSketch(8)}


@pytest.mark.parametrize("loops", LOOPS + [None])
@pytest.mark.parametrize("name", sorted(SKETCHES))
@pytest.mark.parametrize("chunk_rows", [None, 3])
def test_sketch_gram_equals_s_k_s_transposed(loops, name, chunk_rows):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 4))
    R = SKETCHES[name].draw(60, np.random.default_rng(2))
    X_sub = X[R.indices]
    mix = R.mix.toarray() if sp.issparse(R.mix) else np.asarray(R.mix)
    ref = mix @ rbf_kernel(X_sub, gamma=G) @ mix.T
    got = BlockEngine(loops).sketch_gram(GaussianKernel(G), X_sub, R.mix, chunk_rows=chunk_rows)
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(got, got.T)
    np.testing.assert_array_equal(sketch_gram(GaussianKernel(G), X_sub, R.mix, chunk_rows=chunk_rows, engine=loops),
                                  got)
