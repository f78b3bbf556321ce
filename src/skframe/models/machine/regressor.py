"""Sketched kernel machine for regression with any convex loss."""

from __future__ import annotations

from sklearn.base import MultiOutputMixin, RegressorMixin

from skframe.constraints import HasMethods, Options
from skframe.contract.tags import get_tags
from skframe.core.output_matrices import build_output_matrix
from skframe.exceptions import InvalidParameterError
from skframe.models._base import KernelRegressorMixin, store_params, validate_XY
from skframe.models._core import resolve_loss
from skframe.models._extrapolation import target_range
from skframe.models._folds import CV_ORDERS
from skframe.models.machine._common import COMMON_CONSTRAINTS, MachineBase, finish_machine_class

__all__ = ["SketchedKernelMachine"]


# The parameters shared by the machines (kernel ... backend) are documented once, in
# skframe.models.machine._common.SHARED_PARAMETERS; the entry below stands in their place (see
# include_shared_parameters).
class SketchedKernelMachine(KernelRegressorMixin, MultiOutputMixin, RegressorMixin, MachineBase):
    """Sketched kernel machine for regression with any convex Lipschitz loss.

    Minimises ``(1/n) sum_i l(f(x_i), y_i) + (lam/2) ||f||^2`` over the sketched
    vector-valued RKHS of the decomposable kernel ``k M`` (El Ahmad et al., "Fast Kernel
    Methods for Generic Lipschitz Losses via p-Sparsified Sketches", TMLR 2023, eq. 3 and
    §2.2), through the feature map of its Prop. 1. The losses are the registered ones
    (``"square"``, ``"huber"``, ``"epsilon-svr"``, ``"epsilon-ridge"``, ``"pinball"``);
    for several outputs the robust losses act on the norm of the residual (El Ahmad,
    PhD thesis, App. C.1). The solver defaults to the one the loss declares
    (its tag ``default_solver``), else the closed form for the square loss, L-BFGS for
    smooth losses and Adam otherwise.

    Parameters
    ----------
    kernel, kernel_params, sketch, sketch_size, sketch_params, warm_start, memory_budget, dtype, backend
        The parameters every sketched kernel machine shares, documented in full in the class's rendered docstring.
    loss : str or loss object, default="huber"
        Registered loss name or a :class:`skframe.contract.protocols.Loss`.
    loss_params : dict, optional
        Parameters of the named loss, e.g. ``{"kappa": 1.0}``, ``{"epsilon": 0.1}``,
        ``{"quantiles": [0.5]}``.
    solver : str, solver object or None, default=None
        A registered solver name (``"closed-form"``, ``"lbfgs"``, ``"adam"``, ...) or
        object; None takes the loss's default solver (see above).
    solver_params : dict, optional
        E.g. ``{"epochs": 50, "batch_size": 128, "learning_rate": 0.01}`` for Adam.
    output_matrix : {"identity", "quantile", "graph", "covariance"}, array or None, default=None
        Output matrix M of the decomposable kernel (None: identity, d independent outputs);
        see :mod:`skframe.core.output_matrices`.
    output_matrix_params : dict, optional
        ``{"gamma": ...}`` for "quantile" (levels taken from a pinball loss),
        ``{"adjacency": array_or_path, "mu": 0.5}`` for "graph".
    lam : float, sequence of float or "auto", default=1e-3
        Regularisation strength lambda > 0 (objective ``... + (lam/2) ||f||^2``). A
        sequence fits the regularisation path in the given order, each fit starting from
        the previous weights; the model keeps the last value (``lam_path_``, ``coef_path_``,
        ``objective_path_``). ``"auto"`` chooses lambda among 1e-8, 1e-7, ..., 1e-1 by
        the least mean held-out loss of 3 folds (``cv_order``; one representation per fold,
        the path solved warm-started from the largest value); ``fit_info_["lam"]`` holds
        the choice, the criterion, its curve and the folds.
    fit_intercept : bool, default=True
        Subtract a constant from the targets before solving and add it back at
        prediction (``intercept_``): the mean for the square loss, the median for
        Lipschitz losses, the level's quantile for the pinball loss.
    random_state : int, RandomState or None
        Seed of the sketch draw, of the stochastic solver and of the folds of ``lam="auto"``: same seed, same
        weights.
    cv_order : {"shuffle", "keep"}, default="shuffle"
        The folds of ``lam="auto"``: ``"shuffle"`` cuts them from the rows shuffled with ``random_state``;
        ``"keep"`` cuts consecutive blocks of rows in the given order (rows ordered in time).
        ``fit_info_["lam"]["folds"]`` names the folds used.

    Attributes
    ----------
    coef_ : ndarray of shape (s', d)
        ``f(x) = k(x, X_fit_) @ coef_`` (``coef_ = proj W M``).
    X_fit_ : ndarray or sparse matrix of shape (s', n_features)
    weights_ : ndarray of shape (r, d)
        The solution W of the feature-map problem.
    intercept_ : ndarray of shape (d,)
    output_matrix_ : ndarray of shape (d, d) or None
    history_ : list of float
        Objective after each solver iteration / epoch.
    stop_reason_ : str
    n_iter_ : int
    solver_info_ : dict
        What the solver reported beyond the weights (duality gap, ...).
    sketch_info_ : dict
        m, n, s', rank, ``size_rule`` of the drawn sketch.
        With features in memory, also ``effective_dimension``, ``sum_k s_k / (s_k + lam)`` over the
        eigenvalues ``s_k`` of the features' covariance at the fitted ``lam``, and ``saturation``, that
        over the number of features: near 1, the sketch, not ``lam``, regularises the model and a
        larger ``sketch_size`` may fit better.
    loss_, solver_, kernel_ : component objects
    kernel_spec_, sketch_spec_, loss_spec_, solver_spec_ : ComponentSpec or None
        Registered name and parameters of each component given by name.
    fit_seconds_ : float
    target_range_ : ndarray of shape (2, n_targets) or None
        The training targets' least and greatest values (None for Dask targets), which
        :meth:`extrapolation_report` flags predictions against (:mod:`skframe.models._extrapolation`).

    Examples
    --------
    >>> import numpy as np
    >>> from skframe.models import SketchedKernelMachine
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(200, 3)); y = np.sin(4 * X[:, 0])
    >>> y[:5] += 20  # outliers
    >>> model = SketchedKernelMachine(kernel_params={"gamma": 1.0}, sketch="psr", sketch_size=40,
    ...                               loss="huber", loss_params={"kappa": 0.5}, lam=1e-4,
    ...                               random_state=0).fit(X, y)
    >>> model.stop_reason_.startswith("converged")
    True
    >>> float(np.mean((model.predict(X[5:]) - y[5:]) ** 2)) < 0.05
    True
    """


    _parameter_constraints = dict(
        COMMON_CONSTRAINTS,
        loss=[str, HasMethods("value", "gradient")],
        loss_params=[dict, None],
        output_matrix=[str, "array-like", None],
        output_matrix_params=[dict, None],
        fit_intercept=["boolean"],
        cv_order=[Options(*CV_ORDERS)],
    )

    def __init__(self, kernel="gaussian", *, kernel_params=None, sketch="psr", sketch_size="auto",
                 sketch_params=None, loss="huber", loss_params=None, solver=None, solver_params=None,
                 output_matrix=None, output_matrix_params=None, lam=1e-3, fit_intercept=True, warm_start=False,
                 random_state=None, memory_budget=None, dtype="auto",
                 backend="auto", cv_order="shuffle"):
        store_params(self, locals())

    def _prepare_fit(self, X, y):
        loss, self.loss_spec_ = resolve_loss(self.loss, self.loss_params)
        if get_tags(loss, "loss").classification:
            raise InvalidParameterError(
                f"loss {getattr(loss, 'name', loss)!r} is a classification loss; use "
                "skframe.models.SketchedKernelClassifier for it"
            )
        X, Y, one_d = validate_XY(self, X, y)
        M = None
        if self.output_matrix is not None or self.output_matrix_params:
            quantiles = get_tags(loss, "loss").quantiles
            M = build_output_matrix(self.output_matrix, Y, self.output_matrix_params, quantiles=quantiles)
        self._y_1d = one_d
        self.target_range_ = target_range(Y)  # what extrapolation_report flags predictions against
        return X, Y, loss, M

finish_machine_class(SketchedKernelMachine, "Fit the model: draw the sketch, build the sketched features, solve.",
                     "array-like of shape (n_samples,) or (n_samples, n_targets)")
