"""The Gaussian kernel with one length-scale per feature (automatic relevance determination)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from skframe.plugin.api import InvalidParameterError, validate_component
from skframe_kernels._base import _BaseKernel
from skframe_kernels.kernels import GaussianKernel

__all__ = ["GaussianARDKernel"]


class GaussianARDKernel(_BaseKernel):
    """Gaussian kernel with per-feature length-scales, ``k(x, y) = exp(-(1/2) sum_j (x_j - y_j)^2 / l_j^2)``.

    Registered as ``"gaussian-ard"``. A feature with a large length-scale hardly moves the kernel (an irrelevant
    feature); its relevance is ``1 / l_j^2``. The block is the Gaussian kernel's (``gamma = 1/2``) on the inputs
    divided by the length-scales.

    Parameters
    ----------
    length_scale : float or list of float, default=1.0
        One length-scale for every feature, or one per feature (> 0). The kernel models learn them with
        ``kernel_params={"length_scale": "learn"}`` (see :mod:`skframe.models._autotune`).

    Examples
    --------
    >>> import numpy as np
    >>> k = GaussianARDKernel(length_scale=[1.0, 2.0])
    >>> bool(np.isclose(k(np.zeros((1, 2)), np.array([[1.0, 2.0]]))[0, 0], np.exp(-1.0)))
    True
    """

    __skframe_tags__ = replace(_BaseKernel.__skframe_tags__, normalized=True, dtypes=("float64",))
    _parameter_constraints = {"length_scale": [float, int, list, tuple, np.ndarray]}

    def __init__(self, length_scale=1.0):
        self.length_scale = length_scale
        validate_component(self)
        scales = np.atleast_1d(np.asarray(length_scale, dtype=float))
        if scales.ndim != 1 or not np.all(np.isfinite(scales)) or np.any(scales <= 0):
            raise InvalidParameterError(f"GaussianARDKernel: length_scale={length_scale!r} is invalid; give a "
                                        "positive number or a list of positive numbers, one per feature")

    @property
    def params(self):
        value = self.length_scale
        return {"length_scale": [float(v) for v in np.ravel(value)] if np.ndim(value) else float(value)}

    def _scaled(self, X):
        scales = np.atleast_1d(np.asarray(self.length_scale, dtype=float))
        if scales.size not in (1, X.shape[1]):
            raise InvalidParameterError(f"GaussianARDKernel has {scales.size} length-scales but the data have "
                                        f"{X.shape[1]} features; give one per feature or a single one")
        inv = 1.0 / scales
        return sp.csr_matrix(X.multiply(inv[None, :] if inv.size > 1 else inv[0])) if sp.issparse(X) else X * inv

    def _gram(self, X, Y, symmetric, loops):
        return GaussianKernel(gamma=0.5)._gram(self._scaled(X), self._scaled(Y), symmetric, loops)
