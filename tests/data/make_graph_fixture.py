"""Rebuild tests/data/graph_kernels_grakel.json: molecule graphs and GraKeL's Gram matrices on them.

Run once with RDKit and GraKeL installed (``pip install rdkit grakel``); the test suite then
compares skframe's graph kernels with these values, with or without GraKeL installed.
"""

import json
import sys
from pathlib import Path

import numpy as np

SMILES = [
    "CCO", "CC(=O)O", "c1ccccc1", "Cc1ccccc1", "Oc1ccccc1", "CCN(CC)CC", "ClC(Cl)Cl", "CC(C)CO",
    "O=C1CCCCC1", "c1ccc2ccccc2c1", "CC(=O)Nc1ccc(O)cc1", "CN1C=NC2=C1C(=O)N(C(=O)N2C)C",
    "OC(=O)c1ccccc1O", "C1CCOC1", "CCOC(=O)C", "c1ccncc1", "NC(=O)N", "CC#N", "FC(F)(F)c1ccccc1",
    "O=[N+]([O-])c1ccccc1",
]


def main(out):
    import warnings

    from grakel import Graph
    from grakel.kernels import (CoreFramework, EdgeHistogram, ShortestPath, VertexHistogram,
                                WeisfeilerLehman)

    sys.path[:0] = [str(Path(__file__).resolve().parents[2])]
    from skframe.graphs import GraphBatch

    warnings.filterwarnings("ignore")
    batch = GraphBatch.from_smiles(SMILES)
    graphs = [batch.graph(g) for g in range(len(batch))]

    def grakel_graph(labels, edges, elabels):
        adj = {i: {} for i in range(len(labels))}
        el = {}
        for (u, v), lab in zip(edges, elabels):
            adj[u][v] = adj[v][u] = 1.0
            el[(u, v)] = el[(v, u)] = lab
        return Graph(adj, node_labels=dict(enumerate(labels)), edge_labels=el)

    G = [grakel_graph(*g) for g in graphs]
    grams = {
        "vertex-histogram": VertexHistogram().fit_transform(G),
        "edge-histogram": EdgeHistogram().fit_transform(G),
        "shortest-path": ShortestPath(with_labels=True).fit_transform(G),
        "wl-subtree h=3": WeisfeilerLehman(n_iter=3).fit_transform(G),
        "wl-subtree h=3 normalize": WeisfeilerLehman(n_iter=3, normalize=True).fit_transform(G),
        "core-wl h=2": CoreFramework(base_graph_kernel=(WeisfeilerLehman, {"n_iter": 2})).fit_transform(G),
    }
    data = {"smiles": SMILES, "graphs": [[lab, [list(e) for e in edges], el] for lab, edges, el in graphs],
            "grams": {k: np.asarray(v).round(12).tolist() for k, v in grams.items()}}
    Path(out).write_text(json.dumps(data), encoding="utf-8")


if __name__ == "__main__":
    main(Path(__file__).with_name("graph_kernels_grakel.json"))
