"""Plain NumPy formulas of the probabilistic classification losses (small arrays, and the reference).

``F`` and ``Y`` have shape (n, d). Binary logistic: ``Y`` holds labels ±1 per column, the loss is
summed over the columns. Multinomial: ``Y`` holds one +1 per row (the class) and -1 elsewhere, the
targets are ``T = (Y + 1) / 2``.
"""

import numpy as np

__all__ = ["logistic_value", "logistic_gradient", "logistic_curvature", "multinomial_value",
           "multinomial_gradient", "softmax"]


def _sigmoid_neg(t):
    """``1 / (1 + exp(t))`` without overflow."""
    e = np.exp(-np.abs(t))
    return np.where(t >= 0, e / (1.0 + e), 1.0 / (1.0 + e))


def logistic_value(F, Y):
    return np.logaddexp(0.0, -Y * F).sum(axis=1)


def logistic_gradient(F, Y):
    return -Y * _sigmoid_neg(Y * F)


def logistic_curvature(F, Y):
    """Second derivative per entry, ``s (1 - s)`` with ``s = sigmoid(-y f)`` (the columns are independent)."""
    s = _sigmoid_neg(Y * F)
    return s * (1.0 - s)


def softmax(F):
    E = np.exp(F - F.max(axis=1, keepdims=True))
    return E / E.sum(axis=1, keepdims=True)


def multinomial_value(F, Y):
    top = F.max(axis=1)
    lse = top + np.log(np.exp(F - top[:, None]).sum(axis=1))
    return lse - np.sum(F * (0.5 * (Y + 1.0)), axis=1)


def multinomial_gradient(F, Y):
    return softmax(F) - 0.5 * (Y + 1.0)
