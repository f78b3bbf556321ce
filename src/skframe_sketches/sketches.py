"""Sketching distributions, all as ``R = S_mix @ S_sub``.

Each class stores its parameters in ``__init__`` (validated there, nothing
random), and ``draw(n, rng)`` returns a :class:`skframe.core.sketching.SketchMatrix`.
All sketches are isometries in expectation: ``E[R^T R] = I_n``. The
p-sparsified sketches are those of El Ahmad et al., Fast Kernel Methods for
Generic Lipschitz Losses via p-Sparsified Sketches, TMLR 2023; the others are
surveyed in chapter 2 of T. El Ahmad, Learning Deep Kernel Networks: Application to
Efficient and Robust Structured Prediction, PhD thesis, Institut Polytechnique de Paris, 2024.

Data-dependent sketches (leverage scores) touch the training inputs only through
:func:`skframe.contract.collections.n_items` and :func:`skframe.contract.collections.take`, so they
accept any :class:`skframe.contract.collections.InputCollection`.
"""

from __future__ import annotations

import numpy as np

from skframe.plugin.api import (
    Interval,
    InvalidParameterError,
    SketchMatrix,
    SketchTags,
    from_entries,
    get_tags,
    kernel_prepare,
)
from skframe.plugin.toolbox import list_components, n_items, nystrom_leverage_scores

__all__ = [
    "SubSampleSketch",
    "LeverageScoreSketch",
    "GaussianSketch",
    "PSparsifiedSketch",
    "PSRSketch",
    "PSGSketch",
    "AccumulationSketch",
    "CountSketch",
    "RandomFourierFeatures",
]

from skframe_sketches._base import _BaseSketch, _check_size
from skframe_sketches._psparsified import PSGSketch, PSparsifiedSketch, PSRSketch


class SubSampleSketch(_BaseSketch):
    """Uniform (or given-probability) sub-sampling, i.e. Nyström: rows ``e_{i_j}^T / sqrt(m p_i)``.

    Parameters
    ----------
    size : int
        Number of sampled points m.
    replace : bool, default False
        Sample with replacement (probabilities ``p_i``) or without (uniform, each
        point kept with probability m/n and scaled by ``sqrt(n/m)``).
    """

    name = "subsample"

    _parameter_constraints = {**_BaseSketch._parameter_constraints, "replace": ["boolean"]}

    def __init__(self, size=100, replace=False):
        self.replace = replace
        super().__init__(size)

    def draw(self, n, rng, *, X=None, kernel=None):
        m = self.size
        if not self.replace:
            _check_size(m, n)
            idx = np.sort(rng.choice(n, size=m, replace=False))
            return from_entries(n, m, np.arange(m), idx, np.full(m, np.sqrt(n / m)), {"name": self.name, **self.params})
        idx = rng.integers(0, n, size=m)
        return from_entries(n, m, np.arange(m), idx, np.full(m, np.sqrt(n / m)), {"name": self.name, **self.params})


class LeverageScoreSketch(_BaseSketch):
    """Sub-sampling with approximate ridge leverage scores (with replacement).

    The scores ``l_i(lam) = [K (K + n lam I)^{-1}]_ii`` are approximated from a
    uniform Nyström factor ``K ~ F F^T`` of ``n_approx`` columns:
    ``l_i ~ F_i (F^T F + n lam I)^{-1} F_i^T + (K_ii - ||F_i||^2) / (n lam)``.
    Row j of R is ``e_{i_j}^T / sqrt(m p_{i_j})`` with ``p = l / sum(l)``.

    Parameters
    ----------
    size : int
    lam : float, default 1e-3
        Ridge parameter of the leverage scores.
    n_approx : int, optional
        Columns of the uniform pre-sample (default ``min(n, 2 * size)``).
    """

    name = "leverage"

    _parameter_constraints = {**_BaseSketch._parameter_constraints,
                              "lam": [Interval("real", 0, None, closed="neither")],
                              "n_approx": [Interval("int", 1, None), None]}

    def __init__(self, size=100, lam=1e-3, n_approx=None):
        self.lam, self.n_approx = lam, n_approx
        super().__init__(size)

    def scores(self, X, kernel, rng):
        """Approximate ridge leverage scores of the items of X (array, sparse matrix or InputCollection).

        The kernel is prepared on X first (:func:`skframe.contract.protocols.kernel_prepare`); the scores are
        skframe's one routine, :func:`skframe.core.leverage.nystrom_leverage_scores`, kept >= 1e-300.
        """
        kernel = kernel_prepare(kernel, X)
        q = min(n_items(X), self.n_approx or 2 * self.size)
        return np.clip(nystrom_leverage_scores(kernel, X, self.lam, q, rng), 1e-300, None)

    def draw(self, n, rng, *, X=None, kernel=None):
        if X is None or kernel is None:
            raise InvalidParameterError("the leverage-score sketch needs the training data and the kernel to draw")
        lev = self.scores(X, kernel, rng)
        p = lev / lev.sum()
        m = self.size
        idx = rng.choice(n, size=m, replace=True, p=p)
        return from_entries(n, m, np.arange(m), idx, 1.0 / np.sqrt(m * p[idx]), {"name": self.name, **self.params})


class GaussianSketch(_BaseSketch):
    """Dense Gaussian sketch, entries i.i.d. N(0, 1/m); s' = n (the kernel is evaluated everywhere)."""

    name = "gaussian"

    def draw(self, n, rng, *, X=None, kernel=None):
        m = self.size
        _check_size(m, n)
        mix = rng.standard_normal((m, n)) / np.sqrt(m)
        return SketchMatrix(n=n, indices=np.arange(n), mix=mix, info={"name": self.name, **self.params})


class AccumulationSketch(_BaseSketch):
    """Accumulation sketch (Chen and Yang, Accumulations of Projections: A Unified Framework
    for Random Sketches in Kernel Ridge Regression, AISTATS 2021).

    The sum of ``n_terms`` independent signed sub-sampling sketches, entries
    ``± 1 / sqrt(n_terms * m * p_i)`` with uniform ``p_i = 1/n``. It interpolates
    between Nyström (``n_terms=1``) and a Gaussian sketch (``n_terms -> inf``).

    Parameters
    ----------
    size : int
    n_terms : int, default 20
        The number m' of accumulated sub-sampling sketches.
    """

    name = "accumulation"

    _parameter_constraints = {**_BaseSketch._parameter_constraints, "n_terms": [Interval("int", 1, None)]}

    def __init__(self, size=100, n_terms=20):
        self.n_terms = n_terms
        super().__init__(size)

    def draw(self, n, rng, *, X=None, kernel=None):
        m, t = self.size, self.n_terms
        rows = np.tile(np.arange(m), t)
        cols = rng.integers(0, n, size=m * t)
        scale = np.sqrt(n / (t * m))
        values = np.where(rng.random(m * t) < 0.5, -scale, scale)
        return from_entries(n, m, rows, cols, values, {"name": self.name, **self.params})


class CountSketch(_BaseSketch):
    """CountSketch (Clarkson and Woodruff, STOC 2013): column j of R has a single ±1 in a uniformly drawn row.

    Every training point is used: s' = n.
    """

    name = "countsketch"

    def draw(self, n, rng, *, X=None, kernel=None):
        m = self.size
        _check_size(m, n)
        rows = rng.integers(0, m, size=n)
        values = np.where(rng.random(n) < 0.5, -1.0, 1.0)
        return from_entries(n, m, rows, np.arange(n), values, {"name": self.name, **self.params})


class _FourierMap:
    """``z(x) = sqrt(2/m) cos(x @ W + b)`` with frequencies ``W`` of shape (d, m)."""

    def __init__(self, W, b):
        self.W = W
        self.b = b

    @property
    def rank(self):
        return int(self.W.shape[1])

    def transform(self, X, chunk_rows=None):
        """Features of shape (len(X), m); X dense or sparse."""
        Z = X @ self.W
        Z = np.asarray(Z) + self.b
        np.cos(Z, out=Z)
        Z *= np.sqrt(2.0 / self.W.shape[1])
        return Z


def _kernels_with_sampler():
    """Registered kernel names whose class declares a spectral sampler in its tags."""
    return sorted(c.name for c in list_components("kernel") if get_tags(c.factory, "kernel").spectral_sampler)


class RandomFourierFeatures(_BaseSketch):
    """Random Fourier features (Rahimi and Recht, Random Features for Large-Scale Kernel Machines, NeurIPS 2007).

    A data-independent feature map ``z(x) = sqrt(2/m) cos(W^T x + b)``: the ``m``
    frequencies come from the kernel's ``spectral_sampler(d, m, rng)`` (Gaussian:
    ``N(0, 2 gamma I)``; Laplacian: Cauchy of scale gamma) and ``b ~ U[0, 2 pi]``.
    Not of the ``R = S_mix S_sub`` form: models call :meth:`fit_features`.

    Parameters
    ----------
    size : int, default=100
        Number of features m.
    """

    name = "rff"
    __skframe_tags__ = SketchTags(feature_map=True)

    def draw(self, n, rng, *, X=None, kernel=None):
        raise InvalidParameterError("random Fourier features are a feature map, not a sketch matrix; use fit_features")

    def fit_features(self, kernel, X, rng):
        """Draw the frequencies for ``kernel`` (prepared on ``X``) and return a map with ``transform(X)``.

        Raises
        ------
        skframe.exceptions.InvalidParameterError
            When the kernel has no ``spectral_sampler`` (it is not shift-invariant or does
            not say so); the message names the registered kernels that have one.
        """
        kernel = kernel_prepare(kernel, X)
        sampler = kernel.spectral_sampler if get_tags(kernel, "kernel").spectral_sampler else None
        if sampler is None:
            raise InvalidParameterError(
                f"random Fourier features need a kernel with a spectral_sampler (a shift-invariant kernel), but "
                f"{kernel!r} has none; use one of: {', '.join(_kernels_with_sampler())}, or another sketch"
            )
        d, m = X.shape[1], self.size
        W = np.asarray(sampler(d, m, rng), dtype=np.float64)
        if W.shape != (m, d):
            raise InvalidParameterError(
                f"{type(kernel).__name__}.spectral_sampler({d}, {m}, rng) returned shape {W.shape}; expected ({m}, {d})"
            )
        b = rng.uniform(0, 2 * np.pi, size=m)
        return _FourierMap(np.ascontiguousarray(W.T), b)
