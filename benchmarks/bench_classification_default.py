"""The default classifier of ``skframe fit`` on the synthetic binary problem of ``bench_classification.py``, against
``SVC(probability=True)`` at the parameters that benchmark's grid search chose for it.

Data: scikit-learn's ``make_classification`` (20 inputs, 10 informative, 5 % flipped labels, ``random_state=0``),
20 000 training and 5 000 test rows, the label written as text (``no`` / ``yes``: a user's file, which the command
reads as a class label), the inputs as they come (the command scales them itself), into ``train.csv`` and
``test.csv``. ``skframe fit train.csv --test test.csv --target label --json`` runs in a fresh process at its
defaults (the logistic loss, the automatic bandwidth and sketch, lam by approximate leave-one-out on one path, the
calibration map); its report's fit seconds, test log-loss and accuracy are kept. Beside it, fitted in this process
on the same rows, standardised: ``SVC(probability=True, cache_size=1000)`` with ``C = 1``, ``gamma = 0.1`` (the
least 3-fold cross-validated log-loss of a 3 x 4 grid on all the training rows in ``bench_classification.py``'s run:
``out/classification.json``), ``LogisticRegression(max_iter=1000)`` and ``HistGradientBoostingClassifier
(random_state=0)``; fit seconds of one fit each, test log-loss and accuracy. The ratio is SVC's fit seconds over
skframe's. The machine is shared: the load average is recorded before and after.
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


def _data(n=20_000, n_test=5_000):
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=n + n_test, n_features=20, n_informative=10, flip_y=0.05, random_state=0)
    return X[:n], X[n:], y[:n], y[n:]


def _write(path, X, y):
    names = ",".join(f"x{j}" for j in range(X.shape[1]))
    with open(path, "w") as fh:
        fh.write(names + ",label\n")
        for row, label in zip(X, y):
            fh.write(",".join(f"{v:.17g}" for v in row) + ("," + ("yes" if label else "no")) + "\n")


def _skframe(train, test):
    cmd = [sys.executable, "-m", "skframe", "fit", str(train), "--test", str(test), "--target", "label", "--json"]
    t0 = time.perf_counter()
    res = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if res.returncode:
        return {"error": res.stderr.strip().splitlines()[-1:], "wall_seconds": round(wall, 2)}
    rep = json.loads(res.stdout)
    lam = (rep.get("chosen") or {}).get("lam") or {}
    return {"fit_seconds": round(float(rep["fit_seconds"]), 2), "wall_seconds": round(wall, 2),
            "log_loss": rep["metrics"]["log_loss"], "accuracy": rep["metrics"]["accuracy"],
            "lam": lam.get("chosen") if isinstance(lam, dict) else lam,
            "lam_criterion": lam.get("lam_criterion") if isinstance(lam, dict) else None}


def _sklearn(Xtr, Xte, ytr, yte):
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import accuracy_score, log_loss
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    scaler = StandardScaler().fit(Xtr)
    A, B = scaler.transform(Xtr), scaler.transform(Xte)
    out = {}
    for name, est in (("svc", SVC(C=1.0, gamma=0.1, probability=True, random_state=0, cache_size=1000)),
                      ("sklearn_logistic_regression", LogisticRegression(max_iter=1000)),
                      ("sklearn_hist_gradient_boosting", HistGradientBoostingClassifier(random_state=0))):
        t0 = time.perf_counter()
        est.fit(A, ytr)
        seconds = time.perf_counter() - t0
        P = est.predict_proba(B)
        out[name] = {"fit_seconds": round(seconds, 2), "log_loss": float(log_loss(yte, P)),
                     "accuracy": float(accuracy_score(yte, est.classes_[np.argmax(P, axis=1)]))}
        print(name, json.dumps(out[name]), file=sys.stderr, flush=True)
    return out


def main():
    ap = _setup.parser(__doc__)
    ap.add_argument("--out", default="benchmarks/out/classification_default_20000.json")
    args = ap.parse_args()
    Xtr, Xte, ytr, yte = _data()
    report = {"benchmark": "classification_default_20000", "protocol": __doc__.split("\n\n")[1].replace("\n", " "),
              "versions": _setup.versions(), "load_average_before": list(os.getloadavg())}
    with tempfile.TemporaryDirectory() as tmp:
        train, test = Path(tmp) / "train.csv", Path(tmp) / "test.csv"
        _write(train, Xtr, ytr)
        _write(test, Xte, yte)
        report["skframe_fit_default"] = _skframe(train, test)
    print("skframe", json.dumps(report["skframe_fit_default"]), file=sys.stderr, flush=True)
    report.update(_sklearn(Xtr, Xte, ytr, yte))
    sk, svc = report["skframe_fit_default"], report["svc"]
    if "fit_seconds" in sk:
        report["svc_over_skframe_fit_seconds"] = round(svc["fit_seconds"] / sk["fit_seconds"], 2)
        report["log_loss_skframe_minus_svc"] = sk["log_loss"] - svc["log_loss"]
    report["load_average_after"] = list(os.getloadavg())
    _setup.emit(report, args.out)


if __name__ == "__main__":
    main()
