"""The Fit object: every estimator fits through it, and a fold's λ path is the fresh fits' computation."""

import numpy as np
import pytest
from sklearn.base import clone

from skframe import SketchedKernelRidge
from skframe.contract.registry import get_kernel
from skframe.models import JointQuantileRegressor, OutputKernelRegressor, SketchedKernelMachine
from skframe.models._fit import Fit
from tests.naive import RBF


class CountingKernel(RBF):
    """A Gaussian kernel that counts how often it is bound to training data."""

    prepared = 0

    def prepare(self, X):
        type(self).prepared += 1
        return self


def _data(n=120, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    return X, np.sin(4 * X[:, 0]) + 0.1 * rng.normal(size=n)


@pytest.mark.parametrize("model", [
    SketchedKernelRidge(sketch="psr", sketch_size=20, random_state=0),
    SketchedKernelRidge(sketch=None),
    SketchedKernelMachine(loss="huber", sketch_size=20, random_state=0),
    JointQuantileRegressor([0.2, 0.8], sketch_size=20, random_state=0),
], ids=["ridge", "exact", "huber", "quantile"])
def test_the_kernel_is_bound_to_the_data_once_per_fit(model):
    X, y = _data()
    CountingKernel.prepared = 0
    clone(model).set_params(kernel=CountingKernel(2.0)).fit(X, y)
    assert CountingKernel.prepared == 1


@pytest.mark.parametrize("model", [
    SketchedKernelRidge(sketch="psr", sketch_size=20, random_state=0),
    SketchedKernelMachine(loss="huber", sketch_size=20, random_state=0),
], ids=["ridge", "huber"])
def test_fit_of_an_estimator_is_its_fit(model):
    X, y = _data()
    fresh = clone(model).fit(X, y)
    fit = Fit.of(clone(model), X, y)
    ran = fit.run()
    np.testing.assert_array_equal(ran.coef_, fresh.coef_)
    np.testing.assert_array_equal(ran.predict(X), fresh.predict(X))
    assert ran.execution_["executor"] == fresh.execution_["executor"]  # the budget reads the free memory


def test_a_path_point_is_the_fresh_fit_at_that_lam():
    X, y = _data()
    model = SketchedKernelRidge(sketch="psr", sketch_size=20, random_state=0)
    fit = Fit.of(clone(model), X, y)
    for lam, res in zip([1e-1, 1e-3], fit.solve_path([1e-1, 1e-3])):
        point = fit.fitted(lam, res)
        fresh = clone(model).set_params(lam=lam).fit(X, y)
        np.testing.assert_allclose(point.predict(X), fresh.predict(X), rtol=1e-12, atol=1e-12)
        assert point.lam == lam


def test_predict_rows_are_the_expansion_and_the_features():
    X, y = _data()
    model = SketchedKernelRidge(sketch="psr", sketch_size=20, random_state=0)
    fit = Fit.of(clone(model), X, y)
    res = fit.solve(1e-3)
    fitted = fit.fitted(1e-3, res)
    Xq = _data(30, seed=1)[0]
    np.testing.assert_allclose(fit.predict_rows(Xq, res.W)[:, 0] + fitted.intercept_[0], fitted.predict(Xq),
                               rtol=1e-12, atol=1e-12)
    Z = fit.predict_rows(Xq)  # the features z(x): the expansion of W = I
    np.testing.assert_allclose(Z @ res.W, fit.predict_rows(Xq, res.W), rtol=1e-10, atol=1e-12)


def test_structured_fit_solve_path_equals_solve():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(60, 4))
    Y = (rng.uniform(size=(60, 5)) < 0.3).astype(float)
    model = OutputKernelRegressor(input_kernel=get_kernel("gaussian", gamma=0.3), input_sketch="subsample",
                                  input_sketch_size=20, output_sketch="psg", output_sketch_size=10, random_state=0)
    fit = Fit.of(clone(model), X, Y)
    paths = fit.solve_path([1e-2, 1e-4])
    for lam in (1e-2, 1e-4):
        want = clone(model).set_params(lam=lam).fit(X, Y).surrogate_predict(X)
        got = fit.fitted(lam, paths.draws(lam)).surrogate_predict(X)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-7, atol=1e-9)
