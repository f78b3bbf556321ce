"""The sketch check: draws (or feature maps) of the declared size, determined by the generator."""

from __future__ import annotations

import numpy as np

from skframe.contract.collections import n_items
from skframe.contract.registry import get_component
from skframe.core.sketch_matrix import SketchMatrix
from skframe.plugin.checks._common import (
    _checking,
    _close,
    _copies,
    _dense,
    _rebuilt_alike,
)

# ----------------------------------------------------------------------------- sketches
#: what the sketch check evaluates (besides the properties of every kind)
PROPERTIES = ("tag feature_map", "fit_features", "draw", "size", "reproducible")


def _same(a, b):
    """Two draws (SketchMatrix) or two feature arrays are equal."""
    if isinstance(a, SketchMatrix) and isinstance(b, SketchMatrix):
        return np.array_equal(a.indices, b.indices) and _close(_dense(a.mix), _dense(b.mix), 0.0)
    return _close(a, b, 0.0)


def check_sketch(sketch, n=60, *, params=None, X=None, kernel=None, rng=0):
    """Check a sketch (or sketch class, built with ``params``, e.g. ``{"size": 10}``).

    Parameters
    ----------
    sketch : sketch object or class
    n : int, default 60
        Number of training points of the draws (``size`` must not exceed it).
    X : array or InputCollection, optional
        Training inputs for data-dependent sketches; default uniform in [0, 1)^3.
    kernel : kernel, optional
        The kernel given to ``draw`` / ``fit_features``; default the registered ``"gaussian"``.
    rng : int or numpy.random.Generator, default 0

    Returns
    -------
    SketchTags
    """
    with _checking("sketch", sketch, params, rng, PROPERTIES) as (sketch, fail, tags, gen):
        X = gen.uniform(size=(n, 3)) if X is None else X
        n = n_items(X)
        kernel = get_component("kernel", "gaussian", gamma=1.0) if kernel is None else kernel
        size = getattr(sketch, "size", None)
        seed = int(gen.integers(2**31))

        def outcome(obj):
            if tags.feature_map:
                return np.asarray(obj.fit_features(kernel, X, np.random.default_rng(seed)).transform(X))
            return obj.draw(n, np.random.default_rng(seed), X=X, kernel=kernel)

        if tags.feature_map:
            fail.require(callable(getattr(sketch, "fit_features", None)), "tag feature_map",
                         "the tags say feature_map but there is no fit_features(kernel, X, rng)",
                         "implement fit_features")
            first = outcome(sketch)
            m = size if isinstance(size, (int, np.integer)) else first.shape[1]
            fail.require(first.shape == (n, m) and np.all(np.isfinite(first)), "fit_features",
                         f"transform(X) gave shape {first.shape}",
                         f"return finite features of shape (len(X), size) = ({n}, {m})")
        else:
            if not callable(getattr(sketch, "draw", None)):
                fail("draw", "no draw(n, rng, *, X=None, kernel=None)",
                     "implement draw, or declare SketchTags(feature_map=True) and fit_features")
            first = outcome(sketch)
            if not isinstance(first, SketchMatrix):
                fail("draw", f"draw returned {type(first).__name__}",
                     "return a SketchMatrix (skframe.plugin.api.SketchMatrix or from_entries)")
            fail.require(first.n == n, "draw", f"the sketch has n={first.n} columns for {n} points",
                         "draw over the n given points")
            if isinstance(size, (int, np.integer)):
                fail.require(first.m == size, "size", f"size={size} but the draw has {first.m} rows",
                             "draw `size` rows")
            mix = _dense(first.mix)
            fail.require(np.all(np.isfinite(mix)) and np.abs(mix).sum() > 0, "draw",
                         "the mixing matrix is zero or not finite", "draw finite, non-zero entries")
        fail.require(_same(first, outcome(sketch)), "reproducible", "two draws with the same seed differ",
                     "draw every random number from the rng argument, never from global state")
        for other, prop, how in _copies(fail, sketch, "sketch"):
            _rebuilt_alike(fail, _same(outcome(other), first), prop, f"the sketch {how} draws differently")
    return tags


check_sketch.properties = PROPERTIES  # read by skframe.plugin.checks.PROPERTIES
