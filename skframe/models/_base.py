"""Shared machinery of the scikit-learn estimators: component resolution, data checks, fit steps."""

from __future__ import annotations


import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._validation import check_scalar
from ..exceptions import InvalidInputError, InvalidParameterError, NotFittedError
from ..registry import component_name, component_params, get_kernel, get_sketch
from ..sketching import build_feature_map, draw_sketch

__all__ = ["KernelModelMixin", "validate_X", "validate_XY", "resolve_kernel", "resolve_sketch", "component_spec"]

NONE_SKETCH = (None, "none", "exact")


def _wrap_value_error(func, *args, **kwargs):
    """Run a scikit-learn validation and re-raise its ValueError as InvalidInputError with a fix."""
    try:
        return func(*args, **kwargs)
    except InvalidInputError:
        raise
    except ValueError as exc:
        msg = " ".join(str(exc).split())  # one line, as the CLI prints it
        if "NaN" in msg or "infinity" in msg:
            msg = msg.split(". ")[0].rstrip(".") + "." + (" Remove or impute the NaN/inf values first (e.g. sklearn.impute.SimpleImputer; "
                    "the CLI offers --missing zero|mean|drop).")
        raise InvalidInputError(msg) from exc


def validate_X(estimator, X, *, reset):
    """Validate inputs like scikit-learn (NaN/inf, shape, n_features_in_) raising InvalidInputError."""
    from sklearn.utils.validation import validate_data

    return _wrap_value_error(
        validate_data, estimator, X, reset=reset, accept_sparse="csr", dtype=np.float64, ensure_min_samples=1
    )


def validate_XY(estimator, X, Y, *, multi_output=True, y_numeric=True):
    """Validate training data; returns X and a 2-D float Y plus whether y was 1-D."""
    from sklearn.utils.validation import validate_data

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
    """Build the kernel from a registry name (+ params) or accept a kernel object."""
    params = dict(kernel_params or {})
    if kernel is None:
        raise InvalidParameterError("kernel=None; pass a registered kernel name such as 'gaussian' or a kernel object")
    if isinstance(kernel, str):
        return get_kernel(kernel, **params)
    if params:
        raise InvalidParameterError(
            f"kernel_params={params} given with a kernel object {kernel!r}; set them on the object instead"
        )
    if not callable(kernel):
        raise InvalidParameterError(f"kernel={kernel!r} is neither a registered name nor a callable kernel object")
    return kernel


def resolve_sketch(sketch, sketch_size, sketch_params):
    """Build the sketch (None for the exact model) from a name, size and params, or accept an object."""
    if isinstance(sketch, str) and sketch.strip().lower() in ("none", "exact"):
        return None
    if sketch is None:
        return None
    params = dict(sketch_params or {})
    if isinstance(sketch, str):
        check_scalar(sketch_size, "sketch_size", kind=int, low=1, fix="sketch_size must be a positive integer (the m of R)")
        return get_sketch(sketch, size=int(sketch_size), **params)
    if params:
        raise InvalidParameterError(
            f"sketch_params={params} given with a sketch object {sketch!r}; set them on the object instead"
        )
    if not hasattr(sketch, "draw") and not getattr(sketch, "feature_map", False):
        raise InvalidParameterError(f"sketch={sketch!r} has no draw(n, rng) method; it is not a sketch")
    return sketch


def component_spec(obj, fallback_params=None):
    """(name, params) describing a component for saving/reporting, or (None, None) for an unnamed object."""
    name = component_name(obj)
    if name is None:
        return None, None
    params = getattr(obj, "params", None)
    if not isinstance(params, dict):
        params = component_params(obj) or fallback_params or {}
    return name, dict(params)


class KernelModelMixin:
    """Fit steps shared by sketched kernel estimators: draw the sketch, build the representation."""

    def _check_fitted(self):
        try:
            check_is_fitted(self)
        except Exception as exc:
            raise NotFittedError(
                f"this {type(self).__name__} instance is not fitted yet; call fit(X, y) before using it"
            ) from exc

    def _build_representation(self, X, kernel, sketch, rng, *, rtol=None, progress=None):
        """Return (feature_map, Z_train, sketch_info); feature_map is None for the exact model."""
        n = X.shape[0]
        if sketch is None:
            return None, None, {"name": "none", "m": n, "n": n, "s_prime": n}
        if getattr(sketch, "feature_map", False):
            fmap = sketch.fit_features(kernel, X, rng)
            Z = fmap.transform(X)
            name = getattr(sketch, "name", type(sketch).__name__)
            return fmap, Z, {"name": name, "m": int(Z.shape[1]), "n": n, "s_prime": 0, "feature_map": True}
        R = draw_sketch(sketch, n, rng, X=X, kernel=kernel)
        fmap, Z, _ = build_feature_map(kernel, X, R, rtol=rtol, progress=progress)
        info = R.summary()
        info["rank"] = fmap.rank
        return fmap, Z, info
