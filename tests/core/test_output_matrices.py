"""Output matrices M of decomposable kernels k*M."""

import numpy as np
import pytest

from skframe.core.output_matrices import (
    build_output_matrix,
    covariance_matrix,
    graph_matrix,
    identity_matrix,
    quantile_matrix,
)
from skframe.exceptions import InvalidInputError, InvalidParameterError, UnknownComponentError


def test_quantile_matrix_formula_and_psd():
    q = [0.1, 0.3, 0.5, 0.7, 0.9]
    M = quantile_matrix(q, gamma=3.0)
    for i in range(5):
        for j in range(5):
            assert M[i, j] == pytest.approx(np.exp(-3.0 * (q[i] - q[j]) ** 2), rel=1e-14)
    assert np.linalg.eigvalsh(M).min() > -1e-12
    np.testing.assert_allclose(quantile_matrix(q, 0.0), np.ones((5, 5)))


def test_graph_matrix_formula_and_limits():
    P = np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]], dtype=float)
    L = np.diag(P.sum(1)) - P
    np.testing.assert_allclose(graph_matrix(P, 0.3), np.linalg.inv(0.3 * L + 0.7 * np.eye(3)), rtol=1e-12)
    np.testing.assert_allclose(graph_matrix(P, 0.0), np.eye(3), atol=1e-14)
    np.testing.assert_allclose(graph_matrix(P, 1.0), np.linalg.pinv(L), atol=1e-12)  # singular: pseudo-inverse


def test_graph_matrix_from_file(tmp_path):
    P = np.array([[0, 2.0], [2.0, 0]])
    path = tmp_path / "adj.csv"
    np.savetxt(path, P, delimiter=",")
    np.testing.assert_allclose(build_output_matrix("graph", np.zeros((3, 2)), {"adjacency": str(path), "mu": 0.5}),
                               graph_matrix(P, 0.5))
    np.save(tmp_path / "adj.npy", P)
    np.testing.assert_allclose(graph_matrix(tmp_path / "adj.npy", 0.5), graph_matrix(P, 0.5))


def test_covariance_and_identity(rng):
    Y = rng.normal(size=(50, 3))
    np.testing.assert_allclose(covariance_matrix(Y), np.cov(Y.T))
    np.testing.assert_array_equal(build_output_matrix(None, Y), np.eye(3))
    np.testing.assert_array_equal(build_output_matrix("identity", Y), identity_matrix(3))
    np.testing.assert_allclose(build_output_matrix("quantile", Y, {"gamma": 2.0}, quantiles=[0.2, 0.5, 0.8]),
                               quantile_matrix([0.2, 0.5, 0.8], 2.0))


@pytest.mark.parametrize(
    "spec,params,exc,match",
    [
        ("bogus", None, UnknownComponentError, "unknown output matrix"),
        ("graph", {"mu": 0.5}, InvalidParameterError, "adjacency"),
        ("graph", {"adjacency": [[0, 1], [1, 0]], "mu": 2.0}, InvalidParameterError, "mu"),
        ("graph", {"adjacency": [[0, -1], [-1, 0]]}, InvalidInputError, "non-negative"),
        ("graph", {"adjacency": "/nonexistent/adj.csv"}, InvalidParameterError, "does not exist"),
        ("quantile", {"gamma": 1.0}, InvalidParameterError, "quantile levels"),
        ("identity", {"gamma": 1.0}, InvalidParameterError, "invalid parameters.*gamma"),
        (np.eye(3), None, InvalidParameterError, "shape"),
        (np.array([[1.0, 2.0], [2.0, 1.0]]), None, InvalidParameterError, "positive semi-definite"),
        (np.array([[1.0, 0.5], [0.0, 1.0]]), None, InvalidParameterError, "symmetric"),
    ],
)
def test_bad_specs(spec, params, exc, match):
    with pytest.raises(exc, match=match):
        build_output_matrix(spec, np.zeros((4, 2)), params)
