"""The effective dimension of the sketched features at the fitted lam, and the sketch's saturation."""

import numpy as np
import pytest

from skframe.models import SketchedKernelClassifier, SketchedKernelRidge
from skframe.models._fit import Fit
from skframe.models._sizes import SATURATION_MAX_FEATURES, effective_dimension
from tests.naive import naive_effective_dimension


@pytest.mark.parametrize("shape", [(60, 8), (5, 12)])  # more rows than features, and fewer
@pytest.mark.parametrize("weighted", [False, True])
def test_effective_dimension_matches_the_trace_formula(shape, weighted):
    rng = np.random.default_rng(0)
    Z = rng.normal(size=shape)
    w = rng.uniform(0.2, 3.0, size=shape[0]) if weighted else None
    for lam in (1e-4, 0.1, 10.0):
        d_eff, saturation = effective_dimension(Z, lam, w)
        expected = naive_effective_dimension(Z, lam, w)
        assert d_eff == pytest.approx(expected, rel=1e-10)
        assert saturation == pytest.approx(expected / shape[1], rel=1e-10)


def test_integer_weights_equal_repeated_rows():
    rng = np.random.default_rng(1)
    Z = rng.normal(size=(30, 6))
    w = rng.integers(0, 4, size=30)
    assert effective_dimension(Z, 0.05, w)[0] == pytest.approx(
        effective_dimension(np.repeat(Z, w, axis=0), 0.05)[0], rel=1e-10)


def test_effective_dimension_on_evenly_spaced_rows():
    rng = np.random.default_rng(2)
    Z = rng.normal(size=(50, 4))
    rows = np.unique(np.linspace(0, 49, 10).astype(np.intp))
    assert effective_dimension(Z, 0.3, max_rows=10)[0] == pytest.approx(
        naive_effective_dimension(Z[rows], 0.3), rel=1e-10)


def test_effective_dimension_falls_with_lam_and_is_bounded_by_the_features():
    Z = np.random.default_rng(3).normal(size=(40, 5))
    values = [effective_dimension(Z, lam)[0] for lam in (1e-8, 1e-2, 1.0, 100.0)]
    assert values == sorted(values, reverse=True)
    assert 0.0 < values[-1] < values[0] <= 5.0


@pytest.mark.parametrize("lam", [0.0, -1.0, float("nan"), "auto", None])
def test_effective_dimension_not_computed_without_a_positive_lam(lam):
    assert effective_dimension(np.ones((4, 2)), lam) is None


def test_effective_dimension_not_computed_for_many_features_or_other_arrays():
    assert effective_dimension(np.ones((3, SATURATION_MAX_FEATURES + 1)), 1.0) is None
    assert effective_dimension([[1.0, 0.0], [0.0, 1.0]], 1.0) is None  # not an ndarray (e.g. a GPU array)


def _two_moons(n=400):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 2))
    return X, np.where(X[:, 0] * X[:, 1] + 0.2 * rng.normal(size=n) > 0, "a", "b")


def test_fitted_classifier_reports_the_saturation_of_its_sketch():
    X, y = _two_moons()
    small = SketchedKernelClassifier(loss="logistic", kernel_params={"gamma": 1.0}, sketch_size=30, lam=1e-7,
                                     random_state=0).fit(X, y)
    large = SketchedKernelClassifier(loss="logistic", kernel_params={"gamma": 1.0}, sketch_size=30, lam=1e-1,
                                     random_state=0).fit(X, y)
    for model in (small, large):
        info = model.sketch_info_
        assert 0.0 < info["saturation"] <= 1.0
        assert info["effective_dimension"] == pytest.approx(info["saturation"] * info["rank"])
    assert small.sketch_info_["saturation"] > 0.9 > large.sketch_info_["saturation"]


def test_saturation_uses_the_weights_and_the_fitted_features():
    X, y = _two_moons(200)
    w = np.where(y == "a", 3.0, 1.0)
    params = {"loss": "logistic", "kernel_params": {"gamma": 1.0}, "sketch_size": 20, "lam": 1e-3, "random_state": 0}
    model = SketchedKernelClassifier(**params).fit(X, y, sample_weight=w)
    # the same draw (same random_state): the features the fit solved on
    Z = Fit.of(SketchedKernelClassifier(**params), X, y, sample_weight=w).represent().Z
    expected = naive_effective_dimension(Z, 1e-3, w)
    assert model.sketch_info_["effective_dimension"] == pytest.approx(expected, rel=1e-8)
    assert model.sketch_info_["effective_dimension"] != pytest.approx(naive_effective_dimension(Z, 1e-3), rel=1e-6)


def test_ridge_reports_saturation_in_memory_only():
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(1500, 3)), rng.normal(size=1500)
    params = {"kernel_params": {"gamma": 0.5}, "sketch": "subsample", "sketch_size": 40, "lam": 1e-3,
              "random_state": 0}
    in_memory = SketchedKernelRidge(**params).fit(X, Y)
    assert in_memory.representation_ == "in-memory" and 0.0 < in_memory.sketch_info_["saturation"] <= 1.0
    streamed = SketchedKernelRidge(memory_budget="20MB", **params).fit(X, Y)
    assert streamed.representation_ == "accumulated" and "saturation" not in streamed.sketch_info_
    exact = SketchedKernelRidge(sketch=None, lam=1e-3).fit(X[:80], Y[:80])
    assert "saturation" not in exact.sketch_info_


def test_a_spectrum_computed_once_serves_every_lam():
    from skframe.models._sizes import feature_spectrum

    rng = np.random.default_rng(4)
    Z, w = rng.normal(size=(70, 9)), rng.uniform(0.5, 2.0, size=70)
    s = feature_spectrum(Z, w)
    for lam in (1e-6, 1e-2, 3.0):
        assert effective_dimension(None, lam, spectrum=s) == pytest.approx(effective_dimension(Z, lam, w), rel=1e-12)


def test_the_spectrum_is_estimated_only_where_it_is_cheap_beside_the_fit():
    from skframe.models._sizes import SATURATION_ROWS, spectrum_rows

    assert spectrum_rows(np.empty((400, 30))) == 400  # small: every row
    assert spectrum_rows(np.empty((20_000, 283))) == 1000  # a twentieth of the rows: at most 10 % of the products
    assert spectrum_rows(np.empty((10**6, 1000))) == SATURATION_ROWS
    assert spectrum_rows(np.empty((2000, 300))) == 0  # as costly as the fit's own products: skipped
    assert spectrum_rows(np.empty((10**6, SATURATION_MAX_FEATURES + 1))) == 0


def test_a_saturated_auto_sketch_of_a_classifier_is_grown_once():
    from skframe.models._grow import GROW_FACTOR, GROW_SATURATION

    X, y = _two_moons(3600)  # auto size ceil(2 sqrt(3600)) = 120
    params = {"loss": "logistic", "kernel_params": {"gamma": 1.0}, "random_state": 0}
    grown = SketchedKernelClassifier(lam=1e-9, **params).fit(X, y)
    info = grown.sketch_info_
    assert info["grown_from"] == 120 and info["m"] == GROW_FACTOR * 120
    assert "grown 4x to 480" in info["size_rule"] and "probe of m=120" in info["size_rule"]
    assert grown.execution_["sketch_size"] == 480 and "grown" in grown.execution_["size_rule"]
    # the probe's decision agrees with the saturation a fit at the auto size reports
    first = SketchedKernelClassifier(lam=1e-9, sketch_size=120, **params).fit(X, y)
    assert first.sketch_info_["saturation"] > GROW_SATURATION and info["probe_saturation"] > GROW_SATURATION
    # the larger sketch resolves what the saturated one could not: no worse on the training rows
    assert grown.score(X, y) >= first.score(X, y) - 0.01
    assert set(grown.predict(X)) <= {"a", "b"}


@pytest.mark.parametrize("change", ["large_lam", "given_size", "lam_auto", "ridge"])
def test_the_sketch_is_not_grown(change):
    X, y = _two_moons(3600)
    params = {"loss": "logistic", "kernel_params": {"gamma": 1.0}, "random_state": 0, "lam": 1e-9}
    if change == "large_lam":  # not saturated
        params["lam"] = 1e-1
    if change == "given_size":
        params["sketch_size"] = 120
    if change == "lam_auto":
        params["lam"] = "auto"
    if change == "ridge":  # the regressors keep the auto size
        model = SketchedKernelRidge(kernel_params={"gamma": 1.0}, lam=1e-9, random_state=0).fit(
            X, (y == "a").astype(float))
    else:
        model = SketchedKernelClassifier(**params).fit(X, y)
    assert "grown_from" not in model.sketch_info_ and model.sketch_info_["m"] == 120
    assert "grown" not in model.sketch_info_["size_rule"]


def test_the_probe_is_the_saturation_of_nystrom_features_on_evenly_spaced_rows():
    from skframe.models._grow import probe_saturation
    from skframe_kernels.kernels import GaussianKernel

    rng = np.random.default_rng(5)
    X, w = rng.normal(size=(300, 5)), rng.uniform(0.5, 2.0, size=300)
    kernel = GaussianKernel(gamma=0.2)
    L, R = np.unique(np.linspace(0, 299, 40).astype(np.intp)), np.unique(np.linspace(0, 299, 100).astype(np.intp))
    K_LL = kernel(X[L], X[L])
    vals, vecs = np.linalg.eigh(K_LL)
    Z = kernel(X[R], X[L]) @ (vecs / np.sqrt(vals))  # K(R, L) K(L, L)^{-1/2}
    for lam in (1e-6, 1e-3, 1e-1):
        d_eff, saturation = probe_saturation(kernel, X, 40, lam, w, rows=100)
        assert d_eff == pytest.approx(naive_effective_dimension(Z, lam, w[R]), rel=1e-6)
        assert saturation == pytest.approx(d_eff / 40, rel=1e-12)
    # a kernel of rank 2 on these rows: no growth to ask for
    assert probe_saturation(lambda A, B: A[:, :2] @ B[:, :2].T, X, 40, 1e-6, rows=100) is None


@pytest.mark.parametrize("sparse", [False, True])
def test_growth_stays_within_n_and_keeps_the_weights(sparse):
    import scipy.sparse as sp

    X, y = _two_moons(150)  # auto size 100 (the rule's floor), grown to n = 150 at most
    w = np.where(y == "a", 2.0, 1.0)
    model = SketchedKernelClassifier(loss="logistic", kernel_params={"gamma": 1.0}, lam=1e-8,
                                     random_state=0).fit(sp.csr_matrix(X) if sparse else X, y, sample_weight=w)
    assert model.sketch_info_["grown_from"] == 100 and model.sketch_info_["m"] == 150
