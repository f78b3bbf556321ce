"""Solvers side by side: dual-cd, ADMM, Adam and L-BFGS on every built-in loss (Friedman with outliers).

For each λ of ``--lam`` (default 1e-4, where coordinate ascent is well conditioned, and
1e-7, the paper's value, where it is not), each loss (κ-Huber, ε-SVR, ε-ridge, pinball
τ = 0.5, hinge on the sign of y - median) and each solver that applies — ``dual-cd`` as
the models use it (``method="auto"``: coordinate epochs, Newton steps or the ADMM
splitting, reported), ``dual-cd`` forced to coordinate epochs, ``admm``, Adam, and L-BFGS
for the smooth losses — fits
:class:`skframe.models.SketchedKernelMachine` (or the classifier for the hinge loss) on the
same p-SR sketch (same seed, hence the same sketched features) and reports: the epochs or
iterations run, whether the relative duality gap reached ``--gap`` (1e-4) and after how many
epochs (coordinate epochs and Newton steps check it every step, ADMM every 10 iterations; Adam
and L-BFGS report the gap of their final point, built from its gradient), the solve time and
the test error (relative MSE, pinball loss or
error rate). Prints ONE JSON object, then the markdown table for benchmarks/README.md on
stderr.

    python benchmarks/bench_solvers.py [--n 2000] [--s 100] [--lam 1e-4,1e-7] [--adam-epochs 100]
"""

import sys
import warnings

import _setup  # runtime settings and sys.path, before NumPy; the measuring helpers
import numpy as np
from sklearn.exceptions import ConvergenceWarning

from skframe.datasets.synthetic import make_friedman_outliers
from skframe.metrics import pinball_loss, relative_mse
from skframe.models import SketchedKernelClassifier, SketchedKernelMachine

LOSSES = {
    "huber": {"kappa": 1.0},
    "epsilon-svr": {"epsilon": 0.5},
    "epsilon-ridge": {"epsilon": 0.5},
    "pinball": {"quantiles": [0.5]},
    "hinge": {},
}
SMOOTH = {"huber", "epsilon-ridge"}


def _solvers(loss, args):
    out = [("dual-cd", {"tol": args.gap}),
           ("dual-cd", {"tol": args.gap, "method": "epochs", "max_epochs": args.max_epochs}),
           ("admm", {"tol": args.gap})]
    out.append(("adam", {"epochs": args.adam_epochs, "batch_size": args.batch_size, "learning_rate": 0.05,
                         "tol": None}))
    if loss in SMOOTH:
        out.append(("lbfgs", {"tol": 1e-10, "max_iter": args.max_epochs}))
    return out


def _error(loss, model, Xte, yte, median):
    if loss == "hinge":
        return "error rate", float(np.mean(model.predict(Xte) != np.where(yte > median, 1, -1)))
    if loss == "pinball":
        return "pinball", float(pinball_loss(yte, model.predict(Xte)[:, None], [0.5]))
    return "relative MSE", float(relative_mse(yte, model.predict(Xte)))


def run(args):
    Xtr, ytr = make_friedman_outliers(args.n, random_state=0)
    Xte, yte = make_friedman_outliers(args.n_test, random_state=1)
    median = float(np.median(ytr))
    rows = []
    cases = [(lam, loss, s) for lam in args.lam for loss in LOSSES for s in _solvers(loss, args)]
    for lam, loss, (solver, sp) in cases:
        lp = LOSSES[loss]
        common = dict(kernel_params={"gamma": args.gamma}, sketch="psr", sketch_size=args.s,
                      sketch_params={"p": args.p_times_n / args.n}, loss=loss, loss_params=lp or None,
                      solver=solver, solver_params=sp, lam=lam, random_state=0)
        if loss == "hinge":
            model, y = SketchedKernelClassifier(**common), np.where(ytr > median, 1, -1)
        else:
            model, y = SketchedKernelMachine(**common), ytr
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            _, fit_seconds = _setup.timed(model.fit, Xtr, y)
        info = getattr(model, "solver_info_", {}) or {}
        gaps = info.get("gap_history")
        reached = None
        if gaps:
            hits = [i + 1 for i, g in enumerate(gaps) if g <= args.gap]
            step = sp.get("check_every", 10) if (solver == "admm" or info.get("method") == "admm") else 1
            reached = hits[0] * step if hits else None
        elif info.get("relative_gap") is not None and info["relative_gap"] <= args.gap:
            reached = model.n_iter_
        metric, err = _error(loss, model, Xte, yte, median)
        rows.append({"lam": lam, "loss": loss, "loss_params": lp, "solver": solver, "solver_params": sp,
                     "method": info.get("method"),
                     "epochs_or_iterations": model.n_iter_, "epochs_to_gap": reached,
                     "final_relative_gap": info.get("relative_gap"), "primal": info.get("primal"),
                     "dual": info.get("dual"), "solve_seconds": float(model.solve_seconds_),
                     "fit_seconds": fit_seconds, "metric": metric, "test_error": err,
                     "convergence_warning": any(issubclass(w.category, ConvergenceWarning) for w in caught),
                     "stop_reason": model.stop_reason_})
        print(f"{lam:g} {loss:14s} {solver:8s} {info.get('method')} {model.n_iter_:5d} gap={info.get('relative_gap')} "
              f"{model.solve_seconds_:.3f}s {metric}={err:.4f}", file=sys.stderr, flush=True)
    return rows


def table(rows, gap):
    lines = [f"| λ | loss | solver | epochs / iterations | epochs to gap {gap:g} | final relative gap | solve s | "
             "test error |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        g = r["final_relative_gap"]
        name = r["solver"] + (f" ({r['method']})" if r.get("method") else "")
        lines.append(f"| {r['lam']:g} | {r['loss']} | {name} | {r['epochs_or_iterations']} | "
                     f"{r['epochs_to_gap'] if r['epochs_to_gap'] is not None else 'not reached'} | "
                     f"{'—' if g is None else f'{g:.1e}'} | {r['solve_seconds']:.3f} | "
                     f"{r['metric']} {r['test_error']:.4f} |")
    return "\n".join(lines)


def main(argv=None):
    ap = _setup.parser(__doc__, n=2000, n_test=2000, s=100, gamma=0.1, max_epochs=1000, adam_epochs=100,
                       batch_size=256)
    ap.add_argument("--p-times-n", type=float, default=50.0, help="p-SR density times n (p = 50/n)")
    ap.add_argument("--lam", default="1e-4,1e-7", help="comma-separated λ values")
    ap.add_argument("--gap", type=float, default=1e-4, help="relative duality gap target")
    args = ap.parse_args(argv)
    args.lam = [float(v) for v in args.lam.split(",")]
    # warm-up: numba compilation, not timed
    SketchedKernelMachine(kernel_params={"gamma": args.gamma}, sketch_size=10, loss="pinball",
                          random_state=0).fit(*make_friedman_outliers(200, random_state=2))
    SketchedKernelMachine(kernel_params={"gamma": args.gamma}, sketch_size=10, loss="huber",
                          random_state=0).fit(*make_friedman_outliers(200, random_state=2))
    rows = run(args)
    report = {"benchmark": "solvers: dual-cd, ADMM, Adam and L-BFGS, Friedman with outliers",
              "n_train": args.n, "n_test": args.n_test, "s": args.s, "p": args.p_times_n / args.n, "lam": args.lam,
              "gamma": args.gamma, "gap_target": args.gap, "results": rows, "versions": _setup.versions()}
    _setup.emit(report)
    print(table(rows, args.gap), file=sys.stderr)


if __name__ == "__main__":
    main()
