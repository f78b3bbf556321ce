"""A saturated ``"auto"`` sketch grown once before the solve (the classifiers' fits).

At the fit's lam the effective dimension of the sketched features, ``d_eff = sum_k s_k / (s_k + lam)``
(:func:`skframe.models._sizes.effective_dimension`), says how many of the m sketch directions the model
uses. Near m (saturation ``d_eff / m`` above :data:`GROW_SATURATION`) the sketch, not lam, regularises the
model: Rudi, Camoriano and Rosasco ("Less is More: Nystrom Computational Regularization", NeurIPS 2015) keep
the exact estimator's accuracy with m of the order of the effective dimension, which a saturated sketch
cannot measure (it is capped by m). An ``"auto"`` sketch of an estimator that asks for it
(``_grows_saturated_sketch``) is then drawn again, once, :data:`GROW_FACTOR` times larger, within the
auto rule's cap (``min(n, 1000)``) and only where the new plan still keeps the features in memory. The cost
is one more feature map and the spectrum estimate the fit reports anyway; a sketch that is not
saturated, a given size, a streamed fit or ``lam="auto"`` change nothing.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from skframe.compute.plan_rules import AUTO_MAX
from skframe.models._core import size_and_resolve_sketch
from skframe.models._sizes import effective_dimension, saturation_spectrum

__all__ = ["GROW_FACTOR", "GROW_SATURATION", "grow_saturated"]

#: saturation of the "auto" sketch above which it is grown
GROW_SATURATION = 0.9
#: the grown sketch's size over the first one (within the auto rule's cap)
GROW_FACTOR = 4


def _smallest_lam(lam):
    """The smallest lam the fit solves (a number or a sequence), or None (``"auto"``, anything else)."""
    try:
        values = np.asarray(lam, dtype=float).ravel()
    except (TypeError, ValueError):
        return None
    return float(values.min()) if values.size and np.all(np.isfinite(values)) and values.min() > 0 else None


def grow_saturated(fit):
    """Grow the sketch of ``fit`` (a :class:`skframe.models._fit.Fit` whose representation was just built) when
    it is saturated at the fit's lam; True when it was grown (the caller builds the representation again).

    Otherwise the spectrum computed for the decision is kept for the fit's report (``fit._spectrum``)."""
    from skframe.models._fit import plan_for  # the fit's own planning (a cycle at import)

    est, plan, rep = fit.estimator, fit.plan, fit._rep
    lam = _smallest_lam(est.lam)
    if (not getattr(est, "_grows_saturated_sketch", False) or not isinstance(est.sketch, str) or plan.streams
            or plan.sketch_size is None or not plan.size_rule.startswith("auto") or lam is None
            or not isinstance(rep.Z, np.ndarray)):
        return False
    m = int(plan.sketch_size)
    target = min(fit.n, AUTO_MAX, GROW_FACTOR * m)
    spectrum = saturation_spectrum(rep.Z, fit.sample_weight) if target > m else None
    if spectrum is None:
        return False
    d_eff, saturation = effective_dimension(None, lam, spectrum=spectrum)
    if saturation <= GROW_SATURATION:
        fit._spectrum = (spectrum,)  # reported as is
        return False
    grown = plan_for(est, fit.X, fit.Y.shape[1], fit.kernel, fit.recipe.loss, sketch_size=target)
    if grown.streams:
        return False
    rule = (f"{plan.size_rule}; grown {GROW_FACTOR}x to {target} (at most min(n, {AUTO_MAX})): saturation "
            f"{saturation:.2f} > {GROW_SATURATION} at lam={lam:g} with m={m}")
    fit.plan = replace(grown, size_rule=rule)
    fit.options = fit.plan.compute_options()
    fit.sketch, fit.sketch_spec, _ = size_and_resolve_sketch(est.sketch, target, est.sketch_params, fit.n)
    fit.size_info = {"size_rule": rule, "grown_from": m}
    fit._plan_dict = None
    return True
