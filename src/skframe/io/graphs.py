"""Graph data files: labelled graphs and their numeric targets from JSON lines.

One JSON object per graph and line::

    {"nodes": [labels], "edges": [[u, v], ...], "edge_labels": [labels], "y": 1.25}

``edge_labels`` may be left out (every edge gets ``-``); the target is the number (or list
of numbers) under ``y`` or under the keys asked for. Files to predict need no target. The
graphs come back as one :class:`skframe.graphs.GraphBatch`, the targets as a float64 matrix.
Molecule files (SDF, SMILES columns) are read by :mod:`skframe.io.molecules`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from skframe.exceptions import DataFormatError, InvalidInputError
from skframe.graphs.batch import JSONL_LINE, GraphBatch, iter_jsonl_graphs

__all__ = ["file_kind", "read_graph_jsonl", "target_row", "stack_targets"]


def file_kind(path):
    """``jsonl``, ``sdf`` or ``csv`` by the file's suffix (any other name is read as CSV)."""
    suffix = Path(str(path)).suffix.lower()
    return {".jsonl": "jsonl", ".sdf": "sdf"}.get(suffix, "csv")


def target_row(values, where):
    """The numbers of one target row as floats; ``where`` names the row in the error."""
    try:
        out = [float(v) for v in values]
    except (TypeError, ValueError):
        raise DataFormatError(f"{where} {values!r} is not a number") from None
    if not all(np.isfinite(out)):
        raise DataFormatError(f"{where} {values!r} is missing or not finite; drop or fill that row")
    return out


def stack_targets(rows, path):
    """Target rows of one file as an (n, d) float64 matrix; every row must have d values."""
    widths = {len(r) for r in rows}
    if len(widths) != 1:
        raise DataFormatError(f"{path}: the targets have {sorted(widths)} values on different rows; give every row "
                              "the same number")
    return np.asarray(rows, dtype=np.float64)


def read_graph_jsonl(path, fields=None, with_targets=True):
    """Graphs of a JSON-lines file, and their targets.

    Parameters
    ----------
    path : str or Path
    fields : list of str, optional
        Keys of the targets in each object (default ``["y"]``); a key may hold a list.
    with_targets : bool, default=True
        Read the targets; when False the second result is None.

    Returns
    -------
    G : GraphBatch
    Y : ndarray of shape (n, d) or None

    Raises
    ------
    DataFormatError
        Naming the file and line: a self-loop or an edge to a missing node, edge labels
        that do not match the edges, a missing or non-numeric target, no graph at all.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp(), "g.jsonl")
    >>> _ = path.write_text('{"nodes": ["C", "O"], "edges": [[0, 1]], "y": 2.0}\\n')
    >>> G, Y = read_graph_jsonl(path)
    >>> len(G), Y.tolist()
    (1, [[2.0]])
    """
    nodes, edges, elabels, Y = [], [], [], []
    keys = list(fields or []) or ["y"]
    line_format = JSONL_LINE[:-1] + ', "y": target}'
    for lineno, obj, n, e, el in iter_jsonl_graphs(path, line_format):
        bad = [(u, v) for u, v in e if u == v or not (0 <= u < len(n) and 0 <= v < len(n))]
        if bad or len(el) != len(e):
            problem = (f"edge {list(bad[0])} is a self-loop or names a node outside 0..{len(n) - 1}" if bad
                       else f"{len(e)} edges but {len(el)} edge labels")
            raise DataFormatError(f"{path}, line {lineno}: {problem}; fix that graph")
        if with_targets:
            row = []
            for key in keys:
                if key not in obj:
                    raise DataFormatError(f"{path}, line {lineno}: no target {key!r}; give each graph a "
                                          f'"{key}" number, or name its key with --target-field')
                value = obj[key]
                row.extend(value if isinstance(value, list) else [value])
            Y.append(target_row(row, f"{path}, line {lineno}: target"))
        nodes.append(n)
        edges.append(e)
        elabels.append(el)
    if not nodes:
        raise DataFormatError(f"{path} holds no graph; write one JSON object per line")
    try:
        G = GraphBatch.from_edge_lists(nodes, edges, elabels)
    except InvalidInputError as exc:  # name the file: "graph 3" is its fourth graph
        raise DataFormatError(f"{path}: {exc}") from exc
    return G, (stack_targets(Y, path) if with_targets else None)
