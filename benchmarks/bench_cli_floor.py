"""Where the time of `skframe fit --loss huber|epsilon-svr` goes on this machine; the sketches that would be cheaper.

The CLI's default fit on the embedded Friedman data (n = 10 000, d = 10, Gaussian γ = 0.1,
λ = 1e-7, p-SR sketch with s = 200 rows and p = 20/n) evaluates the kernel on n x s' entries.
This script measures, in one warm process and on the plain NumPy engine (the one a fresh
CLI process uses for this size):

* the cost per kernel entry of each pass over the block (SciPy's distances, NumPy's float64
  exponential, the sparse product with the sketch), on one core, and the floor they give
  the kernel block on all cores;
* the stages of each default fit: sketched Gram products, features, solver, the rest;
* test relative MSE and fit time for p-SR sketches with fewer sampled columns
  (5 sketch seeds each), to show what a cheaper default would cost in accuracy;
* whether NumPy found AVX-512 (its float64 exponential is vectorised only there).

Prints ONE JSON object.

    python benchmarks/bench_cli_floor.py [--seeds 5] [--grid 200:20,200:10,250:8,300:7]
"""

import functools
import os
import time

import _setup  # runtime settings and sys.path, before NumPy; the measuring helpers

os.environ.setdefault("SKFRAME_DISABLE_NUMBA", "1")  # the engine of a fresh CLI process at this size

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

import skframe.core.block_engine as block_engine  # noqa: E402
import skframe.core.feature_map as feature_map  # noqa: E402
import skframe.models._core as fit_core  # noqa: E402
from skframe.datasets import load_default  # noqa: E402
from skframe.metrics import relative_mse  # noqa: E402
from skframe.models import SketchedKernelMachine  # noqa: E402

LOSSES = {"huber": {"kappa": 100.0}, "epsilon-svr": {"epsilon": 3.0}}


def _ns_per_entry(func, entries, repeats=5):
    func()
    return _setup.best_of(func, repeats)[0] / entries * 1e9


def pass_costs(X, s_prime, m, nnz, rng):
    """One-core nanoseconds per kernel entry of each pass, on a tile of the size the fit uses."""
    from scipy.spatial.distance import cdist

    tile_rows = max(1, block_engine._TILE_ENTRIES // s_prime)
    Xt = X[:tile_rows]
    Xs = X[rng.choice(X.shape[0], s_prime, replace=False)]
    block = np.empty((tile_rows, s_prime))
    mix_t = sp.csr_matrix((rng.choice([-1.0, 1.0], nnz), (rng.integers(0, s_prime, nnz), rng.integers(0, m, nnz))),
                          shape=(s_prime, m))
    entries = block.size
    costs = {"distances (scipy cdist)": _ns_per_entry(lambda: cdist(Xt, Xs, "sqeuclidean", out=block), entries)}
    block *= -0.1
    values = block.copy()
    costs["scale by -gamma"] = _ns_per_entry(lambda: np.multiply(values, -1.0, out=block), entries)
    costs["exponential (np.exp, float64)"] = _ns_per_entry(lambda: np.exp(values, out=block), entries)
    costs["sparse product with S_mix^T"] = _ns_per_entry(lambda: block @ mix_t, entries)
    v32 = values.astype(np.float32)
    costs["for comparison: np.exp, float32"] = _ns_per_entry(lambda: np.exp(v32, out=v32.copy()), entries)
    return {k: round(v, 3) for k, v in costs.items()}


def stages(loss, data, repeats):
    """Median warm seconds of the stages of the default fit (the registry is loaded first, as in the CLI)."""
    import skframe_solvers.dual_cd as dual_cd

    timed = {}

    def wrap(owner, name, label):
        original = getattr(owner, name)

        @functools.wraps(original)
        def timed_call(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                timed[label] = timed.get(label, 0.0) + time.perf_counter() - t0

        setattr(owner, name, timed_call)
        return original

    # each function is replaced where its caller looks it up
    saved = [(feature_map, "sketched_gram_products", wrap(feature_map, "sketched_gram_products", "gram_products")),
             (fit_core, "build_feature_map", wrap(fit_core, "build_feature_map", "feature_map")),
             (dual_cd.DualCDSolver, "solve", wrap(dual_cd.DualCDSolver, "solve", "solver"))]
    runs = []
    try:
        for _ in range(repeats + 1):
            timed.clear()
            model = SketchedKernelMachine(kernel="gaussian", kernel_params={"gamma": 0.1}, lam=1e-7, loss=loss,
                                          loss_params=LOSSES[loss], sketch="psr", random_state=0)
            _, total = _setup.timed(model.fit, data.X_train, data.y_train)
            runs.append({"fit": total, "gram_products": timed["gram_products"],
                         "features_after_gram": timed["feature_map"] - timed["gram_products"],
                         "solver": timed["solver"], "rest": total - timed["feature_map"] - timed["solver"]})
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)
    warm = runs[1:]
    return {"first_fit_in_process": {k: round(v, 4) for k, v in runs[0].items()},
            "warm_median": {k: round(float(np.median([r[k] for r in warm])), 4) for k in warm[0]},
            "n_iter": int(model.n_iter_), "stop_reason": model.stop_reason_,
            "s_prime": int(model.sketch_info_["s_prime"]), "nnz": int(model.sketch_info_["nnz"]),
            "relative_mse": float(relative_mse(data.y_test, model.predict(data.X_test)))}


def sketch_grid(data, grid, seeds):
    """Test relative MSE (mean, max over sketch seeds, seed 0 = the CLI's) and fit time of p-SR sketches."""
    n = data.X_train.shape[0]
    rows = []
    for size, pn in grid:
        for loss, params in LOSSES.items():
            errs, times, cols = [], [], []
            for seed in range(seeds):
                model = SketchedKernelMachine(kernel="gaussian", kernel_params={"gamma": 0.1}, lam=1e-7, loss=loss,
                                              loss_params=params, sketch="psr", sketch_size=size,
                                              sketch_params={"p": pn / n}, random_state=seed)
                times.append(_setup.timed(model.fit, data.X_train, data.y_train)[1])
                errs.append(relative_mse(data.y_test, model.predict(data.X_test)))
                cols.append(model.sketch_info_["s_prime"])
            rows.append({"s": size, "p_times_n": pn, "loss": loss, "s_prime_mean": float(np.mean(cols)),
                         "relative_mse_mean": round(float(np.mean(errs)), 4),
                         "relative_mse_max": round(float(np.max(errs)), 4),
                         "relative_mse_seed0": round(float(errs[0]), 4),
                         "fit_seconds_median_warm": round(float(np.median(times)), 3)})
    return rows


def main(argv=None):
    ap = _setup.parser(__doc__)
    ap.add_argument("--seeds", type=int, default=5, help="sketch seeds per grid point")
    ap.add_argument("--repeats", type=int, default=5, help="warm fits per loss for the stage timings")
    ap.add_argument("--grid", default="200:20,200:12,200:10,250:8,300:7",
                    help="comma-separated s:p*n points of the p-SR grid (the default is 200:20)")
    args = ap.parse_args(argv)
    grid = [(int(a), float(b)) for a, b in (point.split(":") for point in args.grid.split(","))]

    from skframe.contract.loader import get_plugin_registry

    get_plugin_registry()
    data = load_default()
    rng = np.random.default_rng(0)
    stage = {loss: stages(loss, data, args.repeats) for loss in LOSSES}
    s_prime, nnz = stage["huber"]["s_prime"], stage["huber"]["nnz"]
    costs = pass_costs(data.X_train, s_prime, 200, nnz, rng)
    entries = data.X_train.shape[0] * s_prime
    from skframe.core.threads import available_cores

    cores = available_cores()
    kernel_ns = sum(v for k, v in costs.items() if not k.startswith("for comparison"))
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as cpu
    except ImportError:  # pragma: no cover - older NumPy layout
        cpu = {}
    report = {
        "benchmark": "time floor of the CLI's default fit on the embedded Friedman data (NumPy engine)",
        "kernel_entries": entries, "cores": cores,
        "ns_per_entry_one_core": costs,
        "kernel_block_floor_seconds": round(entries * kernel_ns * 1e-9 / cores, 4),
        "exponential_alone_seconds": round(entries * costs["exponential (np.exp, float64)"] * 1e-9 / cores, 4),
        "avx512f": bool(cpu.get("AVX512F", False)), "avx2": bool(cpu.get("AVX2", False)),
        "stages": stage,
        "cheaper_sketches": sketch_grid(data, grid, args.seeds),
        "target": "relative MSE <= 0.05 and CLI fit <= 0.3 s for both losses",
        "versions": _setup.versions(),
    }
    _setup.emit(report)


if __name__ == "__main__":
    main()
