"""Tolerances derived from the conditioning of the problem, not from one machine's rounding.

Two computations of the same linear solve that differ only in rounding (another summation order,
another BLAS kernel, float32 instead of float64 products) agree to about

    ||x - x_ref|| / ||x_ref||  <=  C * kappa(A) * delta,

where ``kappa(A)`` is the condition number of the system and ``delta`` the relative perturbation of its
entries (a few unit roundoffs, or the float32 error of the kernel blocks). The bound is *normwise*:
one small coefficient can carry a large relative error without breaking it, so entrywise ``rtol``
checks are the wrong test for solves (they pass or fail with the BLAS kernel the machine picks).
"""

import numpy as np

EPS64 = float(np.finfo(np.float64).eps)
EPS32 = float(np.finfo(np.float32).eps)

#: the constant C of the bound: a few roundings per entry in the products and in the factorisation
SAFETY = 50.0


def as_dense(M):
    """A dense ndarray of a matrix that may be sparse."""
    return np.asarray(M.toarray() if hasattr(M, "toarray") else M, dtype=np.float64)


def sketched_ridge_conditions(kernel, X, R, lam):
    """Condition numbers of a sketched ridge fit: ``(kappa_system, kappa_RKR)``.

    ``kappa_system`` is that of ``K_nm^T K_nm / n + lam R K R^T`` in the whitened basis of the directions
    the fit keeps (eigenvalues of ``R K R^T`` above ``1e-12`` of the largest), with
    ``K_nm = k(X, X_sub) S_mix^T``: it bounds the error of the predictions. The coefficients are
    mapped back through ``(R K R^T)^{-1/2}``, so their error is also amplified by ``kappa_RKR``, the
    condition number of the kept part of ``R K R^T``.
    """
    mix = as_dense(R.mix)
    X_sub = X[R.indices]
    Knm = as_dense(kernel(X, X_sub)) @ mix.T
    RKR = mix @ as_dense(kernel(X_sub, X_sub)) @ mix.T
    w, U = np.linalg.eigh((RKR + RKR.T) / 2)
    keep = w > 1e-12 * w.max()
    B = U[:, keep] / np.sqrt(w[keep])  # whitening of the kept directions
    A = B.T @ (Knm.T @ Knm / X.shape[0] + lam * RKR) @ B
    return float(np.linalg.cond(A)), float(w.max() / w[keep].min())


def gaussian_float32_perturbation(X, Y, gamma):
    """Relative error of a Gaussian block ``exp(-gamma ||x - y||^2)`` evaluated from float32 inputs.

    The squared distance is formed as ``||x||^2 + ||y||^2 - 2 x.y``: its rounding is about
    ``eps32 (||x||^2 + ||y||^2)``, which the exponential multiplies by ``gamma``.
    """
    scale = np.max(np.sum(X * X, axis=1)) + np.max(np.sum(Y * Y, axis=1))
    return EPS32 * (1.0 + gamma * scale)


def solve_rtol(kappa, delta):
    """Normwise relative tolerance for a solve of condition ``kappa`` whose entries carry error ``delta``."""
    return SAFETY * kappa * delta


def assert_normwise_close(actual, desired, rtol):
    """``||actual - desired|| <= rtol ||desired||`` (Frobenius norms), with the figures in the message."""
    actual, desired = np.asarray(actual, dtype=np.float64), np.asarray(desired, dtype=np.float64)
    assert actual.shape == desired.shape, (actual.shape, desired.shape)
    err = np.linalg.norm(actual - desired)
    ref = np.linalg.norm(desired)
    assert err <= rtol * ref, f"normwise relative error {err / ref:.3e} > {rtol:.3e}"
