"""Output kernel regression for structured prediction: IOKR, SIOKR, ISOKR and SISOKR (seed 003).

The surrogate estimator ``h(x) = sum_i alpha_i(x) psi(y_i)`` lives in the output
RKHS. skframe represents it by its coordinates ``g(x)`` in an output basis
(:mod:`skframe.output_basis`) and decodes by a maximum inner-product search
against candidate embeddings (``skframe_decoders``). The four models are the
four combinations of an optional input sketch R_X and output sketch R_Y:

=========  ============  =============  ==========================================
model      input sketch  output sketch  coordinates g(x)
=========  ============  =============  ==========================================
IOKR       none          none           ``k_x^T (K_X + n lam I)^{-1} E``
SIOKR      R_X           none           ``z(x)^T (Z^T Z + n lam I)^{-1} Z^T E``
ISOKR      none          R_Y            ``k_x^T (K_X + n lam I)^{-1} Psi``
SISOKR     R_X           R_Y            ``z(x)^T (Z^T Z + n lam I)^{-1} Z^T Psi``
=========  ============  =============  ==========================================

with ``E`` the one-hot map of the training outputs onto the distinct ones,
``Psi = K_Y R_Y^T U_Y D_Y^{-1/2}`` the training outputs in the sketched output
basis and ``z(x) = D_X^{-1/2} U_X^T R_X k_x`` the sketched input features
(seed 002 Prop. 1). The SISOKR line is seed 003 Prop. 1 written in these
coordinates (see :func:`sisokr_omega` and ``tests/naive.py``).
"""

from __future__ import annotations

import hashlib
import time

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state

from .._validation import check_scalar
from ..exceptions import InvalidInputError, InvalidParameterError
from ..linalg import default_rtol, pinv_sym, solve_psd
from ..output_basis import SketchedOutputBasis, TrainingOutputBasis
from ..persistence import persistable
from ..protocols import kernel_block, kernel_prepare
from ..registry import component_name, get_decoder
from ..sketching import diagonal_of_mix, draw_sketch, kernel_times, sketched_gram_products
from ._base import KernelModelMixin, resolve_kernel, resolve_sketch, validate_X

__all__ = ["OutputKernelRegressor", "sisokr_omega", "sketched_input_coef"]

# Cache candidate embeddings of a user-given global set when they take at most this many bytes.
CACHE_BYTES = 512 * 2**20


def sisokr_omega(KR_X, RKR_X, RKY, RKR_Y, lam, rtol=None):
    """Omega~ of seed 003 Prop. 1 from sketched products (dense, for checks and small problems).

    ``Omega~ = K~_Y^+ R_Y K_Y K_X R_X^T (R_X K_X^2 R_X^T + n lam K~_X)^+``.

    Parameters
    ----------
    KR_X : ndarray (n, m_X)
        ``K_X R_X^T``.
    RKR_X : ndarray (m_X, m_X)
        ``K~_X = R_X K_X R_X^T``.
    RKY : ndarray (m_Y, n)
        ``R_Y K_Y``.
    RKR_Y : ndarray (m_Y, m_Y)
        ``K~_Y``.
    lam : float
    rtol : float, optional
        Relative tolerance of the pseudo-inverses.

    Returns
    -------
    ndarray of shape (m_Y, m_X)
    """
    n = KR_X.shape[0]
    A = KR_X.T @ KR_X + n * lam * RKR_X
    return pinv_sym(RKR_Y, rtol) @ (RKY @ KR_X) @ pinv_sym(A, rtol)


def sketched_input_coef(kernel, X, R, T, lam, *, rtol=None):
    """Coefficients on the sampled inputs of the input-sketched ridge map to targets ``T``.

    ``coef = S_mix^T (R K^2 R^T + n lam K~)^+ R K T`` (seed 003 Prop. 1, the
    right-hand factor of Omega~), so that the prediction is
    ``k(x, X[R.indices]) @ coef``. ``R K R^T`` and ``K R^T`` come from the
    decomposition trick; the m x m system is solved by Cholesky, with the
    truncated-eigendecomposition pseudo-inverse as the fallback when it is
    singular. This equals the feature-map form ``z(x)^T (Z^T Z + n lam I)^{-1} Z^T T``
    of seed 002 Prop. 1 without its m x m eigendecomposition.

    Parameters
    ----------
    kernel : kernel object
    X : ndarray or sparse matrix of shape (n, d)
    R : SketchMatrix (m x n)
    T : ndarray of shape (n, q)
    lam : float
    rtol : float, optional

    Returns
    -------
    ndarray of shape (s', q)
    """
    n = X.shape[0]
    if diagonal_of_mix(R.mix) is not None:
        # sub-sampling, S_mix = D diagonal: coef = D (D K^T K D + n lam D K_mm D)^+ D K^T T
        # = (K^T K + n lam K_mm)^+ K^T T with K = k(X, X_sub): D cancels, skip the scaling passes
        KR = kernel_block(kernel, X, X[R.indices])
        G = KR[R.indices]  # K_mm
        mix_T = None
    else:
        KR, G = sketched_gram_products(kernel, X, R)
        mix_T = R.mix.T
    B = KR.T @ T

    def full_M():  # the full symmetric M, rebuilt only for the pseudo-inverse fallback
        S = KR[R.indices] if mix_T is None else np.asarray(R.mix @ KR[R.indices])
        M = KR.T @ KR
        M += (0.5 * n * lam) * (S + S.T)
        return M

    # upper triangle of M = KR^T KR + n lam G in one BLAS syrk: KR.T is a Fortran-ordered view
    # (no copy) and G's storage takes the result (G.T is Fortran-ordered and, G being
    # symmetric up to rounding, the same matrix); then factored in place
    M = sla.blas.dsyrk(1.0, KR.T, beta=n * lam, c=G.T, trans=0, lower=0, overwrite_c=1)
    # duplicated sampled inputs make M exactly singular: skip the doomed plain Cholesky
    W = _solve_psd_jitter(M, B, rtol, singular=_has_duplicate_rows(X[R.indices]), rebuild=full_M)
    return W if mix_T is None else np.asarray(mix_T @ W)


def _has_duplicate_rows(A):
    """True when two rows of A (dense or CSR) are identical (two random projections agree)."""
    if A.shape[0] < 2:
        return False
    r = np.random.default_rng(12345).standard_normal((A.shape[1], 2))
    P = np.asarray(A @ r)
    _, counts = np.unique(P, axis=0, return_counts=True)
    return bool((counts > 1).any())


def _cholesky_solve(A, B, overwrite):
    """``A^{-1} B`` from the upper triangle of A by LAPACK potrf/potrs, or None when A is not positive definite."""
    from scipy.linalg import lapack

    c, info = lapack.dpotrf(A, lower=0, clean=0, overwrite_a=overwrite)
    if info != 0:
        return None
    x, info = lapack.dpotrs(c, B, lower=0)
    return x if info == 0 else None


def _solve_psd_jitter(M, B, rtol=None, singular=False, rebuild=None):
    """``M^+ B`` for a PSD ``M``: Cholesky; if singular (e.g. duplicated sampled inputs), Cholesky
    of ``M + delta I`` with ``delta`` at the rank tolerance (``rtol * max diag``); the truncated
    eigendecomposition pseudo-inverse as the last resort.

    Only the upper triangle of ``M`` is read by the Cholesky attempts and its diagonal is
    modified in place. With ``rebuild`` (a callable returning the full symmetric matrix, used
    only for the last resort) the jittered factorisation also overwrites ``M``.

    Exactly-null directions of ``R K R^T`` contribute nothing to predictions
    (``k(x, .)^T R^T v = <phi(x), sum_i v_i (R phi)_i> = 0`` when ``v^T R K R^T v = 0``),
    so the tiny ridge only replaces the truncation of those directions.
    """
    if not singular:
        x = _cholesky_solve(M, B, overwrite=False)
        if x is not None:
            return x
    tol = default_rtol(M.shape[0]) if rtol is None else rtol
    diag = np.einsum("ii->i", M)  # a view: the ridge is added in place, no m x m temporaries
    delta = tol * max(float(diag.max()), np.finfo(float).tiny)
    diag += delta
    x = _cholesky_solve(M, B, overwrite=rebuild is not None)
    if x is not None:
        return x
    if rebuild is not None:
        M = rebuild()
    else:
        diag -= delta
        M = np.triu(M) + np.triu(M, 1).T
    return pinv_sym(M, rtol) @ B


def _is_linear(kernel):
    name = component_name(kernel) or getattr(kernel, "name", None)
    return isinstance(name, str) and name.lower() == "linear"


def _fingerprint(C):
    h = hashlib.blake2b(digest_size=16)
    if sp.issparse(C):
        C = sp.csr_matrix(C)
        for a in (C.indptr, C.indices, C.data):
            h.update(np.ascontiguousarray(a).tobytes())
    else:
        h.update(np.ascontiguousarray(C).tobytes())
    return f"{C.shape[0]}x{C.shape[1]}:{C.dtype}:{'sparse' if sp.issparse(C) else 'dense'}:{h.hexdigest()}"


def _check_outputs(Y, name="Y"):
    """2-D float outputs, dense or CSR, finite."""
    if sp.issparse(Y):
        Y = sp.csr_matrix(Y, dtype=np.float64)
        data = Y.data
    else:
        Y = np.asarray(Y, dtype=np.float64)
        if Y.ndim == 1:
            Y = Y[:, None]
        if Y.ndim != 2:
            raise InvalidInputError(f"{name} must be 2-D (n_samples, n_output_features); got shape {Y.shape}")
        data = Y
    if not np.all(np.isfinite(data)):
        raise InvalidInputError(f"{name} contains NaN or infinity; clean or impute it first")
    return Y


class _ExactInput:
    """The exact input model: coefficients ``(K_X + n lam I)^{-1} T`` on all training inputs."""

    def __init__(self, kernel, X, lam):
        n = X.shape[0]
        K = kernel_block(kernel, X, X)
        K[np.diag_indices_from(K)] += n * lam
        try:
            self._factor = sla.cho_factor(K, lower=False, check_finite=False, overwrite_a=True)
            self._pinv = None
        except (np.linalg.LinAlgError, sla.LinAlgError):
            self._factor = None
            self._pinv = pinv_sym(K)
        self.X_fit = X
        self.info = {"name": "none", "m": n, "n": n, "s_prime": n}

    def solve(self, T):
        if self._factor is not None:
            return sla.cho_solve(self._factor, T, check_finite=False)
        return self._pinv @ T


@persistable
class _Draw:
    """One ensemble member: an input map to coordinates and its output basis."""

    def __init__(self, X_fit, coef, basis, input_info, fmap=None):
        self.X_fit = X_fit
        self.coef = coef
        self.basis = basis
        self.input_info = input_info
        self.fmap = fmap

    def predict(self, kernel, X):
        if self.fmap is not None:
            return self.fmap.transform(X) @ self.coef
        return kernel_times(kernel, X, self.X_fit, self.coef)


@persistable
class _ModelCandidates:
    """Candidate source embedding candidates block by block with each draw's basis."""

    def __init__(self, bases, C, cached=None, bias=None):
        self.bases = bases
        self.C = C
        self.n_candidates = C.shape[0]
        self.cached = cached
        self.bias = bias

    def block(self, start, stop):
        if self.cached is not None:
            E = [E[start:stop] for E in self.cached]
            b = None if self.bias is None else self.bias[start:stop]
            return E, b
        Cb = self.C[start:stop]
        E = [b.embed(Cb) for b in self.bases]
        basis = self.bases[0]
        bias = None if basis.normalized else -0.5 * basis.self_kernel(Cb)
        return E, bias

    def materialize(self):
        E, b = _ModelCandidates(self.bases, self.C).block(0, self.n_candidates)
        self.cached, self.bias = E, b
        return self


@persistable
class _EmbeddingCache:
    """Candidate embeddings computed once per fitted model (default set + the last global set)."""

    def __init__(self):
        self.entries = {}

    def get(self, key):
        return self.entries.get(key)

    def put(self, key, value):
        self.entries = {k: v for k, v in self.entries.items() if k == "default"}
        self.entries[key] = value

    def __len__(self):
        return len(self.entries)


@persistable
class OutputKernelRegressor(KernelModelMixin, BaseEstimator):
    """Input/output kernel regression with optional input and output sketches (IOKR family).

    Fits the surrogate regression of ``psi(y)`` on ``x`` in the output RKHS
    (seed 003 §2): ``alpha(x) = (K_X + n lam I)^{-1} k_x`` for IOKR, and its sketched
    versions (seed 003 Prop. 1): SIOKR (input sketch), ISOKR (output sketch) and
    SISOKR (both). Each model predicts coordinates ``g(x)`` in an output basis
    (:mod:`skframe.output_basis`) and the decoder returns the candidate ``c``
    maximising ``<h(x), psi(c)> - k_Y(c, c)/2``. All pseudo-inverses go through
    symmetric eigendecompositions with a relative tolerance.

    Parameters
    ----------
    input_kernel : str or kernel object, default="gaussian"
    input_kernel_params : dict, optional
        E.g. ``{"gamma": 5e-5}`` (``gamma = 1 / (2 sigma^2)``).
    output_kernel : str or kernel object, default="gaussian"
    output_kernel_params : dict, optional
    input_sketch : str, sketch object or None, default=None
        None / ``"none"`` for no input sketch (IOKR, ISOKR).
    input_sketch_size : int, default=100
    input_sketch_params : dict, optional
    output_sketch : str, sketch object or None, default=None
        None / ``"none"`` for no output sketch (IOKR, SIOKR).
    output_sketch_size : int, default=100
    output_sketch_params : dict, optional
        E.g. ``{"p": 0.0041}`` for p-SG.
    lam : float, default=1e-5
        Ridge parameter (``alpha(x) = (K_X + n lam I)^{-1} k_x``).
    decoder : str or decoder object, default="candidates"
        ``"candidates"`` (search a candidate set) or ``"identity"`` (return
        ``g(x)``, mapped to R^d for a linear output kernel).
    n_draws : int, default=1
        Ensemble size: independent sketch draws whose scores are aggregated
        (thesis eq. 5.19).
    aggregate : {"mean", "max"}, default="mean"
    rtol : float, optional
        Relative eigenvalue tolerance of the pseudo-inverses.
    random_state : int, RandomState or None

    Attributes
    ----------
    draws_ : list
        One fitted member per draw (input coefficients and output basis).
    output_basis_ : OutputBasis
        The output basis of the first draw.
    candidates_ : ndarray or sparse matrix of shape (q, d)
        Distinct training outputs, the default candidate set.
    sketch_info_ : dict
        ``{"input": ..., "output": ..., "n_draws": ...}``: the first draw's sketches.
    sketch_infos_ : list of dict
        Input and output sketch description of each draw.
    fit_seconds_ : float

    Examples
    --------
    >>> import numpy as np
    >>> from skframe.models import OutputKernelRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(120, 4))
    >>> Y = (X[:, :3] + 0.1 * rng.normal(size=(120, 3)) > 0).astype(float)
    >>> model = OutputKernelRegressor(input_kernel_params={"gamma": 0.1}, output_kernel_params={"gamma": 0.5},
    ...                               input_sketch="subsample", input_sketch_size=60, lam=1e-3,
    ...                               random_state=0).fit(X, Y)
    >>> model.predict(X[:2]).shape
    (2, 3)
    """

    def __init__(
        self,
        input_kernel="gaussian",
        *,
        input_kernel_params=None,
        output_kernel="gaussian",
        output_kernel_params=None,
        input_sketch=None,
        input_sketch_size=100,
        input_sketch_params=None,
        output_sketch=None,
        output_sketch_size=100,
        output_sketch_params=None,
        lam=1e-5,
        decoder="candidates",
        n_draws=1,
        aggregate="mean",
        rtol=None,
        random_state=None,
    ):
        self.input_kernel = input_kernel
        self.input_kernel_params = input_kernel_params
        self.output_kernel = output_kernel
        self.output_kernel_params = output_kernel_params
        self.input_sketch = input_sketch
        self.input_sketch_size = input_sketch_size
        self.input_sketch_params = input_sketch_params
        self.output_sketch = output_sketch
        self.output_sketch_size = output_sketch_size
        self.output_sketch_params = output_sketch_params
        self.lam = lam
        self.decoder = decoder
        self.n_draws = n_draws
        self.aggregate = aggregate
        self.rtol = rtol
        self.random_state = random_state

    # ------------------------------------------------------------------ fit
    def fit(self, X, Y):
        """Fit: draw the sketches, build input features and output basis, solve the ridge system.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        Y : array-like or sparse matrix of shape (n_samples, n_output_features)
            Output vectors (e.g. a binary label-indicator matrix), dense or sparse.

        Returns
        -------
        self : OutputKernelRegressor
        """
        t0 = time.perf_counter()
        lam = check_scalar(self.lam, "lam", low=0, low_inclusive=False, fix="lam must be > 0, e.g. 1e-5")
        n_draws = check_scalar(self.n_draws, "n_draws", kind=int, low=1, fix="n_draws must be a positive integer")
        if self.aggregate not in ("mean", "max"):
            raise InvalidParameterError(f"aggregate={self.aggregate!r}; use 'mean' or 'max'")
        if self.rtol is not None:
            check_scalar(self.rtol, "rtol", low=0, high=1)
        if Y is None:
            raise InvalidInputError(
                f"{type(self).__name__} requires y to be passed, but the target y is None; pass the outputs Y"
            )
        X = validate_X(self, X, reset=True)
        Y = _check_outputs(Y)
        n = X.shape[0]
        if Y.shape[0] != n:
            raise InvalidInputError(f"X has {n} rows but Y has {Y.shape[0]}; they must match")
        kx = kernel_prepare(resolve_kernel(self.input_kernel, self.input_kernel_params), X)  # e.g. gamma='scale'
        ky = kernel_prepare(resolve_kernel(self.output_kernel, self.output_kernel_params), Y)
        sx = resolve_sketch(self.input_sketch, self.input_sketch_size, self.input_sketch_params)
        sy = resolve_sketch(self.output_sketch, self.output_sketch_size, self.output_sketch_params)
        self._decoder = get_decoder(self.decoder) if isinstance(self.decoder, str) else self.decoder
        rng = np.random.default_rng(check_random_state(self.random_state).randint(0, 2**31 - 1))

        exact_in = _ExactInput(kx, X, lam) if sx is None else None
        exact_out = TrainingOutputBasis.fit(ky, Y) if sy is None else None
        if exact_out is not None:
            C = exact_out[0].Y_unique
        else:
            from ..output_basis import unique_rows

            C, first, inverse = unique_rows(Y)
        draws, infos, cand_embeddings = [], [], []
        for _ in range(n_draws):
            # output basis (independent of the input model)
            if exact_out is not None:
                basis, T = exact_out
            else:
                R_Y = draw_sketch(sy, n, rng, X=Y, kernel=ky)
                basis, T = SketchedOutputBasis.fit(ky, Y, R_Y, rtol=self.rtol, distinct=(first, inverse))
            # embeddings of the default candidates (the distinct training outputs), known from the fit:
            # the dual basis' Gram, or the rows of the training targets Psi = embed(Y)
            cand_embeddings.append(basis.gram if exact_out is not None else T[first])
            # input model
            if exact_in is not None:
                draw = _Draw(X, exact_in.solve(T), basis, exact_in.info)
            elif getattr(sx, "feature_map", False):  # explicit feature map (random Fourier features)
                fmap, Z, info = self._build_representation(X, kx, sx, rng, rtol=self.rtol)
                A = Z.T @ Z
                A[np.diag_indices_from(A)] += n * lam
                draw = _Draw(None, solve_psd(A, Z.T @ T), basis, info, fmap=fmap)
            else:
                R_X = draw_sketch(sx, n, rng, X=X, kernel=kx)
                draw = _Draw(X[R_X.indices], sketched_input_coef(kx, X, R_X, T, lam, rtol=self.rtol), basis,
                             R_X.summary())
            draws.append(draw)
            infos.append({"input": draw.input_info, "output": basis.sketch_info})
        self.draws_ = draws
        self.output_basis_ = draws[0].basis
        self.input_kernel_ = kx
        self.output_kernel_ = ky
        self.candidates_ = C
        self.sketch_info_ = {"input": infos[0]["input"], "output": infos[0]["output"], "n_draws": n_draws}
        self.sketch_infos_ = infos
        self.n_outputs_ = Y.shape[1]
        self._cache = _EmbeddingCache()
        basis = self.output_basis_
        bias = None if basis.normalized else -0.5 * basis.self_kernel(C)
        self._cache.put("default", _ModelCandidates([d.basis for d in draws], C, cand_embeddings, bias))
        self.fit_seconds_ = time.perf_counter() - t0
        return self

    # ------------------------------------------------------------------ surrogate
    def _surrogate(self, X):
        """Per-draw coordinates ``g_d(X)``; draws sharing all training inputs share one kernel block."""
        self._check_fitted()
        X = validate_X(self, X, reset=False)
        draws = self.draws_
        if len(draws) > 1 and all(d.fmap is None and d.X_fit is draws[0].X_fit for d in draws):
            widths = [d.coef.shape[1] for d in draws]
            F = kernel_times(self.input_kernel_, X, draws[0].X_fit, np.hstack([d.coef for d in draws]))
            return np.split(F, np.cumsum(widths)[:-1], axis=1)
        return [d.predict(self.input_kernel_, X) for d in draws]

    def surrogate_predict(self, X):
        """Coordinates ``g(x)`` of the surrogate in the output basis (one array per draw).

        Returns
        -------
        list of ndarray of shape (n_samples, p_d)
        """
        return self._surrogate(X)

    def embed_outputs(self, Y, draw=0):
        """Output embeddings ``psi_tilde(y)`` in the output basis of one draw (thesis Prop. 5.5).

        With an output sketch the basis is orthonormal, ``psi_tilde(y) = D^{-1/2} U^T R_Y k_Y^y``.
        Without one, the coordinates are the dual ones ``k_Y(u_l, y)`` against the
        distinct training outputs ``u_l`` (Gram ``output_basis_.gram``).

        Returns
        -------
        ndarray of shape (len(Y), p)
        """
        self._check_fitted()
        return self.draws_[draw].basis.embed(_check_outputs(Y))

    def surrogate_mse(self, X, Y):
        """Mean ``||h(x_i) - psi(y_i)||^2`` in the output RKHS (output kernel trick, no decoding).

        With ``n_draws > 1`` the draws' errors are averaged.
        """
        G_list = self._surrogate(X)
        Y = _check_outputs(Y)
        if Y.shape[0] != G_list[0].shape[0]:
            raise InvalidInputError(f"X has {G_list[0].shape[0]} rows but Y has {Y.shape[0]}")
        kyy = self.output_basis_.self_kernel(Y)
        errs = []
        for g, d in zip(G_list, self.draws_):
            E = d.basis.embed(Y)
            errs.append(np.mean(d.basis.sq_norm(g) - 2.0 * np.einsum("ij,ij->i", g, E) + kyy))
        return float(np.mean(errs))

    def score(self, X, y):
        """Negative surrogate MSE in the output RKHS (higher is better), for ``GridSearchCV``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like or sparse matrix of shape (n_samples, n_output_features)
            True outputs.
        """
        return -self.surrogate_mse(X, y)

    # ------------------------------------------------------------------ candidates
    def _source(self, C):
        bases = [d.basis for d in self.draws_]
        if C is None:
            key = "default"
            C = self.candidates_
        else:
            C = _check_outputs(C, "candidates")
            if C.shape[1] != self.n_outputs_:
                raise InvalidInputError(
                    f"candidates have {C.shape[1]} columns but the training outputs have {self.n_outputs_}"
                )
            key = None
            size = C.shape[0] * sum(b.n_components for b in bases) * 8
            if size <= CACHE_BYTES:
                key = _fingerprint(C)
        if key is not None:
            src = self._cache.get(key)
            if src is None:
                src = _ModelCandidates(bases, C).materialize()
                self._cache.put(key, src)
            return src, C
        return _ModelCandidates(bases, C), C

    def _per_sample(self, candidates):
        sets = [_check_outputs(c, f"candidates[{i}]") for i, c in enumerate(candidates)]
        counts = np.array([c.shape[0] for c in sets], dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(counts)])
        if any(sp.issparse(c) for c in sets):
            C = sp.vstack([sp.csr_matrix(c) for c in sets], format="csr")
        else:
            C = np.vstack(sets) if sets else np.empty((0, self.n_outputs_))
        if C.shape[1] != self.n_outputs_:
            raise InvalidInputError(f"candidates have {C.shape[1]} columns but the training outputs have {self.n_outputs_}")
        return _ModelCandidates([d.basis for d in self.draws_], C), sets, offsets

    def _decode(self, X, k, candidates):
        G_list = self._surrogate(X)
        if isinstance(candidates, (list, tuple)):
            if len(candidates) != G_list[0].shape[0]:
                raise InvalidInputError(
                    f"{len(candidates)} per-sample candidate sets for {G_list[0].shape[0]} rows of X; give one per row"
                )
            src, sets, offsets = self._per_sample(candidates)
            idx, scores = self._decoder.decode(G_list, candidates=src, k=k, aggregate=self.aggregate, offsets=offsets)
            return idx, scores + self._offset(), sets
        src, C = self._source(candidates)
        idx, scores = self._decoder.decode(G_list, candidates=src, k=k, aggregate=self.aggregate)
        return idx, scores + self._offset(), C

    def _offset(self):
        """The constant ``-k_Y(c, c)/2 = -1/2`` a normalised output kernel leaves out of the search."""
        return -0.5 if self.output_basis_.normalized else 0.0

    # ------------------------------------------------------------------ prediction
    def predict(self, X, candidates=None):
        """Decode: the best candidate for each row of X.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        candidates : None, array of shape (n_c, d) or list of arrays
            None: the distinct training outputs (``candidates_``, embeddings cached);
            an array: one global candidate set (embeddings cached when it fits in
            512 MB); a list with one ``(n_i, d)`` array per row of X: per-sample sets.

        Returns
        -------
        ndarray or sparse matrix of shape (n_samples, d)
            With the identity decoder, the surrogate (``g(x)``, or ``h(x)`` in R^d
            for a linear output kernel).
        """
        self._check_fitted()
        if (component_name(self._decoder) or getattr(self._decoder, "name", None)) == "identity":
            G_list = self._surrogate(X)
            B = [d.basis.vectors() for d in self.draws_] if _is_linear(self.output_kernel_) else None
            return self._decoder.decode(G_list, basis_vectors=B)
        idx, _, C = self._decode(X, 1, candidates)
        best = idx[:, 0]
        if isinstance(C, list):
            rows = [c[i : i + 1] if i >= 0 else None for c, i in zip(C, best)]
            if any(r is None for r in rows):
                raise InvalidInputError("a per-sample candidate set is empty; give at least one candidate per row")
            return sp.vstack(rows, format="csr") if any(sp.issparse(r) for r in rows) else np.vstack(rows)
        return C[best]

    def predict_topk(self, X, k, candidates=None):
        """The k best candidates of each row, best first, with their scores.

        Returns
        -------
        indices : ndarray of int, shape (n_samples, k)
            Rows of the candidate set (``candidates_`` by default; local to each
            row's set for per-sample candidates; ``-1`` pads sets smaller than k).
        scores : ndarray of shape (n_samples, k)
            ``<h(x), psi(c)> - k_Y(c, c)/2`` (aggregated over draws).
        """
        self._check_fitted()
        k = check_scalar(k, "k", kind=int, low=1, fix="k must be a positive integer")
        idx, scores, _ = self._decode(X, k, candidates)
        return idx, scores

    def decision_function(self, X, candidates=None):
        """Candidate scores ``<h(x), psi(c)> - k_Y(c, c)/2`` (aggregated over draws).

        Returns
        -------
        ndarray of shape (n_samples, n_c), or a list of arrays (one per row) for
        per-sample candidate sets. The full matrix is formed: use ``predict`` or
        ``predict_topk`` for large candidate sets.
        """
        self._check_fitted()
        G_list = self._surrogate(X)
        if isinstance(candidates, (list, tuple)):
            src, _, offsets = self._per_sample(candidates)
            E, b = src.block(0, src.n_candidates)
            out = []
            for i in range(G_list[0].shape[0]):
                a, z = offsets[i], offsets[i + 1]
                out.append(self._aggregate([g[i : i + 1] @ e[a:z].T for g, e in zip(G_list, E)], None if b is None else b[a:z])[0])
            return out
        src, _ = self._source(candidates)
        E, b = src.block(0, src.n_candidates)
        return self._aggregate([g @ e.T for g, e in zip(G_list, E)], b)

    def _aggregate(self, blocks, bias):
        S = np.max(blocks, axis=0) if self.aggregate == "max" else np.mean(blocks, axis=0)
        if bias is not None:
            S = S + bias[None, :]
        return S + self._offset()

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.target_tags.required = True
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = False
        return tags
