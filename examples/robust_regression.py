"""Robust regression with Lipschitz losses: square vs κ-Huber vs ε-SVR on data with outliers.

    python examples/robust_regression.py [--n 10000]
"""

import argparse
import time

from skframe.datasets import make_friedman_outliers
from skframe.metrics import relative_mse
from skframe.models import SketchedKernelMachine


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000)
    args = ap.parse_args(argv)
    X, y = make_friedman_outliers(args.n, n_outliers=args.n // 100, random_state=0)
    X_te, y_te = make_friedman_outliers(args.n, n_outliers=args.n // 100, random_state=1)
    common = dict(kernel="gaussian", kernel_params={"gamma": 0.1}, sketch="psr", sketch_size=100,
                  sketch_params={"p": 50 / args.n}, lam=1e-7, random_state=0)
    losses = [("square", {}, None), ("huber", {"kappa": 100.0}, None),
              ("epsilon-svr", {"epsilon": 0.5}, None)]
    print(f"{'loss':<13}{'solver':>8}{'rel. MSE':>10}{'fit s':>8}  stop reason")
    for loss, params, solver_params in losses:
        model = SketchedKernelMachine(loss=loss, loss_params=params, solver_params=solver_params, **common)
        t0 = time.perf_counter()
        model.fit(X, y)
        seconds = time.perf_counter() - t0
        solver = type(model.solver_).__name__.replace("Solver", "").lower() if hasattr(model, "solver_") else ""
        print(f"{loss:<13}{solver:>8}{relative_mse(y_te, model.predict(X_te)):>10.4f}{seconds:>8.3f}  "
              f"{model.stop_reason_}")


if __name__ == "__main__":
    main()
