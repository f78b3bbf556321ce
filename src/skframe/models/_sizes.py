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

__all__ = ["auto_sketch_size", "choose_sketch_size", "effective_dimension", "feature_spectrum", "spectrum_rows",
           "saturation_spectrum",
           "SATURATION_ROWS"]

#: rows (evenly spaced) on which :func:`effective_dimension` estimates the features' covariance
SATURATION_ROWS = 4096
#: features above which the effective dimension is not computed (an r x r eigendecomposition per fit)
SATURATION_MAX_FEATURES = 2000


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


# ----------------------------------------------------------------------------- saturation
def spectrum_rows(Z, *, share=0.1, free_flops=2e7):
    """The rows on which a fit estimates its features' spectrum, or 0 to skip it: at most
    :data:`SATURATION_ROWS`, at least twice the r features, about a twentieth of the n rows (every row of a small
    problem), and only when the
    estimate (``rows r^2 + r^3`` multiply-adds) costs at most ``share`` of the fit's own ``n r^2`` products (or
    under ``free_flops``, a few milliseconds): the diagnostic never makes a fit noticeably slower."""
    if not isinstance(Z, np.ndarray) or Z.ndim != 2 or Z.shape[1] > SATURATION_MAX_FEATURES:
        return 0
    n, r = Z.shape
    if float(min(n, SATURATION_ROWS)) * r * r + float(r) ** 3 <= free_flops:  # small: every row (up to the cap)
        return int(min(n, SATURATION_ROWS))
    rows = int(min(SATURATION_ROWS, n, max(2 * r, n // 20)))
    cost = float(rows) * r * r + float(r) ** 3
    return rows if cost <= max(share * float(n) * r * r, free_flops) else 0


def saturation_spectrum(Z, sample_weight=None):
    """The eigenvalues a fit's saturation is computed from (:func:`feature_spectrum` on :func:`spectrum_rows`
    rows), or None where that estimate is skipped."""
    rows = spectrum_rows(Z)
    return feature_spectrum(Z, sample_weight, max_rows=rows) if rows else None


def feature_spectrum(Z, sample_weight=None, *, max_rows=SATURATION_ROWS):
    """Eigenvalues of the (weighted) feature covariance ``Z^T diag(w) Z / sum(w)``, or None (see
    :func:`effective_dimension`); they do not depend on lam, so a lam path computes them once."""
    if not isinstance(Z, np.ndarray) or Z.ndim != 2:
        return None
    n, r = Z.shape
    if n == 0 or r == 0 or r > SATURATION_MAX_FEATURES:
        return None
    rows = np.unique(np.linspace(0, n - 1, int(max_rows)).astype(np.intp)) if n > max_rows else None
    Zs = Z if rows is None else Z[rows]
    w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    if w is not None and rows is not None:
        w = w[rows]
    total = float(Zs.shape[0]) if w is None else float(w.sum())
    if not total > 0:
        return None
    A = np.asarray(Zs * np.sqrt(w)[:, None] if w is not None else Zs, dtype=np.float64)
    G = A.T @ A if r <= A.shape[0] else A @ A.T  # the same non-zero eigenvalues
    s = np.clip(np.linalg.eigvalsh(0.5 * (G + G.T)), 0.0, None) / total
    return s if s.size == r else np.concatenate([s, np.zeros(r - s.size)])


def effective_dimension(Z, lam, sample_weight=None, *, max_rows=SATURATION_ROWS, spectrum=None):
    """``(d_eff, saturation)`` of the features ``Z`` (n x r) at ``lam``, or None when it is not computed.

    ``d_eff = tr(C (C + lam I)^{-1}) = sum_k s_k / (s_k + lam)``, the effective dimension of the
    (weighted) feature covariance ``C = Z^T diag(w) Z / sum(w)`` with eigenvalues ``s_k`` (Rudi, Camoriano
    and Rosasco, "Less is More: Nystrom Computational Regularization", NeurIPS 2015: a sketch of m rows
    keeps the exact estimator's accuracy when m is of the order of the effective dimension of the kernel at
    lam, up to a log factor). ``saturation = d_eff / r``: near 1, every direction of the sketch is fitted
    and the sketch, not ``lam``, regularises the model (a larger ``sketch_size`` may fit better); well below
    1, the sketch resolves the spectrum at this ``lam``. The covariance is estimated on at most
    ``max_rows`` evenly spaced rows; ``spectrum``: its eigenvalues from :func:`feature_spectrum` (then
    ``Z`` is not read). None for features that are not a NumPy array, more than
    ``SATURATION_MAX_FEATURES`` columns, or a ``lam`` that is not a positive number.

    >>> Z = np.eye(4)                       # four rows, covariance I / 4
    >>> d, sat = effective_dimension(Z, 0.25)
    >>> round(d, 6), round(sat, 6)          # 4 x (1/4) / (1/4 + 1/4)
    (2.0, 0.5)
    """
    try:
        lam = float(lam)
    except (TypeError, ValueError):
        return None
    if not np.isfinite(lam) or lam <= 0:
        return None
    s = feature_spectrum(Z, sample_weight, max_rows=max_rows) if spectrum is None else spectrum
    if s is None:
        return None
    d_eff = float(np.sum(s / (s + lam)))
    return d_eff, d_eff / s.size
