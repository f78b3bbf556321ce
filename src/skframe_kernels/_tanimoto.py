"""The Tanimoto and Gaussian-Tanimoto kernels (fingerprints and count vectors); re-exported by ``kernels``."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from skframe.plugin.api import Options, validate_component
from skframe_kernels._base import BANDWIDTH, _Bandwidth, _BaseKernel
from skframe_kernels._gram_ops import _tanimoto_block, gram_loops

#: the Tanimoto formulas, and how to choose
VARIANT = [Options("dot", "minmax")]
VARIANT_HINT = ("choose 'dot' (<x,y> / (|x|^2 + |y|^2 - <x,y>), binary or real vectors) or 'minmax' "
                "(sum min / sum max, non-negative counts)")

__all__ = ["TanimotoKernel", "GaussianTanimotoKernel", "SCALE_SAMPLE"]

#: Rows (evenly spaced) on which the Gaussian-Tanimoto kernel's ``gamma="scale"`` is measured.
SCALE_SAMPLE = 256


class TanimotoKernel(_BaseKernel):
    """Tanimoto (Jaccard) kernel for fingerprints and count vectors.

    ``variant="dot"`` (default): ``k(x, y) = <x, y> / (||x||^2 + ||y||^2 - <x, y>)``,
    the intersection-over-union ``|x & y| / |x | y|`` on binary fingerprints and the
    continuous Tanimoto kernel on real vectors.

    ``variant="minmax"``: ``k(x, y) = sum_k min(x_k, y_k) / sum_k max(x_k, y_k)`` for
    non-negative counts (negative entries raise :class:`~skframe.exceptions.InvalidInputError`).

    Both variants define ``k(0, 0) = 1`` (the only case where the denominator
    vanishes), so the kernel is normalized. Both are positive semi-definite.

    Parameters
    ----------
    variant : {"dot", "minmax"}, default="dot"
        Which formula to use.

    Examples
    --------
    >>> import numpy as np
    >>> TanimotoKernel()(np.array([[1.0, 1.0, 0.0]]), np.array([[1.0, 0.0, 1.0]])).tolist()
    [[0.3333333333333333]]
    """

    __skframe_tags__ = replace(_BaseKernel.__skframe_tags__, normalized=True)
    _parameter_constraints = {"variant": VARIANT}
    _parameter_hints = {"variant": VARIANT_HINT}

    def __init__(self, variant="dot"):
        self.variant = variant
        validate_component(self)

    def _gram(self, X, Y, symmetric, loops):
        return _tanimoto_block(X, Y, symmetric, self.variant, loops)


class GaussianTanimotoKernel(_Bandwidth, _BaseKernel):
    """Gaussian-Tanimoto kernel ``k(x, y) = exp(-gamma * (2 - 2 T(x, y)))``.

    ``T`` is the Tanimoto kernel (:class:`TanimotoKernel`, same ``variant``) and
    ``2 - 2 T(x, y) = ||phi(x) - phi(y)||^2`` is the squared distance between
    ``x`` and ``y`` in the feature space of ``T`` (``T(x, x) = 1``), so this is a
    Gaussian kernel on top of the Tanimoto feature map. With the width
    ``sigma^2`` used by the paper, ``gamma = 1 / (2 sigma^2)`` and
    ``k(x, y) = exp(-(1 - T(x, y)) / sigma^2)``.

    This is the output kernel of the metabolite-identification experiment of
    El Ahmad, Brogat-Motte, Laforgue and d'Alché-Buc, Sketch In, Sketch Out:
    Accelerating both Learning and Inference for Structured Prediction with
    Kernels, AISTATS 2024 ("Gaussian-Tanimoto output kernel (Ralaivola et al.,
    2005) – with width sigma^2 – for the molecular fingerprints"). The paper does
    not spell the formula out; the form above is the standard one (Ralaivola et
    al., 2005; Brouard et al., 2016).

    Parameters
    ----------
    gamma : float or "scale", default="scale"
        ``1 / (2 sigma^2)``; must be > 0. ``"scale"``: ``prepare(X)`` sets
        ``gamma = 1 / mean(1 - T(x_i, x_j))`` over the pairs ``i != j`` of (at most
        :data:`SCALE_SAMPLE` evenly spaced) training rows, i.e. ``gamma`` times the
        mean squared feature-space distance is 2, the same normalisation as the
        Gaussian kernel's ``"scale"``; 1.0 when all rows are equal.
    variant : {"dot", "minmax"}, default="dot"
        Tanimoto variant, see :class:`TanimotoKernel`.

    Examples
    --------
    >>> import numpy as np
    >>> K = GaussianTanimotoKernel(gamma=0.5)(np.array([[1.0, 1.0, 0.0]]), np.array([[1.0, 0.0, 1.0]]))
    >>> bool(np.isclose(K[0, 0], np.exp(-(1 - 1 / 3))))
    True
    """

    __skframe_tags__ = replace(_BaseKernel.__skframe_tags__, normalized=True)
    _parameter_constraints = {"gamma": BANDWIDTH, "variant": VARIANT}
    _parameter_hints = {"gamma": "gamma = 1/(2 sigma^2) sets the width of the Gaussian-Tanimoto kernel; pass a "
                                 "positive number, or 'scale' to set it from the data", "variant": VARIANT_HINT}

    def __init__(self, gamma="scale", variant="dot"):
        self.gamma, self.variant = gamma, variant
        validate_component(self)

    def _scale_gamma(self, X):
        n = X.shape[0]
        rows = np.unique(np.linspace(0, n - 1, min(n, SCALE_SAMPLE)).astype(np.int64))
        q = rows.shape[0]
        if q < 2:
            return 1.0
        Xs = X[rows]
        mean = (q * q - _tanimoto_block(Xs, Xs, True, self.variant, gram_loops(work=q * q)).sum()) / (q * (q - 1))
        return 1.0 / mean if mean > 1e-12 else 1.0

    def _gram(self, X, Y, symmetric, loops):
        out = _tanimoto_block(X, Y, symmetric, self.variant, loops)
        loops.affine_exp(out, 2.0 * self.gamma, -2.0 * self.gamma)
        if symmetric:
            np.fill_diagonal(out, 1.0)
        return out
