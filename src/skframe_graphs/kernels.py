"""Graph and string kernels: dot products of substructure counts.

========================  ==============================================================
name                      feature of a graph (a count per code)
========================  ==============================================================
``vertex-histogram``      node labels
``edge-histogram``        edge labels, each undirected edge counted in both directions
``shortest-path``         (label(u), label(v), d(u, v)) for ordered pairs u != v
``wl-subtree``            Weisfeiler-Lehman labels of iterations 0..h
``nspd``                  pairs of rooted neighbourhood subgraphs of radius rho <= r at
                          distance delta <= d; each (rho, delta) block cosine-normalised, summed
``core-wl``               Weisfeiler-Lehman features of every k-core, k = 0..max core
``ngram``                 character n-grams of a string (spectrum kernel)
========================  ==============================================================

Definitions follow the graph-kernel appendix of T. El Ahmad's PhD thesis (*Learning Deep Kernel
Networks: Application to Efficient and Robust Structured Prediction*, 2024): vertex histogram
(Sugiyama and Borgwardt, 2015), shortest path (Borgwardt and Kriegel, 2005), neighbourhood subgraph
pairwise distance (Costa and Grave, 2010), Weisfeiler-Lehman subtree (Shervashidze et al., 2011)
and the core variant (Nikolentzos et al., 2018). ``normalize=True`` divides by
``sqrt(k(G, G) k(G', G'))`` (a unit diagonal).
"""

from __future__ import annotations

import weakref

import numpy as np

from skframe.graphs import GraphBatch, StringBatch
from skframe.plugin.api import (
    Interval,
    InvalidInputError,
    InvalidParameterError,
    Kernel,
    KernelTags,
    validate_component,
)
from skframe.plugin.toolbox import lazy_module

_nb = lazy_module("skframe_graphs._features_numba")  # numba is imported at the first graph kernel call

__all__ = ["GraphKernel", "VertexHistogramKernel", "EdgeHistogramKernel", "ShortestPathKernel",
           "WLSubtreeKernel", "NSPDKernel", "CoreWLKernel", "NGramKernel"]


_DENSE_BYTES = 64_000_000


class _Features:
    """Count features of a batch: CSR rows as (ptr, codes, values), codes sorted within each row."""

    def __init__(self, ptr, codes, values):
        self.ptr, self.codes, self.values = ptr, codes, values

    def sq_norms(self):
        out = np.zeros(self.ptr.size - 1)
        np.add.at(out, np.repeat(np.arange(self.ptr.size - 1), np.diff(self.ptr)), self.values**2)
        return out


_BLOCK_SHIFT = 56  # NSPD: the (radius, distance) block id lives in the top bits of a code


def _compress(out_ptr, raw, blk=None):
    """Per-row unique codes and counts from the padded layout (padding = -1).

    With ``blk``, each code is tagged with its block id in its top bits; returns the block ids too.
    """
    if blk is not None:
        low = raw & np.int64((1 << _BLOCK_SHIFT) - 1)
        raw = np.where(raw >= 0, (blk.astype(np.int64) << _BLOCK_SHIFT) | low, -1)
    _nb.sort_segments(out_ptr, raw)
    rows = np.repeat(np.arange(out_ptr.size - 1), np.diff(out_ptr))
    keep = raw >= 0
    rows, raw = rows[keep], raw[keep]
    first = np.ones(raw.size, bool)
    first[1:] = (raw[1:] != raw[:-1]) | (rows[1:] != rows[:-1])
    starts = np.flatnonzero(first)
    counts = np.diff(np.append(starts, raw.size)).astype(np.float64)
    ptr = np.zeros(out_ptr.size, np.int64)
    np.add.at(ptr, rows[starts] + 1, 1)
    codes = raw[starts]
    blocks = None if blk is None else codes >> _BLOCK_SHIFT
    return _Features(np.cumsum(ptr), codes, counts), blocks


class GraphKernel(Kernel):
    """Base of the count-feature kernels: ``k(G, G') = <phi(G), phi(G')>`` (normalised if asked).

    Subclasses set ``kind`` and ``_upper(n_nodes, n_edges)`` (an upper bound on codes per graph).
    """

    kind = -1
    input_type = GraphBatch
    _blocked = False
    _parameter_constraints = {"normalize": ["boolean"]}

    def __init__(self, normalize=False):
        self.normalize = normalize
        self._validate()

    def _validate(self):
        """Check the declared parameter constraints; start an empty feature cache."""
        validate_component(self)
        self._cache = weakref.WeakKeyDictionary()

    def __skframe_tags__(self):
        # not thread-safe: a call fills the feature cache of its batch
        return KernelTags(normalized=self.normalize)

    @property
    def params(self):
        """dict: the declared parameters (``_parameter_constraints``), in their order."""
        return {name: getattr(self, name) for name in self._parameter_constraints}

    def _h_r_d(self):
        return 0, 0, 0

    def _check(self, X, name):
        if not isinstance(X, self.input_type):
            raise InvalidInputError(
                f"{type(self).__name__} takes a {self.input_type.__name__} as {name}, got {type(X).__name__}; "
                f"build one with {self.input_type.__name__}.from_... (see skframe.graphs)"
            )

    def features(self, X):
        """Count features of every item of ``X`` (cached per batch object)."""
        self._check(X, "X")
        hit = self._cache.get(X)
        if hit is not None:
            return hit
        feats = self._extract(X)
        self._cache[X] = feats
        return feats

    def _extract(self, X):
        nn = np.diff(X.node_ptr)
        ne = np.diff(X.edge_ptr)
        upper = self._upper(nn, ne)
        out_ptr = np.concatenate([[0], np.cumsum(upper)]).astype(np.int64)
        raw = np.empty(int(out_ptr[-1]), np.int64)
        blk = np.zeros(raw.size, np.int64)
        h, r, d = self._h_r_d()
        _nb.graph_features(self.kind, X.node_ptr, X.node_codes(), X.edge_ptr, X.edges, X.edge_codes(), out_ptr,
                           raw, blk, h, r, d)
        feats, blocks = _compress(out_ptr, raw, blk if self._blocked else None)
        if self._blocked:
            feats = self._normalise_blocks(feats, blocks)
        return feats

    def _normalise_blocks(self, feats, blocks):
        rows = np.repeat(np.arange(feats.ptr.size - 1), np.diff(feats.ptr))
        key = rows * (int(blocks.max(initial=0)) + 1) + blocks
        sq = np.zeros(int(key.max(initial=0)) + 1)
        np.add.at(sq, key, feats.values**2)
        feats.values = feats.values / np.sqrt(sq[key])
        return feats

    def __call__(self, X, Y=None):
        fx = self.features(X)
        fy = fx if Y is None else self.features(Y)
        K = _gram(fx, fy)
        if self.normalize:
            dx = fx.sq_norms()
            dy = dx if Y is None else fy.sq_norms()
            with np.errstate(divide="ignore", invalid="ignore"):
                K = K / np.sqrt(np.outer(dx, dy))
            K[~np.isfinite(K)] = 0.0
        return K

    def diag(self, X):
        """``k(G, G)`` for every graph (1 for a normalised kernel, 0 for a graph without features)."""
        if self.normalize:
            return (self.features(X).sq_norms() > 0).astype(np.float64)
        return self.features(X).sq_norms()


def _gram(fx, fy):
    """``Phi_x Phi_y^T``: frequent codes by a dense BLAS product, rare codes through an inverted index."""
    codes = np.concatenate([fx.codes, fy.codes])
    uniq, inv = np.unique(codes, return_inverse=True)
    cols_x, cols_y = inv[: fx.codes.size].astype(np.int64), inv[fx.codes.size:].astype(np.int64)
    na, nb = fx.ptr.size - 1, fy.ptr.size - 1
    freq = np.bincount(cols_x, minlength=uniq.size) * np.bincount(cols_y, minlength=uniq.size)
    # a code shared by very many pairs is cheaper as a dense column of a BLAS product (na * nb
    # flops at BLAS speed) than through the index (one scattered update per matching pair)
    budget = max(1, _DENSE_BYTES // (8 * (na + nb)))
    order = np.argsort(-freq, kind="stable")
    dense = order[: min(budget, int(np.count_nonzero(freq > na * nb / 16)))]
    is_dense = np.zeros(uniq.size, np.bool_)
    is_dense[dense] = True
    out = np.zeros((na, nb))
    if dense.size:
        pos = np.full(uniq.size, -1, np.int64)
        pos[dense] = np.arange(dense.size)
        Ad = _dense_part(fx, cols_x, pos, dense.size)
        Bd = Ad if fy is fx else _dense_part(fy, cols_y, pos, dense.size)
        out += Ad @ Bd.T
    rows_y = np.repeat(np.arange(nb, dtype=np.int64), np.diff(fy.ptr))
    by_col = np.argsort(cols_y, kind="stable")
    cp = np.zeros(uniq.size + 1, np.int64)
    np.add.at(cp, cols_y + 1, 1)
    _nb.rare_gram(fx.ptr, cols_x, fx.values, is_dense, np.cumsum(cp), rows_y[by_col], fy.values[by_col], out)
    return out


def _dense_part(f, cols, pos, width):
    D = np.zeros((f.ptr.size - 1, width))
    rows = np.repeat(np.arange(f.ptr.size - 1), np.diff(f.ptr))
    keep = pos[cols] >= 0
    D[rows[keep], pos[cols[keep]]] = f.values[keep]
    return D


class VertexHistogramKernel(GraphKernel):
    """Linear kernel on node-label histograms."""

    kind = 0

    def _upper(self, nn, ne):
        return nn


class EdgeHistogramKernel(GraphKernel):
    """Linear kernel on edge-label histograms (each undirected edge counted in both directions)."""

    kind = 1

    def _upper(self, nn, ne):
        return 2 * ne


class ShortestPathKernel(GraphKernel):
    """Counts of (label(u), label(v), shortest-path length) over ordered pairs of distinct connected nodes."""

    kind = 2

    def _upper(self, nn, ne):
        return nn * nn


class WLSubtreeKernel(GraphKernel):
    """Weisfeiler-Lehman subtree kernel with ``h`` relabelling iterations (iterations 0..h counted)."""

    kind = 3
    _parameter_constraints = {"h": [Interval("int", 0, None)], **GraphKernel._parameter_constraints}

    def __init__(self, h=3, normalize=False):
        self.h, self.normalize = h, normalize
        self._validate()

    def _h_r_d(self):
        return self.h, 0, 0

    def _upper(self, nn, ne):
        return nn * (self.h + 1)


class CoreWLKernel(WLSubtreeKernel):
    """Core variant of the WL subtree kernel: the WL kernel summed over the k-cores, k = 0..max core."""

    kind = 5

    def _upper(self, nn, ne):
        return nn * nn * (self.h + 1) + 1


class NSPDKernel(GraphKernel):
    """Neighbourhood subgraph pairwise distance kernel with radii 0..r and distances 0..d.

    For each (radius, distance) block the counts of pairs of rooted neighbourhood subgraphs are
    compared by cosine similarity, and the blocks are summed. A neighbourhood subgraph is identified
    by a permutation-invariant code of its node labels, the distances inside it and its edge labels.
    """

    kind = 4
    _blocked = True

    _parameter_constraints = {"r": [Interval("int", 0, None)], "d": [Interval("int", 0, None)],
                              **GraphKernel._parameter_constraints}

    def __init__(self, r=3, d=4, normalize=False):
        self.r, self.d, self.normalize = r, d, normalize
        self._validate()
        if (self.r + 1) * (self.d + 1) > 127:
            raise InvalidParameterError(f"nspd with r={r}, d={d} has too many blocks; keep (r + 1) * (d + 1) <= 127")

    def _h_r_d(self):
        return 0, self.r, self.d

    def _upper(self, nn, ne):
        return (self.r + 1) * nn * nn


class NGramKernel(GraphKernel):
    """Spectrum kernel on strings: counts of the character n-grams."""

    input_type = StringBatch
    _parameter_constraints = {"n": [Interval("int", 1, None)], **GraphKernel._parameter_constraints}

    def __init__(self, n=3, normalize=False):
        self.n, self.normalize = n, normalize
        self._validate()

    def _check(self, X, name):
        if isinstance(X, (list, tuple)) or (isinstance(X, np.ndarray) and X.dtype.kind in "UO"):
            raise InvalidInputError(f"NGramKernel takes a StringBatch as {name}; wrap the strings: StringBatch(list)")
        super()._check(X, name)

    def _extract(self, X):
        lengths = np.diff(X.ptr)
        upper = np.maximum(lengths - self.n + 1, 0)
        out_ptr = np.concatenate([[0], np.cumsum(upper)]).astype(np.int64)
        raw = np.empty(int(out_ptr[-1]), np.int64)
        _nb.ngram_features(X.codes, X.ptr, self.n, out_ptr, raw)
        return _compress(out_ptr, raw)[0]
