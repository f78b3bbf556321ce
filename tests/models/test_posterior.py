"""SketchedKernelRidge.predict(X, return_std=True) against the dense Gaussian-process formula."""

import numpy as np
import pytest
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF as SkRBF
from sklearn.metrics.pairwise import rbf_kernel

from skframe.exceptions import NotFittedError
from skframe.models import SketchedKernelRidge, _posterior
from skframe_sketches.sketches import GaussianSketch, PSparsifiedSketch, SubSampleSketch
from tests.models.test_ridge import Recording
from tests.naive import naive_gp_posterior_variance

G, LAM = 0.5, 1e-3


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(70, 3))
    Y = np.c_[np.sin(3 * X[:, 0]) + X[:, 1] ** 2, np.cos(2 * X[:, 2])] + 0.05 * rng.normal(size=(70, 2))
    return X, Y, rng.uniform(-1.5, 1.5, size=(30, 3))


def _reference(X, Y, X_te, R=None, fit_intercept=True):
    Yc = Y - Y.mean(axis=0) if fit_intercept else Y
    K, K_te = rbf_kernel(X, gamma=G), rbf_kernel(X_te, X, gamma=G)
    return naive_gp_posterior_variance(K, K_te, np.ones(len(X_te)), Yc, LAM, R)


def test_exact_equals_the_gp_formula_and_scikit_learn(data):
    X, Y, X_te = data
    model = SketchedKernelRidge(kernel_params={"gamma": G}, sketch=None, lam=LAM).fit(X, Y)
    F, std = model.predict(X_te, return_std=True)
    ref = _reference(X, Y, X_te)
    np.testing.assert_allclose(std**2, ref, rtol=1e-8, atol=1e-12)
    # scikit-learn's GP with the same kernel and noise n lam: the same latent std up to the amplitude s2
    gp = GaussianProcessRegressor(SkRBF(length_scale=np.sqrt(1 / (2 * G))), alpha=len(X) * LAM, optimizer=None,
                                  normalize_y=False).fit(X, Y[:, 0] - Y[:, 0].mean())
    _, gp_std = gp.predict(X_te, return_std=True)
    np.testing.assert_allclose(std[:, 0] / np.sqrt(model.posterior_["scale"][0]), gp_std, rtol=1e-7)


@pytest.mark.parametrize("make", [lambda: PSparsifiedSketch(size=20, p=0.3), lambda: GaussianSketch(size=20),
                                  lambda: SubSampleSketch(size=20)])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_sketched_equals_the_nystrom_gp_formula(data, make, fit_intercept):
    X, Y, X_te = data
    rec = Recording(make())
    model = SketchedKernelRidge(kernel_params={"gamma": G}, sketch=rec, lam=LAM, fit_intercept=fit_intercept,
                                random_state=3).fit(X, Y)
    _, std = model.predict(X_te, return_std=True)
    ref = _reference(X, Y, X_te, rec.drawn.toarray(), fit_intercept)
    np.testing.assert_allclose(std**2, ref, rtol=1e-8, atol=1e-12)
    _, std_noise = model.predict(X_te, return_std=True, noise=True)
    np.testing.assert_allclose(std_noise**2, ref + len(X) * LAM * model.posterior_["scale"], rtol=1e-8)


def test_streamed_fit_and_chunked_prediction_agree(data, monkeypatch):
    X, Y, X_te = data
    kw = dict(kernel_params={"gamma": G}, sketch="subsample", sketch_size=20, lam=LAM, random_state=0)
    in_memory = SketchedKernelRidge(**kw).fit(X, Y)
    streamed = SketchedKernelRidge(**kw, memory_budget="64MB").fit(X, Y)
    assert streamed.representation_ == "accumulated"
    _, s1 = in_memory.predict(X_te, return_std=True)
    monkeypatch.setattr(_posterior, "CHUNK_BYTES", 8 * 60 * 7)  # 7 rows a chunk
    _, s2 = streamed.predict(X_te, return_std=True)
    np.testing.assert_allclose(s1, s2, rtol=1e-8)


def test_one_d_targets_and_lam_path(data):
    X, Y, X_te = data
    model = SketchedKernelRidge(kernel_params={"gamma": G}, sketch=None, lam=[1e-1, LAM]).fit(X, Y[:, 0])
    F, std = model.predict(X_te, return_std=True)
    assert F.shape == std.shape == (30,)
    np.testing.assert_allclose(std**2, _reference(X, Y[:, :1], X_te)[:, 0], rtol=1e-8, atol=1e-12)


def test_far_points_have_the_prior_std_and_near_points_less(data):
    X, Y, _ = data
    model = SketchedKernelRidge(kernel_params={"gamma": G}, sketch_size=30, lam=LAM, random_state=0).fit(X, Y)
    _, far = model.predict(np.full((1, 3), 50.0), return_std=True)
    _, near = model.predict(X[:5], return_std=True)
    np.testing.assert_allclose(far[0] ** 2, model.posterior_["scale"], rtol=1e-10)
    assert np.all(near < 0.5 * far)


def test_model_without_posterior_state_says_refit(data):
    X, Y, X_te = data
    model = SketchedKernelRidge(kernel_params={"gamma": G}, sketch_size=10, random_state=0).fit(X, Y)
    del model.posterior_  # as a model file written before this state existed
    assert model.predict(X_te).shape == (30, 2)
    with pytest.raises(NotFittedError, match="refit"):
        model.predict(X_te, return_std=True)


def test_saved_model_keeps_the_posterior(data, tmp_path):
    from skframe.persistence import load, save

    X, Y, X_te = data
    model = SketchedKernelRidge(kernel_params={"gamma": G}, sketch_size=20, random_state=0).fit(X, Y)
    save(model, tmp_path / "m.skf")
    again = load(tmp_path / "m.skf")
    np.testing.assert_array_equal(again.predict(X_te, return_std=True)[1], model.predict(X_te, return_std=True)[1])


def test_the_factor_is_computed_at_the_first_std_and_saved_either_way(tmp_path):
    """A fit keeps the system A; the first return_std replaces it by its factor; a model saved before or after
    gives the same standard deviations once loaded."""
    from skframe.persistence import load, save

    rng = np.random.default_rng(3)
    X = rng.uniform(size=(300, 2))
    y = np.sin(4 * X[:, 0]) + 0.1 * rng.normal(size=300)
    model = SketchedKernelRidge(kernel_params={"gamma": 3.0}, sketch="subsample", sketch_size=40, lam=1e-3,
                                random_state=0).fit(X, y)
    assert "A" in model.posterior_ and "P_v" not in model.posterior_
    save(model, tmp_path / "before.skf")
    _, std = model.predict(X[:20], return_std=True)
    assert "P_v" in model.posterior_ and "A" not in model.posterior_
    save(model, tmp_path / "after.skf")
    for name in ("before.skf", "after.skf"):
        _, again = load(tmp_path / name).predict(X[:20], return_std=True)
        np.testing.assert_allclose(again, std, rtol=1e-12)


def test_a_system_without_a_factor_says_so_at_return_std(monkeypatch):
    X = np.random.default_rng(0).uniform(size=(100, 2))
    model = SketchedKernelRidge(sketch="subsample", sketch_size=20, lam=1e-3, random_state=0).fit(X, X[:, 0])
    monkeypatch.setattr(_posterior, "_cholesky", lambda A, ridge: None)
    model.predict(X)  # the point prediction does not need it
    with pytest.raises(NotFittedError, match="no Cholesky factor"):
        model.predict(X, return_std=True)
