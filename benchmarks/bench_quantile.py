"""Joint quantile regression with and without sketching (seed 002 §4.2, Table 1).

Data: scikit-learn's diabetes data set (``sklearn.datasets.load_diabetes``, shipped inside
the scikit-learn wheel from PyPI, no download): 442 patients, 10 inputs, one target;
inputs standardised, target divided by its training standard deviation (pinball losses
are reported in the original units). Repeated random 70/30 splits as in the paper's
Boston experiment. Levels τ = (0.1, 0.3, 0.5, 0.7, 0.9), quantile output matrix, Gaussian
kernel, s = 50 p-SR sketch vs the exact model (features U D^{1/2} of the full Gram
matrix), both solved by Adam with the same settings. Prints ONE JSON object.

    python benchmarks/bench_quantile.py [--splits 10] [--s 50] [--epochs 200]

Targets (issue 3): sketched pinball within 10 % of the exact model, fit >= 4x faster.
"""

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "plugins")]

import numba  # noqa: E402
import numpy as np  # noqa: E402
import scipy  # noqa: E402
import sklearn  # noqa: E402
from sklearn.datasets import load_diabetes  # noqa: E402

from skframe.metrics import crossing_loss, pinball_loss  # noqa: E402
from skframe.models import JointQuantileRegressor  # noqa: E402

QUANTILES = (0.1, 0.3, 0.5, 0.7, 0.9)


def versions():
    return {"python": platform.python_version(), "numpy": np.__version__, "scipy": scipy.__version__,
            "numba": numba.__version__, "sklearn": sklearn.__version__, "cpu_count": os.cpu_count(),
            "machine": platform.machine()}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--splits", type=int, default=10)
    ap.add_argument("--s", type=int, default=50)
    ap.add_argument("--p", type=float, default=None, help="p-SR density (default 20/n)")
    ap.add_argument("--lam", type=float, default=1e-2)
    ap.add_argument("--gamma", type=float, default=0.05, help="Gaussian kernel gamma on standardised inputs")
    ap.add_argument("--gamma-quantile", type=float, default=1.0)
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--learning-rate", type=float, default=0.05)
    args = ap.parse_args(argv)

    X, y = load_diabetes(return_X_y=True)
    n = X.shape[0]
    solver_params = {"epochs": args.epochs, "batch_size": args.batch_size, "learning_rate": args.learning_rate,
                     "tol": None}
    # warm-up (numba compilation), not timed
    JointQuantileRegressor(sketch_size=5, solver_params={"epochs": 1}, random_state=0).fit(X[:50], y[:50])
    res = {"exact": {"pinball": [], "crossing": [], "fit_seconds": []},
           "p-SR": {"pinball": [], "crossing": [], "fit_seconds": []}}
    for split in range(args.splits):
        rng = np.random.default_rng(split)
        perm = rng.permutation(n)
        tr, te = perm[: int(0.7 * n)], perm[int(0.7 * n):]
        mu, sd = X[tr].mean(0), X[tr].std(0)
        Xtr, Xte = (X[tr] - mu) / sd, (X[te] - mu) / sd
        ys = y[tr].std()
        p = args.p if args.p is not None else 20.0 / len(tr)
        for label, sketch in (("exact", None), ("p-SR", "psr")):
            model = JointQuantileRegressor(
                QUANTILES, kernel_params={"gamma": args.gamma}, sketch=sketch, sketch_size=args.s,
                sketch_params={"p": p} if sketch else None, lam=args.lam, gamma_quantile=args.gamma_quantile,
                solver_params=solver_params, random_state=split)
            t0 = time.perf_counter()
            model.fit(Xtr, y[tr] / ys)
            res[label]["fit_seconds"].append(time.perf_counter() - t0)
            Q = model.predict(Xte) * ys
            res[label]["pinball"].append(pinball_loss(y[te], Q, QUANTILES))
            res[label]["crossing"].append(crossing_loss(Q, QUANTILES))
    summary = {k: {m: {"mean": float(np.mean(v)), "std": float(np.std(v))} for m, v in d.items()} for k, d in res.items()}
    ratio_pin = summary["p-SR"]["pinball"]["mean"] / summary["exact"]["pinball"]["mean"]
    speedup = summary["exact"]["fit_seconds"]["mean"] / summary["p-SR"]["fit_seconds"]["mean"]
    report = {
        "benchmark": "joint quantile regression, diabetes (sklearn.datasets.load_diabetes), 70/30 splits",
        "n": n, "n_train": int(0.7 * n), "splits": args.splits, "quantiles": QUANTILES, "s": args.s,
        "lam": args.lam, "gamma": args.gamma, "gamma_quantile": args.gamma_quantile, "solver_params": solver_params,
        "summary": summary,
        "pinball_ratio_sketched_over_exact": ratio_pin,
        "fit_speedup_exact_over_sketched": speedup,
        "target": {"pinball within 10% of exact": ratio_pin <= 1.10, "fit >= 4x faster": speedup >= 4.0},
        "crossing_definition": "mean_i sum_j max(0, q_ij - q_i,j+1), levels increasing",
        "versions": versions(),
    }
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
