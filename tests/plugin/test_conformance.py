"""The conformance kit: every component the built-in plugins register passes it."""

import numpy as np
import pytest

from skframe.contract.registry import list_components
from skframe.graphs import GraphBatch, StringBatch
from skframe.plugin.api import check_component, get_component


def _graphs(n, seed=0):
    rng = np.random.default_rng(seed)
    labels, edges = [], []
    for _ in range(n):
        k = int(rng.integers(3, 7))
        labels.append([str(c) for c in rng.choice(["C", "N", "O"], size=k)])
        pairs = [(u, v) for u in range(k) for v in range(u + 1, k) if rng.random() < 0.45]
        edges.append(pairs or [(0, 1)])
    return GraphBatch.from_edge_lists(labels, edges)


def _strings(n, seed=0):
    rng = np.random.default_rng(seed)
    return StringBatch(["".join(rng.choice(list("CNOc1()="), size=int(rng.integers(4, 12)))) for _ in range(n)])


GRAPH_KERNELS = {"vertex-histogram", "edge-histogram", "shortest-path", "wl-subtree", "nspd", "core-wl"}
ADJACENCY = [[0.0, 1.0, 0.0], [1.0, 0.0, 1.0], [0.0, 1.0, 0.0]]


def _case(kind, name):
    """The component built from the registry and the data the kit needs for it."""
    params, data = {}, {}
    if kind == "kernel" and name == "precomputed":
        rng = np.random.default_rng(0)
        A = rng.normal(size=(12, 4))
        params = {"gram": (A @ A.T).tolist()}
        data = {"X": np.arange(12.0)[:, None], "Y": np.array([[3.0], [5.0], [7.0]])}
    elif kind == "kernel" and name in GRAPH_KERNELS:
        X = _graphs(14)
        data = {"X": X, "Y": X.take(np.arange(5))}
    elif kind == "kernel" and name == "ngram":
        X = _strings(14)
        data = {"X": X, "Y": X.take(np.arange(5))}
    elif kind == "sketch":
        params = {"size": 12}
    elif kind == "output_matrix" and name == "graph":
        params = {"adjacency": ADJACENCY}
    return get_component(kind, name, **params), data


BUILTIN = [(c.kind, c.name) for c in list_components() if c.distribution == "skframe"]


def test_every_kind_has_builtin_components():
    assert {kind for kind, _ in BUILTIN} == {"kernel", "sketch", "loss", "solver", "decoder", "output_matrix"}
    assert len(BUILTIN) >= 35


@pytest.mark.parametrize("kind,name", BUILTIN, ids=[f"{k}-{n}" for k, n in BUILTIN])
def test_builtin_component_passes_the_kit(kind, name):
    component, data = _case(kind, name)
    tags = check_component(component, **data)
    assert type(tags).__name__.lower().startswith(kind.replace("_", ""))


def test_the_kit_takes_a_class_and_its_params():
    from skframe_kernels import PolynomialKernel
    from skframe_sketches import SubSampleSketch

    assert check_component(PolynomialKernel, params={"degree": 2}).thread_safe
    assert not check_component(SubSampleSketch, params={"size": 10}).feature_map
