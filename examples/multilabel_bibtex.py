"""Multi-label classification on Bibtex with IOKR and its sketched variants (seed 003).

    python examples/multilabel_bibtex.py [--data-dir ../shared/data]

Bibtex (Katakis et al., 2008) is the Mulan data set: 1 836 binary inputs, 159 labels.
"""

import argparse
import time
from pathlib import Path

from skframe.datasets import FeatureScaler, load_dataset
from skframe.metrics import example_based_f1, hamming_loss
from skframe.models import OutputKernelRegressor

ROOT = Path(__file__).resolve().parents[1]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data"))
    args = ap.parse_args(argv)
    d = Path(args.data_dir) / "bibtex"
    tr = load_dataset(d / "bibtex-train.arff", targets=159)
    te = load_dataset(d / "bibtex-test.arff", targets=159)
    scaler = FeatureScaler("standard").fit(tr.X)  # sparse inputs: divided by the std, kept sparse
    X, X_te = scaler.transform(tr.X), scaler.transform(te.X)
    n = X.shape[0]
    models = {
        "IOKR": dict(lam=1e-5),
        "SISOKR": dict(lam=1e-5, input_sketch="subsample", input_sketch_size=2250,
                       output_sketch="psg", output_sketch_size=200, output_sketch_params={"p": 20 / n}),
    }
    for name, cfg in models.items():
        model = OutputKernelRegressor("gaussian", input_kernel_params={"gamma": 5e-5}, output_kernel="gaussian",
                                      output_kernel_params={"gamma": 5e-5}, random_state=0, **cfg)
        t0 = time.perf_counter()
        model.fit(X, tr.Y)
        fit_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        Y_pred = model.predict(X_te)
        pred_s = time.perf_counter() - t0
        print(f"{name:<8} F1 {100 * example_based_f1(te.Y, Y_pred):.2f}  Hamming {hamming_loss(te.Y, Y_pred):.4f}  "
              f"fit {fit_s:.2f} s  predict {pred_s:.2f} s")


if __name__ == "__main__":
    main()
