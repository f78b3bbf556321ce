"""SketchedKernelMachine, SketchedKernelClassifier and JointQuantileRegressor."""

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from skframe.contract.registry import get_loss
from skframe.exceptions import InvalidInputError, InvalidParameterError, SketchSizeWarning, UnknownComponentError
from skframe.metrics import crossing_loss, pinball_loss
from skframe.models import (
    JointQuantileRegressor,
    SketchedKernelClassifier,
    SketchedKernelMachine,
    SketchedKernelRidge,
)
from skframe.models._core import default_solver_name

FAST = {"epochs": 20, "batch_size": 64}
# small sketches: the checks fit on as few as 10 samples
CHECKED = [
    SketchedKernelMachine(kernel_params={"gamma": 0.01}, sketch_size=10, loss="huber", lam=1e-6, random_state=0),
    SketchedKernelMachine(kernel_params={"gamma": 0.01}, sketch_size=10, loss="epsilon-svr", solver="adam",
                          solver_params=FAST, lam=1e-6, random_state=0),
    SketchedKernelClassifier(sketch_size=5, solver="adam", solver_params=FAST, random_state=0),
    JointQuantileRegressor(quantiles=(0.5,), sketch_size=5, solver="adam", solver_params=FAST, random_state=0),
]


# the sketch is drawn from the training rows: rows repeated by integer weights change the features themselves
# (tests/models/test_sample_weight.py checks the equivalence on the same features)
_WEIGHT_CHECKS = dict.fromkeys(("check_sample_weight_equivalence_on_dense_data",
                                "check_sample_weight_equivalence_on_sparse_data"),
                               "the sketch is drawn from the training rows, so repeated rows change the features")


@parametrize_with_checks(CHECKED, expected_failed_checks=lambda est: _WEIGHT_CHECKS)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def _data(rng, n=300, d_out=1, noise=0.1):
    X = rng.uniform(-1, 1, size=(n, 3))
    base = np.sin(3 * X[:, 0]) + X[:, 1] ** 2
    Y = np.column_stack([base * (k + 1) + noise * rng.normal(size=n) for k in range(d_out)])
    return X, (Y[:, 0] if d_out == 1 else Y)


COMMON = dict(kernel_params={"gamma": 1.0}, sketch="psr", sketch_size=40, random_state=3)


def test_square_closed_form_equals_sketched_ridge(rng):
    X, y = _data(rng, d_out=2)
    a = SketchedKernelMachine(loss="square", lam=1e-3, **COMMON).fit(X, y)
    b = SketchedKernelRidge(lam=1e-3, **COMMON).fit(X, y)
    assert a.solver_.name == "closed-form" and a.stop_reason_.startswith("closed form")
    np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=1e-8, atol=1e-10)


def test_exact_model_equals_sklearn_kernel_ridge(rng):
    from sklearn.kernel_ridge import KernelRidge

    X, y = _data(rng, n=120)
    lam = 1e-2
    a = SketchedKernelMachine(kernel_params={"gamma": 1.0}, sketch=None, loss="square", lam=lam,
                              fit_intercept=False).fit(X, y)
    b = KernelRidge(alpha=X.shape[0] * lam, kernel="rbf", gamma=1.0).fit(X, y)
    assert a.sketch_info_["name"] == "none"
    np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("loss,params,solver", [("square", {}, None), ("pinball", {"quantiles": [0.3, 0.6]}, "adam")])
def test_identity_output_matrix_equals_independent_models(rng, loss, params, solver):
    X, Y = _data(rng, d_out=2)
    kw = dict(COMMON, loss=loss, loss_params=params or None, solver=solver, lam=1e-3,
              solver_params={"epochs": 30, "batch_size": 32} if solver == "adam" else None)
    joint = SketchedKernelMachine(output_matrix="identity", **kw).fit(X, Y)
    for j in range(2):
        pj = {"quantiles": [params["quantiles"][j]]} if params else None
        single = SketchedKernelMachine(**dict(kw, loss_params=pj)).fit(X, Y[:, j])
        np.testing.assert_allclose(joint.predict(X)[:, j], single.predict(X), rtol=1e-7, atol=1e-9)


def test_pinball_median_matches_l1_median_regression(rng):
    """Pinball at tau = 0.5 is half the absolute loss: same minimiser with lam halved."""
    X, y = _data(rng, noise=0.5)
    sp = {"epochs": 200, "batch_size": 50, "learning_rate": 0.05, "init": "zeros", "tol": None}
    lam = 1e-3
    pin = SketchedKernelMachine(loss="pinball", loss_params={"quantiles": [0.5]}, solver="adam", solver_params=sp,
                                lam=lam, **COMMON).fit(X, y)
    med = SketchedKernelMachine(loss="epsilon-svr", loss_params={"epsilon": 0.0}, solver="adam", solver_params=sp,
                                lam=2 * lam, **COMMON).fit(X, y)
    np.testing.assert_allclose(pin.predict(X), med.predict(X), rtol=1e-5, atol=1e-5)
    jq = JointQuantileRegressor(quantiles=[0.5], lam=lam, solver="adam", solver_params=sp, **COMMON).fit(X, y)
    np.testing.assert_allclose(jq.predict(X)[:, 0], pin.predict(X), rtol=1e-8, atol=1e-10)
    # about half the residuals on each side of a median fit
    assert 0.4 < np.mean(y > pin.predict(X)) < 0.6


def test_huber_is_robust_to_outliers(rng):
    X, y = _data(rng, n=400)
    y_clean = y.copy()
    out = rng.choice(400, 20, replace=False)
    y[out] += 30.0
    kw = dict(COMMON, lam=1e-4, sketch_size=60)
    hub = SketchedKernelMachine(loss="huber", loss_params={"kappa": 0.2}, **kw).fit(X, y)
    sq = SketchedKernelMachine(loss="square", **kw).fit(X, y)

    def err(m):
        return np.mean((m.predict(X) - y_clean) ** 2)

    assert hub.solver_.name == default_solver_name(hub.loss_)
    assert err(hub) < 0.2 * err(sq)


def test_default_solvers_and_history(rng):
    X, y = _data(rng)
    for loss in ["square", "huber", "epsilon-ridge", "epsilon-svr", "pinball"]:
        expected = default_solver_name(get_loss(loss))
        if loss == "square":
            assert expected == "closed-form"
        m = SketchedKernelMachine(loss=loss, solver_params=FAST if expected == "adam" else None, **COMMON).fit(X, y)
        assert m.solver_.name == expected and m.solver_spec_.name == expected
        assert m.n_iter_ >= 0 and len(m.history_) >= 1 and isinstance(m.stop_reason_, str)


def test_same_seed_same_weights_and_progress(rng):
    X, y = _data(rng)
    calls = []
    kw = dict(COMMON, loss="epsilon-svr", solver="adam", solver_params={"epochs": 5, "batch_size": 16})
    a = SketchedKernelMachine(**kw).fit(X, y, progress=calls.append)
    b = SketchedKernelMachine(**kw).fit(X, y)
    np.testing.assert_array_equal(a.weights_, b.weights_)
    assert sum(calls) == X.shape[0]
    c = SketchedKernelMachine(**dict(kw, random_state=4)).fit(X, y)
    assert not np.array_equal(a.predict(X), c.predict(X))


def test_output_matrices_in_machine(rng, tmp_path):
    X, Y = _data(rng, d_out=3)
    path = tmp_path / "adj.csv"
    np.savetxt(path, np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]]), delimiter=",")
    for spec, params in [("covariance", None), ("graph", {"adjacency": str(path), "mu": 0.5})]:
        m = SketchedKernelMachine(loss="square", output_matrix=spec, output_matrix_params=params, lam=1e-4,
                                  **COMMON).fit(X, Y)
        assert m.output_matrix_.shape == (3, 3) and m.predict(X).shape == (300, 3)
        assert np.mean((m.predict(X) - Y) ** 2) < 0.1 * np.var(Y)


def test_rff_feature_map_machine(rng):
    X, y = _data(rng)
    m = SketchedKernelMachine(kernel_params={"gamma": 1.0}, sketch="rff", sketch_size=80, loss="huber",
                              loss_params={"kappa": 1.0}, lam=1e-4, random_state=0).fit(X, y)
    assert m.score(X, y) > 0.8


def test_hinge_classifier_binary_and_multiclass(rng):
    X = rng.normal(size=(300, 2))
    y = np.where(X[:, 0] ** 2 + X[:, 1] ** 2 < 1.0, "in", "out")
    clf = SketchedKernelClassifier(kernel_params={"gamma": 1.0}, sketch_size=40, lam=1e-4, random_state=0).fit(X, y)
    assert list(clf.classes_) == ["in", "out"] and clf.solver_.name == default_solver_name(clf.loss_)
    assert clf.decision_function(X).shape == (300,)
    assert clf.score(X, y) > 0.9
    y3 = np.digitize(X[:, 0], [-0.5, 0.5])
    clf3 = SketchedKernelClassifier(kernel_params={"gamma": 1.0}, sketch_size=40, lam=1e-4, random_state=0).fit(X, y3)
    assert clf3.decision_function(X).shape == (300, 3) and clf3.score(X, y3) > 0.85


def test_joint_quantile_regressor(rng):
    n = 600
    X = rng.uniform(0, 1, size=(n, 1))
    y = np.sin(6 * X[:, 0]) + (0.2 + 0.5 * X[:, 0]) * rng.normal(size=n)
    q = (0.9, 0.1, 0.5)
    m = JointQuantileRegressor(quantiles=q, kernel_params={"gamma": 10.0}, sketch_size=40, lam=1e-5,
                               gamma_quantile=1.0, solver="adam", solver_params={"epochs": 100, "learning_rate": 0.05},
                               random_state=0).fit(X, y)
    Q = m.predict(X)
    assert Q.shape == (n, 3) and m.quantiles_.tolist() == [0.1, 0.5, 0.9]
    cover = [np.mean(y <= Q[:, j]) for j in range(3)]
    assert abs(cover[0] - 0.1) < 0.05 and abs(cover[1] - 0.5) < 0.06 and abs(cover[2] - 0.9) < 0.05
    assert crossing_loss(Q) < 1e-2
    assert m.score(X, y) == pytest.approx(-pinball_loss(y, Q, m.quantiles_))


def test_errors(rng):
    X, y = _data(rng, n=50)
    with pytest.raises(InvalidParameterError, match="SketchedKernelClassifier"):
        SketchedKernelMachine(loss="hinge", sketch_size=10).fit(X, np.sign(y))
    with pytest.raises(UnknownComponentError, match="registered"):
        SketchedKernelMachine(loss="hubber", sketch_size=10).fit(X, y)
    with pytest.raises(InvalidParameterError, match="square loss"):
        SketchedKernelMachine(loss="huber", solver="closed-form", sketch_size=10).fit(X, y)
    with pytest.raises(InvalidParameterError, match="lam"):
        SketchedKernelMachine(lam=0.0, sketch_size=10).fit(X, y)
    with pytest.warns(SketchSizeWarning, match="n_samples=50"):
        m = SketchedKernelMachine(sketch_size=100).fit(X, y)
    assert m.sketch_info_["m"] == 50 and "clamped" in m.sketch_info_["size_rule"]
    with pytest.raises(InvalidInputError, match="one output"):
        JointQuantileRegressor(sketch_size=10).fit(X, np.column_stack([y, y]))
    with pytest.raises(InvalidParameterError, match="repeated"):
        JointQuantileRegressor(quantiles=(0.5, 0.5), sketch_size=10).fit(X, y)


def test_text_labels_are_compared_as_strings_and_kept_as_given():
    """A 1-D object array of Python strings is encoded as a NumPy string array (compared in C): the same targets,
    model and predictions as the same classes given as integers, ``classes_`` Python strings of object dtype;
    other label arrays are left as they are."""
    from skframe.models.machine._labels import text_labels

    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 3))
    codes = np.argmax(X + 0.3 * rng.normal(size=X.shape), axis=1)
    names = np.array(["apple", "kiwi", "pear"], dtype=object)
    text = SketchedKernelClassifier(loss="multinomial", lam=1e-3, sketch_size=30, random_state=0).fit(X, names[codes])
    ints = SketchedKernelClassifier(loss="multinomial", lam=1e-3, sketch_size=30, random_state=0).fit(X, codes)
    assert text.classes_.dtype == object and [type(c) for c in text.classes_] == [str] * 3
    assert list(text.classes_) == list(names)
    np.testing.assert_array_equal(text.decision_function(X), ints.decision_function(X))
    assert text.predict(X[:5]).tolist() == names[ints.predict(X[:5])].tolist()
    mixed = np.array(["a", 1], dtype=object)
    assert text_labels(mixed) is mixed and text_labels(np.array(["a\x00", "b"], dtype=object)).dtype == object
