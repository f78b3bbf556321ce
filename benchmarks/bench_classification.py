"""Classification: sketched kernel logistic/multinomial against SVC(probability=True) and Nystroem + LogisticRegression.

Data: load_breast_cancer (binary), load_digits (10 classes) and a synthetic binary problem
(scikit-learn's make_classification, 20 features, 10 informative, 5 % flipped labels) with
n_train = 20 000, each split 70/30 (the synthetic one: 20 000 / 5 000) and standardised. Every method is
tuned the same way: a 3 x 3 grid (the Gaussian kernel's gamma in {g/2, g, 2g}, g = 1 / (d var X) as
"scale", times three regularisation values) by 3-fold cross-validated log-loss on at most 3 000 training
rows, then fitted on the whole training part (timed: the least of --repeats fits, 3 by default, the machine
being shared). Reported: test log-loss, accuracy, expected
calibration error (top-label, 15 equal-width bins) and fit seconds. skframe: SketchedKernelClassifier with
loss="logistic" (binary) or "multinomial" and its default sketch and solver (newton); Nystroem gets the same
number of components m as skframe's sketch size. Then, on the synthetic problem, the trade-off of the refit
alone: skframe at fixed sketch sizes (the auto size, twice it, 1 000), lam in {1e-5, 1e-6} and gamma in
{g/2, g}: test log-loss, fit seconds (and their ratio to SVC's refit of the same run) and the sketch's
saturation (``sketch_info_["saturation"]``, the effective dimension at lam over the number of features).

``--large`` also fits n = 10^6 synthetic binary and 10-class problems with the default settings (the plan's
memory budget), beside the square-loss fit (SketchedKernelRidge on the ±1 / one-hot codes) of the same size;
``--only-large`` runs those alone (``out/classification_large.json``).
"""

from __future__ import annotations

import warnings

import _setup  # runtime settings and sys.path, before NumPy; the measuring helpers
import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits, make_classification
from sklearn.kernel_approximation import Nystroem
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, log_loss
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from skframe.models import SketchedKernelClassifier, SketchedKernelRidge

LAMS = (1e-3, 1e-4, 1e-5)
CS = (1.0, 10.0, 100.0)


def ece(y, P, classes, bins=15):
    """Top-label expected calibration error: sum over confidence bins of |accuracy - confidence| x share."""
    conf, pred = P.max(axis=1), classes[np.argmax(P, axis=1)]
    edges = np.linspace(0.0, 1.0, bins + 1)
    idx = np.clip(np.digitize(conf, edges[1:-1]), 0, bins - 1)
    total = 0.0
    for b in range(bins):
        sel = idx == b
        if sel.any():
            total += sel.mean() * abs(np.mean(pred[sel] == y[sel]) - np.mean(conf[sel]))
    return float(total)


def datasets(n_synth):
    out = {}
    X, y = load_breast_cancer(return_X_y=True)
    out["breast_cancer"] = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    X, y = load_digits(return_X_y=True)
    out["digits"] = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    X, y = make_classification(n_samples=n_synth + 5000, n_features=20, n_informative=10, flip_y=0.05,
                               random_state=0)
    out[f"synthetic_{n_synth}"] = (X[:n_synth], X[n_synth:], y[:n_synth], y[n_synth:])
    return out


def methods(n_classes, g, m):
    loss = "logistic" if n_classes == 2 else "multinomial"
    gammas = [g / 2, g, 2 * g]
    return {
        "skframe": (SketchedKernelClassifier(loss=loss, random_state=0),
                    {"kernel_params": [{"gamma": v} for v in gammas], "lam": list(LAMS)}),
        "svc": (SVC(probability=True, random_state=0, cache_size=1000), {"gamma": gammas, "C": list(CS)}),
        "nystroem_logreg": (make_pipeline(Nystroem(n_components=m, random_state=0),
                                          LogisticRegression(max_iter=2000)),
                            {"nystroem__gamma": gammas, "logisticregression__C": list(CS)}),
    }


def run_dataset(name, Xtr, Xte, ytr, yte, tune_rows, repeats=3):
    scaler = StandardScaler().fit(Xtr)
    Xtr, Xte = scaler.transform(Xtr), scaler.transform(Xte)
    g = 1.0 / (Xtr.shape[1] * Xtr.var())
    classes = np.unique(ytr)
    m = int(min(1000, max(100, np.ceil(2 * np.sqrt(len(Xtr))))))  # skframe's auto size rule at this n
    rows = np.random.default_rng(0).permutation(len(Xtr))[:tune_rows]
    out = {"n_train": int(len(Xtr)), "n_test": int(len(Xte)), "n_classes": int(classes.size), "m": m}
    for key, (est, grid) in methods(classes.size, g, m).items():
        search = GridSearchCV(est, grid, cv=3, scoring="neg_log_loss", n_jobs=1).fit(Xtr[rows], ytr[rows])
        best = search.best_estimator_
        seconds, _ = _setup.best_of(lambda: best.fit(Xtr, ytr), repeats)  # noqa: B023 (called here)
        P = best.predict_proba(Xte)
        params = {k: (v["gamma"] if isinstance(v, dict) else v) for k, v in search.best_params_.items()}
        out[key] = {"params": params,
                    "log_loss": float(log_loss(yte, P, labels=best.classes_)),
                    "accuracy": float(accuracy_score(yte, best.predict(Xte))),
                    "ece": ece(yte, P, best.classes_), "fit_seconds": float(seconds)}
        if key == "skframe":  # how much of its sketch the tuned lam uses at the refit (sketch_info_)
            out[key]["sketch_m"] = int(best.sketch_info_["m"])
            out[key]["saturation"] = float(best.sketch_info_.get("saturation", float("nan")))
        print(name, key, out[key], flush=True)
    out["svc_over_skframe_fit_time"] = out["svc"]["fit_seconds"] / out["skframe"]["fit_seconds"]
    return out


def tradeoff(Xtr, Xte, ytr, yte, sizes=(283, 566, 1000), lams=(1e-5, 1e-6), repeats=3):
    """The refit of the synthetic problem at fixed sketch sizes and lam, gamma in {g/2, g}: test log-loss,
    fit seconds and the sketch's saturation (how much of the sketch lam uses), one fit each."""
    scaler = StandardScaler().fit(Xtr)
    Xtr, Xte = scaler.transform(Xtr), scaler.transform(Xte)
    g = 1.0 / (Xtr.shape[1] * Xtr.var())
    out = {}
    for m in sizes:
        for lam in lams:
            for name, gamma in (("g/2", g / 2), ("g", g)):
                clf = SketchedKernelClassifier(loss="logistic", kernel_params={"gamma": gamma}, lam=lam,
                                               sketch_size=m, random_state=0)
                seconds, _ = _setup.best_of(lambda: clf.fit(Xtr, ytr), repeats)  # noqa: B023 (called here)
                P = clf.predict_proba(Xte)
                out[f"m{m}_lam{lam:.0e}_gamma{name}"] = {
                    "m": m, "lam": lam, "gamma": float(gamma), "log_loss": float(log_loss(yte, P)),
                    "accuracy": float(accuracy_score(yte, clf.predict(Xte))), "fit_seconds": float(seconds),
                    "saturation": float(clf.sketch_info_.get("saturation", float("nan")))}
                print("tradeoff", m, lam, name, out[f"m{m}_lam{lam:.0e}_gamma{name}"], flush=True)
    return out


def large(n, n_classes):
    """A default fit at n rows (binary or n_classes), beside the square-loss fit of the same size."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, max(10, 2 * n_classes))).astype(np.float64)  # 10 classes: 20 inputs
    y = np.argmax(X[:, :n_classes] + 0.5 * np.sin(3 * X[:, n_classes:2 * n_classes]), axis=1) if n_classes > 2 \
        else (X[:, 0] * X[:, 1] + 0.3 * rng.normal(size=n) > 0).astype(int)
    loss = "logistic" if n_classes == 2 else "multinomial"
    _setup.reset_peak_rss()
    clf, seconds = _setup.timed(SketchedKernelClassifier(loss=loss, random_state=0).fit, X, y)
    peak = _setup.peak_rss_mb()
    codes = np.where(y == 1, 1.0, -1.0) if n_classes == 2 else np.eye(n_classes)[y]
    ridge, ridge_seconds = _setup.timed(SketchedKernelRidge(random_state=0).fit, X, codes)
    return {"n": n, "n_classes": n_classes, "fit_seconds": float(seconds), "peak_rss_mb": float(peak),
            "representation": clf.representation_, "m": int(clf.sketch_info_.get("m", 0)),
            "stop_reason": clf.stop_reason_, "square_loss_fit_seconds": float(ridge_seconds),
            "train_accuracy_10k": float(np.mean(clf.predict(X[:10000]) == y[:10000]))}


def main():
    ap = _setup.parser(__doc__, n_synth=20_000, tune_rows=3000, repeats=3)
    ap.add_argument("--large", action="store_true", help="also the n = 10^6 fits (minutes; one run)")
    ap.add_argument("--only-large", action="store_true",
                    help="the n = 10^6 fits alone (default --out benchmarks/out/classification_large.json)")
    ap.add_argument("--out", default=None)
    ap.add_argument("--classes", default="2,10", help="with --only-large: the problems to fit (2 and/or 10)")
    args = ap.parse_args()
    if args.only_large:
        out = args.out or "benchmarks/out/classification_large.json"
        report = {"benchmark": "classification_large", "versions": _setup.versions(), "large": {},
                  "load_average_before": list(__import__("os").getloadavg())}
        for k in (int(c) for c in args.classes.split(",")):
            report["large"]["binary" if k == 2 else f"{k}_classes"] = large(1_000_000, k)
            report["load_average_after"] = list(__import__("os").getloadavg())
            _setup.emit(report, out)  # each problem written as it ends
        return
    warnings.filterwarnings("ignore", category=UserWarning)
    # scikit-learn 1.9 deprecates SVC(probability=True) (for CalibratedClassifierCV(SVC(), ensemble=False)); it is
    # still the baseline this comparison names
    warnings.filterwarnings("ignore", category=FutureWarning)
    splits = datasets(args.n_synth)
    results = {name: run_dataset(name, *split, tune_rows=args.tune_rows, repeats=args.repeats)
               for name, split in splits.items()}
    synth = results[f"synthetic_{args.n_synth}"]
    sizes = tuple(sorted({synth["m"], 2 * synth["m"], 1000}))
    grid = tradeoff(*splits[f"synthetic_{args.n_synth}"], sizes=sizes, repeats=args.repeats)
    for row in grid.values():  # beside the SVC refit of the same run
        row["svc_over_skframe_fit_time"] = synth["svc"]["fit_seconds"] / row["fit_seconds"]
    report = {"benchmark": "classification", "results": results, "tradeoff": grid,
              "protocol": __doc__.split("\n\n")[1].replace("\n", " "), "versions": _setup.versions()}
    if args.large:
        report["large"] = {"binary": large(1_000_000, 2), "ten_classes": large(1_000_000, 10)}
    _setup.emit(report, args.out or "benchmarks/out/classification.json")


if __name__ == "__main__":
    main()
