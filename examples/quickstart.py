"""Quick start: sketched kernel ridge regression on the embedded Friedman data.

Compares the exact model with several sketches (accuracy and fit time), saves the
best sketched model and loads it back.

    python examples/quickstart.py [--n 10000]
"""

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

import skframe
from skframe import SketchedKernelRidge
from skframe.datasets import load_default, make_friedman_outliers
from skframe.metrics import relative_mse


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000, help="training and test points (10 000: the embedded set)")
    args = ap.parse_args(argv)
    if args.n == 10_000:
        ds = load_default()
        X, y, X_te, y_te = ds.X_train, ds.y_train, ds.X_test, ds.y_test
    else:
        X, y = make_friedman_outliers(args.n, n_outliers=args.n // 100, random_state=0)
        X_te, y_te = make_friedman_outliers(args.n, n_outliers=args.n // 100, random_state=1)
    n = X.shape[0]
    configs = [
        ("exact", dict(sketch=None)) if n <= 4000 else None,
        ("Nystrom", dict(sketch="subsample")),
        ("p-SR p=20/n", dict(sketch="psr", sketch_params={"p": 20 / n})),
        ("p-SG p=20/n", dict(sketch="psg", sketch_params={"p": 20 / n})),
        ("Gaussian", dict(sketch="gaussian")),
        ("RFF", dict(sketch="rff")),
    ]
    best = None
    print(f"{'model':<14}{'rel. MSE':>10}{'fit s':>9}{'s_prime':>9}")
    for label, cfg in filter(None, configs):
        model = SketchedKernelRidge(kernel="gaussian", kernel_params={"gamma": 0.1}, sketch_size=100,
                                    lam=1e-7, random_state=0, **cfg)
        t0 = time.perf_counter()
        model.fit(X, y)
        seconds = time.perf_counter() - t0
        err = relative_mse(y_te, model.predict(X_te))
        print(f"{label:<14}{err:>10.4f}{seconds:>9.3f}{model.sketch_info_.get('s_prime', 0):>9}")
        if cfg.get("sketch") and (best is None or err < best[0]):
            best = (err, label, model)
    path = Path(tempfile.mkdtemp()) / "model.skf"
    skframe.save(best[2], path)
    loaded = skframe.load(path)
    assert np.array_equal(loaded.predict(X_te[:5]), best[2].predict(X_te[:5]))
    print(f"saved and reloaded the best sketched model ({best[1]}) from {path}")


if __name__ == "__main__":
    main()
