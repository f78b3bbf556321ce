"""Per-row weights for the dual solvers: the weights folded into the loss of each row.

For a loss whose dual is ``h(alpha, y) = <alpha, y>`` on a box (hinge, pinball: ``quad = l1 = 0``), the
weighted loss ``w_i l(f, y_i)`` has the dual ``w_i h(alpha / w_i, y_i) = <alpha, y_i>`` on the box scaled by
``w_i``: dual coordinate ascent and ADMM then run unchanged on the scaled bounds, and zero weights pin
``alpha_i = 0`` (the row drops out). Weights are scaled to mean 1, so the data term is
``sum_i w_i l_i / sum_i w_i``.
"""

from __future__ import annotations

import numpy as np

from skframe.plugin.api import get_tags

__all__ = ["WeightedRowsLoss", "takes_box_weights"]


def takes_box_weights(dual):
    """Whether the dual's weighted form is a scaled box (separable, no quadratic or l1 term)."""
    return getattr(dual, "structure", None) == "separable" and float(dual.quad) == 0.0 and float(dual.l1) == 0.0


class _ScaledBoxDual:
    structure = "separable"
    quad = 0.0
    l1 = 0.0

    def __init__(self, dual, w):
        self._dual, self._w = dual, w[:, None]

    def bounds(self, Y):
        lo, hi = self._dual.bounds(Y)
        return np.ascontiguousarray(lo * self._w), np.ascontiguousarray(hi * self._w)

    def values(self, A, Y):
        A = np.asarray(A, dtype=np.float64)
        lo, hi = self.bounds(Y)
        out = np.sum(A * Y, axis=1)
        slack = 1e-9 * (1 + np.abs(A))
        out[np.any((A < lo - slack) | (A > hi + slack), axis=1)] = -np.inf
        return out

    def project(self, A, Y):
        lo, hi = self.bounds(Y)
        return np.clip(np.asarray(A, dtype=np.float64), lo, hi)


class WeightedRowsLoss:
    """``w_i l(f_i, y_i)`` on the n rows of one problem (every call covers all n rows, in order)."""

    def __init__(self, loss, w):
        self.loss, self.w = loss, np.asarray(w, dtype=np.float64)
        self.name = getattr(loss, "name", type(loss).__name__)
        self.__skframe_tags__ = get_tags(loss, "loss")
        self.dual = _ScaledBoxDual(loss.dual, self.w)

    def value(self, F, Y):
        return self.w * np.asarray(self.loss.value(F, Y))

    def gradient(self, F, Y):
        return self.w[:, None] * np.asarray(self.loss.gradient(F, Y))
