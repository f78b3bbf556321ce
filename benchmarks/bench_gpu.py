"""The GPU benchmark: repeated and first fits, a large sketch with default settings, κ-Huber passes, CPU agreement.

Friedman-like data (X uniform in [0, 1]^d, d = 10, y = 10 sin(pi x1 x2) + 20 (x3 - 0.5)^2 + 10 x4 +
5 x5 + noise), generated on the host (each chunk of a fit is copied to the device), Gaussian kernel
gamma = 0.5, Nyström sub-sampling; test MSE on 10 000 fresh rows. Sections, each in its own process:

  repeat   n = 1e7, m = 2 000, ``SketchedKernelRidge`` with default settings (the plan takes the GPU):
           the first fit of the process, then the best of ``--repeats`` fits
  fresh    the first fit in a fresh process (CUDA context, cuBLAS/cuSOLVER handles, compiled kernels),
           with an empty CuPy kernel cache (``CUPY_CACHE_DIR`` in a temporary folder: every kernel
           compiled) and with the default, warm cache; the import time apart, and a second fit
  large_m  n = 2e6, m = 10 000 with default settings (no backend, budget or precision given)
  huber    κ-Huber (kappa = 1), n = 1e6, m = 1 000, L-BFGS with 20 iterations (``solver_params``), on the
           GPU (``backend="cupy"``) and on this machine's CPU (``backend="numpy"``): times and test MSE;
           the 2-core time of ``benchmarks/out/scale_huber_1e6.json`` is quoted when present
  agree    n = 1e6, m = 1 000 ridge on the GPU and on the CPU: test MSE of each, largest prediction gap
  dsokr    DSOKR's default recipe on Bibtex (mlp, Gaussian output kernel sigma^2 = 1e4, m_Y = 200) with
           ``device="cuda"`` and on this machine's CPU cores: fit seconds and example-based F1 of each
           (needs the Bibtex files; skipped without a CUDA build of PyTorch)

The targets (issue "one execution plan", on an H100/H200) are checked in ``summary``. With
``--junit FILE`` the GPU tests' JUnit report (``benchmarks/gpu_check.sh``) is folded into the same
JSON. ``--cpu-dry-run`` runs every section at tiny sizes with the NumPy backend standing in for the
GPU: it checks the script's logic on a machine without one (its timings mean nothing).

    python benchmarks/bench_gpu.py [--sections repeat,fresh,large_m,huber,agree] [--out FILE]
    python benchmarks/bench_gpu.py --cpu-dry-run --out benchmarks/out/gpu_check_dry_run.json

Prints ONE JSON object (also written to ``--out``).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _setup  # runtime settings and sys.path, before NumPy; the measuring helpers
import numpy as np  # noqa: E402

SECTIONS = "repeat,fresh,large_m,huber,agree,dsokr"
GAMMA, D, KAPPA, N_TEST, HUBER_ITER = 0.5, 10, 1.0, 10_000, 20
#: (n, m) of each section, on a GPU and in the dry run
SIZES = {"repeat": ((10**7, 2000), (20_000, 200)), "fresh": ((10**7, 2000), (20_000, 200)),
         "large_m": ((2 * 10**6, 10_000), (20_000, 1000)), "huber": ((10**6, 1000), (10_000, 100)),
         "agree": ((10**6, 1000), (20_000, 200))}
TARGETS = {"repeat_fit_seconds": 1.2, "first_fit_warm_cache_seconds": 2.5, "large_m_seconds": 6.0,
           "huber_speedup_vs_2_cores": 10.0, "test_mse_rel_diff": 1e-6, "dsokr_speedup_vs_this_cpu": 3.0,
           "dsokr_f1_diff": 0.5}
SECTION_TIMEOUT = int(os.environ.get("GPU_CHECK_SECTION_TIMEOUT", "300"))


def friedman(n, seed):
    """(X, y) of Friedman's first problem, generated in blocks (no transient copy of the data)."""
    return _setup.friedman_data(n, D, seed, step=500_000)


def device_info():
    """The GPU and CuPy versions, or why there is none."""
    try:
        import cupy

        props = cupy.cuda.runtime.getDeviceProperties(0)
        free, total = cupy.cuda.runtime.memGetInfo()
        name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
        return {"gpu": name, "gpu_memory_bytes": int(total), "gpu_free_bytes": int(free), "cupy": cupy.__version__,
                "cuda_runtime": int(cupy.cuda.runtime.runtimeGetVersion()),
                "kernel_cache": os.environ.get("CUPY_CACHE_DIR", "default (~/.cupy/kernel_cache)")}
    except Exception as exc:  # no CuPy, no driver, no device
        return {"gpu": None, "why": f"{type(exc).__name__}: {exc}"}


def ridge(m, backend=None, lam=1e-9):
    from skframe import SketchedKernelRidge

    extra = {} if backend is None else {"backend": backend}
    return SketchedKernelRidge(kernel_params={"gamma": GAMMA}, sketch="subsample", sketch_size=m, lam=lam,
                               random_state=0, **extra)


def huber(m, backend, iters):
    from skframe.models import SketchedKernelMachine

    return SketchedKernelMachine(loss="huber", loss_params={"kappa": KAPPA}, kernel_params={"gamma": GAMMA},
                                 sketch="subsample", sketch_size=m, lam=1e-7, random_state=0, solver="lbfgs",
                                 solver_params={"max_iter": iters}, backend=backend)


def fitted(model, X, y, Xt, yt):
    """Fit, time it, and the record of the fit: seconds, test MSE, the plan's main choices."""
    t0 = time.perf_counter()
    model.fit(X, y)
    seconds = time.perf_counter() - t0
    ex = model.execution_
    return {"fit_seconds": round(seconds, 3), "test_mse": float(np.mean((model.predict(Xt) - yt) ** 2)),
            "backend": ex.get("backend"), "executor": ex.get("executor"), "chunk_rows": ex.get("chunk_rows"),
            "memory_budget": ex.get("memory_budget"), "budget_source": ex.get("budget_source"),
            "representation": model.representation_}


def dsokr_section(dry):
    """DSOKR's default recipe on Bibtex (mlp, Gaussian output kernel sigma^2 = 1e4, m_Y = 200): device="cuda"
    against this machine's CPU cores, F1 and fit seconds (target: >= 3x faster, F1 within 0.5 points)."""
    import torch

    from skframe.datasets import load_bibtex
    from skframe.metrics import example_based_f1
    from skframe.models import DeepOutputKernelRegressor

    if not dry and not torch.cuda.is_available():
        return {"section": "dsokr", "skipped": "PyTorch sees no CUDA GPU (a CPU build of torch?)"}
    ds = load_bibtex()
    Xtr, Xte, Ytr, Yte = ds.X_train, ds.X_test, np.asarray(ds.y_train, float), np.asarray(ds.y_test, float)
    if dry:
        Xtr, Ytr = Xtr[:600], Ytr[:600]
    rec = {"section": "dsokr", "n_train": int(Xtr.shape[0]), "cpu_threads": torch.get_num_threads()}
    if not dry:
        torch.ones(1, device="cuda").sum().item()  # the CUDA context, outside the timed fit
    gpu = "cpu" if dry else "cuda"  # dry run: the CPU stands in
    for key, device, mixed in (("cpu", "cpu", False), ("cuda", gpu, False), ("cuda_mixed_precision", gpu, True)):
        model = DeepOutputKernelRegressor(output_kernel_params={"gamma": 1 / (2 * 1e4)}, output_sketch_size=200,
                                          epochs=3 if dry else 60, device=device, mixed_precision=mixed,
                                          random_state=0)
        _, fit_s = _setup.timed(model.fit, Xtr, Ytr)
        rec[key] = {
            "fit_seconds": fit_s, "f1": 100 * example_based_f1(Yte, model.predict(Xte)),
            "epochs_run": model.fit_info_["members"][0]["epochs_run"], "batch_size": model.fit_info_["batch_size"],
            "inputs_resident": model.fit_info_["inputs_resident"]}
    rec["speedup_vs_this_cpu"] = round(rec["cpu"]["fit_seconds"] / rec["cuda"]["fit_seconds"], 2)
    rec["f1_diff"] = abs(rec["cuda"]["f1"] - rec["cpu"]["f1"])
    # mixed precision (bfloat16 forward passes) earns its place where it is faster and keeps the decoded metric
    mixed = rec["cuda_mixed_precision"]
    rec["mixed_precision_speedup_vs_cuda"] = round(rec["cuda"]["fit_seconds"] / mixed["fit_seconds"], 2)
    rec["mixed_precision_f1_diff"] = abs(mixed["f1"] - rec["cuda"]["f1"])
    return rec


def section(name, dry, repeats, gpu_backend):
    """One section in this process: its JSON record."""
    if name == "dsokr":
        return dsokr_section(dry)
    (n, m) = SIZES[name][1 if dry else 0]
    X, y = friedman(n, 0)
    Xt, yt = friedman(N_TEST, 1)
    rec = {"section": name, "n": n, "m": m, "d": D}
    if name == "repeat":
        first = fitted(ridge(m), X, y, Xt, yt)
        runs = [fitted(ridge(m), X, y, Xt, yt) for _ in range(repeats)]
        best = min(runs, key=lambda r: r["fit_seconds"])
        rec.update(first_fit_seconds=first["fit_seconds"], repeat_fit_seconds=best["fit_seconds"],
                   repeat_fit_all_seconds=[r["fit_seconds"] for r in runs],
                   **{k: v for k, v in best.items() if k != "fit_seconds"})
    elif name == "fresh":
        first = fitted(ridge(m), X, y, Xt, yt)
        second = fitted(ridge(m), X, y, Xt, yt)
        rec.update(import_seconds=IMPORT_SECONDS, first_fit_seconds=first["fit_seconds"],
                   second_fit_seconds=second["fit_seconds"], backend=first["backend"],
                   first_fit_extra_seconds=round(first["fit_seconds"] - second["fit_seconds"], 3),
                   kernel_cache=os.environ.get("CUPY_CACHE_DIR", "default"))
    elif name == "large_m":
        rec.update(fitted(ridge(m), X, y, Xt, yt))
    elif name == "huber":
        iters = 5 if dry else HUBER_ITER
        fitted(huber(min(m, 20), gpu_backend, 2), X[:2000], y[:2000], Xt, yt)  # warm-up: imports and kernels
        on_gpu = huber(m, gpu_backend, iters)
        g = fitted(on_gpu, X, y, Xt, yt)
        cpu = huber(m, "numpy", iters)
        c = fitted(cpu, X, y, Xt, yt)
        rec.update(lbfgs_iterations=iters, gpu=g, cpu=c, cpu_cores=os.cpu_count(),
                   gpu_iterations=int(on_gpu.n_iter_), cpu_iterations=int(cpu.n_iter_),
                   gpu_function_evaluations=on_gpu.solver_info_.get("function_evaluations"),
                   speedup_vs_this_cpu=round(c["fit_seconds"] / g["fit_seconds"], 2),
                   test_mse_rel_diff=abs(g["test_mse"] - c["test_mse"]) / c["test_mse"])
        ref = _setup.OUT / "scale_huber_1e6.json"
        if ref.exists() and not dry:
            two_cores = [r for r in json.loads(ref.read_text()).get("results", []) if r.get("section") == "huber"]
            if two_cores:
                rec["two_core_reference_seconds"] = two_cores[0]["fit_seconds"]
                rec["speedup_vs_2_cores"] = round(two_cores[0]["fit_seconds"] / g["fit_seconds"], 2)
    elif name == "agree":
        fitted(ridge(min(m, 20), gpu_backend), X[:2000], y[:2000], Xt, yt)  # warm-up
        g_model, c_model = ridge(m, gpu_backend, lam=1e-7), ridge(m, "numpy", lam=1e-7)
        g, c = fitted(g_model, X, y, Xt, yt), fitted(c_model, X, y, Xt, yt)
        pg, pc = g_model.predict(Xt), c_model.predict(Xt)
        rec.update(gpu=g, cpu=c, test_mse_rel_diff=abs(g["test_mse"] - c["test_mse"]) / c["test_mse"],
                   prediction_max_rel_diff=float(np.max(np.abs(pg - pc)) / np.max(np.abs(pc))))
    return rec


def junit_summary(path):
    """Counts and failing tests of a pytest JUnit XML report."""
    import xml.etree.ElementTree as ET

    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    out = {k: sum(int(s.get(k, 0)) for s in suites) for k in ("tests", "failures", "errors", "skipped")}
    out["passed"] = out["tests"] - out["failures"] - out["errors"] - out["skipped"]
    out["not_passed"] = [f"{case.get('classname')}::{case.get('name')}: {child.tag}"
                         for case in root.iter("testcase") for child in case
                         if child.tag in ("failure", "error")]
    out["skipped_tests"] = sorted({f"{case.get('classname')}::{case.get('name')}"
                                   for case in root.iter("testcase") for child in case if child.tag == "skipped"})
    return out


def summary(results, dry):
    """The targets, each with the measured value and whether it is met (None: not measured)."""
    by = {r["section"]: r for r in results if "error" not in r}
    fresh_warm = [r for r in results if r.get("section") == "fresh" and r.get("kernel_cache") == "default"
                  and "error" not in r]
    measured = {
        "repeat_fit_seconds": by.get("repeat", {}).get("repeat_fit_seconds"),
        "first_fit_warm_cache_seconds": fresh_warm[0]["first_fit_seconds"] if fresh_warm else None,
        "large_m_seconds": by.get("large_m", {}).get("fit_seconds"),
        "huber_speedup_vs_2_cores": by.get("huber", {}).get("speedup_vs_2_cores"),
        "test_mse_rel_diff": max([by[s]["test_mse_rel_diff"] for s in ("huber", "agree") if s in by], default=None),
        "dsokr_speedup_vs_this_cpu": by.get("dsokr", {}).get("speedup_vs_this_cpu"),
        "dsokr_f1_diff": by.get("dsokr", {}).get("f1_diff"),
    }
    out = {}
    for key, target in TARGETS.items():
        value = measured[key]
        higher = "speedup" in key
        met = None if value is None or dry else (value >= target if higher else value <= target)
        out[key] = {"value": value, "target": (">= " if higher else "<= ") + f"{target:g}", "met": met}
    return out


IMPORT_SECONDS = None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sections", default=SECTIONS)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--cpu-dry-run", action="store_true", help="tiny sizes, NumPy backend: checks the logic only")
    ap.add_argument("--junit", help="a pytest JUnit XML report to fold into the JSON (gpu_check.sh)")
    ap.add_argument("--out", default=None, help="JSON file (default benchmarks/out/gpu_bench.json)")
    ap.add_argument("--section", help=argparse.SUPPRESS)
    args = ap.parse_args()
    gpu_backend = "numpy" if args.cpu_dry_run else "cupy"
    if args.section:  # child process: one section, one JSON line
        print(json.dumps(section(args.section, args.cpu_dry_run, args.repeats, gpu_backend)))
        return
    t_start = time.perf_counter()
    report = {"benchmark": "gpu", "dry_run": bool(args.cpu_dry_run), "versions": _setup.versions(),
              "device": device_info(), "gamma": GAMMA, "results": []}
    for name in args.sections.split(","):
        name = name.strip()
        if name == "fresh":  # an empty kernel cache (everything compiled), then the default warm one
            with tempfile.TemporaryDirectory(prefix="cupy-cache-") as cold:
                report["results"].append(_child(name, {"CUPY_CACHE_DIR": cold}, args))
            report["results"].append(_child(name, {}, args))
            continue
        report["results"].append(_child(name, {}, args))
        _partial(report, args)  # a run stopped by its time limit still leaves the sections it finished
    if args.junit:
        report["tests"] = junit_summary(args.junit) if Path(args.junit).exists() else {"error": "no JUnit report"}
    report["summary"] = summary(report["results"], args.cpu_dry_run)
    report["seconds"] = round(time.perf_counter() - t_start, 1)
    report["complete"] = True
    report["load_average"] = os.getloadavg()
    _setup.emit(report, args.out or _setup.OUT / "gpu_bench.json")


def _partial(report, args):
    """Write the report so far (``"complete": false``) to the output file, printing nothing."""
    path = Path(args.out or _setup.OUT / "gpu_bench.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({**report, "complete": False}, indent=1) + "\n")


def _child(name, env, args):
    """Run one section in a fresh process; its record (or the error it ended with)."""
    cmd = [sys.executable, __file__, "--section", name, "--repeats", str(args.repeats)]
    cmd += ["--cpu-dry-run"] if args.cpu_dry_run else []
    env = dict(os.environ, **env)
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=SECTION_TIMEOUT)
    except subprocess.TimeoutExpired:
        return {"section": name, "error": f"timed out after {SECTION_TIMEOUT} s", **_cache(env)}
    rec = {"section": name, "error": proc.stderr.strip().splitlines()[-5:]} if proc.returncode else \
        json.loads(proc.stdout.strip().splitlines()[-1])
    rec["process_seconds"] = round(time.perf_counter() - t0, 2)
    rec.update(_cache(env))
    print(json.dumps({k: v for k, v in rec.items() if k not in ("gpu", "cpu")}), file=sys.stderr, flush=True)
    return rec


def _cache(env):
    return {"kernel_cache": "empty (every kernel compiled)" if "CUPY_CACHE_DIR" in env and
            env["CUPY_CACHE_DIR"].split(os.sep)[-1].startswith("cupy-cache-") else "default"}


if __name__ == "__main__":
    if "--section" in sys.argv:  # the import time of a fresh process (the fresh section reports it)
        _t = time.perf_counter()
        import skframe  # noqa: F401

        if "--cpu-dry-run" not in sys.argv:
            try:
                import cupy  # noqa: F401
            except ImportError:
                pass
        IMPORT_SECONDS = round(time.perf_counter() - _t, 3)
    main()
