"""ConformalRegressor: the methods' intervals against their plain formulas, coverage on fresh data, errors."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import Ridge

from skframe.exceptions import InvalidInputError, InvalidParameterError, NotFittedError
from skframe.models import JointQuantileRegressor, SketchedKernelRidge
from skframe.uncertainty import ConformalRegressor
from tests.naive import naive_cv_plus


def _data(n, seed=0, d=1):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 2))
    noise = (0.1 + 0.4 * np.abs(X[:, :1])) * rng.normal(size=(n, d))
    Y = np.sin(3 * X[:, :1]) + X[:, 1:2] * np.arange(1, d + 1) + noise
    return X, (Y[:, 0] if d == 1 else Y)


def _ridge():
    return SketchedKernelRidge(kernel_params={"gamma": 1.0}, sketch_size=30, lam=1e-3, random_state=0)


def test_cv_plus_equals_the_matrix_formula_multi_output():
    X, Y = _data(150, d=2)
    Xt, _ = _data(40, seed=1, d=2)
    model = ConformalRegressor(_ridge(), method="cv+", cv=4, alpha=0.1, random_state=3, chunk_rows=7).fit(X, Y)
    lo, hi = model.predict_interval(Xt)
    assert lo.shape == hi.shape == (40, 2)
    # the reference: refit each fold by hand with the same fold assignment
    fold_of = model.residuals_[0].fold_of
    for j in range(2):
        P, R = [], np.empty(150)
        for k in range(4):
            te, tr = fold_of == k, fold_of != k
            est = clone(_ridge()).fit(X[tr], Y[tr])
            R[te] = np.abs(Y[te, j] - est.predict(X[te])[:, j])
            P.append(est.predict(Xt)[:, j])
        ref_lo, ref_hi = naive_cv_plus(np.array(P), R, fold_of, 0.1)
        np.testing.assert_allclose(lo[:, j], ref_lo, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(hi[:, j], ref_hi, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(model.predict(Xt), clone(_ridge()).fit(X, Y).predict(Xt))


def test_jackknife_plus_is_leave_one_out():
    X, y = _data(40)
    Xt, _ = _data(9, seed=1)
    model = ConformalRegressor(Ridge(alpha=1.0), method="jackknife+", alpha=0.2, refit=False,
                               budget_bytes=8 * 40 * 2).fit(X, y)
    assert len(model.fold_estimators_) == 40
    P = np.empty((40, 9))
    R = np.empty(40)
    fold_of = model.residuals_[0].fold_of
    for i in range(40):
        keep = np.arange(40) != i
        est = Ridge(alpha=1.0).fit(X[keep], y[keep])
        R[i] = abs(y[i] - est.predict(X[i:i + 1])[0])
        P[fold_of[i]] = est.predict(Xt)
    ref_lo, ref_hi = naive_cv_plus(P, R, fold_of, 0.2)
    lo, hi = model.predict_interval(Xt)
    np.testing.assert_allclose(lo, ref_lo, rtol=1e-10)
    np.testing.assert_allclose(hi, ref_hi, rtol=1e-10)
    np.testing.assert_allclose(model.predict(Xt), P.mean(axis=0))


def test_split_is_prediction_plus_minus_the_calibration_quantile():
    X, y = _data(200)
    model = ConformalRegressor(_ridge(), method="split", calibration_size=49, random_state=0).fit(X, y)
    lo, hi = model.predict_interval(X[:10])
    F = model.estimator_.predict(X[:10])
    q = model.conformity_quantile_[0]
    np.testing.assert_allclose(hi - F, q)
    np.testing.assert_allclose(F - lo, q)
    assert model.n_calibration_ == 49
    # q is the ceil(0.9 * 50) = 45th smallest calibration score
    train = np.setdiff1d(np.arange(200), np.sort(np.random.default_rng(0).permutation(200)[:49]))
    cal = np.setdiff1d(np.arange(200), train)
    est = clone(_ridge()).fit(X[train], y[train])
    assert q == np.sort(np.abs(y[cal] - est.predict(X[cal])))[44]


@pytest.mark.parametrize("method", ["split", "cv+"])
def test_coverage_on_fresh_data(method):
    covered = []
    for seed in range(5):
        X, y = _data(400, seed=seed)
        Xt, yt = _data(2000, seed=100 + seed)
        lo, hi = ConformalRegressor(_ridge(), method=method, alpha=0.1, random_state=seed).fit(X, y) \
            .predict_interval(Xt)
        covered.append(np.mean((lo <= yt) & (yt <= hi)))
    assert 0.86 <= np.mean(covered) <= 0.95


def test_cqr_calibrates_quantiles_and_adapts_widths():
    X, y = _data(600)
    Xt, yt = _data(3000, seed=7)
    base = JointQuantileRegressor(kernel_params={"gamma": 2.0}, sketch_size=40, lam=1e-4, random_state=0)
    model = ConformalRegressor(base, method="cqr", alpha=0.1, random_state=0).fit(X, y)
    lo, hi = model.predict_interval(Xt)
    assert model.estimator_.quantiles_.tolist() == [0.05, 0.5, 0.95]
    Q = model.estimator_.predict(Xt)
    np.testing.assert_allclose(lo, Q[:, 0] - model.conformity_quantile_[0])
    np.testing.assert_allclose(hi, Q[:, 2] + model.conformity_quantile_[0])
    assert 0.85 <= np.mean((lo <= yt) & (yt <= hi)) <= 0.95
    width = hi - lo
    calm, noisy = np.abs(Xt[:, 0]) < 0.2, np.abs(Xt[:, 0]) > 0.8
    assert width[noisy].mean() > 1.5 * width[calm].mean()  # the noise sd is 0.1 + 0.4 |x0|
    assert np.allclose(model.predict(Xt), Q[:, 1])


def test_cqr_one_model_per_target():
    X, Y = _data(200, d=2)
    base = JointQuantileRegressor(kernel_params={"gamma": 2.0}, sketch_size=20, random_state=0)
    model = ConformalRegressor(base, method="cqr", random_state=0).fit(X, Y)
    lo, hi = model.predict_interval(X[:5])
    assert lo.shape == (5, 2) and len(model.quantile_estimators_) == 2 and np.all(lo < hi)


@pytest.mark.parametrize("params, match", [
    ({"method": "bootstrap"}, "method='bootstrap'"),
    ({"alpha": 1.5}, "alpha=1.5"),
    ({"cv": 1}, "cv=1"),
    ({"method": "split", "calibration_size": 1.0}, "calibration_size=1.0"),
    ({"chunk_rows": 0}, "chunk_rows=0"),
])
def test_bad_parameters_name_the_value(params, match):
    X, y = _data(30)
    with pytest.raises(InvalidParameterError, match=match):
        ConformalRegressor(Ridge(), **params).fit(X, y)


def test_errors():
    X, y = _data(30)
    with pytest.raises(InvalidParameterError, match="quantile estimator"):
        ConformalRegressor(Ridge(), method="cqr").fit(X, y)
    with pytest.raises(InvalidInputError, match="30 rows"):
        ConformalRegressor(Ridge()).fit(X, y[:10])
    with pytest.raises(NotFittedError):
        ConformalRegressor(Ridge()).predict_interval(X)


# features recomputed / kept (float32) between the two passes / kept for the first 80 of 160 rows (r = 30) /
# kept as the estimator's memory budget allows (here: all)
@pytest.mark.parametrize("budget", [0, 2**30, 80 * 30 * 4, None])
def test_shared_sketch_folds_equal_the_plain_formula(budget, monkeypatch):
    from skframe.uncertainty import _shared_folds

    X, Y = _data(160, d=2)
    Xt, _ = _data(25, seed=1, d=2)
    real = _shared_folds.fit_shared_folds
    monkeypatch.setattr("skframe.uncertainty.conformal.fit_shared_folds",
                        lambda *a, **k: real(*a, **dict(k, budget_bytes=budget, chunk_rows=37)))
    model = ConformalRegressor(_ridge(), method="cv+", cv=4, random_state=1, sketch_sharing="shared").fit(X, Y)
    lo, hi = model.predict_interval(Xt)
    full = clone(_ridge()).fit(X, Y)
    np.testing.assert_allclose(model.predict(Xt), full.predict(Xt), rtol=1e-12)
    # reference: each fold's ridge on the full model's sketched features z(x) = k(x, X_fit_) P_z
    from sklearn.metrics.pairwise import rbf_kernel

    P_z = full.posterior_["mix"].T @ full.posterior_["UD"]  # the model keeps the factors, not the dense map
    Z, Zt = rbf_kernel(X, full.X_fit_, gamma=1.0) @ P_z, rbf_kernel(Xt, full.X_fit_, gamma=1.0) @ P_z
    fold_of = model.residuals_[0].fold_of
    R, P = np.empty_like(Y), []
    for k in range(4):
        tr, te = fold_of != k, fold_of == k
        ybar = Y[tr].mean(axis=0)
        W = np.linalg.solve(Z[tr].T @ Z[tr] + tr.sum() * 1e-3 * np.eye(Z.shape[1]), Z[tr].T @ (Y[tr] - ybar))
        R[te] = np.abs(Y[te] - Z[te] @ W - ybar)
        P.append(Zt @ W + ybar)
    P = np.array(P)
    tol = 1e-9 if budget == 0 else 1e-5  # kept features are float32
    for j in range(2):
        np.testing.assert_allclose(model.residuals_[j].values, R[:, j], rtol=tol, atol=tol)
        ref_lo, ref_hi = naive_cv_plus(P[:, :, j], R[:, j], fold_of, 0.1)
        np.testing.assert_allclose(lo[:, j], ref_lo, rtol=tol, atol=tol)
        np.testing.assert_allclose(hi[:, j], ref_hi, rtol=tol, atol=tol)


def test_shared_sketch_needs_a_sketched_ridge():
    X, y = _data(40)
    with pytest.raises(InvalidParameterError, match="needs a SketchedKernelRidge"):
        ConformalRegressor(Ridge(), sketch_sharing="shared").fit(X, y)
    with pytest.raises(InvalidParameterError, match="exact or an explicit feature map"):
        ConformalRegressor(SketchedKernelRidge(sketch=None), sketch_sharing="shared").fit(X, y)
    with pytest.raises(InvalidParameterError, match="sketch_sharing='both'"):
        ConformalRegressor(Ridge(), sketch_sharing="both").fit(X, y)


@pytest.mark.parametrize("method, sharing", [("cv+", "fold"), ("cv+", "shared"), ("split", "fold"),
                                             ("jackknife+", "fold")])
def test_saved_state_gives_the_same_bounds(method, sharing, tmp_path):
    from skframe.persistence import load_bundle, save
    from skframe.uncertainty import interval_bounds, interval_state

    X, Y = _data(60, d=2)
    Xt, _ = _data(8, seed=1, d=2)
    model = ConformalRegressor(_ridge(), method=method, cv=3, random_state=0, sketch_sharing=sharing).fit(X, Y)
    point = clone(_ridge()).fit(X, Y)
    save(point, tmp_path / "m.skf", extra={"interval": interval_state(model, 0.9)})
    point, extra = load_bundle(tmp_path / "m.skf")
    lo, hi = interval_bounds(extra["interval"], point, Xt)
    ref_lo, ref_hi = model.predict_interval(Xt)
    np.testing.assert_allclose(lo, ref_lo, rtol=1e-12)
    np.testing.assert_allclose(hi, ref_hi, rtol=1e-12)
    lo80, hi80 = interval_bounds(extra["interval"], point, Xt, 0.8)
    assert np.all(hi80 - lo80 <= hi - lo + 1e-12)


def test_posterior_interval_is_mean_plus_minus_z_predictive_sd():
    from scipy.stats import norm

    from skframe.uncertainty import posterior_interval

    X, y = _data(200)
    model = _ridge().fit(X, y)
    lo, hi = posterior_interval(model, X[:7], 0.1)
    F, sd = model.predict(X[:7], return_std=True, noise=True)
    np.testing.assert_allclose(hi[:, 0] - F, norm.ppf(0.95) * sd, rtol=1e-12)
    np.testing.assert_allclose(F - lo[:, 0], norm.ppf(0.95) * sd, rtol=1e-12)
    with pytest.raises(InvalidParameterError, match="not Ridge"):
        posterior_interval(Ridge().fit(X, y), X, 0.1)
    del model.posterior_
    with pytest.raises(NotFittedError, match="refit"):
        posterior_interval(model, X, 0.1)


@pytest.mark.parametrize("params", [{}, {"sketch": "gaussian"}, {"memory_budget": "2MB"}])
def test_shared_folds_features_through_the_mixing_matrix_equal_the_dense_map(params, monkeypatch):
    # the passes compute z(x) = (k(x, X_sub) S_mix^T) UD as the fit does; the former dense k(x, X_sub) P_z
    # (P_z = S_mix^T UD) is the reference, on an in-memory, a dense-mix and a streamed fit
    from skframe.uncertainty import _shared_folds

    X, Y = _data(300, d=2)
    # lam = 0.1 keeps the fold systems well conditioned, so that 1e-10 is a statement about the features
    est = clone(_ridge()).set_params(sketch_size=40, lam=0.1, **params)
    fold_of = np.arange(300) % 5
    full, folds, R = _shared_folds.fit_shared_folds(est, X, Y, fold_of, 5, chunk_rows=61, budget_bytes=0)
    state = full.posterior_
    assert state["mix"] is not None and state["UD"] is not None
    Z_mix = _shared_folds._feature_map(full.kernel_, full.X_fit_, state, 300)(X)
    dense = dict(state, P_z=np.asarray(state["mix"].T @ state["UD"]), mix=None, UD=None)  # an earlier layout
    Z_dense = _shared_folds._feature_map(full.kernel_, full.X_fit_, dense, 300)(X)
    np.testing.assert_allclose(Z_mix, Z_dense, rtol=1e-10, atol=1e-10)

    real_fit = _shared_folds.clone

    def fit_without_factors(estimator):
        model = real_fit(estimator)
        fit = model.fit

        def fit_and_drop(*a, **k):
            out = fit(*a, **k)
            state = out.posterior_
            out.posterior_ = dict(state, P_z=np.asarray(state["mix"].T @ state["UD"]), mix=None, UD=None)
            return out

        model.fit = fit_and_drop
        return model

    monkeypatch.setattr(_shared_folds, "clone", fit_without_factors)
    _, folds_ref, R_ref = _shared_folds.fit_shared_folds(est, X, Y, fold_of, 5, chunk_rows=61, budget_bytes=0)
    np.testing.assert_allclose(R, R_ref, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(folds.coefs, folds_ref.coefs, rtol=1e-10, atol=1e-10)


def _cqr_reference(X, y, base, n_cal, seed, alpha):
    """The quantile model of CQR fitted by hand on the training part, and the calibration rows."""
    n = len(y)
    cal = np.sort(np.random.default_rng(seed).permutation(n)[:n_cal])
    train = np.setdiff1d(np.arange(n), cal)
    est = clone(base).set_params(quantiles=(alpha / 2, 0.5, 1 - alpha / 2)).fit(X[train], y[train])
    return est, cal


@pytest.mark.parametrize("n_cal", [49, 120, 15])
def test_cqr_scores_equal_the_numpy_formulas(n_cal):
    X, y = _data(300)
    Xt, _ = _data(20, seed=1)
    base = JointQuantileRegressor(kernel_params={"gamma": 2.0}, sketch_size=20, lam=1e-3, random_state=0)
    alpha = 0.1
    est, cal = _cqr_reference(X, y, base, n_cal, 4, alpha)
    Q = np.sort(est.predict(X[cal]), axis=1)
    Qt = np.sort(est.predict(Xt), axis=1)
    k_sym = int(np.ceil((1 - alpha) * (n_cal + 1)))
    k_side = int(np.ceil((1 - alpha / 2) * (n_cal + 1)))
    sym = np.sort(np.maximum(Q[:, 0] - y[cal], y[cal] - Q[:, 2]))
    lo_side, hi_side = np.sort(Q[:, 0] - y[cal]), np.sort(y[cal] - Q[:, 2])
    c_sym = sym[k_sym - 1] if k_sym <= n_cal else np.inf
    c_lo = lo_side[k_side - 1] if k_side <= n_cal else np.inf
    c_hi = hi_side[k_side - 1] if k_side <= n_cal else np.inf
    for kind, (a, b) in (("symmetric", (c_sym, c_sym)), ("asymmetric", (c_lo, c_hi))):
        model = ConformalRegressor(base, method="cqr", alpha=alpha, calibration_size=n_cal, random_state=4,
                                   cqr_score=kind).fit(X, y)
        lo, hi = model.predict_interval(Xt)
        np.testing.assert_allclose(lo, Qt[:, 0] - a, rtol=1e-12)
        np.testing.assert_allclose(hi, Qt[:, 2] + b, rtol=1e-12)
    assert model.scores_.shape == (n_cal, 2, 1) and model.conformity_quantile_.shape == (2, 1)
    if n_cal == 15:  # ceil(0.95 * 16) = 16 > 15 rows: each side, so the interval, is unbounded
        assert np.isinf(c_lo) and np.isinf(c_hi) and np.isfinite(c_sym)


def test_cqr_asymmetric_coverage_with_skewed_noise():
    covered = {"symmetric": [], "asymmetric": []}
    for seed in range(5):
        rng = np.random.default_rng(seed)
        X = rng.uniform(-1, 1, size=(3400, 2))
        y = np.sin(3 * X[:, 0]) + (0.2 + 0.3 * np.abs(X[:, 1])) * rng.exponential(size=3400)  # skewed noise
        base = JointQuantileRegressor(kernel_params={"gamma": 2.0}, sketch_size=30, lam=1e-3, random_state=seed)
        for kind in covered:
            lo, hi = ConformalRegressor(base, method="cqr", alpha=0.1, random_state=seed, cqr_score=kind) \
                .fit(X[:400], y[:400]).predict_interval(X[400:])
            covered[kind].append(np.mean((lo <= y[400:]) & (y[400:] <= hi)))
    for kind in covered:
        assert 0.86 <= np.mean(covered[kind]) <= 0.95, (kind, covered[kind])


def test_bad_cqr_score_names_the_value():
    X, y = _data(30)
    with pytest.raises(InvalidParameterError, match="cqr_score='both'"):
        ConformalRegressor(Ridge(), method="cqr", cqr_score="both").fit(X, y)


@pytest.mark.parametrize("kind", ["symmetric", "asymmetric"])
def test_saved_cqr_state_gives_the_same_bounds(kind, tmp_path):
    from skframe.persistence import load_bundle, save
    from skframe.uncertainty import interval_bounds, interval_state

    X, Y = _data(120, d=2)
    Xt, _ = _data(8, seed=1, d=2)
    base = JointQuantileRegressor(kernel_params={"gamma": 2.0}, sketch_size=20, random_state=0)
    model = ConformalRegressor(base, method="cqr", random_state=0, cqr_score=kind).fit(X, Y)
    point = clone(_ridge()).fit(X, Y)
    save(point, tmp_path / "m.skf", extra={"interval": interval_state(model, 0.9)})
    point, extra = load_bundle(tmp_path / "m.skf")
    assert extra["interval"]["cqr_score"] == kind
    lo, hi = interval_bounds(extra["interval"], point, Xt)
    ref_lo, ref_hi = model.predict_interval(Xt)
    np.testing.assert_allclose(lo, ref_lo, rtol=1e-12)
    np.testing.assert_allclose(hi, ref_hi, rtol=1e-12)


def test_cqr_state_without_a_score_name_is_symmetric(tmp_path):
    # model files written before the asymmetric score keep no cqr_score: they load as symmetric
    from skframe.persistence import load_bundle, save
    from skframe.uncertainty import interval_bounds, interval_state

    X, y = _data(120)
    base = JointQuantileRegressor(kernel_params={"gamma": 2.0}, sketch_size=20, random_state=0)
    model = ConformalRegressor(base, method="cqr", random_state=0).fit(X, y)
    state = interval_state(model, 0.9)
    assert state.pop("cqr_score") == "symmetric"
    save(clone(_ridge()).fit(X, y), tmp_path / "old.skf", extra={"interval": state})
    point, extra = load_bundle(tmp_path / "old.skf")
    lo, hi = interval_bounds(extra["interval"], point, X[:6])
    ref_lo, ref_hi = model.predict_interval(X[:6])
    np.testing.assert_allclose(lo[:, 0], ref_lo, rtol=1e-12)
    np.testing.assert_allclose(hi[:, 0], ref_hi, rtol=1e-12)
    with pytest.raises(InvalidParameterError, match="unknown CQR score 'median'"):
        interval_bounds(dict(state, cqr_score="median"), point, X[:6])


@pytest.mark.parametrize("budget", [256 * 2**20, 2 * 10**9, 3 * 10**6])
def test_pass_plan_shares_the_budget(budget):
    from skframe.uncertainty._shared_folds import MIN_PASS_ROWS, pass_plan

    n, m, r, K, d, s_prime = 200_000, 895, 895, 5, 1, 17_166
    rows, block, keep = pass_plan(budget, n, m, r, K, d, s_prime, 4096)
    per_row = 8 * (m + 2 * r + K * d)
    fixed = 8 * (K * r * (r + d + 1) + r * r + s_prime * K * d)
    assert MIN_PASS_ROWS <= rows <= 4096 and block <= min(64_000_000, budget // 8)
    if rows > MIN_PASS_ROWS:
        assert rows * per_row <= budget // 8
        assert block + rows * per_row + fixed + keep <= budget
    assert keep >= 0


def test_shared_folds_within_a_memory_budget_equal_the_recomputed_residuals():
    # the estimator's memory budget sets the chunks (120 rows here) and the kept float32 features; the residuals
    # equal those of the fold weights on the sampled points (no kept features) to the float32 rounding
    from skframe.uncertainty import _shared_folds

    X, Y = _data(600, d=2)
    est = clone(_ridge()).set_params(sketch_size=40, lam=0.1, memory_budget=1_000_000)
    fold_of = np.arange(600) % 5
    full, folds, R = _shared_folds.fit_shared_folds(est, X, Y, fold_of, 5)
    m, r = full.posterior_["UD"].shape
    rows, block, _ = _shared_folds.pass_plan(1_000_000, 600, m, r, 5, 2, len(full.X_fit_), 4096)
    assert rows < 600 and block == 125_000
    _, folds_ref, R_ref = _shared_folds.fit_shared_folds(est, X, Y, fold_of, 5, chunk_rows=61, budget_bytes=0)
    np.testing.assert_allclose(R, R_ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(folds.coefs, folds_ref.coefs, rtol=1e-10, atol=1e-10)


def test_shared_folds_with_lam_auto_use_the_lambda_chosen_on_all_rows():
    X, y = _data(200)
    Xt, _ = _data(10, seed=1)
    auto = ConformalRegressor(clone(_ridge()).set_params(lam="auto"), method="cv+", cv=4, random_state=2,
                              sketch_sharing="shared").fit(X, y)
    lam = float(auto.estimator_.lam_path_[-1])
    assert lam != 1e-3 and auto.estimator_.fit_info_["lam"]
    fixed = ConformalRegressor(clone(_ridge()).set_params(lam=lam), method="cv+", cv=4, random_state=2,
                               sketch_sharing="shared").fit(X, y)
    for a, b in zip(auto.predict_interval(Xt), fixed.predict_interval(Xt)):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9)
