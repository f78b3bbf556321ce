"""Shared machinery of the scikit-learn estimators: data checks and the common fit driver.

The steps themselves live in :mod:`skframe.models._core`; :class:`KernelModelMixin`
runs them in order for the estimators of this package and stores the fitted
attributes.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
from sklearn.utils.validation import check_is_fitted, validate_data

from skframe.compute.backend import serial_blas
from skframe.compute.plan import describe_data, plan_fit
from skframe.compute.stream_fit import options_from, streamed_representation, validate_dask_XY
from skframe.constraints import HasMethods, Interval, Options, validate_params
from skframe.contract.collections import is_collection, n_items
from skframe.contract.tags import get_tags
from skframe.core.linalg import ZERO_GRAM
from skframe.deps import is_dask_collection
from skframe.exceptions import InvalidInputError, InvalidParameterError, NotFittedError
from skframe.models import _degenerate
from skframe.models._core import (
    build_representation,
    is_exact_sketch,
    lam_path,
    make_rngs,
    predict_expansion,
    resolve_loss,
    size_and_resolve_sketch,
    target_offset,
)
from skframe.models._core import resolve_kernel as _core_resolve_kernel
from skframe.models._core import resolve_sketch as _core_resolve_sketch
from skframe.options import ComputeOptions

__all__ = ["store_params", "KernelModelMixin", "KernelRegressorMixin", "validate_X", "validate_XY", "resolve_kernel",
           "resolve_sketch", "KERNEL_MODEL_CONSTRAINTS", "KERNEL_MODEL_HINTS", "in_memory_plan", "execution_record"]

#: values accepted for the parameters every sketched kernel estimator takes (kernel, sketch, λ, seed and
#: compute options); an estimator adds its own to these in ``_parameter_constraints``
KERNEL_MODEL_CONSTRAINTS = {
    "kernel": [str, HasMethods("__call__")],
    "kernel_params": [dict, None],
    "sketch": [str, HasMethods("draw"), HasMethods("fit_features"), None],
    "sketch_size": [Interval("int", 1, None), Options("auto"), None],
    "sketch_params": [dict, None],
    "lam": [Interval("real", 0, None, closed="neither"), "array-like"],
    "random_state": ["random_state"],
    "memory_budget": [Interval("int", 1, None), str, None],
    "dtype": [Options("float64", "float32")],
    "backend": [Options("auto", "numpy", "cupy")],
}
#: the fix each message about one of those parameters suggests (``_parameter_hints``)
KERNEL_MODEL_HINTS = {"lam": "e.g. lam=1e-3, or a list of values for a regularisation path",
                      "sketch_size": "a positive integer m, or 'auto' to choose it from n"}


def in_memory_plan(data, kernel, sketch, sketch_size, sketch_params=None, *, n=None):
    """The execution plan of a model that fits in memory only (the structured models' input and output sides).

    The ``"auto"`` size follows the sqrt(n) rule capped by what the in-memory arrays may hold
    within half the available memory (:func:`skframe.compute.plan.plan_fit` with ``streamable=False``);
    ``n`` overrides the rows of ``data`` (e.g. the training part of a validation split).
    """
    shape = describe_data(data)
    if n is not None:
        shape = replace(shape, n=int(n))
    return plan_fit(shape, kernel=kernel, sketch=sketch, sketch_size=sketch_size, sketch_params=sketch_params,
                    options=ComputeOptions(backend="auto"), streamable=False)


def execution_record(plan, **sides):
    """``execution_`` of a fit: the plan as JSON types, with the plans of other sides (``output=``) under their
    names (without their machine, which is the same)."""
    out = plan.to_dict()
    for name, other in sides.items():
        out[name] = {k: v for k, v in other.to_dict().items() if k != "machine"}
    return out


def store_params(estimator, params):
    """Store constructor arguments unchanged as attributes (scikit-learn's rule: ``__init__`` only stores).

    Call as ``store_params(self, locals())`` first thing in ``__init__``.
    """
    for name, value in params.items():
        if name != "self" and not name.startswith("__"):
            setattr(estimator, name, value)


def _wrap_value_error(func, *args, **kwargs):
    """Run a scikit-learn validation and re-raise its ValueError as InvalidInputError with a fix."""
    try:
        return func(*args, **kwargs)
    except InvalidInputError:
        raise
    except ValueError as exc:
        msg = " ".join(str(exc).split())  # one line, as the CLI prints it
        if "NaN" in msg or "infinity" in msg:
            msg = msg.split(". ")[0].rstrip(".") + "." + (
                " Remove or impute the NaN/inf values first (e.g. sklearn.impute.SimpleImputer; "
                "the CLI offers --missing zero|mean|drop).")
        raise InvalidInputError(msg) from exc


def validate_X(estimator, X, *, reset):
    """Validate inputs like scikit-learn (NaN/inf, shape, n_features_in_) raising InvalidInputError.

    An :class:`skframe.contract.collections.InputCollection` is returned unchanged: the kernel
    is the only thing that reads its items.
    """
    if is_collection(X):
        if n_items(X) < 1:
            raise InvalidInputError("the input collection is empty; at least one item is needed")
        return X

    return _wrap_value_error(
        validate_data, estimator, X, reset=reset, accept_sparse="csr", dtype=np.float64, ensure_min_samples=1
    )


def _check_targets(Y, n):
    """2-D float targets for a collection input (scikit-learn's validation is skipped for X)."""
    Y = np.asarray(Y, dtype=np.float64)
    if Y.ndim not in (1, 2) or Y.shape[0] != n:
        raise InvalidInputError(f"X has {n} items but y has shape {Y.shape}; give one target row per item")
    if not np.all(np.isfinite(Y)):
        raise InvalidInputError("y contains NaN or inf values; remove or impute them first")
    return Y


def validate_XY(estimator, X, Y, *, multi_output=True, y_numeric=True):
    """Validate training data; returns X and a 2-D float Y plus whether y was 1-D."""
    if is_dask_collection(X):  # stays distributed: fitted by skframe.compute.distributed
        return validate_dask_XY(estimator, X, Y)
    if is_collection(X):
        X = validate_X(estimator, X, reset=True)
        Y = _check_targets(Y, n_items(X))
    else:
        X, Y = _wrap_value_error(
            validate_data,
            estimator,
            X,
            Y,
            reset=True,
            accept_sparse="csr",
            dtype=np.float64,
            multi_output=multi_output,
            y_numeric=y_numeric,
        )
        Y = np.asarray(Y, dtype=np.float64)
    one_d = Y.ndim == 1
    if one_d:
        Y = Y[:, None]
    return X, Y, one_d


def resolve_kernel(kernel, kernel_params):
    """Kernel object from a registry name (+ params) or a kernel object (see :func:`_core.resolve_kernel`)."""
    return _core_resolve_kernel(kernel, kernel_params)[0]


def resolve_sketch(sketch, sketch_size, sketch_params):
    """Sketch object (None for the exact model) from a name, an integer size and params, or an object."""
    if is_exact_sketch(sketch):
        return None
    if isinstance(sketch, str) and (isinstance(sketch_size, bool) or not isinstance(sketch_size, (int, np.integer))
                                    or sketch_size < 1):
        raise InvalidParameterError(f"sketch_size={sketch_size!r} must be a positive integer (the m of R)")
    return _core_resolve_sketch(sketch, sketch_size, sketch_params)[0]


class KernelModelMixin:
    """Runs the fit core for the sketched kernel estimators and stores their fitted attributes.

    Fitted attributes set by :meth:`_fit_kernel_model`: ``coef_``, ``X_fit_``,
    ``feature_map_``, ``weights_``, ``intercept_``, ``kernel_``, ``kernel_spec_``,
    ``sketch_spec_``, ``sketch_info_``, ``lam_path_``, ``coef_path_``,
    ``objective_path_``, ``history_``, ``stop_reason_``, ``n_iter_``, ``solver_info_``,
    ``n_outputs_``, ``solve_seconds_``, ``fit_seconds_``.
    """

    def _check_fitted(self):
        try:
            check_is_fitted(self)
        except Exception as exc:
            raise NotFittedError(
                f"this {type(self).__name__} instance is not fitted yet; call fit(X, y) before using it"
            ) from exc

    def _fit_kernel_model(self, X, Y, *, solve, loss=None, M=None, fit_intercept=False, exact="features",
                          progress=None, rtol=None, n_rngs=1, t0=None):
        """Resolve, seed, size, draw, represent, then ``solve(rep, Yc, lam, init, rng) -> SolveResult`` along
        the λ path; stores the fitted attributes. ``Y`` is (n, d), ``M`` an output matrix
        (predictions ``Z W M``); returns self."""
        t0 = time.perf_counter() if t0 is None else t0
        n = n_items(X)
        _degenerate.check_feature_range(X)  # squares that overflow float64: refused before any kernel
        _degenerate.check_target_range(Y)  # as for the targets: the loss and the metrics square them
        kernel, self.kernel_spec_ = _core_resolve_kernel(self.kernel, self.kernel_params, X)
        _degenerate.check_kernel_parameters(kernel, self.kernel_spec_)  # e.g. gamma="scale" made 0 by the data
        plan = self._plan_execution(X, Y.shape[1], kernel, loss)  # every execution choice, made once
        if isinstance(self.sketch, str):
            _degenerate.warn_budget_cut(plan, n)
        options = plan.compute_options()  # backend, engine, dtype, budget, BLAS threads: passed down
        # "auto": the sqrt(n) rule, capped by what the chosen executor holds
        sketch, self.sketch_spec_, size_info = size_and_resolve_sketch(self.sketch, self.sketch_size,
                                                                       self.sketch_params, n, plan=plan)
        rngs = make_rngs(self.random_state, n_rngs)
        # small dense algebra (m x m eigendecompositions, n x m x m products, solver iterations) runs on
        # one BLAS thread: as fast, and immune to threads waiting for a core another process holds
        with serial_blas(options.blas_threads == 1):
            return self._represent_and_solve(X, Y, n, kernel, sketch, size_info, plan, options, rngs, solve, loss,
                                             M, fit_intercept, exact, progress, rtol, t0)

    def _plan_execution(self, X, n_outputs, kernel=None, loss=None):
        """The :class:`~skframe.compute.plan.ExecutionPlan` of a fit on ``X`` with ``n_outputs`` targets."""
        data = replace(describe_data(X), n_outputs=int(n_outputs))
        square = loss is None or get_tags(loss, "loss").square
        return plan_fit(data, kernel=kernel, sketch=self.sketch, sketch_size=self.sketch_size,
                        sketch_params=self.sketch_params, loss="square" if square else "iterative",
                        options=options_from(self))

    def execution_plan(self, X, y=None):
        """How a fit on ``(X, y)`` would run, without fitting: the :class:`~skframe.compute.plan.ExecutionPlan`.

        Its ``explain()`` lines and ``to_dict()`` say which executor (in-memory, streamed,
        Dask), backend, engine, chunk rows, precision, BLAS threads and memory budget the fit
        would use, and why. A fit stores the same dictionary as ``execution_``.
        """
        validate_params(self)
        kernel = _core_resolve_kernel(self.kernel, self.kernel_params)[0]
        d = 1 if y is None or np.ndim(y) < 2 else int(np.shape(y)[1])
        return self._plan_execution(X, d, kernel, self._plan_loss())

    def _plan_loss(self):
        """The loss object a fit solves, for :meth:`execution_plan` (None: the square loss in closed form)."""
        name = getattr(self, "loss", None)
        return None if name is None else resolve_loss(name, getattr(self, "loss_params", None))[0]

    def _represent_and_solve(self, X, Y, n, kernel, sketch, size_info, plan, options, rngs, solve, loss, M,
                             fit_intercept, exact, progress, rtol, t0):
        spec = getattr(self, "kernel_spec_", None)
        # a kernel that is zero or constant on the data: refused or warned about before the representation
        constant = _degenerate.check_kernel_sample(kernel, X, spec, engine=options.engine)
        try:
            if plan.streams:  # one streamed pass (or Dask partitions), no n x m array (skframe.compute.streaming)
                rep = streamed_representation(X, Y, kernel, sketch, rngs[0], options, rtol=rtol, progress=progress)
            else:
                rep = build_representation(X, kernel, sketch, rngs[0], rtol=rtol, progress=progress, exact=exact,
                                           options=options)
        except InvalidParameterError as exc:
            if not str(exc).startswith(ZERO_GRAM):
                raise
            raise _degenerate.zero_gram_error(kernel, spec, X) from exc
        if not constant:
            _degenerate.warn_rank_collapse(kernel, rep.info, spec)
        offset = target_offset(Y, loss, fit_intercept)
        Yc = Y - offset if fit_intercept else Y
        init = None
        if getattr(self, "warm_start", False) and getattr(self, "weights_", None) is not None:
            prev = np.asarray(self.weights_)
            init = prev if rep.Z is not None and prev.shape == (rep.Z.shape[1], Y.shape[1]) else None
        t_solve = time.perf_counter()
        lams, coefs, objectives = lam_path(self.lam), [], []
        for lam in lams:
            res = solve(rep, Yc, lam, init, rngs[-1])
            init = res.W
            attrs = rep.expansion(res.W if M is None else res.W @ M)
            _degenerate.check_coefficients(attrs["coef_"], kernel, spec)  # a NaN model is refused, not saved
            coefs.append(attrs["coef_"])
            objectives.append(float(res.history[-1]) if res.history else None)
        for key, value in attrs.items():
            setattr(self, key, value)
        self.weights_ = res.W
        self.intercept_ = offset
        self.kernel_ = kernel
        self.sketch_info_ = dict(rep.info, **size_info)
        # "in-memory" features, "streamed" (recomputed each pass) or "accumulated" (square loss: m x m sums only)
        self.representation_ = self.sketch_info_.get("representation", "in-memory")
        # the plan, as JSON types (saved with the model), with what the fit settled on the way
        self.execution_ = dict(plan.to_dict(), **{k: rep.info[k] for k in ("chunk_rows", "products")
                                                  if k in rep.info and plan.streams})
        if plan.streams and plan.loss == "iterative":  # the rank r <= m the features were sized with
            self.execution_["keep_features"] = self.representation_ == "in-memory"
        self.lam_path_ = np.asarray(lams)
        self.coef_path_ = coefs if len(lams) > 1 else None
        self.objective_path_ = objectives if len(lams) > 1 else None
        self.history_ = [float(v) for v in res.history]
        self.stop_reason_ = res.stop_reason
        self.n_iter_ = int(res.n_iter)
        self.solver_info_ = dict(res.info)
        self.n_outputs_ = Y.shape[1]
        self.solve_seconds_ = time.perf_counter() - t_solve
        self.fit_seconds_ = time.perf_counter() - t0
        return self

    def _fixed_small_sketch(self):
        """True for a sketched model of a user-fixed size.

        Such a model is a low-rank approximation: with a tiny sketch (e.g. m = 5) it cannot reach
        the R^2 > 0.5 that scikit-learn's generic check_regressors_train expects from a full model
        (the ``poor_score`` tag). The exact model and the ``"auto"`` size are held to it.
        """
        size = getattr(self, "sketch_size", "auto")
        return not is_exact_sketch(self.sketch) and not (size is None or (isinstance(size, str) and size == "auto"))

    def _decision(self, X):
        """``f(X)`` (n, d): the kernel expansion (or feature map) plus the intercept."""
        self._check_fitted()
        X = validate_X(self, X, reset=False)
        F = predict_expansion(self.kernel_, X, self.coef_, self.X_fit_, self.feature_map_)
        offset = getattr(self, "intercept_", None)
        return F if offset is None or not np.any(offset) else F + offset


class KernelRegressorMixin:
    """``predict`` with the target shape of ``fit`` and the ``poor_score`` tag of the sketched regressors."""

    def predict(self, X):
        """Predict targets for X (chunked over rows: memory stays bounded).

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_targets)
        """
        F = self._decision(X)
        return F[:, 0] if self._y_1d else F

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.regressor_tags.poor_score = self._fixed_small_sketch()
        return tags


def check_lam(lam):
    """The λ values (one or a path), each > 0; raises InvalidParameterError naming the bad one."""
    values = lam_path(lam)
    if not values:
        raise InvalidParameterError("lam=[] is empty; give a positive number such as 1e-3 or a list of them")
    for v in values:
        if not np.isfinite(v) or v <= 0:
            raise InvalidParameterError(f"lam={lam!r} contains {v!r}; every lam must be > 0, e.g. 1e-3")
    return values
