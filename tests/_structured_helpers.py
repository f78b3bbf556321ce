"""Small kernels and data shared by the structured-prediction tests (independent of the kernel plugin)."""

import numpy as np
import scipy.sparse as sp

from skframe.contract.tags import KernelTags


def _dense(A):
    return A.toarray() if sp.issparse(A) else np.asarray(A, dtype=float)


class GaussK:
    """exp(-gamma ||a - b||^2), normalised."""

    __skframe_tags__ = KernelTags(normalized=True)
    name = "gaussian"

    def __init__(self, gamma=0.5):
        self.gamma = gamma

    def __call__(self, A, B=None):
        A = _dense(A)
        B = A if B is None else _dense(B)
        d = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2 * A @ B.T
        return np.exp(-self.gamma * np.clip(d, 0, None))

    def diag(self, A):
        return np.ones(A.shape[0])


class LinK:
    """<a, b>, not normalised."""

    __skframe_tags__ = KernelTags(is_linear=True)
    name = "linear"

    def __call__(self, A, B=None):
        A = _dense(A)
        B = A if B is None else _dense(B)
        return A @ B.T

    def diag(self, A):
        A = _dense(A)
        return (A * A).sum(1)


def multilabel_data(n=80, d=5, L=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    W = rng.normal(size=(d, L))
    Y = (X @ W + 0.5 * rng.normal(size=(n, L)) > 0.3).astype(float)
    return X, Y
