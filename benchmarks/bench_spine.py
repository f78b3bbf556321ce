"""Before/after of the fit's spine (one Fit, one plan, one block engine): the same user jobs on two checkouts.

Each job runs as a fresh process (``python -m skframe ...`` with ``PYTHONPATH`` set to a checkout's ``src``), the
two checkouts alternated (before, after, then after, before, ...), ``--repeats`` times; the report gives the
medians of the process wall time and of the fit time the command reports, their ratio (after / before), and the
largest relative difference of every metric the two print (they should agree to 1e-10):

  main        the README's first command: ``skframe fit --kernel gaussian --sketch psr`` (embedded default data)
  rf1         rf1 with p-SR (the README's terminal example, without writing a model file)
  bibtex      Bibtex SISOKR (the README's structured example)
  default_1e6 ``skframe fit train.npy --test test.npy --lam 1e-3 --kernel-param gamma=scale`` (the defaults of
              the commit before, given explicitly), n = 10^6 Friedman rows, d = 10
  tune_ridge  ``skframe tune`` on Boston-sized data (354 x 13, the data of docs/tuning.md; the Boston file is not
              shipped), p-SR m = 50, the default grid, 5 folds: the square-loss path
  tune_jqr    the same with ``--quantiles 0.1,0.5,0.9`` and 3 λ: the machines' path (batched ADMM)
  help        ``skframe --help``

Each job first runs once per checkout unrecorded (numba's on-disk cache of each checkout written, the data in the
page cache). The machine is shared: the load averages are recorded before and after the run.

    python benchmarks/bench_spine.py --before /tmp/spine_before [--repeats 3] [--jobs main,rf1,...]
        [--out benchmarks/out/spine.json]

Prints ONE JSON object (also written to ``--out``).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _setup  # runtime settings and sys.path, before NumPy; the measuring helpers
import numpy as np  # noqa: E402


def _data_folder():
    """The benchmark data: ``SKFRAME_DATA`` when it holds rf1, else the shared folder beside the checkouts."""
    for folder in (os.environ.get("SKFRAME_DATA"), str(_setup.ROOT.parent / "shared" / "data"),
                   str(_setup.ROOT.parent.parent / "shared" / "data")):
        if folder and (Path(folder) / "rf1" / "rf1-train.arff").is_file():
            return folder
    raise SystemExit(_setup.EXIT_NO_DATA)


DATA = _data_folder()
RF1 = ["fit", f"{DATA}/rf1/rf1-train.arff", "--test", f"{DATA}/rf1/rf1-test.arff", "--targets", "8",
       "--kernel", "gaussian", "--kernel-param", "gamma=3e-7", "--sketch", "psr", "--sketch-size", "200",
       "--sketch-param", "p=0.005", "--lam", "4e-8", "--scale", "standard", "--missing", "zero", "--json"]
BIBTEX = ["fit", f"{DATA}/bibtex/bibtex-train.arff", "--test", f"{DATA}/bibtex/bibtex-test.arff", "--targets", "159",
          "--task", "structured", "--input-kernel", "gaussian", "--input-kernel-param", "gamma=5e-5",
          "--output-kernel", "gaussian", "--output-kernel-param", "gamma=5e-5", "--input-sketch", "subsample",
          "--input-sketch-size", "2250", "--output-sketch", "psg", "--output-sketch-size", "200", "--lam", "1e-5",
          "--scale", "standard", "--json"]
TUNE = ["tune", "boston.csv", "--cv", "5", "--sketch", "psr", "--sketch-size", "50", "--seed", "0", "--json"]
JOBS = {
    "main": ["fit", "--kernel", "gaussian", "--sketch", "psr", "--json"],
    "rf1": RF1,
    "bibtex": BIBTEX,
    # the defaults of the commit before (λ = 1e-3, γ = "scale") given explicitly: the CLI's defaults choose λ and γ
    # from the data since (a different model, measured in bench_autotune.py's costs section)
    "default_1e6": ["fit", "train.npy", "--test", "test.npy", "--lam", "1e-3", "--kernel-param", "gamma=scale",
                    "--json"],
    "tune_ridge": TUNE,
    "tune_jqr": TUNE + ["--quantiles", "0.1,0.5,0.9", "--lam", "1e-4:1e-2:3"],
    "help": ["--help"],
}


def write_data(folder, jobs):
    """The data files the jobs read, written once into ``folder`` (shared by both checkouts)."""
    if "default_1e6" in jobs:
        X, y = _setup.friedman_data(10**6, 10, 0)
        np.save(folder / "train.npy", np.column_stack([X, y]))
        Xt, yt = _setup.friedman_data(10_000, 10, 1)
        np.save(folder / "test.npy", np.column_stack([Xt, yt]))
        del X, y
    if any(j.startswith("tune") for j in jobs):
        rng = np.random.default_rng(0)
        X = rng.normal(size=(354, 13))
        y = np.sin(X[:, 0]) + 0.5 * X[:, 1] ** 2 + 0.3 * rng.normal(size=354)
        header = ",".join([f"x{i}" for i in range(13)] + ["y"])
        np.savetxt(folder / "boston.csv", np.column_stack([X, y]), delimiter=",", header=header, comments="")


def run(src, args, folder):
    """One fresh process of ``python -m skframe args`` on the checkout ``src``: (wall seconds, its JSON or None)."""
    env = dict(os.environ, PYTHONPATH=str(src), SKFRAME_DATA=DATA, COLUMNS="120")
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "skframe", *args], cwd=folder, env=env, capture_output=True,
                          text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args[:2])} on {src}: exit {proc.returncode}: {proc.stderr.strip()[-400:]}")
    try:
        return wall, json.loads(proc.stdout)
    except json.JSONDecodeError:
        return wall, None


def numbers(report, prefix=""):
    """The numeric leaves of a report's metrics (and of a search's scores), by dotted path."""
    out = {}
    if isinstance(report, dict):
        for key, value in report.items():
            if key in ("fit_seconds", "predict_seconds", "seconds", "times", "timing", "execution", "versions",
                       "machine") or key.endswith("_seconds") or "time" in key:
                continue
            out.update(numbers(value, f"{prefix}{key}."))
    elif isinstance(report, list) and len(report) <= 1000:
        for i, value in enumerate(report):
            out.update(numbers(value, f"{prefix}{i}."))
    elif isinstance(report, (int, float)) and not isinstance(report, bool):
        out[prefix.rstrip(".")] = float(report)
    return out


def compare(a, b):
    """The largest relative difference over the metrics both reports hold, and the worst path."""
    na, nb = numbers(a), numbers(b)
    worst, where = 0.0, None
    for key in sorted(set(na) & set(nb)):
        x, y = na[key], nb[key]
        if np.isnan(x) and np.isnan(y):
            continue
        diff = abs(x - y) / max(abs(x), abs(y), 1e-300) if x != y else 0.0
        if diff > worst:
            worst, where = diff, key
    return worst, where, len(set(na) & set(nb))


def _commit(checkout):
    """The commit a checkout holds: its git HEAD, or the ``COMMIT`` file an exported tree carries, else its path."""
    proc = subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    if proc.returncode == 0 and Path(checkout, ".git").exists():
        return proc.stdout.strip()
    marker = Path(checkout) / "COMMIT"
    return marker.read_text().strip() if marker.is_file() else str(checkout)


def fit_seconds(report):
    if not isinstance(report, dict):
        return None
    if isinstance(report.get("timings"), dict):  # skframe tune: the search's seconds
        return report["timings"].get("search_seconds")
    for key in ("fit_seconds", "search_seconds", "seconds"):
        if isinstance(report.get(key), (int, float)):
            return float(report[key])
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", default="/tmp/spine_before", help="checkout of the commit before (its src/ is used)")
    ap.add_argument("--after", default=str(_setup.ROOT), help="checkout after (default: this repository)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--jobs", default=",".join(JOBS))
    ap.add_argument("--out", default=str(_setup.OUT / "spine.json"))
    args = ap.parse_args()
    jobs = [j.strip() for j in args.jobs.split(",") if j.strip()]
    sides = {"before": Path(args.before) / "src", "after": Path(args.after) / "src"}
    load_start = os.getloadavg()
    t_start = time.perf_counter()
    results = {j: {s: {"wall": [], "fit": [], "report": None} for s in sides} for j in jobs}
    with tempfile.TemporaryDirectory(prefix="spine_") as tmp:
        folder = Path(tmp)
        write_data(folder, jobs)
        for job in jobs:  # one unrecorded run each: numba's cache of each checkout written, files in the page cache
            for side in sides:
                run(sides[side], JOBS[job], folder)
        for r in range(args.repeats):
            for job in jobs:
                order = list(sides) if r % 2 == 0 else list(sides)[::-1]
                for side in order:
                    wall, report = run(sides[side], JOBS[job], folder)
                    cell = results[job][side]
                    cell["wall"].append(wall)
                    cell["fit"].append(fit_seconds(report))
                    cell["report"] = report if cell["report"] is None else cell["report"]
                    print(f"{job:12s} {side:6s} {wall:8.2f} s", file=sys.stderr)
    commits = {"before": _commit(args.before), "after": _commit(args.after)}
    out = {"jobs": {}, "repeats": args.repeats, "commits": commits,
           "load_average_start": list(load_start), "load_average_end": list(os.getloadavg()),
           "total_seconds": time.perf_counter() - t_start, "versions": _setup.versions()}
    for job in jobs:
        entry = {"command": "skframe " + " ".join(JOBS[job])}
        for side in sides:
            cell = results[job][side]
            fits = [v for v in cell["fit"] if v is not None]
            entry[side] = {"wall_median": statistics.median(cell["wall"]), "wall": cell["wall"],
                           "fit_median": statistics.median(fits) if fits else None, "fit": fits}
        entry["wall_ratio"] = entry["after"]["wall_median"] / entry["before"]["wall_median"]
        if entry["after"]["fit_median"] and entry["before"]["fit_median"]:
            entry["fit_ratio"] = entry["after"]["fit_median"] / entry["before"]["fit_median"]
        worst, where, count = compare(results[job]["before"]["report"], results[job]["after"]["report"])
        entry["metrics_compared"] = count
        entry["max_relative_metric_difference"] = worst
        entry["worst_metric"] = where
        out["jobs"][job] = entry
    _setup.emit(out, args.out)


if __name__ == "__main__":
    main()
