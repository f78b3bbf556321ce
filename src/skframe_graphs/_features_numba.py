"""Compiled feature extraction for graph and string kernels.

Every kernel here is a dot product of count features: a graph (or string) is mapped
to the multiset of codes of its substructures, and ``k(G, G')`` counts matching
pairs. Codes are 63-bit mixes of label codes, so two batches built separately agree,
and the label dictionary of the Weisfeiler-Lehman relabelling is the mixing function
itself (a label never seen in training simply matches nothing there).

Each extractor fills ``raw`` (codes) and ``blk`` (block ids) for graph ``g`` in the
slice ``out_ptr[g]:out_ptr[g+1]`` of an upper-bound layout, padding with ``-1``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

_C1 = np.uint64(0x9E3779B97F4A7C15)
_C2 = np.uint64(0xBF58476D1CE4E5B9)
_C3 = np.uint64(0x94D049BB133111EB)


@njit(cache=True, inline="always")
def mix(h, x):
    """Order-dependent 64-bit mix of a running hash ``h`` and a value ``x`` (both int64, result >= 0)."""
    z = np.uint64(h) ^ (np.uint64(x) + _C1 + (np.uint64(h) << np.uint64(6)) + (np.uint64(h) >> np.uint64(2)))
    z = (z ^ (z >> np.uint64(30))) * _C2
    z = (z ^ (z >> np.uint64(27))) * _C3
    z = z ^ (z >> np.uint64(31))
    return np.int64(z >> np.uint64(1))


@njit(cache=True, inline="always")
def _sort_prefix(buf, k):
    """Sort ``buf[:k]`` in place (insertion sort: the lists here are short)."""
    for i in range(1, k):
        x = buf[i]
        j = i - 1
        while j >= 0 and buf[j] > x:
            buf[j + 1] = buf[j]
            j -= 1
        buf[j + 1] = x


@njit(cache=True)
def _local_adjacency(n, edges, elab):
    """CSR adjacency (ptr, neighbours, edge codes) of one graph with local node ids."""
    deg = np.zeros(n + 1, np.int64)
    for e in range(edges.shape[0]):
        deg[edges[e, 0] + 1] += 1
        deg[edges[e, 1] + 1] += 1
    ptr = np.cumsum(deg)
    nbr = np.empty(ptr[n], np.int64)
    lab = np.empty(ptr[n], np.int64)
    fill = ptr[:n].copy()
    for e in range(edges.shape[0]):
        u, v = edges[e, 0], edges[e, 1]
        nbr[fill[u]] = v
        lab[fill[u]] = elab[e]
        fill[u] += 1
        nbr[fill[v]] = u
        lab[fill[v]] = elab[e]
        fill[v] += 1
    return ptr, nbr, lab


@njit(cache=True)
def _bfs_all(n, ptr, nbr):
    """All-pairs shortest-path lengths (-1: unreachable) by one BFS per node."""
    D = np.full((n, n), -1, np.int64)
    queue = np.empty(n, np.int64)
    for s in range(n):
        D[s, s] = 0
        head, tail = 0, 1
        queue[0] = s
        while head < tail:
            u = queue[head]
            head += 1
            for q in range(ptr[u], ptr[u + 1]):
                w = nbr[q]
                if D[s, w] < 0:
                    D[s, w] = D[s, u] + 1
                    queue[tail] = w
                    tail += 1
    return D


@njit(cache=True)
def _wl_codes(n, ptr, nbr, start_labels, keep, h, tag, raw, pos):
    """Weisfeiler-Lehman labels of the sub-graph ``keep`` for iterations 0..h, appended to ``raw``."""
    cur = start_labels.copy()
    new = cur.copy()
    buf = np.empty(max(n, 1), np.int64)
    for v in range(n):
        if keep[v]:
            raw[pos] = mix(mix(tag, 0), cur[v])
            pos += 1
    for it in range(1, h + 1):
        for v in range(n):
            if not keep[v]:
                continue
            k = 0
            for q in range(ptr[v], ptr[v + 1]):
                if keep[nbr[q]]:
                    buf[k] = cur[nbr[q]]
                    k += 1
            _sort_prefix(buf, k)
            c = mix(cur[v], k)
            for j in range(k):
                c = mix(c, buf[j])
            new[v] = c
        for v in range(n):
            cur[v] = new[v]
            if keep[v]:
                raw[pos] = mix(mix(tag, it), cur[v])
                pos += 1
    return pos


@njit(cache=True)
def _core_numbers(n, ptr, nbr):
    """k-core number of every node by repeated removal of a node of smallest degree."""
    deg = np.empty(n, np.int64)
    for v in range(n):
        deg[v] = ptr[v + 1] - ptr[v]
    removed = np.zeros(n, np.bool_)
    core = np.zeros(n, np.int64)
    k = 0
    for _ in range(n):
        best, bd = -1, 1 << 62
        for v in range(n):
            if not removed[v] and deg[v] < bd:
                best, bd = v, deg[v]
        if bd > k:
            k = bd
        core[best] = k
        removed[best] = True
        for q in range(ptr[best], ptr[best + 1]):
            w = nbr[q]
            if not removed[w]:
                deg[w] -= 1
    return core


@njit(parallel=True, cache=True)
def graph_features(kind, node_ptr, node_code, edge_ptr, edges, edge_code, out_ptr, raw, blk, h, r, d):
    """Fill ``raw``/``blk`` with the substructure codes of every graph (see module docstring).

    kind: 0 vertex histogram, 1 edge histogram, 2 shortest path, 3 WL subtree, 4 NSPD, 5 core-WL.
    """
    G = node_ptr.shape[0] - 1
    for g in prange(G):
        a, b = node_ptr[g], node_ptr[g + 1]
        n = b - a
        labels = node_code[a:b]
        E = edges[edge_ptr[g]:edge_ptr[g + 1]]
        EL = edge_code[edge_ptr[g]:edge_ptr[g + 1]]
        pos = out_ptr[g]
        end = out_ptr[g + 1]
        if kind == 0:
            for v in range(n):
                raw[pos] = labels[v]
                pos += 1
        elif kind == 1:
            for e in range(E.shape[0]):  # both directions of every edge, as a directed edge set
                raw[pos] = EL[e]
                raw[pos + 1] = EL[e]
                pos += 2
        else:
            ptr, nbr, lab = _local_adjacency(n, E, EL)
            if kind == 2:
                D = _bfs_all(n, ptr, nbr)
                for u in range(n):
                    for v in range(n):
                        if u != v and D[u, v] > 0:
                            raw[pos] = mix(mix(labels[u], labels[v]), D[u, v])
                            pos += 1
            elif kind == 3:
                keep = np.ones(n, np.bool_)
                pos = _wl_codes(n, ptr, nbr, labels, keep, h, 0, raw, pos)
            elif kind == 5:
                core = _core_numbers(n, ptr, nbr)
                top = 0
                for v in range(n):
                    top = max(top, core[v])
                for i in range(top + 1):
                    keep = core >= i
                    pos = _wl_codes(n, ptr, nbr, labels, keep, h, i + 1, raw, pos)
            else:
                D = _bfs_all(n, ptr, nbr)
                H = np.empty((r + 1, n), np.int64)
                inv = np.empty(n, np.int64)
                buf = np.empty(max(n * n, 1), np.int64)
                for rho in range(r + 1):
                    for v in range(n):
                        # node invariants inside N_rho(v): label, distance to the root, and the
                        # sorted (distance, label) multiset to every node of the neighbourhood
                        for i in range(n):
                            if D[v, i] < 0 or D[v, i] > rho:
                                continue
                            k = 0
                            for j in range(n):
                                if D[v, j] >= 0 and D[v, j] <= rho:
                                    buf[k] = mix(D[i, j], labels[j])
                                    k += 1
                            _sort_prefix(buf, k)
                            c = mix(labels[i], D[v, i])
                            for q in range(k):
                                c = mix(c, buf[q])
                            inv[i] = c
                        k = 0
                        for i in range(n):
                            if D[v, i] >= 0 and D[v, i] <= rho:
                                buf[k] = mix(0, inv[i])
                                k += 1
                        for i in range(n):
                            if D[v, i] < 0 or D[v, i] > rho:
                                continue
                            for q in range(ptr[i], ptr[i + 1]):
                                j = nbr[q]
                                if j > i and D[v, j] >= 0 and D[v, j] <= rho:
                                    lo, hi = min(inv[i], inv[j]), max(inv[i], inv[j])
                                    buf[k] = mix(mix(mix(1, lo), hi), lab[q])
                                    k += 1
                        srt = np.sort(buf[:k])
                        c = 7
                        for q in range(k):
                            c = mix(c, srt[q])
                        H[rho, v] = c
                for rho in range(r + 1):
                    for u in range(n):
                        for v in range(n):
                            if D[u, v] >= 0 and D[u, v] <= d:
                                raw[pos] = mix(H[rho, u], H[rho, v])
                                blk[pos] = rho * (d + 1) + D[u, v]
                                pos += 1
        for q in range(pos, end):
            raw[q] = -1


@njit(parallel=True, cache=True)
def ngram_features(codes, ptr, n, out_ptr, raw):
    """Codes of every n-gram (window of n consecutive characters) of every string."""
    S = ptr.shape[0] - 1
    for s in prange(S):
        a, b = ptr[s], ptr[s + 1]
        pos = out_ptr[s]
        for i in range(a, b - n + 1):
            c = mix(0, n)
            for j in range(i, i + n):
                c = mix(c, codes[j])
            raw[pos] = c
            pos += 1
        for q in range(pos, out_ptr[s + 1]):
            raw[q] = -1


@njit(parallel=True, cache=True)
def rare_gram(ap, ac, av, skip, cp, ci, cv, out):
    """``out += A[:, rare] @ B[:, rare].T`` through the columns of B (``cp``, ``ci``, ``cv``: CSC of B).

    Columns flagged in ``skip`` (the frequent ones, done by a dense product) are left out, so the
    cost is the number of matching (row of A, row of B) pairs on rare codes.
    """
    na = ap.shape[0] - 1
    for i in prange(na):
        for q in range(ap[i], ap[i + 1]):
            c = ac[q]
            if skip[c]:
                continue
            a = av[q]
            for t in range(cp[c], cp[c + 1]):
                out[i, ci[t]] += a * cv[t]


@njit(parallel=True, cache=True)
def sort_segments(ptr, values):
    """Sort ``values[ptr[g]:ptr[g+1]]`` in place for every g."""
    for g in prange(ptr.shape[0] - 1):
        seg = values[ptr[g]:ptr[g + 1]]
        seg[:] = np.sort(seg)
