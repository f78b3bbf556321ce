"""Memory budget: chunk sizes follow the budget, impossible budgets are refused before allocating."""

import numpy as np
import pytest

from skframe.compute.memory import check_allocation, format_bytes, kept_features_rows, plan_stream
from skframe.compute.stream_problems import make_feature_problem
from skframe.compute.streaming import fit_sketched_ridge
from skframe.core.sketching import SketchMatrix
from skframe.exceptions import InvalidParameterError, MemoryBudgetError
from skframe.options import ComputeOptions, parse_bytes


def test_chunks_grow_with_the_budget_and_stay_within_it():
    small = plan_stream(10**6, 1000, 1000, 10, 1, ComputeOptions(memory_budget="100MB"))
    large = plan_stream(10**6, 1000, 1000, 10, 1, ComputeOptions(memory_budget="2GB"))
    assert small.chunk_rows < large.chunk_rows
    assert small.peak_bytes <= 100e6 and large.peak_bytes <= 0.5e9  # blocks stay near block_bytes
    f32 = plan_stream(10**6, 1000, 1000, 10, 1, ComputeOptions(memory_budget="100MB", dtype="float32"))
    assert f32.chunk_rows > small.chunk_rows


def test_forced_chunk_rows_and_no_budget():
    assert plan_stream(1000, 10, 10, 2, 1, ComputeOptions(chunk_rows=17)).chunk_rows == 17
    assert plan_stream(50, 10, 10, 2, 1, ComputeOptions()).chunk_rows == 50


def test_impossible_budget_is_refused_with_size_and_fix():
    with pytest.raises(MemoryBudgetError) as info:
        plan_stream(10**6, 5000, 5000, 10, 1, ComputeOptions(memory_budget="100MB"))
    msg = str(info.value)
    assert "memory_budget" in msg and "sketch_size" in msg and "MB" in msg
    assert isinstance(info.value, InvalidParameterError)


def test_refusal_happens_before_any_allocation(monkeypatch):
    """A fit that cannot fit raises before the first kernel block or accumulator is allocated."""
    import skframe.compute.streaming as st

    def forbidden(*args, **kwargs):
        raise AssertionError("allocated before refusing")

    monkeypatch.setattr(st, "accumulate", forbidden)
    monkeypatch.setattr(st, "gather_rows", forbidden)
    m = 4000
    R = SketchMatrix(n=10**5, indices=np.arange(m), mix=np.eye(m))
    X = np.zeros((10, 3))  # never read
    with pytest.raises(MemoryBudgetError, match="needs"):
        fit_sketched_ridge(None, X, np.zeros(10), R, 1e-3, options=ComputeOptions(memory_budget="64MB"))


def test_feature_matrix_refused_or_streamed():
    def kept(n, r, budget, dtype="float64"):  # the rule of the plan and of the fit that forms the features
        options = ComputeOptions(memory_budget=budget, dtype=dtype)
        stream = plan_stream(n, r, r, 3, 1, options)
        return kept_features_rows(n, r, 4 if dtype == "float32" else 8, int(parse_bytes(budget)), stream) is not None

    assert not kept(10**6, 1000, "1GB")  # 8 GB of features: streamed
    assert kept(10**3, 10, "1GB")
    assert not kept(4 * 10**5, 1000, "2GB") and kept(4 * 10**5, 1000, "2GB", dtype="float32")
    with pytest.raises(MemoryBudgetError, match="feature matrix"):
        check_allocation(8 * 10**9, "the feature matrix", ComputeOptions(memory_budget="1GB"))
    assert check_allocation(10, "x", ComputeOptions()) == 10


def test_make_feature_problem_refuses_tiny_budget():
    from skframe.contract.registry import get_kernel

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(100, 2)), rng.normal(size=100)
    with pytest.raises(MemoryBudgetError):
        make_feature_problem(get_kernel("gaussian"), X, y, X[:50], np.eye(50), ComputeOptions(memory_budget="1kB"))


def test_bad_budget_strings():
    with pytest.raises(InvalidParameterError, match="2GB"):
        plan_stream(10, 2, 2, 1, 1, ComputeOptions(memory_budget="lots"))
    assert format_bytes(2e9) == "2 GB" and format_bytes(12) == "12 B"


def test_large_arrays_get_their_own_memory_map(monkeypatch):
    """From MAPPED_BYTES on, ``empty_mapped`` puts the array on an anonymous memory map (writable, any dtype and
    shape, the map kept alive by the array); below, NumPy's own allocation."""
    import mmap

    from skframe.compute import memory

    monkeypatch.setattr(memory, "MAPPED_BYTES", 1 << 16)
    small = memory.empty_mapped((10, 10), np.float64)
    assert isinstance(small, np.ndarray) and not isinstance(small.base, memoryview)
    big = memory.empty_mapped((300, 70), np.float32)
    base = big
    while getattr(base, "base", None) is not None and not isinstance(base, mmap.mmap):
        base = base.base
    assert isinstance(base, mmap.mmap) or isinstance(getattr(base, "obj", None), mmap.mmap)
    assert big.shape == (300, 70) and big.dtype == np.float32 and big.flags.writeable and big.flags.c_contiguous
    big[...] = np.arange(21000, dtype=np.float32).reshape(300, 70)
    assert big[299, 69] == 20999 and float(big.sum(dtype=np.float64)) == float(np.arange(21000).sum())
