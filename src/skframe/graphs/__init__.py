"""Graphs, molecules and strings as model inputs and outputs.

:class:`GraphBatch` and :class:`StringBatch` are input collections
(:class:`skframe.contract.collections.InputCollection`): sketches, chunked kernels and model
files handle them like arrays. Graph and string kernels are registered by the
built-in ``skframe_graphs`` plugin (``vertex-histogram``, ``edge-histogram``,
``shortest-path``, ``wl-subtree``, ``nspd``, ``core-wl``, ``ngram``).
"""

from skframe.graphs.batch import GraphBatch, label_code, read_jsonl
from skframe.graphs.strings import StringBatch

__all__ = ["GraphBatch", "StringBatch", "label_code", "read_jsonl"]
