"""Which sketch should ``skframe fit`` draw by default at the data's size: accuracy per second.

``skframe fit train.npy --test test.npy`` with no tuning flag is run (in a fresh process each,
as a user would) on Friedman-like data (X uniform in [0, 1]^10, y = 10 sin(pi x1 x2) +
20 (x3 - 0.5)^2 + 10 x4 + 5 x5 + noise; the last column of the ``.npy`` files is the target, so
the CLI memory-maps them and the fit streams), with the default Gaussian kernel
(``gamma="scale"``), lam = 1e-3 and the auto sketch size m (``ceil(2 sqrt(n))`` in
[100, 1000]). Only the sketch changes:

  psr p=c/n    p-sparsified Rademacher sketch, c in ``--psr-c`` (20: today's default p)
  psg p=c/n    p-sparsified Gaussian sketch, c in ``--psg-c``
  subsample    Nyström sub-sampling of m points
  default      no ``--sketch`` flag at all: the command's own choice (``--sketch auto``)

Reported per sketch: s' (sampled points: the columns every kernel block and every prediction
evaluates), fit and predict seconds (the CLI's own figures; predict on ``--n-test`` rows),
test MSE and R², and accuracy per second (R² / fit seconds).

    python benchmarks/bench_default_sketch.py [--n 100000] [--n-test 100000] [--psr-c 1,2,5,20]
        [--psg-c 2,20] [--out benchmarks/out/default_sketch_1e5.json]

Prints ONE JSON object (also written to ``--out``).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import _setup  # runtime settings and sys.path, before NumPy; the measuring helpers
import numpy as np  # noqa: E402

D = 10


def write_table(path, n, seed):
    """A ``.npy`` file of n rows: 10 features then the target, written block by block."""
    table = np.lib.format.open_memmap(path, mode="w+", shape=(n, D + 1))
    _setup.friedman_data(n, D, seed, step=100_000, X=table[:, :D], y=table[:, D])
    table.flush()
    del table


def run_cli(train, test, sketch, params):
    cmd = [sys.executable, "-m", "skframe", "fit", str(train), "--test", str(test), "--json"]
    if sketch is not None:  # None: no --sketch flag, the command's default
        cmd += ["--sketch", sketch]
    for key, value in params.items():
        cmd += ["--sketch-param", f"{key}={value}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ))
    if proc.returncode != 0:
        return {"error": (proc.stderr or proc.stdout).strip().splitlines()[-1:]}
    return json.loads(proc.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=lambda v: int(float(v)), default=100_000)
    ap.add_argument("--n-test", type=lambda v: int(float(v)), default=100_000)
    ap.add_argument("--psr-c", default="1,2,5,20")
    ap.add_argument("--psg-c", default="2,20")
    ap.add_argument("--subsample", action=argparse.BooleanOptionalAction, default=True)
    ap.add_argument("--default", action=argparse.BooleanOptionalAction, default=True,
                    help="also run the command with no --sketch flag (its default sketch)")
    ap.add_argument("--tmp", default=None, help="folder for the data files (default: a temporary one)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    configs = [(None, {}, "default (no --sketch flag)")] if args.default else []
    configs += [("psr", {"p": float(c) / args.n}, f"psr p={c}/n") for c in args.psr_c.split(",") if c]
    configs += [("psg", {"p": float(c) / args.n}, f"psg p={c}/n") for c in args.psg_c.split(",") if c]
    if args.subsample:
        configs.append(("subsample", {}, "subsample"))
    rows = []
    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        train, test = Path(tmp) / "train.npy", Path(tmp) / "test.npy"
        write_table(train, args.n, 0)
        write_table(test, args.n_test, 1)
        for sketch, params, label in configs:
            rep = run_cli(train, test, sketch, params)
            if "error" in rep:
                rows.append({"sketch": label, **rep})
                continue
            info, metrics = rep.get("sketch") or {}, rep["metrics"]
            r2 = metrics.get("r2")
            r2 = float(r2[0] if isinstance(r2, list) else r2)
            mse = metrics.get("mse")
            rows.append({"sketch": label, "drawn": info.get("name"), "m": info.get("m"), "s_prime": info.get("s_prime"),
                         "fit_seconds": round(rep["fit_seconds"], 3),
                         "predict_seconds": round(rep["predict_seconds"], 3),
                         "test_mse": float(mse[0] if isinstance(mse, list) else mse), "test_r2": r2,
                         "r2_per_fit_second": round(r2 / rep["fit_seconds"], 4),
                         "executor": (rep.get("execution") or {}).get("executor")})
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    ok = [r for r in rows if "error" not in r and not r["sketch"].startswith("default")]
    best = max(ok, key=lambda r: r["r2_per_fit_second"])["sketch"] if ok else None
    report = {"benchmark": "default_sketch", "versions": _setup.versions(), "n": args.n, "n_test": args.n_test,
              "d": D, "kernel": "gaussian(gamma='scale')", "lam": 1e-3, "rows": rows,
              "best_r2_per_fit_second": best}
    _setup.emit(report, args.out or _setup.OUT / f"default_sketch_{args.n:.0e}.json".replace("+0", ""))


if __name__ == "__main__":
    main()
