"""Iterative losses on dask-array data: each epoch's loss and gradient as a map-reduce over partitions."""

from __future__ import annotations

import operator

import numpy as np

from skframe.compute._dask_cluster import _aligned, _compute, _dask, tree_reduce
from skframe.compute._dask_partitions import _add_pairs, _add_tuples, _partition_dual, _partition_loss
from skframe.compute.memory import plan_stream
from skframe.compute.stream_problems import ProjectedProblem, certificate_dual
from skframe.compute.streaming import get_engine
from skframe.core.engine import planned
from skframe.options import compute_dtype

__all__ = ["DaskFeatureProblem"]


class DaskFeatureProblem(ProjectedProblem):
    """Features of dask-array data: each epoch's loss and gradient is a map-reduce over partitions.

    The partitions are persisted on the workers once; :meth:`loss_pass` ships only the
    current weights and brings back the m x d sums. :meth:`blocks` computes feature blocks
    on the client one partition at a time, in row chunks (for generic solvers).
    """

    def __init__(self, kernel, X, Y, X_sub, proj, options=None, retries=3):
        self._dask = _dask()
        X, Y = _aligned(X, Y)
        self.X, self.Y = X.persist(), Y.persist()
        self.kernel, self.X_sub, self.retries = kernel, np.asarray(X_sub), retries
        self.proj = np.asarray(proj, dtype=np.float64)
        self.options = planned(options, int(X.shape[0]) * self.X_sub.shape[0])  # the fit's, else from n x s'
        self.chunk_rows = plan_stream(max(X.chunks[0]), self.r, self.X_sub.shape[0], X.shape[1], self.d,
                                      self.options, kernel=kernel).chunk_rows
        self._ship = [self._dask.delayed(v, pure=True) for v in (kernel, self.X_sub, self.proj)]

    def loss_pass(self, V, C, loss, gradient=True):
        """``(sum_i l(f_i, y_i), Z^T G C^T)`` at ``F = Z V C``, reduced over partitions (the
        pass of :meth:`skframe.compute.stream_problems.StreamedFeatureProblem.loss_pass`)."""
        dl = self._dask.delayed
        basis = tuple(self._ship)
        Vd, Cd = (dl(np.asarray(a, dtype=np.float64), pure=True) for a in (V, C))
        ld = dl(loss, pure=True)
        run = (self.options.dtype, self.chunk_rows, self.options.engine)
        parts = [dl(_partition_loss, pure=True)(basis, xp, yp, Vd, Cd, ld, run, gradient)
                 for xp, yp in zip(self.X.to_delayed().ravel(), self.Y.to_delayed().ravel())]
        return _compute(tree_reduce(parts, _add_pairs), self.retries)

    def dual_pass(self, V, C, loss, lam):
        """The dual objective ``D`` of the duality certificate at V, by two map-reduces over the partitions.

        The dual point built from V as the solvers' certificate builds it (each row's loss gradient
        projected on the dual domain, then scaled by the best ``s`` in [0, 1]); the first pass
        reduces its sums, the second ``sum h(s a_i, y_i)``. Only scalars and an r x k matrix come to
        the client: the n x d dual variables stay on the workers. None for a loss without ``dual``.
        """
        dual = getattr(loss, "dual", None)
        if dual is None:
            return None
        dl = self._dask.delayed
        basis = tuple(self._ship)
        Vd, Cd, ld = dl(np.asarray(V, dtype=np.float64), pure=True), dl(np.asarray(C, dtype=np.float64)), dl(loss)
        run = (self.options.dtype, self.chunk_rows, self.options.engine)

        def sweep(scale):
            parts = [dl(_partition_dual, pure=True)(basis, xp, yp, Vd, Cd, ld, run, scale)
                     for xp, yp in zip(self.X.to_delayed().ravel(), self.Y.to_delayed().ravel())]
            return _compute(tree_reduce(parts, operator.add if scale is not None else _add_tuples), self.retries)

        return certificate_dual(sweep, dual, lam, self.n)

    def blocks(self, chunk_rows=None):
        start = 0
        dt = compute_dtype(self.options.dtype)
        step = max(int(chunk_rows or self.chunk_rows), 1)
        P = self.proj.astype(dt)
        for xp, yp in zip(self.X.to_delayed().ravel(), self.Y.to_delayed().ravel()):
            Xb, Yb = _compute((xp, yp), self.retries)
            for lo in range(0, Xb.shape[0], step):
                Z = get_engine(self.options).block(self.kernel, np.asarray(Xb[lo:lo + step], dtype=np.float64),
                                                   self.X_sub, dt) @ P
                yield start + lo, Z, np.asarray(Yb[lo:lo + step], dtype=np.float64)
            start += Xb.shape[0]
