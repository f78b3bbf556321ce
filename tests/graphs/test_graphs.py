"""Graph batches and graph/string kernels: definitions, GraKeL values, PSD, permutation invariance."""

import json
from pathlib import Path

import numpy as np
import pytest

from skframe.exceptions import DataFormatError, InvalidInputError, InvalidParameterError
from skframe.graphs import GraphBatch, StringBatch, read_jsonl
from skframe_graphs.kernels import (
    CoreWLKernel,
    EdgeHistogramKernel,
    NGramKernel,
    NSPDKernel,
    ShortestPathKernel,
    VertexHistogramKernel,
    WLSubtreeKernel,
)

nx = pytest.importorskip("networkx")
from tests import naive_graphs as naive  # noqa: E402  (needs networkx)

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "graph_kernels_grakel.json"


def random_graphs(n_graphs, seed=0, p=0.35):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_graphs):
        G = nx.gnp_random_graph(int(rng.integers(1, 9)), p, seed=int(rng.integers(1 << 30)))
        for v in G.nodes:
            G.nodes[v]["label"] = "CNOS"[rng.integers(4)]
        for e in G.edges:
            G.edges[e]["label"] = "sdt"[rng.integers(3)]
        out.append(G)
    return out


GRAPHS = random_graphs(12)
OTHER = random_graphs(7, seed=1)

CASES = [
    (VertexHistogramKernel(), naive.vertex_histogram),
    (EdgeHistogramKernel(), naive.edge_histogram),
    (ShortestPathKernel(), naive.shortest_path),
    (WLSubtreeKernel(h=0), lambda G: naive.wl(G, 0)),
    (WLSubtreeKernel(h=3), lambda G: naive.wl(G, 3)),
    (CoreWLKernel(h=2), lambda G: naive.core_wl(G, 2)),
]


@pytest.mark.parametrize("kernel,feature", CASES, ids=lambda c: getattr(c, "__name__", type(c).__name__))
def test_count_kernels_equal_their_definition(kernel, feature):
    A, B = GraphBatch.from_networkx(GRAPHS), GraphBatch.from_networkx(OTHER)
    fa, fb = [feature(G) for G in GRAPHS], [feature(G) for G in OTHER]
    np.testing.assert_allclose(kernel(A, B), naive.gram(fa, fb), rtol=1e-12)
    np.testing.assert_allclose(kernel(A), naive.gram(fa), rtol=1e-12)
    np.testing.assert_allclose(kernel.diag(A), np.diag(naive.gram(fa)), rtol=1e-12)


@pytest.mark.parametrize("r,d", [(0, 0), (1, 2), (2, 3)])
def test_nspd_equals_its_definition(r, d):
    A, B = GraphBatch.from_networkx(GRAPHS), GraphBatch.from_networkx(OTHER)
    np.testing.assert_allclose(NSPDKernel(r=r, d=d)(A, B), naive.nspd_gram(GRAPHS, OTHER, r, d), atol=1e-12)


def test_ngram_equals_its_definition():
    words = ["CCO", "c1ccccc1O", "", "CC", "OCCO", "ÅÅÅÅ"]
    S = StringBatch(words)
    for n in (1, 2, 3):
        np.testing.assert_allclose(NGramKernel(n=n)(S), naive.gram([naive.ngram(w, n) for w in words]))
    K = NGramKernel(n=3, normalize=True)(S)
    assert np.allclose(np.diag(K)[[0, 1, 4]], 1.0) and K[2, 2] == 0.0


ALL = [VertexHistogramKernel, EdgeHistogramKernel, ShortestPathKernel, WLSubtreeKernel, NSPDKernel, CoreWLKernel]


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_psd_symmetric_unit_diagonal_and_permutation_invariant(cls):
    A = GraphBatch.from_networkx(GRAPHS)
    K = cls()(A)
    np.testing.assert_allclose(K, K.T)
    assert np.linalg.eigvalsh(K).min() > -1e-8 * max(1.0, np.abs(K).max())
    Kn = cls(normalize=True)(A)
    nonempty = cls()(A).diagonal() > 0
    np.testing.assert_allclose(np.diag(Kn)[nonempty], 1.0)
    rng = np.random.default_rng(3)
    shuffled = []
    for G in GRAPHS:
        perm = rng.permutation(G.number_of_nodes())
        shuffled.append(nx.relabel_nodes(G, dict(zip(G.nodes, perm.tolist()))))
    P = GraphBatch.from_networkx(shuffled)
    np.testing.assert_allclose(cls()(P, A), K, atol=1e-9)


def _fixture():
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    batch = GraphBatch.from_edge_lists(*zip(*[(g[0], [tuple(e) for e in g[1]], g[2]) for g in data["graphs"]]))
    return data, batch


@pytest.mark.parametrize("name,kernel", [
    ("vertex-histogram", VertexHistogramKernel()), ("edge-histogram", EdgeHistogramKernel()),
    ("shortest-path", ShortestPathKernel()), ("wl-subtree h=3", WLSubtreeKernel(h=3)),
    ("wl-subtree h=3 normalize", WLSubtreeKernel(h=3, normalize=True)), ("core-wl h=2", CoreWLKernel(h=2)),
])
def test_values_equal_grakel_fixture(name, kernel):
    data, batch = _fixture()
    np.testing.assert_allclose(kernel(batch), np.array(data["grams"][name]), rtol=1e-10, atol=1e-10)


def test_values_equal_grakel_live_when_installed():
    pytest.importorskip("grakel")
    from grakel import Graph
    from grakel.kernels import WeisfeilerLehman

    data, batch = _fixture()
    G = []
    for labels, edges, _ in data["graphs"]:
        adj = {i: {} for i in range(len(labels))}
        for u, v in edges:
            adj[u][v] = adj[v][u] = 1.0
        G.append(Graph(adj, node_labels=dict(enumerate(labels))))
    np.testing.assert_allclose(WLSubtreeKernel(h=2)(batch), WeisfeilerLehman(n_iter=2).fit_transform(G))


def test_batch_take_state_and_jsonl_round_trip(tmp_path):
    A = GraphBatch.from_networkx(GRAPHS)
    sub = A.take([3, 0, 3])
    assert len(sub) == 3 and sub.graph(0) == A.graph(3) and sub.graph(2) == A.graph(3)
    assert A[1:3].graph(1) == A.graph(2)
    again = GraphBatch.from_state(A.to_state())
    np.testing.assert_array_equal(WLSubtreeKernel()(again), WLSubtreeKernel()(A))
    path = tmp_path / "graphs.jsonl"
    A.write_jsonl(path)
    np.testing.assert_array_equal(WLSubtreeKernel()(read_jsonl(path)), WLSubtreeKernel()(A))


def test_bad_inputs_are_clear_errors(tmp_path):
    with pytest.raises(InvalidInputError, match="self-loop"):
        GraphBatch.from_edge_lists([["C"]], [[(0, 0)]])
    with pytest.raises(InvalidInputError, match="outside"):
        GraphBatch.from_edge_lists([["C", "O"]], [[(0, 2)]])
    with pytest.raises(InvalidInputError, match="GraphBatch"):
        WLSubtreeKernel()(np.ones((2, 2)))
    with pytest.raises(InvalidParameterError, match="h="):
        WLSubtreeKernel(h=-1)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"nodes": ["C"]}\nnot json\n', encoding="utf-8")
    with pytest.raises(DataFormatError, match="line 2"):
        read_jsonl(bad)


def test_smiles_round_trip():
    pytest.importorskip("rdkit")
    smiles = ["CCO", "c1ccccc1O", "O=[N+]([O-])c1ccccc1", "Cc1c[nH]c(=O)[nH]c1=O"]
    from skframe.graphs.chem import canonical_smiles

    G = GraphBatch.from_smiles(smiles)
    assert G.to_smiles() == canonical_smiles(smiles)
    with pytest.raises(InvalidInputError, match="cannot be parsed"):
        GraphBatch.from_smiles(["C1CC"])


def test_molecule_metrics():
    pytest.importorskip("rdkit")
    from skframe.graphs.metrics import exact_match, fingerprint_tanimoto, graph_edit_distance, topk_exact_match

    assert exact_match(["OCC", "c1ccccc1"], ["CCO", "C1=CC=CC=C1"]) == 1.0
    G = GraphBatch.from_smiles(["CCO", "CCCO", "c1ccccc1"])
    assert exact_match(G, G.take([0, 2, 2])) == pytest.approx(2 / 3)
    mean, limited = graph_edit_distance(G.take([0]), G.take([1]), timeout=5.0)
    assert mean == 2.0 and limited == 0  # one carbon and one bond inserted
    assert fingerprint_tanimoto(["CCO"], ["CCO"]) == 1.0
    assert topk_exact_match([["CCC", "OCC"], ["CC"]], ["CCO", "CCO"]) == 0.5
    from skframe.graphs.chem import morgan_fingerprints

    F = morgan_fingerprints(["CCO", "c1ccccc1"], radius=2, n_bits=1024)
    assert F.shape == (2, 1024) and F.dtype == np.uint8 and F.nnz > 0


def test_structured_prediction_with_string_inputs_and_graph_outputs():
    from skframe.models import OutputKernelRegressor
    from skframe.models.structured import CandidatePool

    rng = np.random.default_rng(0)
    G = GraphBatch.from_networkx(random_graphs(40, seed=5))
    # inputs: a string that spells each graph's node labels (a learnable map to the graph)
    words = ["".join(G.graph(g)[0]) or "-" for g in range(len(G))]
    X = StringBatch(words)
    model = OutputKernelRegressor(input_kernel=NGramKernel(n=1), output_kernel=VertexHistogramKernel(), lam=1e-8,
                                  random_state=0).fit(X, G)
    P = model.predict(X)
    assert isinstance(P, GraphBatch) and len(P) == len(G)
    # the vertex-histogram surrogate recovers each training graph's label multiset
    same = [sorted(P.graph(i)[0]) == sorted(G.graph(i)[0]) for i in range(len(G))]
    assert np.mean(same) == 1.0
    # decoding equals brute force over the candidates
    S = model.decision_function(X[:5], candidates=G)
    idx, _ = model.predict_topk(X[:5], 3, candidates=G)
    np.testing.assert_array_equal(idx[:, 0], S.argmax(axis=1))
    pool = CandidatePool(G, [rng.choice(len(G), 5, replace=False) for _ in range(5)])
    assert len(model.predict(X[:5], candidates=pool)) == 5
    sketched = OutputKernelRegressor(input_kernel=NGramKernel(n=1), output_kernel=WLSubtreeKernel(h=1),
                                     input_sketch="subsample", input_sketch_size=20, output_sketch="subsample",
                                     output_sketch_size=20, lam=1e-4, random_state=0).fit(X, G)
    assert isinstance(sketched.predict(X[:3]), GraphBatch)


def test_smiles_to_molecule_model_round_trip(tmp_path):
    pytest.importorskip("rdkit")
    import skframe
    from skframe.models import OutputKernelRegressor

    smiles = ["CCO", "CCCO", "c1ccccc1O", "CC(=O)O", "CCN", "CCCN", "OCCO", "CC(C)O", "CC#N", "ClCCl"]
    X, Y = StringBatch(smiles), GraphBatch.from_smiles(smiles)
    for sketches in ({}, {"input_sketch": "subsample", "input_sketch_size": 6, "output_sketch": "subsample",
                          "output_sketch_size": 6}):
        model = OutputKernelRegressor(input_kernel="ngram", input_kernel_params={"n": 2},
                                      output_kernel="wl-subtree", output_kernel_params={"h": 2, "normalize": True},
                                      lam=1e-3, random_state=0, **sketches).fit(X, Y)
        path = tmp_path / "molecules.skf"
        skframe.save(model, path)
        again = skframe.load(path)
        assert again.predict(X).to_smiles() == model.predict(X).to_smiles()
        np.testing.assert_array_equal(again.decision_function(X), model.decision_function(X))
