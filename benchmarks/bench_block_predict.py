"""Prediction, posterior standard deviations and CV+ intervals through the block engine: before/after.

Compares two source trees (``--before`` and ``--after``, each a folder holding the ``skframe`` packages, default
``--after``: this checkout's ``src``) in alternated fresh processes, ``--repeats`` rounds of each case:

- ``predict-psr`` / ``predict-subsample``: a sketched ridge (``SketchedKernelRidge``, Gaussian kernel, m =
  ``--m``) fitted on ``--n`` Friedman rows, then ``predict(X)`` and ``predict(X, return_std=True)`` on ``--n-test``
  rows: the wall time of one call each (the compiled loops loaded by the fit), then the ``tracemalloc`` peak of a
  second call and the rows the kernel was evaluated on in it (its ``__call__`` counted);
- ``cli-cv+`` / ``cli-posterior``: ``skframe fit FILE --target y --interval 0.9 --json`` (the default interval
  method, CV+, and ``--interval-method posterior``) on a generated ``--cli-rows``-row CSV: wall time of the
  command and the peak resident memory of its process.

Each case's numbers of the last round are compared: ``max_abs_diff`` is the largest absolute difference between
the two trees' predictions, standard deviations, or the numbers of the command's JSON report other than times.
Prints one JSON object (``--out`` writes it too).

Run: ``python benchmarks/bench_block_predict.py --before /path/to/old/src [--repeats 3] [--out FILE]``;
``--recompare REPORT`` computes the differences again from a finished run's report and saved files.
"""

import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import _setup  # runtime settings and sys.path, before NumPy; the measuring helpers

CASES = ("predict-psr", "predict-subsample", "cli-cv+", "cli-posterior")


def _counting(cls):
    """Wrap ``cls.__call__`` so that it counts the rows of its first argument; returns the counter (a list)."""
    seen = [0]
    real = cls.__call__

    def call(self, X, Y=None, **kw):
        seen[0] += X.shape[0]
        return real(self, X, Y, **kw)

    cls.__call__ = call
    return seen, lambda: setattr(cls, "__call__", real)


def worker_predict(args, sketch):
    """One fit and the two predictions; returns the measured numbers and saves the arrays."""
    import numpy as np

    from skframe.models import SketchedKernelRidge

    X, y = _setup.friedman_data(args.n, seed=0)
    X_te, _ = _setup.friedman_data(args.n_test, seed=1)
    model = SketchedKernelRidge(kernel_params={"gamma": 0.1}, sketch=sketch, sketch_size=args.m, lam=1e-3,
                                random_state=0).fit(X, y)
    model.predict(X_te[:10], return_std=True)  # the posterior factor, computed once at the first std
    out = {"s_prime": int(model.X_fit_.shape[0])}
    t, F = _setup.best_of(lambda: model.predict(X_te), 1)
    t_std, (F_std, std) = _setup.best_of(lambda: model.predict(X_te, return_std=True), 1)
    seen, undo = _counting(type(model.kernel_))  # a second call of each, counted and traced
    _, _, peak = _setup.traced(model.predict, X_te)
    rows = seen[0]
    seen[0] = 0
    _, _, peak_std = _setup.traced(model.predict, X_te, return_std=True)
    rows_std = seen[0]
    undo()
    out.update(predict_s=t, predict_std_s=t_std, predict_peak_mb=peak / 2**20, predict_std_peak_mb=peak_std / 2**20,
               kernel_rows_predict=rows, kernel_rows_predict_std=rows_std)
    np.savez(args.save, F=F, F_std=F_std, std=std)
    return out


#: keys of a report that describe the run, not its results (times, the machine, its memory and threads)
_RUN_KEYS = ("second", "time", "machine", "memory", "budget", "bytes", "peak", "rss", "threads", "cores")


def _numbers(obj, prefix=""):
    """The numeric leaves of a JSON report, by path, without the numbers that describe the run."""
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            if not (k.endswith("_s") or any(w in k for w in _RUN_KEYS)):
                out.update(_numbers(v, f"{prefix}/{k}"))
        return out
    if isinstance(obj, list):
        out = {}
        for i, v in enumerate(obj):
            out.update(_numbers(v, f"{prefix}/{i}"))
        return out
    if isinstance(obj, (int, float)) and not isinstance(obj, bool):
        return {prefix: float(obj)}
    return {}


def worker_cli(args, method):
    """``skframe fit CSV --target y --interval 0.9 --json`` in its own process."""
    cmd = [sys.executable, "-m", "skframe", "fit", args.csv, "--target", "y", "--interval", "0.9", "--json"]
    if method != "cv+":
        cmd += ["--interval-method", method]
    env = dict(os.environ, PYTHONPATH=args.src)
    res, seconds = _setup.timed(subprocess.run, cmd, capture_output=True, text=True, env=env)
    if res.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed: {res.stderr[-2000:]}")
    report = json.loads(res.stdout)
    with open(args.save, "w") as fh:
        json.dump(report, fh)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
    return {"command_s": seconds, "command_peak_rss_mb": peak}


def worker(args):
    sys.path.insert(0, args.src)  # the tree measured, before skframe is imported
    import skframe

    assert str(Path(skframe.__file__).resolve()).startswith(str(Path(args.src).resolve())), skframe.__file__
    if args.worker.startswith("predict-"):
        out = worker_predict(args, args.worker.split("-", 1)[1])
    else:
        out = worker_cli(args, args.worker.split("-", 1)[1])
    print(json.dumps(out))


def _write_csv(path, rows):
    import numpy as np

    X, y = _setup.friedman_data(rows, d=8, seed=5)
    header = ",".join([f"x{i}" for i in range(X.shape[1])] + ["y"])
    np.savetxt(path, np.column_stack([X, y]), delimiter=",", header=header, comments="", fmt="%.10g")


def _max_diff(a_path, b_path):
    import numpy as np

    if a_path.endswith(".npz"):
        a, b = np.load(a_path), np.load(b_path)
        return {k: float(np.max(np.abs(a[k] - b[k]))) for k in a.files}
    a, b = (_numbers(json.load(open(path))) for path in (a_path, b_path))
    keys = sorted(set(a) | set(b))
    missing = [k for k in keys if k not in a or k not in b]
    diff = max((abs(a[k] - b[k]) for k in keys if k in a and k in b), default=0.0)
    return {"report_numbers": diff, "keys_compared": len(keys) - len(missing), "keys_in_one_only": missing}


def driver(args):
    import numpy as np

    trees = {"before": args.before, "after": args.after}
    tmp = Path(tempfile.mkdtemp(prefix="bench_block_predict_"))
    args.csv = str(tmp / "table.csv")
    _write_csv(args.csv, args.cli_rows)
    runs = {case: {name: [] for name in trees} for case in CASES}
    for rnd in range(args.repeats):
        order = list(trees) if rnd % 2 == 0 else list(trees)[::-1]  # alternated
        for case in CASES:
            for name in order:
                save = str(tmp / f"{case}-{name}") + (".npz" if case.startswith("predict") else ".json")
                cmd = [sys.executable, __file__, "--worker", case, "--src", trees[name], "--save", save,
                       "--csv", args.csv, "--n", str(args.n), "--m", str(args.m), "--n-test", str(args.n_test)]
                res = subprocess.run(cmd, capture_output=True, text=True)
                if res.returncode:
                    raise SystemExit(f"worker {case} ({name}) failed: {res.stderr[-3000:]}")
                runs[case][name].append(json.loads(res.stdout.strip().splitlines()[-1]))
    report = {"n": args.n, "m": args.m, "n_test": args.n_test, "cli_rows": args.cli_rows, "repeats": args.repeats,
              "before": trees["before"], "after": trees["after"], "files": str(tmp), "versions": _setup.versions(),
              "cases": {}}
    for case in CASES:
        entry = {}
        for name in trees:
            rows = runs[case][name]
            entry[name] = {k: (float(np.median([r[k] for r in rows])) if "_s" in k else rows[-1][k]) for k in rows[0]}
            entry[name]["all_times"] = {k: [round(r[k], 4) for r in rows] for k in rows[0] if k.endswith("_s")}
        entry["after_over_before"] = {k: round(entry["after"][k] / entry["before"][k], 3)
                                      for k in entry["before"] if k.endswith("_s")}
        report["cases"][case] = entry
    _setup.emit(_compare(report), args.out)


def _compare(report):
    """``report`` with each case's ``max_abs_diff`` between the saved results of its last round (in ``files``)."""
    tmp = Path(report["files"])
    for case, entry in report["cases"].items():
        ext = ".npz" if case.startswith("predict") else ".json"
        entry["max_abs_diff"] = _max_diff(str(tmp / f"{case}-before{ext}"), str(tmp / f"{case}-after{ext}"))
    return report


def main():
    ap = _setup.parser(__doc__, n=20_000, m=500, n_test=50_000, cli_rows=5_000, repeats=3, before="",
                       after=str(_setup.ROOT / "src"), out="", worker="", src="", save="", csv="", recompare="")
    args = ap.parse_args()
    if args.worker:
        worker(args)
    elif args.recompare:  # the differences of a finished run, from its report and saved files
        _setup.emit(_compare(json.load(open(args.recompare))), args.out)
    else:
        if not args.before:
            raise SystemExit("give --before FOLDER (the src folder of the tree to compare with)")
        driver(args)


if __name__ == "__main__":
    main()
