"""Labelled graphs as one flat batch: what graph kernels walk without Python objects.

A :class:`GraphBatch` holds ``G`` graphs in CSR-style flat arrays:

* ``node_ptr`` (G + 1): the nodes of graph g are ``node_ptr[g]:node_ptr[g + 1]``;
* ``node_labels`` (total nodes): an index into ``node_vocab``, the label strings;
* ``edge_ptr`` (G + 1) and ``edges`` (total edges x 2): each undirected edge once, as
  node indices local to its graph (``u < v``); ``edge_labels`` index ``edge_vocab``.

Labels are kept as strings (atom symbols, bond types, ...) so that two batches built
separately agree on them; kernels turn them into stable 64-bit codes
(:meth:`GraphBatch.node_codes`), the same in every process.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile

import numpy as np

from skframe import deps
from skframe.contract.collections import InputCollection
from skframe.exceptions import DataFormatError, InvalidInputError
from skframe.graphs.chem import edge_lists_to_smiles, read_sdf, smiles_to_edge_lists
from skframe.limits import check, limit

__all__ = ["GraphBatch", "label_code"]

_CODE_CACHE = {}


def label_code(label):
    """A stable 63-bit code for a label string (the same in every process, unlike ``hash``)."""
    code = _CODE_CACHE.get(label)
    if code is None:
        digest = hashlib.blake2b(str(label).encode("utf-8"), digest_size=8).digest()
        code = int.from_bytes(digest, "little") & 0x7FFFFFFFFFFFFFFF
        _CODE_CACHE[label] = code
    return code


def _vocab_index(labels, vocab, index):
    out = np.empty(len(labels), dtype=np.int32)
    for i, lab in enumerate(labels):
        key = str(lab)
        j = index.get(key)
        if j is None:
            j = index[key] = len(vocab)
            vocab.append(key)
        out[i] = j
    return out


class GraphBatch(InputCollection):
    """A batch of undirected graphs with node and edge labels, indexed like an array.

    Build one with :meth:`from_networkx`, :meth:`from_smiles`, :meth:`from_sdf`,
    :meth:`from_edge_lists` or :meth:`read_jsonl`; ``G[idx]`` and ``G.take(idx)`` give sub-batches.

    Examples
    --------
    >>> G = GraphBatch.from_edge_lists([["C", "O"], ["C", "C", "O"]], [[(0, 1)], [(0, 1), (1, 2)]],
    ...                                [["double"], ["single", "single"]])
    >>> len(G), G.n_nodes(1), G.take([1, 1]).n_edges(0)
    (2, 3, 2)
    """

    def __init__(self, node_ptr, node_labels, edge_ptr, edges, edge_labels, node_vocab, edge_vocab):
        self.node_ptr = np.ascontiguousarray(node_ptr, dtype=np.int64)
        self.node_labels = np.ascontiguousarray(node_labels, dtype=np.int32)
        self.edge_ptr = np.ascontiguousarray(edge_ptr, dtype=np.int64)
        self.edges = np.ascontiguousarray(np.asarray(edges, dtype=np.int64).reshape(-1, 2))
        self.edge_labels = np.ascontiguousarray(edge_labels, dtype=np.int32)
        self.node_vocab = [str(v) for v in node_vocab]
        self.edge_vocab = [str(v) for v in edge_vocab]
        self._check()

    def _check(self):
        g = self.node_ptr.shape[0] - 1
        if g < 0 or self.edge_ptr.shape[0] != g + 1:
            raise DataFormatError("graph batch: node_ptr and edge_ptr must both have one entry more than graphs")
        if self.node_ptr[0] != 0 or np.any(np.diff(self.node_ptr) < 0) or self.node_ptr[-1] != self.node_labels.size:
            raise DataFormatError("graph batch: node_ptr must rise from 0 to the number of node labels")
        if self.edge_ptr[0] != 0 or np.any(np.diff(self.edge_ptr) < 0) or self.edge_ptr[-1] != self.edges.shape[0]:
            raise DataFormatError("graph batch: edge_ptr must rise from 0 to the number of edges")
        if self.edge_labels.size != self.edges.shape[0]:
            raise DataFormatError("graph batch: one edge label per edge is needed")
        if self.edges.size:
            sizes = np.repeat(np.diff(self.node_ptr), np.diff(self.edge_ptr))
            if self.edges.min() < 0 or np.any(self.edges.max(axis=1) >= sizes):
                raise DataFormatError("graph batch: an edge refers to a node its graph does not have")
        labelled = (("node", self.node_labels, self.node_vocab), ("edge", self.edge_labels, self.edge_vocab))
        for name, lab, vocab in labelled:
            if lab.size and (lab.min() < 0 or lab.max() >= len(vocab)):
                raise DataFormatError(f"graph batch: a {name} label index is outside the {name} vocabulary")

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_edge_lists(cls, node_labels, edges, edge_labels=None):
        """Build from per-graph lists: node labels, edges as (u, v) pairs, edge labels (default "-").

        Self-loops are refused and repeated edges kept once (the first label wins).
        """
        if len(node_labels) != len(edges) or (edge_labels is not None and len(edge_labels) != len(edges)):
            raise InvalidInputError("node_labels, edges and edge_labels must have one entry per graph")
        node_vocab, node_index, edge_vocab, edge_index = [], {}, [], {}
        node_ptr, edge_ptr = [0], [0]
        lab_parts, edge_parts, elab_parts = [], [], []
        for g, labels in enumerate(node_labels):
            n = len(labels)
            lab_parts.append(_vocab_index(labels, node_vocab, node_index))
            pairs = [tuple(int(a) for a in e) for e in edges[g]]
            elabs = ["-"] * len(pairs) if edge_labels is None else list(edge_labels[g])
            if len(elabs) != len(pairs):
                raise InvalidInputError(f"graph {g}: {len(pairs)} edges but {len(elabs)} edge labels")
            seen, kept, kept_lab = set(), [], []
            for (u, v), lab in zip(pairs, elabs):
                if u == v:
                    raise InvalidInputError(f"graph {g}: self-loop on node {u}; graph kernels here take simple graphs")
                if not (0 <= u < n and 0 <= v < n):
                    raise InvalidInputError(f"graph {g}: edge ({u}, {v}) refers to a node outside 0..{n - 1}")
                key = (min(u, v), max(u, v))
                if key not in seen:
                    seen.add(key)
                    kept.append(key)
                    kept_lab.append(lab)
            edge_parts.append(np.asarray(kept, dtype=np.int64).reshape(-1, 2))
            elab_parts.append(_vocab_index(kept_lab, edge_vocab, edge_index))
            node_ptr.append(node_ptr[-1] + n)
            edge_ptr.append(edge_ptr[-1] + len(kept))
        def cat(parts, dt):
            return np.concatenate(parts).astype(dt) if parts else np.zeros(0, dt)

        E = np.concatenate(edge_parts) if edge_parts else np.zeros((0, 2), np.int64)
        return cls(node_ptr, cat(lab_parts, np.int32), edge_ptr, E, cat(elab_parts, np.int32), node_vocab, edge_vocab)

    @classmethod
    def from_networkx(cls, graphs, node_label="label", edge_label="label"):
        """Build from networkx graphs; labels are read from the node and edge attributes named."""
        node_labels, edges, edge_labels = [], [], []
        for g, graph in enumerate(graphs):
            if graph.is_directed():
                raise InvalidInputError(f"graph {g} is directed; convert it with graph.to_undirected()")
            nodes = list(graph.nodes)
            pos = {v: i for i, v in enumerate(nodes)}
            node_labels.append([graph.nodes[v].get(node_label, "-") for v in nodes])
            edges.append([(pos[u], pos[v]) for u, v in graph.edges])
            edge_labels.append([graph.edges[u, v].get(edge_label, "-") for u, v in graph.edges])
        return cls.from_edge_lists(node_labels, edges, edge_labels)

    @classmethod
    def from_smiles(cls, smiles):
        """Molecules from SMILES strings (RDKit): atom symbols label nodes, bond types label edges.

        Hydrogens stay implicit. Needs the ``chem`` extra (``pip install "skframe[chem]"``).
        """
        return cls.from_edge_lists(*smiles_to_edge_lists(smiles))

    @classmethod
    def from_sdf(cls, path):
        """Molecules of an SDF file (RDKit), labelled as :meth:`from_smiles` labels them.

        Atom symbols (with explicit hydrogens and charges) label nodes, bond types label
        edges; hydrogens drawn as atoms are removed. A record that cannot be read raises a
        :class:`~skframe.exceptions.DataFormatError` naming its number (from 1). The
        records' data fields are read by :func:`skframe.graphs.chem.read_sdf`. Needs the
        ``chem`` extra (``pip install "skframe[chem]"``).
        """
        nodes, edges, elabels, _, _ = read_sdf(path)
        return cls.from_edge_lists(nodes, edges, elabels)

    # ------------------------------------------------------------------ collection protocol
    def __len__(self):
        return int(self.node_ptr.shape[0] - 1)

    def n_nodes(self, g):
        """Number of nodes of graph ``g``."""
        return int(self.node_ptr[g + 1] - self.node_ptr[g])

    def n_edges(self, g):
        """Number of (undirected) edges of graph ``g``."""
        return int(self.edge_ptr[g + 1] - self.edge_ptr[g])

    def take(self, indices):
        """The graphs at ``indices`` (in that order, repeats allowed) as a new batch."""
        idx = np.asarray(indices, dtype=np.int64).ravel()
        n = len(self)
        if idx.size and (idx.min() < -n or idx.max() >= n):
            raise IndexError(f"graph index out of range for a batch of {n} graphs")
        idx = np.where(idx < 0, idx + n, idx)
        nn = np.diff(self.node_ptr)[idx]
        ne = np.diff(self.edge_ptr)[idx]
        node_sel = _ranges(self.node_ptr[idx], nn)
        edge_sel = _ranges(self.edge_ptr[idx], ne)
        return GraphBatch(np.concatenate([[0], np.cumsum(nn)]), self.node_labels[node_sel],
                          np.concatenate([[0], np.cumsum(ne)]), self.edges[edge_sel], self.edge_labels[edge_sel],
                          self.node_vocab, self.edge_vocab)

    def to_state(self):
        return {"node_ptr": self.node_ptr, "node_labels": self.node_labels, "edge_ptr": self.edge_ptr,
                "edges": self.edges, "edge_labels": self.edge_labels,
                "node_vocab": list(self.node_vocab), "edge_vocab": list(self.edge_vocab)}

    @classmethod
    def from_state(cls, state):
        return cls(state["node_ptr"], state["node_labels"], state["edge_ptr"], state["edges"], state["edge_labels"],
                   state["node_vocab"], state["edge_vocab"])

    def item_keys(self):
        """One hashable key per graph: equal keys for graphs stored identically (labels and edges in order)."""
        out = []
        for g in range(len(self)):
            labels, edges, elabels = self.graph(g)
            out.append((tuple(labels), tuple(edges), tuple(elabels)))
        return out

    # ------------------------------------------------------------------ codes for kernels
    def node_codes(self):
        """Stable 63-bit code of every node label (int64, one per node of the batch)."""
        table = np.array([label_code(v) for v in self.node_vocab] or [0], dtype=np.int64)
        return table[self.node_labels]

    def edge_codes(self):
        """Stable 63-bit code of every edge label (int64, one per edge of the batch)."""
        table = np.array([label_code(v) for v in self.edge_vocab] or [0], dtype=np.int64)
        return table[self.edge_labels]

    # ------------------------------------------------------------------ conversions
    def graph(self, g):
        """Graph ``g`` as (node labels, edges, edge labels) Python lists."""
        a, b = self.node_ptr[g], self.node_ptr[g + 1]
        c, d = self.edge_ptr[g], self.edge_ptr[g + 1]
        return ([self.node_vocab[i] for i in self.node_labels[a:b]], [tuple(map(int, e)) for e in self.edges[c:d]],
                [self.edge_vocab[i] for i in self.edge_labels[c:d]])

    def to_networkx(self, node_label="label", edge_label="label"):
        """The graphs as a list of ``networkx.Graph`` (needs networkx)."""
        nx = deps.require("networkx", "GraphBatch.to_networkx")
        out = []
        for g in range(len(self)):
            labels, edges, elabels = self.graph(g)
            G = nx.Graph()
            G.add_nodes_from((i, {node_label: lab}) for i, lab in enumerate(labels))
            G.add_edges_from((u, v, {edge_label: lab}) for (u, v), lab in zip(edges, elabels))
            out.append(G)
        return out

    def to_smiles(self):
        """Canonical SMILES of each graph read as a molecule (needs RDKit)."""
        return edge_lists_to_smiles([self.graph(g) for g in range(len(self))])

    def write_jsonl(self, path):
        """Write one JSON object per line: ``{"nodes": [...], "edges": [[u, v], ...], "edge_labels": [...]}``."""
        lines = []
        for g in range(len(self)):
            labels, edges, elabels = self.graph(g)
            lines.append(json.dumps({"nodes": labels, "edges": [list(e) for e in edges], "edge_labels": elabels}))
        folder = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(prefix=".graphs-", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write("\n".join(lines) + "\n")
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise

    read_jsonl = staticmethod(lambda path: read_jsonl(path))

    def __repr__(self):
        return f"GraphBatch({len(self)} graphs, {self.node_labels.size} nodes, {self.edges.shape[0]} edges)"


def _ranges(starts, lengths):
    """Concatenated ``arange(s, s + l)`` for each pair, without a Python loop."""
    lengths = np.asarray(lengths, dtype=np.int64)
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    offsets = np.repeat(np.asarray(starts, dtype=np.int64) - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
    return np.arange(total, dtype=np.int64) + offsets


#: what one line of a graph JSON-lines file holds (named in the format errors)
JSONL_LINE = '{"nodes": [labels], "edges": [[u, v], ...], "edge_labels": [labels]}'


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
def _scan_depth(line):
    """The nesting depth of arrays and objects on a JSON line; strings are skipped (their brackets do not count).

    >>> _scan_depth('{"nodes": ["[C]"], "edges": [[0, 1]]}')
    3
    """
    text = _JSON_STRING.sub('""', line)
    codes = np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    step = np.isin(codes, (ord("["), ord("{"))).astype(np.int64) - np.isin(codes, (ord("]"), ord("}")))
    return int(np.cumsum(step).max(initial=0))


def iter_jsonl_graphs(path, line_format=JSONL_LINE):
    """Yield ``(lineno, obj, node_labels, edges, edge_labels)`` for each graph line of a JSON-lines file.

    ``obj`` is the parsed JSON object (other keys, e.g. targets, stay in it); blank lines are
    skipped; a line that is not a graph object raises :class:`DataFormatError` naming its line
    number and ``line_format``. A line nested deeper than the ``json_depth`` limit, or a graph
    with more nodes than the ``graph_nodes`` limit (:mod:`skframe.limits`), is refused before
    it is built.
    """
    max_depth, max_nodes = limit("json_depth"), limit("graph_nodes")
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            if line.count("[") + line.count("{") > max_depth:  # the parser recurses once per level
                check("json_depth", _scan_depth(line), f"{path}, line {lineno}: the JSON")
            try:
                obj = json.loads(line)
                if isinstance(obj, dict) and isinstance(obj.get("nodes"), list) and len(obj["nodes"]) > max_nodes:
                    # refused before a label, an index or a kernel's per-node-pair table is built
                    check("graph_nodes", len(obj["nodes"]), f"{path}, line {lineno}: the graph")
                nodes = [str(v) for v in obj["nodes"]]
                edges = [(int(u), int(v)) for u, v in obj.get("edges", [])]
                edge_labels = [str(v) for v in obj.get("edge_labels", ["-"] * len(edges))]
            except DataFormatError:
                raise
            except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
                raise DataFormatError(
                    f"{path}, line {lineno}: not a graph object ({type(exc).__name__}: {exc}); each line must be "
                    f"{line_format}"
                ) from exc
            yield lineno, obj, nodes, edges, edge_labels


def read_jsonl(path):
    """Read graphs written one JSON object per line (see :meth:`GraphBatch.write_jsonl`)."""
    node_labels, edges, edge_labels = [], [], []
    for _, _, nodes, e, el in iter_jsonl_graphs(path):
        node_labels.append(nodes)
        edges.append(e)
        edge_labels.append(el)
    if not node_labels:
        raise DataFormatError(f"{path} holds no graph; write one JSON object per line")
    return GraphBatch.from_edge_lists(node_labels, edges, edge_labels)
