"""Sample weights of the structured models: the weights enter the square loss of the input-side regression
(weighted kernel ridge to the output coordinates), so a weighted fit equals the fit on rows repeated by integer
weights when both fits use the same sketches, and zero weights equal dropping the rows."""

import numpy as np
import pytest
import scipy.sparse as sp

from skframe.core.sketching import SketchMatrix
from skframe.exceptions import InvalidInputError
from skframe.models import OutputKernelRegressor
from tests._structured_helpers import GaussK, multilabel_data


class _FixedSketch:
    """A sketch that samples given points: the rows ``{n: indices}`` for a fit on ``n`` rows, the same mixing
    matrix each time (identity: a sub-sampling sketch; dense: a mixing sketch on the sampled points)."""

    def __init__(self, rows, mix):
        self.rows, self.mix = rows, mix

    def draw(self, n, rng, X=None, kernel=None):
        return SketchMatrix(n, self.rows[n], self.mix, {"name": "fixed"})


def _data(n=60, seed=0):
    X, Y = multilabel_data(n=n, seed=seed)
    w = np.random.default_rng(seed + 1).integers(0, 4, size=n).astype(float)
    w[0] = 2.0
    return X, Y, w


def _model(**kw):
    base = dict(input_kernel=GaussK(0.2), output_kernel=GaussK(0.3), lam=1e-3, random_state=0)
    return OutputKernelRegressor(**dict(base, **kw))


def _sketches(w, which, dense_mix):
    """The same sampled points for the fit on the rows (weights ``w``) and on the repeated rows."""
    n = len(w)
    rep = np.repeat(np.arange(n), w.astype(int))
    positive = np.flatnonzero(w > 0)
    first = {i: int(np.flatnonzero(rep == i)[0]) for i in positive}  # where row i first lies among the repeats
    picks = positive[::3]
    rows = {positive.size: np.searchsorted(positive, picks), rep.size: np.array([first[i] for i in picks])}
    mix = np.random.default_rng(5).normal(size=(8, picks.size)) if dense_mix else np.eye(picks.size)
    kw = {}
    if which in ("input", "both"):
        kw["input_sketch"] = _FixedSketch(rows, mix)
    if which in ("output", "both"):
        kw["output_sketch"] = _FixedSketch(rows, mix)
    return kw


@pytest.mark.parametrize("which,dense_mix", [(None, False), ("input", False), ("input", True), ("output", False),
                                             ("both", True)])
def test_weights_equal_repeated_rows(which, dense_mix):
    X, Y, w = _data()
    Xte, _ = multilabel_data(n=12, seed=9)
    rep = np.repeat(np.arange(len(X)), w.astype(int))
    kw = _sketches(w, which, dense_mix) if which else {}
    weighted = _model(**kw).fit(X, Y, sample_weight=w)
    repeated = _model(**kw).fit(X[rep], Y[rep])
    np.testing.assert_array_equal(weighted.candidates_, repeated.candidates_)
    np.testing.assert_allclose(weighted.decision_function(Xte), repeated.decision_function(Xte), atol=1e-8)
    np.testing.assert_array_equal(weighted.predict(Xte), repeated.predict(Xte))


def test_shuffled_weighted_rows_equal_repeated_rows():
    """scikit-learn's sample-weight equivalence check, with a fixed bandwidth and the candidates aligned: the
    weighted rows shuffled, the repeated ones in order, integer weights with zeros, 1-D integer targets."""
    from sklearn.utils import shuffle

    rng = np.random.RandomState(42)
    X, y, w = rng.rand(15, 30), rng.randint(0, 3, size=15), rng.randint(0, 5, size=15)
    Xs, ys, ws = shuffle(X, y, w, random_state=0)
    for fmt in (np.asarray, sp.csr_matrix):
        kw = dict(input_kernel_params={"gamma": 0.4}, output_kernel_params={"gamma": 0.5})
        repeated = OutputKernelRegressor(**kw).fit(fmt(X.repeat(w, axis=0)), y.repeat(w))
        weighted = OutputKernelRegressor(**kw).fit(fmt(Xs), ys, sample_weight=ws)
        a, b = np.argsort(repeated.candidates_.ravel()), np.argsort(weighted.candidates_.ravel())
        np.testing.assert_allclose(repeated.decision_function(fmt(X))[:, a], weighted.decision_function(fmt(X))[:, b],
                                   rtol=1e-7, atol=1e-9)
        np.testing.assert_array_equal(repeated.predict(fmt(X)), weighted.predict(fmt(X)))


@pytest.mark.parametrize("kw", [{}, {"input_sketch": "subsample", "input_sketch_size": 20},
                                {"output_sketch": "gaussian", "output_sketch_size": 20},
                                {"input_sketch": "rff", "input_sketch_size": 30, "input_kernel": "gaussian",
                                 "input_kernel_params": {"gamma": 0.2}},
                                {"input_sketch": "gaussian", "output_sketch": "subsample", "n_draws": 2}])
def test_zero_weights_equal_dropped_rows(kw):
    X, Y, w = _data()
    Xte, _ = multilabel_data(n=12, seed=9)
    keep = w > 0
    weighted = _model(**kw).fit(X, Y, sample_weight=w)
    dropped = _model(**kw).fit(X[keep], Y[keep], sample_weight=w[keep])
    np.testing.assert_array_equal(weighted.candidates_, dropped.candidates_)
    np.testing.assert_allclose(weighted.decision_function(Xte), dropped.decision_function(Xte), atol=1e-10)
    # 0/1 weights: the unweighted fit on the kept rows, sketches drawn alike
    zero_one = _model(**kw).fit(X, Y, sample_weight=keep * 1.0)
    plain = _model(**kw).fit(X[keep], Y[keep])
    np.testing.assert_allclose(zero_one.decision_function(Xte), plain.decision_function(Xte), atol=1e-10)


@pytest.mark.parametrize("kw", [{}, {"input_sketch": "gaussian", "input_sketch_size": 20},
                                {"input_sketch": "rff", "input_sketch_size": 30, "input_kernel": "gaussian",
                                 "input_kernel_params": {"gamma": 0.2}}])
def test_weighted_fit_is_the_weighted_normal_equations(kw):
    """The input map minimises (1/n) sum_i w_i ||g(x_i) - T_i||^2 + lam ||g||^2 (weights of mean 1), checked
    against the plain NumPy solution on the fitted sketch's features; the weights' scale does not matter."""
    X, Y, w = _data()
    w = w + 0.5
    model = _model(**kw).fit(X, Y, sample_weight=w)
    scaled = _model(**kw).fit(X, Y, sample_weight=7.0 * w)
    np.testing.assert_allclose(model.draws_[0].coef, scaled.draws_[0].coef, rtol=1e-9, atol=1e-12)
    n, lam, wm = len(X), 1e-3, w * len(w) / w.sum()
    member = model._new_fit(X, Y, sample_weight=w).represent()[0]  # the same draws as the fit
    T, d = member.T, model.draws_[0]  # the output side's targets (no weights there)
    if d.fmap is not None:  # random features: the ridge on Z
        Z = d.fmap.transform(X)
        coef = np.linalg.solve(Z.T @ (wm[:, None] * Z) + n * lam * np.eye(Z.shape[1]), Z.T @ (wm[:, None] * T))
        np.testing.assert_allclose(d.coef, coef, rtol=1e-7, atol=1e-9)
        return
    K = model.input_kernel_(X, X)
    if member.R_X is None:  # exact: (W K + n lam I) a = W T
        coef = np.linalg.solve(wm[:, None] * K + n * lam * np.eye(n), wm[:, None] * T)
        np.testing.assert_allclose(K @ d.coef, K @ coef, rtol=1e-7, atol=1e-9)
        return
    R = member.R_X.toarray()  # (R K W K R^T + n lam R K R^T) b = R K W T, the function K R^T b
    KR = K @ R.T
    b = np.linalg.lstsq(KR.T @ (wm[:, None] * KR) + n * lam * R @ K @ R.T, KR.T @ (wm[:, None] * T), rcond=None)[0]
    np.testing.assert_allclose(model.surrogate_predict(X)[0], KR @ b, rtol=1e-6, atol=1e-8)


def test_equal_weights_are_the_unweighted_fit():
    X, Y, _ = _data()
    for kw in ({}, {"input_sketch": "subsample", "output_sketch": "gaussian"}):
        a = _model(**kw).fit(X, Y)
        b = _model(**kw).fit(X, Y, sample_weight=np.full(len(X), 3.0))
        np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))


def test_weighted_auto_lam_and_score():
    X, Y, w = _data()
    model = _model(lam="auto").fit(X, Y, sample_weight=w)
    assert model.fit_info_["lam"]["chosen"] in model.fit_info_["lam"]["grid"]
    keep = w > 0
    s = model.score(X, Y, sample_weight=w)
    rows = np.repeat(np.arange(len(X)), w.astype(int))
    np.testing.assert_allclose(s, model.score(X[rows], Y[rows]), rtol=1e-12)
    assert np.isclose(model.score(X, Y, sample_weight=keep * 1.0), model.score(X[keep], Y[keep]))


def test_bad_weights_are_refused():
    X, Y, w = _data()
    with pytest.raises(InvalidInputError, match="one weight per sample"):
        _model().fit(X, Y, sample_weight=w[:-1])
    with pytest.raises(InvalidInputError, match="non-negative"):
        _model().fit(X, Y, sample_weight=-w)
    with pytest.raises(InvalidInputError, match="every sample weight is zero"):
        _model().fit(X, Y, sample_weight=0 * w)
    with pytest.raises(InvalidInputError, match="finite"):
        _model().fit(X, Y, sample_weight=np.full(len(X), np.nan))


def test_kernel_search_routes_the_weights_as_grid_search_does():
    """KernelSearchCV with sample_weight: each fold fitted with its rows' weights and scored (minus the weighted
    surrogate error) with its held-out rows' weights, as GridSearchCV with routed weights."""
    import sklearn
    from sklearn.base import clone
    from sklearn.model_selection import GridSearchCV, KFold

    from skframe.model_selection import KernelSearchCV

    X, Y, w = _data()
    w = w + 0.5
    est, grid, cv = _model(), {"lam": [1e-4, 1e-2]}, KFold(3, shuffle=True, random_state=0)
    ours = KernelSearchCV(est, grid, cv=cv).fit(X, Y, sample_weight=w)
    with sklearn.config_context(enable_metadata_routing=True):
        routed = clone(est).set_fit_request(sample_weight=True).set_score_request(sample_weight=True)
        ref = GridSearchCV(routed, grid, cv=cv).fit(X, Y, sample_weight=w)
    np.testing.assert_allclose(ours.cv_results_["mean_test_score"], ref.cv_results_["mean_test_score"], rtol=1e-10)
