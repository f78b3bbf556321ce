"""Many Nyström centres by preconditioned conjugate gradients: test error, passes, time and memory.

The target has more detail than m = 1 000 centres resolve: ``f(x) = sum_{j<10} sin(3 pi x_j) / sqrt(5)`` on
``x ~ U[0, 1]^10`` with noise 0.1 (ten sines of 1.5 periods each: a Gaussian kernel of ``gamma = 0.5`` sees the
ten coordinates at once, and the few centres near any point do not resolve every sine). Each configuration
runs in a fresh process (its peak resident memory is its own):

* ``direct``: :class:`skframe.SketchedKernelRidge` with Nyström sub-sampling of m centres (the streamed
  ``B^T B`` sums: n m^2 operations);
* ``pcg``: :class:`skframe_solvers.pcg.NystromPCG` on m centres (``--same-centres`` takes those of the direct
  fit of that m, to compare the two solutions);
* ``falkon``: Falkon's ``Falkon`` estimator (CPU, built from source, in the interpreter ``--falkon-python``) on
  the same centres as the ``pcg`` run of that m, the same gamma (``sigma = 1 / sqrt(2 gamma)``) and lambda (both
  minimise ``(1/n) ||K alpha - y||^2 + lam alpha^T K_mm alpha``), ``max_passes - 1`` conjugate-gradient steps,
  its kernel blocks within ``--falkon-cpu-mem`` bytes (its ``max_cpu_mem``; unbounded, it takes one n x m block);
* ``floor``: one fused pass ``K^T (K v)`` beside the time of the n m exponentials (NumPy, one thread) and of the
  n x m x d product ``X C^T`` (BLAS) alone.

Usage::

    python benchmarks/bench_many_centres.py --n 200000 --out benchmarks/out/many_centres.json

prints (and writes) JSON with the machine's load average before and after each run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

GAMMA, NOISE, D = 0.5, 0.1, 10


def target(X):
    return np.sin(2 * np.pi * 1.5 * X).sum(1) / np.sqrt(5)


def data(n, n_test, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n + n_test, D))
    y = target(X) + NOISE * rng.standard_normal(n + n_test)
    return X[:n], y[:n], X[n:], target(X[n:])


def rss_mb():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def _falkon(cfg, X, y, Xt, ft):
    """Falkon (CPU, KeOps off) on the PCG run's centres (same draw), gamma and lambda, ``max_passes - 1`` CG steps."""
    import falkon
    import torch
    from falkon.center_selection import FixedSelector

    idx = np.sort(np.random.default_rng(1).choice(len(X), cfg["m"], replace=False))  # the PCG run's centres
    mean = float(y.mean())
    Xt_, yt_ = torch.from_numpy(X), torch.from_numpy(y - mean).reshape(-1, 1)
    # max_cpu_mem bounds its kernel blocks (by default it takes one n x m block: 80 GB at n = 10^6, m = 10^4)
    opt = falkon.FalkonOptions(use_cpu=True, keops_active="no", cg_tolerance=cfg["tol"],
                               max_cpu_mem=float(cfg.get("falkon_cpu_mem", 2e9)))
    kernel = falkon.kernels.GaussianKernel(sigma=float(np.sqrt(1.0 / (2.0 * GAMMA))), opt=opt)
    model = falkon.Falkon(kernel=kernel, penalty=cfg["lam"], M=cfg["m"], maxiter=cfg["max_passes"] - 1,
                          center_selection=FixedSelector(Xt_[idx], yt_[idx], torch.from_numpy(idx)),
                          error_fn=None, options=opt)
    t1, c1 = time.perf_counter(), time.process_time()
    stdout, sys.stdout = sys.stdout, sys.stderr  # its progress lines
    try:
        model.fit(Xt_, yt_)
    finally:
        sys.stdout = stdout
    out = {"falkon_seconds": time.perf_counter() - t1, "falkon_cpu_seconds": time.process_time() - c1,
           "falkon_maxiter": cfg["max_passes"] - 1, "falkon": falkon.__version__, "torch": torch.__version__,
           "torch_threads": torch.get_num_threads(), "sigma": float(np.sqrt(1.0 / (2.0 * GAMMA))),
           "falkon_max_cpu_mem": opt.max_cpu_mem}
    pred = model.predict(torch.from_numpy(Xt)).numpy().ravel() + mean
    out["falkon_test_rmse"] = float(np.sqrt(np.mean((pred - ft) ** 2)))
    return out


def run_one(cfg):
    """One configuration in this process: a dict of results."""
    import warnings

    from skframe import SketchedKernelRidge
    from skframe.contract.registry import get_kernel
    from skframe.options import ComputeOptions
    from skframe_solvers.pcg import NystromPCG

    warnings.simplefilter("ignore")
    X, y, Xt, ft = data(cfg["n"], cfg["n_test"])
    base = rss_mb()
    load0 = os.getloadavg()
    t0, c0 = time.perf_counter(), time.process_time()
    out = {"kind": cfg["kind"], "m": cfg["m"], "n": cfg["n"], "lam": cfg["lam"], "gamma": GAMMA,
           "same_centres": bool(cfg.get("same_centres")), "pcg_params": cfg.get("pcg_params", {})}
    kernel = get_kernel("gaussian", gamma=GAMMA)
    options = ComputeOptions(engine="numba")
    direct = None
    if cfg["kind"] == "direct" or cfg.get("same_centres"):
        direct = SketchedKernelRidge(kernel_params={"gamma": GAMMA}, sketch="subsample", sketch_size=cfg["m"],
                                     lam=cfg["lam"], random_state=0).fit(X, y)
        out["direct_seconds"] = time.perf_counter() - t0
        out["direct_cpu_seconds"] = time.process_time() - c0
        out["plan"] = {k: direct.execution_.get(k) for k in ("executor", "engine", "memory_budget")}
        out["plan_reasons"] = direct.execution_.get("reasons", {})
        pred = direct.predict(Xt)
        out["direct_test_rmse"] = float(np.sqrt(np.mean((pred - ft) ** 2)))
    if cfg["kind"] == "pcg":
        rng = np.random.default_rng(1)
        centres = direct.X_fit_ if direct is not None else X[np.sort(rng.choice(len(X), cfg["m"], replace=False))]
        mean = float(y.mean())
        t1, c1 = time.perf_counter(), time.process_time()
        log = cfg.get("log")

        def progress(passes):
            if log:
                with open(log, "a") as fh:
                    fh.write(f"m={cfg['m']} pass {passes} at {time.perf_counter() - t1:.1f} s, "
                             f"rss {rss_mb():.0f} MB\n")

        res = NystromPCG(tol=cfg["tol"], max_passes=cfg["max_passes"], **cfg.get("pcg_params", {})).solve_centres(
            kernel, X, centres, y - mean, cfg["lam"], options=options, progress=progress)
        out["pcg_seconds"] = time.perf_counter() - t1
        out["pcg_cpu_seconds"] = time.process_time() - c1
        out.update({f"pcg_{k}": v for k, v in res.info.items() if k != "residual_per_target"})
        out["pcg_steps"], out["pcg_history"] = res.n_iter, [float(f"{h:.3g}") for h in res.history]
        out["pcg_stop"] = res.stop_reason
        pred_pcg = np.concatenate([kernel(Xt[i:i + 2000], centres) @ res.W[:, 0] for i in range(0, len(Xt), 2000)])
        pred_pcg += mean
        out["pcg_test_rmse"] = float(np.sqrt(np.mean((pred_pcg - ft) ** 2)))
        out["seconds_per_pass"] = res.info["seconds_passes"] / res.info["passes"]
        if direct is not None:
            diff = np.abs(pred_pcg - direct.predict(Xt))
            out["pcg_vs_direct_max_abs"] = float(diff.max())
            out["pcg_vs_direct_rel_rms"] = float(np.sqrt(np.mean(diff ** 2)) / np.std(ft))
    if cfg["kind"] == "falkon":
        out.update(_falkon(cfg, X, y, Xt, ft))
    if cfg["kind"] == "floor":
        from skframe.compute.fused import normal_pass
        centres = X[: cfg["m"]]
        v = np.random.default_rng(2).standard_normal(cfg["m"])
        normal_pass(kernel, X[:100], centres, v, options=options)  # compiled once
        t1, c1 = time.perf_counter(), time.process_time()
        normal_pass(kernel, X, centres, v, options=options)
        out["fused_pass_seconds"], out["fused_pass_cpu"] = time.perf_counter() - t1, time.process_time() - c1
        rows = max(1, 2_000_000 // cfg["m"])
        buf = np.empty((rows, cfg["m"]))
        t1, c1 = time.perf_counter(), time.process_time()
        for i in range(0, len(X), rows):
            np.dot(X[i:i + rows], centres.T, out=buf[: len(X[i:i + rows])])
        out["gemm_seconds"], out["gemm_cpu"] = time.perf_counter() - t1, time.process_time() - c1
        buf[:] = -np.abs(buf)
        res = np.empty_like(buf)
        t1, c1 = time.perf_counter(), time.process_time()
        for _ in range(0, len(X), rows):
            np.exp(buf, out=res)
        out["exp_seconds_one_thread"], out["exp_cpu"] = time.perf_counter() - t1, time.process_time() - c1
        out["floor_two_cores_seconds"] = out["exp_seconds_one_thread"] / 2 + out["gemm_seconds"]
        out["fused_over_floor"] = out["fused_pass_seconds"] / out["floor_two_cores_seconds"]
    out["seconds"] = time.perf_counter() - t0
    out["peak_rss_above_data_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3 - base
    out["loadavg_before"], out["loadavg_after"] = load0, os.getloadavg()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--n-test", type=int, default=20_000)
    ap.add_argument("--lam", type=float, default=1e-7)
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--max-passes", type=int, default=25)
    ap.add_argument("--direct", default="1000,2000", help="m of the direct fits")
    ap.add_argument("--pcg", default="2000s,10000", help="m of the PCG fits; a trailing s: the direct fit's centres")
    ap.add_argument("--floor-m", type=int, default=10_000)
    ap.add_argument("--falkon", default="", help="m of Falkon fits on the PCG run's centres (its own venv)")
    ap.add_argument("--falkon-python", default="/tmp/falkon-venv/bin/python", help="the interpreter with falkon")
    ap.add_argument("--falkon-cpu-mem", type=float, default=2e9, help="Falkon's max_cpu_mem (bytes for its blocks)")
    ap.add_argument("--pcg-params", default="{}", help="JSON of further NystromPCG parameters")
    ap.add_argument("--log", help="file to which the PCG runs append a line per pass")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--out")
    args = ap.parse_args()
    if args.one:
        print(json.dumps(run_one(json.loads(args.one))))
        return
    common = {"n": args.n, "n_test": args.n_test, "lam": args.lam, "tol": args.tol, "max_passes": args.max_passes}
    cfgs = [dict(common, kind="floor", m=args.floor_m)] if args.floor_m else []
    cfgs += [dict(common, kind="direct", m=int(m)) for m in args.direct.split(",") if m]
    cfgs += [dict(common, kind="pcg", m=int(m.rstrip("s")), same_centres=m.endswith("s"),
                  pcg_params=json.loads(args.pcg_params)) for m in args.pcg.split(",") if m]
    cfgs += [dict(common, kind="falkon", m=int(m), python=args.falkon_python, falkon_cpu_mem=args.falkon_cpu_mem)
             for m in args.falkon.split(",") if m]
    import numba
    import scipy

    report = {"benchmark": "many_centres", "target": "sum_{j<10} sin(3 pi x_j)/sqrt(5), x ~ U[0,1]^10, noise 0.1",
              "cores": os.cpu_count(), "numpy": np.__version__, "scipy": scipy.__version__,
              "numba": numba.__version__, "results": []}
    if args.out and os.path.exists(args.out):  # runs of other configurations kept (the same one is replaced)
        with open(args.out) as fh:
            report["results"] = json.load(fh).get("results", [])
    for cfg in cfgs:
        cfg["log"] = args.log
        proc = subprocess.run([cfg.pop("python", sys.executable), __file__, "--one", json.dumps(cfg)],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            row = {"config": cfg, "error": proc.stderr[-2000:]}
        else:
            row = json.loads(proc.stdout.strip().splitlines()[-1])
        print(json.dumps(row), flush=True)
        report["results"] = [r for r in report["results"] if _key(r) != _key(row)] + [row]
        if args.out:  # saved after each configuration: a long run keeps what it has measured
            with open(args.out, "w") as fh:
                json.dump(report, fh, indent=1)


def _key(row):
    """What identifies a configuration in the report: kind, n, m, same centres and the solver's parameters."""
    cfg = row.get("config", row)
    return (cfg.get("kind"), cfg.get("n"), cfg.get("m"), bool(cfg.get("same_centres")),
            json.dumps(cfg.get("pcg_params", {}), sort_keys=True))


if __name__ == "__main__":
    main()
