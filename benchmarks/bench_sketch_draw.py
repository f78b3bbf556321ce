"""Time and memory of drawing one p-SR sketch (default m = 13 000, n = 60 000, p = 20/n).

Prints ONE JSON object: draw times (min / median over repeats), tracemalloc peak
compared with the size of the non-zeros ``nnz * (8 + 8 + 4)`` bytes (value, index,
pointer), s', nnz, the versions and the CPU count. Target: <= 50 ms, memory
proportional to the non-zeros (the reference code draws a dense m x n Bernoulli
matrix: 6 GB here).

    python benchmarks/bench_sketch_draw.py [--m 13000] [--n 60000] [--p-times-n 20] [--repeats 15]
"""

import _setup  # runtime settings and sys.path, before NumPy; the measuring helpers
import numpy as np

from skframe.contract.registry import get_sketch


def main(argv=None):
    ap = _setup.parser(__doc__, m=13_000, n=60_000, repeats=15)
    ap.add_argument("--p-times-n", type=float, default=20.0, help="p = this / n")
    ap.add_argument("--sketch", default="psr", choices=["psr", "psg"])
    args = ap.parse_args(argv)
    m, n = args.m, args.n
    p = args.p_times_n / n
    sketch = get_sketch(args.sketch, size=m, p=p)
    sketch.draw(n, np.random.default_rng(0))  # warm-up (imports, allocator)

    times = [_setup.timed(sketch.draw, n, np.random.default_rng(seed))[1] for seed in range(args.repeats)]
    R, _, peak = _setup.traced(sketch.draw, n, np.random.default_rng(12345))
    nnz_bytes = R.nnz * (8 + 8 + 4)
    result = {
        "benchmark": "sketch_draw",
        "sketch": args.sketch,
        "m": m,
        "n": n,
        "p": p,
        "s_prime": R.s_prime,
        "expected_s_prime": n * (1 - (1 - p) ** m),
        "nnz": R.nnz,
        "expected_nnz": m * n * p,
        "time_s": {"min": min(times), "median": float(np.median(times)), "repeats": len(times)},
        "target_s": 0.050,
        "tracemalloc_peak_bytes": peak,
        "nnz_bytes_20_per_entry": nnz_bytes,
        "peak_over_nnz_bytes": peak / nnz_bytes,
        "dense_bernoulli_bytes_reference": m * n * 8,
        "versions": _setup.versions(),
    }
    _setup.emit(result, indent=None)


if __name__ == "__main__":
    main()
