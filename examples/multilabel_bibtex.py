"""Multi-label classification on Bibtex with IOKR and its sketched variant SISOKR.

    python examples/multilabel_bibtex.py [--data-dir DIR]

Bibtex (Katakis, Tsoumakas, Vlahavas, *Multilabel text classification for automated tag
suggestion*, ECML PKDD Discovery Challenge 2008) is the Mulan data set: 1 836 binary
inputs, 159 labels. The models are those of El Ahmad et al., *Sketch In, Sketch Out:
Accelerating both Learning and Inference for Structured Prediction with Kernels*,
AISTATS 2024.

The data files are read from the data directory (``--data-dir``, else ``$SKFRAME_DATA``,
else ``~/skframe_data``): ``bibtex/bibtex-train.arff`` and ``bibtex/bibtex-test.arff``
(see docs/data.md). When they are missing the script prints where to put them and where
to download them, and exits with status 3.
"""

import argparse
import sys
import time

from skframe.core.preprocessing import FeatureScaler
from skframe.datasets import load_bibtex
from skframe.exceptions import SkframeError
from skframe.metrics import example_based_f1, hamming_loss
from skframe.models import OutputKernelRegressor

#: Exit status when the data files are missing or corrupt.
EXIT_NO_DATA = 3


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=None, help="data directory holding bibtex/ (default: $SKFRAME_DATA)")
    args = ap.parse_args(argv)
    try:
        ds = load_bibtex(data_home=args.data_dir)
    except SkframeError as exc:
        print(f"multilabel_bibtex.py: {exc}", file=sys.stderr)
        return EXIT_NO_DATA
    scaler = FeatureScaler("standard").fit(ds.X_train)  # sparse inputs: divided by the std, kept sparse
    X, X_te = scaler.transform(ds.X_train), scaler.transform(ds.X_test)
    n = X.shape[0]
    models = {
        "IOKR": dict(lam=1e-5),
        "SISOKR": dict(lam=1e-5, input_sketch="subsample", input_sketch_size=min(2250, n),
                       output_sketch="psg", output_sketch_size=min(200, n),
                       output_sketch_params={"p": min(1.0, 20 / n)}),
    }
    for name, cfg in models.items():
        model = OutputKernelRegressor("gaussian", input_kernel_params={"gamma": 5e-5}, output_kernel="gaussian",
                                      output_kernel_params={"gamma": 5e-5}, random_state=0, **cfg)
        t0 = time.perf_counter()
        model.fit(X, ds.y_train)
        fit_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        Y_pred = model.predict(X_te)
        pred_s = time.perf_counter() - t0
        print(f"{name:<8} F1 {100 * example_based_f1(ds.y_test, Y_pred):.2f}  "
              f"Hamming {hamming_loss(ds.y_test, Y_pred):.4f}  fit {fit_s:.2f} s  predict {pred_s:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
