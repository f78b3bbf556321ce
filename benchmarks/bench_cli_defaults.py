"""What ``skframe fit`` does with a newcomer's file and no tuning flag: ``--scale auto`` and ``--task auto``.

Prints ONE JSON object (and writes ``benchmarks/out/cli_defaults.json``):

* ``scaling``: a CSV of ``--n`` rows (Friedman's function of eight uniform features, the
  features then multiplied by 1, 1000, 0.01, 50, 1, 20000, 0.1 and 5), fitted with ``--scale
  none``, ``standard`` and ``auto`` and the default kernel, sketch and λ: training and test R²,
  the sketch size m and the rank of the sketched kernel matrix;
* ``alike_spreads``: the same features left in [0, 1] with ``--kernel-param gamma=2`` (a
  bandwidth chosen for the raw features): test MSE with ``--scale none``, ``standard`` and
  ``auto``;
* ``multilabel``: Bibtex (159 labels, ``$SKFRAME_DATA/bibtex``) fitted with no flag (``--task
  auto``: the structured multi-label task) and with ``--task regression`` (159 outputs of
  kernel ridge, thresholded at 0.5 for the label metrics), and the structured task with ``--scale
  standard``: example-based F1, Hamming loss, R² and fit seconds.

    python benchmarks/bench_cli_defaults.py [--n 5000] [--n-test 2000] [--parts scaling,alike,multilabel]
"""

import tempfile
from pathlib import Path

import _setup  # noqa: F401  (runtime settings and sys.path, before NumPy)
import numpy as np
from _setup import OUT, emit, parser, versions

SCALES = np.array([1, 1000, 0.01, 50, 1, 20000, 0.1, 5])


def _friedman(n, seed):
    rng = np.random.default_rng(seed)
    Z = rng.uniform(size=(n, 8))
    y = 10 * np.sin(np.pi * Z[:, 0] * Z[:, 1]) + 20 * (Z[:, 2] - 0.5) ** 2 + 10 * Z[:, 3] + 5 * Z[:, 4]
    return Z, y + rng.normal(size=n)


def _write(path, X, y):
    header = ",".join([f"f{j}" for j in range(X.shape[1])] + ["y"])
    np.savetxt(path, np.c_[X, y], delimiter=",", fmt="%.10g", header=header, comments="")
    return str(path)


def _fit(**options):
    from skframe.cli._options import FitOptions
    from skframe.cli.fit import run_fit

    return run_fit(FitOptions(json=True, **options))


def _summary(rep):
    s = rep["sketch"] or {}
    return {"r2": rep["metrics"].get("r2"), "mse": rep["metrics"].get("mse"), "m": s.get("m"), "rank": s.get("rank"),
            "scale": rep["data"]["scale"], "fit_seconds": rep["fit_seconds"]}


def scaling(n, n_test, where):
    Z, y = _friedman(n + n_test, 1)
    train = _write(where / "wide.csv", Z[:n] * SCALES, y[:n])
    test = _write(where / "wide-test.csv", Z[n:] * SCALES, y[n:])
    out = {"n": n, "n_test": n_test, "feature_scales": SCALES.tolist()}
    for scale in ("none", "standard", "auto"):
        on_train = _summary(_fit(train=train, scale=scale))
        on_test = _summary(_fit(train=train, test=test, scale=scale))
        out[scale] = {"train_r2": on_train["r2"], "test_r2": on_test["r2"], "m": on_train["m"],
                      "rank": on_train["rank"], "chosen": on_train["scale"]}
    return out


def alike(n, n_test, where):
    Z, y = _friedman(n + n_test, 2)
    train, test = _write(where / "unit.csv", Z[:n], y[:n]), _write(where / "unit-test.csv", Z[n:], y[n:])
    out = {"n": n, "n_test": n_test, "kernel_params": {"gamma": 2}}
    for scale in ("none", "standard", "auto"):
        rep = _summary(_fit(train=train, test=test, scale=scale, kernel_param=["gamma=2"]))
        out[scale] = {"test_mse": rep["mse"], "test_r2": rep["r2"], "chosen": rep["scale"]}
    return out


def multilabel():
    import os

    from skframe.datasets import load_dataset
    from skframe.metrics import example_based_f1, hamming_loss
    from skframe.persistence import load_bundle

    folder = Path(os.environ.get("SKFRAME_DATA", "")) / "bibtex"
    train, test = str(folder / "bibtex-train.arff"), str(folder / "bibtex-test.arff")
    out = {}
    for name, options in (("auto", {}), ("structured_scale_standard", {"task": "structured", "scale": "standard"})):
        rep = _fit(train=train, test=test, targets=159, **options)
        out[name] = {"task": rep["task"], "example_based_f1": rep["metrics"]["example_based_f1"],
                     "hamming_loss": rep["metrics"]["hamming_loss"], "scale": rep["data"]["scale"],
                     "fit_seconds": rep["fit_seconds"]}
    with tempfile.TemporaryDirectory() as tmp:
        model_path = str(Path(tmp) / "reg.skf")
        rep = _fit(train=train, test=test, targets=159, task="regression", model_out=model_path)
        model, extra = load_bundle(model_path)
        te = load_dataset(test, targets=159)
        P = (np.asarray(model.predict(te.X)) >= 0.5).astype(float)
    out["regression"] = {"task": rep["task"], "r2": rep["metrics"]["r2"], "example_based_f1_at_0.5":
                         float(example_based_f1(te.Y, P)), "hamming_loss_at_0.5": float(hamming_loss(te.Y, P)),
                         "fit_seconds": rep["fit_seconds"]}
    return out


def main():
    ap = parser(__doc__, n=5000, n_test=2000, parts="scaling,alike,multilabel")
    args = ap.parse_args()
    parts = args.parts.split(",")
    report = {"versions": versions()}
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        if "scaling" in parts:
            report["scaling"] = scaling(args.n, args.n_test, where)
        if "alike" in parts:
            report["alike_spreads"] = alike(args.n, args.n_test, where)
    if "multilabel" in parts:
        report["multilabel"] = multilabel()
    emit(report, OUT / "cli_defaults.json")


if __name__ == "__main__":
    main()
