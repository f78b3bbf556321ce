"""predict(X, return_std=True): one kernel block per chunk serves the mean and the variance.

A kernel wrapper counts the rows it is evaluated on: the standard deviations cost no kernel evaluation beyond the
point prediction's, and the mean they come with is the point prediction (checked against the NumPy formula
``k(X, X_fit_) coef_ + intercept_``).
"""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics.pairwise import rbf_kernel

from skframe.models import SketchedKernelRidge, _posterior

G, LAM = 0.5, 1e-3


class CountingRBF:
    """A Gaussian kernel that counts the rows (of its first argument) and the calls it is evaluated on."""

    def __init__(self):
        self.rows = 0
        self.calls = 0

    def __call__(self, X, Y=None):
        Y = X if Y is None else Y
        self.rows += X.shape[0]
        self.calls += 1
        A = X.toarray() if sp.issparse(X) else X
        B = Y.toarray() if sp.issparse(Y) else Y
        return rbf_kernel(A, B, gamma=G)

    def diag(self, X):  # k(x, x) = 1: no block
        return np.ones(X.shape[0])

    def reset(self):
        self.rows = self.calls = 0


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(120, 3))
    Y = np.c_[np.sin(3 * X[:, 0]) + X[:, 1] ** 2, np.cos(2 * X[:, 2])] + 0.05 * rng.normal(size=(120, 2))
    return X, Y, rng.uniform(-1.5, 1.5, size=(77, 3))


SKETCHES = [None, "psr", "subsample", "gaussian"]


@pytest.mark.parametrize("sketch", SKETCHES)
@pytest.mark.parametrize("chunk_bytes", [None, 4096])
def test_return_std_evaluates_the_kernel_on_the_rows_predict_does(data, sketch, chunk_bytes, monkeypatch):
    X, Y, X_te = data
    if chunk_bytes:  # several chunks of test rows
        monkeypatch.setattr(_posterior, "CHUNK_BYTES", chunk_bytes)
    kernel = CountingRBF()
    model = SketchedKernelRidge(kernel, sketch=sketch, sketch_size=30, lam=LAM, random_state=0).fit(X, Y)
    model.predict(X_te[:2], return_std=True)  # the factor is computed at the first std: not counted below
    kernel.reset()
    model.predict(X_te)
    rows_predict = kernel.rows
    kernel.reset()
    F, std = model.predict(X_te, return_std=True)
    assert kernel.rows == rows_predict == len(X_te)  # once per row, once per chunk
    if chunk_bytes:
        assert kernel.calls > 1
    assert F.shape == std.shape == (len(X_te), 2)


@pytest.mark.parametrize("sketch", SKETCHES + ["rff"])
@pytest.mark.parametrize("one_d", [False, True])
def test_the_mean_of_return_std_is_the_point_prediction(data, sketch, one_d, monkeypatch):
    X, Y, X_te = data
    monkeypatch.setattr(_posterior, "CHUNK_BYTES", 8192)
    y = Y[:, 0] if one_d else Y
    model = SketchedKernelRidge(kernel_params={"gamma": G}, sketch=sketch, sketch_size=30, lam=LAM,
                                random_state=1).fit(X, y)
    F, std = model.predict(X_te, return_std=True)
    np.testing.assert_allclose(F, model.predict(X_te), rtol=1e-12, atol=1e-12)
    if sketch != "rff":  # the NumPy formula of the kernel expansion
        ref = rbf_kernel(X_te, model.X_fit_, gamma=G) @ model.coef_ + model.intercept_
        np.testing.assert_allclose(F, ref[:, 0] if one_d else ref, rtol=1e-10, atol=1e-12)
    assert std.shape == F.shape and np.all(std > 0)
    # sparse test rows: the same numbers
    F_sp, std_sp = model.predict(sp.csr_matrix(X_te), return_std=True)
    np.testing.assert_allclose(F_sp, F, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(std_sp, std, rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("sketch", ["psr", "subsample"])
def test_variance_equals_the_nystrom_formula_over_chunks(data, sketch, monkeypatch):
    X, Y, X_te = data
    model = SketchedKernelRidge(kernel_params={"gamma": G}, sketch=sketch, sketch_size=25, lam=LAM,
                                random_state=2).fit(X, Y)
    state = model.posterior_
    mix = state["mix"].toarray() if sp.issparse(state["mix"]) else np.asarray(state["mix"])
    P_z = mix.T @ state["UD"]  # z(x) = k(x, X_fit_) S_mix^T UD
    Z, Zt = rbf_kernel(X, model.X_fit_, gamma=G) @ P_z, rbf_kernel(X_te, model.X_fit_, gamma=G) @ P_z
    n = len(X)
    M = Z.T @ Z + n * LAM * np.eye(Z.shape[1])
    quad = np.einsum("ij,ij->i", Zt, np.linalg.solve(M, Zt.T).T)
    ref = (1.0 - np.einsum("ij,ij->i", Zt, Zt) + n * LAM * quad)[:, None] * state["scale"][None, :]
    monkeypatch.setattr(_posterior, "CHUNK_BYTES", 2048)
    _, std = model.predict(X_te, return_std=True)
    np.testing.assert_allclose(std**2, np.maximum(ref, 0), rtol=1e-7, atol=1e-12)
