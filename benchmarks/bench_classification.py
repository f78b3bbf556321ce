"""Classification: sketched kernel logistic/multinomial against SVC(probability=True) and Nystroem + LogisticRegression.

Data: load_breast_cancer (binary), load_digits (10 classes) and a synthetic binary problem (scikit-learn's
make_classification, 20 features, 10 informative, 5 % flipped labels) with n_train = 20 000, each split 70/30
(the synthetic one: 20 000 / 5 000) and standardised. Every method is tuned the same way: a 3 x 4 grid (the
Gaussian kernel's gamma in {g/2, g, 2g}, g = 1 / (d var X) as "scale", times four regularisation values, one per
decade: lam in {1e-3, ..., 1e-6}, C in {1, ..., 1000}) by 3-fold cross-validated log-loss on all the training rows
(``--tune-rows`` fewer), then fitted on the whole training part (timed: the least of --repeats fits, 3 by default, the
machine being shared). Reported: test log-loss, accuracy, expected calibration error (top-label, 15 equal-width
bins) and fit seconds. skframe: SketchedKernelClassifier with loss="logistic" (binary) or "multinomial" and its
default sketch and solver (newton); on the binary sets with ``calibration="lapse"`` (``skframe fit``'s default for
the logistic loss: its probabilities through a map fitted on approximate leave-one-out scores, inside each fit, so
the search tunes the calibrated model), and the same without it ("skframe_uncalibrated"); Nystroem gets the same
number of components m as skframe's sketch size (the
auto size while tuning; at the refit the size skframe's refit settled on, which grows when the tuned lam
saturates the auto sketch). Beyond that common grid, two rows with one length-scale per input: skframe's
``kernel="gaussian-ard"`` learning them in its fit (``length_scale="learn"``; lam on the grid above) and SVC on the
inputs divided by the length-scales skframe's refit learned (the same kernel at gamma = 1/2; C on its grid). Each
difference skframe - other (log-loss, accuracy, ECE) comes with a 95 % interval from a paired bootstrap of the test
rows (1 000 resamples): an interval holding 0 is a difference the test set cannot tell from chance. Then, on the
synthetic problem, the trade-off of the refit alone: skframe (calibrated) at fixed
sketch sizes (the auto size, twice it, 1 000), lam in {1e-5, 1e-6} and gamma in {g/2, g}: test log-loss, fit
seconds (and their ratio to SVC's refit of the same run) and the sketch's saturation
(``sketch_info_["saturation"]``, the effective dimension at lam over the number of features).

``--large`` also fits n = 10^6 synthetic binary and 10-class problems with the default settings (the plan's
memory budget), beside the square-loss fit (SketchedKernelRidge on the ±1 / one-hot codes) of the same size;
``--only-large`` runs those alone (``out/classification_large.json``).

``--falkon`` compares skframe with Falkon's ``LogisticFalkon`` on the CPU (``out/classification_falkon.json``;
skipped with one line when ``falkon`` does not import): the synthetic binary problem above at each n of
``--falkon-sizes`` (default 20 000 and 100 000 training rows, 5 000 test rows), standardised. skframe is tuned on
at most 3 000 rows (``--falkon-tune-rows``) with Nystrom sub-sampling (``sketch="subsample"``, m by the auto size
rule, given), on a 3 x 3 grid (gamma as above, lambda in {1e-3, 1e-4, 1e-5}), then fitted on the whole training
part; LogisticFalkon gets the very centres skframe drew (the rows of ``X_fit_``, with their labels, through
Falkon's ``FixedSelector``), the same gamma (``sigma = 1 / sqrt(2 gamma)``), the same lambda (both minimise
``(1/n) sum log(1 + exp(-y f(x))) + (lambda/2) ||f||^2``) and float64, with the penalty and iteration lists of its
documentation: three penalties decreasing by 100 down to lambda, then lambda again (``iter_list`` 3, 3, 3, 8, 8:
"docs"), and a longer run with five final steps ("long"). Reported: test log-loss and accuracy, fit seconds (one
process, one after the other) and the training objective each reached.
"""

from __future__ import annotations

import warnings

import _setup  # runtime settings and sys.path, before NumPy; the measuring helpers
import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits, make_classification
from sklearn.kernel_approximation import Nystroem
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, log_loss
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from skframe.models import SketchedKernelClassifier, SketchedKernelRidge

# one decade per value; the fourth (1e-6, C = 1000) since the tuned lam sat on the edge of a 3-value grid on two of
# the three sets (1e-5 on digits and the synthetic problem); SVC's C grid was extended by the same decade
LAMS = (1e-3, 1e-4, 1e-5, 1e-6)
CS = (1.0, 10.0, 100.0, 1000.0)
FALKON_LAMS = (1e-3, 1e-4, 1e-5)  # the --falkon comparison's grid (as measured)


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


def synthetic(n, n_test=5000):
    """make_classification's binary problem (20 inputs, 10 informative, 5 % flipped): (Xtr, Xte, ytr, yte)."""
    X, y = make_classification(n_samples=n + n_test, n_features=20, n_informative=10, flip_y=0.05, random_state=0)
    return X[:n], X[n:], y[:n], y[n:]


def datasets(n_synth):
    out = {}
    X, y = load_breast_cancer(return_X_y=True)
    out["breast_cancer"] = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    X, y = load_digits(return_X_y=True)
    out["digits"] = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    out[f"synthetic_{n_synth}"] = synthetic(n_synth)
    return out


def methods(n_classes, g, m):
    loss = "logistic" if n_classes == 2 else "multinomial"
    cal = "lapse" if n_classes == 2 else None  # the logistic loss's calibration (skframe fit's default)
    gammas = [g / 2, g, 2 * g]
    grid = {"kernel_params": [{"gamma": v} for v in gammas], "lam": list(LAMS)}
    raw = {"skframe_uncalibrated": (SketchedKernelClassifier(loss=loss, random_state=0), dict(grid))} if cal else {}
    return {
        "skframe": (SketchedKernelClassifier(loss=loss, calibration=cal, random_state=0), grid),
        **raw,
        "svc": (SVC(probability=True, random_state=0, cache_size=1000), {"gamma": gammas, "C": list(CS)}),
        "nystroem_logreg": (make_pipeline(Nystroem(n_components=m, random_state=0),
                                          LogisticRegression(max_iter=2000)),
                            {"nystroem__gamma": gammas, "logisticregression__C": list(CS)}),
        # beyond the common grid: one length-scale per input, learned by the fit itself (lam on the same grid),
        # and SVC on the inputs divided by those length-scales (gamma = 1/2: the same kernel), C on its grid
        "skframe_ard": (SketchedKernelClassifier(kernel="gaussian-ard", kernel_params={"length_scale": "learn"},
                                                 loss=loss, calibration=cal, random_state=0), {"lam": list(LAMS)}),
        "svc_ard": (SVC(probability=True, random_state=0, cache_size=1000, gamma=0.5), {"C": list(CS)}),
    }


# the differences (first - second) the report bounds by a paired bootstrap of the test rows
PAIRS = (("skframe", "svc"), ("skframe", "nystroem_logreg"), ("skframe_ard", "svc"), ("skframe_ard", "svc_ard"),
         ("skframe", "skframe_uncalibrated"))


def test_metrics(y, P, pred, classes):
    """Test log-loss, accuracy (of the labels the model predicts: SVC's ``predict`` is not the argmax of its
    probabilities) and expected calibration error."""
    return {"log_loss": float(log_loss(y, P, labels=classes)), "accuracy": float(np.mean(pred == y)),
            "ece": ece(y, P, classes)}


def paired_bootstrap(y, first, second, classes, draws=1000, seed=0):
    """Each metric's difference first - second (each a pair ``(P, predicted labels)``) on the test rows and its 95 %
    interval over ``draws`` resamples of the rows, the same rows for both models: an interval holding 0 is a
    difference this test set cannot tell from chance."""
    rng = np.random.default_rng(seed)
    a, b = test_metrics(y, *first, classes), test_metrics(y, *second, classes)
    point = {k: a[k] - b[k] for k in a}
    samples = {k: [] for k in a}
    for _ in range(draws):
        rows = rng.integers(0, len(y), len(y))
        a = test_metrics(y[rows], first[0][rows], first[1][rows], classes)
        b = test_metrics(y[rows], second[0][rows], second[1][rows], classes)
        for k in samples:
            samples[k].append(a[k] - b[k])
    return {k: {"difference": float(point[k]),
                "interval_95": [float(v) for v in np.percentile(samples[k], [2.5, 97.5])]} for k in point}


def auto_m(n):
    """skframe's auto sketch size at n rows (below its plan's caps)."""
    return int(min(1000, max(100, np.ceil(2 * np.sqrt(n)))))


def run_dataset(name, Xtr, Xte, ytr, yte, tune_rows, repeats=3):
    scaler = StandardScaler().fit(Xtr)
    Xtr, Xte = scaler.transform(Xtr), scaler.transform(Xte)
    g = 1.0 / (Xtr.shape[1] * Xtr.var())
    classes = np.unique(ytr)
    m = auto_m(len(Xtr))
    rows = np.random.default_rng(0).permutation(len(Xtr))[:tune_rows]
    out = {"n_train": int(len(Xtr)), "n_test": int(len(Xte)), "n_classes": int(classes.size), "m": m}
    compared, scales, predicted = methods(classes.size, g, m), None, {}
    for key, (est, grid) in compared.items():
        Xa, Xb = (Xtr, Xte) if key != "svc_ard" else (Xtr / scales, Xte / scales)
        search = GridSearchCV(est, grid, cv=3, scoring="neg_log_loss", n_jobs=1).fit(Xa[rows], ytr[rows])
        best = search.best_estimator_
        if key == "nystroem_logreg":  # the refit with as many components as skframe's refit
            best.set_params(nystroem__n_components=out["skframe"]["sketch_m"])
        seconds, _ = _setup.best_of(lambda: best.fit(Xa, ytr), repeats)  # noqa: B023 (called here)
        P, pred = best.predict_proba(Xb), best.predict(Xb)
        predicted[key] = (P, pred)
        params = {k: (v["gamma"] if isinstance(v, dict) and "gamma" in v else v)
                  for k, v in search.best_params_.items()}
        out[key] = dict(params=params, **test_metrics(yte, P, pred, best.classes_), fit_seconds=float(seconds))
        if key.startswith("skframe"):  # how much of its sketch the tuned lam uses at the refit (sketch_info_)
            if getattr(best, "calibration_", None) is not None:  # the map fitted on leave-one-out scores
                out[key]["calibration"] = {k: best.calibration_[k] for k in ("slope", "offset", "lapse", "kept",
                                                                              "held_out_gain")}
            out[key]["sketch_m"] = int(best.sketch_info_["m"])
            out[key]["grown_from"] = best.sketch_info_.get("grown_from")
            out[key]["newton"] = {k: best.solver_info_.get(k) for k in ("newton_steps", "passes", "reused_hessians")}
            out[key]["saturation"] = float(best.sketch_info_.get("saturation", float("nan")))
        if key == "skframe_ard":  # the refit's learned length-scales, which svc_ard then uses
            scales = np.asarray(best.kernel_.length_scale, dtype=np.float64)
            out[key]["length_scales"] = [float(v) for v in scales]
        print(name, key, out[key], flush=True)
    out["svc_over_skframe_fit_time"] = out["svc"]["fit_seconds"] / out["skframe"]["fit_seconds"]
    out["svc_over_skframe_ard_fit_time"] = out["svc"]["fit_seconds"] / out["skframe_ard"]["fit_seconds"]
    out["paired_bootstrap"] = {f"{a}_minus_{b}": paired_bootstrap(yte, predicted[a], predicted[b], classes)
                               for a, b in PAIRS if a in predicted and b in predicted}
    print(name, "paired_bootstrap", out["paired_bootstrap"], flush=True)
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
                                               sketch_size=m, calibration="lapse", random_state=0)
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


def import_falkon():
    """``(falkon, None)``, or ``(None, why)`` when it does not import."""
    try:
        import falkon
        import torch  # noqa: F401  (falkon's own dependency)
    except Exception as exc:  # ImportError, or a compiled extension that fails to load
        return None, f"{type(exc).__name__}: {exc}"
    return falkon, None


def training_objective(f, y_pm, coef, centres, gamma, lam):
    """``(1/n) sum log(1 + exp(-y f)) + (lam/2) coef^T K(centres, centres) coef`` for ``f = k(., centres) coef``."""
    coef = np.asarray(coef, dtype=np.float64).ravel()
    K = rbf_kernel(centres, centres, gamma=gamma)
    return float(np.mean(np.logaddexp(0.0, -y_pm * f)) + 0.5 * lam * coef @ K @ coef)


def falkon_schedules(lam):
    """LogisticFalkon's penalty and iteration lists, as its documentation advises: a short decreasing path to lam
    (factors of 100, 3 CG steps each), then steps at lam (8 CG steps each): two of them ("docs"), or five ("long")."""
    path = [lam * 1e4, lam * 1e2, lam]
    return {"docs": (path + [lam] * 2, [3, 3, 3, 8, 8]), "long": (path + [lam] * 5, [3, 3, 3] + [8] * 5)}


def falkon_compare(n, falkon, tune_rows):
    """skframe (Nystrom sub-sampling) and LogisticFalkon on the same centres, gamma and lambda at n training rows."""
    import contextlib
    import sys

    import torch
    from falkon.center_selection import FixedSelector

    Xtr, Xte, ytr, yte = synthetic(n)
    scaler = StandardScaler().fit(Xtr)
    Xtr, Xte = scaler.transform(Xtr), scaler.transform(Xte)
    g, m = 1.0 / (Xtr.shape[1] * Xtr.var()), auto_m(n)
    est = SketchedKernelClassifier(loss="logistic", sketch="subsample", sketch_size=m, random_state=0)
    grid = {"kernel_params": [{"gamma": v} for v in (g / 2, g, 2 * g)], "lam": list(FALKON_LAMS)}
    rows = np.random.default_rng(0).permutation(n)[:tune_rows]
    search = GridSearchCV(est, grid, cv=3, scoring="neg_log_loss", n_jobs=1).fit(Xtr[rows], ytr[rows])
    gamma, lam = search.best_params_["kernel_params"]["gamma"], search.best_params_["lam"]
    y_pm = np.where(ytr == 1, 1.0, -1.0)
    out = {"n_train": n, "n_test": len(Xte), "m": m, "gamma": gamma, "lam": lam,
           "sigma": float(np.sqrt(1.0 / (2.0 * gamma)))}

    clf, seconds = _setup.timed(search.best_estimator_.fit, Xtr, ytr)
    centres = np.asarray(clf.X_fit_)
    where = {row.tobytes(): i for i, row in enumerate(Xtr)}
    idx = np.array([where[row.tobytes()] for row in centres])
    P = clf.predict_proba(Xte)
    out["skframe"] = {"log_loss": float(log_loss(yte, P, labels=clf.classes_)),
                      "accuracy": float(accuracy_score(yte, clf.predict(Xte))), "fit_seconds": float(seconds),
                      "objective": training_objective(clf.decision_function(Xtr), y_pm, clf.coef_, centres, gamma,
                                                      lam),
                      "stop_reason": clf.stop_reason_, "n_iter": int(clf.n_iter_),
                      "rank": int(clf.sketch_info_.get("rank", m))}
    print(f"n={n}", "skframe", out["skframe"], flush=True)

    Xtr_t, Xte_t = torch.from_numpy(Xtr), torch.from_numpy(Xte)
    Ytr_t = torch.from_numpy(y_pm).reshape(-1, 1)
    idx_t = torch.from_numpy(idx)
    for name, (penalties, iters) in falkon_schedules(lam).items():
        opt = falkon.FalkonOptions(use_cpu=True, keops_active="no")
        kernel = falkon.kernels.GaussianKernel(sigma=out["sigma"], opt=opt)
        model = falkon.LogisticFalkon(kernel=kernel, penalty_list=penalties, iter_list=iters,
                                      loss=falkon.gsc_losses.LogisticLoss(kernel, opt=opt), M=m,
                                      center_selection=FixedSelector(Xtr_t[idx_t], Ytr_t[idx_t], idx_t),
                                      error_fn=None, options=opt)
        with contextlib.redirect_stdout(sys.stderr):  # its progress lines
            _, seconds = _setup.timed(model.fit, Xtr_t, Ytr_t)
        f_te = model.predict(Xte_t).numpy().ravel()
        p1 = 1.0 / (1.0 + np.exp(-f_te))
        out[f"falkon_{name}"] = {
            "penalty_list": penalties, "iter_list": iters,
            "log_loss": float(log_loss(yte, np.column_stack([1.0 - p1, p1]), labels=[0, 1])),
            "accuracy": float(np.mean((f_te > 0).astype(int) == yte)), "fit_seconds": float(seconds),
            "objective": training_objective(model.predict(Xtr_t).numpy().ravel(), y_pm, model.alpha_.numpy(),
                                             model.ny_points_.numpy(), gamma, lam)}
        print(f"n={n}", f"falkon_{name}", out[f"falkon_{name}"], flush=True)
    out["falkon_docs_over_skframe_fit_time"] = out["falkon_docs"]["fit_seconds"] / out["skframe"]["fit_seconds"]
    out["falkon_long_over_skframe_fit_time"] = out["falkon_long"]["fit_seconds"] / out["skframe"]["fit_seconds"]
    return out


def falkon_report(falkon, sizes, tune_rows, build):
    """The ``--falkon`` report: one comparison per n, versions and how Falkon was built."""
    import os

    import torch

    vers = dict(_setup.versions(), torch=torch.__version__, falkon=falkon.__version__,
                torch_threads=torch.get_num_threads())
    report = {"benchmark": "classification_falkon", "versions": vers, "falkon_build": build,
              "falkon_path": os.path.dirname(falkon.__file__), "protocol": __doc__.split("\n\n")[3].replace("\n", " "),
              "load_average_before": list(os.getloadavg()), "results": {}}
    for n in sizes:
        report["results"][f"synthetic_{n}"] = falkon_compare(n, falkon, tune_rows)
    report["load_average_after"] = list(os.getloadavg())
    return report


def main():
    # the search sees every training row (20 000 covers the three sets): a lam chosen on fewer rows is carried to a
    # refit on more, which the mean-loss lam does not rescale (SVC's C, a sum over the rows, does)
    ap = _setup.parser(__doc__, n_synth=20_000, tune_rows=20_000, repeats=3)
    ap.add_argument("--large", action="store_true", help="also the n = 10^6 fits (minutes; one run)")
    ap.add_argument("--only-large", action="store_true",
                    help="the n = 10^6 fits alone (default --out benchmarks/out/classification_large.json)")
    ap.add_argument("--out", default=None)
    ap.add_argument("--classes", default="2,10", help="with --only-large: the problems to fit (2 and/or 10)")
    ap.add_argument("--falkon", action="store_true",
                    help="the comparison with Falkon's LogisticFalkon alone (default --out "
                         "benchmarks/out/classification_falkon.json); skipped when falkon does not import")
    ap.add_argument("--falkon-sizes", default="20000,100000", help="with --falkon: the training sizes")
    ap.add_argument("--falkon-build", default="", help="with --falkon: how Falkon was installed (kept in the report)")
    ap.add_argument("--falkon-tune-rows", type=int, default=3000, help="with --falkon: rows of skframe's grid search")
    args = ap.parse_args()
    if args.falkon:
        falkon, why = import_falkon()
        if falkon is None:
            print(f"bench_classification.py --falkon: skipped, falkon does not import ({why})")
            return
        warnings.filterwarnings("ignore", category=UserWarning)
        sizes = [int(v) for v in args.falkon_sizes.split(",")]
        report = falkon_report(falkon, sizes, args.falkon_tune_rows, args.falkon_build)
        _setup.emit(report, args.out or "benchmarks/out/classification_falkon.json")
        return
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
              "load_average_after": list(__import__("os").getloadavg()),
              "protocol": __doc__.split("\n\n")[1].replace("\n", " "), "versions": _setup.versions()}
    if args.large:
        report["large"] = {"binary": large(1_000_000, 2), "ten_classes": large(1_000_000, 10)}
    _setup.emit(report, args.out or "benchmarks/out/classification.json")


if __name__ == "__main__":
    main()
