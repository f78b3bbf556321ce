"""Scale: streamed sketched kernel ridge in bounded memory, float32, memory-mapped data, κ-Huber, Dask.

Friedman-like data (X uniform in [0, 1]^d, y = 10 sin(pi x1 x2) + 20 (x3 - 0.5)^2 + 10 x4 + 5 x5
+ noise), Nyström sub-sampling with m points, Gaussian kernel, lam = 1e-3 / n. Each section
runs in its own process, so that its peak RSS (``resource.getrusage``) is its own; "above
data" is the peak minus the resident size once the data are in memory (or mapped).

Sections (``--sections``, comma-separated):
  stream64  SketchedKernelRidge(memory_budget=--budget): one streamed pass, m x m products by BLAS syrk
  stream32  the same with dtype="float32" (sums in float64; products in float64 when ill-conditioned)
  sklearn   scikit-learn Nystroem + Ridge(alpha = n lam) on the same data (the baseline)
  inmemory  SketchedKernelRidge without a budget: the in-memory path (holds n x m; for small n)
  huber     κ-Huber with L-BFGS within --budget (features kept or streamed, as the budget says)
  dask      Dask LocalCluster, 2 worker processes, n = --dask-n rows: time, per-worker peak
  f32study  where float32 time goes and what it costs in accuracy, on --study-n rows (default 1e5) with
            the same m, gamma, lam: float64 products (the reference), float32 products of B = K R^T
            (forced), float32 whitened products (Z = B U D^-1/2 per chunk, Z^T Z by ssyrk, summed in
            float64), float32 blocks with float64 products (what dtype="float32" does when kappa is
            large); plus the per-operation costs (kernel block, dsyrk, ssyrk, sgemm + ssyrk) per 1e6 rows
  gpu64     stream64 on an NVIDIA GPU (backend="cupy"); gpu32 the same in float32
            (on a GPU machine: --n 10000000 --m 2000 --sections stream64,gpu64,gpu32)

    python benchmarks/bench_scale.py [--n 1000000] [--m 1000] [--memmap] [--sections ...]
    python benchmarks/bench_scale.py --n 10000000 --memmap --sections stream64,stream32

Targets (2-core machine): n = 1e6, m = 1000: <= 20 s (float32 <= 10 s) and <= 0.5 GB above
the data, test MSE within 1 % of the in-memory path. Prints ONE JSON object.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _setup  # runtime settings and sys.path, before NumPy; the measuring helpers
import numpy as np
from _setup import friedman_data, friedman_target

DEFAULT_SECTIONS = "stream64,stream32,sklearn,huber,dask,f32study"


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def peak_bytes():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class RssSampler:
    """Peak anonymous and file-backed resident memory, sampled from /proc/self/status every 0.1 s.

    ``ru_maxrss`` counts the pages of a memory-mapped data file that the fit has read; the
    anonymous part is the memory the fit itself allocated.
    """

    def __init__(self):
        import threading

        self.peak = {"RssAnon": 0, "RssFile": 0}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def sample(self):
        with open("/proc/self/status") as f:
            for line in f:
                key = line.split(":")[0]
                if key in self.peak:
                    self.peak[key] = max(self.peak[key], int(line.split()[1]) * 1024)

    def _run(self):
        while not self._stop.wait(0.1):
            self.sample()

    def __enter__(self):
        self.sample()
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.sample()


def load(args):
    d = args.d
    if args.memmap:
        path = Path(args.tmp) / f"X_{args.n}_{d}.npy"
        if not path.exists():
            X, y = friedman_data(args.n, d, X=np.lib.format.open_memmap(path, mode="w+", shape=(args.n, d)))
            X.flush()
            np.save(Path(args.tmp) / f"y_{args.n}.npy", y)
            del X
        X = np.load(path, mmap_mode="r")
        y = np.load(Path(args.tmp) / f"y_{args.n}.npy")
    else:
        X, y = friedman_data(args.n, d)
    Xt = np.random.default_rng(1).uniform(size=(args.n_test, d))
    return X, y, Xt, friedman_target(Xt)


def section(args):
    """Run one section in this process (after a small warm-up run: imports, compiled kernels); its JSON record."""
    X, y, Xt, yt = load(args)
    small = argparse.Namespace(**dict(vars(args), n=min(args.n, 2000), m=min(args.m, 20), huber_iter=2))
    run(small, X[:small.n], y[:small.n], Xt[:100], yt[:100])
    base = rss_bytes()
    data_bytes = (0 if args.memmap else X.nbytes) + y.nbytes
    anon_base = _setup.proc_status_bytes("RssAnon")
    with RssSampler() as sampler:
        rec = run(args, X, y, Xt, yt)
    rec.update(peak_rss_bytes=peak_bytes(), data_bytes=data_bytes, rss_with_data_bytes=base,
               above_data_bytes=peak_bytes() - base, peak_rss_anon_bytes=sampler.peak["RssAnon"],
               peak_rss_file_bytes=sampler.peak["RssFile"], anon_above_data_bytes=sampler.peak["RssAnon"] - anon_base)
    return rec


def run(args, X, y, Xt, yt):
    from skframe.contract.registry import get_kernel, get_sketch
    from skframe.core.sketching import draw_sketch
    from skframe.options import ComputeOptions

    lam = 1e-3 / args.n
    kernel = get_kernel("gaussian", gamma=args.gamma)
    rec = {"section": args.section, "n": args.n, "m": args.m, "memmap": bool(args.memmap)}
    t0 = time.perf_counter()
    if args.section in ("stream64", "stream32", "inmemory", "gpu64", "gpu32"):
        from skframe import SketchedKernelRidge

        streamed = {} if args.section == "inmemory" else {
            "memory_budget": args.budget, "dtype": "float64" if args.section.endswith("64") else "float32",
            "backend": "cupy" if args.section.startswith("gpu") else "numpy"}
        model = SketchedKernelRidge(kernel_params={"gamma": args.gamma}, sketch="subsample", sketch_size=args.m,
                                    lam=lam, random_state=2, **streamed).fit(X, y)
        rec["fit_seconds"] = time.perf_counter() - t0
        pred = model.predict(Xt)
        info = model.sketch_info_
        rec.update(rank=info.get("rank"), chunk_rows=info.get("chunk_rows"), products=info.get("products"),
                   representation=info.get("representation", "in-memory features"))
    elif args.section == "sklearn":
        from sklearn.kernel_approximation import Nystroem
        from sklearn.linear_model import Ridge

        Xa = np.asarray(X)
        ny = Nystroem(gamma=args.gamma, n_components=args.m, random_state=2)
        model = Ridge(alpha=args.n * lam).fit(ny.fit_transform(Xa), y)
        rec["fit_seconds"] = time.perf_counter() - t0
        pred = model.predict(ny.transform(Xt))
    elif args.section == "huber":
        from skframe.compute.stream_problems import feature_projection, make_feature_problem
        from skframe.compute.streaming import gather_rows, predict_chunks
        from skframe.contract.registry import get_loss, get_solver

        opts = ComputeOptions(memory_budget=args.budget, dtype=args.huber_dtype)
        R = draw_sketch(get_sketch("subsample", size=args.m), args.n, np.random.default_rng(2))
        X_sub = gather_rows(X, R.indices)
        proj, _ = feature_projection(kernel, X_sub, R.mix)
        problem, rep = make_feature_problem(kernel, X, y, X_sub, proj, opts)
        from skframe.core.linalg import solve_psd

        A, B = problem.gram()  # one pass: the square-loss solution starts L-BFGS
        A[np.diag_indices_from(A)] += args.n * lam
        t_setup = time.perf_counter() - t0
        pass_seconds = []
        if hasattr(problem, "loss_pass"):  # streamed features: time each pass over the kernel blocks
            own_pass = problem.loss_pass

            def timed_pass(*a, **kw):
                t = time.perf_counter()
                try:
                    return own_pass(*a, **kw)
                finally:
                    pass_seconds.append(time.perf_counter() - t)

            problem.loss_pass = timed_pass
        solver = get_solver("lbfgs", max_iter=args.huber_iter)
        res = solver.solve(problem, get_loss("huber", kappa=args.kappa), lam, init=solve_psd(A, B))
        rec["fit_seconds"] = time.perf_counter() - t0
        rec.update(representation=rep, setup_seconds=t_setup, n_iter=res.n_iter,
                   n_passes=res.info["function_evaluations"], budget=args.budget,
                   seconds_per_pass=float(np.median(pass_seconds)) if pass_seconds else None)
        pred = predict_chunks(kernel, Xt, X_sub, proj @ res.W)[:, 0]
    else:
        raise SystemExit(f"unknown section {args.section!r}")
    rec["test_mse"] = float(np.mean((pred - yt) ** 2))
    return rec


def f32_study(args):
    """float32 vs float64 on one problem: times, test MSEs and per-operation costs (see the module docstring)."""
    from scipy.linalg import blas

    from skframe.compute.engines import _mix_diagonal
    from skframe.compute.streaming import accumulate, predict_chunks, ridge_from_sums, sketch_gram
    from skframe.contract.protocols import kernel_block
    from skframe.contract.registry import get_kernel, get_sketch
    from skframe.core.linalg import sketch_spectrum
    from skframe.core.sketching import draw_sketch
    from skframe.options import ComputeOptions

    n, m, rows = args.study_n, args.m, 8000
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(n, args.d))
    y = friedman_target(X, rng)
    Xt = np.random.default_rng(1).uniform(size=(args.n_test, args.d))
    yt = friedman_target(Xt)
    kernel = get_kernel("gaussian", gamma=args.gamma)
    R = draw_sketch(get_sketch("subsample", size=m), n, np.random.default_rng(2))
    X_sub = X[R.indices]
    RKR = sketch_gram(kernel, X_sub, R.mix)
    w, U = sketch_spectrum(RKR)
    lam = 1e-3 / n
    kernel_block(kernel, X[:100], X_sub)  # compiled kernels, not timed
    rec = {"section": "f32study", "n": n, "m": m, "rank": int(w.size), "kappa": float(w.max() / w.min()),
           "chunk_rows": rows, "variants": {}}

    def mse(coef):
        return float(np.mean((predict_chunks(kernel, Xt, X_sub, coef)[:, 0] - yt) ** 2))

    for name, dtype, products in (("float64", "float64", "float64"), ("float32 products", "float32", "float32"),
                                  ("float32 blocks, float64 products", "float32", "float64")):
        sums, seconds = _setup.timed(accumulate, kernel, X, y, X_sub, R.mix, options=ComputeOptions(dtype=dtype),
                                     chunk_rows=rows, products=products)
        coef = ridge_from_sums(sums, RKR, R.mix, lam, eig=(w, U))[0]
        rec["variants"][name] = {"seconds": seconds, "test_mse": mse(coef)}
    # whitened float32: features Z = B (s U D^-1/2) per chunk, Z^T Z by ssyrk, added to a float64 sum
    UDs = (_mix_diagonal(R.mix)[:, None] * (U / np.sqrt(w)))
    UD32 = UDs.astype(np.float32)
    r = w.size
    A, b, part = np.zeros((r, r), order="F"), np.zeros((r, 1)), np.zeros((r, r), np.float32, order="F")
    t0 = time.perf_counter()
    for start in range(0, n, rows):
        Z = kernel_block(kernel, X[start:start + rows], X_sub, dtype=np.float32) @ UD32
        blas.ssyrk(1.0, Z.T, beta=0.0, c=part, trans=0, lower=0, overwrite_c=1)
        A += part
        b += Z.T @ y[start:start + rows, None].astype(np.float32)  # float32 product, float64 sum
    seconds = time.perf_counter() - t0
    A = np.triu(A)
    A = A + np.triu(A, 1).T
    A[np.diag_indices(r)] += n * lam
    rec["variants"]["float32 whitened products"] = {"seconds": seconds, "test_mse": mse(UDs @ np.linalg.solve(A, b))}
    ref = rec["variants"]["float64"]["test_mse"]
    for v in rec["variants"].values():
        v["test_mse_change"] = v["test_mse"] / ref - 1.0
        v["speedup_vs_float64"] = rec["variants"]["float64"]["seconds"] / v["seconds"]
    # per-operation costs on one chunk, scaled to 1e6 rows
    B = kernel_block(kernel, X[:rows], X_sub)
    B32 = B.astype(np.float32)
    C, C32 = np.zeros((m, m), order="F"), np.zeros((m, m), np.float32, order="F")

    def per_million(f, rep=5):
        f()
        t0 = time.perf_counter()
        for _ in range(rep):
            f()
        return (time.perf_counter() - t0) / rep * 1e6 / rows

    rec["seconds_per_1e6_rows"] = {
        "kernel block (float64, rounded to float32 when asked)": per_million(
            lambda: kernel_block(kernel, X[:rows], X_sub)),
        "dsyrk B^T B": per_million(lambda: blas.dsyrk(1.0, B.T, beta=1.0, c=C, trans=0, lower=0, overwrite_c=1)),
        "ssyrk B^T B": per_million(lambda: blas.ssyrk(1.0, B32.T, beta=0.0, c=C32, trans=0, lower=0,
                                                      overwrite_c=1)),
        "sgemm Z = B U D^-1/2 + ssyrk Z^T Z": per_million(
            lambda: blas.ssyrk(1.0, (B32 @ UD32).T, trans=0, lower=0)),
    }
    return rec


def dask_section(args):
    import dask.array as da
    from distributed import Client, LocalCluster

    from skframe.compute.distributed import fit_sketched_ridge_dask
    from skframe.compute.streaming import predict_chunks
    from skframe.contract.registry import get_kernel, get_sketch
    from skframe.core.sketching import draw_sketch

    n, chunk = args.dask_n, args.dask_chunk
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=40) as cluster, Client(cluster) as client:
        X = da.random.default_rng(0).uniform(size=(n, args.d), chunks=(chunk, args.d)).persist()
        y = X.map_blocks(lambda b: friedman_target(b)[:, None], chunks=(X.chunks[0], (1,)), dtype=float).persist()
        client.wait_for_workers(2)
        base = client.run(rss_bytes)
        kernel = get_kernel("gaussian", gamma=args.gamma)
        # warm-up: imports and compiled kernels on the workers, timed apart
        small = draw_sketch(get_sketch("subsample", size=10), 2 * chunk, np.random.default_rng(3))
        _, warmup = _setup.timed(fit_sketched_ridge_dask, kernel, X[:2 * chunk], y[:2 * chunk], small, 1e-3)
        R = draw_sketch(get_sketch("subsample", size=args.m), n, np.random.default_rng(2))
        res, elapsed = _setup.timed(fit_sketched_ridge_dask, kernel, X, y, R, 1e-3 / n)
        peaks = client.run(peak_bytes)
    Xt = np.random.default_rng(1).uniform(size=(args.n_test, args.d))
    pred = predict_chunks(kernel, Xt, res.X_sub, res.coef)[:, 0]
    return {"section": "dask", "n": n, "m": args.m, "workers": 2, "partitions": res.info["partitions"],
            "fit_seconds": elapsed, "warmup_seconds": warmup,
            "test_mse": float(np.mean((pred - friedman_target(Xt)) ** 2)),
            "worker_peak_rss_bytes": list(peaks.values()),
            "worker_rss_with_data_bytes": list(base.values())}


def main():
    p = _setup.parser(__doc__, n=1_000_000, n_test=10_000, d=10, m=1000, gamma=0.5, budget="2GB", kappa=1.0,
                      huber_iter=20, huber_dtype="float32", dask_n=2_000_000, dask_chunk=250_000)
    p.add_argument("--memmap", action="store_true", help="read X from a memory-mapped .npy written in chunks")
    p.add_argument("--tmp", default=None, help="directory of the memory-mapped data (default: a temp dir)")
    p.add_argument("--out", help="also write benchmarks/out/OUT.json (e.g. scale_1e6)")
    p.add_argument("--study-n", type=int, default=100_000, help="rows of the f32study section")
    p.add_argument("--sections", default=DEFAULT_SECTIONS)
    p.add_argument("--section", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.section:  # child process: one section, one JSON line
        rec = {"dask": dask_section, "f32study": f32_study}.get(args.section, section)(args)
        _setup.emit(rec, indent=None)
        return
    out = {"benchmark": "scale", "settings": {k: v for k, v in vars(args).items() if k not in ("section", "tmp")},
           "versions": _setup.versions(), "results": []}
    load_before = os.getloadavg()  # a shared machine: the load says how noisy the timings are
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.sections.split(","):
            cmd = [sys.executable, __file__, "--section", name.strip(), "--tmp", args.tmp or tmp] + [
                a for a in sys.argv[1:] if a != "--out" and a != args.out]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode:
                out["results"].append({"section": name, "error": proc.stderr.strip().splitlines()[-1:]})
            else:
                out["results"].append(json.loads(proc.stdout.strip().splitlines()[-1]))
    out["load_average_before"] = load_before
    out["load_average_after"] = os.getloadavg()
    _setup.emit(out, _setup.OUT / f"{args.out}.json" if args.out else None)


if __name__ == "__main__":
    main()
