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
    assert "A_tril" in model.posterior_ and "P_v_triu" not in model.posterior_
    save(model, tmp_path / "before.skf")
    _, std = model.predict(X[:20], return_std=True)
    assert "P_v_triu" in model.posterior_ and "A_tril" not in model.posterior_
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


# ------------------------------------------------------------------------------- the stored state and its layouts
def _fit(sketch, **kw):
    rng = np.random.default_rng(5)
    X = rng.uniform(size=(150, 3))
    y = np.sin(4 * X[:, 0]) + X[:, 1] + 0.1 * rng.normal(size=150)
    model = SketchedKernelRidge(kernel_params={"gamma": 2.0}, sketch=sketch, sketch_size=30, lam=1e-3,
                                random_state=0, **kw).fit(X, y)
    return model, X, y


@pytest.mark.parametrize("sketch", ["psr", "gaussian", "subsample"])
def test_a_sketch_keeps_the_factors_of_the_map_and_half_the_system(sketch):
    model, X, _ = _fit(sketch)
    state = model.posterior_
    m, r = state["UD"].shape
    assert state["P_z"] is None and state["mix"].shape == (m, model.X_fit_.shape[0])
    assert "A" not in state and state["A_tril"].shape == (r * (r + 1) // 2,)
    # the features the state computes are k(x, X_fit_) (mix^T UD), the map the fit predicts with
    P_z = np.asarray(state["mix"].T @ state["UD"])
    Z = rbf_kernel(X, model.X_fit_, gamma=2.0) @ P_z
    A = _posterior.unpack_lower(state["A_tril"], symmetric=True)
    np.testing.assert_allclose(A, Z.T @ Z, rtol=1e-9, atol=1e-9 * np.abs(A).max())


@pytest.mark.parametrize("sketch", [None, "rff"])
def test_forms_without_factors_keep_no_map(sketch):
    model, X, _ = _fit(sketch)
    state = model.posterior_
    assert state["P_z"] is None and state["mix"] is None and state["UD"] is None
    side = len(X) if sketch is None else model.coef_.shape[0]
    assert state["A_tril"].shape == (side * (side + 1) // 2,)
    assert np.all(np.isfinite(model.predict(X[:5], return_std=True)[1]))


def test_packing_round_trips_and_the_factorisation_reads_the_lower_triangle():
    rng = np.random.default_rng(0)
    B = rng.normal(size=(7, 7))
    A = B @ B.T
    packed = _posterior.pack_lower(A)
    assert packed.shape == (28,)
    np.testing.assert_array_equal(_posterior.unpack_lower(packed, symmetric=True), A)
    np.testing.assert_array_equal(_posterior.unpack_lower(packed), np.tril(A))
    np.testing.assert_array_equal(_posterior.unpack_lower(_posterior.pack_lower(B, upper=True), upper=True),
                                  np.triu(B))
    skewed = A + np.triu(1e-3 * rng.normal(size=(7, 7)), 1)  # rounding may leave Z^T Z a little asymmetric
    np.testing.assert_array_equal(_posterior._cholesky(skewed, 0.5),
                                  _posterior._cholesky(_posterior.unpack_lower(_posterior.pack_lower(skewed),
                                                                               symmetric=True), 0.5))
    with pytest.raises(Exception, match="no square matrix"):
        _posterior.unpack_lower(np.zeros(5))


def test_the_square_factor_is_unpacked_once():
    model, X, _ = _fit("psr")
    model.predict(X[:3], return_std=True)
    state = model.posterior_
    first = _posterior.posterior_factor(state)
    assert _posterior.posterior_factor(state) is first
    np.testing.assert_array_equal(first, np.triu(first))


def _earlier_layout(state, factor, keys=True):
    """The state as earlier versions stored it: the dense map P_z and a square A (or square P_v)."""
    A = _posterior.unpack_lower(state["A_tril"], symmetric=True)
    P_z = state["P_z"] if state["mix"] is None else np.asarray(state["mix"].T @ state["UD"])
    old = {"form": state["form"], "noise": state["noise"], "scale": state["scale"], "P_z": P_z}
    if factor:  # as the first return_std left it
        from scipy.linalg import solve_triangular

        L = _posterior._cholesky(A, state["noise"])  # as the earlier version factored it

        old["P_v"] = solve_triangular(L, np.eye(len(A)), lower=True).T
    else:
        old["A"] = A
    if keys:
        old.update(mix=state["mix"], UD=state["UD"])
    return old


@pytest.mark.parametrize("sketch", ["psr", "gaussian", None])
@pytest.mark.parametrize("factor", [False, True])
@pytest.mark.parametrize("keys", [True, False])
def test_model_files_of_the_earlier_layout_load_and_give_the_same_std(sketch, factor, keys, tmp_path):
    from skframe.persistence import load, save

    model, X, y = _fit(sketch)
    X_te = np.random.default_rng(9).uniform(-0.5, 1.5, size=(40, 3))
    old = _earlier_layout(model.posterior_, factor, keys)
    _, std_new = model.predict(X_te, return_std=True)
    model.posterior_ = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in old.items()}
    save(model, tmp_path / "old.skf")  # a file of the earlier layout, as an earlier version wrote it
    _, std_old = model.predict(X_te, return_std=True)
    loaded = load(tmp_path / "old.skf")
    assert set(loaded.posterior_) == set(old)
    if sketch is not None:
        assert loaded.posterior_["P_z"].shape == old["P_z"].shape  # read as it is: the dense map is used
    _, std_loaded = loaded.predict(X_te, return_std=True)
    np.testing.assert_array_equal(std_loaded, std_old)
    # the compact state gives the same standard deviations (to rounding: (k S_mix^T) UD against k (S_mix^T UD))
    np.testing.assert_allclose(std_new, std_old, rtol=1e-12, atol=0)
    if sketch is None:  # the same arithmetic: bit for bit
        np.testing.assert_array_equal(std_new, std_old)
    if sketch is None:  # and the dense Gaussian-process formula (the sketched ones are checked above)
        ref = naive_gp_posterior_variance(rbf_kernel(X, X, gamma=2.0), rbf_kernel(X_te, X, gamma=2.0),
                                          np.ones(40), (y - y.mean())[:, None], 1e-3)
        np.testing.assert_allclose(std_loaded**2, ref[:, 0], rtol=1e-7, atol=1e-12)


def test_a_model_file_holds_no_dense_map(tmp_path):
    """The posterior state adds the sketch's factors and half of the r x r system to the file, not the s' x r
    map: on a p-sparsified sketch with s' = 3 316 and r = 200 that map alone was 5.3 MB."""
    import zipfile

    from skframe.persistence import save

    rng = np.random.default_rng(1)
    X = rng.uniform(size=(2000, 5))
    y = X[:, 0] + np.sin(5 * X[:, 1]) + 0.1 * rng.normal(size=2000)
    model = SketchedKernelRidge(kernel_params={"gamma": 1.0}, sketch="psr", sketch_size=60, lam=1e-5,
                                random_state=0).fit(X, y)
    state = model.posterior_
    s_prime, (m, r) = model.X_fit_.shape[0], state["UD"].shape
    assert s_prime > 3 * m
    save(model, tmp_path / "with.skf")
    model.posterior_ = None
    save(model, tmp_path / "without.skf")
    grown = (tmp_path / "with.skf").stat().st_size - (tmp_path / "without.skf").stat().st_size
    mix = state["mix"]
    stored = 8 * (r * (r + 1) // 2 + m * r + 1) + mix.data.nbytes + mix.indices.nbytes + mix.indptr.nbytes
    assert stored <= grown <= stored + 4096  # the arrays, their headers and manifest entries
    assert grown < 8 * s_prime * r
    with zipfile.ZipFile(tmp_path / "with.skf") as zf:
        assert all(info.file_size < 8 * s_prime * r for info in zf.infolist())
