"""Sketched kernel ridge regression (El Ahmad et al., "Fast Kernel Methods for Generic Lipschitz Losses
via p-Sparsified Sketches", TMLR 2023, §2: the square loss in closed form)."""

from __future__ import annotations

import functools
import time

import numpy as np
from sklearn.base import BaseEstimator, MultiOutputMixin, RegressorMixin

from skframe.constraints import Interval, Options, validate_params
from skframe.contract.model_tags import ModelTags
from skframe.contract.problems import SolveResult
from skframe.core.linalg import solve_psd, weighted_gram
from skframe.exceptions import NotFittedError
from skframe.models._base import (
    KERNEL_MODEL_CONSTRAINTS,
    KERNEL_MODEL_HINTS,
    KernelModelMixin,
    KernelRegressorMixin,
    check_lam,
    store_params,
    validate_XY,
)
from skframe.models._data import check_sample_weight
from skframe.models._extrapolation import target_range
from skframe.models._fit import Fit, Recipe
from skframe.models._fit_square import solve_centres
from skframe.models._folds import CV_ORDERS
from skframe.models._posterior import posterior_predict, posterior_state

__all__ = ["SketchedKernelRidge"]


def _weighted_ridge(rep, Y, lam, w):
    """The closed form with mean-1 row weights ``w`` (data term ``(1/n) sum_i w_i ||f_i - y_i||^2``).

    Exact: ``alpha = W^{1/2} (W^{1/2} K W^{1/2} + n lam I)^{-1} W^{1/2} Y`` (zero weights: ``alpha_i = 0``);
    sketched: ``(Z^T W Z + n lam I)^{-1} Z^T W Y``, from the features in memory or, for a streamed or Dask
    fit, from one pass over their row blocks (each weighted by its rows' weights; memory bounded by a block).
    """
    n, s = Y.shape[0], np.sqrt(w)[:, None]
    if rep.K is not None:
        A = s * rep.K * s.T
        A[np.diag_indices_from(A)] += n * lam
        return s * solve_psd(A, s * Y)
    problem = rep.problem(Y)
    feats = problem.features()
    # kept features are one block; streamed or on a Dask cluster: one pass over the feature blocks
    blocks = [(0, feats[0], Y)] if feats is not None else problem.blocks()
    A, B = weighted_gram(blocks, w, problem.r, Y.shape[1])
    A[np.diag_indices_from(A)] += n * lam
    return solve_psd(A, B)


def _ridge_solve(rep, Y, lam, init, rng, keep=None, sample_weight=None):
    """Square-loss closed form: ``(K + n lam I)^{-1} Y`` (exact) or ``(Z^T Z + n lam I)^{-1} Z^T Y``.

    ``keep(gram, Y, lam, W)``, when given, receives what the posterior variance needs (``gram()`` returns
    the system's ``(A, B)`` without recomputing the in-memory products); ``sample_weight`` (mean 1 after
    scaling) weights the data term, with no posterior state kept.
    """
    n = Y.shape[0]
    if rep.kind == "centres":  # the plan's conjugate gradients over Nyström centres (no weights: models._fit_square)
        return solve_centres(rep, Y, lam, init)
    if sample_weight is not None:
        w = sample_weight * (n / sample_weight.sum())
        return SolveResult(W=_weighted_ridge(rep, Y, lam, w), stop_reason="closed form (exact minimiser)", n_iter=1)
    problem = rep.problem(Y) if rep.K is None else None
    own = getattr(problem, "ridge_weights", None)
    if own is not None:  # accumulated sums solve where they live (the GPU's for backend="cupy")
        W = own(lam)
        if keep is not None:
            keep(problem.gram, Y, lam, W)
        return SolveResult(W=W, stop_reason="closed form (exact minimiser)", n_iter=1)
    A, B = (rep.K, Y) if rep.K is not None else problem.gram()
    diag = np.einsum("ii->i", A)  # a view: the ridge is added in place and removed after (λ paths reuse K)
    diag += n * lam
    W = solve_psd(A, B)  # factors a copy
    diag -= n * lam
    if keep is not None:
        keep(lambda: (A, B), Y, lam, W)
    return SolveResult(W=W, stop_reason="closed form (exact minimiser)", n_iter=1)


def no_posterior_after_pcg(what, sketch_size):
    """The one-line reason a model solved by conjugate gradients over its centres cannot give ``what``."""
    return (f"this model (sketch_size={sketch_size!r}) was solved by conjugate gradients over its centres, which "
            f"keep no posterior state; for {what} fit with a sketch_size below the plan's threshold for them "
            "(skframe.compute.plan_square.PCG_MIN_CENTRES), which solves in closed form, or use a conformal method "
            "(cv+, split, cqr)")


class SketchedKernelRidge(KernelRegressorMixin, KernelModelMixin, MultiOutputMixin, RegressorMixin, BaseEstimator):
    """Kernel ridge regression with a random sketch of the coefficients.

    Minimises ``(1/n) sum_i ||f(x_i) - y_i||^2 + lam ||f||_H^2`` over
    ``f = sum_j k(., x_j) [R^T Gamma]_j`` (El Ahmad et al., TMLR 2023, eq. 3 with the
    square loss). With ``R K R^T = U D U^T`` (rank r) and features
    ``Z = K R^T U_r D_r^{-1/2}`` (their Prop. 1), the solution is ``W = (Z^T Z + n lam I)^{-1} Z^T Y``,
    found by Cholesky with an eigendecomposition fallback: no explicit inverse.
    ``sketch=None`` (or ``"none"``) fits exact kernel ridge regression,
    ``alpha = (K + n lam I)^{-1} Y``, i.e. scikit-learn's ``KernelRidge`` with
    ``alpha = n * lam`` (with ``fit_intercept=False``; with the default
    ``fit_intercept=True`` it is ``KernelRidge`` on the centred targets, plus their mean).

    Parameters
    ----------
    kernel : str or kernel object, default="gaussian"
        Registered kernel name (see ``skframe plugins``) or an object with
        ``__call__(X, Y)``.
    kernel_params : dict, optional
        Parameters of the named kernel, e.g. ``{"gamma": 0.1}``.
    sketch : str, sketch object or None, default="psr"
        Registered sketch name (``"psr"``, ``"psg"``, ``"subsample"``,
        ``"gaussian"``, ``"accumulation"``, ``"countsketch"``, ``"leverage"``,
        ``"rff"``), a sketch object, or None / ``"none"`` for the exact model.
    sketch_size : int or "auto", default="auto"
        Number of rows m of the sketch. ``"auto"`` chooses it from the number n of
        training points (:func:`skframe.compute.plan.auto_size_rule`:
        ``ceil(2 sqrt(n))`` within ``[min(n, 100), min(n, 1000)]``, capped by what the fit's
        execution plan can hold within its memory budget; a rule growing it past 1 000 where the plan solves a
        Nyström sketch's centres by conjugate gradients, :func:`skframe.compute.plan_square.grown_auto_size`,
        is off by default);
        ``sketch_info_["size_rule"]`` says which rule gave m. A size above n is
        clamped to n with a :class:`skframe.exceptions.SketchSizeWarning`.
    sketch_params : dict, optional
        Extra parameters of the named sketch, e.g. ``{"p": 0.005}``.
    lam : float, sequence of float or "auto", default=1e-3
        Regularisation strength lambda > 0. A sequence fits the regularisation path in
        the given order; the model keeps the last value, ``lam_path_`` and
        ``coef_path_`` hold every value and its coefficients. ``"auto"`` chooses lambda
        as part of the fit: the least held-out mean squared error of 5 folds (see ``cv_order``)
        over 41 values in [1e-10, 1], refined between neighbours, all from sums of the fit's own
        features (a value at an end of the grid extends it, then is named in
        ``fit_info_["lam"]["edge"]`` and warned about; GCV on Dask data);
        ``fit_info_["lam"]`` holds the choice, the criterion, its curve and the folds. The default
        stays a fixed 1e-3 so that documented fits are unchanged; the command line's
        default is ``"auto"``. A kernel parameter ``gamma="auto"`` in ``kernel_params``
        is chosen too: the median heuristic times 10^k, k = -1, -0.5, 0, 0.5, 1, scored
        by the same criterion on at most 3 000 evenly spaced rows (``fit_info_["gamma"]``).
    fit_intercept : bool, default=True
        Centre the targets (``intercept_`` = their mean) and add the mean back at
        prediction, as scikit-learn's linear models.
    rtol : float, optional
        Relative eigenvalue tolerance for ``R K R^T``.
    random_state : int, RandomState or None
        Seed of the sketch draw and of the folds of ``lam="auto"`` and ``gamma="auto"``.
    memory_budget : int, str or None, default=None
        Bytes the fit may use beyond the data, e.g. ``"2GB"``; None takes half the memory
        available to the process. When given (or with float32, the CuPy backend,
        memory-mapped or Dask data, or when n x m is large enough for it to be as fast) the
        fit streams: one pass over row chunks sized by the budget, never an n x m array
        (:mod:`skframe.compute.streaming`); ``execution_`` says how the fit ran and why
        (:mod:`skframe.compute.plan`). An impossible budget raises
        :class:`skframe.exceptions.MemoryBudgetError` before allocating.
    dtype : {"auto", "float64", "float32"}, default="auto"
        Precision of kernel blocks and sketch products (sums stay float64); ``"auto"`` is float64 here (it keeps
        only the kernel block of a Newton fit in float32, and this model has none).
    backend : {"auto", "numpy", "cupy"}, default="auto"
        ``"auto"`` computes on an NVIDIA GPU when CuPy sees one and the fit is large enough to
        pay for the transfer, else on the CPU; ``"numpy"`` and ``"cupy"`` force one
        (``pip install "skframe[gpu]"``). The fitted model holds NumPy arrays.
    cv_order : {"shuffle", "keep"}, default="shuffle"
        The folds of ``lam="auto"`` and ``gamma="auto"``: ``"shuffle"`` cuts them from the rows shuffled with
        ``random_state``; ``"keep"`` cuts consecutive blocks of rows in the given order (rows ordered in time).
        ``fit_info_["lam"]["folds"]`` names the folds used.

    Attributes
    ----------
    coef_ : ndarray of shape (s', d)
        Weights on the sampled training points: ``f(x) = k(x, X_fit_) @ coef_``.
    X_fit_ : ndarray or sparse matrix of shape (s', n_features)
        The training points the prediction needs (all of them for the exact model).
    intercept_ : ndarray of shape (d,)
        Added to ``k(x, X_fit_) @ coef_`` (zeros with ``fit_intercept=False``).
    feature_map_ : object or None
        The explicit feature map (random Fourier features), else None.
    sketch_info_ : dict
        m, n, s' (non-null columns), nnz, p, rank and ``size_rule`` of the drawn sketch.
        With features in memory, also ``effective_dimension``, ``sum_k s_k / (s_k + lam)`` over the
        eigenvalues ``s_k`` of the features' covariance at the fitted ``lam``, and ``saturation``, that
        over the number of features: near 1, the sketch, not ``lam``, regularises the model and a
        larger ``sketch_size`` may fit better.
    representation_ : str
        How the training data were held: ``"in-memory"`` features, ``"accumulated"`` m x m
        and m x d sums of a streamed fit (see ``memory_budget``), or ``"centres"``: the sampled rows only,
        where the plan solves over them by conjugate gradients (``execution_["reasons"]["square_solver"]``;
        ``solver_info_`` holds the solver, its residual, passes and stop reason).
    execution_ : dict
        How the fit ran and why (:meth:`skframe.compute.plan.ExecutionPlan.to_dict`): executor,
        backend, engine, chunk rows, precision, BLAS threads, memory budget, with a reason each.
    kernel_ : kernel object
        The kernel bound to the training data (e.g. with ``gamma="scale"`` resolved).
    kernel_spec_, sketch_spec_ : ComponentSpec or None
        Registered name and parameters of the kernel and sketch when given by name.
    lam_path_ : ndarray
    coef_path_ : list of ndarray or None
        One ``coef_`` per value of a λ sequence (None for a single λ).
    fit_seconds_ : float
    posterior_ : dict or None
        What ``predict(X, return_std=True)`` needs (:mod:`skframe.models._posterior`): ``form``, the
        noise ``n lam``, the amplitude ``scale`` per target, the system ``A`` as its lower triangle (``A_tril``,
        replaced by the upper triangle of its factor, ``P_v_triu``, at the first ``return_std=True``); for a sketch
        the factors of the map ``P_z = mix^T UD`` (``mix``, ``UD``; ``P_z`` itself is None), which the features
        are computed from, also by the CV+ shared folds; the dense ``P_z`` only where it has no such factors.
    fit_info_ : dict
        Only after ``lam="auto"`` or ``gamma="auto"``: for each parameter chosen,
        ``chosen``, ``criterion``, ``grid``, ``curve`` (the criterion on the grid) and ``reason``.
    target_range_ : ndarray of shape (2, n_targets) or None
        The training targets' least and greatest values (None for Dask targets): the range
        :meth:`extrapolation_report` flags predictions against (:mod:`skframe.models._extrapolation`).

    Examples
    --------
    >>> import numpy as np
    >>> from skframe import SketchedKernelRidge
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(200, 3)); y = np.sin(4 * X[:, 0])
    >>> model = SketchedKernelRidge(kernel_params={"gamma": 1.0}, sketch="psr",
    ...                             sketch_size=40, lam=1e-4, random_state=0).fit(X, y)
    >>> float(model.score(X, y)) > 0.9
    True
    """

    #: the square-loss λ path, the Gaussian posterior and the CV+ folds on one shared sketch
    __skframe_model_tags__ = ModelTags(lam_path="square", posterior=True, shared_fold_sketch=True)
    #: where the plan picks conjugate gradients, the square loss is solved over the sketch's centres
    _solves_centres = True
    _parameter_constraints = {
        **KERNEL_MODEL_CONSTRAINTS,
        "fit_intercept": ["boolean"],
        "rtol": [Interval("real", 0, 1), None],
        "cv_order": [Options(*CV_ORDERS)],
    }
    _parameter_hints = KERNEL_MODEL_HINTS

    def __init__(self, kernel="gaussian", *, kernel_params=None, sketch="psr", sketch_size="auto",
                 sketch_params=None, lam=1e-3, fit_intercept=True, rtol=None, random_state=None,
                 memory_budget=None, dtype="auto", backend="auto", cv_order="shuffle"):
        store_params(self, locals())

    def fit(self, X, y, sample_weight=None, progress=None):
        """Fit the model: draw the sketch, build the sketched features, solve.

        Parameters
        ----------
        X : array-like, sparse matrix or InputCollection of n_samples inputs
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weight of each sample: the data term is ``sum_i w_i ||f(x_i) - y_i||^2 / sum_i w_i``
            (integer weights: the rows repeated; zero: the rows dropped) and the intercept is the weighted mean.
            The sketched model needs its features in memory for them.
        progress : callable, optional
            Called with a number of rows after each kernel block (progress bars).

        Returns
        -------
        self : SketchedKernelRidge
        """
        fit = self._new_fit(X, y, progress=progress, sample_weight=sample_weight)
        fit.run()
        self.posterior_ = posterior_state(**fit.posterior_system) if fit.posterior_system else None
        return self

    def _new_fit(self, X, y, progress=None, sample_weight=None):
        """Fit steps 1-3 (validate, resolve, plan, size, seed): the :class:`~skframe.models._fit.Fit`."""
        t0 = time.perf_counter()
        validate_params(self)
        check_lam(self.lam)
        X, Y, one_d = validate_XY(self, X, y)
        self._y_1d = one_d
        w = check_sample_weight(sample_weight, Y.shape[0])
        last = {}

        def solve(rep, Yc, lam, init, rng):  # the last λ's system: the posterior variance's state
            return _ridge_solve(rep, Yc, lam, init, rng,
                                keep=lambda gram, Ys, lam_, W: last.update(rep=rep, gram=gram, Y=Ys, lam=lam_, W=W))

        if w is not None:  # weighted: the closed form of the weighted problem (no posterior state)
            solve = functools.partial(_ridge_solve, sample_weight=w)
        recipe = Recipe(solve, fit_intercept=self.fit_intercept, exact="gram", rtol=self.rtol,
                        attributes={"target_range_": target_range(Y)}, centres=True)
        fit = Fit(self, X, Y, recipe, progress=progress, t0=t0, y_1d=one_d, sample_weight=w)
        fit.posterior_system = last  # filled by the solves: read by fit() once the last λ is solved
        return fit

    def check_posterior(self, what):
        """Raise :class:`~skframe.exceptions.NotFittedError` naming why and the fix when the fitted model keeps
        no posterior state for ``what`` (e.g. ``"posterior intervals"``): a fit by conjugate gradients over its
        centres, a model saved by an skframe version without it, or one fitted on Dask targets."""
        if getattr(self, "posterior_", None) is not None:
            return
        if getattr(self, "representation_", None) == "centres":
            raise NotFittedError(no_posterior_after_pcg(what, self.sketch_size))
        raise NotFittedError(
            "this model holds no posterior state (saved by an skframe version without it, or fitted on Dask "
            f"targets); refit it with this version to get {what}")

    def predict(self, X, return_std=False, *, noise=False):
        """Predict targets for X (chunked over rows: memory stays bounded).

        Parameters
        ----------
        X : array-like, sparse matrix or InputCollection
        return_std : bool, default=False
            Also return the posterior standard deviation of the Gaussian-process reading of the model
            (exact: ``s2 (k(x, x) - k_x^T (K + n lam I)^{-1} k_x)``; sketched: the Nyström formula
            ``s2 (k(x, x) - ||z(x)||^2 + n lam z(x)^T (Z^T Z + n lam I)^{-1} z(x))``, see
            :mod:`skframe.models._posterior`), streamed over chunks of test rows.
        noise : bool, default=False
            With ``return_std``: add the noise variance ``s2 n lam`` (the spread of a new observation,
            not of the regression function).

        Returns
        -------
        y : ndarray of shape (n_samples,) or (n_samples, n_targets)
        std : ndarray of the same shape, only with ``return_std=True``
        """
        if not return_std:
            return super().predict(X)
        self._check_fitted()
        self.check_posterior("predict(X, return_std=True)")
        # one kernel block per chunk of rows gives both the mean and the variance
        F, var = self._decision(X, lambda Xv, plan: posterior_predict(self, Xv, noise=noise, options=plan))
        std = np.sqrt(var)
        return (F[:, 0], std[:, 0]) if self._y_1d else (F, std)
