"""The default path: a default-constructed SketchedKernelRidge against scikit-learn's Nystroem + Ridge.

Friedman-like data (X uniform in [0, 1]^d, d = 10, y = 10 sin(pi x1 x2) + 20 (x3 - 0.5)^2 + 10 x4
+ 5 x5 + noise), n training rows (``--n``), 10 000 test rows. Each method runs in its own process
(``--one METHOD``), on the same data:

  skframe     ``SketchedKernelRidge(kernel_params={"gamma": 0.5}, sketch="subsample",
              sketch_size=1000, lam=1e-9)`` with no other flag: the execution plan chooses the path
              (its ``execution_`` is reported)
  sklearn     ``Nystroem(gamma=0.5, n_components=1000)`` then ``Ridge(alpha=n * lam)``: the same
              estimator (Nyström features of 1 000 sampled points, ridge of n lam)
  in_memory   skframe's in-memory representation forced (K R^T and the features held, n x m
              each): the path a default fit took before the execution plan (``--n`` <= 2e5 only,
              unless ``--force-in-memory``)

Time is the fit's wall clock; peak memory is the process's peak resident size during the fit
above its resident size once the data are generated (``VmHWM`` reset through
``/proc/self/clear_refs`` before the fit); test MSE on the 10 000 test rows. Each process first
fits a small problem (imports, compiled kernels), as a user's session would have.

    python benchmarks/bench_default_path.py [--n 100000] [--methods skframe,sklearn,in_memory]
        [--out benchmarks/out/default_path_1e5.json]

Prints ONE JSON object (also written to ``--out``).
"""

import argparse
import json
import os
import subprocess
import sys
import time

import _setup  # runtime settings and sys.path, before NumPy; the measuring helpers
import numpy as np  # noqa: E402

GAMMA, M, LAM, D, N_TEST = 0.5, 1000, 1e-9, 10, 10_000


def friedman(n, seed):
    """(X, y) of Friedman's first problem, generated in blocks (no transient copy of the data)."""
    return _setup.friedman_data(n, D, seed, step=100_000)


def fit_skframe(X, y):
    from skframe import SketchedKernelRidge

    model = SketchedKernelRidge(kernel_params={"gamma": GAMMA}, sketch="subsample", sketch_size=M, lam=LAM,
                                random_state=0)
    model.fit(X, y)
    return model.predict, {"execution": model.execution_, "sketch": model.sketch_info_}


def fit_sklearn(X, y):
    from sklearn.kernel_approximation import Nystroem
    from sklearn.linear_model import Ridge
    from sklearn.pipeline import make_pipeline

    model = make_pipeline(Nystroem(gamma=GAMMA, n_components=min(M, X.shape[0]), random_state=0),
                          Ridge(alpha=X.shape[0] * LAM))
    model.fit(X, y)
    return model.predict, {}


def fit_in_memory(X, y):
    """skframe's in-memory representation, forced: what a default fit ran before the execution plan."""
    from skframe.models._core import build_representation, make_rngs, resolve_kernel, resolve_sketch
    from skframe.models.ridge import _ridge_solve

    kernel = resolve_kernel("gaussian", {"gamma": GAMMA}, X)[0]
    sketch = resolve_sketch("subsample", min(M, X.shape[0]))[0]
    rep = build_representation(X, kernel, sketch, make_rngs(0)[0])  # the draw of the estimator's random_state=0
    mean = y.mean()
    W = _ridge_solve(rep, (y - mean)[:, None], LAM, None, None).W
    coef = rep.proj @ W
    return (lambda Xt: (kernel(Xt, rep.X_basis) @ coef)[:, 0] + mean), {"representation": "in-memory"}


METHODS = {"skframe": fit_skframe, "sklearn": fit_sklearn, "in_memory": fit_in_memory}


def one(method, n):
    """Run one method in this process; its JSON record."""
    Xw, yw = friedman(2000, 5)
    METHODS[method](Xw, yw)  # warm-up: imports and compiled kernels
    X, y = friedman(n, 0)
    Xt, yt = friedman(N_TEST, 1)
    base = _setup.proc_status_bytes("VmRSS")
    reset = _setup.reset_peak_rss()
    t0 = time.perf_counter()
    predict, info = METHODS[method](X, y)
    seconds = time.perf_counter() - t0
    peak = _setup.proc_status_bytes("VmHWM") - base if reset else None
    t1 = time.perf_counter()
    mse = float(np.mean((predict(Xt) - yt) ** 2))
    return dict({"method": method, "n": n, "fit_seconds": round(seconds, 3),
                 "peak_above_data_bytes": peak, "data_bytes": int(X.nbytes + y.nbytes),
                 "predict_seconds_10k": round(time.perf_counter() - t1, 3), "test_mse": mse}, **info)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=lambda v: int(float(v)), default=100_000)
    ap.add_argument("--methods", default="skframe,sklearn,in_memory")
    ap.add_argument("--force-in-memory", action="store_true", help="run in_memory above n = 2e5 too")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.n)))
        return
    rows = []
    for method in args.methods.split(","):
        if method == "in_memory" and args.n > 200_000 and not args.force_in_memory:
            continue
        proc = subprocess.run([sys.executable, __file__, "--one", method, "--n", str(args.n)],
                              capture_output=True, text=True, env=dict(os.environ))
        if proc.returncode != 0:
            rows.append({"method": method, "n": args.n, "error": proc.stderr.strip().splitlines()[-1:]})
            continue
        rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        print(json.dumps({k: v for k, v in rows[-1].items() if k not in ("execution", "sketch")}),
              file=sys.stderr, flush=True)
    by = {r["method"]: r for r in rows if "error" not in r}
    summary = {}
    if "skframe" in by and "sklearn" in by:
        summary["speedup_vs_sklearn"] = round(by["sklearn"]["fit_seconds"] / by["skframe"]["fit_seconds"], 2)
        summary["mse_ratio_vs_sklearn"] = by["skframe"]["test_mse"] / by["sklearn"]["test_mse"]
    if "skframe" in by and "in_memory" in by:
        summary["speedup_vs_in_memory"] = round(by["in_memory"]["fit_seconds"] / by["skframe"]["fit_seconds"], 2)
        summary["mse_ratio_vs_in_memory"] = by["skframe"]["test_mse"] / by["in_memory"]["test_mse"]
    report = {"benchmark": "default_path", "versions": _setup.versions(), "n": args.n, "d": D, "m": M,
              "gamma": GAMMA, "lam": LAM, "n_test": N_TEST, "rows": rows, "summary": summary}
    _setup.emit(report, args.out or _setup.OUT / f"default_path_{args.n:.0e}.json".replace("+0", ""))


if __name__ == "__main__":
    main()
