import numpy as np
import scipy.sparse as sp

from skframe.contract.registry import get_sketch
from skframe.core.output_basis import SketchedOutputBasis, TrainingOutputBasis, unique_rows
from tests._structured_helpers import GaussK, LinK, multilabel_data


def test_sketched_basis_matches_dense_formula():
    _, Y = multilabel_data(n=50)
    ky = GaussK(0.3)
    R = get_sketch("psg", size=15, p=0.3).draw(50, np.random.default_rng(0))
    basis, Psi = SketchedOutputBasis.fit(ky, Y, R)
    Rd = R.toarray()
    Kt = Rd @ ky(Y, Y) @ Rd.T
    w, U = np.linalg.eigh(Kt)
    w, U = w[::-1], U[:, ::-1]
    keep = w > 1e-12 * w[0]
    ref = (ky(Y, Y) @ Rd.T @ U[:, keep]) / np.sqrt(w[keep])
    # eigenvectors are defined up to sign
    signs = np.sign(np.sum(ref * Psi, axis=0))
    np.testing.assert_allclose(Psi, ref * signs, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(basis.embed(Y), Psi, rtol=1e-9, atol=1e-11)
    # orthonormal basis: <e_j, e_l> = delta_jl
    Bv = Rd.T @ U[:, keep] / np.sqrt(w[keep])
    np.testing.assert_allclose(Bv.T @ ky(Y, Y) @ Bv, np.eye(keep.sum()), atol=1e-8)
    assert basis.gram is None and basis.normalized


def test_training_basis_and_unique_rows():
    Y = np.array([[1, 0], [0, 1], [1, 0], [1, 1], [0, 1]], dtype=float)
    U, first, inv = unique_rows(Y)
    np.testing.assert_array_equal(U, [[1, 0], [0, 1], [1, 1]])
    np.testing.assert_array_equal(U[inv], Y)
    U2, _, inv2 = unique_rows(sp.csr_matrix(Y))
    np.testing.assert_array_equal(U2.toarray(), U)
    basis, T = TrainingOutputBasis.fit(LinK(), Y)
    np.testing.assert_array_equal(T.argmax(1), inv)
    np.testing.assert_allclose(basis.embed(Y), Y @ U.T)
    np.testing.assert_allclose(basis.sq_norm(T), (Y * Y).sum(1))
    np.testing.assert_allclose(basis.self_kernel(Y), (Y * Y).sum(1))
