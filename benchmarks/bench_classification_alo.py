"""``skframe fit`` on a classification table: lam chosen by approximate leave-one-out against the k-fold search.

Data: scikit-learn's make_classification (20 features, 10 informative, 5 % flipped labels, seed 0), the labels
written as text ("no" / "yes"), ``--n`` training rows (20 000) and 5 000 test rows, as CSV files. Each run is one
``skframe fit TRAIN --target label --json`` process (its wall time; the report's fit seconds, chosen lam and
metrics):

- ``alo_default``: the default command, no test file: lam="auto" by approximate leave-one-out on one path and the
  held-out report from the same fit (the whole command is one fit);
- ``alo_test``: the same with ``--test TEST``: the test log-loss and accuracy of the model kept;
- ``before_default`` / ``before_test``: the same two commands run from another source tree (``--before-src``,
  e.g. the checkout before the change: k folds for lam, and a second fit for the held-out report), when given;
- ``square_default``: ``--task regression`` on the 0/1 codes of the same rows (the square loss in closed form),
  the time a classification fit is measured against.

Then (``--parts bundled``) scikit-learn's bundled tables (breast_cancer, wine, iris, digits; standardised, all
rows): SketchedKernelClassifier(lam="auto", random_state=0) with the logistic and the multinomial loss, its lam
chosen by ``lam_criterion="alo"`` and by ``"kfold"``: the two choices (a grid step is a decade) and fit seconds.

Beside them, fitted in this process on the same standardised rows: scikit-learn's LogisticRegression (linear, its
defaults) and HistGradientBoostingClassifier (its defaults), with their fit seconds and test metrics. The machine
is shared: one run of each, the times as measured. Writes ``out/classification_alo.json`` (``--parts`` and
``--runs`` choose what runs; the others keep the figures already in the file).
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

OUT = Path(__file__).parent / "out" / "classification_alo.json"


def _table(n, n_test, folder):
    import pandas as pd
    from sklearn.datasets import make_classification

    X, y = make_classification(n + n_test, 20, n_informative=10, flip_y=0.05, random_state=0)
    frame = pd.DataFrame(X, columns=[f"x{i}" for i in range(X.shape[1])])
    frame["label"] = np.where(y == 1, "yes", "no")
    paths = {}
    for name, part in (("train", frame.iloc[:n]), ("test", frame.iloc[n:])):
        paths[name] = folder / f"{name}.csv"
        part.to_csv(paths[name], index=False)
    codes = frame.iloc[:n].drop(columns="label").assign(code=y[:n].astype(float))
    paths["codes"] = folder / "codes.csv"
    codes.to_csv(paths["codes"], index=False)
    return X, y, paths


def _skframe(args, src=None):
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = str(Path(src).resolve())
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "skframe", "fit", *map(str, args), "--json"], env=env,
                         capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if res.returncode != 0:
        return {"error": res.stderr.strip().splitlines()[-1:], "wall_seconds": seconds}
    rep = json.loads(res.stdout)
    lam = (rep.get("chosen") or {}).get("lam") or {}
    keep = ("accuracy", "balanced_accuracy", "log_loss", "roc_auc", "mse", "r2")
    return {"wall_seconds": round(seconds, 2), "fit_seconds": round(float(rep["fit_seconds"]), 2),
            "evaluated_on": rep["evaluated_on"], "n_test": rep["n_test"],
            "lam": lam.get("chosen") if isinstance(lam, dict) else lam,
            "lam_reason": (lam.get("reason") if isinstance(lam, dict) else None),
            "metrics": {k: rep["metrics"][k] for k in keep if k in rep["metrics"]}}


def _sklearn(X, y, n):
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import accuracy_score, log_loss
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler().fit(X[:n])
    X_tr, X_te, y_tr, y_te = scaler.transform(X[:n]), scaler.transform(X[n:]), y[:n], y[n:]
    out = {}
    for name, model in (("sklearn_logistic_regression", LogisticRegression()),
                        ("sklearn_hist_gradient_boosting", HistGradientBoostingClassifier(random_state=0))):
        _, seconds = _setup.timed(model.fit, X_tr, y_tr)
        P = model.predict_proba(X_te)
        out[name] = {"fit_seconds": round(seconds, 2), "test_log_loss": float(log_loss(y_te, P)),
                     "test_accuracy": float(accuracy_score(y_te, model.classes_[P.argmax(axis=1)]))}
    return out


def _bundled():
    import warnings

    from sklearn import datasets
    from sklearn.preprocessing import StandardScaler

    from skframe.models import SketchedKernelClassifier

    out = {}
    for name in ("breast_cancer", "wine", "iris", "digits"):
        X, y = getattr(datasets, f"load_{name}")(return_X_y=True)
        X = StandardScaler().fit_transform(X)
        for loss in ("logistic", "multinomial"):
            row = {}
            for criterion in ("alo", "kfold"):
                est = SketchedKernelClassifier(loss=loss, lam="auto", lam_criterion=criterion, random_state=0)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    _, seconds = _setup.timed(est.fit, X, y)
                row[criterion] = {"lam": float(est.lam_path_[-1]), "fit_seconds": round(seconds, 2)}
            row["decades_apart"] = float(abs(np.log10(row["alo"]["lam"] / row["kfold"]["lam"])))
            out[f"{name}_{loss}"] = row
            print(name, loss, row, file=sys.stderr, flush=True)
    return out


def main():
    ap = _setup.parser(__doc__, n=20_000, n_test=5_000, before_src="", out=str(OUT), parts="cli,bundled",
                       runs="alo_default,alo_test,square_default,before_default,before_test")
    args = ap.parse_args()
    parts = {p.strip() for p in args.parts.split(",")}
    report = _setup.previous_report(args.out) or {}
    report.update({"benchmark": "classification_alo", "n_train": args.n, "n_test": args.n_test,
                   "data": "make_classification(20 features, 10 informative, flip_y=0.05, seed 0), labels no/yes",
                   "versions": _setup.versions()})
    if "bundled" in parts:
        report["bundled"] = _bundled()
    if "cli" not in parts:
        _setup.emit(report, args.out)
        return
    with tempfile.TemporaryDirectory() as tmp:
        X, y, paths = _table(args.n, args.n_test, Path(tmp))
        train, test = ["--target", "label"], ["--test", paths["test"]]
        runs = {"alo_default": ([paths["train"], *train], None), "alo_test": ([paths["train"], *train, *test], None),
                "square_default": ([paths["codes"], "--target", "code", "--task", "regression"], None)}
        if args.before_src:
            runs["before_default"] = ([paths["train"], *train], args.before_src)
            runs["before_test"] = ([paths["train"], *train, *test], args.before_src)
        chosen = {r.strip() for r in args.runs.split(",")}  # the others keep the figures of an earlier run
        for name, (cmd, src) in ((k, v) for k, v in runs.items() if k in chosen):
            report[name] = _skframe(cmd, src)
            print(name, report[name], file=sys.stderr, flush=True)
        report.update(_sklearn(X, y, args.n))
    _setup.emit(report, args.out)


if __name__ == "__main__":
    main()
