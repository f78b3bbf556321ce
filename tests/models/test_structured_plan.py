"""The structured models size their "auto" sketches from an execution plan and record it as ``execution_``."""

import json

import numpy as np
import pytest

from skframe.compute import plan as plan_mod
from skframe.compute.machine import Machine
from skframe.compute.plan_rules import auto_size_rule, in_memory_bytes
from skframe.models import OutputKernelRegressor
from skframe.options import ComputeOptions


def _data(n=400, d=4, q=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    Y = (X[:, :q] + 0.4 * rng.normal(size=(n, q)) > 0).astype(float)
    return X, Y


def _okr(**kw):
    return OutputKernelRegressor(input_kernel_params={"gamma": 0.2}, output_kernel_params={"gamma": 0.5},
                                 input_sketch="subsample", output_sketch="subsample", lam=1e-3, random_state=0, **kw)


def test_auto_sizes_follow_the_rule_and_the_plan_is_recorded(tmp_path):
    from skframe.persistence import load, reproducible_execution, save

    X, Y = _data()
    model = _okr().fit(X, Y)
    m = auto_size_rule(len(X))
    assert model.sketch_info_["input"]["m"] == m and model.sketch_info_["output"]["m"] == m
    ex = model.execution_
    assert ex["executor"] == "in-memory" and "no streamed path" in ex["reasons"]["executor"]
    assert ex["sketch_size"] == m and ex["size_rule"].startswith("auto") and ex["backend"] == "numpy"
    assert ex["output"]["sketch_size"] == m and "machine" not in ex["output"]
    assert json.loads(json.dumps(ex)) == ex
    save(model, tmp_path / "okr.skf")
    assert load(tmp_path / "okr.skf").execution_ == reproducible_execution(ex)  # no machine state in the file
    plan = _okr().execution_plan(X, Y)
    assert plan.sketch_size == m and plan.executor == "in-memory"


def test_auto_size_is_capped_by_what_the_in_memory_fit_holds(monkeypatch):
    """On a machine with little memory the sqrt(n) rule is capped by the in-memory arrays, not by a fixed 1 GiB."""
    X, Y = _data(2000)
    rule = auto_size_rule(len(X))
    small = Machine(memory_bytes=2 * in_memory_bytes(len(X), rule // 2, rule // 2, X.shape[1], ComputeOptions(),
                                                     "sketch"), cores=1, memory_source="test")
    monkeypatch.setattr(plan_mod, "detect_machine", lambda **_: small)
    model = _okr().fit(X, Y)
    m = model.sketch_info_["input"]["m"]
    assert 1 <= m < rule and model.execution_["sketch_size"] == m and "capped" in model.execution_["size_rule"]
    assert model.sketch_info_["input"]["size_rule"] == model.execution_["size_rule"]


def test_exact_and_explicit_sizes_are_the_plans_too():
    X, Y = _data(150)
    model = OutputKernelRegressor(input_kernel_params={"gamma": 0.2}, output_kernel_params={"gamma": 0.5},
                                  output_sketch="subsample", output_sketch_size=30, lam=1e-3, random_state=0).fit(X, Y)
    assert model.execution_["sketch_size"] == 150 and "exact" in model.execution_["reasons"]["sketch_size"]
    assert model.execution_["output"]["sketch_size"] == 30 and model.execution_["output"]["size_rule"] == "given"


def test_dsokr_records_its_output_plan():
    pytest.importorskip("torch")
    from skframe.models import DeepOutputKernelRegressor

    X, Y = _data(120)
    model = DeepOutputKernelRegressor(output_kernel_params={"gamma": 0.5}, epochs=2, batch_size=32,
                                      network_params={"hidden": (8,)}, validation_fraction=0.25,
                                      random_state=0).fit(X, Y)
    n_train = 120 - 30
    assert model.execution_["n"] == n_train and model.execution_["sketch_size"] == auto_size_rule(n_train)
    assert model.sketch_info_["output"]["m"] == auto_size_rule(n_train)
    assert model.execution_plan(X, Y).sketch_size == auto_size_rule(n_train)
