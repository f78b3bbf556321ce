"""Sample weights of DSOKR: each example's loss is weighted in the training objective. The training is
stochastic, so the checks are on the objective (the loss and its gradient on one batch) and on the one fit
that is deterministic: a linear network trained to convergence by full-batch L-BFGS, which equals the weighted
ISOKR closed form."""

import numpy as np
import pytest

from skframe.exceptions import InvalidInputError

torch = pytest.importorskip("torch")

from skframe.contract.registry import get_loss  # noqa: E402
from skframe.models import DeepOutputKernelRegressor, OutputKernelRegressor  # noqa: E402
from skframe.models.structured._deep_training import surrogate_loss  # noqa: E402


def _data(n=120, d=5, q=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    Y = (X[:, :q] + 0.4 * rng.normal(size=(n, q)) > 0).astype(float)
    w = rng.integers(0, 4, size=n).astype(float)
    w[0] = 2.0
    return X, Y, w


def _loss_and_grad(loss, X, T, off, weights):
    """The batch loss of a small linear network and its gradient (float64, one seed)."""
    torch.manual_seed(0)
    net = torch.nn.Linear(X.shape[1], T.shape[1]).double()
    value = surrogate_loss(loss, net(torch.from_numpy(X)), torch.from_numpy(T), torch.from_numpy(off), 0.7,
                           None if weights is None else torch.from_numpy(weights))
    value.backward()
    return float(value.detach()), np.concatenate([p.grad.numpy().ravel() for p in net.parameters()])


@pytest.mark.parametrize("name,params", [("output-square", {}), ("output-huber", {"kappa": 0.8}),
                                         ("output-epsilon-svr", {"epsilon": 0.3})])
def test_weighted_batch_loss_equals_repeated_rows(name, params):
    loss = get_loss(name, **params)
    rng = np.random.default_rng(1)
    X, T, off = rng.normal(size=(20, 3)), rng.normal(size=(20, 2)), rng.uniform(0, 0.3, size=20)
    w = rng.integers(0, 4, size=20).astype(float)
    w[0] = 1.0
    rep = np.repeat(np.arange(20), w.astype(int))
    mean_one = w * (len(w) / w.sum())  # the training rows' weights as the fit scales them
    value, grad = _loss_and_grad(loss, X, T, off, mean_one)
    value_rep, grad_rep = _loss_and_grad(loss, X[rep], T[rep], off[rep], None)
    np.testing.assert_allclose(value, value_rep, rtol=1e-12)
    np.testing.assert_allclose(grad, grad_rep, rtol=1e-10, atol=1e-14)
    keep = w > 0  # zero weights: the loss of the other rows (0/1 weights scaled to mean 1 on the kept rows)
    zero_one = keep * (len(w) / keep.sum())
    value_01, grad_01 = _loss_and_grad(loss, X, T, off, zero_one)
    value_kept, grad_kept = _loss_and_grad(loss, X[keep], T[keep], off[keep], None)
    np.testing.assert_allclose(value_01, value_kept, rtol=1e-12)
    np.testing.assert_allclose(grad_01, grad_kept, rtol=1e-10, atol=1e-14)


def test_weighted_linear_network_equals_the_weighted_isokr_closed_form():
    """A linear network without bias, square loss, weight decay lam, full-batch L-BFGS in float64, with positive
    weights: it minimises (1/n) sum w_i 1/2 ||W^T x_i - psi~(y_i)||^2 + lam/2 ||W||^2 (weights of mean 1), the
    weighted ISOKR with the linear input kernel and the same output sketch draw."""
    X, Y, w = _data(n=150)
    w = w + 0.5
    lam = 1e-3
    isokr = OutputKernelRegressor("linear", output_kernel_params={"gamma": 0.5}, output_sketch="subsample",
                                  output_sketch_size=25, lam=lam, random_state=3).fit(X, Y, sample_weight=w)
    deep = DeepOutputKernelRegressor(network_params={"hidden": (), "bias": False}, output_kernel_params={"gamma": 0.5},
                                     output_sketch_size=25, optimizer="lbfgs", learning_rate=1.0, epochs=2,
                                     weight_decay=lam, dtype="float64", random_state=3, input_scaling=None,
                                     target_scaling=False, validation_fraction=0.0).fit(X, Y, sample_weight=w)
    np.testing.assert_array_equal(deep.output_basis_.proj, isokr.output_basis_.proj)  # the same R_Y draw
    g_ref, g = isokr.surrogate_predict(X)[0], deep.surrogate_predict(X)[0]
    assert np.abs(g - g_ref).max() <= 1e-6 * np.abs(g_ref).max()
    unweighted = OutputKernelRegressor("linear", output_kernel_params={"gamma": 0.5}, output_sketch="subsample",
                                       output_sketch_size=25, lam=lam, random_state=3).fit(X, Y)
    assert np.abs(unweighted.surrogate_predict(X)[0] - g_ref).max() > 1e-3 * np.abs(g_ref).max()


FAST = dict(output_kernel_params={"gamma": 0.5}, output_sketch_size=20, epochs=3, batch_size=32,
            network_params={"hidden": (16,)}, random_state=0)


def test_zero_weights_drop_the_rows_before_the_fit():
    """Rows of weight zero are dropped first: the fit with 0/1 weights is the fit on the kept rows (the same
    sketches, seeds and batches), with and without early stopping; validation_rows_ index the rows given."""
    X, Y, w = _data()
    keep = w > 0
    for kw in ({}, {"validation_fraction": 0.2, "patience": 2}):
        a = DeepOutputKernelRegressor(**FAST, **kw).fit(X, Y, sample_weight=keep * 1.0)
        b = DeepOutputKernelRegressor(**FAST, **kw).fit(X[keep], Y[keep])
        np.testing.assert_array_equal(a.candidates_, b.candidates_)
        np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), rtol=1e-6, atol=1e-8)
        np.testing.assert_array_equal(a.validation_rows_, np.flatnonzero(keep)[b.validation_rows_])
    weighted = DeepOutputKernelRegressor(**FAST, validation_fraction=0.2).fit(X, Y, sample_weight=w)
    assert np.all(w[weighted.validation_rows_] > 0)
    assert np.isfinite(weighted.history_[0]["train_loss"]).all()


def test_bad_weights_are_refused():
    X, Y, w = _data(n=30)
    model = DeepOutputKernelRegressor(**FAST)
    with pytest.raises(InvalidInputError, match="one weight per sample"):
        model.fit(X, Y, sample_weight=w[:-1])
    with pytest.raises(InvalidInputError, match="non-negative"):
        model.fit(X, Y, sample_weight=-w)
