"""Shared machinery of the scikit-learn estimators: data checks and the common fit driver.

The steps themselves live in :mod:`skframe.models._core`; :class:`KernelModelMixin`
runs them in order for the estimators of this package and stores the fitted
attributes.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from sklearn.utils.validation import check_is_fitted

from skframe.compute.plan import describe_data, plan_fit, plan_predict
from skframe.constraints import HasMethods, Interval, Options, validate_params
from skframe.contract.collections import n_items
from skframe.exceptions import InvalidParameterError, NotFittedError
from skframe.models._core import is_exact_sketch, lam_path, predict_expansion
from skframe.models._core import resolve_kernel as _core_resolve_kernel
from skframe.models._core import resolve_sketch as _core_resolve_sketch
from skframe.models._data import validate_X, validate_XY
from skframe.models._extrapolation import WIDEN, out_of_range
from skframe.models._fit import plan_for, planned_loss
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
    "lam": [Interval("real", 0, None, closed="neither"), Options("auto"), "array-like"],
    "random_state": ["random_state"],
    "memory_budget": [Interval("int", 1, None), str, None],
    "dtype": [Options("auto", "float64", "float32")],
    "backend": [Options("auto", "numpy", "cupy")],
}
#: the fix each message about one of those parameters suggests (``_parameter_hints``)
KERNEL_MODEL_HINTS = {"lam": "e.g. lam=1e-3, 'auto' to choose it from the data, or a list of values for a path",
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

    Fitted attributes set by :meth:`skframe.models._fit.Fit.run`: ``coef_``, ``X_fit_``,
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

    def _plan_execution(self, X, n_outputs, kernel=None, loss=None):
        """The :class:`~skframe.compute.plan.ExecutionPlan` of a fit on ``X`` with ``n_outputs`` targets."""
        return plan_for(self, X, n_outputs, kernel, loss)

    def execution_plan(self, X, y=None):
        """How a fit on ``(X, y)`` would run, without fitting: the :class:`~skframe.compute.plan.ExecutionPlan`.

        Its ``explain()`` lines and ``to_dict()`` say which executor (in-memory, streamed,
        Dask), backend, engine, chunk rows, precision, BLAS threads and memory budget the fit
        would use, and why. A fit stores the same dictionary as ``execution_``.
        """
        validate_params(self)
        params = self.kernel_params
        if isinstance(params, dict) and isinstance(params.get("gamma"), str) and params["gamma"].lower() == "auto":
            params = dict(params, gamma="scale")  # the plan does not depend on the value "auto" chooses
        kernel = _core_resolve_kernel(self.kernel, params)[0]
        d = 1 if y is None or np.ndim(y) < 2 else int(np.shape(y)[1])
        return self._plan_execution(X, d, kernel, self._plan_loss())

    def _plan_loss(self):
        """The loss object a fit solves, for :meth:`execution_plan` (None: the square loss in closed form)."""
        return planned_loss(self)

    def _fixed_small_sketch(self):
        """True for a sketched model of a user-fixed size.

        Such a model is a low-rank approximation: with a tiny sketch (e.g. m = 5) it cannot reach
        the R^2 > 0.5 that scikit-learn's generic check_regressors_train expects from a full model
        (the ``poor_score`` tag). The exact model and the ``"auto"`` size are held to it.
        """
        size = getattr(self, "sketch_size", "auto")
        return not is_exact_sketch(self.sketch) and not (size is None or (isinstance(size, str) and size == "auto"))

    def _decision(self, X, expansion=None):
        """``f(X)`` (n, d): the kernel expansion (or feature map) plus the intercept.

        ``expansion(X, plan) -> (F, extra)``, when given, computes the expansion together with what else it
        derives from the same kernel blocks (the posterior variance); ``(f(X), extra)`` is returned then.
        """
        self._check_fitted()
        X = validate_X(self, X, reset=False)
        plan = None if self.X_fit_ is None else plan_predict(X, n_items(self.X_fit_))  # rows, engine, chunks
        if expansion is None:
            F, extra = predict_expansion(self.kernel_, X, self.coef_, self.X_fit_, self.feature_map_,
                                         options=plan), None
        else:
            F, extra = expansion(X, plan)
        offset = getattr(self, "intercept_", None)
        F = F if offset is None or not np.any(offset) else F + offset
        return F if expansion is None else (F, extra)


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

    def extrapolation_report(self, X=None, *, predictions=None, widen=WIDEN):
        """The predictions outside the training targets' range widened by ``widen`` times its span on each side.

        Parameters
        ----------
        X : array-like, optional
            Rows to predict (not needed with ``predictions``).
        predictions : array-like of shape (n,) or (n, n_targets), optional
            This model's predictions, when already computed.
        widen : float, default=0.5

        Returns
        -------
        dict
            :func:`skframe.models._extrapolation.out_of_range`: ``count``, ``rows`` (from 0), ``values``, ``mask``,
            the bounds and the ``rule``; ``{"count": None, ...}`` for a model without a stored range (Dask
            targets, or saved by an earlier version).
        """
        rng = getattr(self, "target_range_", None)
        if predictions is None:
            predictions = self.predict(X)
        if rng is None:
            return {"count": None, "rows": [], "values": [], "rule": "no training range stored with this model"}
        return out_of_range(predictions, rng, widen)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.regressor_tags.poor_score = self._fixed_small_sketch()
        return tags


def check_lam(lam):
    """The λ values (one or a path), each > 0, or ``["auto"]``; raises InvalidParameterError naming the bad one."""
    if isinstance(lam, str) and lam.lower() == "auto":
        return ["auto"]
    values = lam_path(lam)
    if not values:
        raise InvalidParameterError("lam=[] is empty; give a positive number such as 1e-3 or a list of them")
    for v in values:
        if not np.isfinite(v) or v <= 0:
            raise InvalidParameterError(f"lam={lam!r} contains {v!r}; every lam must be > 0, e.g. 1e-3")
    return values
