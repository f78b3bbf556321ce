"""p-sparsified sketches, drawn in time and memory proportional to their non-zeros.

El Ahmad, Laforgue and d'Alché-Buc, Fast Kernel Methods for Generic Lipschitz Losses
via p-Sparsified Sketches, TMLR 2023.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.special import gammaln

from skframe.plugin.api import Interval, Options, SketchMatrix
from skframe_sketches._base import _BaseSketch, _check_size

__all__ = ["PSparsifiedSketch", "PSRSketch", "PSGSketch"]


def _truncated_binomial_sampler(m, p):
    """Inverse-CDF table of Binomial(m, p) conditioned on being >= 1."""
    k = np.arange(1, m + 1)
    if p >= 1:  # p == 1: every entry is non-zero
        cdf = np.zeros(m)
        cdf[-1] = 1.0
        return cdf
    logpmf = gammaln(m + 1) - gammaln(k + 1) - gammaln(m - k + 1) + k * np.log(p) + (m - k) * np.log1p(-p)
    pmf = np.exp(logpmf - logpmf.max())
    cdf = np.cumsum(pmf)
    return cdf / cdf[-1]


def _distinct_rows(counts, m, rng):
    """For each column c, ``counts[c]`` distinct rows drawn uniformly from range(m).

    Returns (rows, column position) arrays of length ``counts.sum()``, grouped by
    column. Draws with replacement, then redraws every column that got a repeated
    row as a fresh uniform subset (``rng.choice(..., replace=False)``). This is
    exact: a column's rows are uniform given that the first draw was distinct,
    and uniform in the redraw. Collisions are rare (about c^2 / 2m per column),
    so the cost is one vectorised pass over the non-zeros.
    """
    n_cols = counts.shape[0]
    col = np.repeat(np.arange(n_cols), counts)
    total = col.shape[0]
    if total and counts.max() > m // 2:  # dense columns: permutation per column is cheaper
        rows = np.concatenate([rng.permutation(m)[:c] for c in counts])
        return rows, col
    rows = rng.integers(0, m, size=total)
    if total == 0 or counts.max() < 2:
        return rows, col
    # k = position of each entry inside its column; entry i collides with i - d (same column) iff
    # k[i] >= d and rows[i] == rows[i - d]. Entries with k >= d form a suffix of the k-sorted order.
    starts = np.cumsum(counts) - counts
    k = np.arange(total) - np.repeat(starts, counts)
    order = np.argsort(k.astype(np.int16) if counts.max() < 2**15 else k, kind="stable")
    first = np.searchsorted(k[order], np.arange(1, counts.max()))
    bad_cols = []
    for d, lo in enumerate(first, start=1):
        i = order[lo:]
        hit = i[rows[i] == rows[i - d]]
        if hit.size:
            bad_cols.append(col[hit])
    if bad_cols:
        for c in np.unique(np.concatenate(bad_cols)):
            rows[starts[c] : starts[c] + counts[c]] = rng.choice(m, size=counts[c], replace=False)
    return rows, col


class PSparsifiedSketch(_BaseSketch):
    """p-sparsified sketch (El Ahmad et al., TMLR 2023, Def. 5): entries ``B_ij R_ij / sqrt(m p)``, B ~ Bernoulli(p).

    ``distribution="rademacher"`` gives p-SR (R_ij = ±1), ``"gaussian"`` gives
    p-SG (R_ij ~ N(0, 1)). The dense m x n Bernoulli matrix is never drawn:
    the number of non-null columns ``s' ~ Binomial(n, 1 - (1 - p)^m)``, the
    columns themselves, each column's number of non-zeros (a Binomial(m, p)
    conditioned on >= 1) and their rows are drawn directly, in time and memory
    proportional to the number of non-zeros.

    Parameters
    ----------
    size : int
        Number of rows m.
    p : float in (0, 1], optional
        Probability that an entry is non-zero. Default ``min(1, 20 / n)``
        (the value used for the rf1 data set in El Ahmad et al., TMLR 2023, Table 2).
    distribution : {"rademacher", "gaussian"}
    """

    _parameter_constraints = {**_BaseSketch._parameter_constraints, "p": [Interval("real", 0, 1, closed="right"), None],
                              "distribution": [Options("rademacher", "gaussian")]}
    _parameter_hints = {**_BaseSketch._parameter_hints,
                        "p": "p is the probability that an entry of the sketch is non-zero; use a value in (0, 1] "
                             "such as 20/n",
                        "distribution": "'rademacher' gives p-SR, 'gaussian' p-SG"}

    def __init__(self, size=100, p=None, distribution="rademacher"):
        self.p, self.distribution = p, distribution
        super().__init__(size)

    @property
    def name(self):
        return "psr" if self.distribution == "rademacher" else "psg"

    @property
    def params(self):
        return {"size": self.size, "p": self.p}

    def resolved_p(self, n):
        """The probability actually used for n points."""
        return float(self.p) if self.p is not None else min(1.0, 20.0 / n)

    def draw(self, n, rng, *, X=None, kernel=None):
        m = self.size
        _check_size(m, n)
        p = self.resolved_p(n)
        q = -np.expm1(m * np.log1p(-p)) if p < 1 else 1.0  # P(column non-null) = 1 - (1-p)^m
        s_prime = int(rng.binomial(n, q))
        if s_prime == 0:  # an all-zero sketch is useless: keep one column (probability (1-q)^n, negligible)
            s_prime = 1
        cols = np.sort(rng.choice(n, size=s_prime, replace=False))
        cdf = _truncated_binomial_sampler(m, p)
        counts = np.searchsorted(cdf, rng.random(s_prime), side="right") + 1
        counts = np.minimum(counts, m)
        rows, _ = _distinct_rows(counts, m, rng)
        scale = 1.0 / np.sqrt(m * p)
        if self.distribution == "rademacher":
            values = np.where(rng.random(rows.shape[0]) < 0.5, -scale, scale)
        else:
            values = rng.standard_normal(rows.shape[0]) * scale
        info = {"name": self.name, "size": m, "p": p, "distribution": self.distribution}
        # The entries are grouped by column with distinct rows: S_mix is built directly in CSC form
        # (no sort, no duplicate summing), then stored as CSR.
        indptr = np.zeros(s_prime + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        mix = sp.csc_matrix((values, rows, indptr), shape=(m, s_prime)).tocsr()
        return SketchMatrix(n=n, indices=cols, mix=mix, info=info)




class PSRSketch(PSparsifiedSketch):
    """p-SR sketch: :class:`PSparsifiedSketch` with Rademacher entries (registered as ``"psr"``).

    Parameters
    ----------
    size : int, default=100
        Number of rows m.
    p : float in (0, 1], optional
        Probability that an entry is non-zero; default ``min(1, 20 / n)``.
    """

    def __init__(self, size=100, p=None):
        super().__init__(size, p=p, distribution="rademacher")


class PSGSketch(PSparsifiedSketch):
    """p-SG sketch: :class:`PSparsifiedSketch` with Gaussian entries (registered as ``"psg"``).

    Takes the parameters of :class:`PSRSketch` (``size``, ``p``).
    """

    def __init__(self, size=100, p=None):
        super().__init__(size, p=p, distribution="gaussian")
