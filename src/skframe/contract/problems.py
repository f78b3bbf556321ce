"""Problems, not matrices: what a solver receives.

Every sketched model is a linear model on features ``z(x)`` (r of them) with a
ridge penalty. A :class:`Problem` gives the solver those features and targets in
row blocks, and for the square loss the accumulated products ``Z^T Z`` and
``Z^T Y``. The in-memory case (:class:`ArrayProblem`) holds Z; streamed,
memory-mapped, GPU and distributed problems compute the blocks on the fly, and the
same solver runs on all of them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field

import numpy as np

from skframe.contract.collections import chunks, n_items

__all__ = ["Problem", "TargetArrayProblem", "ArrayProblem", "FactoredArrayProblem", "SolveResult", "as_problem"]


@dataclass
class SolveResult:
    """What a solver returns: the weights and its run state (solvers keep no state on themselves).

    Attributes
    ----------
    W : ndarray of shape (r, d)
    history : list of float
        Objective after each iteration or epoch.
    stop_reason : str or None
    n_iter : int
    info : dict
        Anything else worth reporting (primal/dual objectives, duality gap, ...), JSON values.
    hessian : ndarray of shape (r k, r k) or None
        Optional: the Hessian of the objective in W's coordinates, the last one the solver formed (``newton``:
        at ``W`` or, in its fast phase that reuses one, a step or two before); the classifier's calibration
        reuses it instead of a pass over the rows. Never saved with the model.
    """

    W: np.ndarray
    history: list = field(default_factory=list)
    stop_reason: str | None = None
    n_iter: int = 0
    info: dict = field(default_factory=dict)
    hessian: np.ndarray | None = None


class Problem(ABC):
    """Features ``Z`` (n x r) and targets ``Y`` (n x d) of a sketched linear problem.

    Required
    --------
    ``n``, ``r``, ``d``
        Numbers of samples, features and outputs.
    ``blocks(chunk_rows=None)``
        Iterate over ``(start, Z_block, Y_block)`` row blocks covering all samples in order.

    Optional (generic defaults)
    ---------------------------
    ``gram()``
        ``(Z^T Z, Z^T Y)`` accumulated over blocks in float64.
    ``features()``
        The whole ``(Z, Y)`` in memory, or None when the problem streams.

    Optional attributes (set by the fit that builds the problem)
    ------------------------------------------------------------
    ``blas_threads``
        BLAS threads for the solver's dense algebra, as the fit's execution plan decided
        (:func:`skframe.compute.plan_rules.solver_blas_threads`: one thread for iterations on a
        few target columns). None (the default, and any problem built outside a fit): the solver
        leaves BLAS as it is. A solver reads it with ``getattr(problem, "blas_threads", None)``
        and applies it with :func:`skframe.plugin.toolbox.serial_blas`; it never decides threads.
    ``sample_weight``
        Per-row weights, where the fit has them.
    """

    in_memory = False
    blas_threads = None

    @property
    @abstractmethod
    def n(self):
        """Number of samples."""

    @property
    @abstractmethod
    def r(self):
        """Number of features."""

    @property
    @abstractmethod
    def d(self):
        """Number of outputs."""

    @abstractmethod
    def blocks(self, chunk_rows=None):
        """Yield ``(start, Z_block, Y_block)``."""

    def gram(self):
        """``(Z^T Z, Z^T Y)`` accumulated block by block (float64)."""
        A = np.zeros((self.r, self.r))
        B = np.zeros((self.r, self.d))
        for _, Zb, Yb in self.blocks():
            Zb = np.asarray(Zb, dtype=np.float64)
            A += Zb.T @ Zb
            B += Zb.T @ np.asarray(Yb, dtype=np.float64)
        return A, B

    def features(self):
        """``(Z, Y)`` when held in memory, else None."""
        return None


class TargetArrayProblem(Problem):
    """A problem holding its targets as an (n, d) array ``self.Y``: ``n`` and ``d`` are read from it.

    Subclasses give ``r`` and ``blocks`` (the in-memory :class:`ArrayProblem`, and the streamed,
    GPU and distributed problems of :mod:`skframe.compute`).
    """

    @property
    def n(self):
        return n_items(self.Y)

    @property
    def d(self):
        return int(self.Y.shape[1])


class ArrayProblem(TargetArrayProblem):
    """A problem whose features and targets are in-memory arrays.

    >>> import numpy as np
    >>> P = ArrayProblem(np.eye(3), np.ones((3, 1)))
    >>> P.n, P.r, P.d, P.gram()[1].ravel().tolist()
    (3, 3, 1, [1.0, 1.0, 1.0])
    """

    in_memory = True

    def __init__(self, Z, Y):
        self.Z = Z
        self.Y = Y if Y.ndim == 2 else Y[:, None]

    @property
    def r(self):
        return int(self.Z.shape[1])

    def blocks(self, chunk_rows=None):
        step = chunk_rows or self.n
        for start, stop in chunks(self.n, step):
            yield start, self.Z[start:stop], self.Y[start:stop]

    def gram(self):
        return self.Z.T @ self.Z, self.Z.T @ self.Y

    def features(self):
        return self.Z, self.Y


#: bytes of the float64 row blocks :class:`FactoredArrayProblem` forms at a time (its blocks, its sums)
FACTOR_BLOCK_BYTES = 64 * 2**20


class FactoredArrayProblem(TargetArrayProblem):
    """A problem whose features are the product ``Z = L P`` of an in-memory left factor ``L`` (n x s) and a small
    right factor ``P`` (s x r), kept apart.

    A solver that knows the form reads ``factors()`` (``(L, P, Y)``) and multiplies by the two factors in turn:
    ``Z A = L (P A)`` and ``Z^T B = P^T (L^T B)``, each as costly as the product with Z when ``s`` is about ``r``
    (the Newton solver: ``FeatureMapProblem(..., factored=True)``), and Z is never formed (an ``n s r`` product).
    Any other reader sees a problem that streams (``features()`` is None): ``blocks()`` forms Z's rows a block at a
    time.

    >>> import numpy as np
    >>> L, P = np.arange(6.0).reshape(3, 2), np.array([[1.0, 0.0, 1.0], [0.0, 2.0, 1.0]])
    >>> prob = FactoredArrayProblem(L, P, np.ones((3, 1)))
    >>> prob.n, prob.r, prob.features() is None, np.allclose(np.vstack([b for _, b, _ in prob.blocks(2)]), L @ P)
    (3, 3, True, True)
    """

    def __init__(self, L, P, Y):
        self.L, self.P = L, P
        self.Y = Y if Y.ndim == 2 else Y[:, None]

    @property
    def r(self):
        return int(self.P.shape[1])

    def factors(self):
        """``(L, P, Y)``: the features ``Z = L P`` in their two factors, and the targets."""
        return self.L, self.P, self.Y

    def _step(self):
        """Rows of L whose float64 copy holds about :data:`FACTOR_BLOCK_BYTES`."""
        return max(1, FACTOR_BLOCK_BYTES // (8 * max(int(self.L.shape[1]), 1)))

    def blocks(self, chunk_rows=None):
        for start, stop in chunks(self.n, chunk_rows or self._step()):
            yield start, self.L[start:stop] @ self.P, self.Y[start:stop]

    def gram(self):
        """``(P^T (L^T L) P, P^T L^T Y)``, the sums over L's rows in float64 (a float32 L a block at a time)."""
        s = int(self.L.shape[1])
        LtL, LtY = np.zeros((s, s)), np.zeros((s, self.d))
        for start, stop in chunks(self.n, self._step()):
            Lb = np.asarray(self.L[start:stop], dtype=np.float64)
            LtL += Lb.T @ Lb
            LtY += Lb.T @ np.asarray(self.Y[start:stop], dtype=np.float64)
        return self.P.T @ LtL @ self.P, self.P.T @ LtY


def as_problem(Z, Y=None):
    """Wrap arrays in an :class:`ArrayProblem`; return a :class:`Problem` unchanged."""
    if isinstance(Z, Problem):
        return Z
    return ArrayProblem(np.asarray(Z), np.asarray(Y))
