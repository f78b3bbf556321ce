"""lam="auto" and gamma="auto": the GCV / LOO curves against dense NumPy, and the fits that use them (the square
loss's k-fold criterion: tests/models/test_square_cv.py)."""

import numpy as np
import pytest

from skframe import SketchedKernelRidge
from skframe.models import SketchedKernelMachine
from skframe.models._autotune import gcv_curve, loo_curve, median_gamma, square_spectrum
from tests.naive import naive_gcv, naive_loo


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    Y = np.c_[np.sin(X[:, 0]), X[:, 1] ** 2] + 0.1 * rng.normal(size=(120, 2))
    return X, Y - Y.mean(axis=0)


LAMS = [1e-6, 1e-4, 1e-2, 1.0]


def test_gcv_from_the_sums_equals_the_dense_hat_matrix(data):
    X, Y = data
    Z = np.c_[X, np.tanh(X), X[:, :1] * X[:, 1:2]]  # 7 features, full column rank
    s, g2 = square_spectrum(Z.T @ Z, Z.T @ Y)
    got = gcv_curve(s, g2, float((Y**2).sum()), Z.shape[0], LAMS)
    want = [naive_gcv(Z, Y, lam) for lam in LAMS]
    np.testing.assert_allclose(got, want, rtol=1e-8)


def test_gcv_with_a_rank_deficient_z(data):
    X, Y = data
    Z = np.c_[X, X[:, :1] + X[:, 1:2]]  # rank 3 of 4 columns
    s, g2 = square_spectrum(Z.T @ Z, Z.T @ Y)
    got = gcv_curve(s, g2, float((Y**2).sum()), Z.shape[0], LAMS)
    np.testing.assert_allclose(got, [naive_gcv(Z, Y, lam) for lam in LAMS], rtol=1e-8)


def test_loo_equals_n_refits(data):
    X, Y = data
    Z = np.c_[X, np.tanh(X)]
    np.testing.assert_allclose(loo_curve(Z, Y, LAMS), [naive_loo(Z, Y, lam) for lam in LAMS], rtol=1e-8)


def test_auto_lam_minimises_the_kfold_error_of_the_fitted_features(data):
    X, Y = data
    model = SketchedKernelRidge(kernel_params={"gamma": 0.5}, sketch="subsample", sketch_size=30, lam="auto",
                                random_state=0).fit(X, Y)
    info = model.fit_info_["lam"]
    assert info["criterion"] == "5-fold cv" and len(info["curve"]) == len(info["grid"])
    assert info["value"] <= min(info["curve"]) + 1e-12
    assert model.lam == "auto" and model.lam_path_.tolist() == [info["chosen"]]
    fixed = SketchedKernelRidge(kernel_params={"gamma": 0.5}, sketch="subsample", sketch_size=30,
                                lam=info["chosen"], random_state=0).fit(X, Y)
    np.testing.assert_allclose(model.predict(X), fixed.predict(X), rtol=1e-10, atol=1e-12)
    assert not hasattr(fixed, "fit_info_")


def test_auto_lam_streamed_equals_in_memory(data):  # all 120 rows within the streamed fit's CV_ROWS
    X, Y = data
    kw = dict(kernel_params={"gamma": 0.5}, sketch="subsample", sketch_size=30, lam="auto", random_state=0)
    a = SketchedKernelRidge(**kw).fit(X, Y)
    b = SketchedKernelRidge(**kw, memory_budget="20MB").fit(X, Y)
    assert b.representation_ == "accumulated"
    np.testing.assert_allclose(a.fit_info_["lam"]["curve"], b.fit_info_["lam"]["curve"], rtol=1e-8)


def test_gcv_of_the_exact_model(data):
    X, Y = data
    from skframe.models._autotune import choose_lam_square
    from skframe.models._fit import Fit

    model = SketchedKernelRidge(kernel_params={"gamma": 0.5}, sketch=None, lam="auto")
    model.fit_info_ = {"lam": choose_lam_square(Fit.of(model, X, Y), criterion="gcv")[1]}
    from skframe_kernels.kernels import GaussianKernel

    K = GaussianKernel(0.5)(X, X)
    w, U = np.linalg.eigh(K)
    Z = U[:, w > 1e-12 * w.max()] * np.sqrt(w[w > 1e-12 * w.max()])
    lam = model.fit_info_["lam"]["chosen"]
    np.testing.assert_allclose(model.fit_info_["lam"]["value"], naive_gcv(Z, Y, lam), rtol=1e-6)


def test_auto_gamma_starts_from_the_median_heuristic(data):
    X, Y = data
    model = SketchedKernelRidge(kernel_params={"gamma": "auto"}, sketch_size=30, lam="auto", random_state=0)
    model.fit(X, Y)
    info = model.fit_info_["gamma"]
    D = ((X[:, None] - X[None]) ** 2).sum(-1)[np.triu_indices(len(X), 1)]
    assert info["start"] == pytest.approx(1.0 / np.median(D), rel=1e-10) == median_gamma(X)
    assert model.kernel_.gamma == info["chosen"] == info["grid"][int(np.argmin(info["curve"]))]
    assert info["grid"][0] <= info["start"] / 10 and info["grid"][-1] >= info["start"] * 10


def test_auto_lam_of_a_lipschitz_loss_is_a_kfold_choice(data):
    X, Y = data
    model = SketchedKernelMachine(loss="huber", kernel_params={"gamma": 0.5}, sketch_size=30, lam="auto",
                                  random_state=0).fit(X, Y[:, 0])
    info = model.fit_info_["lam"]
    assert info["criterion"].endswith("fold held-out loss")
    assert info["chosen"] == info["grid"][int(np.argmin(info["curve"]))] == model.lam_path_[0]


def test_bad_lam_string_is_refused():
    from skframe.exceptions import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="lam"):
        SketchedKernelRidge(lam="best").fit(np.ones((5, 2)), np.arange(5.0))


def test_auto_lam_of_the_structured_model_is_a_kfold_choice():
    from skframe.models import OutputKernelRegressor

    rng = np.random.default_rng(1)
    X = rng.normal(size=(90, 4))
    Y = (X[:, :3] + 0.3 * rng.normal(size=(90, 3)) > 0).astype(float)
    model = OutputKernelRegressor(input_sketch="subsample", input_sketch_size=30, lam="auto",
                                  random_state=0).fit(X, Y)
    info = model.fit_info_["lam"]
    assert info["chosen"] == info["grid"][int(np.argmin(info["curve"]))]
    fixed = OutputKernelRegressor(input_sketch="subsample", input_sketch_size=30, lam=info["chosen"],
                                  random_state=0).fit(X, Y)
    np.testing.assert_array_equal(model.predict(X), fixed.predict(X))


def test_gaussian_ard_kernel_is_the_gaussian_kernel_of_scaled_inputs():
    from skframe.contract.registry import get_kernel
    from tests.naive import naive_gaussian

    X = np.random.default_rng(2).normal(size=(7, 3))
    scales = np.array([0.5, 1.0, 3.0])
    K = get_kernel("gaussian-ard", length_scale=scales.tolist())(X, X[:4])
    np.testing.assert_allclose(K, naive_gaussian(X / scales, X[:4] / scales, 0.5), rtol=1e-12)


def test_learned_length_scales_find_the_relevant_feature():
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, size=(150, 3))
    y = np.sin(3 * X[:, 0]) + 0.05 * rng.normal(size=150)  # features 1 and 2 are irrelevant
    model = SketchedKernelRidge(kernel="gaussian-ard", kernel_params={"length_scale": "learn"}, sketch_size=40,
                                lam="auto", random_state=0).fit(X, y)
    info = model.fit_info_["length_scale"]
    assert info["relevance"][0] == 1.0 and max(info["relevance"][1:]) < 0.2
    assert model.kernel_.params["length_scale"] == info["chosen"] and info["criterion"] == "ml"


def _dense_ard_log_gcv(X, Y, landmarks, ell, lam):
    """log GCV of the Nystrom ridge H = C (C^T C + n lam W)^{-1} C^T, dense NumPy."""
    n = X.shape[0]
    sq = (((X[:, None, :] - X[None, landmarks, :]) / ell) ** 2).sum(axis=2)
    C = np.exp(-0.5 * sq)
    W = C[landmarks]
    H = C @ np.linalg.solve(C.T @ C + n * lam * W, C.T)
    R = Y - H @ Y
    return np.log(n * (R * R).sum() / (n - np.trace(H)) ** 2)


def _check_criterion(criterion, dense, seed, value_tol):
    """``criterion(X, Y, landmarks, theta)``'s value equals the dense NumPy ``dense(X, Y, landmarks, l, λ)`` to
    ``value_tol`` and its analytic gradient equals central differences, on a 30 x 3 problem with 6 landmarks."""
    rng = np.random.default_rng(seed)
    X, Y = rng.normal(size=(30, 3)), rng.normal(size=(30, 2))
    Y -= Y.mean(axis=0)
    landmarks = np.array([0, 4, 9, 17, 22, 28])
    theta = np.r_[np.log([0.8, 1.5, 2.5]), np.log(3e-3)]
    value, grad = criterion(X, Y, landmarks, theta)
    assert abs(value - dense(X, Y, landmarks, np.exp(theta[:-1]), np.exp(theta[-1]))) < value_tol
    step = 1e-6
    fd = [(criterion(X, Y, landmarks, theta + step * e)[0] - criterion(X, Y, landmarks, theta - step * e)[0])
          / (2 * step) for e in np.eye(theta.size)]
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-8)


def test_ard_gcv_value_and_analytic_gradient_match_dense_numpy_and_finite_differences():
    from skframe.models._ard import ard_gcv

    _check_criterion(ard_gcv, _dense_ard_log_gcv, seed=5, value_tol=1e-10)


def test_ard_gcv_is_the_gcv_of_the_fits_sketched_sums():
    from skframe.models._ard import ard_gcv
    from skframe.models._autotune import gcv_curve, square_spectrum

    rng = np.random.default_rng(6)
    X, y = rng.normal(size=(25, 2)), rng.normal(size=25)
    Y = (y - y.mean())[:, None]
    landmarks = np.arange(0, 25, 3)
    ell, lam = np.array([0.9, 1.7]), 1e-2
    sq = (((X[:, None, :] - X[None, landmarks, :]) / ell) ** 2).sum(axis=2)
    C = np.exp(-0.5 * sq)
    w, U = np.linalg.eigh(C[landmarks])
    Z = C @ (U / np.sqrt(w))
    s, g2 = square_spectrum(Z.T @ Z, Z.T @ Y)
    expected = np.log(gcv_curve(s, g2, float((Y * Y).sum()), 25, [lam])[0])
    assert abs(ard_gcv(X, Y, landmarks, np.r_[np.log(ell), np.log(lam)])[0] - expected) < 1e-8


def _dense_ard_log_loo(X, Y, landmarks, ell, lam):
    """log of the leave-one-out squared error of the Nystrom ridge, by n refits without row i (penalty n lam W
    held), dense NumPy."""
    n = X.shape[0]
    sq = (((X[:, None, :] - X[None, landmarks, :]) / ell) ** 2).sum(axis=2)
    C = np.exp(-0.5 * sq)
    W = C[landmarks]
    total = 0.0
    for i in range(n):
        keep = np.arange(n) != i
        coef = np.linalg.solve(C[keep].T @ C[keep] + n * lam * W, C[keep].T @ Y[keep])
        total += float(((Y[i] - C[i] @ coef) ** 2).sum())
    return np.log(total)


def test_ard_loo_value_and_analytic_gradient_match_n_refits_and_finite_differences():
    from skframe.models._ard import ard_loo

    _check_criterion(ard_loo, _dense_ard_log_loo, seed=7, value_tol=1e-9)


def test_learned_length_scales_by_the_exact_leave_one_out_error():
    from skframe.models import _ard

    rng = np.random.default_rng(8)
    X = rng.uniform(-1, 1, size=(60, 2))
    y = np.sin(3 * X[:, 0]) + 0.05 * rng.normal(size=60)
    Y = (y - y.mean())[:, None]
    landmarks = np.arange(0, 60, 3)
    ell, lam, info = _ard.learn_length_scales(X, Y, landmarks, np.ones(2), 1e-3, criterion="loo")
    assert info["criterion"] == "loo" and ell[0] < ell[1]
    theta = np.r_[np.log(ell), np.log(lam)]
    assert abs(np.log(info["value"]) - _ard.ard_loo(X, Y, landmarks, theta)[0]) < 1e-9


def _dense_ard_ml(X, Y, landmarks, ell, lam):
    """The profiled negative log marginal likelihood per target entry of the Nystrom Gaussian process, dense
    NumPy: ``(1/2) log(tr(Y^T K_s^{-1} Y) / (n t)) + log det(K_s) / (2n)``, ``K_s = C W^+ C^T + n lam I``."""
    n, t = Y.shape
    sq = (((X[:, None, :] - X[None, landmarks, :]) / ell) ** 2).sum(axis=2)
    C = np.exp(-0.5 * sq)
    K = C @ np.linalg.pinv(C[landmarks]) @ C.T + n * lam * np.eye(n)
    q = float(np.trace(Y.T @ np.linalg.solve(K, Y)))
    return 0.5 * np.log(q / (n * t)) + 0.5 * np.linalg.slogdet(K)[1] / n


def test_ard_ml_value_and_analytic_gradient_match_dense_numpy_and_finite_differences():
    from skframe.models._ard import ard_ml

    _check_criterion(ard_ml, _dense_ard_ml, seed=9, value_tol=1e-10)


def test_ard_ml_with_every_row_a_landmark_is_the_gaussian_process_log_marginal_likelihood():
    """All rows as landmarks: the exact GP; at the profiled amplitude c and noise c n lam, scikit-learn's log
    marginal likelihood is -n (value + (1 + log 2 pi) / 2)."""
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

    from skframe.models._ard import ard_ml

    rng = np.random.default_rng(10)
    n = 40
    X = rng.normal(size=(n, 3))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=n)
    y -= y.mean()
    ell, lam = np.array([0.7, 1.4, 2.0]), 3e-3
    value = ard_ml(X, y[:, None], np.arange(n), np.r_[np.log(ell), np.log(lam)])[0]
    K = np.exp(-0.5 * (((X[:, None, :] - X[None, :, :]) / ell) ** 2).sum(axis=2)) + n * lam * np.eye(n)
    c = float(y @ np.linalg.solve(K, y)) / n
    kernel = ConstantKernel(c) * RBF(ell) + WhiteKernel(c * n * lam)
    gp = GaussianProcessRegressor(kernel, optimizer=None, alpha=1e-14).fit(X, y)
    assert abs(-gp.log_marginal_likelihood_value_ / n - 0.5 * (1 + np.log(2 * np.pi)) - value) < 1e-9


def test_choose_gamma_keeps_the_most_local_of_near_ties():
    """Bandwidths within 1 % of the least score: the largest γ is kept (it returns to the mean away from the data)."""
    from skframe.models import _autotune

    scores = {-1.0: 1.000, -0.5: 1.004, 0.0: 1.008, 0.5: 1.2, 1.0: 2.0, -1.5: 1.003, -2.0: 1.005}

    def score(g):
        return scores[round(float(np.log10(g)) * 2) / 2]

    gamma, info = _autotune.choose_gamma(score, 1.0)
    assert gamma == 1.0 and info["least"] == 0.1 and info["value"] == 1.008
    gamma, info = _autotune.choose_gamma(score, 1.0, tie=0.0)
    assert gamma == 0.1
