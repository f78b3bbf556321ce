"""Learned length-scales: the landmarks grown with the fit's effective dimension, and the held-out look that
keeps one shared length-scale where the learned ones do not predict held-out rows better."""

import numpy as np
import pytest

from skframe import SketchedKernelRidge
from skframe.models import _ard


@pytest.fixture
def few_landmarks(monkeypatch):
    """Start at 20 landmarks, grow up to 80 (small data stand in for the defaults' 200 and 800)."""
    monkeypatch.setattr(_ard, "ARD_LANDMARKS", 20)
    monkeypatch.setattr(_ard, "ARD_MAX_LANDMARKS", 80)


def _short_scale_data(n=300):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(n, 3))
    return X, np.sin(15 * X[:, 0]) + 0.05 * rng.normal(size=n)  # inputs 1 and 2 are irrelevant


def test_landmarks_grow_until_they_no_longer_limit_a_short_length_scale(few_landmarks, monkeypatch):
    X, y = _short_scale_data()
    ell, info = _ard.learn_scales(X, y, np.random.default_rng(1))
    steps = info["landmark_steps"]
    assert [s["landmarks"] for s in steps] == [20, 40, 80] and info["landmarks"] == 80
    assert steps[0]["effective_dimension"] > _ard.ARD_SATURATION * 20
    assert "grown from 20" in info["reason"]
    monkeypatch.setattr(_ard, "ARD_MAX_LANDMARKS", 20)  # the earlier rule: the first landmarks held fixed
    _, fixed = _ard.learn_scales(X, y, np.random.default_rng(1))
    assert [s["landmarks"] for s in fixed["landmark_steps"]] == [20]
    assert info["held_out"]["learned_mse"] < 0.5 * fixed["held_out"]["learned_mse"]


def test_learned_length_scales_beat_one_shared_length_scale_on_held_out_rows(few_landmarks):
    X, y = _short_scale_data()
    ell, info = _ard.learn_scales(X, y, np.random.default_rng(1))
    look = info["held_out"]
    assert look["kept"] == "learned" and look["rows"] == int(_ard.ARD_HELD_OUT * len(y))
    assert look["learned_mse"] < 0.1 * look["isotropic_mse"]
    assert info["rows"] == len(y) - look["rows"] and "kept: held-out error" in info["reason"]
    assert ell[0] < 0.05 * min(ell[1:]) and info["relevance"][0] == 1.0


@pytest.mark.parametrize("seed", [10, 11])
def test_held_out_look_keeps_one_length_scale_where_all_inputs_matter_alike(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(300, 5))
    y = np.sin(1.5 * np.sqrt((X ** 2).sum(axis=1))) + 0.3 * rng.normal(size=300)  # a function of |x| alone
    ell, info = _ard.learn_scales(X, y, np.random.default_rng(1))
    look = info["held_out"]
    assert look["kept"] == "isotropic" and look["isotropic_mse"] <= look["learned_mse"]
    assert np.all(ell == ell[0]) and info["chosen"] == [float(v) for v in ell] and info["relevance"] == [1.0] * 5
    assert ell[0] == info["isotropic_start"] and info["lam_on_rows"] == info["isotropic_lam"]
    assert info["reason"].startswith("one shared length-scale")


def test_held_out_look_refuses_learned_length_scales_that_predict_worse(monkeypatch):
    real = _ard.learn_length_scales

    def overfit(*args, **kwargs):  # learned scales made twenty times too short
        ell, lam, info = real(*args, **kwargs)
        return ell / 20.0, lam, dict(info, chosen=[float(v) / 20.0 for v in ell])

    monkeypatch.setattr(_ard, "learn_length_scales", overfit)
    rng = np.random.default_rng(4)
    X = rng.uniform(-1, 1, size=(250, 3))
    y = np.sin(X.sum(axis=1)) + 0.1 * rng.normal(size=250)
    ell, info = _ard.learn_scales(X, y, np.random.default_rng(1))
    assert info["held_out"]["kept"] == "isotropic" and np.all(ell == info["isotropic_start"])


def test_few_rows_skip_the_held_out_look():
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, size=(150, 2))
    y = np.sin(3 * X[:, 0]) + 0.05 * rng.normal(size=150)
    ell, info = _ard.learn_scales(X, y, np.random.default_rng(0))
    assert info["held_out"] is None and info["rows"] == 150 and "no held-out look" in info["reason"]


def test_estimator_records_the_look_and_fits_the_kept_length_scales(few_landmarks):
    X, y = _short_scale_data()
    model = SketchedKernelRidge(kernel="gaussian-ard", kernel_params={"length_scale": "learn"}, sketch_size=80,
                                lam="auto", random_state=1).fit(X, y)
    info = model.fit_info_["length_scale"]
    assert info["held_out"]["kept"] == "learned" and model.kernel_.params["length_scale"] == info["chosen"]
    assert model.fit_info_["lam"]["chosen"] == pytest.approx(info["lam_on_rows"] * info["rows"] / len(y))
    again = SketchedKernelRidge(kernel="gaussian-ard", kernel_params={"length_scale": "learn"}, sketch_size=80,
                                lam="auto", random_state=1).fit(X, y)
    assert again.fit_info_["length_scale"]["chosen"] == info["chosen"]  # the seed fixes every draw
