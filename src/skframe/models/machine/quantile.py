"""Joint quantile regression with the decomposable kernel ``k M``."""

from __future__ import annotations

import numpy as np

from skframe.constraints import Interval, Options
from skframe.core.output_matrices import quantile_matrix
from skframe.exceptions import InvalidInputError, InvalidParameterError
from skframe.metrics import pinball_loss
from skframe.models._base import store_params, validate_XY
from skframe.models._core import resolve_loss
from skframe.models._folds import CV_ORDERS
from skframe.models.machine._common import COMMON_CONSTRAINTS, MachineBase, finish_machine_class

__all__ = ["JointQuantileRegressor"]


# The parameters shared by the machines (kernel ... backend) are documented once, in
# skframe.models.machine._common.SHARED_PARAMETERS; the entry below stands in their place (see
# include_shared_parameters).
class JointQuantileRegressor(MachineBase):
    """Joint quantile regression with the decomposable kernel ``k M`` (El Ahmad et al., TMLR 2023, §2.2, Example 1).

    Fits one function per quantile level with the pinball loss (column j at level
    ``tau_j``) and the quantile output matrix ``M_ij = exp(-gamma_quantile (tau_i - tau_j)^2)``,
    which ties close levels together and limits crossings. ``predict`` returns one column
    per level in increasing order of level.

    Parameters
    ----------
    quantiles : sequence of float, default=(0.1, 0.3, 0.5, 0.7, 0.9)
        Levels in (0, 1); sorted increasingly by ``fit``.
    kernel, kernel_params, sketch, sketch_size, sketch_params, warm_start, memory_budget, dtype, backend
        The parameters every sketched kernel machine shares, documented in full in the class's rendered docstring.
    lam : float, sequence of float or "auto", default=1e-3
        Regularisation strength lambda > 0 (a sequence: regularisation path, see
        :class:`SketchedKernelMachine`); ``"auto"``: chosen by 3-fold
        held-out loss, see :class:`SketchedKernelMachine` and ``cv_order``).
    fit_intercept : bool, default=True
        Subtract each level's sample quantile of y before solving and add it back at
        prediction (``intercept_``).
    gamma_quantile : float, default=1.0
        The gamma of the quantile output matrix (0: all quantiles share one function
        shape; large: independent quantiles).
    solver : str, solver object or None, default=None
        None takes the pinball loss's default solver (its tag ``default_solver`` when the
        loss declares one, else Adam). The pinball loss is not smooth, so L-BFGS and the
        closed form do not apply.
    solver_params : dict, optional
        Parameters of the solver, e.g. ``{"epochs": 200, "learning_rate": 0.05}`` with
        ``solver="adam"``.
    random_state : int, RandomState or None
    cv_order : {"shuffle", "keep"}, default="shuffle"
        The folds of ``lam="auto"``, cut as in :class:`SketchedKernelMachine`.

    Attributes
    ----------
    quantiles_ : ndarray of shape (n_quantiles,)
        Levels in increasing order (the column order of ``predict``).
    coef_, X_fit_, weights_, output_matrix_, history_, stop_reason_, n_iter_, sketch_info_ :
        As in :class:`SketchedKernelMachine`.

    Examples
    --------
    >>> import numpy as np
    >>> from skframe.models import JointQuantileRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(300, 1)); y = np.sin(4 * X[:, 0]) + 0.3 * rng.normal(size=300)
    >>> model = JointQuantileRegressor(quantiles=[0.9, 0.1, 0.5], kernel_params={"gamma": 5.0},
    ...                                sketch_size=30, lam=1e-4, random_state=0).fit(X, y)
    >>> Q = model.predict(X)
    >>> Q.shape, model.quantiles_.tolist()
    ((300, 3), [0.1, 0.5, 0.9])
    >>> bool(np.mean(Q[:, 0] < Q[:, 2]) > 0.95)
    True
    """


    _parameter_constraints = dict(
        COMMON_CONSTRAINTS,
        quantiles=["array-like", Interval("real", 0, 1, closed="neither")],
        gamma_quantile=[Interval("real", 0, None)],
        fit_intercept=["boolean"],
        cv_order=[Options(*CV_ORDERS)],
    )

    def __init__(self, quantiles=(0.1, 0.3, 0.5, 0.7, 0.9), *, kernel="gaussian", kernel_params=None,
                 sketch="psr", sketch_size="auto", sketch_params=None, lam=1e-3, gamma_quantile=1.0,
                 solver=None, solver_params=None, fit_intercept=True, warm_start=False, random_state=None,
                 memory_budget=None, dtype="auto", backend="auto", cv_order="shuffle"):
        store_params(self, locals())

    def _prepare_fit(self, X, y):
        q = np.sort(np.atleast_1d(np.asarray(self.quantiles, dtype=np.float64)))
        if q.size and np.unique(q).size != q.size:
            raise InvalidParameterError(f"quantiles={list(self.quantiles)} has repeated levels; give distinct levels")
        loss, self.loss_spec_ = resolve_loss("pinball", {"quantiles": q.tolist()})
        X, Y, one_d = validate_XY(self, X, y)
        if Y.shape[1] != 1:
            raise InvalidInputError(
                f"JointQuantileRegressor needs one output per sample, got y of shape {np.shape(y)}"
            )
        M = quantile_matrix(q, float(self.gamma_quantile))
        self.quantiles_ = q
        return X, np.repeat(Y, q.size, axis=1), loss, M

    def _plan_loss(self):
        return resolve_loss("pinball", {"quantiles": [0.5]})[0]

    def predict(self, X):
        """Predicted quantiles, shape (n_samples, n_quantiles), columns in increasing level order."""
        return self._decision(X)

    def score(self, X, y):
        """Minus the mean joint pinball loss (higher is better), see :func:`skframe.metrics.pinball_loss`."""
        return -pinball_loss(np.asarray(y, dtype=np.float64).reshape(-1, 1), self.predict(X), self.quantiles_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.target_tags.multi_output = True  # predict has one column per quantile level
        tags.target_tags.single_output = False
        return tags


finish_machine_class(JointQuantileRegressor, "Fit the joint quantile model.",
                     "array-like of shape (n_samples,)\n            One real output per sample.")
