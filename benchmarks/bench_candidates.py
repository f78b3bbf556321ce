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

import _setup  # runtime settings and sys.path, before NumPy; the measuring helpers
import numpy as np

from skframe.models import OutputKernelRegressor
from skframe.models.structured import CandidatePool, candidate_ranking


def main(argv=None):
    ap = _setup.parser(__doc__, n_queries=400, per_query=100, n_pool=4000, bits=2048, n_train=2000, m_x=500,
                       m_y=200, seed=0)
    ap.add_argument("--d", type=int, default=100, help="input dimension")
    ap.add_argument("--output-kernel", default="tanimoto", choices=["tanimoto", "gaussian"])
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
    _, out["fit_s"] = _setup.timed(model.fit, X, Y)
    cp = CandidatePool(pool, lists)
    pred, out["predict_s"] = _setup.timed(model.predict, Xq, candidates=cp)
    _, out["predict_cached_s"] = _setup.timed(model.predict, Xq, candidates=cp)
    _, out["top10_cached_s"] = _setup.timed(model.predict_topk, Xq, 10, candidates=cp)
    out["ranking"], out["ranking_cached_s"] = _setup.timed(candidate_ranking, model, Xq, cp, true)
    assert pred.shape == (args.n_queries, args.bits) and pred.dtype == np.uint8
    out["peak_rss_mb"] = _setup.peak_rss_mb()
    _setup.emit(out, indent=2)
    return out


if __name__ == "__main__":
    main()
