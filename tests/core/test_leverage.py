"""Ridge leverage scores from a Nyström factor (skframe.core.leverage) against the exact formula."""

import numpy as np
import pytest

from skframe.core.leverage import approximate_leverage_scores, effective_dimension, nystrom_leverage_scores
from skframe.exceptions import InvalidParameterError
from tests._structured_helpers import GaussK, LinK, multilabel_data


def test_leverage_scores_exact_when_all_columns_sampled():
    X, _ = multilabel_data(n=60)
    k, lam, n = GaussK(0.2), 1e-2, 60
    K = k(X, X)
    exact = np.diag(K @ np.linalg.inv(K + n * lam * np.eye(n)))
    approx = approximate_leverage_scores(k, X, lam, n_samples=n, random_state=0)
    np.testing.assert_allclose(approx, exact, rtol=1e-6, atol=1e-8)
    assert effective_dimension(approx) == pytest.approx(exact.sum(), rel=1e-6)


def test_leverage_scores_low_rank_effective_dimension():
    rng = np.random.default_rng(0)
    Y = rng.normal(size=(200, 3)) @ rng.normal(size=(3, 30))  # rank 3 under the linear kernel
    lev = approximate_leverage_scores(LinK(), Y, 1e-8, n_samples=40, random_state=0)
    assert effective_dimension(lev) == pytest.approx(3.0, abs=0.05)


def test_nystrom_scores_are_the_exact_ridge_leverage_scores_with_all_columns():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(50, 4))
    k, lam, n = GaussK(0.5), 1e-3, 50
    K = k(X, X)
    exact = np.diag(K @ np.linalg.inv(K + n * lam * np.eye(n)))
    np.testing.assert_allclose(nystrom_leverage_scores(k, X, lam, n, np.random.default_rng(0)), exact,
                               rtol=1e-6, atol=1e-9)


def test_nystrom_scores_count_what_the_factor_misses():
    """With few columns, each score adds (K_ii - ||F_i||^2) / (n lam): the plain formula of the docstring."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(40, 3))
    k, lam, n, q = GaussK(0.3), 1e-2, 40, 8
    J = np.sort(np.random.default_rng(0).choice(n, size=q, replace=False))
    K = k(X, X)
    w, V = np.linalg.eigh(K[np.ix_(J, J)])
    F = K[:, J] @ (V / np.sqrt(w))
    plain = np.diag(F @ np.linalg.inv(F.T @ F + n * lam * np.eye(q)) @ F.T) + (np.diag(K) - (F * F).sum(1)) / (n * lam)
    np.testing.assert_allclose(nystrom_leverage_scores(k, X, lam, q, np.random.default_rng(0)), plain,
                               rtol=1e-6, atol=1e-9)


def test_leverage_scores_need_a_positive_ridge():
    X, _ = multilabel_data(n=20)
    with pytest.raises(InvalidParameterError, match="lam"):
        approximate_leverage_scores(GaussK(0.2), X, 0.0)
