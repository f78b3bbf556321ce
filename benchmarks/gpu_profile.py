"""Where the time of a GPU fit goes: the stages of one fit, and the chunk operations alone.

For the two sizes of ``bench_gpu.py`` (``repeat``: n = 1e7, m = 2 000; ``large_m``: n = 2e6, m = 10 000; Friedman
data, d = 10, Gaussian kernel gamma = 0.5, Nyström sub-sampling):

  fit       default fits (the plan takes the GPU): the best of two after a first one
  profile   one fit under cProfile with ``CUDA_LAUNCH_BLOCKING=1`` (a child process): the GPU time lands on the
            Python call that launched it; the functions with the most own time
  ops       one chunk of the plan's size, timed with CUDA events: the copy of the rows to the device, the kernel
            block, ``B^T B`` by cuBLAS syrk and by gemm in float64 and float32 (TF32 off), ``B^T y``

    python benchmarks/gpu_profile.py [--sizes repeat,large_m,huber] [--out FILE]

``huber`` (n = 1e6, m = 1 000, bench_gpu.py's Huber fit with L-BFGS on the GPU) is profiled only.

Prints ONE JSON object. Needs CuPy and a GPU.
"""

import argparse
import cProfile
import io
import json
import os
import pstats
import subprocess
import sys
import time

import _setup  # runtime settings and sys.path, before NumPy
import numpy as np  # noqa: E402

SIZES = {"repeat": (10**7, 2000), "large_m": (2 * 10**6, 10_000), "huber": (10**6, 1000)}
GAMMA = 0.5


def model(m, huber=False):
    from skframe import SketchedKernelRidge
    from skframe.models import SketchedKernelMachine

    if huber:  # bench_gpu.py's huber section: kappa = 1, L-BFGS with 20 iterations, on the GPU
        return SketchedKernelMachine(loss="huber", loss_params={"kappa": 1.0}, kernel_params={"gamma": GAMMA},
                                     sketch="subsample", sketch_size=m, lam=1e-7, random_state=0, solver="lbfgs",
                                     solver_params={"max_iter": 20}, backend="cupy")
    return SketchedKernelRidge(kernel_params={"gamma": GAMMA}, sketch="subsample", sketch_size=m, lam=1e-9,
                               random_state=0)


def timed_fits(n, m):
    X, y = _setup.friedman_data(n, 10, 0, step=500_000)
    times, est = [], None
    for _ in range(3):
        t0 = time.perf_counter()
        est = model(m).fit(X, y)
        times.append(round(time.perf_counter() - t0, 3))
    ex = est.execution_
    return {"fit_seconds": times, "chunk_rows": ex.get("chunk_rows"), "backend": ex.get("backend"),
            "products": ex.get("products"), "dtype": ex.get("dtype"), "representation": est.representation_}


def profiled_fit(n, m, top=25, huber=False):
    X, y = _setup.friedman_data(n, 10, 0, step=500_000)
    model(m, huber).fit(X[:20_000], y[:20_000]) if huber else model(m).fit(X, y)  # compiled kernels, handles
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.enable()
    model(m, huber).fit(X, y)
    prof.disable()
    wall = time.perf_counter() - t0
    s = io.StringIO()
    st = pstats.Stats(prof, stream=s)
    rows = []
    for (file, line, name), (_, nc, tt, ct, _callers) in st.stats.items():
        rows.append({"function": f"{os.path.basename(file)}:{line}:{name}", "calls": nc, "own_s": round(tt, 3),
                     "cumulative_s": round(ct, 3)})
    own = sorted(rows, key=lambda r: -r["own_s"])[:top]
    cum = sorted((r for r in rows if "skframe" in r["function"] or r["function"].split(":")[0].endswith(".py")),
                 key=lambda r: -r["cumulative_s"])[:top]
    return {"wall_seconds": round(wall, 3), "by_own_time": own, "by_cumulative_time": cum}


def ops(n, m, rows):
    import cupy as cp
    from cupy.cublas import syrk

    from skframe.contract.registry import get_kernel

    kernel = get_kernel("gaussian", gamma=GAMMA)
    rng = np.random.default_rng(0)
    Xh = rng.uniform(size=(rows, 10))
    yh = rng.normal(size=(rows, 1))
    Xs = cp.asarray(rng.uniform(size=(m, 10)))
    start, end = cp.cuda.Event(), cp.cuda.Event()

    def t(fn, reps=3):
        fn()
        best = float("inf")
        for _ in range(reps):
            start.record()
            fn()
            end.record()
            end.synchronize()
            best = min(best, cp.cuda.get_elapsed_time(start, end) / 1e3)
        return round(best, 5)

    Xd = cp.asarray(Xh)
    B = kernel(Xd, Xs)
    B32 = B.astype(np.float32)
    yd = cp.asarray(yh)
    out = {"rows": rows, "m": m, "chunks_per_fit": -(-n // rows)}
    out["copy_rows_to_device_s"] = t(lambda: cp.asarray(Xh))
    out["kernel_block_f64_s"] = t(lambda: kernel(Xd, Xs))
    out["syrk_f64_s"] = t(lambda: syrk("T", B, lower=False))
    out["gemm_f64_s"] = t(lambda: B.T @ B)
    out["syrk_f32_s"] = t(lambda: syrk("T", B32, lower=False))
    out["gemm_f32_s"] = t(lambda: B32.T @ B32)
    out["Bt_y_f64_s"] = t(lambda: B.T @ yd)
    # the engine's B^T B on a Fortran-ordered chunk: column bands of each width (0: one cuBLAS syrk)
    from skframe.compute._engine_cupy import ArrayEngine

    BF = cp.asfortranarray(B)
    C = cp.zeros((m, m), order="F")
    out["syrk_add_by_band_width_s"] = {}
    for width in sorted({0, m // 8, m // 5, m // 4, m // 3, m // 2, 500, 1000, 1250, 2000}):
        if width and not (250 <= width <= m // 2):
            continue
        engine = ArrayEngine(cp, band_width=width)
        out["syrk_add_by_band_width_s"][str(width)] = t(lambda e=engine, C=C, BF=BF: e.syrk_add(C, BF))
    out["astype_f32_s"] = t(lambda: B.astype(np.float32))
    for k in [k for k in out if k.endswith("_s") and not isinstance(out[k], dict)]:
        out[k[:-2] + "_per_fit_s"] = round(out[k] * out["chunks_per_fit"], 3)
    flops = rows * m * m  # syrk: rows m (m + 1) / 2 multiply-adds
    out["syrk_f64_tflops"] = round(flops / out["syrk_f64_s"] / 1e12, 1)
    out["gemm_f64_tflops"] = round(2 * flops / out["gemm_f64_s"] / 1e12, 1)
    out["syrk_f32_tflops"] = round(flops / out["syrk_f32_s"] / 1e12, 1)
    out["gemm_f32_tflops"] = round(2 * flops / out["gemm_f32_s"] / 1e12, 1)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="repeat,large_m")
    ap.add_argument("--out", default=None)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        n, m = SIZES[args.child]
        print(json.dumps(profiled_fit(n, m, huber=args.child == "huber")))
        return
    report = {"benchmark": "gpu_profile", "versions": _setup.versions(), "sizes": {}}
    for name in args.sizes.split(","):
        n, m = SIZES[name]
        rec = {"n": n, "m": m}
        if name == "huber":  # the profile alone (bench_gpu.py times it)
            env = dict(os.environ, CUDA_LAUNCH_BLOCKING="1")
            proc = subprocess.run([sys.executable, __file__, "--child", name], capture_output=True, text=True,
                                  env=env, timeout=240)
            rec["profile"] = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 else \
                {"error": proc.stderr.strip().splitlines()[-5:]}
            report["sizes"][name] = rec
            continue
        try:
            rec["fit"] = timed_fits(n, m)
        except Exception as exc:
            rec["fit"] = {"error": f"{type(exc).__name__}: {exc}"}
        env = dict(os.environ, CUDA_LAUNCH_BLOCKING="1")
        proc = subprocess.run([sys.executable, __file__, "--child", name], capture_output=True, text=True, env=env,
                              timeout=240)
        rec["profile"] = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 else \
            {"error": proc.stderr.strip().splitlines()[-5:]}
        rows = rec["fit"].get("chunk_rows") or 100_000
        try:
            rec["ops"] = ops(n, m, int(rows))
            import cupy

            cupy.get_default_memory_pool().free_all_blocks()
        except Exception as exc:
            rec["ops"] = {"error": f"{type(exc).__name__}: {exc}"}
        report["sizes"][name] = rec
        print(json.dumps(rec)[:2000], file=sys.stderr, flush=True)
    _setup.emit(report, args.out or _setup.OUT / "gpu_profile.json")


if __name__ == "__main__":
    main()
