"""Where the streamed square-loss fit becomes at least as fast as the in-memory one.

The in-memory path of :class:`~skframe.models.SketchedKernelRidge` holds ``K R^T`` (n x m) and
the features ``Z = K R^T U D^{-1/2}`` (n x r) and forms ``Z^T Z``; the streamed path
(:mod:`skframe.compute.streaming`) accumulates ``B^T B`` chunk by chunk by BLAS ``syrk`` and
never holds an n x m array. Both solve the same problem. This script times the two
representations plus the closed-form solve (exactly what a fit runs after validation) on
Friedman-like data, d = 10, Gaussian kernel, for a grid of (n, m) and two sketches, taking
the best of ``--repeat`` alternated runs of each, and reports the smallest ``n * m`` above
which the streamed fit is never slower (by more than ``--slack``) than the in-memory one.
:data:`skframe.compute.plan.STREAM_MIN_WORK` encodes that crossover.

    python benchmarks/bench_stream_crossover.py [--repeat 3] [--sizes 2000,10000,50000,200000]
        [--ms 100,300,1000] [--sketches subsample,psr] [--out benchmarks/out/stream_crossover.json]

Prints ONE JSON object (also written to ``--out``).
"""

import json
import sys

import _setup  # runtime settings and sys.path, before NumPy; the measuring helpers
import numpy as np


def friedman(n, d, seed):
    """Friedman data drawn in one block (the stream of the measured runs), targets as one column."""
    X, y = _setup.friedman_data(n, d, seed, step=n)
    return X, y[:, None]


def one_fit(path, X, Y, kernel, sketch, lam, work):
    """Seconds of one representation + closed-form solve on ``path`` ("in-memory" or "streamed")."""
    from skframe.compute.stream_fit import streamed_representation
    from skframe.core.engine import planned
    from skframe.models._core import build_representation
    from skframe.models.ridge import _ridge_solve

    options = planned(None, work)  # the engine a fit's plan picks for n x s' kernel entries, on both paths

    def fit():
        rng = np.random.default_rng(0)
        if path == "streamed":
            rep = streamed_representation(X, Y, kernel, sketch, rng, options)
        else:
            rep = build_representation(X, kernel, sketch, rng, options=options)
        return rep, _ridge_solve(rep, Y - Y.mean(axis=0), lam, None, None).W

    (rep, W), seconds = _setup.timed(fit)
    return seconds, rep.expansion(W)["coef_"], rep.info.get("s_prime")


def main():
    ap = _setup.parser(__doc__, sizes="2000,10000,50000,200000", ms="100,300,1000", sketches="subsample,psr", repeat=3)
    ap.add_argument("--slack", type=float, default=0.05, help="relative margin counted as 'as fast'")
    ap.add_argument("--max-entries", type=float, default=4e9, help="skip configurations with more kernel entries")
    ap.add_argument("--out", default=str(_setup.OUT / "stream_crossover.json"))
    args = ap.parse_args()

    from skframe.contract.registry import get_kernel, get_sketch

    kernel = get_kernel("gaussian", gamma=0.5)
    rows = []
    X0, Y0 = friedman(2000, 10, 1)  # warm-up: imports and compiled kernels
    for path in ("in-memory", "streamed"):
        one_fit(path, X0, Y0, kernel, get_sketch("psr", size=50), 1e-6, 2000 * 1000)
    for n in [int(float(v)) for v in args.sizes.split(",")]:
        X, Y = friedman(n, 10, 0)
        for m in [int(v) for v in args.ms.split(",")]:
            if m > n:
                continue
            for name in args.sketches.split(","):
                sketch = get_sketch(name, size=m)
                s_est = m if name == "subsample" else n * (1 - (1 - min(1.0, 20.0 / n)) ** m)
                if n * s_est > args.max_entries or 2 * n * m * 8 > 6e9:
                    continue
                best = {"in-memory": np.inf, "streamed": np.inf}
                coefs = {}
                for _ in range(args.repeat):
                    for path in ("in-memory", "streamed"):
                        sec, coef, s_prime = one_fit(path, X, Y, kernel, sketch, 1e-6, int(n * s_est))
                        best[path] = min(best[path], sec)
                        coefs[path] = coef
                ratio = best["streamed"] / best["in-memory"]
                rows.append({"n": n, "m": m, "sketch": name, "s_prime": int(s_prime), "n_m": n * m,
                             "in_memory_s": round(best["in-memory"], 4), "streamed_s": round(best["streamed"], 4),
                             "streamed_over_in_memory": round(ratio, 3),
                             "coef_rel_diff": float(np.linalg.norm(coefs["streamed"] - coefs["in-memory"])
                                                    / np.linalg.norm(coefs["in-memory"]))})
                print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    # the crossover: the smallest n*m from which on the streamed fit is never slower than in-memory (+ slack)
    order = sorted(rows, key=lambda r: r["n_m"])
    crossover = None
    for i, r in enumerate(order):
        if all(o["streamed_over_in_memory"] <= 1 + args.slack for o in order[i:]):
            crossover = r["n_m"]
            break
    report = {"benchmark": "stream_crossover", "versions": _setup.versions(), "repeat": args.repeat,
              "slack": args.slack, "d": 10, "kernel": "gaussian(gamma=0.5)", "rows": rows,
              "crossover_n_m": crossover}
    _setup.emit(report, args.out)


if __name__ == "__main__":
    main()
