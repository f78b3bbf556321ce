"""SketchedKernelRidge: exact and sketched closed forms, scikit-learn compatibility, errors."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.kernel_ridge import KernelRidge
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from skframe.contract.registry import list_components
from skframe.exceptions import InvalidInputError, InvalidParameterError, UnknownComponentError
from skframe.models import SketchedKernelRidge
from skframe_sketches.sketches import GaussianSketch, PSparsifiedSketch, SubSampleSketch
from tests.naive import RBF, naive_krr, naive_sketched_krr, naive_sketched_krr_predict


def _has_gaussian_kernel():
    return any(c.name == "gaussian" for c in list_components("kernel"))


needs_kernel_plugin = pytest.mark.skipif(
    not _has_gaussian_kernel(), reason="the built-in 'gaussian' kernel plugin is not available"
)



def gaussian_kwargs(gamma):
    """Estimator kwargs for a Gaussian kernel: the registry name when available, else an object."""
    if _has_gaussian_kernel():
        return {"kernel": "gaussian", "kernel_params": {"gamma": gamma}}
    return {"kernel": RBF(gamma)}


class Recording:
    """Sketch object wrapper that remembers the drawn SketchMatrix."""

    def __init__(self, inner):
        self.inner = inner
        self.drawn = None

    def draw(self, n, rng, *, X=None, kernel=None):
        self.drawn = self.inner.draw(n, rng, X=X, kernel=kernel)
        return self.drawn


@pytest.fixture(scope="module")
def reg_data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(60, 3))
    Y = np.c_[np.sin(3 * X[:, 0]) + X[:, 1] ** 2, np.cos(2 * X[:, 2]), X[:, 0] * X[:, 1]]
    Y = Y + 0.05 * rng.normal(size=Y.shape)
    X_te = rng.uniform(-1, 1, size=(25, 3))
    return X, Y, X_te


# ------------------------------------------------------------------ closed forms


@pytest.mark.parametrize("lam", [1e-4, 1e-2])
def test_exact_equals_sklearn_kernel_ridge(reg_data, lam):
    X, Y, X_te = reg_data
    g, n = 0.7, X.shape[0]
    model = SketchedKernelRidge(**gaussian_kwargs(g), sketch=None, lam=lam, fit_intercept=False).fit(X, Y)
    ref = KernelRidge(alpha=n * lam, kernel="rbf", gamma=g).fit(X, Y)
    np.testing.assert_allclose(model.predict(X_te), ref.predict(X_te), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(model.coef_, ref.dual_coef_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(model.coef_, naive_krr(rbf_kernel(X, gamma=g), Y, lam), rtol=1e-8)
    m1 = SketchedKernelRidge(**gaussian_kwargs(g), sketch="none", lam=lam, fit_intercept=False).fit(X, Y[:, 0])
    np.testing.assert_allclose(m1.predict(X_te), ref.predict(X_te)[:, 0], rtol=1e-8, atol=1e-10)
    assert m1.predict(X_te).shape == (X_te.shape[0],)
    assert model.sketch_info_["name"] == "none"


@pytest.mark.parametrize("lam", [1e-4, 1e-2])
def test_exact_with_intercept_equals_kernel_ridge_on_centred_targets(reg_data, lam):
    X, Y, X_te = reg_data
    g, n = 0.7, X.shape[0]
    Y = Y + np.array([3.0, -2.0, 0.5])
    model = SketchedKernelRidge(**gaussian_kwargs(g), sketch=None, lam=lam).fit(X, Y)
    mean = Y.mean(axis=0)
    ref = KernelRidge(alpha=n * lam, kernel="rbf", gamma=g).fit(X, Y - mean)
    np.testing.assert_allclose(model.predict(X_te), ref.predict(X_te) + mean, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(model.intercept_, mean)
    np.testing.assert_allclose(model.coef_, naive_krr(rbf_kernel(X, gamma=g), Y - mean, lam), rtol=1e-8)


@pytest.mark.parametrize(
    "sketch",
    [lambda n: GaussianSketch(n), lambda n: SubSampleSketch(n)],
    ids=["gaussian-m=n", "subsample-all"],
)
def test_full_sketch_reproduces_exact(reg_data, sketch):
    """With R of rank n the sketched estimator IS exact KRR (up to rounding in K's conditioning)."""
    X, Y, X_te = reg_data
    g, lam, n = 0.7, 1e-3, X.shape[0]
    exact = SketchedKernelRidge(**gaussian_kwargs(g), sketch=None, lam=lam).fit(X, Y)
    sk = SketchedKernelRidge(**gaussian_kwargs(g), sketch=sketch(n), lam=lam, random_state=0).fit(X, Y)
    assert sk.sketch_info_["rank"] == n
    # cond(K) ~ 1e5 here; both routes are backward stable, so 1e-9 relative is the honest tolerance.
    P0, P1 = exact.predict(X_te), sk.predict(X_te)
    assert np.abs(P1 - P0).max() <= 1e-9 * np.abs(P0).max()


@pytest.mark.parametrize(
    "make",
    [
        lambda: PSparsifiedSketch(10, p=0.1),
        lambda: PSparsifiedSketch(10, p=0.1, distribution="gaussian"),
        lambda: GaussianSketch(10),
        lambda: SubSampleSketch(10),
    ],
    ids=["psr", "psg", "gaussian", "subsample"],
)
def test_sketched_closed_form_equals_dense_formula(reg_data, make):
    X, Y, X_te = reg_data
    g, lam = 0.7, 1e-3
    rec = Recording(make())
    model = SketchedKernelRidge(**gaussian_kwargs(g), sketch=rec, lam=lam, fit_intercept=False,
                                random_state=3).fit(X, Y)
    R = rec.drawn.toarray()
    K, K_te = rbf_kernel(X, gamma=g), rbf_kernel(X_te, X, gamma=g)
    gam = naive_sketched_krr(K, R, Y, lam)
    P0 = naive_sketched_krr_predict(K_te, R, gam)
    P1 = model.predict(X_te)
    assert np.abs(P1 - P0).max() <= 1e-8 * np.abs(P0).max()
    # training-point coefficients alpha = R^T gamma, restricted to the sampled points
    alpha = (R.T @ gam)[rec.drawn.indices]
    assert np.abs(model.coef_ - alpha).max() <= 1e-7 * np.abs(alpha).max()


def test_multi_output_equals_per_column(reg_data):
    X, Y, X_te = reg_data
    kw = dict(**gaussian_kwargs(0.5), sketch="psr", sketch_size=15, lam=1e-3, random_state=7)
    P = SketchedKernelRidge(**kw).fit(X, Y).predict(X_te)
    assert P.shape == (X_te.shape[0], Y.shape[1])
    for j in range(Y.shape[1]):
        pj = SketchedKernelRidge(**kw).fit(X, Y[:, j]).predict(X_te)
        np.testing.assert_allclose(P[:, j], pj, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("sketch", ["psr", "psg", "gaussian", "subsample", "accumulation", "countsketch", "leverage",
                                    "rff"])
def test_random_state_reproducible(reg_data, sketch):
    X, Y, X_te = reg_data
    kw = dict(**gaussian_kwargs(0.5), sketch=sketch, sketch_size=12, lam=1e-3)
    a = SketchedKernelRidge(**kw, random_state=1).fit(X, Y).predict(X_te)
    b = SketchedKernelRidge(**kw, random_state=1).fit(X, Y).predict(X_te)
    c = SketchedKernelRidge(**kw, random_state=2).fit(X, Y).predict(X_te)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)
    rs = np.random.RandomState(4)
    d = SketchedKernelRidge(**kw, random_state=rs).fit(X, Y).predict(X_te)
    assert d.shape == a.shape


def test_sketch_info(reg_data):
    X, Y, _ = reg_data
    m = SketchedKernelRidge(**gaussian_kwargs(0.5), sketch="psr", sketch_size=12,
                            sketch_params={"p": 0.2}, random_state=0).fit(X, Y)
    info = m.sketch_info_
    assert info["name"] == "psr" and info["m"] == 12 and info["n"] == X.shape[0]
    assert info["p"] == 0.2 and 0 < info["s_prime"] <= X.shape[0] and info["rank"] <= 12
    assert m.X_fit_.shape[0] == info["s_prime"] and m.coef_.shape == (info["s_prime"], Y.shape[1])
    assert m.fit_seconds_ > 0


def test_rff_fits(reg_data):
    X, Y, X_te = reg_data
    m = SketchedKernelRidge(**gaussian_kwargs(0.5), sketch="rff", sketch_size=300, lam=1e-4, random_state=0).fit(X, Y)
    assert m.sketch_info_["feature_map"] and m.predict(X_te).shape == (X_te.shape[0], Y.shape[1])
    assert m.score(X, Y) > 0.8


def test_sparse_input_equals_dense(reg_data):
    X, Y, X_te = reg_data
    rng = np.random.default_rng(0)
    Xd = X * (rng.random(X.shape) < 0.6)
    Xs = sp.csr_matrix(Xd)
    for sketch in (None, "psr", "subsample"):
        kw = dict(**gaussian_kwargs(0.5), sketch=sketch, sketch_size=12, lam=1e-3, random_state=0)
        Pd = SketchedKernelRidge(**kw).fit(Xd, Y).predict(X_te)
        Ps = SketchedKernelRidge(**kw).fit(Xs, Y).predict(sp.csr_matrix(X_te))
        np.testing.assert_allclose(Ps, Pd, rtol=1e-10, atol=1e-12)


# ------------------------------------------------------------------ scikit-learn API


def test_clone_pipeline_gridsearch(reg_data):
    X, Y, X_te = reg_data
    est = SketchedKernelRidge(**gaussian_kwargs(0.5), sketch="psr", sketch_size=10, random_state=0)
    c = clone(est)
    assert c.get_params()["sketch_size"] == 10 and not hasattr(c, "coef_")
    pipe = make_pipeline(StandardScaler(), est).fit(X, Y[:, 0])
    assert pipe.predict(X_te).shape == (X_te.shape[0],)
    gs = GridSearchCV(est, {"lam": [1e-4, 1e-2], "sketch_size": [5, 10]}, cv=3).fit(X, Y[:, 0])
    assert gs.best_params_["lam"] in (1e-4, 1e-2)
    assert gs.predict(X_te).shape == (X_te.shape[0],)


def _estimators_for_checks():
    if _has_gaussian_kernel():
        return [
            SketchedKernelRidge(kernel_params={"gamma": 0.5}, sketch_size=5, random_state=0),
            SketchedKernelRidge(sketch=None),
        ]
    return []


if _has_gaussian_kernel():

    def _weight_checks(estimator):
        """The sketch is drawn from the training rows and the default gamma="scale" is computed from them: rows
        repeated by integer weights change the features (tests/models/test_sample_weight.py checks the
        equivalence on the same features and bandwidth)."""
        why = ("the sketch and gamma='scale' are computed from the training rows, so repeated rows change the "
               "features")
        return {"check_sample_weight_equivalence_on_dense_data": why,
                "check_sample_weight_equivalence_on_sparse_data": why}

    @parametrize_with_checks(_estimators_for_checks(), expected_failed_checks=_weight_checks)
    def test_sklearn_estimator_checks(estimator, check):
        check(estimator)

else:  # pragma: no cover - only while the kernel plugin is missing

    @pytest.mark.skip(reason="the built-in 'gaussian' kernel plugin is not available")
    def test_sklearn_estimator_checks():
        pass


# ------------------------------------------------------------------ errors


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_input(reg_data, bad):
    X, Y, X_te = reg_data
    Xb = X.copy()
    Xb[3, 1] = bad
    est = SketchedKernelRidge(**gaussian_kwargs(0.5), sketch_size=5, random_state=0)
    with pytest.raises(InvalidInputError):
        est.fit(Xb, Y)
    with pytest.raises(ValueError):
        est.fit(Xb, Y)
    Yb = Y.copy()
    Yb[0, 0] = bad
    with pytest.raises(InvalidInputError):
        est.fit(X, Yb)
    est.fit(X, Y)
    Xt = X_te.copy()
    Xt[0, 0] = bad
    with pytest.raises(InvalidInputError):
        est.predict(Xt)


def test_unknown_names(reg_data):
    X, Y, _ = reg_data
    with pytest.raises(UnknownComponentError, match=r"registered sketches: .*psr") as ei:
        SketchedKernelRidge(**gaussian_kwargs(0.5), sketch="pSRR").fit(X, Y)
    assert "accumulation" in str(ei.value) and "'pSRR'" in str(ei.value)
    assert isinstance(ei.value, LookupError)
    with pytest.raises(UnknownComponentError, match="unknown kernel 'no-such-kernel'; registered kernels") as ei:
        SketchedKernelRidge(kernel="no-such-kernel").fit(X, Y)
    if _has_gaussian_kernel():
        assert "gaussian" in str(ei.value)


@pytest.mark.parametrize(
    "params",
    [{"lam": 0}, {"lam": -1.0}, {"lam": [1e-3, 0.0]}, {"sketch_size": 0}, {"sketch_size": "big"}, {"rtol": 2.0},
     {"sketch_params": {"p": 1.5}}, {"fit_intercept": "yes"}, {"random_state": "seed"}],
)
def test_bad_parameters(reg_data, params):
    X, Y, _ = reg_data
    with pytest.raises(InvalidParameterError):
        SketchedKernelRidge(**gaussian_kwargs(0.5), sketch="psr", **params).fit(X, Y)


def test_predict_before_fit():
    from skframe.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        SketchedKernelRidge().predict(np.zeros((2, 2)))


def test_wrong_feature_count(reg_data):
    X, Y, _ = reg_data
    est = SketchedKernelRidge(**gaussian_kwargs(0.5), sketch_size=5, random_state=0).fit(X, Y)
    with pytest.raises(InvalidInputError):
        est.predict(X[:, :2])
