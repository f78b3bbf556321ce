"""Dask: the client's peak memory during a fit on dask arrays, at several n, and its predictions.

A ``LocalCluster`` of 2 single-threaded worker processes holds Friedman-like data (X uniform in
[0, 1]^d, d = 10, y = 10 sin(pi x1 x2) + 20 (x3 - 0.5)^2 + 10 x4 + 5 x5 + noise), generated and
persisted on the workers in partitions of ``--chunk`` rows; the client never sees them. The model is
``SketchedKernelRidge(kernel_params={"gamma": 0.5}, sketch="subsample", sketch_size=1000, lam=1e-6,
random_state=0)`` (Nystrom sub-sampling, m = 1 000) fitted on the dask arrays ``(X, y)``.

The client's peak growth is measured two ways over the fit (after a warm-up fit on two partitions,
which pays the imports and compiled kernels): ``VmHWM`` of the client process (reset through
``/proc/self/clear_refs`` just before the fit) above its resident size then, and the ``tracemalloc``
peak (NumPy's buffers included; not fooled by memory the allocator kept from earlier). The
scheduler of a ``LocalCluster`` runs in the client process, so its share is counted too.

Then the same estimator is fitted on the data gathered as NumPy arrays in the client (the
single-machine path, after the measurement) and both predict a subsample of ``--n-check``
training rows and ``--n-check`` fresh test rows: the largest relative difference is reported
(target 1e-6). ``--no-check`` skips that fit.

Each n runs in its own process (a fresh client). The load average before and after is recorded:
the machine may be shared.

    python benchmarks/bench_dask_client.py [--sizes 2000000,4000000 --chunk 250000]
        [--out benchmarks/out/dask_client.json]

Prints ONE JSON object (also written to ``--out``).
"""

import argparse
import json
import os
import subprocess
import sys
import time
import tracemalloc

import _setup  # runtime settings, before NumPy
import numpy as np  # noqa: E402

GAMMA, M, LAM, D, WORKERS = 0.5, 1000, 1e-6, 10, 2
TARGET_GROWTH_BYTES = 100 * 10**6


def _noisy_target(block, block_info=None):
    """The target of one partition, with noise seeded by the partition's position (reproducible)."""
    seed = 1000 + (block_info[0]["chunk-location"][0] if block_info else 0)
    return _setup.friedman_target(block, np.random.default_rng(seed))


def model():
    from skframe import SketchedKernelRidge

    return SketchedKernelRidge(kernel_params={"gamma": GAMMA}, sketch="subsample", sketch_size=M, lam=LAM,
                               random_state=0)


def one(n, chunk, n_check, check):
    """One size in this process: its JSON record."""
    import dask.array as da
    from distributed import Client, LocalCluster, wait

    rec = {"n": n, "d": D, "m": M, "workers": WORKERS, "partition_rows": chunk}
    with LocalCluster(n_workers=WORKERS, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=40) as cluster, Client(cluster) as client:
        client.wait_for_workers(WORKERS)
        X = da.random.default_rng(0).uniform(size=(n, D), chunks=(chunk, D)).persist()
        y = X.map_blocks(_noisy_target, drop_axis=1, dtype=float).persist()
        wait([X, y])  # the data live on the workers before the measurement
        t0 = time.perf_counter()
        model().fit(X[:2 * chunk], y[:2 * chunk])  # warm-up: imports, compiled kernels (client and workers)
        rec["warmup_seconds"] = round(time.perf_counter() - t0, 2)
        base = _setup.proc_status_bytes("VmRSS")
        reset = _setup.reset_peak_rss()
        tracemalloc.start()
        t0 = time.perf_counter()
        est = model().fit(X, y)
        rec["fit_seconds"] = round(time.perf_counter() - t0, 2)
        traced = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        hwm = _setup.proc_status_bytes("VmHWM") - base if reset else None
        rec.update(client_rss_before_bytes=base, client_peak_growth_hwm_bytes=hwm,
                   client_peak_growth_tracemalloc_bytes=traced,
                   client_peak_growth_bytes=max(traced, hwm or 0),
                   execution=est.execution_, representation=est.representation_)
        if check:
            rows = np.random.default_rng(7).choice(n, size=min(n_check, n), replace=False)
            X_np, y_np = client.compute([X, y], sync=True)
    if not check:
        return rec
    t0 = time.perf_counter()
    ref = model().fit(X_np, y_np)
    rec["numpy_fit_seconds"] = round(time.perf_counter() - t0, 2)
    rec["numpy_execution"] = ref.execution_
    X_test = np.random.default_rng(11).uniform(size=(n_check, D))
    diffs = {}
    for name, Xq in (("train_subsample", X_np[np.sort(rows)]), ("test", X_test)):
        a, b = est.predict(Xq), ref.predict(Xq)
        diffs[name] = float(np.max(np.abs(a - b)) / np.max(np.abs(b)))
    rec["prediction_rel_diff"] = diffs
    rec["test_mse_noiseless"] = float(np.mean((est.predict(X_test) - _setup.friedman_target(X_test)) ** 2))
    return rec


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="2000000,4000000", help="comma-separated n (e.g. 2e6,4e6)")
    ap.add_argument("--chunk", type=lambda v: int(float(v)), default=250_000, help="rows per partition")
    ap.add_argument("--n-check", type=lambda v: int(float(v)), default=10_000)
    ap.add_argument("--no-check", action="store_true", help="skip the in-memory fit and the prediction check")
    ap.add_argument("--one", type=lambda v: int(float(v)), help=argparse.SUPPRESS)
    ap.add_argument("--out", default=str(_setup.OUT / "dask_client.json"))
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.chunk, args.n_check, not args.no_check)))
        return
    rows = []
    for n in (int(float(v)) for v in args.sizes.split(",")):
        load = os.getloadavg()
        cmd = [sys.executable, __file__, "--one", str(n), "--chunk", str(args.chunk), "--n-check", str(args.n_check)]
        proc = subprocess.run(cmd + (["--no-check"] if args.no_check else []), capture_output=True, text=True)
        if proc.returncode:
            rows.append({"n": n, "error": proc.stderr.strip().splitlines()[-3:]})
        else:
            rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        rows[-1].update(load_average_before=load, load_average_after=os.getloadavg())
        print(json.dumps({k: v for k, v in rows[-1].items() if "execution" not in k}), file=sys.stderr, flush=True)
    ok = [r for r in rows if "error" not in r]
    summary = {"max_client_peak_growth_bytes": max((r["client_peak_growth_bytes"] for r in ok), default=None),
               "target_growth_bytes": TARGET_GROWTH_BYTES}
    summary["growth_within_target"] = bool(ok) and len(ok) == len(rows) and \
        summary["max_client_peak_growth_bytes"] <= TARGET_GROWTH_BYTES
    if ok and all("prediction_rel_diff" in r for r in ok):
        summary["max_prediction_rel_diff"] = max(max(r["prediction_rel_diff"].values()) for r in ok)
        summary["predictions_within_1e-6"] = summary["max_prediction_rel_diff"] <= 1e-6
    report = {"benchmark": "dask_client", "versions": _setup.versions(), "gamma": GAMMA, "lam": LAM,
              "cpu_count": os.cpu_count(), "rows": rows, "summary": summary}
    _setup.emit(report, args.out)


if __name__ == "__main__":
    main()
