"""Candidate-pool decoding benchmark: queries choosing among lists drawn from a shared pool.

A SISOKR model is fitted on random binary fingerprints (outputs) of random inputs;
then ``--n-queries`` test inputs are decoded, each against ``--per-query`` candidates
drawn from a pool of ``--n-pool`` random binary fingerprints of ``--bits`` bits
(uint8, as read from disk), given as a ``CandidatePool`` so that the pool is embedded
once. Reported: the fit time, the first predict (embeds the pool), a second predict
(pool embeddings cached), a top-10 call, one ranking evaluation (Hits@1/5/10, MRR,
mean rank), and the process peak RSS (``resource.getrusage``), as JSON.

Usage::

    python benchmarks/bench_candidates.py [--n-queries 400] [--per-query 100] [--n-pool 4000] [--bits 2048]
                                          [--output-kernel tanimoto|gaussian] [--n-train 2000]
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

import _setup  # noqa: F401  (runtime settings, before NumPy)
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "plugins")]

from skframe.models import OutputKernelRegressor  # noqa: E402
from skframe.models.structured import CandidatePool, candidate_ranking  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-queries", type=int, default=400)
    ap.add_argument("--per-query", type=int, default=100)
    ap.add_argument("--n-pool", type=int, default=4000)
    ap.add_argument("--bits", type=int, default=2048)
    ap.add_argument("--n-train", type=int, default=2000)
    ap.add_argument("--d", type=int, default=100, help="input dimension")
    ap.add_argument("--output-kernel", default="tanimoto", choices=["tanimoto", "gaussian"])
    ap.add_argument("--m-x", type=int, default=500)
    ap.add_argument("--m-y", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    rng = np.random.default_rng(args.seed)
    density = 0.1
    X = rng.standard_normal((args.n_train, args.d))
    Y = (rng.random((args.n_train, args.bits)) < density).astype(np.float64)
    Xq = rng.standard_normal((args.n_queries, args.d))
    pool = (rng.random((args.n_pool, args.bits)) < density).astype(np.uint8)
    lists = [rng.choice(args.n_pool, size=min(args.per_query, args.n_pool), replace=False)
             for _ in range(args.n_queries)]
    true = rng.integers(0, min(args.per_query, args.n_pool), size=args.n_queries)
    ky_params = {} if args.output_kernel == "tanimoto" else {"gamma": 1.0 / (2 * args.bits * density)}

    model = OutputKernelRegressor("gaussian", input_kernel_params={"gamma": 1.0 / (2 * args.d)},
                                  output_kernel=args.output_kernel, output_kernel_params=ky_params,
                                  input_sketch="subsample", input_sketch_size=min(args.m_x, args.n_train),
                                  output_sketch="subsample", output_sketch_size=min(args.m_y, args.n_train),
                                  lam=1e-4, random_state=args.seed)
    out = {"args": vars(args), "versions": _setup.versions()}
    t0 = time.perf_counter()
    model.fit(X, Y)
    out["fit_s"] = time.perf_counter() - t0
    cp = CandidatePool(pool, lists)
    t0 = time.perf_counter()
    pred = model.predict(Xq, candidates=cp)
    out["predict_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    model.predict(Xq, candidates=cp)
    out["predict_cached_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    idx, _ = model.predict_topk(Xq, 10, candidates=cp)
    out["top10_cached_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    out["ranking"] = candidate_ranking(model, Xq, cp, true)
    out["ranking_cached_s"] = time.perf_counter() - t0
    assert pred.shape == (args.n_queries, args.bits) and pred.dtype == np.uint8
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print(json.dumps(out, indent=2))
    return out


if __name__ == "__main__":
    main()
