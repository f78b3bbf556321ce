"""5-fold cross-validation of the ε-SVR (or κ-Huber) hyper-parameters on the embedded Friedman training set.

Grid search (scikit-learn's ``GridSearchCV``, MSE, 5 shuffled folds) of the loss scale
(ε or κ), λ and the Gaussian γ for the default sketch (p-SR, s = 200, p = 20/n). The test
set is used once, for the chosen model. This is how the data set's suggested ε = 3 is
checked. Prints ONE JSON object (the 12 best settings and the chosen one).

    python benchmarks/bench_friedman_cv.py [--loss epsilon-svr] [--scales 0.5,1,2,3,4,6]
        [--lams 1e-8,1e-7,1e-6,1e-5,1e-4] [--gammas 0.1]
"""

import warnings

import _setup  # runtime settings and sys.path, before NumPy; the measuring helpers
import numpy as np
from sklearn.model_selection import GridSearchCV, KFold

from skframe.datasets import load_default
from skframe.metrics import relative_mse
from skframe.models import SketchedKernelMachine

SCALE = {"epsilon-svr": "epsilon", "huber": "kappa", "epsilon-ridge": "epsilon"}


def _floats(text):
    return [float(v) for v in text.split(",")]


def main(argv=None):
    ap = _setup.parser(__doc__, lams="1e-8,1e-7,1e-6,1e-5,1e-4", gammas="0.1")
    ap.add_argument("--loss", default="epsilon-svr", choices=sorted(SCALE))
    ap.add_argument("--scales", default="0.5,1,2,3,4,6", help="values of epsilon (or kappa)")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")  # ConvergenceWarning of extreme grid points is part of the answer
    data = load_default()
    key = SCALE[args.loss]
    grid = {"lam": _floats(args.lams), "loss_params": [{key: v} for v in _floats(args.scales)],
            "kernel_params": [{"gamma": g} for g in _floats(args.gammas)]}
    model = SketchedKernelMachine(kernel="gaussian", loss=args.loss, sketch="psr", random_state=0)
    search = GridSearchCV(model, grid, cv=KFold(5, shuffle=True, random_state=0), scoring="neg_mean_squared_error")
    _, seconds = _setup.timed(search.fit, data.X_train, data.y_train)
    res = search.cv_results_
    best = [{"params": res["params"][i], "cv_mse": float(-res["mean_test_score"][i]),
             "cv_mse_std": float(res["std_test_score"][i])} for i in np.argsort(res["rank_test_score"])[:12]]
    _setup.emit({
        "benchmark": f"5-fold CV of {args.loss} on the embedded Friedman training set (p-SR, s = 200, p = 20/n)",
        "best": best, "chosen": search.best_params_,
        "test_relative_mse_of_chosen": float(relative_mse(data.y_test, search.predict(data.X_test))),
        "seconds": seconds, "versions": _setup.versions(),
    })


if __name__ == "__main__":
    main()
