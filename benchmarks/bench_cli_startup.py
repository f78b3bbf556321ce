"""Command-line start-up: ``skframe --help`` / ``--version`` and the cold first fit of a process.

Prints ONE JSON object:

* ``python_pass``, ``help``, ``version``: wall seconds (min / median over ``--runs`` fresh
  processes) of ``python -c pass``, ``python -m skframe --help`` and ``--version``;
* ``fit``: per fresh process, the first fit (cold: numba's compiled code and the plugins are
  loaded then) and the median of ``--warm`` later identical fits, and their difference.
  The problem is the rf1 p-SR example of the README (sketch size 200, p = 0.005, inputs
  standardised, missing values as 0) when ``--data-dir`` holds rf1, else an rf1-shaped
  synthetic problem (4 108 x 64 inputs, 8 targets).

    python benchmarks/bench_cli_startup.py [--data-dir DIR] [--runs 5] [--processes 3] [--warm 5]

On a shared machine report ratios measured in one run, not absolute times.
"""

import _setup  # runtime settings, before NumPy; _setup.versions() for the report
import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import os, sys, time, json
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
import numpy as np
from skframe.datasets import FeatureScaler, load_dataset
data_dir, n_warm = sys.argv[1], int(sys.argv[2])
train = os.path.join(data_dir, "rf1", "rf1-train.arff")
if os.path.exists(train):
    ds = load_dataset(train, targets=8, missing="zero")
    X, Y, source = ds.X, ds.Y, "rf1"
else:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((4108, 64)); Y = X[:, :8] ** 2 + 0.1 * rng.standard_normal((4108, 8))
    source = "synthetic rf1-shaped"
X = FeatureScaler("standard").fit_transform(X)
from skframe import SketchedKernelRidge
def fit():
    model = SketchedKernelRidge("gaussian", kernel_params={"gamma": 3e-7}, sketch="psr", sketch_size=200,
                                sketch_params={"p": 0.005}, lam=4e-8, random_state=0)
    t = time.perf_counter(); model.fit(X, Y); return time.perf_counter() - t
cold = fit()
warm = [fit() for _ in range(n_warm)]
print(json.dumps({"source": source, "cold": cold, "warm_median": float(np.median(warm)), "warm_min": min(warm)}))
"""


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "plugins"), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def wall(cmd, runs):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True, env=_env())
        times.append(time.perf_counter() - t)
    times.sort()
    return {"min": times[0], "median": times[len(times) // 2]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data"))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--processes", type=int, default=3)
    parser.add_argument("--warm", type=int, default=5)
    args = parser.parse_args()
    py = sys.executable
    report = {
        "python_pass": wall([py, "-c", "pass"], args.runs),
        "help": wall([py, "-m", "skframe", "--help"], args.runs),
        "version": wall([py, "-m", "skframe", "--version"], args.runs),
        "fit": [],
        "versions": _setup.versions(),
    }
    for _ in range(args.processes):
        out = subprocess.run([py, "-c", CHILD, args.data_dir, str(args.warm)], check=True, capture_output=True,
                             text=True, env=_env()).stdout
        row = json.loads(out.strip().splitlines()[-1])
        row["cold_minus_warm"] = row["cold"] - row["warm_median"]
        report["fit"].append(row)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
