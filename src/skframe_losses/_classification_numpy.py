"""Plain NumPy formulas of the probabilistic classification losses (small arrays, and the reference).

``F`` and ``Y`` have shape (n, d). Binary logistic: ``Y`` holds labels ±1 per column, the loss is
summed over the columns. Multinomial: ``Y`` holds one +1 per row (the class) and -1 elsewhere, the
targets are ``T = (Y + 1) / 2``.
"""

import numpy as np

__all__ = ["logistic_value", "logistic_gradient", "logistic_curvature", "multinomial_value",
           "multinomial_gradient", "softmax", "logistic_terms", "multinomial_terms"]


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


def logistic_terms(F, Y):
    """``(values, gradient, entropies)`` from one exponential per entry: with ``z = y f``, ``e = exp(-|z|)`` and
    ``q = e / (1 + e)``, the loss ``log1p(e) + max(-z, 0)``, the gradient ``-y sigmoid(-z)`` and the conjugate at
    ``alpha = -gradient``, the binary entropy of ``sigmoid(-z)``, as ``log1p(e) + |z| q`` (the Fenchel-Young
    equality ``h = l + <f, alpha>`` with the cancelling ``-z`` of both terms taken out)."""
    z = Y * F
    a = np.abs(z)
    e = np.exp(-a)
    lp = np.log1p(e)
    q = e / (1.0 + e)
    values = (lp + np.maximum(-z, 0.0)).sum(axis=1)
    h = (lp + a * q).sum(axis=1)
    G = -Y * np.where(z >= 0, q, 1.0 - q)
    return values, G, h


def multinomial_terms(F, Y):
    """``(values, gradient, entropies)`` from one exponential per entry: with ``lse = log sum_j exp(f_j)`` and
    ``p = softmax(f)``, the loss ``lse - f_c``, the gradient ``p - t`` and the conjugate at ``alpha = -gradient``,
    the entropy of ``p``, as ``lse - <p, f>`` (no logarithm of the probabilities)."""
    top = F.max(axis=1)
    P = np.subtract(F, top[:, None])
    np.exp(P, out=P)
    S = P.sum(axis=1)
    lse = np.log(S)
    lse += top
    P /= S[:, None]
    h = lse - np.einsum("ij,ij->i", P, F)
    T = Y > 0
    values = lse - np.einsum("ij,ij->i", F, T)
    P -= T
    return values, P, h
