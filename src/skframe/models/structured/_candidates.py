"""Candidate sets of the structured decoders: validation, embedding, pools and their cache.

A decoder scores ``<h(x), psi(c)> - k_Y(c, c)/2 = g(x) . embed(c) + bias(c)`` over
candidate sets given in one of four ways (see ``OutputKernelRegressor.predict``):
the distinct training outputs (embedded at fit and saved with the model), one global
array, one array per query, or a :class:`CandidatePool` (a shared pool with one list
of pool rows per query). The decoders read candidates through a *source*: an object
with ``n_candidates``, ``width`` and ``block(start, stop) -> (embeddings, bias)``.

Embeddings of a global array or a pool are computed once and kept in a bounded
process-wide cache (:func:`clear_candidate_cache`), never in the model: predicting
does not change what a model saves. Candidate rows keep their dtype (e.g. uint8 or
bool fingerprints); they are converted to float64 block by block while embedded.
"""

from __future__ import annotations

import threading
import weakref
import zlib
from collections import OrderedDict

import numpy as np
import scipy.sparse as sp

from skframe.contract.collections import is_collection
from skframe.exceptions import InvalidInputError
from skframe.options import DEFAULT_OPTIONS

__all__ = ["CandidatePool", "clear_candidate_cache", "candidate_cache_info", "CACHE_BYTES"]

# Bound of the process-wide embedding cache (all models together).
CACHE_BYTES = 512 * 2**20
CACHE_ENTRIES = 8
# Arrays up to this size are fingerprinted in full; larger ones by a strided sample of rows plus their identity.
FULL_HASH_BYTES = 256 * 2**20


def check_outputs(Y, name="Y"):
    """2-D float64 outputs, dense or CSR, finite (training outputs and per-query sets); collections as they are."""
    if is_collection(Y):
        if len(Y) == 0:
            raise InvalidInputError(f"{name} is empty; at least one output is needed")
        return Y
    if sp.issparse(Y):
        Y = sp.csr_matrix(Y, dtype=np.float64)
        data = Y.data
    else:
        Y = np.asarray(Y, dtype=np.float64)
        if Y.ndim == 1:
            Y = Y[:, None]
        if Y.ndim != 2:
            raise InvalidInputError(f"{name} must be 2-D (n_samples, n_output_features); got shape {Y.shape}")
        data = Y
    if not np.all(np.isfinite(data)):
        raise InvalidInputError(f"{name} contains NaN or infinity; clean or impute it first")
    return Y


def check_candidate_rows(C, n_outputs, name="candidates"):
    """A 2-D candidate array (dense of any numeric or bool dtype, or CSR) with ``n_outputs`` columns, unconverted.

    Collections of structured outputs (graphs, strings) are taken as they are.
    """
    if is_collection(C):
        if n_outputs is not None:
            raise InvalidInputError(f"{name} is a {type(C).__name__} but the model was fitted on array outputs")
        return C
    if n_outputs is None:
        raise InvalidInputError(f"{name} is an array but the model was fitted on structured outputs; give a collection "
                                "of the same kind (e.g. a GraphBatch)")
    if sp.issparse(C):
        C = C.tocsr()
        data = C.data
    else:
        C = np.asarray(C)
        if C.ndim == 1:
            C = C[:, None]
        if C.ndim != 2:
            raise InvalidInputError(f"{name} must be 2-D (n_candidates, n_output_features); got shape {C.shape}")
        data = C
    if not (np.issubdtype(C.dtype, np.number) or C.dtype == np.bool_):
        raise InvalidInputError(f"{name} has dtype {C.dtype}; give a numeric or boolean array")
    if np.issubdtype(C.dtype, np.inexact) and not np.all(np.isfinite(data)):
        raise InvalidInputError(f"{name} contains NaN or infinity; clean or drop those candidates")
    if C.shape[1] != n_outputs:
        raise InvalidInputError(f"{name} have {C.shape[1]} columns but the training outputs have {n_outputs}")
    return C


def _float_rows(C, start, stop):
    """Rows ``start:stop`` as float64 (a block-sized copy only)."""
    if is_collection(C):
        return C.take(np.arange(start, stop))
    block = C[start:stop]
    if sp.issparse(block):
        return block.astype(np.float64) if block.dtype != np.float64 else block
    return np.ascontiguousarray(block, dtype=np.float64)


def embed_candidates(bases, C, start=0, stop=None):
    """Embeddings (one C-contiguous array per basis) and bias ``-k_Y(c, c)/2`` (None if normalised) of rows of C."""
    stop = C.shape[0] if stop is None else stop
    n = stop - start
    width = max([b.n_components for b in bases] + [1 if is_collection(C) else C.shape[1]])
    step = DEFAULT_OPTIONS.rows_per_block(width)
    E = [np.empty((n, b.n_components)) for b in bases]
    bias = None if bases[0].normalized else np.empty(n)
    for a in range(start, stop, step):
        z = min(stop, a + step)
        Cb = _float_rows(C, a, z)
        for out, b in zip(E, bases):
            out[a - start : z - start] = b.embed(Cb)
        if bias is not None:
            bias[a - start : z - start] = -0.5 * bases[0].self_kernel(Cb)
    return E, bias


class EmbeddedCandidates:
    """A candidate source over precomputed embeddings, optionally gathered through a row index.

    ``block(start, stop)`` returns rows ``index[start:stop]`` of the embeddings (all of
    them in order without an index).
    """

    def __init__(self, embeddings, bias=None, index=None):
        self.embeddings = list(embeddings)
        self.bias = bias
        self.index = index
        self.n_candidates = int(self.embeddings[0].shape[0] if index is None else index.shape[0])
        self.width = int(sum(E.shape[1] for E in self.embeddings))

    def block(self, start, stop):
        if self.index is None:
            b = None if self.bias is None else self.bias[start:stop]
            return [E[start:stop] for E in self.embeddings], b
        rows = self.index[start:stop]
        return [E[rows] for E in self.embeddings], None if self.bias is None else self.bias[rows]


class StreamedCandidates:
    """A candidate source embedding the rows of C block by block on demand (nothing kept)."""

    def __init__(self, bases, C):
        self.bases = bases
        self.C = C
        self.n_candidates = int(C.shape[0])
        self.width = int(sum(b.n_components for b in bases))

    def block(self, start, stop):
        return embed_candidates(self.bases, self.C, start, stop)


def _checksum(h, arr):
    """Fold the bytes of ``arr`` into the pair of checksums ``h`` (CRC-32 and Adler-32: cheap, no copy)."""
    buf = memoryview(np.ascontiguousarray(arr)).cast("B")
    return zlib.crc32(buf, h[0]), zlib.adler32(buf, h[1])


def fingerprint(C):
    """A key for the content of a candidate array: kind, shape, dtype and two checksums of its bytes.

    A cheap fingerprint (a few ms for a 10 MB pool), enough to tell an edited array
    from the one embedded before; arrays over ``FULL_HASH_BYTES`` are checksummed on a
    strided sample of rows and also keyed by their identity, so a large pool edited
    in place between calls must be passed as a new array.
    """
    h = (0, 1)
    if is_collection(C):
        state = C.to_state()
        for key in sorted(state):
            value = state[key]
            h = _checksum(h, value if isinstance(value, np.ndarray) else np.frombuffer(repr(value).encode(), np.uint8))
        return (type(C).__name__, len(C), h, None)
    n = C.shape[0]
    nbytes = C.data.nbytes + C.indices.nbytes if sp.issparse(C) else C.nbytes
    sample = nbytes > FULL_HASH_BYTES
    rows = np.unique(np.linspace(0, n - 1, num=min(n, 4096)).astype(np.int64)) if sample and n else slice(None)
    if sp.issparse(C):
        part = C[rows]
        for a in (part.indptr, part.indices, part.data):
            h = _checksum(h, a)
    else:
        h = _checksum(h, C[rows])
    kind = "sparse" if sp.issparse(C) else "dense"
    return (kind, tuple(C.shape), str(C.dtype), h, id(C) if sample else None)


class _EmbeddingCache:
    """Least-recently-used embeddings of candidate arrays, per fitted model, bounded in bytes and entries.

    Entries are keyed by the model's first draw (held weakly: a refit or a discarded
    model never matches again) and the array's :func:`fingerprint`.
    """

    def __init__(self, max_bytes=CACHE_BYTES, max_entries=CACHE_ENTRIES):
        self.max_bytes = max_bytes
        self.max_entries = max_entries
        self.entries = OrderedDict()
        self._lock = threading.Lock()  # predictions may run in several threads

    def get(self, owner, key):
        with self._lock:
            entry = self.entries.get((id(owner), key))
            if entry is None or entry[0]() is not owner:
                return None
            self.entries.move_to_end((id(owner), key))
            return entry[1]

    def put(self, owner, key, value, nbytes):
        if nbytes > self.max_bytes:
            return
        with self._lock:
            self.entries = OrderedDict((k, e) for k, e in self.entries.items() if e[0]() is not None)
            self.entries[(id(owner), key)] = (weakref.ref(owner), value, nbytes)
            while len(self.entries) > self.max_entries or sum(e[2] for e in self.entries.values()) > self.max_bytes:
                self.entries.popitem(last=False)

    def clear(self):
        with self._lock:
            self.entries.clear()


_CACHE = _EmbeddingCache()


def clear_candidate_cache():
    """Forget every cached candidate embedding (they are recomputed on the next call)."""
    _CACHE.clear()


def candidate_cache_info():
    """``{"entries": ..., "bytes": ..., "max_bytes": ...}`` of the candidate embedding cache."""
    live = [e for e in _CACHE.entries.values() if e[0]() is not None]
    return {"entries": len(live), "bytes": int(sum(e[2] for e in live)), "max_bytes": _CACHE.max_bytes}


def _embedding_bytes(bases, n_rows):
    return int(n_rows) * sum(b.n_components for b in bases) * 8


def array_source(owner, bases, C):
    """The source of a global candidate array: embedded once and cached when it fits the cache, else streamed."""
    if _embedding_bytes(bases, C.shape[0]) > _CACHE.max_bytes:
        return StreamedCandidates(bases, C)  # never held whole: embedded block by block while decoding
    return EmbeddedCandidates(*cached_embeddings(owner, bases, C))


def pool_source(owner, bases, pool, indices):
    """The source of a pool's gathered candidates ``pool[indices]``.

    The whole pool is embedded once and cached when its embeddings fit the cache; a
    larger pool has only the rows the queries use embedded, for this call.
    """
    if _embedding_bytes(bases, pool.shape[0]) <= _CACHE.max_bytes:
        E, bias = cached_embeddings(owner, bases, pool)
        return EmbeddedCandidates(E, bias, index=indices)
    used, where = np.unique(indices, return_inverse=True)
    E, bias = embed_candidates(bases, pool[used])
    return EmbeddedCandidates(E, bias, index=where.astype(np.int64).ravel())


def cached_embeddings(owner, bases, C):
    """``(embeddings, bias)`` of all rows of C, from the cache or computed once (and cached when small enough)."""
    key = fingerprint(C)
    hit = _CACHE.get(owner, key)
    if hit is not None:
        return hit
    E, bias = embed_candidates(bases, C)
    nbytes = sum(e.nbytes for e in E) + (0 if bias is None else bias.nbytes)
    _CACHE.put(owner, key, (E, bias), nbytes)
    return E, bias


class CandidatePool:
    """A candidate pool shared by many queries, with the pool rows each query may return.

    The pool is embedded once per call (and cached across calls), then each query's
    candidates are gathered from it, instead of embedding one copy of every
    candidate per query (e.g. metabolite identification, where the candidate lists of
    test spectra overlap in a common molecule database).

    Parameters
    ----------
    pool : array of shape (N, d) or sparse matrix
        Pool outputs, of any numeric or boolean dtype (kept as is; e.g. uint8 fingerprints).
    index_lists : sequence of int sequences, or int array of shape (n_queries, k)
        ``index_lists[i]``: rows of ``pool`` that query i chooses from, in the order its
        local indices (``predict_topk``) refer to.

    Examples
    --------
    >>> import numpy as np
    >>> pool = np.eye(4, dtype=np.uint8)
    >>> cp = CandidatePool(pool, [[0, 2], [3, 1, 2]])
    >>> len(cp), cp.rows(1).tolist()
    (2, [[0, 0, 0, 1], [0, 1, 0, 0], [0, 0, 1, 0]])
    """

    def __init__(self, pool, index_lists):
        if not (sp.issparse(pool) or isinstance(pool, np.ndarray) or is_collection(pool)):
            pool = np.asarray(pool)
        if not is_collection(pool) and getattr(pool, "ndim", 2) != 2:
            raise InvalidInputError(f"pool must be 2-D (n_pool, n_output_features); got shape {pool.shape}")
        self.pool = pool.tocsr() if sp.issparse(pool) else pool
        if isinstance(index_lists, np.ndarray) and index_lists.ndim == 2:
            lists = list(index_lists)
        else:
            lists = [np.asarray(ix).ravel() for ix in index_lists]
        counts = np.array([len(ix) for ix in lists], dtype=np.int64)
        self.offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        flat = np.concatenate(lists) if lists else np.empty(0)
        self.indices = self._check_indices(flat)

    def _check_indices(self, flat):
        flat = np.asarray(flat)
        if flat.size and not np.issubdtype(flat.dtype, np.integer):
            raise InvalidInputError(f"index_lists must hold integer pool rows; got dtype {flat.dtype}")
        flat = flat.astype(np.int64)
        n_pool = self.pool.shape[0]
        if flat.size and (flat.min() < 0 or flat.max() >= n_pool):
            raise InvalidInputError(f"index_lists hold rows outside the pool [0, {n_pool}); fix the candidate lists")
        return flat

    @classmethod
    def from_offsets(cls, pool, indices, offsets):
        """Build from flat ``indices`` and ``offsets`` (query i: ``indices[offsets[i]:offsets[i+1]]``)."""
        offsets = np.asarray(offsets, dtype=np.int64)
        indices = np.asarray(indices)
        if offsets.ndim != 1 or offsets.size < 1 or offsets[0] != 0 or offsets[-1] != indices.size \
                or np.any(np.diff(offsets) < 0):
            raise InvalidInputError(
                f"offsets must be non-decreasing from 0 to len(indices)={indices.size}; got {offsets[:3]}..."
            )
        return cls(pool, [indices[a:z] for a, z in zip(offsets[:-1], offsets[1:])])

    def __len__(self):
        return int(self.offsets.shape[0] - 1)

    def rows(self, i):
        """Pool rows of query i (its candidate set)."""
        return self.pool[self.indices[self.offsets[i] : self.offsets[i + 1]]]

    def subset(self, queries):
        """The pool restricted to some queries (same pool object, so its embeddings stay cached)."""
        queries = np.asarray(queries, dtype=np.int64).ravel()
        return CandidatePool(self.pool, [self.indices[self.offsets[q] : self.offsets[q + 1]] for q in queries])

    def pool_index(self, local):
        """Map local indices (n_queries, k) from ``predict_topk`` to pool rows (``-1`` stays ``-1``)."""
        local = np.asarray(local, dtype=np.int64)
        if local.shape[0] != len(self):
            raise InvalidInputError(f"{local.shape[0]} rows of indices for a pool of {len(self)} queries")
        pos = self.offsets[:-1, None] + np.maximum(local, 0)
        out = self.indices[np.minimum(pos, max(self.indices.size - 1, 0))] if self.indices.size else np.zeros_like(pos)
        return np.where(local >= 0, out, -1)

    def local_index(self, pool_rows):
        """Position of ``pool_rows[i]`` in query i's list (its first occurrence), ``-1`` where absent."""
        pool_rows = np.asarray(pool_rows, dtype=np.int64).ravel()
        if pool_rows.shape[0] != len(self):
            raise InvalidInputError(f"{pool_rows.shape[0]} pool rows for a pool of {len(self)} queries")
        out = np.full(len(self), -1, dtype=np.int64)
        for i, (a, z) in enumerate(zip(self.offsets[:-1], self.offsets[1:])):
            hit = np.flatnonzero(self.indices[a:z] == pool_rows[i])
            if hit.size:
                out[i] = hit[0]
        return out


class _LegacyCandidates:
    """Lets older model files, which saved their prediction caches, load (the caches are not used)."""

    __module__ = "skframe.models.structured"
    __qualname__ = "_ModelCandidates"

    def __init__(self):
        pass


class _LegacyEmbeddingCache:
    """Lets older model files, which saved their prediction caches, load (the caches are not used)."""

    __module__ = "skframe.models.structured"
    __qualname__ = "_EmbeddingCache"

    def __init__(self):
        pass
