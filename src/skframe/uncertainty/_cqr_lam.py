"""The regularisation of CQR's quantile models when it is ``lam="auto"``: one square-loss fit instead of a search.

Searching lambda for the pinball loss means solving an iterative problem for every value of a grid on every
fold (3 folds x 8 values with the first-order solvers: about 25 times the cost of the final fit, most of it at the
small values, where those solvers need the most iterations). CQR's coverage does not depend on lambda (the
conformal step widens whatever the quantile models give); only the widths do, and they are flat near the best
value. So the quantile models take the lambda of the square loss, chosen on the same training rows in closed form
(:class:`SketchedKernelRidge` with ``lam="auto"``: about the cost of one fit), moved to the pinball loss's scale.

The scale: near its minimum the expected pinball loss at a level behaves like ``f/2 (q - q_tau)^2``, with ``f``
the density of the noise at that quantile, where the square loss ``(1/n) sum (f(x) - y)^2 + lam ||f||^2`` of the
ridge has curvature 1 against ``(lam_pinball / 2) ||f||^2`` of the machines. The same balance of fit and
smoothness is ``lam_pinball = f lam_ridge``; ``f`` is taken at the median of a normal noise of the residuals'
robust scale ``s`` (1.4826 times their median absolute deviation): ``f = 1 / (s sqrt(2 pi))``.
"""

from __future__ import annotations

import math

import numpy as np

from skframe.models import SketchedKernelRidge

__all__ = ["SHARED_PARAMS", "needs_lam", "square_loss_lam"]

#: the parameters a JointQuantileRegressor and a SketchedKernelRidge share (the same kernel, sketch and seed)
SHARED_PARAMS = ("kernel", "kernel_params", "sketch", "sketch_size", "sketch_params", "random_state",
                 "memory_budget", "dtype", "backend", "fit_intercept")


def needs_lam(estimator):
    """Whether the quantile ``estimator`` would search its lambda (``lam="auto"``) with the square loss's
    parameters at hand (a kernel machine sharing :data:`SHARED_PARAMS`)."""
    params = estimator.get_params()
    lam = params.get("lam")
    return isinstance(lam, str) and lam.lower() == "auto" and all(k in params for k in SHARED_PARAMS)


def square_loss_lam(estimator, X, y):
    """``(lam, info)``: the lambda for the quantile ``estimator`` on the rows ``(X, y)`` (see the module docstring).

    Parameters
    ----------
    estimator : JointQuantileRegressor
        The unfitted quantile model (its kernel, sketch and seed are used).
    X : array-like or InputCollection
    y : ndarray of shape (n,)

    Returns
    -------
    lam : float
    info : dict
        ``{"chosen", "criterion", "ridge_lam", "scale", "reason"}`` (JSON values).
    """
    params = estimator.get_params()
    ridge = SketchedKernelRidge(**{k: params[k] for k in SHARED_PARAMS}, lam="auto").fit(X, y)
    ridge_lam = float(ridge.fit_info_["lam"]["chosen"])
    r = np.asarray(y, dtype=np.float64) - np.asarray(ridge.predict(X), dtype=np.float64).reshape(-1)
    scale = 1.4826 * float(np.median(np.abs(r - np.median(r))))
    if not math.isfinite(scale) or scale <= 0:  # an exact fit: no noise to scale by
        lam, how = ridge_lam, "the square loss's lambda as it is (the residuals have no spread)"
    else:
        lam = ridge_lam / (scale * math.sqrt(2 * math.pi))
        how = (f"the square loss's lambda {ridge_lam:.3g} times the noise density at the median, "
               f"1 / ({scale:.3g} sqrt(2 pi))")
    lam = min(max(lam, 1e-12), 1e3)
    return lam, {"chosen": lam, "criterion": "square loss", "ridge_lam": ridge_lam, "scale": scale,
                 "reason": f"{how}: one closed-form fit instead of a pinball-loss search"}
