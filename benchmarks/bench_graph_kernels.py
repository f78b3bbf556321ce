"""Graph-kernel Gram matrices on molecule graphs: skframe's compiled kernels vs GraKeL.

Usage: ``python benchmarks/bench_graph_kernels.py [--n 1000] [--repeats 3]``. Needs RDKit (``skframe[chem]``)
and, for the baseline, GraKeL (``pip install grakel``). Prints one JSON object: for each kernel the best time of
skframe (features extracted from scratch each run) and of GraKeL, the speed-up and the largest difference
between the two Gram matrices.
"""

import warnings

import _setup  # runtime settings and sys.path, before NumPy; the measuring helpers
import numpy as np


def load_molecules(n):
    from skframe.datasets import load_solubility

    data = load_solubility()
    smiles = list(data.X_train) + list(data.X_test)
    from skframe.graphs.chem import canonical_smiles

    return [s for s, c in zip(smiles, canonical_smiles(smiles)) if c is not None][:n]


def grakel_graphs(batch):
    from grakel import Graph

    out = []
    for g in range(len(batch)):
        labels, edges, elabels = batch.graph(g)
        adj = {i: {} for i in range(len(labels))}
        el = {}
        for (u, v), lab in zip(edges, elabels):
            adj[u][v] = adj[v][u] = 1.0
            el[(u, v)] = el[(v, u)] = lab
        out.append(Graph(adj, node_labels=dict(enumerate(labels)), edge_labels=el))
    return out


def main():
    args = _setup.parser(__doc__, n=1000, repeats=3).parse_args()
    warnings.filterwarnings("ignore")

    from skframe.graphs import GraphBatch
    from skframe_graphs.kernels import NSPDKernel, ShortestPathKernel, WLSubtreeKernel

    smiles = load_molecules(args.n)
    batch = GraphBatch.from_smiles(smiles)
    try:
        from grakel.kernels import NeighborhoodSubgraphPairwiseDistance, ShortestPath, WeisfeilerLehman

        gk = grakel_graphs(batch)
    except ImportError:
        gk = None
    cases = [
        ("wl-subtree h=3", WLSubtreeKernel(h=3), lambda: WeisfeilerLehman(n_iter=3)),
        ("shortest-path", ShortestPathKernel(), lambda: ShortestPath(with_labels=True)),
        ("nspd r=3 d=4", NSPDKernel(r=3, d=4), lambda: NeighborhoodSubgraphPairwiseDistance(r=3, d=4)),
    ]
    report = {"n_graphs": len(batch), "mean_nodes": float(np.diff(batch.node_ptr).mean()), "kernels": {}}
    for name, kernel, baseline in cases:
        kernel(batch.take([0, 1]))  # load the compiled code once

        def ours(kernel=kernel):
            kernel._cache.clear()
            return kernel(batch)

        t_ours, K = _setup.best_of(ours, args.repeats)
        row = {"skframe_s": round(t_ours, 4)}
        if gk is not None:
            t_ref, K_ref = _setup.best_of(lambda baseline=baseline: baseline().fit_transform(gk), 1)
            off = ~np.eye(len(batch), dtype=bool)
            row.update({"grakel_s": round(t_ref, 4), "speedup": round(t_ref / t_ours, 1),
                        "max_abs_diff": float(np.abs(K - K_ref).max()),
                        "max_abs_diff_offdiag": float(np.abs(K - K_ref)[off].max())})
        report["kernels"][name] = row
    report["versions"] = _setup.versions()
    _setup.emit(report, indent=2)


if __name__ == "__main__":
    main()
