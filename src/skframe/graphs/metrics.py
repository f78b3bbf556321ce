"""Scores for predicted molecules and graphs: exact match, top-k, fingerprint similarity, edit distance."""

from __future__ import annotations

import time

import numpy as np

from skframe import deps
from skframe.exceptions import InvalidInputError
from skframe.graphs.batch import GraphBatch
from skframe.graphs.chem import canonical_smiles, morgan_fingerprints

__all__ = ["exact_match", "topk_exact_match", "fingerprint_tanimoto", "graph_edit_distance", "molecule_scores"]


def _as_list(graphs):
    if isinstance(graphs, GraphBatch):
        return [graphs.graph(g) for g in range(len(graphs))]
    return list(graphs)


def _same_graph(a, b):
    """Isomorphism of two labelled graphs given as (node labels, edges, edge labels)."""
    if sorted(a[0]) != sorted(b[0]) or sorted(a[2]) != sorted(b[2]) or len(a[1]) != len(b[1]):
        return False
    nx = deps.require("networkx", "graph isomorphism")
    ga, gb = (_to_nx(nx, g) for g in (a, b))
    same = nx.algorithms.isomorphism.categorical_node_match("label", None)
    same_e = nx.algorithms.isomorphism.categorical_edge_match("label", None)
    return nx.is_isomorphic(ga, gb, node_match=same, edge_match=same_e)


def _to_nx(nx, g):
    labels, edges, elabels = g
    G = nx.Graph()
    G.add_nodes_from((i, {"label": lab}) for i, lab in enumerate(labels))
    G.add_edges_from((u, v, {"label": lab}) for (u, v), lab in zip(edges, elabels))
    return G


def _check_len(a, b):
    if len(a) != len(b):
        raise InvalidInputError(f"{len(a)} predictions for {len(b)} true outputs; they must match one to one")


def exact_match(pred, true):
    """Fraction of predictions identical to the truth.

    SMILES strings are compared in RDKit's canonical form; graphs (a :class:`GraphBatch` or
    (labels, edges, edge labels) triples) by labelled-graph isomorphism (networkx).
    """
    _check_len(pred, true)
    if len(pred) == 0:
        raise InvalidInputError("no predictions to score")
    p0 = pred[0] if not isinstance(pred, GraphBatch) else None
    if isinstance(p0, str):
        cp, ct = canonical_smiles(pred), canonical_smiles(true)
        return float(np.mean([a is not None and a == b for a, b in zip(cp, ct)]))
    P, T = _as_list(pred), _as_list(true)
    return float(np.mean([_same_graph(a, b) for a, b in zip(P, T)]))


def topk_exact_match(topk, true, k=None):
    """Fraction of samples whose true output is among their top-k predicted candidates.

    ``topk`` is a list (one per sample) of ranked predictions (SMILES strings or graph triples).
    """
    _check_len(topk, true)
    hits = []
    T = _as_list(true)
    for ranked, t in zip(topk, T):
        ranked = list(ranked)[:k] if k else list(ranked)
        if ranked and isinstance(ranked[0], str):
            ct = canonical_smiles([t])[0]
            hits.append(ct is not None and ct in canonical_smiles(ranked))
        else:
            hits.append(any(_same_graph(r, t) for r in ranked))
    return float(np.mean(hits))


def fingerprint_tanimoto(pred_smiles, true_smiles, radius=2, n_bits=2048):
    """Mean Tanimoto similarity of the Morgan fingerprints of predicted and true molecules."""
    _check_len(pred_smiles, true_smiles)
    A = morgan_fingerprints(pred_smiles, radius, n_bits).astype(np.float64)
    B = morgan_fingerprints(true_smiles, radius, n_bits).astype(np.float64)
    inter = np.asarray(A.multiply(B).sum(axis=1)).ravel()
    union = np.asarray(A.sum(axis=1)).ravel() + np.asarray(B.sum(axis=1)).ravel() - inter
    with np.errstate(invalid="ignore", divide="ignore"):
        sim = np.where(union > 0, inter / union, 1.0)
    return float(sim.mean())


def graph_edit_distance(pred, true, timeout=1.0):
    """Mean graph edit distance (networkx, labels must match) with a per-pair time limit.

    Where the search hits ``timeout`` seconds, the best distance found so far is used, so an
    evaluation never hangs. Returns ``(mean distance, number of pairs that hit the limit)``.
    """
    nx = deps.require("networkx", "graph edit distance")
    P, T = _as_list(pred), _as_list(true)
    _check_len(P, T)
    node_match = nx.algorithms.isomorphism.categorical_node_match("label", None)
    edge_match = nx.algorithms.isomorphism.categorical_edge_match("label", None)

    dists, limited = [], 0
    for a, b in zip(P, T):
        t0 = time.perf_counter()
        d = nx.graph_edit_distance(_to_nx(nx, a), _to_nx(nx, b), node_match=node_match, edge_match=edge_match,
                                   timeout=timeout)
        if time.perf_counter() - t0 >= timeout:
            limited += 1
        if d is None:  # nothing found in time: the edit path that deletes one graph and inserts the other
            d = len(a[0]) + len(a[1]) + len(b[0]) + len(b[1])
        dists.append(float(d))
    return float(np.mean(dists)), limited


def _same_molecule(a_smiles, b_smiles, A, B, i, j):
    """Molecule i of A against molecule j of B: canonical SMILES, else labelled-graph isomorphism."""
    if a_smiles[i] is not None and b_smiles[j] is not None:
        return a_smiles[i] == b_smiles[j]
    return exact_match(A.take([i]), B.take([j])) == 1.0


def _mean_tanimoto(pred_smiles, true_smiles):
    """Mean Tanimoto similarity of Morgan fingerprints (radius 2, 2048 bits); 0 where a graph is no molecule."""
    valid = [i for i, (p, t) in enumerate(zip(pred_smiles, true_smiles)) if p is not None and t is not None]
    if not valid:
        return 0.0
    mean_valid = fingerprint_tanimoto([pred_smiles[i] for i in valid], [true_smiles[i] for i in valid])
    return float(mean_valid * len(valid) / len(true_smiles))


def molecule_scores(true, pred, candidates, *, k=None, topk_indices=None):
    """Scores of predicted molecules against the true ones, as a dict.

    ``exact_match_top1``: the predicted molecule is the true one; ``truth_among_candidates``:
    the true molecule is a candidate at all (the best exact match any decoder can reach);
    with ``k`` and ``topk_indices`` (row i: the indices of its ranked candidates, ``-1`` for
    none), ``exact_match_top{k}``: the true molecule is among the first k; ``tanimoto_top1``:
    mean Tanimoto similarity of Morgan fingerprints of the predicted and true molecules (0
    for a graph that is no molecule); ``n_candidates``. Molecules are compared by canonical
    SMILES, or by labelled-graph isomorphism where a graph is no valid molecule.

    Parameters
    ----------
    true, pred : GraphBatch
        True and predicted molecules, one per test row.
    candidates : GraphBatch
        The candidate set the predictions were decoded from.
    k : int, optional
    topk_indices : array-like of shape (n, >= k), optional
    """
    true_smiles = true.to_smiles()
    pred_smiles = pred.to_smiles()
    n = len(true)
    out = {"exact_match_top1": float(np.mean([_same_molecule(pred_smiles, true_smiles, pred, true, i, i)
                                              for i in range(n)]))}
    cand_smiles = candidates.to_smiles()
    known = {s for s in cand_smiles if s is not None}
    out["truth_among_candidates"] = float(np.mean([s is not None and s in known for s in true_smiles]))
    if k is not None and topk_indices is not None:
        k = int(k)
        idx = np.asarray(topk_indices)
        hits = [any(j >= 0 and _same_molecule(cand_smiles, true_smiles, candidates, true, int(j), i)
                    for j in idx[i, :k]) for i in range(n)]
        out[f"exact_match_top{k}"] = float(np.mean(hits))
    out["tanimoto_top1"] = _mean_tanimoto(pred_smiles, true_smiles)
    out["n_candidates"] = int(len(candidates))
    return out
