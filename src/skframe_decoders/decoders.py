"""Decoders: from surrogate coordinates ``g(x)`` in R^p to outputs.

``IdentityDecoder``
    Returns the surrogate itself, or ``g(x) @ B`` when basis vectors ``B`` (p x d)
    are given (a linear output kernel, where ``h(x)`` is a vector of R^d).

``CandidateDecoder``
    Maximum inner-product search (El Ahmad et al., "Sketch In, Sketch Out", AISTATS 2024, eq. 5;
    El Ahmad, "Learning Deep Kernel Networks: Application to Efficient and Robust
    Structured Prediction", PhD thesis, Institut Polytechnique de Paris 2024, eq. 5.12)::

        score(x, c) = agg_d( g_d(x) . psi_d(c) ) + bias(c),   bias(c) = -k_Y(c, c) / 2

    (``bias`` is zero for a normalised output kernel), over a global candidate set
    or a per-sample one. The score matrix is never formed: the search runs over
    blocks of test rows x candidates within a memory budget and keeps a running
    top-k per row, found by partial selection (``np.argpartition``). Ties are
    broken by the smallest candidate index, exactly as ``np.argmax`` on the full
    score matrix would.

Device arrays: surrogates and candidate embeddings of another array namespace (CuPy on a GPU)
are scored with that namespace, and each score block is cut on the device to the entries that
can reach a row's top k (its k best, ties included) before the exact selection on the host; only
those few entries per row leave the device. The selection itself (:func:`select_topk`,
:func:`contenders` and the running merge) is in :mod:`skframe_decoders._topk`, re-exported here.
"""

from __future__ import annotations

import numpy as np

from skframe.plugin.api import Decoder, DecoderTags, Interval, InvalidParameterError, Options, validate_component
from skframe.plugin.toolbox import get_array_module, to_numpy
from skframe_decoders._topk import contenders, merge_topk, select_topk

__all__ = ["IdentityDecoder", "CandidateDecoder", "ArrayCandidates", "select_topk", "contenders"]

BLOCK_ENTRIES = 4_000_000


class ArrayCandidates:
    """Candidate source over precomputed embeddings.

    Any object with ``n_candidates`` and ``block(start, stop) -> (embeddings, bias)``
    is a candidate source; ``embeddings`` is a list with one ``(stop - start, p_d)``
    array per ensemble member and ``bias`` an array of shape ``(stop - start,)`` or None.

    Parameters
    ----------
    embeddings : ndarray of shape (n_c, p) or list of such arrays (one per draw)
    bias : ndarray of shape (n_c,), optional
    """

    def __init__(self, embeddings, bias=None):
        if not isinstance(embeddings, (list, tuple)):
            embeddings = [embeddings]
        self.embeddings = [_keep_namespace(E) for E in embeddings]
        n = {E.shape[0] for E in self.embeddings}
        if len(n) != 1:
            raise InvalidParameterError(f"candidate embeddings have different numbers of rows {sorted(n)}")
        self.n_candidates = n.pop()
        xp = get_array_module(self.embeddings[0])
        self.bias = None if bias is None else xp.asarray(bias, dtype=np.float64).ravel()

    def block(self, start, stop):
        b = None if self.bias is None else self.bias[start:stop]
        return [E[start:stop] for E in self.embeddings], b


def _keep_namespace(A):
    """A device array as it is, anything else as a NumPy array."""
    return A if get_array_module(A) is not np else np.asarray(A)


def _as_list(G):
    if not isinstance(G, (list, tuple)):
        return [_keep_namespace(G)]
    return [_keep_namespace(g) for g in G]


def _scores(G_list, E_list, bias, aggregate, precision="auto", rows=None):
    """Aggregated score block ``agg_d(G_d @ E_d^T) + bias``.

    With ``rows`` (one row of G per candidate) the scores are the vector of row-wise
    products ``G_d[rows[c]] . E_d[c]`` instead. ``precision="auto"`` multiplies in
    float32 when a draw's candidate embeddings are float32 (the queries are cast), else
    in float64; ``"float64"``/``"float32"`` force it.
    """
    if len(G_list) != len(E_list):
        raise InvalidParameterError(
            f"{len(G_list)} surrogate predictions but {len(E_list)} candidate embeddings; one per draw is needed"
        )
    S = None
    xp = get_array_module(G_list[0])  # scores in the namespace of the queries (on their device)
    for g, E in zip(G_list, E_list):
        single = precision == "float32" or (precision == "auto" and E.dtype == np.float32)
        dt = np.float32 if single else np.float64
        g, E = g.astype(dt, copy=False), E.astype(dt, copy=False)
        block = g @ E.T if rows is None else xp.einsum("cp,cp->c", E, g[rows])
        if S is None:
            S = block if getattr(block.flags, "writeable", True) else block.copy()
        elif aggregate == "max":
            xp.maximum(S, block, out=S)
        else:
            S += block
    if aggregate == "mean" and len(G_list) > 1:
        S /= len(G_list)
    if bias is not None:
        S += xp.asarray(bias)
    return S


class IdentityDecoder(Decoder):
    """Return the surrogate prediction (mapped through the basis vectors when given).

    Examples
    --------
    >>> import numpy as np
    >>> IdentityDecoder().decode(np.ones((2, 3))).shape
    (2, 3)
    """

    name = "identity"
    __skframe_tags__ = DecoderTags(candidates=False)  # maps the surrogate to outputs, searches nothing

    def __init__(self):
        pass

    @property
    def params(self):
        return {}

    def decode(self, G, *, basis_vectors=None, **context):
        """Average the draws' outputs ``g_d(x) @ B_d`` (or ``g_d(x)`` without basis vectors)."""
        G_list = _as_list(G)
        if basis_vectors is None:
            outs = G_list
        else:
            B_list = _as_list(basis_vectors)
            outs = [g @ B for g, B in zip(G_list, B_list)]
        if len(outs) > 1 and len({o.shape for o in outs}) != 1:
            raise InvalidParameterError("the draws give outputs of different shapes; pass basis_vectors to decode")
        return outs[0] if len(outs) == 1 else np.mean(outs, axis=0)


class CandidateDecoder(Decoder):
    """Chunked maximum inner-product search over candidate embeddings.

    Parameters
    ----------
    block_entries : int, default 4_000_000
        Budget (float64 entries) of one score block, rows x candidates (32 MB).
    chunk_rows : int, optional
        Test rows per block (default: up to 1024, within the budget).
    precision : {"auto", "float64", "float32"}, default "auto"
        Arithmetic of the score products; ``"auto"`` uses float32 only for
        candidate embeddings stored as float32 (halves time and memory for
        very large sets), else float64.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> G, E = rng.normal(size=(5, 3)), rng.normal(size=(100, 3))
    >>> idx, s = CandidateDecoder().decode(G, candidates=E, k=2)
    >>> bool((idx[:, 0] == np.argmax(G @ E.T, axis=1)).all())
    True
    """

    name = "candidates"
    __skframe_tags__ = DecoderTags(candidates=True)
    _parameter_constraints = {"block_entries": [Interval("int", 1, None)],
                              "chunk_rows": [Interval("int", 1, None), None],
                              "precision": [Options("auto", "float64", "float32")]}

    def __init__(self, block_entries=BLOCK_ENTRIES, chunk_rows=None, precision="auto"):
        self.block_entries, self.chunk_rows, self.precision = block_entries, chunk_rows, precision
        validate_component(self)

    @property
    def params(self):
        return {"block_entries": self.block_entries, "chunk_rows": self.chunk_rows, "precision": self.precision}

    @staticmethod
    def _source(candidates, bias):
        if hasattr(candidates, "block") and hasattr(candidates, "n_candidates"):
            return candidates
        return ArrayCandidates(candidates, bias)

    def decode(self, G, *, candidates, k=1, aggregate="mean", offsets=None, bias=None, **context):
        """Top-k candidates of each row.

        Parameters
        ----------
        G : ndarray of shape (n, p) or list of them (one per ensemble draw)
        candidates : ndarray (n_c, p), list of ndarrays (one per draw) or candidate source
            Embeddings ``psi_tilde(c)``; a source computes them block by block.
        k : int, default 1
        aggregate : {"mean", "max"}
            How the draws' scores are combined (El Ahmad, PhD thesis 2024, eq. 5.19).
        offsets : ndarray of shape (n + 1,), optional
            Per-sample candidate sets: row i searches candidates
            ``offsets[i]:offsets[i+1]`` and its indices are local to that range.
        bias : ndarray of shape (n_c,), optional
            Added to the scores (``-k_Y(c, c)/2``) when ``candidates`` is an array.

        Returns
        -------
        indices : ndarray of int, shape (n, k)
            Best first; ``-1`` where a per-sample set has fewer than k candidates.
        scores : ndarray of shape (n, k)
            Matching scores; ``-inf`` for the padding.
        """
        if aggregate not in ("mean", "max"):
            raise InvalidParameterError(f"aggregate={aggregate!r}; use 'mean' or 'max'")
        k = int(k)
        if k < 1:
            raise InvalidParameterError(f"k={k} must be >= 1")
        G_list = _as_list(G)
        src = self._source(candidates, bias)
        n = G_list[0].shape[0]
        if offsets is None:
            return self._global(G_list, src, 0, src.n_candidates, k, aggregate)
        offsets = np.asarray(offsets, dtype=np.int64)
        bad_ends = offsets.shape != (n + 1,) or offsets[0] != 0 or offsets[-1] != src.n_candidates
        if bad_ends or np.any(np.diff(offsets) < 0):
            raise InvalidParameterError(
                f"offsets must be non-decreasing of length n+1={n + 1}, from 0 to the number of candidates "
                f"{src.n_candidates}"
            )
        return self._per_sample(G_list, src, offsets, k, aggregate)

    def _global(self, G_list, src, start, stop, k, aggregate):
        n = G_list[0].shape[0]
        n_c = stop - start
        rows = self.chunk_rows or max(1, min(n, 1024))
        cols = max(k, self.block_entries // max(rows, 1))
        top_i = np.full((n, k), -1, dtype=np.int64)
        top_s = np.full((n, k), -np.inf)
        for c0 in range(start, stop, cols):
            c1 = min(stop, c0 + cols)
            E_list, b = src.block(c0, c1)
            idx = np.arange(c0 - start, c1 - start, dtype=np.int64)
            for r0 in range(0, n, rows):
                r1 = min(n, r0 + rows)
                S = _scores([g[r0:r1] for g in G_list], E_list, b, aggregate, self.precision)
                S, S_idx = contenders(S, idx, k)  # device scores: cut there, exact selection on the host
                if c0 == start:
                    ti, ts = select_topk(S, S_idx, k)
                    top_i[r0:r1, : ti.shape[1]] = ti
                    top_s[r0:r1, : ts.shape[1]] = ts
                else:
                    merge_topk(S, S_idx, top_i, top_s, r0, k)
        if n_c < k:
            top_i[:, n_c:] = -1
            top_s[:, n_c:] = -np.inf
        return top_i, top_s

    def _per_sample(self, G_list, src, offsets, k, aggregate):
        n = G_list[0].shape[0]
        top_i = np.full((n, k), -1, dtype=np.int64)
        top_s = np.full((n, k), -np.inf)
        # candidates per gathered block: block_entries embedding entries (a source may declare its width)
        budget = max(1, self.block_entries // max(int(getattr(src, "width", 8)), 1))
        i = 0
        while i < n:
            lo = offsets[i]
            if offsets[i + 1] - lo > budget:  # a large set: the chunked global search on its range
                ti, ts = self._global([g[i : i + 1] for g in G_list], src, lo, offsets[i + 1], k, aggregate)
                top_i[i], top_s[i] = ti[0], ts[0]
                i += 1
                continue
            j = i + 1
            while j < n and offsets[j + 1] - lo <= budget:
                j += 1
            E_list, b = src.block(lo, offsets[j])
            self._small_sets(G_list, E_list, b, offsets[i : j + 1] - lo, i, k, aggregate, top_i, top_s)
            i = j
        return top_i, top_s

    def _small_sets(self, G_list, E_list, bias, local_offsets, r0, k, aggregate, top_i, top_s):
        """Top-k of rows ``r0, r0 + 1, ...`` over their consecutive candidate ranges in one block, vectorised.

        Each candidate is scored against its own row (one gathered row of G per candidate), the
        scores are laid out in a (rows x longest set) matrix padded with ``-inf`` and the usual
        top-k selection runs on it; padding never precedes a real candidate (larger index).
        """
        counts = np.diff(local_offsets)
        width = int(counts.max()) if counts.size else 0
        if width == 0:
            return
        if counts.size > 1 and counts.size * width > max(4 * int(counts.sum()), self.block_entries):
            for r in range(counts.size):  # very uneven sets: padding would dwarf the scores, one row at a time
                self._small_sets(G_list, [E[local_offsets[r] : local_offsets[r + 1]] for E in E_list],
                                 None if bias is None else bias[local_offsets[r] : local_offsets[r + 1]],
                                 local_offsets[r : r + 2] - local_offsets[r], r0 + r, k, aggregate, top_i, top_s)
            return
        rows = np.repeat(np.arange(counts.size), counts)
        pos = np.arange(rows.size) - np.repeat(local_offsets[:-1], counts)
        s = to_numpy(_scores(G_list, E_list, bias, aggregate, self.precision, rows=r0 + rows))
        P = np.full((counts.size, width), -np.inf)
        P[rows, pos] = s
        ti, ts = select_topk(P, np.arange(width, dtype=np.int64), k)
        pad = ti >= counts[:, None]
        ti[pad], ts[pad] = -1, -np.inf
        kk = ti.shape[1]
        top_i[r0 : r0 + counts.size, :kk] = ti
        top_s[r0 : r0 + counts.size, :kk] = ts
