"""A low-rank preconditioner for :class:`skframe_solvers.pcg.NystromPCG` in O(m q) memory instead of m^2.

Falkon's preconditioner (:class:`skframe_solvers.pcg.FalkonPreconditioner`) factors the m x m matrix ``K_mm``:
8 m^2 bytes, 80 GB at m = 10^5. Following the idea of EigenPro (Ma and Belkin, "Diving into the shallows: a
computational perspective on large-scale shallow learning", NeurIPS 2017; Abedsoltan, Belkin and Pandit,
"Toward large kernel models", ICML 2023), the top of the spectrum of ``K_mm`` is estimated from a sub-sample of
s centres and the rest is treated as flat:

1. ``K_ss = k(C_s, C_s)`` for s centres drawn at random, and its top q + 1 eigenpairs ``(mu_i, u_i)``;
2. the Nyström extension ``Phi = k(C, C_s) U_q diag(mu)^{-1/2}`` (m x q, one product, never the m x s block),
   so that ``K_mm ~ Phi Phi^T``; its eigen-decomposition ``Phi Phi^T = Q diag(e) Q^T`` (Q orthonormal, m x q)
   from the q x q matrix ``Phi^T Phi``;
3. ``K~ = Q diag(max(e, eps)) Q^T + eps (I - Q Q^T)``, with the tail level ``eps = (m / s) mu_{q+1}`` (the
   (q+1)-th eigenvalue of ``K_mm`` so estimated), in Falkon's approximation of the normal matrix
   ``P = (n/m) K~^2 + n lam K~``, whose inverse square root is
   ``B = P^{-1/2} = p_tail^{-1/2} I + Q diag(p^{-1/2} - p_tail^{-1/2}) Q^T``.

``B`` is symmetric; applying it costs 4 m q operations. The top q directions of the normal matrix are scaled to
about one, the others by the same factor: conjugate gradients then converge at the pace of the spectrum's tail
(more passes than with the full factor when q is small against the kernel's effective dimension). The penalty
``B (n lam K_mm) B v`` has no closed form here: each step computes ``K_mm (B v)`` by kernel blocks (m^2 kernel
entries: m / n of a pass over the rows).

Memory beyond the data: ``Q`` (m x q; ``Phi`` becomes it in place), the s x s sub-sampled kernel and its
eigenvectors while it is decomposed, and the kernel blocks of the products (``options.block_bytes``).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import eigh

from skframe.exceptions import InvalidInputError, InvalidParameterError
from skframe.plugin.toolbox import engine_matvec, kernel_block, lowrank_bytes, n_items, take

__all__ = ["LowRankPreconditioner", "lowrank_bytes"]

_BLOCK_ENTRIES = 1 << 20  # entries of the row blocks in which Phi becomes Q in place (8 MB)


def check_lowrank(m, s, q):
    """Refuse sizes that do not make a preconditioner: ``1 <= q < s <= m``."""
    if not (isinstance(s, (int, np.integer)) and 2 <= s <= m):
        raise InvalidParameterError(f"subsample={s!r} must be an integer in [2, m={m}], e.g. {min(m, 2000)}")
    if not (isinstance(q, (int, np.integer)) and 1 <= q < s):
        raise InvalidParameterError(f"rank={q!r} must be an integer in [1, subsample - 1 = {s - 1}], e.g. "
                                    f"{min(s - 1, 300)}")


class LowRankPreconditioner:
    """``B = P^{-1/2}`` of a rank-q Nyström estimate of ``K_mm`` from s sub-sampled centres (module notes).

    Parameters
    ----------
    kernel : kernel object
    centres : ndarray (m, d)
    lam : float
    n : int
        Training rows.
    subsample, rank : int
        s centres drawn for the estimate and q eigenpairs kept (``1 <= q < s <= m``).
    random_state : int or Generator
        Draws the sub-sample.
    options : ComputeOptions, optional
        Kernel blocks of the products.
    """

    jitter = 0.0

    def __init__(self, kernel, centres, lam, n, subsample, rank, random_state=0, options=None):
        m = n_items(centres)
        check_lowrank(m, subsample, rank)
        self.kernel, self.centres, self.options = kernel, centres, options
        self.m, self.n, self.lam, self.s, self.q = m, int(n), float(lam), int(subsample), int(rank)
        rng = np.random.default_rng(random_state)
        sub = take(centres, np.sort(rng.choice(m, self.s, replace=False)))
        Kss = np.asarray(kernel_block(kernel, sub, sub, dtype=np.float64))
        mu, U = eigh(Kss, subset_by_index=[self.s - self.q - 1, self.s - 1], overwrite_a=True, driver="evr")
        del Kss
        mu, U = mu[::-1], U[:, ::-1]  # largest first; mu[q] is the (q+1)-th
        if not mu[0] > 0:
            raise InvalidInputError("the sub-sampled centres' kernel matrix has no positive eigenvalue; check the "
                                    "kernel's parameters")
        keep = mu[: self.q] > mu[0] * 1e-12 * self.s  # directions below rounding are left to the flat tail
        Phi = np.asarray(engine_matvec(kernel, centres, sub, U[:, : self.q][:, keep] / np.sqrt(mu[: self.q][keep]),
                                       options), dtype=np.float64)
        e, V = np.linalg.eigh(Phi.T @ Phi)
        good = e > e.max() * 1e-12
        e, V = e[good], V[:, good]
        V /= np.sqrt(e)
        step = max(1, _BLOCK_ENTRIES // Phi.shape[1])
        for i in range(0, m, step):  # in place, a block of rows at a time: Q = Phi V diag(e)^{-1/2}
            Phi[i:i + step, : V.shape[1]] = Phi[i:i + step] @ V
        self.Q = Phi[:, : V.shape[1]]  # orthonormal columns: Phi Phi^T = Q diag(e) Q^T
        self.eps = max(float(mu[self.q]) * m / self.s, float(e.max()) * 1e-12)
        e = np.maximum(e, self.eps)
        p = self.n * (e * e / m + self.lam * e)
        p_tail = self.n * (self.eps * self.eps / m + self.lam * self.eps)
        self.tail = 1.0 / np.sqrt(p_tail)
        self.coef = 1.0 / np.sqrt(p) - self.tail
        self.rank_kept = int(e.size)
        self.nbytes = int(Phi.nbytes)  # Q is a view of it

    def apply(self, V):
        """``B V`` (symmetric: also ``B^T V``)."""
        V = np.asarray(V, dtype=np.float64)
        return self.tail * V + self.Q @ (self.coef[:, None] * (self.Q.T @ V))

    apply_t = apply

    def kmm_times(self, V):
        """``K_mm V`` by kernel blocks (never the m x m matrix)."""
        return np.asarray(engine_matvec(self.kernel, self.centres, self.centres, np.asarray(V, dtype=np.float64),
                                        self.options), dtype=np.float64)

    def penalty(self, V):
        """``B (n lam K_mm) B V``."""
        return self.apply(self.kmm_times(self.apply(V)) * (self.n * self.lam))
