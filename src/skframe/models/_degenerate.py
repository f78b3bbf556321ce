"""Degenerate data and fits: what a fit refuses, or warns about, before it yields a useless model.

* Features too large for float64: kernels square the features or multiply them together, which
  overflows above about 1.3e154 (``sqrt`` of the largest double); such data are refused with
  one clear error (:func:`check_feature_range`) before any kernel is computed.
* A kernel evaluated on a sample of the training points (:data:`SAMPLE_ROWS` evenly spaced
  rows): non-finite values or a kernel that is zero everywhere are refused; a kernel that is
  numerically constant (entries equal to 12 digits) although the points differ gives a
  :class:`~skframe.exceptions.DegenerateDataWarning` — the model can then only predict a
  constant (e.g. features of magnitude 1e-300, whose squared differences underflow to 0).
* A sketch whose rank collapses to 1 for a normalized kernel (the sampled points look alike
  to the kernel), and an ``"auto"`` sketch size that the memory budget cuts below the rule's
  minimum, give a warning.
* Fitted parameters: a kernel parameter set from the data (``gamma="scale"``) must satisfy the
  kernel's own constraints, and the coefficients must be finite; otherwise the fit is refused
  (a saved model would not load back).

Messages name the parameters the kernel really has (``gamma`` only for kernels with one).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import scipy.sparse as sp

from skframe.compute.memory import format_bytes
from skframe.compute.plan_rules import AUTO_MIN, auto_size_rule
from skframe.contract.collections import is_collection
from skframe.contract.parameters import validate_component
from skframe.contract.protocols import kernel_block
from skframe.contract.tags import get_tags
from skframe.deps import is_dask_collection
from skframe.exceptions import DegenerateDataWarning, InvalidInputError, InvalidParameterError, SketchSizeWarning

__all__ = ["SQUARE_MAX", "SQUARE_MIN", "SAMPLE_ROWS", "feature_magnitude", "check_feature_range",
           "describe_kernel", "check_kernel_parameters", "check_kernel_sample", "warn_rank_collapse",
           "warn_budget_cut", "check_coefficients", "zero_gram_error"]

#: largest magnitude whose square is a finite double (about 1.3e154)
SQUARE_MAX = math.sqrt(np.finfo(np.float64).max)
#: smallest magnitude whose square is a normal double (about 1.5e-154)
SQUARE_MIN = math.sqrt(np.finfo(np.float64).tiny)
#: rows of the training data the kernel is evaluated on to detect a constant or zero kernel
SAMPLE_ROWS = 64
_CONSTANT_RTOL = 1e-12


def _is_array(X):
    return (isinstance(X, np.ndarray) or sp.issparse(X)) and getattr(X, "ndim", 2) == 2


def feature_magnitude(X):
    """The largest ``|x_ij|`` of a dense or sparse 2-D array (0.0 when empty); None for other inputs."""
    if not _is_array(X) or is_dask_collection(X) or is_collection(X):
        return None
    values = X.data if sp.issparse(X) else X
    if values.size == 0:
        return 0.0
    if values.dtype.kind not in "fiu":
        return None
    return float(max(values.max(), -values.min()))  # no |X| copy


def check_feature_range(X):
    """Refuse features whose squares overflow float64 (magnitude above :data:`SQUARE_MAX`).

    Raises
    ------
    InvalidInputError
        Naming the largest magnitude and the fix (rescale the features).
    """
    top = feature_magnitude(X)
    if top is not None and top > SQUARE_MAX:
        raise InvalidInputError(
            f"the features reach {top:.3g} in magnitude: kernels square them or multiply them together, which "
            f"overflows float64 above {SQUARE_MAX:.2g}; rescale the features (divide them by a power of ten) "
            "before fitting"
        )


def _params(kernel, spec):
    params = dict(spec.params) if spec is not None else dict(getattr(kernel, "params", None) or {})
    return {k: v for k, v in params.items() if not isinstance(v, (np.ndarray, list, dict))}


def describe_kernel(kernel, spec=None):
    """``"the gaussian kernel (gamma=0.25)"``: the kernel by its registered name and actual parameters.

    >>> class Dot:
    ...     params = {}
    >>> describe_kernel(Dot())
    'the Dot kernel (no parameters)'
    """
    name = spec.name if spec is not None else type(kernel).__name__
    params = _params(kernel, spec)
    shown = ", ".join(f"{k}={v!r}" for k, v in params.items()) or "no parameters"
    return f"the {name} kernel ({shown})"


def check_kernel_parameters(kernel, spec=None):
    """Refuse a kernel whose parameters, set from the training data, break its own constraints.

    A bandwidth ``gamma="scale"`` is computed from the data's spread; on degenerate data it
    can come out 0 or infinite, and a model holding it could not be loaded back.
    """
    if not getattr(type(kernel), "_parameter_constraints", None):
        return
    try:
        validate_component(kernel)
    except InvalidParameterError as exc:
        raise InvalidInputError(
            f"{describe_kernel(kernel, spec)} is not a valid kernel for these data ({exc}); its parameters were set "
            "from the training data: rescale the features, or set the parameters explicitly"
        ) from exc


def _sample(X):
    n = X.shape[0]
    k = min(n, SAMPLE_ROWS)
    rows = np.unique(np.linspace(0, n - 1, k).astype(np.int64))
    Xs = X[rows]
    return Xs.tocsr() if sp.issparse(Xs) else np.ascontiguousarray(Xs, dtype=np.float64)


def _all_rows_equal(Xs):
    if sp.issparse(Xs):
        return (Xs - Xs[np.zeros(Xs.shape[0], dtype=np.int64)]).count_nonzero() == 0
    return bool(np.all(Xs == Xs[0]))


def _hint(kernel, spec, top, small_gamma):
    params = _params(kernel, spec)
    if top is not None and 0.0 < top < SQUARE_MIN:
        lost = "distances and gamma='scale' lose them" if "gamma" in params else "products lose them"
        return (f"the features are at most {top:.3g} in magnitude: their squares underflow float64 (below 1e-308), "
                f"so {lost}; rescale them (multiply by a power of ten)")
    if "gamma" in params:
        if small_gamma:
            return f"gamma={params['gamma']!r} is too small for the features' spread: raise it, or use gamma='scale'"
        return f"gamma={params['gamma']!r} is too large for the features' spread: lower it, or use gamma='scale'"
    return "check the kernel's parameters and the features' scale"


def check_kernel_sample(kernel, X, spec=None, engine=None):
    """Evaluate the kernel on up to :data:`SAMPLE_ROWS` training rows; refuse or warn when it is degenerate.

    ``engine`` is the fit's engine of the inner loops, handed to the kernel as every block of the fit.

    Returns
    -------
    bool
        True when a warning said that the kernel is numerically constant.

    Raises
    ------
    InvalidInputError
        When the kernel is not finite, or zero everywhere, on the sampled points.
    """
    if not _is_array(X) or X.shape[0] < 2:
        return False
    Xs = _sample(X)
    if Xs.shape[0] < 2 or _all_rows_equal(Xs):
        return False  # identical points: a constant kernel is expected
    with np.errstate(all="ignore"):
        K = kernel_block(kernel, Xs, Xs, engine=engine)
    top = feature_magnitude(Xs)
    described = describe_kernel(kernel, spec)
    if not np.all(np.isfinite(K)):
        raise InvalidInputError(
            f"{described} is not finite (inf or NaN) on the training points: its values overflow float64 (the "
            f"features reach {top:.3g} in magnitude); rescale the features or change the kernel's parameters"
        )
    high = float(np.abs(K).max())
    if high == 0.0:
        raise InvalidInputError(
            f"{described} is zero on every pair of sampled training points, so no model can be fitted: "
            f"{_hint(kernel, spec, top, small_gamma=False)}"
        )
    if float(K.max() - K.min()) <= _CONSTANT_RTOL * high:
        warnings.warn(
            f"{described} is numerically constant on the training points (every sampled entry is {K[0, 0]:.6g}) "
            f"although they differ: the model can only predict a constant; {_hint(kernel, spec, top, True)}",
            DegenerateDataWarning, stacklevel=4)
        return True
    return False


def warn_rank_collapse(kernel, info, spec=None):
    """Warn when a sketch of a normalized kernel keeps rank 1 out of m >= 2 (the sampled points look alike)."""
    rank, m, s_prime = info.get("rank"), info.get("m"), info.get("s_prime")
    if rank is None or m is None or rank != 1 or min(int(m), int(s_prime or m)) < 2:
        return
    if not getattr(get_tags(kernel, "kernel"), "normalized", False):
        return  # e.g. a linear kernel on one feature has rank 1 by nature
    warnings.warn(
        f"the sketch's rank collapsed to 1 (of m={int(m)}): {describe_kernel(kernel, spec)} sees the sampled "
        "training points as one, so the model is nearly constant; rescale the features or change the kernel's "
        "parameters", DegenerateDataWarning, stacklevel=4)


def warn_budget_cut(plan, n):
    """Warn when the memory budget caps an ``"auto"`` sketch size below the rule's minimum ``min(n, 100)``."""
    m = plan.sketch_size
    if m is None or "capped" not in str(plan.size_rule):
        return
    floor = min(int(n), AUTO_MIN)
    if m >= floor:
        return
    source = "given" if plan.budget_source == "given" else "half the available memory"
    warnings.warn(
        f"the memory budget ({format_bytes(plan.memory_budget)}, {source}) caps the 'auto' sketch size at m={m}, "
        f"below the rule's minimum of {floor} (the rule asks for m={auto_size_rule(int(n))}): the model is a coarse "
        "approximation; raise memory_budget or set sketch_size", SketchSizeWarning, stacklevel=4)


def check_coefficients(coef, kernel, spec=None):
    """Refuse non-finite fitted coefficients (NaN or inf): such a model predicts nothing useful."""
    values = coef.data if sp.issparse(coef) else coef
    if isinstance(values, np.ndarray) and values.dtype.kind in "fc" and not np.all(np.isfinite(values)):
        raise InvalidInputError(
            f"the fit produced coefficients that are not finite (NaN or inf) with {describe_kernel(kernel, spec)}: "
            "the features or targets overflow float64 in the kernel or the solver; rescale them, or raise lam"
        )


def zero_gram_error(kernel, spec, X):
    """The error of a zero sketched Gram matrix ``R K R^T``, naming the kernel and its actual parameters."""
    top = feature_magnitude(X)
    return InvalidInputError(
        f"the sketched Gram matrix R K R^T is zero: {describe_kernel(kernel, spec)} vanishes on the sampled training "
        f"points; {_hint(kernel, spec, top, small_gamma=False)}"
    )
