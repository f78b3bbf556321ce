"""Model files saved by an earlier layout of skframe's modules still load and predict the same."""

from pathlib import Path

import numpy as np
import pytest

import skframe

HERE = Path(__file__).resolve().parents[1] / "data" / "saved_models"
NAMES = ["ridge_psr", "machine_huber", "classifier_hinge", "quantile", "okr"]


@pytest.mark.parametrize("name", NAMES)
def test_saved_model_loads_and_predicts_as_when_saved(name):
    expected = np.load(HERE / "expected.npz")
    model = skframe.load(HERE / f"{name}.skf")
    np.testing.assert_allclose(model.predict(expected["X_new"]), expected[name], rtol=1e-10, atol=1e-12)
