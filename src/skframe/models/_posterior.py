"""Posterior variance of (sketched) kernel ridge regression read as a Gaussian process.

Kernel ridge regression with ``lam`` is the posterior mean of a Gaussian process with covariance
``s2 k`` and noise variance ``s2 n lam``. Its posterior variance at x (Rasmussen and Williams,
"Gaussian Processes for Machine Learning", eq. 2.26) is, for the exact model,

    var(x) = s2 (k(x, x) - k_x^T (K + n lam I)^{-1} k_x),

and for a sketched model with features ``z(x)`` (``Z`` on the training rows, so that
``q(x, x) = ||z(x)||^2`` is the Nyström approximation of ``k(x, x)``) the same formula with
``K`` replaced by ``Z Z^T`` and ``k_x`` by ``Z z(x)`` (the deterministic-training-conditional
Nyström GP; Quiñonero-Candela and Rasmussen, "A unifying view of sparse approximate Gaussian
process regression", JMLR 2005), which by the Woodbury identity is

    var(x) = s2 (k(x, x) - ||z(x)||^2 + n lam z(x)^T (Z^T Z + n lam I)^{-1} z(x)).

``s2`` (one per target) is the maximum-likelihood amplitude ``s2_j = y_j^T (K~ + n lam I)^{-1} y_j / n``
(centred targets, ``K~ = K`` or ``Z Z^T``), i.e. ``(||y_j||^2 - b_j^T w_j) / (n^2 lam)`` from the sums
``b = Z^T y``, ``w = (Z^T Z + n lam I)^{-1} b`` (``y_j^T alpha_j / n`` for the exact model).
The predictive variance of a new observation adds the noise ``s2 n lam``.

The fitted state is ``P_z`` (the map ``k(x, X_fit_) -> z(x)``, None for an explicit feature map) and
the system ``A = Z^T Z`` (``K`` for the exact model), replaced at the first standard deviation asked for by
``P_v = L^{-T}`` (r x r) with ``L L^T = Z^T Z + n lam I``, so that ``z(x)^T (Z^T Z + n lam I)^{-1} z(x) =
||z(x)^T P_v||^2`` (exact model: ``P_v = L^{-T}``, n x n, ``L L^T = K + n lam I``, and the norm of
``k_x^T P_v``): prediction streams over test rows with one kernel block per chunk, as the point prediction does,
and the model keeps no second s' x r map.
For a sketch the state also keeps the factors of ``P_z = S_mix^T UD`` (``"mix"``, ``"UD"``): the features
of many rows are then computed as the fit computes them, ``(k(X, X_sub) S_mix^T) UD``, through the block engine
(:mod:`skframe.uncertainty._shared_folds`).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from skframe.compute.backend import to_numpy
from skframe.contract.collections import n_items, take
from skframe.contract.protocols import kernel_diag
from skframe.core.feature_map import kernel_times
from skframe.exceptions import InvalidInputError, NotFittedError

__all__ = ["posterior_state", "posterior_factor", "posterior_variance"]

#: bytes of the (rows x (d + 2 r)) block one chunk of test rows produces
CHUNK_BYTES = 32 * 2**20


def _cholesky(A, ridge):
    """Lower Cholesky factor of ``A + ridge I``; a numerically indefinite system (a λ chosen near the rounding of
    streamed sums) gets a growing jitter, as the GP literature does; None where even that fails."""
    A = np.array(A, dtype=np.float64)
    A[np.diag_indices_from(A)] += ridge
    level = max(float(np.trace(A)) / max(A.shape[0], 1), 1e-300)
    for jitter in (0.0, 1e-10, 1e-8, 1e-6):
        try:
            return sla.cholesky(A + jitter * level * np.eye(A.shape[0]), lower=True)
        except np.linalg.LinAlgError:
            continue
    return None


def posterior_state(rep, gram, Y, lam, W):
    """The fitted state of the posterior variance, or None where it is not defined (Dask targets).

    The system ``A`` is kept and factored at the first ``predict(X, return_std=True)``
    (:func:`posterior_factor`): a fit that never asks for a standard deviation pays no Cholesky factorisation
    of an r x r (or n x n) matrix, which at r = 10 000 costs more than the rest of a GPU fit.

    Parameters
    ----------
    rep : Representation or StreamedRepresentation
        The fit's training representation.
    gram : callable
        ``gram() -> (A, B)``: ``(Z^T Z, Z^T Y)`` or ``(K, Y)`` for the exact Gram form.
    Y : ndarray (n, d)
        The centred targets the model was solved for.
    lam : float
    W : ndarray
        The solved weights (``(A + n lam I)^{-1} B``).
    """
    if not isinstance(Y, np.ndarray):
        return None
    n = Y.shape[0]
    noise = n * float(lam)
    A, B = gram()
    A, B, W = np.asarray(A, dtype=np.float64), np.asarray(B, dtype=np.float64), np.asarray(W, dtype=np.float64)
    yy = np.einsum("ij,ij->j", Y, Y)
    if getattr(rep, "K", None) is not None:  # exact Gram form: W = alpha = (K + n lam I)^{-1} Y
        scale = np.einsum("ij,ij->j", Y, W) / n
        form, P_z = "gram", None
    else:
        scale = (yy - np.einsum("ij,ij->j", B, W)) / (n * noise)
        P_z = None if getattr(rep, "feature_map", None) is not None else np.asarray(rep.proj, dtype=np.float64)
        form = "features"
    mix, UD = (getattr(rep, "mix", None), getattr(rep, "UD", None)) if P_z is not None else (None, None)
    return {"form": form, "noise": float(noise), "scale": np.maximum(scale, 0.0), "P_z": P_z, "A": A,
            "mix": mix, "UD": None if UD is None else np.asarray(to_numpy(UD), dtype=np.float64)}


def posterior_factor(state):
    """``P_v = L^{-T}`` with ``L L^T = A + noise I`` (r x r, or n x n for the Gram form), computed once and kept
    in ``state`` in place of ``A``; None where the system has no usable factor (a λ at the rounding of the sums).
    """
    if "P_v" in state:
        return state["P_v"]
    L = _cholesky(state["A"], state["noise"])
    P_v = None if L is None else sla.solve_triangular(L, np.eye(L.shape[0]), lower=True).T  # L^{-T}
    state["P_v"] = P_v
    state.pop("A", None)
    return P_v


def posterior_variance(model, X, *, noise=False):
    """Posterior variance per test row and target (n_test, d), in chunks of test rows.

    ``noise=True`` adds the observation noise ``s2 n lam`` (the predictive variance of a new y).
    """
    state = model.posterior_
    kernel, X_fit, fmap = model.kernel_, model.X_fit_, model.feature_map_
    n_test = n_items(X)
    P_v, P_z = posterior_factor(state), state["P_z"]
    if P_v is None:
        raise NotFittedError("this model's system Z^T Z + n lam I has no Cholesky factor (lam is at the rounding "
                             "error of its sums): it predicts, but has no posterior variance; refit with a larger "
                             "lam for predict(X, return_std=True)")
    width = P_v.shape[1] + (P_z.shape[1] if P_z is not None else 0)  # V, and Z of the sketched form
    step = max(1, CHUNK_BYTES // (8 * max(width, 1)))
    out = np.empty(n_test)
    for start in range(0, n_test, step):
        Xc = take(X, np.arange(start, min(n_test, start + step)))
        rows = n_items(Xc)
        kxx = np.asarray(kernel_diag(kernel, Xc), dtype=np.float64)
        if state["form"] == "gram":
            V = kernel_times(kernel, Xc, X_fit, P_v)
            out[start:start + rows] = kxx - np.einsum("ij,ij->i", V, V)
            continue
        Z = (np.asarray(fmap.transform(Xc), dtype=np.float64) if fmap is not None
             else np.asarray(kernel_times(kernel, Xc, X_fit, P_z), dtype=np.float64))
        V = Z @ P_v
        residual = np.maximum(kxx - np.einsum("ij,ij->i", Z, Z), 0.0)  # k - q >= 0 (a Schur complement)
        out[start:start + rows] = residual + state["noise"] * np.einsum("ij,ij->i", V, V)
    var = np.maximum(out, 0.0)[:, None] * state["scale"][None, :]
    if noise:
        var = var + state["noise"] * state["scale"][None, :]
    if not np.all(np.isfinite(var)):
        raise InvalidInputError("the posterior variance is not finite for some rows of X; check X for huge values")
    return var
