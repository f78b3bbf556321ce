"""Parameter grids of :class:`~skframe.model_selection.KernelSearchCV`: checks, kernel-parameter shorthand, defaults.

A grid is scikit-learn's: a dict (or a list of dicts) from estimator parameter names to
lists of values. As a shorthand, a parameter of the estimator's kernel may be named directly
(``{"gamma": [0.1, 1.0]}``): it is merged into the estimator's ``kernel_params``
(``input_kernel_params`` for the structured models).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from sklearn.model_selection import ParameterGrid

from skframe.contract.collections import is_collection, n_items, take
from skframe.exceptions import InvalidParameterError
from skframe.models._core import resolve_kernel

__all__ = ["default_param_grid", "median_gamma", "expand_grid", "kernel_params_name", "to_estimator_params",
           "group_candidates", "DEFAULT_LAMS"]

#: λ values of the default grid: 1e-8 ... 1e-2, one per decade
DEFAULT_LAMS = tuple(float(v) for v in np.logspace(-8, -2, 7))
#: factors applied to the median heuristic's gamma in the default grid
DEFAULT_GAMMA_FACTORS = tuple(float(v) for v in np.logspace(-1, 1, 5))
#: rows the median heuristic looks at (evenly spaced over the data)
MEDIAN_ROWS = 500


def kernel_params_name(estimator):
    """The estimator parameter that holds the kernel's parameters (``"kernel_params"``, ``"input_kernel_params"``),
    or None."""
    params = estimator.get_params(deep=False)
    for name in ("kernel_params", "input_kernel_params"):
        if name in params:
            return name
    return None


def _kernel_name(params_name):
    return params_name[: -len("_params")]


def kernel_parameter_names(estimator, kernel=None):
    """Names of the parameters of the estimator's kernel (or of ``kernel``), empty when unknown."""
    params_name = kernel_params_name(estimator)
    if params_name is None:
        return []
    own = estimator.get_params(deep=False)
    kernel = own.get(_kernel_name(params_name)) if kernel is None else kernel
    try:
        obj = resolve_kernel(kernel, own.get(params_name) if isinstance(kernel, str) else None)[0]
    except Exception:  # an unusable kernel is reported by the fit, not by the grid check
        return []
    params = getattr(obj, "params", None)
    return sorted(params) if isinstance(params, dict) else []


def median_gamma(X, rows=MEDIAN_ROWS):
    """The median heuristic's bandwidth: ``1 / median ||x_i - x_j||^2`` over pairs of distinct rows.

    Computed on at most ``rows`` evenly spaced rows of ``X`` (dense or sparse). Returns None for
    an input collection or when every sampled pair is at distance 0.
    """
    if is_collection(X):
        return None
    n = n_items(X)
    idx = np.unique(np.linspace(0, n - 1, min(n, rows)).astype(np.int64))
    A = take(X, idx)
    A = A.toarray() if hasattr(A, "toarray") else np.asarray(A, dtype=np.float64)
    sq = (A * A).sum(axis=1)
    D = sq[:, None] + sq[None, :] - 2.0 * (A @ A.T)
    D = D[np.triu_indices(len(idx), 1)]
    D = D[D > 1e-12 * max(float(sq.max(initial=0.0)), 1e-300)]
    return None if D.size == 0 else float(1.0 / np.median(D))


def default_param_grid(estimator, X, y=None):
    """A grid for a kernel estimator: ``gamma`` around the median heuristic and ``lam`` on a log grid.

    Parameters
    ----------
    estimator : skframe estimator
    X : array-like, sparse matrix or InputCollection
        The training inputs (the heuristic reads at most 500 evenly spaced rows).
    y : ignored

    Returns
    -------
    dict
        ``{"kernel_params": [{..., "gamma": g} for g in g0 * 10**[-1, -0.5, 0, 0.5, 1]], "lam": [1e-8, ..., 1e-2]}``
        with ``g0 = 1 / median ||x_i - x_j||^2`` (:func:`median_gamma`); the estimator's other kernel
        parameters are kept. Without a kernel that has a ``gamma`` (or for an input collection),
        the grid has ``lam`` only. (``input_kernel_params`` for the structured models.)

    Examples
    --------
    >>> import numpy as np
    >>> from skframe import SketchedKernelRidge
    >>> X = np.array([[0.0], [1.0], [3.0]])
    >>> grid = default_param_grid(SketchedKernelRidge(), X)
    >>> [round(p["gamma"], 4) for p in grid["kernel_params"]][2], len(grid["lam"])
    (0.25, 7)
    """
    grid = {"lam": list(DEFAULT_LAMS)}
    name = kernel_params_name(estimator)
    if name is None or "gamma" not in kernel_parameter_names(estimator):
        return grid
    g0 = median_gamma(X)
    if g0 is None:
        return grid
    own = dict(estimator.get_params(deep=False).get(name) or {})
    return {name: [dict(own, gamma=g0 * f) for f in DEFAULT_GAMMA_FACTORS], "lam": grid["lam"]}


def _check_lams(name, values):
    for v in values:
        try:
            ok = np.isscalar(v) and np.isfinite(float(v)) and float(v) > 0
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise InvalidParameterError(f"param_grid {name!r} contains {v!r}; every lam must be a number > 0, "
                                        "e.g. np.logspace(-8, -2, 7)")


def expand_grid(estimator, param_grid):
    """The candidates of ``param_grid`` in scikit-learn's order (``ParameterGrid``), checked.

    Raises
    ------
    InvalidParameterError
        Empty grid, values that are not a non-empty list, ``lam <= 0``, or a name that is
        neither a parameter of the estimator nor of its kernel (the message lists both).
    """
    if isinstance(param_grid, Mapping):
        grids = [param_grid]
    elif isinstance(param_grid, Sequence) and not isinstance(param_grid, str):
        grids = list(param_grid)
    else:
        raise InvalidParameterError(f"param_grid={param_grid!r} must be a dict of parameter -> list of values "
                                    "(or a list of such dicts), e.g. {'lam': [1e-6, 1e-3]}")
    if not grids or any(isinstance(g, Mapping) and not g for g in grids):
        raise InvalidParameterError("param_grid is empty; give at least one parameter and its values, "
                                    "e.g. {'lam': [1e-6, 1e-3]}, or param_grid=None for the default grid")
    valid = set(estimator.get_params(deep=True))
    params_name = kernel_params_name(estimator)
    for grid in grids:
        if not isinstance(grid, Mapping):
            raise InvalidParameterError(f"param_grid entry {grid!r} is not a dict of parameter -> list of values")
        kernels = grid.get(_kernel_name(params_name), [None]) if params_name else [None]
        kernel_names = set()
        for kernel in kernels:
            kernel_names.update(kernel_parameter_names(estimator, kernel))
        for name, values in grid.items():
            if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray)) \
                    or len(values) == 0:
                raise InvalidParameterError(f"param_grid {name!r}: {values!r} must be a non-empty list of values, "
                                            f"e.g. {name!r}: [{values!r}]")
            if name not in valid and name not in kernel_names:
                own = ", ".join(sorted(n for n in valid if "__" not in n))
                extra = f"; parameters of its kernel: {', '.join(sorted(kernel_names))}" if kernel_names else ""
                raise InvalidParameterError(f"param_grid names {name!r}, which is not a parameter of "
                                            f"{type(estimator).__name__} (valid: {own}{extra})")
            if name == "lam" or name.endswith("__lam"):
                _check_lams(name, values)
    return list(ParameterGrid(grids))


def to_estimator_params(estimator, candidate):
    """The ``set_params`` arguments of a candidate: kernel-parameter shorthand merged into ``kernel_params``."""
    valid = set(estimator.get_params(deep=True))
    params_name = kernel_params_name(estimator)
    out, shorthand = {}, {}
    for name, value in candidate.items():
        (out if name in valid else shorthand)[name] = value
    if shorthand:
        base = out.get(params_name, estimator.get_params(deep=False).get(params_name))
        out[params_name] = {**dict(base or {}), **shorthand}
    return out


def _freeze(value):
    if isinstance(value, Mapping):
        return ("dict", tuple(sorted((str(k), _freeze(v)) for k, v in value.items())))
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_freeze(v) for v in value))
    try:
        hash(value)
    except TypeError:
        return ("id", id(value))
    return ("value", type(value).__name__, value)


def group_candidates(candidates, lam_name="lam"):
    """Candidates grouped by every parameter except ``lam_name``, in order of first appearance.

    Returns
    -------
    list of (params, indices, lams)
        ``params`` the group's parameters without λ, ``indices`` its candidates, ``lams`` their λ
        (None for a candidate without one, or when ``lam_name`` is None: every candidate alone).
    """
    groups, where = [], {}
    for i, cand in enumerate(candidates):
        if lam_name is None or lam_name not in cand:
            groups.append((dict(cand), [i], [None]))
            continue
        rest = {k: v for k, v in cand.items() if k != lam_name}
        key = _freeze(rest)
        if key not in where:
            where[key] = len(groups)
            groups.append((rest, [], []))
        g = groups[where[key]]
        g[1].append(i)
        g[2].append(float(cand[lam_name]))
    return groups
