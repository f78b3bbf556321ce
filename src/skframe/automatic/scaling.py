"""``scale="auto"`` (``--scale auto``): standardise a file's features when their spreads differ, keep them otherwise.

An isotropic kernel (Gaussian, Laplacian) weighs every feature by its spread: a feature whose
values spread 100 times wider than another's dominates the distances and the other is all
but ignored; the sketched kernel matrix then loses rank. On a 5 000-row file whose eight
features spread from 0.01 to 20 000 wide, the default fit unscaled has sketch rank 74 of
m = 142 and training R² 0.11; standardised, rank 142 and R² 0.88
(``benchmarks/bench_cli_defaults.py``, ``benchmarks/out/cli_defaults.json``). When the spreads
are alike, ``gamma="scale"`` already adapts the kernel to their common scale, and
standardising changes nothing but the meaning of a ``--kernel-param gamma`` chosen for the
raw features (the same features left in [0, 1], gamma = 2: test R² 0.85 unscaled, 0.005
standardised). So ``auto`` standardises dense features whose largest spread exceeds
:data:`SPREAD_RATIO` times the smallest and keeps everything else as it is: the embedded
data set (its published hyper-parameters are for its own scale), sparse features (counts or
indicators; standardising Bibtex's lowers the multi-label fit's example-based F1 from 0.245
to 0.230), molecules and graphs.
"""

from __future__ import annotations

import numpy as np

from skframe.core.preprocessing import constant_columns

__all__ = ["SPREAD_RATIO", "column_moments", "spread_ratio", "resolve_scale"]

#: Largest spread over smallest spread (standard deviations of the non-constant columns) from which ``auto``
#: standardises.
SPREAD_RATIO = 10.0


def column_moments(X, rows=65536):
    """Column means and standard deviations of X read in blocks of ``rows`` rows (two passes), and which columns are
    constant: ``(mean, std, constant)``.

    A column is constant by :func:`skframe.core.preprocessing.constant_columns`, the rule of
    :class:`~skframe.datasets.FeatureScaler`. X may be a memory map or a spill file: only one block of
    it is in memory at a time.
    """
    n, d = X.shape
    blocks = range(0, n, rows)
    mean = sum((np.asarray(X[i:i + rows], dtype=np.float64).sum(axis=0) for i in blocks), np.zeros(d)) / n
    sq = sum((((np.asarray(X[i:i + rows], dtype=np.float64) - mean) ** 2).sum(axis=0) for i in blocks), np.zeros(d))
    std = np.sqrt(sq / n)
    return mean, std, constant_columns(mean, std)


def spread_ratio(X, rows=65536):
    """Largest over smallest standard deviation of X's non-constant columns (1.0 with fewer than two), in blocks."""
    n, d = X.shape
    if n < 2 or d < 2:
        return 1.0
    _, std, constant = column_moments(X, rows)
    std = std[~constant]
    return float(std.max() / std.min()) if std.size >= 2 else 1.0


def resolve_scale(scale, X, *, embedded=False, sparse=None):
    """``--scale`` with ``auto`` resolved from the training features: ``(method, reason)``.

    Parameters
    ----------
    scale : {"auto", "none", "standard"}
    X : ndarray, sparse matrix, memory map or collection
        The training inputs (unscaled).
    embedded : bool
        True for the embedded data set.
    sparse : bool, optional
        True when the features come from a sparse format (LIBSVM) even though X is dense.
    """
    if scale != "auto":
        return scale, "--scale"
    if embedded:
        return "none", "auto: the embedded data set's hyper-parameters are for its own feature scale"
    if len(getattr(X, "shape", ())) != 2:
        return "none", "auto: molecules and graphs are not scaled"
    if sparse or hasattr(X, "toarray") or type(X).__module__.startswith("scipy.sparse"):
        return "none", "auto: sparse features keep their scale (--scale standard divides them by their spread)"
    ratio = spread_ratio(X)
    if ratio > SPREAD_RATIO:
        return "standard", (f"auto: the features' spreads differ {ratio:.3g}-fold (> {SPREAD_RATIO:g}): "
                            "standardised (--scale none keeps them)")
    return "none", (f"auto: the features' spreads are within {SPREAD_RATIO:g}-fold of each other ({ratio:.3g}): kept "
                    "(--scale standard standardises them)")
