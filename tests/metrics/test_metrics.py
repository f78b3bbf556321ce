"""Tests of skframe.metrics against scikit-learn and hand-computed examples."""

import json

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn import metrics as skm

from skframe import metrics as M
from skframe.exceptions import InvalidInputError, InvalidParameterError


@pytest.fixture
def reg(rng):
    y = rng.normal(size=(40, 3)) * [1.0, 5.0, 0.1]
    return y, y + rng.normal(size=y.shape) * 0.5


# ----------------------------------------------------------------------------------- regression vs sklearn
@pytest.mark.parametrize(
    "ours, theirs",
    [(M.mse, skm.mean_squared_error), (M.mae, skm.mean_absolute_error), (M.r2, skm.r2_score)],
)
def test_regression_metrics_match_sklearn(reg, ours, theirs):
    y, p = reg
    assert ours(y, p) == pytest.approx(theirs(y, p), rel=1e-12)
    np.testing.assert_allclose(ours(y, p, multioutput="raw_values"), theirs(y, p, multioutput="raw_values"), rtol=1e-12)
    assert ours(y[:, 0], p[:, 0]) == pytest.approx(theirs(y[:, 0], p[:, 0]), rel=1e-12)
    assert isinstance(ours(y, p), float)


def test_r2_constant_target_matches_sklearn():
    y = np.array([[1.0, 2.0], [1.0, 3.0], [1.0, 4.0]])
    for p in (y.copy(), y + 0.5):
        np.testing.assert_allclose(
            M.r2(y, p, multioutput="raw_values"), skm.r2_score(y, p, multioutput="raw_values"), rtol=1e-12
        )


def test_bad_multioutput(reg):
    with pytest.raises(InvalidParameterError):
        M.mse(*reg, multioutput="variance_weighted")


# ----------------------------------------------------------------------------------- rrmse / arrmse / relative mse
def test_rrmse_definition(reg, rng):
    y, p = reg
    expected = np.sqrt(((y - p) ** 2).sum(0) / ((y - y.mean(0)) ** 2).sum(0))
    np.testing.assert_allclose(M.rrmse(y, p), expected, rtol=1e-12)
    np.testing.assert_allclose(M.rrmse(y, p), np.sqrt(1 - skm.r2_score(y, p, multioutput="raw_values")), rtol=1e-10)
    train_mean = rng.normal(size=3)
    expected_tr = np.sqrt(((y - p) ** 2).sum(0) / ((y - train_mean) ** 2).sum(0))
    np.testing.assert_allclose(M.rrmse(y, p, y_train_mean=train_mean), expected_tr, rtol=1e-12)
    assert M.arrmse(y, p, train_mean) == pytest.approx(expected_tr.mean(), rel=1e-12)
    assert M.arrmse(y, p) == pytest.approx(expected.mean(), rel=1e-12)
    # predicting the reference mean gives exactly 1
    np.testing.assert_allclose(M.rrmse(y, np.broadcast_to(y.mean(0), y.shape)), 1.0)


def test_rrmse_constant_target_and_bad_mean():
    y = np.array([2.0, 2.0, 2.0])
    assert M.rrmse(y, y)[0] == 0.0
    assert M.rrmse(y, y + 1)[0] == np.inf
    with pytest.raises(InvalidInputError, match="train_means"):
        M.rrmse(np.ones((3, 2)), np.ones((3, 2)), y_train_mean=[1.0, 2.0, 3.0])


def test_relative_mse_hand_computed():
    y = np.array([0.0, 2.0, 4.0, 10.0])
    p = np.array([1.0, 2.0, 4.0, 8.0])
    assert M.relative_mse(y, p) == pytest.approx((1 + 4) / 4 / 10)
    Y = np.c_[y, 2 * y]
    np.testing.assert_allclose(M.relative_mse(Y, np.c_[p, 2 * p], multioutput="raw_values"), [0.125, 0.25])


def test_regression_report(reg):
    y, p = reg
    rep = M.regression_report(y, p, y_train=y[:10])
    json.dumps(rep, allow_nan=False)
    assert set(rep) >= {"r2", "mse", "mae", "rrmse", "arrmse", "mse_over_range"}
    assert rep["r2"] == pytest.approx(skm.r2_score(y, p))
    assert rep["mse"] == pytest.approx(skm.mean_squared_error(y, p))
    assert len(rep["rrmse"]) == 3
    np.testing.assert_allclose(rep["rrmse"], M.rrmse(y, p, y[:10].mean(0)))
    assert rep["rrmse_reference"] == "train"
    rep1 = M.regression_report(y[:, 0], p[:, 0])
    assert rep1["n_targets"] == 1 and rep1["rrmse_reference"] == "test"
    # a constant target gives None (strict JSON), not inf
    rep2 = M.regression_report([1.0, 1.0], [1.0, 2.0])
    assert rep2["rrmse"] == [None]
    json.dumps(rep2, allow_nan=False)
    with pytest.raises(InvalidInputError, match="y_train"):
        M.regression_report(y, p, y_train=y[:, :2])


@pytest.mark.parametrize("fn", [M.mse, M.mae, M.r2, M.rrmse, M.relative_mse, M.regression_report])
def test_shape_mismatch_names_both_shapes(fn):
    with pytest.raises(InvalidInputError) as exc:
        fn(np.ones((5, 2)), np.ones((5, 3)))
    assert "(5, 2)" in str(exc.value) and "(5, 3)" in str(exc.value)


@pytest.mark.parametrize(
    "a, b",
    [(np.ones(3), np.ones(4)), (np.ones((0,)), np.ones((0,))), ([1.0, np.nan], [1.0, 2.0]), (np.ones((2, 2, 2)),) * 2],
)
def test_bad_inputs(a, b):
    with pytest.raises(InvalidInputError):
        M.mse(a, b)


# ----------------------------------------------------------------------------------- quantiles
def test_pinball_hand_computed():
    tau = [0.1, 0.5, 0.9]
    y = np.array([1.0, 0.0])
    Q = np.array([[0.0, 1.0, 3.0], [1.0, 0.0, -1.0]])
    # sample 0: r = (1, 0, -2) -> 0.1*1 + 0 + 0.1*2 = 0.3
    # sample 1: r = (-1, 0, 1) -> 0.9*1 + 0 + 0.9*1 = 1.8
    assert M.pinball_loss(y, Q, tau) == pytest.approx((0.3 + 1.8) / 2)


def test_pinball_matches_sklearn_per_level(rng):
    y = rng.normal(size=50)
    Q = rng.normal(size=(50, 3))
    tau = np.array([0.2, 0.5, 0.8])
    expected = sum(skm.mean_pinball_loss(y, Q[:, j], alpha=t) for j, t in enumerate(tau))
    assert M.pinball_loss(y, Q, tau) == pytest.approx(expected, rel=1e-12)


def test_pinball_errors():
    with pytest.raises(InvalidInputError, match="levels"):
        M.pinball_loss([1.0], [[0.0, 1.0]], [0.5])
    with pytest.raises(InvalidParameterError):
        M.pinball_loss([1.0], [[0.0, 1.0]], [0.0, 0.5])
    with pytest.raises(InvalidInputError, match="samples"):
        M.pinball_loss([1.0, 2.0], [[0.0, 1.0]], [0.1, 0.5])


def test_crossing_hand_computed():
    Q = np.array([[0.0, 1.0, 2.0], [2.0, 1.0, 3.0], [3.0, 2.0, 1.0]])
    # crossings: row0 none; row1 2>1 -> 1; row2 (3-2)+(2-1) = 2
    assert M.crossing_loss(Q) == pytest.approx(1.0)
    # the reference's opposite quantity would be (1+1 + 2 + 0)/3 -- we do not compute that
    assert M.crossing_loss(Q) != pytest.approx(4.0 / 3.0)
    assert M.crossing_loss(np.sort(Q, axis=1)) == 0.0
    # columns given with their levels in another order are sorted first
    assert M.crossing_loss(Q[:, ::-1], quantiles=[0.9, 0.5, 0.1]) == pytest.approx(1.0)
    assert M.crossing_loss([[1.0], [2.0]]) == 0.0
    with pytest.raises(InvalidParameterError, match="repeated"):
        M.crossing_loss(Q, quantiles=[0.1, 0.1, 0.5])


# ----------------------------------------------------------------------------------- multi-label
@pytest.fixture
def labels(rng):
    Yt = (rng.random((60, 7)) < 0.25).astype(int)
    Yp = (rng.random((60, 7)) < 0.25).astype(int)
    Yt[:5] = 0
    Yp[:3] = 0  # rows 0-2: both empty; rows 3-4: true empty, prediction maybe not
    return Yt, Yp


def test_example_based_f1_matches_sklearn(labels):
    Yt, Yp = labels
    expected = skm.f1_score(Yt, Yp, average="samples", zero_division=1)
    assert M.example_based_f1(Yt, Yp) == pytest.approx(expected, rel=1e-12)
    assert M.example_based_f1(sp.csr_matrix(Yt), sp.csr_matrix(Yp)) == pytest.approx(expected, rel=1e-12)


def test_example_based_f1_empty_convention():
    assert M.example_based_f1([[0, 0]], [[0, 0]]) == 1.0
    assert M.example_based_f1([[1, 0]], [[0, 0]]) == 0.0
    assert M.example_based_f1([[1, 1, 0], [0, 0, 0]], [[1, 0, 0], [0, 0, 0]]) == pytest.approx((2 / 3 + 1) / 2)


def test_hamming_and_accuracy_match_sklearn(labels):
    Yt, Yp = labels
    assert M.hamming_loss(Yt, Yp) == pytest.approx(skm.hamming_loss(Yt, Yp), rel=1e-12)
    assert M.hamming_loss(sp.csr_matrix(Yt), Yp) == pytest.approx(skm.hamming_loss(Yt, Yp), rel=1e-12)
    assert M.accuracy(Yt, Yp) == pytest.approx(skm.accuracy_score(Yt, Yp))
    a, b = np.array([0, 1, 2, 2]), np.array([0, 1, 1, 2])
    assert M.accuracy(a, b) == pytest.approx(skm.accuracy_score(a, b))


def test_multilabel_errors():
    with pytest.raises(InvalidInputError, match="binary"):
        M.example_based_f1([[0.3, 1]], [[0, 1]])
    with pytest.raises(InvalidInputError, match=r"\(2, 3\).*\(2, 2\)"):
        M.hamming_loss(np.zeros((2, 3)), np.zeros((2, 2)))
    with pytest.raises(InvalidInputError):
        M.accuracy([1, 2], [1, 2, 3])


# ----------------------------------------------------------------------------------- ranking
def test_rank_of_true_and_ranking_metrics():
    S = np.array([[0.1, 0.9, 0.5, 0.5], [3.0, 1.0, 2.0, -np.inf], [1.0, 1.0, 1.0, 1.0]])
    idx = np.array([2, 0, 3])
    np.testing.assert_array_equal(M.rank_of_true(S, idx, ties="optimistic"), [2, 1, 1])
    np.testing.assert_array_equal(M.rank_of_true(S, idx, ties="pessimistic"), [3, 1, 4])
    ranks = M.rank_of_true(S, idx)
    np.testing.assert_array_equal(ranks, [2.5, 1, 2.5])
    ranks = np.array([1, 2, 5, 1])
    assert M.hits_at_k(ranks, 1) == 0.5
    np.testing.assert_array_equal(M.hits_at_k(ranks, [1, 2, 5]), [0.5, 0.75, 1.0])
    assert M.mean_reciprocal_rank(ranks) == pytest.approx((1 + 0.5 + 0.2 + 1) / 4)
    assert M.mean_rank(ranks) == pytest.approx(9 / 4)


def test_ranking_errors():
    with pytest.raises(InvalidInputError):
        M.mean_rank([0, 1])
    with pytest.raises(InvalidParameterError):
        M.hits_at_k([1, 2], 0)
    with pytest.raises(InvalidInputError, match="true_index"):
        M.rank_of_true(np.ones((2, 3)), [0, 3])
    with pytest.raises(InvalidInputError, match="NaN"):
        M.rank_of_true([[np.nan, 1.0]], [0])
    with pytest.raises(InvalidParameterError):
        M.rank_of_true(np.ones((1, 2)), [0], ties="random")


# ----------------------------------------------------------------------------------- RRMSE with training means
def _rrmse_by_hand(Y, P, means):
    out = []
    for j in range(Y.shape[1]):
        num = sum((Y[i, j] - P[i, j]) ** 2 for i in range(Y.shape[0]))
        den = sum((Y[i, j] - means[j]) ** 2 for i in range(Y.shape[0]))
        out.append((num / den) ** 0.5)
    return np.array(out)


def test_rrmse_train_means_hand_formula(rng):
    Y_train = rng.normal(loc=[1.0, -2.0, 5.0], size=(30, 3))
    Y = rng.normal(size=(20, 3))
    P = Y + 0.3 * rng.normal(size=Y.shape)
    means = Y_train.mean(axis=0)
    values, used = M.rrmse(Y, P, train_means=means, return_reference=True)
    assert used == "train"
    np.testing.assert_allclose(values, _rrmse_by_hand(Y, P, means), rtol=1e-12)
    np.testing.assert_allclose(M.rrmse(Y, P, means), values, rtol=0)  # older positional name
    test_values, used = M.rrmse(Y, P, return_reference=True)
    assert used == "test"
    np.testing.assert_allclose(test_values, _rrmse_by_hand(Y, P, Y.mean(axis=0)), rtol=1e-12)
    value, used = M.arrmse(Y, P, train_means=means, return_reference=True)
    assert used == "train" and value == pytest.approx(values.mean(), rel=1e-12)
    assert M.arrmse(Y, P) == pytest.approx(test_values.mean(), rel=1e-12)
    with pytest.raises(InvalidParameterError, match="once"):
        M.rrmse(Y, P, means, train_means=means)


def test_regression_report_uses_training_means(rng):
    Y_train = rng.normal(loc=3.0, size=(15, 2))
    Y = rng.normal(size=(10, 2))
    P = Y + 0.1
    rep = M.regression_report(Y, P, y_train=Y_train)
    assert rep["rrmse_reference"] == "train"
    np.testing.assert_allclose(rep["rrmse"], _rrmse_by_hand(Y, P, Y_train.mean(axis=0)), rtol=1e-12)


# ----------------------------------------------------------------------------------- check_quantiles
def test_check_quantiles():
    np.testing.assert_array_equal(M.check_quantiles([0.1, 0.9]), [0.1, 0.9])
    np.testing.assert_array_equal(M.check_quantiles(0.5, 1), [0.5])
    with pytest.raises(InvalidInputError, match="2 levels but Q has 3"):
        M.check_quantiles([0.1, 0.9], 3)
    for bad in ([0.0, 0.5], [1.0], [np.nan], []):
        with pytest.raises(InvalidParameterError):
            M.check_quantiles(bad)
    with pytest.raises(InvalidParameterError):
        M.check_quantiles("abc")


# ----------------------------------------------------------------------------------- scikit-learn stays lazy
def test_metrics_imports_scikit_learn_only_inside_functions():
    import ast
    import inspect
    import pkgutil

    modules = [M] + [__import__(f"skframe.metrics.{m.name}", fromlist=["_"]) for m in pkgutil.iter_modules(M.__path__)]
    for mod in modules:
        tree = ast.parse(inspect.getsource(mod))
        top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
        names = [a.name for n in top if isinstance(n, ast.Import) for a in n.names]
        names += [n.module or "" for n in top if isinstance(n, ast.ImportFrom)]
        assert not any(nm.startswith("sklearn") for nm in names), mod.__name__


def test_sparse_and_single_column_label_metrics():
    A = np.array([[1, 0, 1], [0, 0, 1]])
    B = np.array([[1, 1, 1], [0, 0, 0]])
    assert M.hamming_loss(sp.csr_matrix(A), sp.csr_matrix(B)) == pytest.approx(2 / 6)
    assert M.hamming_loss(A[:, :1], B[:, :1]) == 0.0
    assert M.accuracy([1, 2, 3], [1, 2, 0]) == pytest.approx(2 / 3)
    assert M.accuracy(A, A.copy()) == 1.0
