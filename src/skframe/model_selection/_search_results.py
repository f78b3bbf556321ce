"""``cv_results_`` of :class:`~skframe.model_selection.KernelSearchCV`, with scikit-learn's keys."""

from __future__ import annotations

import warnings

import numpy as np
from numpy.ma import MaskedArray
from scipy.stats import rankdata

__all__ = ["cv_results"]


# ----------------------------------------------------------------------------- cv_results_
def _param_arrays(candidates):
    """``param_<name>`` masked arrays (masked where a candidate lacks the parameter), as scikit-learn builds them."""
    n = len(candidates)
    names = []
    for cand in candidates:
        names.extend(name for name in cand if name not in names)
    out = {}
    for name in names:
        present = {i: cand[name] for i, cand in enumerate(candidates) if name in cand}
        try:
            arr = np.array(list(present.values()))
            dtype = arr.dtype if arr.dtype.kind != "U" and arr.ndim == 1 else object
        except ValueError:
            dtype = np.dtype(object)
        ma = MaskedArray(np.empty(n, dtype=dtype), mask=True)
        for i, value in present.items():
            ma[i] = value
        out[f"param_{name}"] = ma
    return out


def _mean_std(array):
    mean = np.average(array, axis=1)
    std = np.sqrt(np.average((array - mean[:, None]) ** 2, axis=1))
    return mean, std


def _rank(means):
    if np.isnan(means).all():
        return np.ones_like(means, dtype=np.int32)
    filled = np.where(np.isnan(means), np.nanmin(means) - 1, means)
    return rankdata(-filled, method="min").astype(np.int32, copy=False)


def cv_results(candidates, scores, fit_times, score_times):
    """``cv_results_`` with scikit-learn's keys, from (n_candidates, n_splits) arrays."""
    results = {}
    for key, array in (("fit_time", fit_times), ("score_time", score_times)):
        results[f"mean_{key}"], results[f"std_{key}"] = _mean_std(array)
    results.update(_param_arrays(candidates))
    results["params"] = candidates
    for k in range(scores.shape[1]):
        results[f"split{k}_test_score"] = scores[:, k].copy()
    mean, std = _mean_std(scores)
    if np.any(~np.isfinite(mean)):
        warnings.warn(f"One or more of the test scores are non-finite: {mean}", category=UserWarning, stacklevel=3)
    results["mean_test_score"], results["std_test_score"] = mean, std
    results["rank_test_score"] = _rank(mean)
    return results
