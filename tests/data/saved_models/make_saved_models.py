"""Model files saved by skframe before its modules moved into subpackages (kept to test that they still load).

Run from the repository root: ``python tests/data/saved_models/make_saved_models.py``. Each model is fitted on
small synthetic data drawn with a fixed seed; the predictions on ``X_new`` are stored beside the model files
(``expected.npz``) so that the test compares a loaded model's predictions with the ones made when it was saved.
"""

from pathlib import Path

import numpy as np

import skframe
from skframe import SketchedKernelRidge
from skframe.models import JointQuantileRegressor, OutputKernelRegressor, SketchedKernelClassifier, SketchedKernelMachine

HERE = Path(__file__).resolve().parent


def main():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(80, 3))
    y = np.sin(3 * X[:, 0]) + X[:, 1] + 0.05 * rng.normal(size=80)
    Y = np.column_stack([y, X[:, 2] ** 2])
    labels = np.where(y > np.median(y), 1, -1)
    X_new = rng.uniform(size=(7, 3))
    models = {
        "ridge_psr": SketchedKernelRidge(kernel_params={"gamma": 2.0}, sketch="psr", sketch_size=10, lam=1e-3,
                                         random_state=0).fit(X, Y),
        "machine_huber": SketchedKernelMachine(loss="huber", kernel_params={"gamma": 2.0}, sketch="subsample",
                                               sketch_size=12, lam=1e-3, random_state=0).fit(X, y),
        "classifier_hinge": SketchedKernelClassifier(kernel_params={"gamma": 2.0}, sketch_size=12, lam=1e-3,
                                                     random_state=0).fit(X, labels),
        "quantile": JointQuantileRegressor(quantiles=[0.25, 0.5, 0.75], kernel_params={"gamma": 2.0},
                                           sketch_size=12, lam=1e-3, random_state=0).fit(X, y),
        "okr": OutputKernelRegressor(input_kernel_params={"gamma": 2.0}, input_sketch="subsample",
                                     input_sketch_size=12, output_sketch="subsample", output_sketch_size=8,
                                     lam=1e-3, random_state=0).fit(X, Y),
    }
    expected = {}
    for name, model in models.items():
        skframe.save(model, HERE / f"{name}.skf")
        expected[name] = np.asarray(model.predict(X_new), dtype=np.float64)
    np.savez(HERE / "expected.npz", X_new=X_new, **expected)


if __name__ == "__main__":
    main()
