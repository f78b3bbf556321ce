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

The fitted state is as small as the numbers allow. A sketched fit keeps the factors of the map
``P_z = S_mix^T UD`` (``k(x, X_fit_) -> z(x)``): the sketch's mixing matrix ``"mix"`` (m x s', sparse for the
p-sparsified and sub-sampling sketches) and ``"UD"`` (m x r), and computes the features of test rows as the fit
computes its own, ``(k(x, X_sub) S_mix^T) UD`` (the block engine's product with ``S_mix``), never the dense
s' x r ``P_z`` (``"P_z"`` is None). The dense ``"P_z"`` is kept only where it has no such factors (the exact model
in feature form); it is None for the exact Gram form (the kernel vector is used itself) and for an explicit feature
map (``feature_map_.transform``). The system
``A = Z^T Z`` (``K`` for the exact model) is symmetric and kept as its lower triangle, row by row
(``"A_tril"``, r (r + 1) / 2 values: the Cholesky factorisation reads nothing else); at the first standard
deviation asked for it is replaced by ``P_v = L^{-T}`` (r x r, upper triangular) with
``L L^T = Z^T Z + n lam I``, kept as its upper triangle, row by row (``"P_v_triu"``), so that
``z(x)^T (Z^T Z + n lam I)^{-1} z(x) = ||z(x)^T P_v||^2`` (exact model: ``P_v = L^{-T}``, n x n,
``L L^T = K + n lam I``, and the norm of ``k_x^T P_v``). The square ``P_v`` a prediction multiplies by is
unpacked once per process and kept beside the state while its packed triangle lives, never in it.
Prediction streams over test rows with one kernel block per chunk (:func:`posterior_predict`): the same block
gives the mean ``k(x, X_fit_) coef_`` and the features of the variance, so ``predict(X, return_std=True)``
evaluates the kernel on the rows ``predict(X)`` does.
State written by earlier versions (a dense ``"P_z"``, a square ``"A"`` or ``"P_v"``) is read as it is and
gives the standard deviations it gave.
"""

from __future__ import annotations

import weakref

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from skframe.compute.backend import to_numpy
from skframe.contract.collections import chunks, n_items
from skframe.contract.protocols import kernel_diag
from skframe.core.block_engine import BlockEngine, row_slice, rows_within_budget, times_mix
from skframe.core.engine import planned
from skframe.core.sketch_matrix import diagonal_of_mix
from skframe.exceptions import InvalidInputError, NotFittedError, PersistenceError

__all__ = ["posterior_state", "posterior_factor", "posterior_variance", "posterior_predict", "pack_lower",
           "unpack_lower"]

#: bytes of the (rows x (m + 2 r)) blocks one chunk of test rows produces
CHUNK_BYTES = 32 * 2**20

#: id of a packed factor -> (a weak reference to it, the square factor): unpacked once, dropped with it
_UNPACKED = {}


def pack_lower(M, upper=False):
    """The lower (``upper=True``: upper) triangle of the square ``M``, row by row: ``n (n + 1) / 2`` float64
    values.

    >>> pack_lower(np.array([[1.0, 2.0], [3.0, 4.0]])).tolist()
    [1.0, 3.0, 4.0]
    """
    n = M.shape[0]
    out = np.empty(n * (n + 1) // 2, dtype=np.float64)
    at = 0
    for i in range(n):
        row = M[i, i:] if upper else M[i, :i + 1]
        out[at:at + row.size] = row
        at += row.size
    return out


def unpack_lower(packed, symmetric=False, upper=False):
    """The square (C-ordered) matrix of :func:`pack_lower`'s values: zeros in the other triangle, or the mirror
    image of the lower one (``symmetric=True``).

    >>> unpack_lower(np.array([1.0, 3.0, 4.0]), symmetric=True).tolist()
    [[1.0, 3.0], [3.0, 4.0]]
    """
    packed = np.asarray(packed, dtype=np.float64).reshape(-1)
    n = int(round((np.sqrt(8.0 * packed.size + 1.0) - 1.0) / 2.0))
    if n * (n + 1) // 2 != packed.size:
        raise PersistenceError(f"the posterior state holds a packed triangle of {packed.size} values, which no "
                               "square matrix has; the model file is corrupted: refit the model")
    out = np.zeros((n, n))
    at = 0
    for i in range(n):
        width = n - i if upper else i + 1
        if upper:
            out[i, i:] = packed[at:at + width]
        else:
            out[i, :width] = packed[at:at + width]
        at += width
    if symmetric:
        out = out + out.T  # zero in the other triangle: exact off the diagonal, and twice the diagonal on it
        out[np.diag_indices(n)] *= 0.5
    return out


def _square_factor(packed):
    """``P_v`` from its packed upper triangle, unpacked once per packed array (kept while that array lives)."""
    key = id(packed)
    hit = _UNPACKED.get(key)
    if hit is not None and hit[0]() is packed:
        return hit[1]
    full = unpack_lower(packed, upper=True)
    _UNPACKED[key] = (weakref.ref(packed, lambda _ref, key=key: _UNPACKED.pop(key, None)), full)
    return full


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

    The system ``A`` is kept (its lower triangle) and factored at the first ``predict(X, return_std=True)``
    (:func:`posterior_factor`): a fit that never asks for a standard deviation pays no Cholesky factorisation
    of an r x r (or n x n) matrix, which at r = 10 000 costs more than the rest of a GPU fit. A sketch keeps
    ``mix`` and ``UD`` rather than their dense product ``P_z`` (s' x r).

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
    if mix is not None and UD is not None:
        P_z = None  # derivable: mix^T UD, and the features are computed from the two factors
    else:
        mix = UD = None
    return {"form": form, "noise": float(noise), "scale": np.maximum(scale, 0.0), "P_z": P_z,
            "A_tril": pack_lower(A),
            "mix": mix, "UD": None if UD is None else np.asarray(to_numpy(UD), dtype=np.float64)}


def posterior_factor(state):
    """``P_v = L^{-T}`` with ``L L^T = A + noise I`` (r x r, or n x n for the Gram form), computed once and kept
    in ``state`` in place of ``A`` as its upper triangle, row by row (``"P_v_triu"``); None where the system has
    no usable factor (a λ at the rounding of the sums). Reads the layouts of earlier versions too: a square
    ``"A"``, a square ``"P_v"``.
    """
    if "P_v_triu" in state:
        packed = state["P_v_triu"]
        return None if packed is None else _square_factor(packed)
    if "P_v" in state:  # an earlier version's square factor
        return state["P_v"]
    A = unpack_lower(state["A_tril"], symmetric=True) if "A_tril" in state else state["A"]
    L = _cholesky(A, state["noise"])
    del A
    packed = None
    if L is not None:
        packed = pack_lower(sla.solve_triangular(L, np.eye(L.shape[0]), lower=True).T, upper=True)  # L^{-T}
    state["P_v_triu"] = packed
    state.pop("A_tril", None)
    state.pop("A", None)
    return None if packed is None else _square_factor(packed)


def posterior_variance(model, X, *, noise=False, options=None):
    """Posterior variance per test row and target (n_test, d), in chunks of test rows (see :func:`posterior_predict`).

    ``noise=True`` adds the observation noise ``s2 n lam`` (the predictive variance of a new y).
    """
    return posterior_predict(model, X, noise=noise, options=options)[1]


def posterior_predict(model, X, *, noise=False, options=None):
    """``(F, var)``: the kernel expansion ``k(X, X_fit_) coef_`` (no intercept; ``feature_map_.transform(X) coef_``
    for an explicit map) and the posterior variance (n_test, d), from ONE kernel block per chunk of test rows.

    Each chunk's block ``K = k(X_rows, X_fit_)`` of the block engine (:class:`skframe.core.block_engine.BlockEngine`,
    its loops the prediction plan's ``options.engine``) gives the mean ``K coef_`` (the point prediction's
    formula) and the features of the variance: ``(K S_mix^T) UD`` for a sketch, ``K P_z`` for a dense map, and
    ``K P_v`` for the exact Gram form. ``noise=True`` adds the observation noise ``s2 n lam``.

    Parameters
    ----------
    model : fitted SketchedKernelRidge
    X : validated test rows (array, sparse matrix or InputCollection)
    noise : bool, default=False
    options : ComputeOptions, optional
        The prediction's plan (:func:`skframe.compute.plan.plan_predict`): engine, block budget; without one the
        engine is chosen once from ``len(X) x len(X_fit_)`` kernel entries.
    """
    state = model.posterior_
    kernel, X_fit, fmap, coef = model.kernel_, model.X_fit_, model.feature_map_, np.asarray(model.coef_)
    n_test = n_items(X)
    P_v, P_z = posterior_factor(state), state["P_z"]
    if P_v is None:
        raise NotFittedError("this model's system Z^T Z + n lam I has no Cholesky factor (lam is at the rounding "
                             "error of its sums): it predicts, but has no posterior variance; refit with a larger "
                             "lam for predict(X, return_std=True)")
    mix, UD = state.get("mix"), state.get("UD")
    mixed = state["form"] == "features" and fmap is None and P_z is None and mix is not None and UD is not None
    diag = diagonal_of_mix(mix) if mixed else None
    # V, the mean, and Z (and k(x, X_sub) S_mix^T) of the sketched form
    d = coef.shape[1] if coef.ndim == 2 else 1
    width = P_v.shape[1] + (P_v.shape[1] if state["form"] == "features" else 0) + (UD.shape[0] if mixed else 0) + d
    step = max(1, CHUNK_BYTES // (8 * max(width, 1)))
    engine = None
    if fmap is None:  # a kernel expansion: one block of the engine per chunk, in the plan's chunks
        n_ref = n_items(X_fit)
        options = planned(options, n_test * n_ref, sparse=sp.issparse(X)).replace(dtype="float64")
        step = min(step, rows_within_budget(kernel, n_ref, options))
        engine = BlockEngine(options.engine)
    F = np.empty((n_test,) + coef.shape[1:])
    out = np.empty(n_test)
    for start, stop in chunks(n_test, step):
        Xc = row_slice(X, start, stop)
        kxx = np.asarray(kernel_diag(kernel, Xc), dtype=np.float64)
        if engine is None:
            Z = np.asarray(fmap.transform(Xc), dtype=np.float64)
            F[start:stop] = Z @ coef
        else:
            K = engine.block(kernel, Xc, X_fit, np.float64)
            F[start:stop] = K @ coef
            if state["form"] == "gram":
                V = K @ P_v
                out[start:stop] = kxx - np.einsum("ij,ij->i", V, V)
                continue
            if not mixed:  # a dense map: the exact features form, or a model file of an earlier layout
                Z = K @ np.asarray(P_z, dtype=np.float64)
            elif diag is not None:  # sub-sampling: S_mix is diagonal
                Z = (K * diag) @ UD
            else:
                Z = times_mix(K, mix, engine=engine.loops) @ UD
            del K
        V = Z @ P_v
        residual = np.maximum(kxx - np.einsum("ij,ij->i", Z, Z), 0.0)  # k - q >= 0 (a Schur complement)
        out[start:stop] = residual + state["noise"] * np.einsum("ij,ij->i", V, V)
    var = np.maximum(out, 0.0)[:, None] * state["scale"][None, :]
    if noise:
        var = var + state["noise"] * state["scale"][None, :]
    if not np.all(np.isfinite(var)):
        raise InvalidInputError("the posterior variance is not finite for some rows of X; check X for huge values")
    return F, var
