"""The fit core (skframe.models._core) and the parameter constraints (skframe.constraints)."""

import warnings

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel

from skframe.constraints import HasMethods, Interval, Options, check_param, validate_params
from skframe.contract.collections import InputCollection
from skframe.contract.problems import SolveResult
from skframe.contract.specs import ComponentSpec
from skframe.contract.tags import LossTags
from skframe.exceptions import InvalidParameterError, SketchSizeWarning
from skframe.models import (
    JointQuantileRegressor,
    SketchedKernelClassifier,
    SketchedKernelMachine,
    SketchedKernelRidge,
    _core,
)
from tests.naive import naive_krr


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(80, 3))
    y = np.sin(3 * X[:, 0]) + X[:, 1] ** 2 + 0.05 * rng.normal(size=80)
    return X, y


# ------------------------------------------------------------------ seeding, names, sizes
def test_make_rngs_matches_the_earlier_seeding():
    from sklearn.utils import check_random_state

    a, b = _core.make_rngs(7, 2)
    rs = check_random_state(7)
    ref_a, ref_b = (np.random.default_rng(rs.randint(0, 2**31 - 1)) for _ in range(2))
    assert a.random() == ref_a.random() and b.random() == ref_b.random()
    g = _core.make_rngs(np.random.default_rng(3))[0]
    assert isinstance(g, np.random.Generator)


@pytest.mark.parametrize("sketch,exact", [(None, True), ("none", True), (" Exact ", True), ("psr", False)])
def test_is_exact_sketch(sketch, exact):
    assert _core.is_exact_sketch(sketch) is exact


def test_auto_sketch_size_rule():
    for n in (5, 50, 100, 1000, 4000, 40000):
        m, rule = _core.auto_sketch_size(n)
        expected = min(max(int(np.ceil(2 * np.sqrt(n))), min(n, 100)), min(n, 1000))
        assert m == expected and "auto" in rule
    # no cap of its own: a fit caps the rule by what its chosen path holds (the execution plan)
    assert _core.auto_sketch_size(10**6)[0] == 1000


def test_explicit_size_clamped_with_warning(data):
    X, y = data
    with pytest.warns(SketchSizeWarning, match="sketch_size=500 is larger than n_samples=80"):
        m = SketchedKernelRidge(kernel_params={"gamma": 1.0}, sketch_size=500, random_state=0).fit(X, y)
    assert m.sketch_info_["m"] == 80 and "clamped" in m.sketch_info_["size_rule"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = SketchedKernelRidge(kernel_params={"gamma": 1.0}, random_state=0).fit(X, y)
    assert m.sketch_info_["m"] == 80 and m.sketch_info_["size_rule"].startswith("auto")
    # a sketch object too large is clamped on a copy: the user's object keeps its size
    from skframe_sketches.sketches import SubSampleSketch

    obj = SubSampleSketch(200)
    with pytest.warns(SketchSizeWarning):
        SketchedKernelRidge(kernel_params={"gamma": 1.0}, sketch=obj, random_state=0).fit(X, y)
    assert obj.size == 200


@pytest.mark.parametrize("est", [SketchedKernelRidge(), SketchedKernelMachine(), SketchedKernelClassifier(),
                                 JointQuantileRegressor(solver="adam", solver_params={"epochs": 5})])
def test_defaults_work_on_tiny_data(est):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(12, 2))
    y = (X[:, 0] > 0).astype(int) if isinstance(est, SketchedKernelClassifier) else X[:, 0]
    with warnings.catch_warnings():
        warnings.simplefilter("error", SketchSizeWarning)
        est.fit(X, y)
    assert est.sketch_info_["m"] == 12


# ------------------------------------------------------------------ components and specs
def test_specs_recorded_for_named_components(data):
    X, y = data
    m = SketchedKernelMachine(kernel_params={"gamma": 0.5}, sketch="psr", sketch_size=20, sketch_params={"p": 0.2},
                              loss="huber", loss_params={"kappa": 0.3}, random_state=0).fit(X, y)
    assert m.kernel_spec_ == ComponentSpec("kernel", "gaussian", {"gamma": 0.5})
    assert m.sketch_spec_.name == "psr" and m.sketch_spec_.params["size"] == 20
    assert m.loss_spec_.name == "huber" and m.loss_spec_.params["kappa"] == 0.3
    assert m.solver_spec_.name == _core.default_solver_name(m.loss_)
    r = SketchedKernelRidge(kernel=lambda A, B: rbf_kernel(A, B, gamma=0.5), sketch=None).fit(X, y)
    assert r.kernel_spec_ is None and r.sketch_spec_ is None


def test_default_solver_from_loss_capabilities():
    class Declares:
        __skframe_tags__ = LossTags(default_solver="dual-cd")

    class Smooth:
        __skframe_tags__ = LossTags(smooth=True)

    class Rough:
        __skframe_tags__ = LossTags(smooth=False)

    assert _core.default_solver_name(Declares()) == "dual-cd"
    assert _core.default_solver_name(Smooth()) == "lbfgs"
    assert _core.default_solver_name(Rough()) == "adam"


# ------------------------------------------------------------------ a third-party solver
class ProblemRidge:
    """A solver written to the problem contract."""

    def __init__(self):
        self.inits = []

    def solve(self, problem, loss, lam, *, M=None, rng=None, init=None, progress=None):
        self.inits.append(init)
        A, B = problem.gram()
        A[np.diag_indices_from(A)] += problem.n * lam
        return SolveResult(np.linalg.solve(A, B), history=[1.0, 0.5], stop_reason="done", n_iter=2,
                           info={"gap": 0.0})


def test_problem_solver_gives_the_closed_form(data):
    X, y = data
    kw = dict(kernel_params={"gamma": 1.0}, sketch_size=20, loss="square", lam=1e-3, random_state=0)
    ref = SketchedKernelMachine(**kw).fit(X, y)
    m = SketchedKernelMachine(solver=ProblemRidge(), **kw).fit(X, y)
    np.testing.assert_allclose(m.predict(X), ref.predict(X), rtol=1e-8, atol=1e-10)
    assert m.history_ == [1.0, 0.5] and m.stop_reason_ == "done" and m.n_iter_ == 2
    assert m.solver_info_ == {"gap": 0.0}


def test_warm_start_and_lambda_path(data):
    X, y = data
    solver = ProblemRidge()
    kw = dict(kernel_params={"gamma": 1.0}, sketch_size=20, loss="square", random_state=0)
    m = SketchedKernelMachine(solver=solver, lam=[1e-1, 1e-2, 1e-3], **kw).fit(X, y)
    assert solver.inits[0] is None and all(i is not None for i in solver.inits[1:])
    assert m.lam_path_.tolist() == [1e-1, 1e-2, 1e-3] and len(m.coef_path_) == 3
    last = SketchedKernelMachine(lam=1e-3, **kw).fit(X, y)
    np.testing.assert_allclose(m.predict(X), last.predict(X), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(m.coef_path_[-1], m.coef_)
    # warm_start: the refit starts from the previous weights
    solver2 = ProblemRidge()
    w = SketchedKernelMachine(solver=solver2, lam=1e-2, warm_start=True, **kw).fit(X, y)
    w.set_params(lam=1e-3).fit(X, y)
    assert solver2.inits[0] is None and solver2.inits[1] is not None
    # ridge along a path equals the ridge at the last value
    r = SketchedKernelRidge(kernel_params={"gamma": 1.0}, sketch=None, lam=[1e-1, 1e-3]).fit(X, y)
    r1 = SketchedKernelRidge(kernel_params={"gamma": 1.0}, sketch=None, lam=1e-3).fit(X, y)
    np.testing.assert_allclose(r.predict(X), r1.predict(X), rtol=1e-10)


# ------------------------------------------------------------------ representation
def test_representation_expansion_forms(data):
    X, y = data
    kernel = lambda A, B: rbf_kernel(A, B, gamma=1.0)  # noqa: E731
    Y = y[:, None]
    exact = _core.build_representation(X, kernel, None, None, exact="gram")
    assert exact.kind == "exact_gram" and exact.expansion(Y)["X_fit_"] is X
    feat = _core.build_representation(X, kernel, None, None)
    assert feat.kind == "exact" and feat.Z.shape[0] == X.shape[0]
    # exact feature form: Z Z^T = K
    np.testing.assert_allclose(feat.Z @ feat.Z.T, rbf_kernel(X, gamma=1.0), atol=1e-8)
    lam = 1e-2
    A = feat.Z.T @ feat.Z + X.shape[0] * lam * np.eye(feat.Z.shape[1])
    coef = feat.expansion(np.linalg.solve(A, feat.Z.T @ Y))["coef_"]
    np.testing.assert_allclose(coef, naive_krr(rbf_kernel(X, gamma=1.0), Y, lam), rtol=1e-5, atol=1e-7)


class ArrayItems(InputCollection):
    """A tiny input collection wrapping an array (stand-in for graphs or strings)."""

    def __init__(self, A):
        self.A = np.asarray(A)

    def __len__(self):
        return self.A.shape[0]

    def take(self, indices):
        return ArrayItems(self.A[np.asarray(indices)])

    def to_state(self):
        return {"A": self.A}

    @classmethod
    def from_state(cls, state):
        return cls(state["A"])


class ItemKernel:
    """A custom kernel reading ArrayItems (and plain arrays)."""

    def __call__(self, X, Y=None):
        Y = X if Y is None else Y
        a = X.A if isinstance(X, ArrayItems) else X
        b = Y.A if isinstance(Y, ArrayItems) else Y
        return rbf_kernel(a, b, gamma=1.0)


@pytest.mark.parametrize("sketch", [None, "subsample", "psr"])
def test_input_collection_behaves_like_the_array(data, sketch):
    X, y = data
    kw = dict(kernel=ItemKernel(), sketch=sketch, sketch_size=30, lam=1e-3, random_state=0)
    a = SketchedKernelRidge(**kw).fit(X, y)
    c = SketchedKernelRidge(**kw).fit(ArrayItems(X), y)
    np.testing.assert_allclose(c.predict(ArrayItems(X[:10])), a.predict(X[:10]), rtol=1e-10, atol=1e-12)
    assert not hasattr(c, "n_features_in_")
    mc = SketchedKernelMachine(loss="huber", **kw).fit(ArrayItems(X), y)
    ma = SketchedKernelMachine(loss="huber", **kw).fit(X, y)
    np.testing.assert_allclose(mc.predict(ArrayItems(X[:10])), ma.predict(X[:10]), rtol=1e-6, atol=1e-8)


def test_predict_writes_nothing(data):
    X, y = data
    m = SketchedKernelMachine(kernel_params={"gamma": 1.0}, sketch_size=20, random_state=0).fit(X, y)
    before = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in vars(m).items()}
    m.predict(X)
    assert set(vars(m)) == set(before)
    for k, v in before.items():
        if isinstance(v, np.ndarray):
            np.testing.assert_array_equal(vars(m)[k], v)


# ------------------------------------------------------------------ constraints
def test_interval_and_options():
    assert 0.5 in Interval("real", 0, 1, closed="neither") and 0 not in Interval("real", 0, 1, closed="neither")
    assert 1 in Interval("int", 1, None) and 1.0 not in Interval("int", 1, None) and True not in Interval("int", 0)
    assert float("nan") not in Interval("real") and "AUTO" in Options("auto") and 3 not in Options("auto")
    assert np.array([1]) not in HasMethods("solve")
    assert str(Interval("real", 0, None, closed="neither")) == "a real number in (0, inf)"


def test_validate_params_names_parameter_value_and_fix():
    with pytest.raises(InvalidParameterError, match=r"SketchedKernelRidge: sketch_size=-3 is invalid; it must be "
                                                    r"an integer in \[1, inf\), one of 'auto' or None"):
        validate_params(SketchedKernelRidge(sketch_size=-3))
    with pytest.raises(InvalidParameterError, match="lam=0 .*e.g. lam=1e-3"):
        validate_params(SketchedKernelRidge(lam=0))
    with pytest.raises(InvalidParameterError, match="solver=3"):
        SketchedKernelMachine(solver=3).fit(np.zeros((4, 1)), np.zeros(4))
    assert check_param("x", None, [None]) is None


def test_path_model_with_specs_saves_and_reloads_identically(data, tmp_path):
    import skframe

    X, y = data
    m = SketchedKernelMachine(kernel_params={"gamma": 1.0}, sketch_size=20, loss="huber", lam=[1e-2, 1e-3],
                              random_state=0).fit(X, y)
    path = skframe.save(m, tmp_path / "m.skf")
    back = skframe.load(path)
    np.testing.assert_array_equal(back.predict(X), m.predict(X))
    assert back.kernel_spec_ == m.kernel_spec_ and back.loss_spec_ == m.loss_spec_
    np.testing.assert_array_equal(back.intercept_, m.intercept_)
    assert len(back.coef_path_) == 2


def test_robust_losses_centre_on_the_median_and_quantiles(data):
    X, y = data
    y = y.copy()
    y[:5] += 100.0  # outliers move the mean, not the median
    hub = SketchedKernelMachine(kernel_params={"gamma": 1.0}, sketch_size=20, loss="huber", random_state=0).fit(X, y)
    np.testing.assert_allclose(hub.intercept_, [np.median(y)])
    sq = SketchedKernelMachine(kernel_params={"gamma": 1.0}, sketch_size=20, loss="square", random_state=0).fit(X, y)
    np.testing.assert_allclose(sq.intercept_, [y.mean()])
    jq = JointQuantileRegressor(quantiles=(0.2, 0.8), kernel_params={"gamma": 1.0}, sketch_size=20, solver="adam",
                                solver_params={"epochs": 3}, random_state=0).fit(X, y)
    np.testing.assert_allclose(jq.intercept_, np.quantile(y, [0.2, 0.8]))
