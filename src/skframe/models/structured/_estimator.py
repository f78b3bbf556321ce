"""The estimator: fit the input map and output basis of each draw, predict coordinates."""

from __future__ import annotations

import time

import numpy as np
from sklearn.base import BaseEstimator

from skframe.constraints import Interval, Options, validate_params
from skframe.contract.collections import is_collection, n_items, take
from skframe.contract.protocols import kernel_block
from skframe.contract.registry import get_decoder
from skframe.contract.tags import get_tags
from skframe.core.feature_map import kernel_times
from skframe.core.linalg import solve_psd
from skframe.core.output_basis import SketchedOutputBasis, TrainingOutputBasis, unique_rows
from skframe.core.sketching import draw_sketch
from skframe.exceptions import InvalidInputError
from skframe.models._base import KernelModelMixin, execution_record, in_memory_plan, store_params, validate_X
from skframe.models._core import build_representation, make_rngs, resolve_kernel, size_and_resolve_sketch
from skframe.models.structured._candidates import check_outputs
from skframe.models.structured._decoding import DecodingMixin
from skframe.models.structured._sisokr import _Draw, sketched_input_coef

__all__ = ["OutputKernelRegressor"]


def _c_order(A):
    """Dense arrays C-contiguous, as a saved model reloads them (the same BLAS path before and after)."""
    return np.ascontiguousarray(A) if isinstance(A, np.ndarray) else A


class OutputKernelRegressor(DecodingMixin, KernelModelMixin, BaseEstimator):
    """Input/output kernel regression with optional input and output sketches (IOKR family).

    Fits the surrogate regression of ``psi(y)`` on ``x`` in the output RKHS,
    ``alpha(x) = (K_X + n lam I)^{-1} k_x`` for IOKR, and its sketched versions
    (El Ahmad, Brogat-Motte, Laforgue, d'Alché-Buc, "Sketch In, Sketch Out:
    Accelerating both Learning and Inference for Structured Prediction with
    Kernels", AISTATS 2024, Prop. 1): SIOKR (input sketch), ISOKR (output sketch)
    and SISOKR (both). Each model predicts coordinates ``g(x)`` in an output basis
    (:mod:`skframe.core.output_basis`) and the decoder returns the candidate ``c``
    maximising ``<h(x), psi(c)> - k_Y(c, c)/2``.

    Parameters
    ----------
    input_kernel : str or kernel object, default="gaussian"
    input_kernel_params : dict, optional
        E.g. ``{"gamma": 5e-5}`` (``gamma = 1 / (2 sigma^2)``).
    output_kernel : str or kernel object, default="gaussian"
    output_kernel_params : dict, optional
    input_sketch : str, sketch object or None, default=None
        None / ``"none"`` for no input sketch (IOKR, ISOKR).
    input_sketch_size : int or "auto", default="auto"
        ``"auto"``: ``ceil(2 sqrt(n))`` clamped to ``[min(n, 100), min(n, 1000)]``, capped by what
        the in-memory fit can hold within half the available memory (the execution plan,
        :func:`skframe.compute.plan.plan_fit`); a size above n is clamped to n with a
        ``SketchSizeWarning``. The rule used is in ``sketch_info_``.
    input_sketch_params : dict, optional
    output_sketch : str, sketch object or None, default=None
        None / ``"none"`` for no output sketch (IOKR, SIOKR).
    output_sketch_size : int or "auto", default="auto"
        As ``input_sketch_size``, for the output sketch.
    output_sketch_params : dict, optional
        E.g. ``{"p": 0.0041}`` for p-SG.
    lam : float, default=1e-5
        Ridge parameter (``alpha(x) = (K_X + n lam I)^{-1} k_x``).
    decoder : str or decoder object, default="candidates"
        ``"candidates"`` (search a candidate set) or ``"identity"`` (return
        ``g(x)``, mapped to R^d for a linear output kernel).
    n_draws : int, default=1
        Ensemble size: independent sketch draws whose scores are aggregated
        (El Ahmad, "Learning Deep Kernel Networks: Application to Efficient and Robust
        Structured Prediction", PhD thesis, Institut Polytechnique de Paris 2024, eq. 5.19).
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
    candidate_embeddings_ : list of ndarray of shape (q, p_d)
        Their embeddings in each draw's basis, known from the fit.
    candidate_bias_ : ndarray of shape (q,) or None
        ``-k_Y(c, c)/2`` of the default candidates (None for a normalised output kernel).
    sketch_info_ : dict
        ``{"input": ..., "output": ..., "n_draws": ...}``: the first draw's sketches.
    sketch_infos_ : list of dict
        Input and output sketch description of each draw.
    input_kernel_spec_, output_kernel_spec_, input_sketch_spec_, output_sketch_spec_ : ComponentSpec or None
        The :class:`skframe.contract.specs.ComponentSpec` of each component known to the registry
        (None for an unregistered object or no sketch).
    execution_ : dict
        How the fit ran and why (:meth:`skframe.compute.execution.ExecutionPlan.to_dict`): the
        input side's plan (in memory, engine, BLAS threads, budget, sketch size), with the output
        side's under ``"output"``.
    fit_seconds_ : float

    Examples
    --------
    Label sets of three labels; a prediction is one of the training label sets (the default candidates):

    >>> from sklearn.datasets import make_multilabel_classification
    >>> from skframe.models import OutputKernelRegressor
    >>> X, Y = make_multilabel_classification(120, n_features=4, n_classes=3, random_state=0)
    >>> model = OutputKernelRegressor(input_kernel_params={"gamma": 0.1}, output_kernel_params={"gamma": 0.5},
    ...                               input_sketch="subsample", input_sketch_size=60, lam=1e-3,
    ...                               random_state=0).fit(X, Y)
    >>> model.predict(X[:2])
    array([[0., 0., 0.],
           [0., 1., 1.]])
    """

    __module__ = "skframe.models.structured"

    _parameter_constraints = {
        "lam": [Interval("real", 0, None, closed="neither")],
        "n_draws": [Interval("int", 1, None)],
        "aggregate": [Options("mean", "max")],
        "rtol": [Interval("real", 0, 1), None],
    }
    _parameter_hints = {"lam": "lam must be > 0, e.g. 1e-5", "n_draws": "n_draws must be a positive integer"}

    def __init__(
        self,
        input_kernel="gaussian",
        *,
        input_kernel_params=None,
        output_kernel="gaussian",
        output_kernel_params=None,
        input_sketch=None,
        input_sketch_size="auto",
        input_sketch_params=None,
        output_sketch=None,
        output_sketch_size="auto",
        output_sketch_params=None,
        lam=1e-5,
        decoder="candidates",
        n_draws=1,
        aggregate="mean",
        rtol=None,
        random_state=None,
    ):
        store_params(self, locals())

    def _inputs(self, X, reset):
        """Validate array inputs like scikit-learn; collections pass through (a refit forgets n_features_in_)."""
        if reset and is_collection(X) and hasattr(self, "n_features_in_"):
            del self.n_features_in_
        return validate_X(self, X, reset=reset)

    # ------------------------------------------------------------------ fit
    def fit(self, X, Y):
        """Fit: draw the sketches, build the output basis and the input map of each draw.

        Parameters
        ----------
        X : array-like, sparse matrix or InputCollection with n_samples items
        Y : array-like or sparse matrix of shape (n_samples, n_output_features)
            Output vectors (e.g. a binary label-indicator matrix), dense or sparse.

        Returns
        -------
        self : OutputKernelRegressor
        """
        t0 = time.perf_counter()
        validate_params(self)
        lam, n_draws = float(self.lam), int(self.n_draws)
        if Y is None:
            raise InvalidInputError(
                f"{type(self).__name__} requires y to be passed, but the target y is None; pass the outputs Y"
            )
        X = self._inputs(X, reset=True)
        Y = check_outputs(Y)
        n = n_items(X)
        if n_items(Y) != n:
            raise InvalidInputError(f"X has {n} rows but Y has {n_items(Y)}; they must match")
        # the shared fit core: resolve (+ specs), size, seed
        kx, self.input_kernel_spec_ = resolve_kernel(self.input_kernel, self.input_kernel_params, X)
        ky, self.output_kernel_spec_ = resolve_kernel(self.output_kernel, self.output_kernel_params, Y)
        plan_x, plan_y = self._plans(X, Y, kx, ky)  # "auto" sizes: the sqrt(n) rule within what memory holds
        sx, self.input_sketch_spec_, size_x = size_and_resolve_sketch(
            self.input_sketch, self.input_sketch_size, self.input_sketch_params, n, plan=plan_x,
            param="input_sketch_size")
        sy, self.output_sketch_spec_, size_y = size_and_resolve_sketch(
            self.output_sketch, self.output_sketch_size, self.output_sketch_params, n, plan=plan_y,
            param="output_sketch_size")
        self._decoder = get_decoder(self.decoder) if isinstance(self.decoder, str) else self.decoder
        rng = make_rngs(self.random_state)[0]

        if sx is None:
            X = _c_order(X)  # kept by every draw
        exact_out = TrainingOutputBasis.fit(ky, Y) if sy is None else None
        if exact_out is not None:
            C, first, inverse = exact_out[0].Y_unique, None, None
        else:
            C, first, inverse = unique_rows(Y)
        draws, embeddings, outputs = [], [], []
        for _ in range(n_draws):
            # output basis (independent of the input model)
            if exact_out is not None:
                basis, T = exact_out
            else:
                R_Y = draw_sketch(sy, n, rng, X=Y, kernel=ky)
                basis, T = SketchedOutputBasis.fit(ky, Y, R_Y, rtol=self.rtol, distinct=(first, inverse))
            # embeddings of the default candidates (the distinct training outputs), known from the fit:
            # the dual basis' Gram, or the rows of the training targets Psi = embed(Y)
            embeddings.append(np.ascontiguousarray(basis.gram if exact_out is not None else T[first]))
            outputs.append((basis, T))
            if sx is not None:
                draws.append(self._fit_input(X, T, basis, kx, sx, lam, rng, engine=plan_x.engine))
        if sx is None:  # the exact input model: one factorisation for the targets of every draw
            draws = self._fit_exact_input(X, outputs, kx, lam, rng)
        infos = [{"input": dict(d.input_info, **size_x), "output": dict(d.basis.sketch_info, **size_y)} for d in draws]
        self.draws_ = draws
        self.output_basis_ = draws[0].basis
        self.input_kernel_ = kx
        self.output_kernel_ = ky
        self.candidates_ = C
        self.candidate_embeddings_ = embeddings
        self.candidate_bias_ = None if self.output_basis_.normalized else -0.5 * self.output_basis_.self_kernel(C)
        self.sketch_info_ = {"input": infos[0]["input"], "output": infos[0]["output"], "n_draws": n_draws}
        self.sketch_infos_ = infos
        self.n_outputs_ = None if is_collection(Y) else Y.shape[1]
        self.execution_ = execution_record(plan_x, output=plan_y)
        self.fit_seconds_ = time.perf_counter() - t0
        return self

    def _plans(self, X, Y, kx, ky):
        """The execution plans of the input side (X, its kernel and sketch) and of the output side."""
        return (in_memory_plan(X, kx, self.input_sketch, self.input_sketch_size, self.input_sketch_params),
                in_memory_plan(Y, ky, self.output_sketch, self.output_sketch_size, self.output_sketch_params))

    def execution_plan(self, X, y=None):
        """How a fit on ``(X, y)`` would run, without fitting: the input side's execution plan.

        The plan of the output side is the ``"output"`` part of ``execution_`` after a fit.
        """
        validate_params(self)
        kx = resolve_kernel(self.input_kernel, self.input_kernel_params)[0]
        return in_memory_plan(X, kx, self.input_sketch, self.input_sketch_size, self.input_sketch_params)

    @staticmethod
    def _fit_exact_input(X, outputs, kx, lam, rng):
        """IOKR / ISOKR input side: ``(K_X + n lam I)^{-1} [T_1 ... T_D]`` for the targets of all draws."""
        rep = build_representation(X, kx, None, rng, exact="gram")
        K, n = rep.K, n_items(X)
        K[np.diag_indices_from(K)] += n * lam

        def rebuild():  # K + n lam I again, for the pseudo-inverse fallback (K holds the failed factor)
            G = kernel_block(kx, X, X)
            G[np.diag_indices_from(G)] += n * lam
            return G

        # K.T: Fortran-ordered, so LAPACK factors it in place (no n x n copy); the same matrix, K being symmetric
        B = outputs[0][1] if len(outputs) == 1 else np.hstack([T for _, T in outputs])
        W = solve_psd(K.T, B, overwrite_a=True, rebuild=rebuild)
        del K, rep, B
        info = {"name": "none", "m": n, "n": n, "s_prime": n}
        cuts = np.cumsum([T.shape[1] for _, T in outputs])[:-1]
        return [_Draw(X, np.ascontiguousarray(w), basis, dict(info))
                for w, (basis, _) in zip(np.split(W, cuts, axis=1), outputs)]

    def _fit_input(self, X, T, basis, kx, sx, lam, rng, engine=None):
        """One draw's input-sketched map to the targets T (arrays C-contiguous, as a reloaded model has them)."""
        if get_tags(sx, "sketch").feature_map:  # explicit feature map (random Fourier features)
            rep = build_representation(X, kx, sx, rng, rtol=self.rtol)
            A = rep.Z.T @ rep.Z
            A[np.diag_indices_from(A)] += n_items(X) * lam
            W = np.ascontiguousarray(solve_psd(A, rep.Z.T @ T))
            return _Draw(None, W, basis, rep.info, fmap=rep.feature_map)
        # a sketch: the coefficients on the sampled inputs without the m x m eigendecomposition of the core
        R_X = draw_sketch(sx, n_items(X), rng, X=X, kernel=kx)
        coef = sketched_input_coef(kx, X, R_X, T, lam, rtol=self.rtol, engine=engine)
        return _Draw(_c_order(take(X, R_X.indices)), coef, basis, R_X.summary())

    # ------------------------------------------------------------------ surrogate
    def _surrogate(self, X):
        """Per-draw coordinates ``g_d(X)``; draws sharing all training inputs share one kernel block."""
        self._check_fitted()
        X = self._inputs(X, reset=False)
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
        """Output embeddings ``psi_tilde(y)`` in the output basis of one draw.

        With an output sketch the basis is orthonormal, ``psi_tilde(y) = D^{-1/2} U^T R_Y k_Y^y``.
        Without one, the coordinates are the dual ones ``k_Y(u_l, y)`` against the
        distinct training outputs ``u_l`` (Gram ``output_basis_.gram``).

        Returns
        -------
        ndarray of shape (len(Y), p)
        """
        self._check_fitted()
        return self.draws_[draw].basis.embed(check_outputs(Y))

    def surrogate_mse(self, X, Y):
        """Mean ``||h(x_i) - psi(y_i)||^2`` in the output RKHS (output kernel trick, no decoding).

        With ``n_draws > 1`` the draws' errors are averaged.
        """
        G_list = self._surrogate(X)
        Y = check_outputs(Y)
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
