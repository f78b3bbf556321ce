"""The estimator: fit the input map and output basis of each draw, predict coordinates."""

from __future__ import annotations

import time

import numpy as np
from sklearn.base import BaseEstimator

from skframe.compute.plan import plan_predict
from skframe.constraints import Interval, Options, validate_params
from skframe.contract.collections import is_collection, n_items
from skframe.contract.model_tags import ModelTags
from skframe.core.feature_map import kernel_times
from skframe.exceptions import InvalidInputError
from skframe.models._base import KernelModelMixin, in_memory_plan, store_params, validate_X
from skframe.models._core import resolve_kernel
from skframe.models._data import check_sample_weight
from skframe.models._folds import CV_ORDERS
from skframe.models.structured._candidates import check_outputs
from skframe.models.structured._decoding import DecodingMixin
from skframe.models.structured._fit import StructuredFit, positive_rows

__all__ = ["OutputKernelRegressor"]


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
    lam : float or "auto", default=1e-5
        Ridge parameter (``alpha(x) = (K_X + n lam I)^{-1} k_x``). ``"auto"`` chooses it
        among 1e-8, 1e-7, ..., 1e-1 by the least mean held-out surrogate squared error
        (minus :meth:`score`) of 3 folds (``cv_order``), each fold's input systems factored
        once for all values; ``fit_info_["lam"]`` holds the choice, the criterion, its
        curve and the folds.
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
        Seed of the sketch draws and of the folds of ``lam="auto"``.
    cv_order : {"shuffle", "keep"}, default="shuffle"
        The folds of ``lam="auto"``: ``"shuffle"`` cuts them from the rows shuffled with ``random_state``;
        ``"keep"`` cuts consecutive blocks of rows in the given order (rows ordered in time).

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
    #: the λ path from one eigendecomposition of each fold's input system
    __skframe_model_tags__ = ModelTags(lam_path="structured")

    _parameter_constraints = {
        "lam": [Interval("real", 0, None, closed="neither"), Options("auto")],
        "n_draws": [Interval("int", 1, None)],
        "aggregate": [Options("mean", "max")],
        "rtol": [Interval("real", 0, 1), None],
        "cv_order": [Options(*CV_ORDERS)],
    }
    _parameter_hints = {"lam": "lam must be > 0, e.g. 1e-5, or 'auto'", "n_draws": "n_draws must be a positive integer"}

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
        cv_order="shuffle",
    ):
        store_params(self, locals())

    def _inputs(self, X, reset):
        """Validate array inputs like scikit-learn; collections pass through (a refit forgets n_features_in_)."""
        if reset and is_collection(X) and hasattr(self, "n_features_in_"):
            del self.n_features_in_
        return validate_X(self, X, reset=reset)

    # ------------------------------------------------------------------ fit
    def fit(self, X, Y, sample_weight=None):
        """Fit: draw the sketches, build the output basis and the input map of each draw.

        Parameters
        ----------
        X : array-like, sparse matrix or InputCollection with n_samples items
        Y : array-like or sparse matrix of shape (n_samples, n_output_features)
            Output vectors (e.g. a binary label-indicator matrix), dense or sparse.
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights of the examples in the surrogate regression's square loss,
            ``(1/n) sum_i w_i ||h(x_i) - psi(y_i)||^2 + lam ||h||^2``, scaled to mean 1 so that ``lam``
            keeps its meaning: integer weights give the fit on rows repeated that many times (with the same
            sketches). Rows of weight zero are dropped before the fit: their outputs are no candidates and
            the sketches are drawn from the other rows. The output basis does not depend on the weights.

        Returns
        -------
        self : OutputKernelRegressor
        """
        return self._new_fit(X, Y, sample_weight=sample_weight).run()

    def _new_fit(self, X, Y, progress=None, sample_weight=None):
        """Validate ``(X, Y)``: the :class:`~skframe.models.structured._fit.StructuredFit` of the data."""
        t0 = time.perf_counter()
        validate_params(self)
        if Y is None:
            raise InvalidInputError(
                f"{type(self).__name__} requires y to be passed, but the target y is None; pass the outputs Y"
            )
        X = self._inputs(X, reset=True)
        Y = check_outputs(Y)
        n = n_items(X)
        if n_items(Y) != n:
            raise InvalidInputError(f"X has {n} rows but Y has {n_items(Y)}; they must match")
        X, Y, w = positive_rows(X, Y, check_sample_weight(sample_weight, n))
        return StructuredFit(self, X, Y, t0, sample_weight=w)

    def execution_plan(self, X, y=None):
        """How a fit on ``(X, y)`` would run, without fitting: the input side's execution plan.

        The plan of the output side is the ``"output"`` part of ``execution_`` after a fit.
        """
        validate_params(self)
        kx = resolve_kernel(self.input_kernel, self.input_kernel_params)[0]
        return in_memory_plan(X, kx, self.input_sketch, self.input_sketch_size, self.input_sketch_params)

    # ------------------------------------------------------------------ surrogate
    def _surrogate(self, X):
        """Per-draw coordinates ``g_d(X)``; draws sharing all training inputs share one kernel block."""
        self._check_fitted()
        X = self._inputs(X, reset=False)
        draws = self.draws_
        if len(draws) > 1 and all(d.fmap is None and d.X_fit is draws[0].X_fit for d in draws):
            widths = [d.coef.shape[1] for d in draws]
            plan = plan_predict(X, n_items(draws[0].X_fit))  # rows, engine, chunks of the prediction
            F = kernel_times(self.input_kernel_, X, draws[0].X_fit, np.hstack([d.coef for d in draws]), options=plan)
            return np.split(F, np.cumsum(widths)[:-1], axis=1)
        return [d.predict(self.input_kernel_, X, None if d.fmap is not None else plan_predict(X, n_items(d.X_fit)))
                for d in draws]

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

    def surrogate_mse(self, X, Y, sample_weight=None):
        """Mean ``||h(x_i) - psi(y_i)||^2`` in the output RKHS (output kernel trick, no decoding).

        With ``n_draws > 1`` the draws' errors are averaged; with ``sample_weight`` the mean over the
        rows is the weighted one.
        """
        G_list = self._surrogate(X)
        Y = check_outputs(Y)
        if n_items(Y) != G_list[0].shape[0]:
            raise InvalidInputError(f"X has {G_list[0].shape[0]} rows but Y has {n_items(Y)}")
        w = check_sample_weight(sample_weight, G_list[0].shape[0])
        kyy = self.output_basis_.self_kernel(Y)
        errs = []
        for g, d in zip(G_list, self.draws_):
            E = d.basis.embed(Y)
            errs.append(np.average(d.basis.sq_norm(g) - 2.0 * np.einsum("ij,ij->i", g, E) + kyy, weights=w))
        return float(np.mean(errs))

    def score(self, X, y, sample_weight=None):
        """Negative surrogate MSE in the output RKHS (higher is better), for ``GridSearchCV``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like or sparse matrix of shape (n_samples, n_output_features)
            True outputs.
        sample_weight : array-like of shape (n_samples,), optional
            Weights of the rows in the mean.
        """
        return -self.surrogate_mse(X, y, sample_weight=sample_weight)
