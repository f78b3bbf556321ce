"""Sketched kernel machines with any Lipschitz loss (seed 002 eq. 3, Prop. 1, §2.2).

The fit steps are those of every sketched model: draw the sketch, build the feature
map ``z(x) = D_r^{-1/2} U_r^T R k_x`` (seed 002 Prop. 1), then solve the linear problem

    min_W (1/n) sum_i l(z(x_i)^T W M, y_i) + (lam/2) tr(W M W^T)

with a registered solver, for a decomposable matrix-valued kernel ``k M`` (``M = I``
when no output matrix is given). Predictions are ``z(x)^T W M = k(x, X_sub) coef_``.
The exact (unsketched) model, ``sketch=None``, uses the same code with ``R = I``: the
features are ``Z = U D^{1/2}`` from the eigendecomposition of the full Gram matrix.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, MultiOutputMixin, RegressorMixin
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets

from .._validation import check_scalar
from ..exceptions import InvalidInputError, InvalidParameterError
from ..persistence import persistable
from ..protocols import kernel_prepare
from ..output_matrices import build_output_matrix, quantile_matrix
from ..registry import get_loss, get_solver
from ..sketching import SketchMatrix, build_feature_map, kernel_times
from ._base import KernelModelMixin, _wrap_value_error, resolve_kernel, resolve_sketch, validate_X, validate_XY

__all__ = ["SketchedKernelMachine", "SketchedKernelClassifier", "JointQuantileRegressor", "default_solver_name"]


def default_solver_name(loss):
    """Default solver for a loss: closed form for square, L-BFGS for smooth losses, Adam otherwise."""
    if getattr(loss, "name", None) == "square":
        return "closed-form"
    if getattr(loss, "smooth", False):
        return "lbfgs"
    return "adam"


def _resolve_loss(loss, loss_params):
    if loss is None:
        raise InvalidParameterError("loss=None; pass a registered loss name such as 'huber' or a loss object")
    return get_loss(loss, **dict(loss_params or {})) if isinstance(loss, str) else get_loss(loss)


def _resolve_solver(solver, solver_params, loss):
    params = dict(solver_params or {})
    if solver is None:
        solver = default_solver_name(loss)
    if isinstance(solver, str):
        return get_solver(solver, **params)
    if params:
        raise InvalidParameterError(f"solver_params={params} given with a solver object {solver!r}; set them on the object")
    if not hasattr(solver, "solve"):
        raise InvalidParameterError(f"solver={solver!r} has no solve(Z, Y, loss, lam) method; it is not a solver")
    return solver


def _run_solver(solver, Z, Y, loss, lam, M, rng, progress):
    """Call ``solver.solve``, forwarding per-iteration progress when both sides support it.

    A progress object with ``new_stage(description, total)`` (the CLI's progress bar) gets a
    second stage for the solver's epochs or iterations, advanced once per epoch/iteration by
    solvers that accept a ``progress`` keyword. A plain callable only counts kernel rows.
    """
    import inspect

    new_stage = getattr(progress, "new_stage", None)
    if new_stage is None or "progress" not in inspect.signature(solver.solve).parameters:
        return solver.solve(Z, Y, loss, lam, M=M, rng=rng)
    epochs = getattr(solver, "epochs", None)
    total = epochs or getattr(solver, "max_iter", None)
    new_stage(f"{getattr(solver, 'name', 'solver')} {'epochs' if epochs else 'iterations'}", total)
    return solver.solve(Z, Y, loss, lam, M=M, rng=rng, progress=progress)


class _MachineBase(KernelModelMixin, BaseEstimator):
    """Shared fit/predict of the sketched kernel machines."""

    def _fit_machine(self, X, Y, loss, M, progress=None):
        """Draw the sketch, build features, solve; store the fitted attributes. Y is (n, d)."""
        t0 = time.perf_counter()
        lam = check_scalar(self.lam, "lam", low=0, low_inclusive=False, fix="lam must be > 0, e.g. 1e-3")
        kernel = kernel_prepare(resolve_kernel(self.kernel, self.kernel_params), X)  # e.g. gamma='scale'
        sketch = resolve_sketch(self.sketch, self.sketch_size, self.sketch_params)
        solver = _resolve_solver(self.solver, self.solver_params, loss)
        rs = check_random_state(self.random_state)
        rng = np.random.default_rng(rs.randint(0, 2**31 - 1))
        solver_rng = np.random.default_rng(rs.randint(0, 2**31 - 1))
        n = X.shape[0]
        m = getattr(sketch, "size", None)
        if sketch is not None and m is not None and not getattr(sketch, "feature_map", False) and m > n:
            raise InvalidInputError(
                f"sketch_size={m} is larger than n_samples={n}; choose sketch_size <= n_samples "
                "(or sketch=None for the exact model)"
            )
        if sketch is None:  # exact model: R = I, Z = U D^{1/2}
            R = SketchMatrix(n=n, indices=np.arange(n), mix=sp.identity(n, format="csr"), info={"name": "none"})
            fmap, Z, _ = build_feature_map(kernel, X, R, progress=progress)
            info = {"name": "none", "m": n, "n": n, "s_prime": n, "rank": fmap.rank}
        else:
            fmap, Z, info = self._build_representation(X, kernel, sketch, rng, progress=progress)
        t_solve = time.perf_counter()
        W = _run_solver(solver, Z, Y, loss, lam, M, solver_rng, progress)
        WM = W if M is None else W @ M
        if hasattr(fmap, "proj"):  # f(x) = k(x, X_sub) @ proj @ W M
            self.coef_ = fmap.proj @ WM
            self.X_fit_ = fmap.X_sub
            self.feature_map_ = None
        else:  # explicit feature map (random Fourier features)
            self.coef_ = WM
            self.X_fit_ = None
            self.feature_map_ = fmap
        self.weights_ = W
        self.output_matrix_ = None if M is None else np.asarray(M)
        self.kernel_ = kernel
        self.loss_ = loss
        self.solver_ = solver
        self.sketch_info_ = info
        self.history_ = list(getattr(solver, "history_", []) or [])
        self.stop_reason_ = getattr(solver, "stop_reason_", None)
        self.n_iter_ = int(getattr(solver, "n_iter_", 0) or 0)
        self.n_outputs_ = Y.shape[1]
        self.solve_seconds_ = time.perf_counter() - t_solve
        self.fit_seconds_ = time.perf_counter() - t0
        return self

    def _decision(self, X):
        self._check_fitted()
        X = validate_X(self, X, reset=False)
        if self.feature_map_ is not None:
            return self.feature_map_.transform(X) @ self.coef_
        return kernel_times(self.kernel_, X, self.X_fit_, self.coef_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


_COMMON_PARAMS_DOC = """
    kernel : str or kernel object, default="gaussian"
        Registered kernel name or an object with ``__call__(X, Y)``.
    kernel_params : dict, optional
        Parameters of the named kernel, e.g. ``{"gamma": 0.1}``.
    sketch : str, sketch object or None, default="psr"
        Registered sketch name (``"psr"``, ``"psg"``, ``"subsample"``, ``"gaussian"``,
        ``"accumulation"``, ``"countsketch"``, ``"leverage"``, ``"rff"``), a sketch object,
        or None / ``"none"`` for the exact model (features ``U D^{1/2}`` of the full Gram).
    sketch_size : int, default=100
        Number of rows m of the sketch.
    sketch_params : dict, optional
        Extra parameters of the named sketch, e.g. ``{"p": 0.005}``.
"""


@persistable
class SketchedKernelMachine(MultiOutputMixin, RegressorMixin, _MachineBase):
    """Sketched kernel machine for regression with any convex Lipschitz loss.

    Minimises ``(1/n) sum_i l(f(x_i), y_i) + (lam/2) ||f||^2`` over the sketched
    vector-valued RKHS of the decomposable kernel ``k M`` (seed 002 eq. 3 and §2.2),
    through the feature map of seed 002 Prop. 1. The losses are the registered ones
    (``"square"``, ``"huber"``, ``"epsilon-svr"``, ``"epsilon-ridge"``, ``"pinball"``);
    for several outputs the robust losses act on the norm of the residual (thesis
    App. C.1). The solver defaults to the closed form for the square loss, L-BFGS for
    smooth losses and Adam otherwise.

    Parameters
    ----------
    <common parameters>
    loss : str or loss object, default="huber"
        Registered loss name or a :class:`skframe.protocols.Loss`.
    loss_params : dict, optional
        Parameters of the named loss, e.g. ``{"kappa": 1.0}``, ``{"epsilon": 0.1}``,
        ``{"quantiles": [0.5]}``.
    solver : {"closed-form", "lbfgs", "adam"}, solver object or None, default=None
        None picks the default for the loss (see above).
    solver_params : dict, optional
        E.g. ``{"epochs": 50, "batch_size": 128, "learning_rate": 0.01}`` for Adam.
    output_matrix : {"identity", "quantile", "graph", "covariance"}, array or None, default=None
        Output matrix M of the decomposable kernel (None: identity, d independent outputs);
        see :mod:`skframe.output_matrices`.
    output_matrix_params : dict, optional
        ``{"gamma": ...}`` for "quantile" (levels taken from a pinball loss),
        ``{"adjacency": array_or_path, "mu": 0.5}`` for "graph".
    lam : float, default=1e-3
        Regularisation strength lambda > 0 (objective ``... + (lam/2) ||f||^2``).
    random_state : int, RandomState or None
        Seed of the sketch draw and of the stochastic solver: same seed, same weights.

    Attributes
    ----------
    coef_ : ndarray of shape (s', d)
        ``f(x) = k(x, X_fit_) @ coef_`` (``coef_ = proj W M``).
    X_fit_ : ndarray or sparse matrix of shape (s', n_features)
    weights_ : ndarray of shape (r, d)
        The solution W of the feature-map problem.
    output_matrix_ : ndarray of shape (d, d) or None
    history_ : list of float
        Objective after each solver iteration / epoch.
    stop_reason_ : str
    n_iter_ : int
    sketch_info_ : dict
    loss_, solver_, kernel_ : component objects
    fit_seconds_ : float

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

    def __init__(
        self,
        kernel="gaussian",
        *,
        kernel_params=None,
        sketch="psr",
        sketch_size=100,
        sketch_params=None,
        loss="huber",
        loss_params=None,
        solver=None,
        solver_params=None,
        output_matrix=None,
        output_matrix_params=None,
        lam=1e-3,
        random_state=None,
    ):
        self.kernel = kernel
        self.kernel_params = kernel_params
        self.sketch = sketch
        self.sketch_size = sketch_size
        self.sketch_params = sketch_params
        self.loss = loss
        self.loss_params = loss_params
        self.solver = solver
        self.solver_params = solver_params
        self.output_matrix = output_matrix
        self.output_matrix_params = output_matrix_params
        self.lam = lam
        self.random_state = random_state

    def fit(self, X, y, progress=None):
        """Fit the model: draw the sketch, build the sketched features, solve.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        progress : callable, optional
            Called with a number of rows after each kernel block (progress bars).

        Returns
        -------
        self : SketchedKernelMachine
        """
        loss = _resolve_loss(self.loss, self.loss_params)
        if getattr(loss, "classification", False):
            raise InvalidParameterError(
                f"loss {getattr(loss, 'name', loss)!r} is a classification loss; use "
                "skframe.models.SketchedKernelClassifier for it"
            )
        X, Y, one_d = validate_XY(self, X, y)
        M = None
        if self.output_matrix is not None or self.output_matrix_params:
            quantiles = getattr(loss, "quantiles", None)
            M = build_output_matrix(self.output_matrix, Y, self.output_matrix_params, quantiles=quantiles)
        self._y_1d = one_d
        return self._fit_machine(X, Y, loss, M, progress=progress)

    def predict(self, X):
        """Predict targets for X.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_targets)
        """
        F = self._decision(X)
        return F[:, 0] if self._y_1d else F


@persistable
class SketchedKernelClassifier(ClassifierMixin, _MachineBase):
    """Sketched kernel SVM: hinge loss (or any registered loss) on ±1 label codes.

    Binary problems fit one column with labels -1 (``classes_[0]``) and +1
    (``classes_[1]``); with more classes one column per class, one-vs-rest (the hinge
    loss is summed over the columns, so the columns are independent with ``M = I``).
    The default solver for the hinge loss is Adam (it is not smooth).

    Parameters
    ----------
    <common parameters>
    loss : str or loss object, default="hinge"
        ``"hinge"`` (SVM) or a regression loss on the ±1 codes (e.g. ``"square"``).
    loss_params : dict, optional
    solver : {"closed-form", "lbfgs", "adam"}, solver object or None, default=None
    solver_params : dict, optional
    lam : float, default=1e-3
    random_state : int, RandomState or None

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_, X_fit_, weights_, history_, stop_reason_, n_iter_, sketch_info_ :
        As in :class:`SketchedKernelMachine`.

    Examples
    --------
    >>> import numpy as np
    >>> from skframe.models import SketchedKernelClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2)); y = np.where(X[:, 0] * X[:, 1] > 0, "a", "b")
    >>> clf = SketchedKernelClassifier(kernel_params={"gamma": 1.0}, sketch_size=40,
    ...                                lam=1e-4, random_state=0).fit(X, y)
    >>> float(clf.score(X, y)) > 0.9
    True
    """

    def __init__(
        self,
        kernel="gaussian",
        *,
        kernel_params=None,
        sketch="psr",
        sketch_size=100,
        sketch_params=None,
        loss="hinge",
        loss_params=None,
        solver=None,
        solver_params=None,
        lam=1e-3,
        random_state=None,
    ):
        self.kernel = kernel
        self.kernel_params = kernel_params
        self.sketch = sketch
        self.sketch_size = sketch_size
        self.sketch_params = sketch_params
        self.loss = loss
        self.loss_params = loss_params
        self.solver = solver
        self.solver_params = solver_params
        self.lam = lam
        self.random_state = random_state

    def fit(self, X, y, progress=None):
        """Fit the classifier.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Class labels (at least two classes).
        progress : callable, optional
            Called with a number of rows after each kernel block.

        Returns
        -------
        self : SketchedKernelClassifier
        """
        loss = _resolve_loss(self.loss, self.loss_params)
        from sklearn.utils.validation import validate_data

        X, y = _wrap_value_error(
            validate_data, self, X, y, reset=True, accept_sparse="csr", dtype=np.float64, ensure_min_samples=1
        )
        try:
            check_classification_targets(y)
        except ValueError as exc:
            raise InvalidInputError(f"{exc} (y must hold class labels)") from exc
        classes, codes = np.unique(y, return_inverse=True)
        if classes.size < 2:
            raise InvalidInputError(
                f"the classifier needs at least 2 classes in y, got 1 class ({classes[0]!r})"
            )
        if classes.size == 2:
            Y = np.where(codes == 1, 1.0, -1.0)[:, None]
        else:
            Y = -np.ones((codes.size, classes.size))
            Y[np.arange(codes.size), codes] = 1.0
        self.classes_ = classes
        return self._fit_machine(X, Y, loss, None, progress=progress)

    def decision_function(self, X):
        """Scores: shape (n_samples,) for two classes (positive means ``classes_[1]``), else (n_samples, n_classes)."""
        F = self._decision(X)
        return F[:, 0] if F.shape[1] == 1 else F

    def predict(self, X):
        """Predicted class labels, shape (n_samples,)."""
        F = self.decision_function(X)
        if F.ndim == 1:
            return self.classes_[(F > 0).astype(int)]
        return self.classes_[np.argmax(F, axis=1)]


@persistable
class JointQuantileRegressor(_MachineBase):
    """Joint quantile regression with the decomposable kernel ``k M`` (seed 002 §2.2, Example 1).

    Fits one function per quantile level with the pinball loss (column j at level
    ``tau_j``) and the quantile output matrix ``M_ij = exp(-gamma_quantile (tau_i - tau_j)^2)``,
    which ties close levels together and limits crossings. ``predict`` returns one column
    per level in increasing order of level.

    Parameters
    ----------
    quantiles : sequence of float, default=(0.1, 0.3, 0.5, 0.7, 0.9)
        Levels in (0, 1); sorted increasingly by ``fit``.
    <common parameters>
    lam : float, default=1e-3
        Regularisation strength lambda > 0.
    gamma_quantile : float, default=1.0
        The gamma of the quantile output matrix (0: all quantiles share one function
        shape; large: independent quantiles).
    solver : {"adam"} or solver object, default="adam"
        The pinball loss is not smooth, so L-BFGS and the closed form do not apply.
    solver_params : dict, optional
        Adam parameters, e.g. ``{"epochs": 200, "learning_rate": 0.05}``.
    random_state : int, RandomState or None

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

    def __init__(
        self,
        quantiles=(0.1, 0.3, 0.5, 0.7, 0.9),
        *,
        kernel="gaussian",
        kernel_params=None,
        sketch="psr",
        sketch_size=100,
        sketch_params=None,
        lam=1e-3,
        gamma_quantile=1.0,
        solver="adam",
        solver_params=None,
        random_state=None,
    ):
        self.quantiles = quantiles
        self.kernel = kernel
        self.kernel_params = kernel_params
        self.sketch = sketch
        self.sketch_size = sketch_size
        self.sketch_params = sketch_params
        self.lam = lam
        self.gamma_quantile = gamma_quantile
        self.solver = solver
        self.solver_params = solver_params
        self.random_state = random_state

    def fit(self, X, y, progress=None):
        """Fit the joint quantile model.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            One real output per sample.
        progress : callable, optional
            Called with a number of rows after each kernel block.

        Returns
        -------
        self : JointQuantileRegressor
        """
        q = np.sort(np.atleast_1d(np.asarray(self.quantiles, dtype=np.float64)))
        if q.size and np.unique(q).size != q.size:
            raise InvalidParameterError(f"quantiles={list(self.quantiles)} has repeated levels")
        loss = get_loss("pinball", quantiles=q.tolist())
        X, Y, one_d = validate_XY(self, X, y)
        if Y.shape[1] != 1:
            raise InvalidInputError(
                f"JointQuantileRegressor needs one output per sample, got y of shape {np.shape(y)}"
            )
        M = quantile_matrix(q, check_scalar(self.gamma_quantile, "gamma_quantile", low=0))
        self.quantiles_ = q
        return self._fit_machine(X, np.repeat(Y, q.size, axis=1), loss, M, progress=progress)

    def predict(self, X):
        """Predicted quantiles, shape (n_samples, n_quantiles), columns in increasing level order."""
        return self._decision(X)

    def score(self, X, y):
        """Minus the mean joint pinball loss (higher is better), see :func:`skframe.metrics.pinball_loss`."""
        from ..metrics import pinball_loss

        return -pinball_loss(np.asarray(y, dtype=np.float64).reshape(-1, 1), self.predict(X), self.quantiles_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.target_tags.multi_output = True  # predict has one column per quantile level
        tags.target_tags.single_output = False
        return tags


for _cls in (SketchedKernelMachine, SketchedKernelClassifier, JointQuantileRegressor):
    _cls.__doc__ = _cls.__doc__.replace("    <common parameters>\n", _COMMON_PARAMS_DOC.lstrip("\n"))
del _cls
