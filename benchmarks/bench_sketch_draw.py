"""Time and memory of drawing one p-SR sketch (default m = 13 000, n = 60 000, p = 20/n).

Prints ONE JSON object: draw times (min / median over repeats), tracemalloc peak
compared with the size of the non-zeros ``nnz * (8 + 8 + 4)`` bytes (value, index,
pointer), s', nnz, the versions and the CPU count. Target: <= 50 ms, memory
proportional to the non-zeros (the reference code draws a dense m x n Bernoulli
matrix: 6 GB here).

    python benchmarks/bench_sketch_draw.py [--m 13000] [--n 60000] [--p-times-n 20] [--repeats 15]
"""

import argparse
import json
import sys
import time
import tracemalloc
from pathlib import Path

import _setup  # runtime settings, before NumPy; _setup.versions() for the report

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "plugins")]

import numpy as np  # noqa: E402

from skframe.plugin.registry import get_sketch  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--m", type=int, default=13_000)
    ap.add_argument("--n", type=int, default=60_000)
    ap.add_argument("--p-times-n", type=float, default=20.0, help="p = this / n")
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--sketch", default="psr", choices=["psr", "psg"])
    args = ap.parse_args(argv)
    m, n = args.m, args.n
    p = args.p_times_n / n
    sketch = get_sketch(args.sketch, size=m, p=p)
    sketch.draw(n, np.random.default_rng(0))  # warm-up (imports, allocator)

    times = []
    for seed in range(args.repeats):
        rng = np.random.default_rng(seed)
        t0 = time.perf_counter()
        R = sketch.draw(n, rng)
        times.append(time.perf_counter() - t0)

    tracemalloc.start()
    R = sketch.draw(n, np.random.default_rng(12345))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
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
    print(json.dumps(result))


if __name__ == "__main__":
    main()
