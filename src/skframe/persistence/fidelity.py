"""A saved component computes what the fitted one did: the rule :func:`skframe.save` and the conformance kit share.

A model file stores each component as its registered name and parameters
(:func:`skframe.contract.registry.spec_of`), and loading rebuilds it from them. Whether that rebuilds the same
component is decided here, once: :func:`round_trip_problem` evaluates the original and the rebuilt component
on a small deterministic probe and says what differs. The probes, each a few rows:

* kernels: the Gram block of a few rows (of the model's own training rows ``X_fit_`` where the model
  stores them, else a fixed random block as wide as the model's inputs);
* sketches of at most 64 rows: a draw (or random features) with a fixed seed;
* losses: values and gradients on fixed predictions and targets;
* output matrices: the matrix of fixed targets.

Solvers and decoders have no cheap probe and are not evaluated. A component whose probe fails on the
original object is not judged (the probe does not fit it); one whose rebuilt copy fails, or computes other
values (beyond a relative ``1e-12``), does not round-trip. :func:`skframe.save` then refuses the model, and the
kit's ``params round-trip`` and ``save and load`` properties fail, with the same reason and :data:`ROUND_TRIP_FIX`.
"""

from __future__ import annotations

import numpy as np

from skframe.contract.collections import is_collection, n_items, take
from skframe.contract.protocols import kernel_block, kernel_prepare
from skframe.contract.registry import get_component
from skframe.contract.tags import get_tags
from skframe.exceptions import PersistenceError

__all__ = ["ROUND_TRIP_FIX", "round_trip_problem", "probe_data", "loss_probe_data", "refuse_round_trip"]

#: what a component must do to be saved (every message about a component that does not round-trip ends with it)
ROUND_TRIP_FIX = ("store the constructor's arguments as attributes of the same names, or give the component a "
                  "`params` property returning them")
#: rows of a kernel's probe block
PROBE_ROWS = 5
_RTOL = 1e-12


def probe_data(kind, states=()):
    """The kernel probe's inputs found in the model around a component, innermost state last; None: default.

    The first :data:`PROBE_ROWS` rows of ``X_fit_`` (the model's training rows the kernel was fitted on),
    else the input width ``n_features_in_``.
    """
    if kind != "kernel":
        return None
    for state in reversed(states):
        X = state.get("X_fit_")
        if is_collection(X) or (hasattr(X, "shape") and len(X.shape) == 2 and X.shape[0] > 0):
            return take(X, np.arange(min(n_items(X), PROBE_ROWS)))
        width = state.get("n_features_in_")
        if isinstance(width, (int, np.integer)) and not isinstance(width, bool) and 0 < width <= 100_000:
            return int(width)
    return None


def loss_probe_data(rng, tags, n, d):
    """Predictions ``F`` (n x d) and targets ``Y`` a loss of these tags accepts: ±1 for classification, one +1
    per row for ``one_of_k``, Gaussian otherwise; ``d`` is the number of levels of a quantile loss."""
    d = len(tags.quantiles) if tags.quantiles is not None else d
    F = rng.standard_normal((n, d))
    if tags.one_of_k:  # one +1 per row (the class), -1 elsewhere
        Y = -np.ones((n, d))
        Y[np.arange(n), rng.integers(0, d, size=n)] = 1.0
        return F, Y
    Y = np.where(rng.random((n, d)) < 0.5, -1.0, 1.0) if tags.classification else rng.standard_normal((n, d))
    return F, Y


def _rows(data):
    if data is None or isinstance(data, (int, np.integer)):
        width = 3 if data is None else int(data)
        return np.random.default_rng(0).uniform(size=(PROBE_ROWS, width))
    return data


def _kernel_outcome(kernel, data):
    P = _rows(data)
    return (kernel_block(kernel_prepare(kernel, P), P, P),)


def _sketch_outcome(sketch, data):
    size = getattr(sketch, "size", None)
    size = int(size) if isinstance(size, (int, np.integer)) and not isinstance(size, bool) else 8
    if size > 64:  # not a cheap probe (a leverage-score draw grows with the square of its points)
        return None
    n = max(32, size + 8)
    X = np.random.default_rng(0).uniform(size=(n, 3))
    kernel = get_component("kernel", "gaussian", gamma=1.0)
    if get_tags(sketch, "sketch").feature_map:
        return (np.asarray(sketch.fit_features(kernel, X, np.random.default_rng(0)).transform(X)),)
    R = sketch.draw(n, np.random.default_rng(0), X=X, kernel=kernel)
    mix = R.mix.toarray() if hasattr(R.mix, "toarray") else R.mix
    return np.asarray(R.indices), np.asarray(mix)


def _loss_outcome(loss, data):
    F, Y = loss_probe_data(np.random.default_rng(0), get_tags(loss, "loss"), 6, 2)
    return np.asarray(loss.value(F, Y)), np.asarray(loss.gradient(F, Y))


def _output_matrix_outcome(om, data):
    Y = np.random.default_rng(0).standard_normal((12, 3))
    return (np.asarray(om.matrix(3, Y=Y, quantiles=(0.25, 0.5, 0.75))),)


_OUTCOMES = {"kernel": _kernel_outcome, "sketch": _sketch_outcome, "loss": _loss_outcome,
             "output_matrix": _output_matrix_outcome}


def _largest_difference(a, b):
    """None when the outcomes agree (relative ``1e-12``), else the largest difference (inf for other shapes)."""
    if len(a) != len(b):
        return float("inf")
    worst = 0.0
    for x, y in zip(a, b):
        x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
        if x.shape != y.shape:
            return float("inf")
        with np.errstate(invalid="ignore"):
            diff = np.where((x == y) | (np.isnan(x) & np.isnan(y)), 0.0, np.abs(x - y))
        scale = max(1.0, float(np.max(np.abs(x[np.isfinite(x)]), initial=0.0)))
        if not np.all(diff <= _RTOL * scale):
            worst = max(worst, float(np.max(np.where(np.isnan(diff), np.inf, diff))))
    return worst or None


def _short(value):
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape}"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _same(a, b):
    if a is b:
        return True
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape and \
            bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc" and b.dtype.kind in "fc"))
    try:
        return bool(a == b) or (a != a and b != b)  # NaN == NaN
    except Exception:  # noqa: BLE001 - objects without a truth value of ==: compared by their repr
        return repr(a) == repr(b)


def _changed_attributes(original, rebuilt):
    """``"gamma=0.05 was rebuilt as 1.0"`` for each attribute that differs (three at most)."""
    before, after = getattr(original, "__dict__", {}), getattr(rebuilt, "__dict__", {})
    out = []
    for key, value in before.items():
        if key not in after:
            out.append(f"{key}={_short(value)} is missing once rebuilt")
        elif not _same(value, after[key]):
            out.append(f"{key}={_short(value)} was rebuilt as {_short(after[key])}")
    return out[:3]


def round_trip_problem(kind, original, rebuilt, data=None):
    """What differs between a component and its copy rebuilt from the saved name and parameters; None if nothing.

    Parameters
    ----------
    kind : str
        The component kind.
    original, rebuilt : object
        The component, and the one rebuilt from its :class:`~skframe.contract.specs.ComponentSpec`.
    data : array, InputCollection or int, optional
        A kernel's probe rows (see :func:`probe_data`) or input width; default a fixed block of width 3.

    Returns
    -------
    str or None
        E.g. ``"gamma=0.05 was rebuilt as 1.0, so the rebuilt one computes other values (largest difference
        0.62 on a probe)"``; None when the rebuilt component computes the same values on the probe, or when the
        kind has no probe or the probe does not fit the original.
    """
    outcome = _OUTCOMES.get(kind)
    if outcome is None:
        return None
    try:
        expected = outcome(original, data)
    except Exception:  # noqa: BLE001 - the probe does not fit this component: it is not judged
        return None
    if expected is None:
        return None
    changed = ", ".join(_changed_attributes(original, rebuilt))
    changed = f"{changed}, so the rebuilt one" if changed else "the rebuilt one"
    try:
        got = outcome(rebuilt, data)
    except Exception as exc:  # noqa: BLE001 - a rebuilt component that fails where the original worked
        return f"{changed} fails where the saved one worked ({type(exc).__name__}: {str(exc)[:120]})"
    worst = _largest_difference(expected, got)
    if worst is None:
        return None
    return f"{changed} computes other values (largest difference {worst:.3g} on a probe)"


def refuse_round_trip(path, spec, component, problem):
    """The one :class:`~skframe.exceptions.PersistenceError` of a save whose component does not round-trip.

    Its attribute ``problem`` is the reason alone (what :func:`round_trip_problem` said).
    """
    err = PersistenceError(
        f"the model was not saved to {path!r} (left unchanged): its {spec.kind.replace('_', ' ')} {spec.name!r} "
        f"({type(component).__name__}) would load as another one: {problem}; {ROUND_TRIP_FIX}"
    )
    err.problem = problem
    return err
