"""Sketching distributions (thesis §2.3, seed 002 Def. 5), all as ``R = S_mix @ S_sub``.

Each class stores its parameters in ``__init__`` (validated there, nothing
random), and ``draw(n, rng)`` returns a :class:`skframe.sketching.SketchMatrix`.
All sketches are isometries in expectation: ``E[R^T R] = I_n``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.special import gammaln

from skframe.exceptions import InvalidParameterError
from skframe.protocols import Sketch, kernel_block, kernel_diag
from skframe.sketching import SketchMatrix, from_entries
from skframe.validation import check_scalar


def _check_size(size, n):
    if size > n:
        raise InvalidParameterError(
            f"sketch size m={size} is larger than the number of training points n_samples={n}; choose m <= n_samples "
            "(or use --sketch none for the exact model)"
        )


class _BaseSketch(Sketch):
    name = "sketch"

    def __init__(self, size=100):
        self.size = check_scalar(size, "sketch size", kind=int, low=1, fix="the sketch size m must be a positive integer")

    @property
    def params(self):
        return {"size": self.size}

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{type(self).__name__}({args})"


class SubSampleSketch(_BaseSketch):
    """Uniform (or given-probability) sub-sampling, i.e. Nyström: rows ``e_{i_j}^T / sqrt(m p_i)``.

    Parameters
    ----------
    size : int
        Number of sampled points m.
    replace : bool, default False
        Sample with replacement (probabilities ``p_i``) or without (uniform, each
        point kept with probability m/n and scaled by ``sqrt(n/m)``).
    """

    name = "subsample"

    def __init__(self, size=100, replace=False):
        super().__init__(size)
        if not isinstance(replace, (bool, np.bool_)):
            raise InvalidParameterError(f"replace={replace!r} must be true or false")
        self.replace = bool(replace)

    @property
    def params(self):
        return {"size": self.size, "replace": self.replace}

    def draw(self, n, rng, *, X=None, kernel=None):
        m = self.size
        if not self.replace:
            _check_size(m, n)
            idx = np.sort(rng.choice(n, size=m, replace=False))
            return from_entries(n, m, np.arange(m), idx, np.full(m, np.sqrt(n / m)), {"name": self.name, **self.params})
        idx = rng.integers(0, n, size=m)
        return from_entries(n, m, np.arange(m), idx, np.full(m, np.sqrt(n / m)), {"name": self.name, **self.params})


class LeverageScoreSketch(_BaseSketch):
    """Sub-sampling with approximate ridge leverage scores (with replacement).

    The scores ``l_i(lam) = [K (K + n lam I)^{-1}]_ii`` are approximated from a
    uniform Nyström factor ``K ~ F F^T`` of ``n_approx`` columns:
    ``l_i ~ F_i (F^T F + n lam I)^{-1} F_i^T + (K_ii - ||F_i||^2) / (n lam)``.
    Row j of R is ``e_{i_j}^T / sqrt(m p_{i_j})`` with ``p = l / sum(l)``.

    Parameters
    ----------
    size : int
    lam : float, default 1e-3
        Ridge parameter of the leverage scores.
    n_approx : int, optional
        Columns of the uniform pre-sample (default ``min(n, 2 * size)``).
    """

    name = "leverage"

    def __init__(self, size=100, lam=1e-3, n_approx=None):
        super().__init__(size)
        self.lam = check_scalar(lam, "lam", low=0, low_inclusive=False)
        self.n_approx = None if n_approx is None else check_scalar(n_approx, "n_approx", kind=int, low=1)

    @property
    def params(self):
        return {"size": self.size, "lam": self.lam, "n_approx": self.n_approx}

    def scores(self, X, kernel, rng):
        """Approximate ridge leverage scores of the rows of X."""
        n = X.shape[0]
        q = min(n, self.n_approx or 2 * self.size)
        J = np.sort(rng.choice(n, size=q, replace=False))
        B = kernel_block(kernel, X, X[J])
        W = B[J]
        w, V = np.linalg.eigh(0.5 * (W + W.T))
        keep = w > max(w.max(), 0) * q * np.finfo(float).eps * 10
        F = B @ (V[:, keep] / np.sqrt(w[keep]))
        A = F.T @ F + n * self.lam * np.eye(F.shape[1])
        lev = np.einsum("ij,ij->i", F, np.linalg.solve(A, F.T).T)
        resid = np.clip(kernel_diag(kernel, X) - np.einsum("ij,ij->i", F, F), 0, None)
        return np.clip(lev + resid / (n * self.lam), 1e-300, None)

    def draw(self, n, rng, *, X=None, kernel=None):
        if X is None or kernel is None:
            raise InvalidParameterError("the leverage-score sketch needs the training data and the kernel to draw")
        lev = self.scores(X, kernel, rng)
        p = lev / lev.sum()
        m = self.size
        idx = rng.choice(n, size=m, replace=True, p=p)
        return from_entries(n, m, np.arange(m), idx, 1.0 / np.sqrt(m * p[idx]), {"name": self.name, **self.params})


class GaussianSketch(_BaseSketch):
    """Dense Gaussian sketch, entries i.i.d. N(0, 1/m); s' = n (the kernel is evaluated everywhere)."""

    name = "gaussian"

    def draw(self, n, rng, *, X=None, kernel=None):
        m = self.size
        _check_size(m, n)
        mix = rng.standard_normal((m, n)) / np.sqrt(m)
        return SketchMatrix(n=n, indices=np.arange(n), mix=mix, info={"name": self.name, **self.params})


def _truncated_binomial_sampler(m, p):
    """Inverse-CDF table of Binomial(m, p) conditioned on being >= 1."""
    k = np.arange(1, m + 1)
    logpmf = gammaln(m + 1) - gammaln(k + 1) - gammaln(m - k + 1) + k * np.log(p) + (m - k) * np.log1p(-p) if p < 1 else None
    if logpmf is None:  # p == 1: every entry is non-zero
        cdf = np.zeros(m)
        cdf[-1] = 1.0
        return cdf
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
    """p-sparsified sketch (seed 002 Def. 5): entries ``B_ij R_ij / sqrt(m p)``, B ~ Bernoulli(p).

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
        (the value used for rf1 in seed 002 Table 2).
    distribution : {"rademacher", "gaussian"}
    """

    def __init__(self, size=100, p=None, distribution="rademacher"):
        super().__init__(size)
        if p is not None:
            p = check_scalar(p, "p", low=0, high=1, low_inclusive=False,
                             fix="p is the probability that an entry of the sketch is non-zero; use a value in (0, 1] such as 20/n")
        self.p = p
        if distribution not in ("rademacher", "gaussian"):
            raise InvalidParameterError(f"distribution={distribution!r}; use 'rademacher' (p-SR) or 'gaussian' (p-SG)")
        self.distribution = distribution

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


class AccumulationSketch(_BaseSketch):
    """Accumulation sketch (Chen & Yang 2021; thesis Def. 2.33).

    The sum of ``n_terms`` independent signed sub-sampling sketches, entries
    ``± 1 / sqrt(n_terms * m * p_i)`` with uniform ``p_i = 1/n``. It interpolates
    between Nyström (``n_terms=1``) and a Gaussian sketch (``n_terms -> inf``).

    Parameters
    ----------
    size : int
    n_terms : int, default 20
        The number m' of accumulated sub-sampling sketches.
    """

    name = "accumulation"

    def __init__(self, size=100, n_terms=20):
        super().__init__(size)
        self.n_terms = check_scalar(n_terms, "n_terms", kind=int, low=1)

    @property
    def params(self):
        return {"size": self.size, "n_terms": self.n_terms}

    def draw(self, n, rng, *, X=None, kernel=None):
        m, t = self.size, self.n_terms
        rows = np.tile(np.arange(m), t)
        cols = rng.integers(0, n, size=m * t)
        scale = np.sqrt(n / (t * m))
        values = np.where(rng.random(m * t) < 0.5, -scale, scale)
        return from_entries(n, m, rows, cols, values, {"name": self.name, **self.params})


class CountSketch(_BaseSketch):
    """CountSketch (thesis Def. 2.32): column j of R has a single ±1 in a uniformly drawn row; s' = n."""

    name = "countsketch"

    def draw(self, n, rng, *, X=None, kernel=None):
        m = self.size
        _check_size(m, n)
        rows = rng.integers(0, m, size=n)
        values = np.where(rng.random(n) < 0.5, -1.0, 1.0)
        return from_entries(n, m, rows, np.arange(n), values, {"name": self.name, **self.params})


class _FourierMap:
    def __init__(self, W, b):
        self.W = W
        self.b = b

    @property
    def rank(self):
        return int(self.W.shape[1])

    def transform(self, X, chunk_rows=None):
        Z = X @ self.W
        Z = np.asarray(Z) + self.b
        np.cos(Z, out=Z)
        Z *= np.sqrt(2.0 / self.W.shape[1])
        return Z


class RandomFourierFeatures(_BaseSketch):
    """Random Fourier features (Rahimi & Recht 2007; thesis §2.3.1): a data-independent feature map.

    ``z(x) = sqrt(2/m) cos(W^T x + b)`` with ``W ~ N(0, 2 gamma I)`` for the
    Gaussian kernel ``exp(-gamma ||x - y||^2)`` and a Cauchy ``W`` (scale gamma)
    for the Laplacian kernel ``exp(-gamma ||x - y||_1)``; ``b ~ U[0, 2 pi]``.
    Not of the ``R = S_mix S_sub`` form: models use :meth:`fit_features`.
    """

    name = "rff"
    feature_map = True

    def draw(self, n, rng, *, X=None, kernel=None):
        raise InvalidParameterError("random Fourier features are a feature map, not a sketch matrix; use fit_features")

    def fit_features(self, kernel, X, rng):
        """Draw the frequencies for ``kernel`` and return a map with ``transform(X)``."""
        params = dict(getattr(kernel, "params", None) or getattr(kernel, "_skframe_params", None) or {})
        kname = (getattr(kernel, "_skframe_name", None) or type(kernel).__name__).lower()
        gamma = float(params.get("gamma", getattr(kernel, "gamma", 1.0)))
        d, m = X.shape[1], self.size
        if "laplac" in kname:
            W = rng.standard_cauchy((d, m)) * gamma
        elif "gauss" in kname or "rbf" in kname:
            W = rng.standard_normal((d, m)) * np.sqrt(2.0 * gamma)
        else:
            raise InvalidParameterError(
                f"random Fourier features need a shift-invariant kernel (gaussian or laplacian), got {kname!r}"
            )
        b = rng.uniform(0, 2 * np.pi, size=m)
        return _FourierMap(W, b)
