"""Step 4 of the fit core: the sketch size ("auto" or explicit, clamped to n with a warning)."""

from __future__ import annotations

import copy
import math
import warnings

import numpy as np

from skframe.exceptions import SketchSizeWarning
from skframe.plugin.loader import get_plugin_registry
from skframe.plugin.registry import build_component
from skframe.plugin.specs import ComponentSpec
from skframe.plugin.tags import get_tags

__all__ = ["auto_sketch_size", "choose_sketch_size"]

AUTO_FACTOR = 2.0
AUTO_MIN_SIZE = 100
AUTO_MAX_SIZE = 1000
AUTO_MEMORY_BYTES = 1 << 30  # default budget of the auto rule when ComputeOptions.memory_budget is None


# ----------------------------------------------------------------------------- sketch size
def auto_sketch_size(n, *, memory_budget=None, itemsize=8):
    """The ``"auto"`` sketch size for n training points, and the rule that gave it.

    ``m = ceil(2 sqrt(n))`` clamped to ``[min(n, 100), min(n, 1000)]``: the order
    ``sqrt(n)`` (up to a log factor) under which Nyström sub-sampling keeps the learning
    rate of the exact estimator in the worst case (Rudi, Camoriano and Rosasco, "Less is
    More: Nyström Computational Regularization", NeurIPS 2015), the order El Ahmad et al.
    ("Fast Kernel Methods for Generic Lipschitz Losses via p-Sparsified Sketches", TMLR
    2023) use for p-sparsified sketches too. The size is then capped so that the n x m
    blocks of the fit (about three of them) stay within ``memory_budget`` bytes (1 GiB
    when None). The rule reads n only: it costs nothing and is reproducible.

    >>> auto_sketch_size(50)[0], auto_sketch_size(4000)[0], auto_sketch_size(10**6)[0]
    (50, 127, 44)
    """
    n = int(n)
    budget = AUTO_MEMORY_BYTES if memory_budget is None else int(memory_budget)
    rule = math.ceil(AUTO_FACTOR * math.sqrt(n))
    m = min(max(rule, min(n, AUTO_MIN_SIZE)), min(n, AUTO_MAX_SIZE))
    cap = max(1, budget // (3 * max(n, 1) * itemsize))
    text = f"auto: ceil({AUTO_FACTOR:g} sqrt(n)) in [min(n, {AUTO_MIN_SIZE}), min(n, {AUTO_MAX_SIZE})]"
    if cap < m:
        m = cap
        text += f", capped by the memory budget ({budget} bytes)"
    return max(1, int(m)), text


def choose_sketch_size(sketch_size, n, *, feature_map=False, memory_budget=None, param="sketch_size"):
    """The integer sketch size m and ``{"size_rule": ...}`` for ``sketch_info_``.

    ``"auto"`` (or None) applies :func:`auto_sketch_size`; an explicit size larger than
    ``n`` is clamped to ``n`` with a :class:`SketchSizeWarning` (not for explicit feature
    maps such as random Fourier features, whose number of features may exceed n).
    """
    if sketch_size is None or (isinstance(sketch_size, str) and sketch_size.strip().lower() == "auto"):
        m, rule = auto_sketch_size(n, memory_budget=memory_budget)
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
