"""The fused normal pass ``k(X, C)^T (a k(X, C) V + W)``: one pass over the rows, never the n x m block.

An iterative square-loss solver over the centres ``C`` (Nyström) needs, at every iteration, the product of the
normal matrix ``K^T K`` with a vector, where ``K = k(X, C)`` has n rows: a plain pass of the block engine
(:func:`skframe.core.block_engine.engine_matvec`) would evaluate ``K v`` and then ``K^T u`` in two passes, each
computing every kernel entry. :func:`normal_pass` computes each row block's kernel entries once and uses them for
both products:

* the compiled loops (``options.engine == "numba"``) of a Gaussian kernel on dense rows
  (:mod:`skframe.compute._fused_numba`): the threads share the rows, each computing a few kernel rows at a time in
  a buffer that stays in its cache (its exponentials evaluated once) and adding ``k_i^T u_i`` to its own m x k sum;
* any other kernel or engine: one kernel block per chunk of rows of the plan
  (:func:`skframe.core.block_engine.rows_within_budget`), ``u = a K_b V + W_b`` and ``K_b^T u`` by BLAS.

Memory beyond the data: the m x k result and, per thread, an m x k sum (compiled) or one chunk's kernel block
(``options.block_bytes``). The pass is the plain ``K.T @ (a * (K @ V) + W)`` up to rounding.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from skframe.contract.collections import chunks, n_items
from skframe.contract.tags import get_tags
from skframe.core.block_engine import native_block, row_slice, rows_within_budget
from skframe.core.engine import engine_module, planned
from skframe.options import compute_dtype

__all__ = ["normal_pass", "fused_capable"]


def fused_capable(kernel, X):
    """Whether the compiled fused pass can run ``kernel`` on ``X``: a Gaussian formula with a numeric ``gamma``
    (the kernel's tags declare its formula) on dense float rows."""
    tags = get_tags(kernel, "kernel")
    gamma = getattr(kernel, "gamma", None)
    return (tags.device_formula == "gaussian" and isinstance(gamma, (int, float)) and not isinstance(gamma, bool)
            and isinstance(X, np.ndarray) and X.ndim == 2)


def normal_pass(kernel, X, C, V, W=None, *, a=1.0, options=None):
    """``k(X, C)^T (a k(X, C) V + W)`` in one pass over the rows of X.

    Parameters
    ----------
    kernel : kernel object
        Prepared on the training data.
    X : ndarray or sparse matrix (n, d)
    C : ndarray (m, d)
        The centres.
    V : ndarray (m,) or (m, k)
    W : ndarray (n,) or (n, k), optional
        Added to ``a K V`` row by row (e.g. the targets: the pass then gives ``K^T (y - K v)`` with ``a = -1``).
    a : float, default 1.0
        Scale of ``K V``; 0 skips it (the pass is ``K^T W``).
    options : ComputeOptions, optional
        The plan's engine and chunks (without an engine, chosen from ``n x m`` kernel entries).

    Returns
    -------
    ndarray (m,) or (m, k), float64
    """
    V = np.asarray(V, dtype=np.float64)
    one = V.ndim == 1
    V2 = V[:, None] if one else V
    W2 = None if W is None else np.asarray(W, dtype=np.float64).reshape(n_items(X), V2.shape[1])
    options = planned(options, n_items(X) * n_items(C), sparse=sp.issparse(X))
    fast = engine_module("skframe.compute.fused", options)
    if (fast is not None and hasattr(fast, "gaussian_normal_pass") and fused_capable(kernel, X)
            and compute_dtype(options) == np.float64):
        out = fast.gaussian_normal_pass(X, C, kernel.gamma, V2, W2, a)
    else:
        out = _blocked_pass(kernel, X, C, V2, W2, a, options)
    return out[:, 0] if one else out


def _blocked_pass(kernel, X, C, V, W, a, options):
    """The same pass by the block engine: one kernel block per chunk of rows, both products by BLAS."""
    m = n_items(C)
    out = np.zeros((m, V.shape[1]))
    dtype = compute_dtype(options)
    for start, stop in chunks(n_items(X), rows_within_budget(kernel, m, options)):
        Kb = native_block(kernel, row_slice(X, start, stop), C, dtype, options.engine)
        u = a * (Kb @ V) if a != 0.0 else np.zeros((stop - start, V.shape[1]))
        if W is not None:
            u += W[start:stop]
        out += Kb.T @ u
    return out
