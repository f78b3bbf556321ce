"""The newton solver's steps on the logistic and multinomial losses: the Hessian formed (direct) or applied by
preconditioned conjugate gradients (Newton–CG), on the same kernel features.

Data: make_classification (20 features, 10 informative, 5 % flipped labels, standardised) with 2 or 10 classes;
features: Nyström features of the Gaussian kernel (gamma = 1 / 40) on m centres drawn uniformly,
``Z = K_nm K_mm^{-1/2}`` (formed once per (n, m), not timed); lam = 1e-4; the solver to its default stop (relative
duality gap 1e-8). Binary problems use the logistic loss, 10 classes the multinomial loss. A ``direct`` step
with r K above the solver's ``max_dense`` (3 000) is not run (its (r K)^2 Hessian is not formed). The time of
the solve only; the machine's load average is recorded beside each run (a shared machine). ``cg-identity``:
the CG steps without their preconditioner (at most 50 CG iterations a step, the solver's ``max_cg``).

Usage: ``python benchmarks/bench_newton_cg.py --cases 20000:1000:2,20000:1000:10 --steps direct,cg``; results
are merged into ``--out`` (one key per case and step).
"""

import os
import time

import _setup  # runtime settings and sys.path, before NumPy; the measuring helpers
import numpy as np
from sklearn.datasets import make_classification
from sklearn.preprocessing import StandardScaler

from skframe.compute.plan_newton import NEWTON_MAX_DENSE, choose_newton_step
from skframe.contract.problems import ArrayProblem
from skframe.contract.registry import get_loss, get_solver
from skframe_solvers import newton as newton_module
from skframe_solvers.newton_cg import SubsampledPreconditioner


class _Identity:
    """No preconditioner (``--steps cg-identity``)."""

    def __init__(self, *args):
        pass

    def __call__(self, R):
        return R


def _features(n, m, classes):
    X, y = make_classification(n_samples=n, n_features=20, n_informative=10, n_classes=classes, flip_y=0.05,
                               random_state=0)
    X = StandardScaler().fit_transform(X)
    C = X[np.random.default_rng(0).choice(n, size=m, replace=False)]

    def gauss(A, B):
        d2 = np.sum(A * A, 1)[:, None] + np.sum(B * B, 1)[None] - 2 * A @ B.T
        return np.exp(-np.maximum(d2, 0) / 40)

    Z = _setup.nystrom_features(X[:n], C, gauss)
    if classes == 2:
        return Z, np.where(y == 1, 1.0, -1.0)[:, None]
    Y = -np.ones((n, classes))
    Y[np.arange(n), y] = 1.0
    return Z, Y


def main():
    ap = _setup.parser(__doc__, cases="20000:1000:2", steps="direct,cg", lam=1e-4)
    ap.add_argument("--out", default="benchmarks/out/newton_cg.json")
    args = ap.parse_args()
    previous = _setup.previous_report(args.out) or {}
    results = dict(previous.get("results", {}))
    for case in args.cases.split(","):
        n, m, classes = (int(v) for v in case.split(":"))
        t0 = time.perf_counter()
        Z, Y = _features(n, m, classes)
        feature_seconds = time.perf_counter() - t0
        k = Y.shape[1]
        loss = get_loss("logistic" if classes == 2 else "multinomial")
        for step in args.steps.split(","):
            key = f"n{n}-m{m}-K{classes}-{step}"
            if step == "direct" and Z.shape[1] * k > NEWTON_MAX_DENSE:
                results[key] = {"skipped": f"r K = {Z.shape[1] * k} > max_dense = {NEWTON_MAX_DENSE}"}
                print(key, results[key], flush=True)
                continue
            load = os.getloadavg()[0]
            t0 = time.perf_counter()
            solver = get_solver("newton", step="cg" if step == "cg-identity" else step)
            if step == "cg-identity":  # conjugate gradients without the preconditioner, for its share of the gain
                newton_module.SubsampledPreconditioner = _Identity
            try:
                res = solver.solve(ArrayProblem(Z, Y), loss, args.lam)
            finally:
                newton_module.SubsampledPreconditioner = SubsampledPreconditioner
            seconds = time.perf_counter() - t0
            info = res.info
            results[key] = {"solve_seconds": round(seconds, 2), "relative_gap": info["relative_gap"],
                            "primal": info["primal"], "newton_steps": info["newton_steps"],
                            "passes": info["passes"], "cg_iterations": info.get("cg_iterations"),
                            "r": int(Z.shape[1]), "feature_seconds": round(feature_seconds, 2),
                            "load_average_before": round(load, 2), "load_average_after": round(os.getloadavg()[0], 2),
                            "auto_rule": "{}: {}".format(*choose_newton_step(n, Z.shape[1], k))}
            print(key, results[key], flush=True)
            _setup.emit({"benchmark": "newton_cg", "lam": args.lam, "cores": os.cpu_count(), "results": results,
                         "versions": _setup.versions()}, args.out)


if __name__ == "__main__":
    main()
