"""Step 4 of the fit core: the sketch size ("auto" or explicit, clamped to n with a warning)."""

from __future__ import annotations

import copy
import warnings

import numpy as np

from skframe.compute.plan_rules import AUTO_RULE_TEXT, auto_size_rule
from skframe.contract.loader import get_plugin_registry
from skframe.contract.registry import build_component
from skframe.contract.specs import ComponentSpec
from skframe.contract.tags import get_tags
from skframe.exceptions import SketchSizeWarning

__all__ = ["auto_sketch_size", "choose_sketch_size"]


# ----------------------------------------------------------------------------- sketch size
def auto_sketch_size(n):
    """The ``"auto"`` sketch size for n training points, and the rule that gave it.

    ``m = ceil(2 sqrt(n))`` clamped to ``[min(n, 100), min(n, 1000)]``
    (:func:`skframe.compute.plan_rules.auto_size_rule`): the order ``sqrt(n)`` (up to a log
    factor) under which Nyström sub-sampling keeps the learning rate of the exact estimator in
    the worst case (Rudi, Camoriano and Rosasco, "Less is More: Nyström Computational
    Regularization", NeurIPS 2015), the order El Ahmad et al. ("Fast Kernel Methods for Generic
    Lipschitz Losses via p-Sparsified Sketches", TMLR 2023) use for p-sparsified sketches too.
    The rule reads n only: it costs nothing and is reproducible. A fit takes its size from its
    execution plan instead, which caps the rule by what the chosen path can hold
    (:func:`skframe.compute.plan.plan_fit`).

    >>> auto_sketch_size(50)[0], auto_sketch_size(4000)[0], auto_sketch_size(10**6)[0]
    (50, 127, 1000)
    """
    return auto_size_rule(n), AUTO_RULE_TEXT


def choose_sketch_size(sketch_size, n, *, feature_map=False, param="sketch_size"):
    """The integer sketch size m and ``{"size_rule": ...}`` for ``sketch_info_``.

    ``"auto"`` (or None) applies :func:`auto_sketch_size`; an explicit size larger than
    ``n`` is clamped to ``n`` with a :class:`SketchSizeWarning` (not for explicit feature
    maps such as random Fourier features, whose number of features may exceed n).
    """
    if sketch_size is None or (isinstance(sketch_size, str) and sketch_size.strip().lower() == "auto"):
        m, rule = auto_sketch_size(n)
        return m, {"size_rule": rule}
    m = int(sketch_size)
    if m > n and not feature_map:
        warnings.warn(
            f"{param}={m} is larger than n_samples={n}; using {param}={n} (set {param}='auto' or a size <= "
            "n_samples to silence this warning)",
            SketchSizeWarning,
            stacklevel=3,
        )
        return n, {"size_rule": f"given ({m}), clamped to n_samples={n}"}
    return m, {"size_rule": "given"}


def _is_feature_map_name(name):
    """True when the registered sketch ``name`` is an explicit feature map (its class's tags say so)."""
    comp = get_plugin_registry().lookup("sketch", name)
    return comp is not None and get_tags(comp.factory, "sketch").feature_map


def _clamp_sketch_object(sketch, spec, n, param):
    """A sketch object whose ``size`` exceeds n: a copy of size n (the user's object is not modified)."""
    size = getattr(sketch, "size", None)
    if not isinstance(size, (int, np.integer)) or size <= n or get_tags(sketch, "sketch").feature_map:
        return sketch, spec, {"size_rule": "given"}
    m, info = choose_sketch_size(int(size), n, param=param)
    if spec is not None:
        spec = ComponentSpec(spec.kind, spec.name, dict(spec.params, size=m))
        return build_component(spec), spec, info
    clone = copy.copy(sketch)
    clone.size = m
    return clone, spec, info
