"""Plain-Python definitions of the graph and string kernels (networkx, Counters), for the tests."""

import collections
import itertools

import networkx as nx
import numpy as np


def gram(feats_x, feats_y=None):
    feats_y = feats_x if feats_y is None else feats_y
    return np.array([[float(sum(a[k] * b.get(k, 0) for k in a)) for b in feats_y] for a in feats_x])


def normalize(K, dx, dy):
    with np.errstate(divide="ignore", invalid="ignore"):
        out = K / np.sqrt(np.outer(dx, dy))
    out[~np.isfinite(out)] = 0.0
    return out


def vertex_histogram(G):
    return collections.Counter(G.nodes[v]["label"] for v in G.nodes)


def edge_histogram(G):
    c = collections.Counter()
    for e in G.edges:
        c[G.edges[e]["label"]] += 2
    return c


def shortest_path(G):
    d = dict(nx.all_pairs_shortest_path_length(G))
    c = collections.Counter()
    for u, v in itertools.permutations(G.nodes, 2):
        if v in d[u]:
            c[(G.nodes[u]["label"], G.nodes[v]["label"], d[u][v])] += 1
    return c


def wl(G, h, tag=()):
    lab = {v: G.nodes[v]["label"] for v in G.nodes}
    c = collections.Counter(tag + (0, x) for x in lab.values())
    for it in range(1, h + 1):
        lab = {v: (lab[v], tuple(sorted(lab[u] for u in G.neighbors(v)))) for v in G.nodes}
        c.update(tag + (it, x) for x in lab.values())
    return c


def core_wl(G, h):
    core = nx.core_number(G) if G.number_of_nodes() else {}
    c = collections.Counter()
    for i in range(max(core.values(), default=-1) + 1):
        c.update(wl(G.subgraph([v for v in G.nodes if core[v] >= i]), h, (i,)))
    return c


def _neighbourhood_code(G, D, root, rho):
    S = [u for u in G.nodes if D[root].get(u, rho + 1) <= rho]
    inv = {i: (G.nodes[i]["label"], D[root][i], tuple(sorted((D[i][j], G.nodes[j]["label"]) for j in S)))
           for i in S}
    edges = sorted((min(inv[i], inv[j]), max(inv[i], inv[j]), G.edges[i, j]["label"])
                   for i, j in G.subgraph(S).edges)
    return (tuple(sorted(inv.values())), tuple(edges))


def nspd_blocks(G, r, d):
    """{(rho, delta): Counter of (code(N_rho(u)), code(N_rho(v))) over ordered pairs with D(u, v) = delta}."""
    D = dict(nx.all_pairs_shortest_path_length(G))
    blocks = collections.defaultdict(collections.Counter)
    for rho in range(r + 1):
        H = {v: _neighbourhood_code(G, D, v, rho) for v in G.nodes}
        for u in G.nodes:
            for v in G.nodes:
                if v in D[u] and D[u][v] <= d:
                    blocks[(rho, D[u][v])][(H[u], H[v])] += 1
    return blocks


def nspd_gram(Gs, Hs, r, d):
    bx = [nspd_blocks(G, r, d) for G in Gs]
    by = [nspd_blocks(G, r, d) for G in Hs]
    K = np.zeros((len(Gs), len(Hs)))
    for i, a in enumerate(bx):
        for j, b in enumerate(by):
            for key in set(a) & set(b):
                na = np.sqrt(sum(x * x for x in a[key].values()))
                nb = np.sqrt(sum(x * x for x in b[key].values()))
                K[i, j] += sum(a[key][k] * b[key].get(k, 0) for k in a[key]) / (na * nb)
    return K


def ngram(s, n):
    return collections.Counter(s[i:i + n] for i in range(len(s) - n + 1))
