"""The default classifier at scale: ``skframe.fit_table`` on n rows (binary and 10 classes) beside the square-loss
fit of the same rows, and Falkon's ``LogisticFalkon`` at the same number of centres, gamma and lambda.

Data (d = 10, one seed): ``X`` standard normal (n training rows, ``--n-test`` test rows). Binary: ``y = 1[s(x) +
0.3 e > 0]`` with ``s(x) = sin(2 x0) + x1 x2 + 0.5 x3^2 - 0.5``; 10 classes: ``y = argmax_c sin(1.5 x_c) + 0.5
x_{c+1} x_{c+2} + 0.3 e_c`` (indices mod 10); square: the number ``s(x) + 0.3 e`` as the target, the same rows X.
Every fit is ``skframe.fit_table((X, y))`` with default options, as a user gets it: the task is read from the target
(classification: logistic or multinomial loss, calibration, gamma and lambda chosen automatically; regression: the
square loss), and the execution plan decides whether the rows stream and whether the features are kept.

Each part runs in a fresh process (``--one PART``) after a small warm-up fit (imports, compiled kernels). Reported:
the model's fit time (``fit_seconds``, the report's: what the command line reports), the whole ``fit_table`` call's
(``fit_table_seconds``: with no test data it adds the held-out report, a second fit for the square loss, none for
the classifiers, whose λ path scores held-out rows), the peak resident memory above the data (``VmHWM`` reset once
the data exist), the plan's memory budget and planned peak, how the features were held, the chosen gamma and lambda,
the Newton solver's record, test log-loss and accuracy (R^2 for the square loss). ``falkon_*`` parts (skipped with
one line where ``falkon`` does not import): ``LogisticFalkon`` (CPU, KeOps off) with M = the skframe fit's sketch
size centres drawn uniformly from the training rows, the skframe fit's gamma and lambda, its kernel blocks within
``--falkon-cpu-mem`` bytes (its ``max_cpu_mem``), the documented schedule of ``bench_classification.py`` (penalties
``1e4 lam, 1e2 lam, lam, lam, lam``, CG iterations ``3, 3, 3, 8, 8``); 10 classes one-vs-rest (one binary fit per
class, probabilities normalised), on ``--falkon-rows`` rows at most; ``--falkon-classes K`` below 10 fits the first
K classes only and reports their mean time and ten times it (``extrapolated_fit_seconds``; no test metrics without
every class).

    flock /tmp/heavy.lock python benchmarks/bench_classification_million.py --n 1000000 \\
        --parts binary,square,multi,falkon_binary --out benchmarks/out/classification_million.json

``precond_rows`` times the Newton-CG solves of a warm-started λ path (1e-6 to tol 1e-6, then 1e-7 from its solution
to tol 1e-6 and 1e-8) on the binary problem's ``--precond-n`` rows, Nyström features of m = ceil(2 sqrt(n)) uniform
centres at gamma = 0.053 (the default's choice at n = 1e5), with a subsampled preconditioner of each of
``--precond-rows`` rows (0: the plan's rule :func:`skframe.compute.plan_newton.newton_precond_rows`).

``cli_square``, ``cli_binary``, ``cli_multi``: the same rows as CSV files (text class labels ``neg``/``pos`` and
``c0``..``c9``, written once into ``--csv-dir``), fitted by ``skframe fit FILE --target NAME --test TEST --json``
in a fresh process, as a user runs it: the command's ``fit_seconds``, the process's wall time (reading the files
included); ``*_default`` without the test file (the default held-out report: the square loss fits twice, the
classifiers score the held-out rows of their λ path).

The report at ``--out`` is rewritten after each part (a long run keeps what it finished); parts already there and
not named are kept.
"""

import json
import os
import subprocess
import sys
import tempfile
import time

import _setup  # runtime settings and sys.path, before NumPy; the measuring helpers
import numpy as np

PARTS = ("binary", "multi", "square", "falkon_binary", "falkon_multi", "precond_rows", "cli_square", "cli_binary",
         "cli_multi", "cli_square_default", "cli_binary_default", "cli_multi_default")
#: the text labels the command-line parts write (a user's file names its classes)
LABELS = {"binary": np.array(["neg", "pos"]), "multi": np.array([f"c{j}" for j in range(10)])}
D, SEED, TEST_SEED = 10, 0, 1


def latent(X, rng):
    """The binary problem's score ``s(x)`` plus noise (also the square loss's target)."""
    s = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.5 * X[:, 3] ** 2 - 0.5
    return s + 0.3 * rng.normal(size=X.shape[0])


def classes10(X, rng):
    """The 10-class labels: ``argmax_c sin(1.5 x_c) + 0.5 x_{c+1} x_{c+2} + 0.3 e_c``."""
    roll1, roll2 = np.roll(np.arange(D), -1), np.roll(np.arange(D), -2)
    S = np.sin(1.5 * X) + 0.5 * X[:, roll1] * X[:, roll2] + 0.3 * rng.normal(size=X.shape)
    return np.argmax(S, axis=1)


def data(n, part, seed, step=200_000):
    """``(X, y)`` of ``part``'s problem (X the same for every part at a seed), made ``step`` rows at a time."""
    rng = np.random.default_rng(seed)
    X, y = np.empty((n, D)), np.empty(n, dtype=np.float64 if part == "square" else np.int64)
    for a in range(0, n, step):
        b = min(n, a + step)
        X[a:b] = rng.normal(size=(b - a, D))
        s = latent(X[a:b], rng)
        y[a:b] = s if part == "square" else (s > 0).astype(int) if part.endswith("binary") else classes10(X[a:b], rng)
    return X, y


def warm_up(part):
    """A small fit first (imports, compiled kernels), as a user's session would have run."""
    import skframe

    X, y = data(2000, part.replace("falkon_", ""), 7)
    skframe.fit_table((X, y))


def solver_record(est):
    info = dict(getattr(est, "solver_info_", None) or {})
    keep = ("method", "step_rule", "newton_steps", "passes", "cg_iterations", "preconditioners", "relative_gap",
            "features_dtype", "float32_gap")
    return {k: info[k] for k in keep if k in info}


def run_skframe(part, n, n_test):
    from sklearn.metrics import accuracy_score, log_loss, r2_score

    import skframe

    X, y = data(n, part, SEED)
    Xte, yte = data(n_test, part, TEST_SEED)
    data_bytes = X.nbytes + y.nbytes
    rss0 = _setup.proc_status_bytes("VmRSS")
    _setup.reset_peak_rss()
    model, seconds = _setup.timed(skframe.fit_table, (X, y))
    peak = _setup.proc_status_bytes("VmHWM") - rss0
    est = model.estimator_
    ex = dict(getattr(est, "execution_", None) or {})
    report = dict(getattr(model, "report_", None) or {})
    out = {"part": part, "n": n, "n_test": n_test, "fit_seconds": round(float(report.get("fit_seconds", seconds)), 2),
           "fit_table_seconds": round(seconds, 2), "evaluated_on": report.get("evaluated_on"),
           "peak_above_data_bytes": peak, "data_bytes": data_bytes, "memory_budget": ex.get("memory_budget"),
           "planned_peak_bytes": ex.get("peak_bytes"),
           "executor": ex.get("executor"), "keep_features": ex.get("keep_features"),
           "representation": getattr(est, "representation_", None), "sketch": ex.get("sketch_size"),
           "s_prime": ex.get("s_prime"), "loss": est.get_params().get("loss", "square"),
           "reasons": {k: v for k, v in (ex.get("reasons") or {}).items()
                       if k in ("executor", "keep_features", "newton_step", "square_solver", "sketch_size")},
           "chosen": {k: {"chosen": v.get("chosen"), "reason": v.get("reason")}
                      for k, v in (getattr(est, "fit_info_", None) or {}).items() if isinstance(v, dict)},
           "stop_reason": getattr(est, "stop_reason_", None), "solver": solver_record(est),
           "m": int((getattr(est, "sketch_info_", None) or {}).get("m", 0))}
    if part == "square":
        out["test_r2"] = float(r2_score(yte, model.predict(Xte)))
    else:
        P = model.predict_proba(Xte)
        classes = getattr(model, "classes_", None)
        classes = est.classes_ if classes is None else classes
        out["test_log_loss"] = float(log_loss(yte, P, labels=classes))
        out["test_accuracy"] = float(accuracy_score(yte, np.asarray(classes)[np.argmax(P, axis=1)]))
    return out


def run_falkon(part, n, n_test, reference, rows, cpu_mem=2e9, classes=10):
    """LogisticFalkon at the skframe fit's gamma, lambda and number of centres (see module)."""
    try:
        import falkon
        import torch
        from falkon.center_selection import FixedSelector
    except Exception as exc:  # ImportError, or a compiled extension that fails to load
        return {"part": part, "skipped": f"falkon does not import ({type(exc).__name__}: {exc})"}
    from sklearn.metrics import accuracy_score, log_loss

    kind = part.replace("falkon_", "")
    ref = reference.get(kind)
    if not ref or "chosen" not in ref:
        return {"part": part, "skipped": f"run the part {kind!r} first: its gamma, lambda and m are used"}
    gamma = float(ref["chosen"]["gamma"]["chosen"])
    lam = float(ref["chosen"]["lam"]["chosen"])
    m = int(ref["m"] or ref["sketch"])
    n_fit = min(n, rows)
    X, y = data(n, kind, SEED)
    X, y = X[:n_fit], y[:n_fit]
    Xte, yte = data(n_test, kind, TEST_SEED)
    idx = torch.from_numpy(np.sort(np.random.default_rng(0).choice(n_fit, size=m, replace=False)))
    Xt, Xte_t = torch.from_numpy(X), torch.from_numpy(Xte)
    penalties, iters = [lam * 1e4, lam * 1e2, lam, lam, lam], [3, 3, 3, 8, 8]
    # max_cpu_mem bounds its kernel blocks (unbounded, it takes one n x m block: 8 GB at n = 10^6, m = 1 000)
    opt = falkon.FalkonOptions(use_cpu=True, keops_active="no", max_cpu_mem=float(cpu_mem))
    kernel = falkon.kernels.GaussianKernel(sigma=float(np.sqrt(1.0 / (2.0 * gamma))), opt=opt)
    columns = [1] if kind == "binary" else list(range(min(int(classes), 10)))
    rss0 = _setup.proc_status_bytes("VmRSS")
    _setup.reset_peak_rss()
    t0, F = time.perf_counter(), []
    for c in columns:
        Yc = torch.from_numpy(np.where(y == c, 1.0, -1.0)).reshape(-1, 1)
        model = falkon.LogisticFalkon(kernel=kernel, penalty_list=penalties, iter_list=iters,
                                      loss=falkon.gsc_losses.LogisticLoss(kernel, opt=opt), M=m,
                                      center_selection=FixedSelector(Xt[idx], Yc[idx], idx), error_fn=None,
                                      options=opt)
        stdout, sys.stdout = sys.stdout, sys.stderr  # its progress lines
        try:
            model.fit(Xt, Yc)
        finally:
            sys.stdout = stdout
        F.append(model.predict(Xte_t).numpy().ravel())
    seconds = time.perf_counter() - t0
    peak = _setup.proc_status_bytes("VmHWM") - rss0
    out = {"part": part, "n_fit": n_fit, "n_test": n_test, "m": m, "gamma": gamma, "lam": lam,
           "penalty_list": penalties, "iter_list": iters, "fits": len(columns), "falkon": falkon.__version__,
           "torch": torch.__version__, "torch_threads": torch.get_num_threads(), "max_cpu_mem": opt.max_cpu_mem,
           "peak_above_data_bytes": peak}
    if kind != "binary" and len(columns) < 10:  # some classes only: their time, no 10-class metrics
        per = seconds / len(columns)
        return {**out, "classes_fitted": columns, "seconds_per_class": round(per, 2),
                "measured_seconds": round(seconds, 2), "extrapolated_fit_seconds": round(10 * per, 2)}
    P1 = 1.0 / (1.0 + np.exp(-np.column_stack(F)))
    P = np.column_stack([1.0 - P1[:, 0], P1[:, 0]]) if kind == "binary" else P1 / P1.sum(axis=1, keepdims=True)
    return {**out, "fit_seconds": round(seconds, 2),
            "test_log_loss": float(log_loss(yte, P, labels=np.arange(P.shape[1]))),
            "test_accuracy": float(accuracy_score(yte, np.argmax(P, axis=1)))}


def run_precond_rows(n, variants):
    """The ``precond_rows`` part (see module): per number of preconditioner rows, the path's CG products and time."""
    from skframe.compute.plan_newton import newton_precond_rows
    from skframe.contract.problems import ArrayProblem
    from skframe.contract.registry import get_loss, get_solver

    X, y = data(n, "binary", SEED)
    m, gamma = int(np.ceil(2 * np.sqrt(n))), 0.053
    centres = X[np.random.default_rng(0).choice(n, size=m, replace=False)]

    def gauss(A, B):
        return np.exp(-gamma * np.maximum(np.sum(A * A, 1)[:, None] + np.sum(B * B, 1)[None] - 2 * A @ B.T, 0))

    Z = _setup.nystrom_features(X[:n], centres, gauss)
    problem, loss = ArrayProblem(Z, np.where(y == 1, 1.0, -1.0)[:, None]), get_loss("logistic")
    out = {"part": "precond_rows", "n": n, "m": m, "r": Z.shape[1], "gamma": gamma, "runs": {}}
    for rows in variants:
        rows = rows or newton_precond_rows(n, Z.shape[1])
        W, steps, t0 = None, [], time.perf_counter()
        for lam, tol in ((1e-6, 1e-6), (1e-7, 1e-6), (1e-7, 1e-8)):
            res, seconds = _setup.timed(get_solver("newton", step="cg", tol=tol, precond_rows=rows).solve, problem,
                                        loss, lam, init=W)
            W = res.W
            steps.append({"lam": lam, "tol": tol, "seconds": round(seconds, 2),
                          "cg_iterations": res.info["cg_iterations"], "preconditioners": res.info["preconditioners"],
                          "relative_gap": res.info["relative_gap"]})
        out["runs"][str(rows)] = {"seconds": round(time.perf_counter() - t0, 2), "solves": steps,
                                  "cg_products": int(sum(sum(s["cg_iterations"]) for s in steps))}
        print(rows, out["runs"][str(rows)], file=sys.stderr, flush=True)
    return out


def write_csv(path, n, part, seed, step=100_000):
    """The rows of ``data(n, part, seed)`` as a CSV file with a header (``x1..x10`` and the target ``label``, text
    labels for classes, or ``target``), numbers written exactly (``%.17g``)."""
    X, y = data(n, part, seed)
    name = "target" if part == "square" else "label"
    with open(path, "w") as fh:
        fh.write(",".join([f"x{j + 1}" for j in range(D)] + [name]) + "\n")
        for a in range(0, n, step):
            b = min(n, a + step)
            cells = np.char.mod("%.17g", X[a:b])
            last = np.char.mod("%.17g", y[a:b]) if part == "square" else LABELS[part][y[a:b]]
            rows = [",".join(list(row) + [str(t)]) for row, t in zip(cells, last)]
            fh.write("\n".join(rows) + "\n")
    return name


def run_cli(part, n, n_test, folder):
    """A ``cli_*`` part: ``skframe fit FILE --target NAME [--test TEST] --json`` in a fresh process on CSV files of
    the same rows (written once into ``folder``); ``*_default`` without a test file (the default held-out report).
    Reported: the command's own ``fit_seconds``, the process's wall time and peak resident memory, the chosen
    gamma and lambda and the test (or held-out) metrics."""
    kind = part[len("cli_"):].replace("_default", "")
    os.makedirs(folder, exist_ok=True)
    files = {}
    for which, rows, seed in (("train", n, SEED), ("test", n_test, TEST_SEED)):
        path = os.path.join(folder, f"{kind}_{which}_{rows}.csv")
        if not os.path.exists(path):
            write_csv(path + ".part", rows, kind, seed)
            os.replace(path + ".part", path)
        files[which] = path
    target = "target" if kind == "square" else "label"
    cmd = [sys.executable, "-m", "skframe", "fit", files["train"], "--target", target, "--json"]
    if not part.endswith("_default"):
        cmd += ["--test", files["test"]]
    with tempfile.TemporaryFile("w+") as fout, tempfile.TemporaryFile("w+") as ferr:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=fout, stderr=ferr, text=True)
        _, status, usage = os.wait4(proc.pid, 0)  # this process's own peak resident memory
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        fout.seek(0)
        ferr.seek(0)
        out, err = fout.read(), ferr.read()
    peak = int(usage.ru_maxrss) * 1024
    if proc.returncode != 0:
        return {"part": part, "failed": err.strip()[-2000:], "command": " ".join(cmd[2:])}
    rep = json.loads(out)
    chosen = {k: v.get("chosen") for k, v in (rep.get("chosen") or {}).items() if isinstance(v, dict)}
    keep = ("log_loss", "accuracy", "r2", "n_samples")
    return {"part": part, "command": "skframe " + " ".join(os.path.basename(c) if c in files.values() else c
                                                          for c in cmd[3:]),
            "n": n, "fit_seconds": round(float(rep["fit_seconds"]), 2), "wall_seconds": round(wall, 2),
            "peak_rss_bytes": peak, "evaluated_on": rep.get("evaluated_on"), "chosen": chosen,
            "metrics": {k: rep["metrics"][k] for k in keep if k in (rep.get("metrics") or {})},
            "executor": (rep.get("execution") or {}).get("executor")}


def one(args):
    """Run one part in this process and print its JSON."""
    if args.one == "precond_rows":
        out = run_precond_rows(args.precond_n, [int(v) for v in args.precond_rows.split(",")])
        print("RESULT " + json.dumps(out))
        return
    warm_up(args.one)
    if args.one.startswith("falkon_"):
        reference = json.loads(args.reference) if args.reference else {}
        out = run_falkon(args.one, args.n, args.n_test, reference, args.falkon_rows, args.falkon_cpu_mem,
                         args.falkon_classes)
    else:
        out = run_skframe(args.one, args.n, args.n_test)
    print("RESULT " + json.dumps(out))


def summary(results):
    """Classification over square fit time, memory over budget, Falkon over skframe."""
    out, sq = {}, results.get("square", {}).get("fit_seconds")
    for kind in ("binary", "multi"):  # the command's fits (its own fit_seconds) and its processes' wall times
        for tail in ("", "_default"):
            r, q = results.get(f"cli_{kind}{tail}") or {}, results.get(f"cli_square{tail}") or {}
            if r.get("fit_seconds") and q.get("fit_seconds"):
                out[f"cli_{kind}{tail}_over_square_fit_time"] = round(r["fit_seconds"] / q["fit_seconds"], 2)
                out[f"cli_{kind}{tail}_over_square_wall_time"] = round(r["wall_seconds"] / q["wall_seconds"], 2)
    for kind in ("binary", "multi"):
        r = results.get(kind)
        if not r or "fit_seconds" not in r:
            continue
        out[f"{kind}_over_square_fit_time"] = round(r["fit_seconds"] / sq, 2) if sq else None
        if r.get("memory_budget"):
            out[f"{kind}_peak_over_budget"] = round(r["peak_above_data_bytes"] / r["memory_budget"], 3)
        fk = results.get(f"falkon_{kind}", {})
        if fk.get("fit_seconds"):
            out[f"falkon_{kind}_over_skframe_fit_time"] = round(fk["fit_seconds"] / r["fit_seconds"], 2)
        elif fk.get("extrapolated_fit_seconds"):
            out[f"falkon_{kind}_extrapolated_over_skframe_fit_time"] = round(
                fk["extrapolated_fit_seconds"] / r["fit_seconds"], 2)
    return out


def main():
    ap = _setup.parser(__doc__, n=1_000_000, n_test=20_000, parts="binary,square,multi,falkon_binary,falkon_multi",
                       falkon_rows=1_000_000, precond_n=100_000, precond_rows="1000,4000,0")
    ap.add_argument("--out", default="benchmarks/out/classification_million.json")
    ap.add_argument("--falkon-cpu-mem", type=float, default=2e9, help="Falkon's max_cpu_mem (bytes for its blocks)")
    ap.add_argument("--falkon-classes", type=int, default=10,
                    help="classes fitted by falkon_multi (one-vs-rest; below 10: their time, times ten)")
    ap.add_argument("--note", default="", help="a note kept in the report (e.g. the machine's load)")
    ap.add_argument("--csv-dir", default="", help="where the cli_* parts write their CSV files (default: a folder "
                                                  "in the temporary directory; kept for later runs)")
    ap.add_argument("--one", choices=PARTS, help=argparse_hidden())
    ap.add_argument("--reference", default="", help=argparse_hidden())
    args = ap.parse_args()
    if args.one:
        return one(args)
    report = _setup.previous_report(args.out) or {}
    if report.get("n") != args.n:
        report = {}
    report.update({"benchmark": "classification_million", "versions": _setup.versions(), "n": args.n,
                   "n_test": args.n_test, "d": D, "protocol": __doc__.split("\n\n")[1].replace("\n", " ")})
    if args.note:
        report["note"] = args.note
    results = report.setdefault("results", {})
    for part in [p.strip() for p in args.parts.split(",") if p.strip()]:
        if part not in PARTS:
            raise SystemExit(f"unknown part {part!r}; choose among {', '.join(PARTS)}")
        if part.startswith("cli_"):  # the command is a fresh process of its own
            load0 = list(os.getloadavg())
            res = run_cli(part, args.n, args.n_test, args.csv_dir or os.path.join(
                tempfile.gettempdir(), "skframe_classification_csv"))
            res.update(load_average_before=load0, load_average_after=list(os.getloadavg()))
            results[part] = res
            report["summary"] = summary(results)
            _setup.emit(report, args.out)
            continue
        cmd = [sys.executable, __file__, "--one", part, "--n", str(args.n), "--n-test", str(args.n_test),
               "--falkon-rows", str(args.falkon_rows), "--falkon-cpu-mem", str(args.falkon_cpu_mem),
               "--falkon-classes", str(args.falkon_classes),
               "--reference", json.dumps(results),
               "--precond-n", str(args.precond_n), "--precond-rows", args.precond_rows]
        load0 = list(os.getloadavg())
        proc = subprocess.run(cmd, capture_output=True, text=True)
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
        res = json.loads(lines[-1][7:]) if lines else {"part": part, "failed": proc.stderr.strip()[-2000:]}
        res.update(load_average_before=load0, load_average_after=list(os.getloadavg()))
        results[part] = res
        report["summary"] = summary(results)
        _setup.emit(report, args.out)


def argparse_hidden():
    import argparse

    return argparse.SUPPRESS


if __name__ == "__main__":
    main()
