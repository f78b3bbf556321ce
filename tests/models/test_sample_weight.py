"""Sample and class weights of the machines: a weighted fit equals the fit on rows repeated by integer weights,
and zero weights equal dropping the rows (exact models: the same function space, so the same fitted function)."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.calibration import CalibratedClassifierCV

from skframe.exceptions import InvalidInputError, InvalidParameterError
from skframe.models import JointQuantileRegressor, SketchedKernelClassifier, SketchedKernelMachine

G = {"gamma": 0.5}  # a fixed bandwidth: "scale" would follow the repeated rows


def _data(seed=0, n=60):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + 0.4 * rng.normal(size=n) > 0, "yes", "no")
    w = rng.integers(0, 4, size=n).astype(float)
    w[0] = 2.0
    return X, y, w


def _pair(make, X, y, w, method):
    rep = np.repeat(np.arange(len(X)), w.astype(int))
    weighted = make().fit(X, y, sample_weight=w)
    repeated = make().fit(X[rep], y[rep])
    return getattr(weighted, method)(X), getattr(repeated, method)(X), weighted


@pytest.mark.parametrize("loss,tol", [("logistic", 1e-6), ("multinomial", 1e-6), ("hinge", 1e-3)])
def test_classifier_weights_equal_repeated_rows(loss, tol):
    X, y, w = _data()

    def make():
        return SketchedKernelClassifier(loss=loss, sketch=None, kernel_params={"gamma": 0.5}, lam=1e-2,
                                        solver_params={"tol": 1e-12 if loss != "hinge" else 1e-8})

    method = "decision_function"
    a, b, model = _pair(make, X, y, w, method)
    np.testing.assert_allclose(a, b, atol=tol)
    keep = w > 0
    dropped = make().fit(X[keep], y[keep])
    np.testing.assert_allclose(make().fit(X, y, sample_weight=keep * 1.0).decision_function(X),
                               dropped.decision_function(X), atol=tol)


def test_machine_and_quantile_weights_equal_repeated_rows():
    X, y, w = _data()
    t = X[:, 0] ** 2 + 0.1 * np.random.default_rng(1).normal(size=len(X))

    def machine():
        return SketchedKernelMachine(sketch=None, loss="huber", fit_intercept=False, lam=1e-2, solver="lbfgs",
                                     kernel_params=G, solver_params={"tol": 1e-14})

    a, b, model = _pair(machine, X, t, w, "predict")
    np.testing.assert_allclose(a, b, atol=1e-5)
    # Huber by default: its dual solvers take no weights, so a weighted fit runs L-BFGS
    default = SketchedKernelMachine(sketch=None, loss="huber", lam=1e-2).fit(X, t, sample_weight=w)
    assert default.solver_spec_.name == "lbfgs"

    def quantile():  # pinball: the dual solvers take the weights as a scaled box
        return JointQuantileRegressor(quantiles=(0.3, 0.7), sketch=None, lam=1e-2, fit_intercept=False, kernel_params=G,
                                      solver_params={"tol": 1e-9})

    a, b, _ = _pair(quantile, X, t, w, "predict")
    np.testing.assert_allclose(a, b, atol=1e-3)


def test_balanced_class_weight_equals_the_matching_sample_weight():
    X, y, _ = _data(n=80)
    y[:50] = "no"
    counts = {c: np.sum(y == c) for c in ("no", "yes")}
    w = np.array([len(y) / (2 * counts[c]) for c in y])
    kw = dict(loss="logistic", sketch=None, kernel_params={"gamma": 0.5}, lam=1e-2)
    a = SketchedKernelClassifier(class_weight="balanced", **kw).fit(X, y)
    b = SketchedKernelClassifier(**kw).fit(X, y, sample_weight=w)
    c = SketchedKernelClassifier(class_weight={"no": w[y == "no"][0], "yes": w[y == "yes"][0]}, **kw).fit(X, y)
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), atol=1e-10)
    np.testing.assert_allclose(a.predict_proba(X), c.predict_proba(X), atol=1e-10)


@pytest.mark.parametrize("labels", [np.array(["no", "yes"]), np.array([3, 7]), np.array([False, True])])
@pytest.mark.parametrize("loss", ["logistic", "multinomial"])
def test_probabilities_agree_with_predict_for_any_label_type(labels, loss):
    X, y, _ = _data()
    y = labels[(y == "yes").astype(int)]
    clf = SketchedKernelClassifier(loss=loss, sketch_size=20, random_state=0).fit(X, y)
    P = clf.predict_proba(X)
    assert P.shape == (len(X), 2) and np.allclose(P.sum(axis=1), 1)
    np.testing.assert_array_equal(clf.classes_[np.argmax(P, axis=1)], clf.predict(X))
    np.testing.assert_allclose(np.exp(clf.predict_log_proba(X)), P)
    assert clf.predict(X).dtype == labels.dtype


@pytest.mark.parametrize("loss", ["logistic", "multinomial"])
def test_multiclass_probabilities(loss):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 2))
    y = np.array(["a", "b", "c"])[np.argmax(X @ rng.normal(size=(2, 3)), axis=1)]
    clf = SketchedKernelClassifier(loss=loss, sketch_size=30, lam=1e-4, random_state=0).fit(X, y)
    P = clf.predict_proba(X)
    assert P.shape == (150, 3) and np.allclose(P.sum(axis=1), 1)
    np.testing.assert_array_equal(clf.classes_[np.argmax(P, axis=1)], clf.predict(X))
    assert clf.score(X, y) > 0.9


def test_hinge_has_no_probabilities_and_calibrates_through_sklearn():
    X, y, _ = _data(n=120)
    clf = SketchedKernelClassifier(sketch_size=20, random_state=0)
    assert not hasattr(clf, "predict_proba") and not hasattr(clf, "predict_log_proba")
    cal = CalibratedClassifierCV(clf, cv=3).fit(X, y)
    assert cal.predict_proba(X).shape == (120, 2)


def test_bad_weights_are_refused():
    X, y, _ = _data()
    clf = SketchedKernelClassifier(loss="logistic", sketch_size=10)
    with pytest.raises(InvalidInputError, match="one weight per sample"):
        clf.fit(X, y, sample_weight=np.ones(3))
    with pytest.raises(InvalidInputError, match="non-negative"):
        clf.fit(X, y, sample_weight=-np.ones(len(X)))
    with pytest.raises(InvalidParameterError, match="not in y"):
        SketchedKernelClassifier(class_weight={"maybe": 2.0}, sketch_size=10).fit(X, y)


def test_a_solver_without_weights_says_so():
    X, y, w = _data()
    t = X[:, 0]
    with pytest.raises(InvalidParameterError, match="takes no sample weights"):
        SketchedKernelMachine(loss="epsilon-svr", sketch_size=10, random_state=0).fit(X, t, sample_weight=w + 1)


@pytest.mark.parametrize("sketch", [None, "subsample"])
def test_ridge_weights_equal_repeated_rows_and_zero_weights_drop_rows(sketch):
    from skframe import SketchedKernelRidge

    X, _, w = _data()
    t = np.sin(2 * X[:, 0]) + 0.1 * np.random.default_rng(2).normal(size=len(X))
    rep = np.repeat(np.arange(len(X)), w.astype(int))
    if sketch is None:
        def make():
            return SketchedKernelRidge(sketch=None, kernel_params=G, lam=1e-3)
        a = make().fit(X, t, sample_weight=w).predict(X)
        np.testing.assert_allclose(a, make().fit(X[rep], t[rep]).predict(X), atol=1e-8)
        keep = w > 0
        b = make().fit(X, t, sample_weight=keep * 1.0).predict(X)
        np.testing.assert_allclose(b, make().fit(X[keep], t[keep]).predict(X), atol=1e-8)
        return
    # the sketched model on the same features: the weighted solve against the repeated rows' normal equations
    from skframe.models._fit import Fit

    model = SketchedKernelRidge(sketch=sketch, sketch_size=15, kernel_params=G, lam=1e-3, random_state=0,
                                fit_intercept=False)
    fit = Fit.of(model, X, t, sample_weight=w)
    Z = fit.predict_rows(X)
    Zr, tr = Z[rep], t[rep]
    W = np.linalg.solve(Zr.T @ Zr + len(rep) * 1e-3 * np.eye(Z.shape[1]), Zr.T @ tr)
    np.testing.assert_allclose(np.ravel(fit.solve(1e-3).W), W, atol=1e-8)


def test_kernel_search_takes_weights_as_grid_search_routes_them():
    """KernelSearchCV with sample_weight scores each fold as scikit-learn's GridSearchCV does when the weights are
    routed to every fit and to the scorer (one weighted fit per fold and λ), and refits the best with them."""
    import sklearn
    from sklearn.model_selection import GridSearchCV, KFold

    from skframe.model_selection import KernelSearchCV

    X, y, w = _data()
    w = w + 0.5
    est = SketchedKernelClassifier(loss="logistic", sketch_size=10, random_state=0)
    grid, cv = {"lam": [1e-3, 1e-2, 1e-1]}, KFold(3, shuffle=True, random_state=0)
    ours = KernelSearchCV(est, grid, cv=cv, scoring="neg_log_loss").fit(X, y, sample_weight=w)
    assert ours.search_info_["weighted"] and {b["path"] for b in ours.search_info_["blocks"]} == {"generic"}
    with sklearn.config_context(enable_metadata_routing=True):
        routed = clone(est).set_fit_request(sample_weight=True)
        scorer = sklearn.metrics.get_scorer("neg_log_loss").set_score_request(sample_weight=True)
        ref = GridSearchCV(routed, grid, cv=cv, scoring=scorer).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(ours.cv_results_["mean_test_score"], ref.cv_results_["mean_test_score"], rtol=1e-10)
    assert ours.best_params_ == ref.best_params_
    np.testing.assert_allclose(ours.predict_proba(X), ref.best_estimator_.predict_proba(X), rtol=1e-10)
    unweighted = KernelSearchCV(est, grid, cv=cv, scoring="neg_log_loss").fit(X, y)
    assert not np.allclose(unweighted.cv_results_["mean_test_score"], ours.cv_results_["mean_test_score"])


def test_kernel_search_weights_are_checked():
    from skframe.model_selection import KernelSearchCV

    X, y, w = _data()
    est = SketchedKernelClassifier(loss="logistic", sketch_size=10, random_state=0)
    with pytest.raises(InvalidInputError, match="one weight per sample"):
        KernelSearchCV(est, {"lam": [1e-3]}, cv=3).fit(X, y, sample_weight=w[:-1])
    with pytest.raises(InvalidInputError, match="non-negative"):
        KernelSearchCV(est, {"lam": [1e-3]}, cv=3).fit(X, y, sample_weight=-w)


@pytest.mark.parametrize("loss", [None, "square", "huber"])
def test_streamed_weighted_fits_equal_the_in_memory_fits(loss):
    """A budget that streams the features keeps the weights: the weighted closed form (ridge) and the weighted
    ridge start of L-BFGS come from one pass over the feature blocks."""
    from skframe import SketchedKernelRidge

    rng = np.random.default_rng(2)
    X = rng.uniform(size=(3000, 3))
    y = np.sin(3 * X[:, 0]) + 0.1 * rng.normal(size=3000)
    w = rng.integers(0, 3, size=3000).astype(float)
    kw = dict(kernel_params={"gamma": 2.0}, sketch="subsample", sketch_size=30, lam=1e-3, random_state=0)
    if loss is None:
        make = lambda **extra: SketchedKernelRidge(**kw, **extra)  # noqa: E731
    else:
        make = lambda **extra: SketchedKernelMachine(loss=loss, solver="lbfgs", **kw, **extra)  # noqa: E731
    ref = make().fit(X, y, sample_weight=w)
    streamed = make(memory_budget="300kB").fit(X, y, sample_weight=w)
    assert streamed.execution_["executor"] == "streamed" and streamed.representation_ != "in-memory"
    np.testing.assert_allclose(streamed.predict(X), ref.predict(X), rtol=1e-8, atol=1e-10)
