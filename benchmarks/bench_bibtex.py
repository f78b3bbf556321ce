"""Bibtex multi-label benchmark of IOKR / SIOKR / ISOKR / SISOKR.

Reproduces Tables 2-3 of El Ahmad, Brogat-Motte, Laforgue and d'Alché-Buc, "Sketch In, Sketch Out:
Accelerating both Learning and Inference for Structured Prediction with Kernels" (AISTATS 2024).

The paper's hyper-parameters: standardised inputs, Gaussian kernels with
gamma = 1 / (2 sigma^2), candidates = distinct training label sets, example-based F1.

Usage::

    python benchmarks/bench_bibtex.py [--data DIR] [--models IOKR,SISOKR] [--repeats 1]

Prints one JSON document with machine info, and per model F1, Hamming loss, fit and
predict seconds (median over repeats) beside the reference figures.
"""

from __future__ import annotations

import _setup  # runtime settings, sys.path and the data directory, before NumPy; the measuring helpers
import numpy as np

from skframe.core.preprocessing import FeatureScaler
from skframe.datasets import load_bibtex
from skframe.metrics import example_based_f1, hamming_loss
from skframe.models import OutputKernelRegressor

GAMMA_IN = 1.0 / (2 * 1e4)
P_FRAC = 20  # p = 20 / n for p-SG

# name -> (params, reference F1 paper, ref-here F1 / fit s / predict s)
MODELS = {
    "IOKR": (dict(lam=1e-5, sigma2_out=1.0), 44.9, (44.87, 6.05, 2.28)),
    "SIOKR": (dict(lam=1e-6, sigma2_out=1e7, input_sketch="subsample", input_sketch_size=2250), 44.7,
              (44.57, 1.73, 1.60)),
    "ISOKR": (dict(lam=1e-5, sigma2_out=1e6, output_sketch="psg", output_sketch_size=200), 44.8, (44.86, 5.60, 0.77)),
    "SISOKR": (dict(lam=1e-5, sigma2_out=1e4, input_sketch="subsample", input_sketch_size=2250,
                    output_sketch="psg", output_sketch_size=200), 44.1, (44.12, 2.42, 0.48)),
}


def build(name, n, seed):
    params, _, _ = MODELS[name]
    params = dict(params)
    s2 = params.pop("sigma2_out")
    kw = dict(input_kernel="gaussian", input_kernel_params={"gamma": GAMMA_IN},
              output_kernel="gaussian", output_kernel_params={"gamma": 1.0 / (2 * s2)}, random_state=seed)
    if params.get("output_sketch") == "psg":
        kw["output_sketch_params"] = {"p": P_FRAC / n}
    kw.update(params)
    return OutputKernelRegressor(**kw)


def main(argv=None):
    ap = _setup.parser(__doc__, models=",".join(MODELS), repeats=1, seed=0)
    ap.add_argument("--data", default=None, help="data directory holding bibtex/ (default: $SKFRAME_DATA)")
    args = ap.parse_args(argv)
    ds = _setup.load_or_exit(load_bibtex, data_home=args.data)
    scaler = FeatureScaler("standard").fit(ds.X_train)
    Xtr, Xte = scaler.transform(ds.X_train), scaler.transform(ds.X_test)
    Ytr, Yte = np.asarray(ds.y_train), np.asarray(ds.y_test)
    n = Xtr.shape[0]
    results = {}
    for name in args.models.split(","):
        fits, preds, f1s, hls = [], [], [], []
        for r in range(args.repeats):
            model = build(name, n, args.seed + r)
            fits.append(_setup.timed(model.fit, Xtr, Ytr)[1])
            Yp, seconds = _setup.timed(model.predict, Xte)
            preds.append(seconds)
            f1s.append(100 * example_based_f1(Yte, Yp))
            hls.append(hamming_loss(Yte, Yp))
        _, paper, (ref_f1, ref_fit, ref_pred) = MODELS[name]
        results[name] = {
            "f1": float(np.mean(f1s)), "f1_std": float(np.std(f1s)), "hamming": float(np.mean(hls)),
            "fit_s": float(np.median(fits)), "predict_s": float(np.median(preds)),
            "paper_f1": paper, "ref_here": {"f1": ref_f1, "fit_s": ref_fit, "predict_s": ref_pred},
            "f1_within_0.3_of_ref": bool(abs(np.mean(f1s) - ref_f1) <= 0.3),
            "sketch_info": model.sketch_info_,
        }
    out = {
        "benchmark": "bibtex_structured",
        "n_train": int(n), "n_test": int(Xte.shape[0]), "n_candidates": int(model.candidates_.shape[0]),
        "repeats": args.repeats,
        "versions": _setup.versions(),
        "results": results,
    }
    _setup.emit(out, indent=2, default=str)


if __name__ == "__main__":
    main()
