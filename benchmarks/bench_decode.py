"""Decoding benchmark: 1 000 queries against 10^6 random candidates, m_Y = 200, top-10.

Two settings, each timed and with its peak memory (tracemalloc, which sees NumPy's
allocations, and the process RSS high-water mark):

``precomputed``
    The candidate embeddings psi~(c) are one (10^6 x 200) float32 array in memory
    (800 MB, counted in the peak), decoded block by block (float32 products, the
    decoder's ``precision="auto"``); checked against a brute-force full sort.
``streamed``
    A candidate source hands out embedding blocks on demand (here generated from a
    per-block seed), so nothing of size n_c x p is ever held.

Usage::

    python benchmarks/bench_decode.py [--n-queries 1000] [--n-candidates 1000000] [--p 200] [--k 10]
"""

from __future__ import annotations

import _setup  # runtime settings and sys.path, before NumPy; the measuring helpers
import numpy as np

from skframe.contract.registry import get_decoder


class RandomSource:
    """Random candidate embeddings generated per block (deterministic in the block start)."""

    def __init__(self, n, p, block, seed=0):
        self.n_candidates, self.p, self.block_size, self.seed = n, p, block, seed

    def block(self, start, stop):
        rng = np.random.default_rng([self.seed, start])
        return [rng.standard_normal((stop - start, self.p), dtype=np.float32)], None


def run(G, candidates, k):
    """``((indices, scores), seconds, tracemalloc peak)`` of the top-k decoding."""
    return _setup.traced(get_decoder("candidates").decode, G, candidates=candidates, k=k)


def main(argv=None):
    ap = _setup.parser(__doc__, n_queries=1000, n_candidates=1_000_000, p=200, k=10)
    ap.add_argument("--check", type=int, default=20, help="rows checked against a brute-force full sort")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    G = rng.standard_normal((args.n_queries, args.p))
    out = {"benchmark": "decode_topk", "n_queries": args.n_queries, "n_candidates": args.n_candidates,
           "p": args.p, "k": args.k, "versions": _setup.versions()}
    # streamed
    src = RandomSource(args.n_candidates, args.p, 4000)
    _, sec, peak = run(G, src, args.k)
    out["streamed"] = {"seconds": sec, "tracemalloc_peak_mb": peak / 2**20}
    # precomputed float32 embeddings, held in memory
    E = np.empty((args.n_candidates, args.p), dtype=np.float32)
    for s in range(0, args.n_candidates, 100_000):
        E[s : s + 100_000] = rng.standard_normal((min(100_000, args.n_candidates - s), args.p), dtype=np.float32)
    (idx2, _), sec2, peak2 = run(G, E, args.k)
    out["precomputed"] = {"seconds": sec2, "tracemalloc_peak_mb_during_decode": peak2 / 2**20,
                          "embeddings_mb": E.nbytes / 2**20,
                          "peak_mb_including_embeddings": (peak2 + E.nbytes) / 2**20}
    # correctness on a few rows: brute force over the full score vector
    c = min(args.check, args.n_queries)
    S = np.concatenate([G[:c].astype(np.float32) @ E[s : s + 100_000].T for s in range(0, E.shape[0], 100_000)], axis=1)
    ref = np.lexsort((np.broadcast_to(np.arange(S.shape[1]), S.shape), -S), axis=-1)[:, : args.k]
    out["precomputed"]["matches_full_sort_rows_checked"] = int(c)
    out["precomputed"]["matches_full_sort"] = bool((ref == idx2[:c]).all())
    out["process_max_rss_mb"] = _setup.peak_rss_mb()
    out["targets"] = {"seconds": 10, "peak_mb": 2048}
    _setup.emit(out, indent=2)


if __name__ == "__main__":
    main()
