"""A saturated ``"auto"`` sketch grown before the features are built (the classifiers' fits).

At the fit's lam the effective dimension of m sketched features, ``d_eff = sum_k s_k / (s_k + lam)``
(:func:`skframe.models._sizes.effective_dimension`), says how many of the m directions the model uses. Near m
(saturation ``d_eff / m`` above :data:`GROW_SATURATION`) the sketch, not lam, regularises the model: Rudi,
Camoriano and Rosasco ("Less is More: Nystrom Computational Regularization", NeurIPS 2015) keep the exact
estimator's accuracy with m of the order of the effective dimension, which a saturated sketch cannot measure
(it is capped by m). Before drawing the sketch, a fit of an estimator that asks for it
(``_grows_saturated_sketch``) measures the saturation of a probe: Nystrom features of the auto size m on
:data:`PROBE_ROWS` rows at most (landmarks and rows evenly spaced, no random draw), a few milliseconds beside
the fit. A saturated probe makes the sketch :data:`GROW_FACTOR` times larger, within the auto rule's cap
(``min(n, 1000)``) and only where the plan still keeps the features in memory. A probe that is not saturated,
a given size, a streamed fit or ``lam="auto"`` change nothing.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from skframe.compute.plan_rules import AUTO_MAX
from skframe.contract.collections import is_collection, n_items, take
from skframe.contract.protocols import kernel_block
from skframe.core.linalg import sqrt_pinv_sym
from skframe.core.sparsetools import is_sparse
from skframe.models._core import size_and_resolve_sketch
from skframe.models._sizes import effective_dimension, feature_spectrum

__all__ = ["GROW_FACTOR", "GROW_SATURATION", "PROBE_ROWS", "grow_saturated", "probe_saturation"]

#: saturation of the probe above which the "auto" sketch is grown
GROW_SATURATION = 0.9
#: the grown sketch's size over the auto size (within the auto rule's cap)
GROW_FACTOR = 4
#: rows of the probe at most
PROBE_ROWS = 2000


def _smallest_lam(lam):
    """The smallest lam the fit solves (a number or a sequence), or None (``"auto"``, anything else)."""
    try:
        values = np.asarray(lam, dtype=float).ravel()
    except (TypeError, ValueError):
        return None
    return float(values.min()) if values.size and np.all(np.isfinite(values)) and values.min() > 0 else None


def probe_saturation(kernel, X, m, lam, sample_weight=None, *, rows=PROBE_ROWS):
    """``(d_eff, saturation)`` at ``lam`` of m Nystrom features ``K(R, L) K(L, L)^{-1/2}`` on at most ``rows``
    rows R, the landmarks L and the rows evenly spaced over the n items (weighted by ``sample_weight``); None
    when ``K(L, L)`` has at most 0.9 m numerically non-zero eigenvalues (more landmarks would add little)."""
    n = n_items(X)
    landmarks = np.unique(np.linspace(0, n - 1, int(m)).astype(np.intp))
    picked = np.unique(np.linspace(0, n - 1, int(min(rows, n))).astype(np.intp))
    XL = take(X, landmarks)
    root = sqrt_pinv_sym(np.asarray(kernel_block(kernel, XL, XL)))[0]  # K(L, L)^{-1/2} on its numerical range
    Z = np.asarray(kernel_block(kernel, take(X, picked), XL)) @ root
    w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)[picked]
    if Z.shape[1] <= GROW_SATURATION * len(landmarks):  # the kernel has fewer numerical directions than m
        return None
    spectrum = feature_spectrum(Z, w, max_rows=Z.shape[0])
    return None if spectrum is None else effective_dimension(None, lam, spectrum=spectrum)


def grow_saturated(fit, plan_for):
    """Grow the sketch of ``fit`` (a :class:`skframe.models._fit.Fit`, before its representation is built) when
    the probe at the auto size is saturated at the fit's lam; True when it was grown. ``plan_for``: the fit's
    planner (:func:`skframe.models._fit.plan_for`), called again with the grown size."""
    est, plan = fit.estimator, fit.plan
    lam = _smallest_lam(est.lam)
    if (not getattr(est, "_grows_saturated_sketch", False) or not isinstance(est.sketch, str) or plan.streams
            or plan.sketch_size is None or not plan.size_rule.startswith("auto") or lam is None
            or not (isinstance(fit.X, np.ndarray) or is_sparse(fit.X) or is_collection(fit.X))):  # not on a GPU
        return False
    m = int(plan.sketch_size)
    target = min(fit.n, AUTO_MAX, GROW_FACTOR * m)
    probe = probe_saturation(fit.kernel, fit.X, m, lam, fit.sample_weight) if target > m else None
    if probe is None or probe[1] <= GROW_SATURATION:
        return False
    grown = plan_for(est, fit.X, fit.Y.shape[1], fit.kernel, fit.recipe.loss, sketch_size=target)
    if grown.streams:
        return False
    rule = (f"{plan.size_rule}; grown {GROW_FACTOR}x to {target} (at most min(n, {AUTO_MAX})): a Nystrom probe of "
            f"m={m} on {min(fit.n, PROBE_ROWS)} rows is saturated ({probe[1]:.2f} > {GROW_SATURATION}) at "
            f"lam={lam:g}")
    fit.plan = replace(grown, size_rule=rule)
    fit.options = fit.plan.compute_options()
    fit.sketch, fit.sketch_spec, _ = size_and_resolve_sketch(est.sketch, target, est.sketch_params, fit.n)
    fit.size_info = {"size_rule": rule, "grown_from": m, "probe_saturation": float(probe[1])}
    fit._plan_dict = None
    return True
