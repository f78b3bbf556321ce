"""Sketched kernel SVM and other classifiers on ±1 label codes."""

from __future__ import annotations

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from skframe.constraints import HasMethods
from skframe.contract.collections import is_collection
from skframe.exceptions import InvalidInputError
from skframe.models._base import store_params, validate_X
from skframe.models._core import resolve_loss
from skframe.models._data import wrap_value_error
from skframe.models.machine._common import COMMON_CONSTRAINTS, MachineBase, finish_machine_class

__all__ = ["SketchedKernelClassifier"]


# The parameters shared by the machines (kernel ... backend) are written out word for word in the
# docstrings of SketchedKernelMachine, SketchedKernelClassifier and JointQuantileRegressor: the API
# reference reads the source. tests/models/test_estimator_checks.py keeps the three copies equal.
class SketchedKernelClassifier(ClassifierMixin, MachineBase):
    """Sketched kernel SVM: hinge loss (or any registered loss) on ±1 label codes.

    Binary problems fit one column with labels -1 (``classes_[0]``) and +1
    (``classes_[1]``); with more classes one column per class, one-vs-rest (the hinge
    loss is summed over the columns, so the columns are independent with ``M = I``).
    The default solver is the one the loss declares (its tag ``default_solver``), else Adam
    for a non-smooth loss such as the hinge.

    Parameters
    ----------
    kernel : str or kernel object, default="gaussian"
        Registered kernel name or an object with ``__call__(X, Y)``.
    kernel_params : dict, optional
        Parameters of the named kernel, e.g. ``{"gamma": 0.1}``.
    sketch : str, sketch object or None, default="psr"
        Registered sketch name (``"psr"``, ``"psg"``, ``"subsample"``, ``"gaussian"``,
        ``"accumulation"``, ``"countsketch"``, ``"leverage"``, ``"rff"``), a sketch object,
        or None / ``"none"`` for the exact model (features ``U D^{1/2}`` of the full Gram).
    sketch_size : int or "auto", default="auto"
        Number of rows m of the sketch; ``"auto"`` chooses it from the number of
        training points (:func:`skframe.compute.plan.auto_size_rule`, capped by what the fit's
        execution plan can hold; reported in ``sketch_info_["size_rule"]``). A size above n is clamped to n with a
        :class:`skframe.exceptions.SketchSizeWarning`.
    sketch_params : dict, optional
        Extra parameters of the named sketch, e.g. ``{"p": 0.005}``.
    warm_start : bool, default=False
        When True, a refit starts the solver from the previous weights ``weights_``
        (meaningful when the sketch is the same, i.e. with a fixed ``random_state``).
    memory_budget : int, str or None, default=None
        Bytes the fit may use beyond the data, e.g. ``"2GB"``; None takes half the memory
        available to the process. The features are kept in memory when they fit, else
        recomputed chunk by chunk on every pass; ``representation_`` says which
        (``"in-memory"`` or ``"streamed"``) and ``execution_`` how the fit ran and why
        (:mod:`skframe.compute.plan`). An impossible budget raises
        :class:`skframe.exceptions.MemoryBudgetError` before allocating.
    dtype : {"float64", "float32"}, default="float64"
        Precision of kernel blocks and kept features.
    backend : {"auto", "numpy", "cupy"}, default="auto"
        ``"auto"`` computes on an NVIDIA GPU when CuPy sees one and the fit is large enough to
        pay for the transfer, else on the CPU; ``"numpy"`` and ``"cupy"`` force one
        (``pip install "skframe[gpu]"``).
    loss : str or loss object, default="hinge"
        ``"hinge"`` (SVM) or a regression loss on the ±1 codes (e.g. ``"square"``).
    loss_params : dict, optional
    solver : str, solver object or None, default=None
        A registered solver name (``"closed-form"``, ``"lbfgs"``, ``"adam"``, ...) or
        object; None takes the loss's default solver.
    solver_params : dict, optional
    lam : float, sequence of float or "auto", default=1e-3
        Regularisation strength (a sequence: regularisation path, see
        :class:`SketchedKernelMachine`); ``"auto"``: chosen by 3-fold
        held-out loss, see :class:`SketchedKernelMachine`).
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


    _parameter_constraints = dict(COMMON_CONSTRAINTS, loss=[str, HasMethods("value", "gradient")],
                                  loss_params=[dict, None])

    def __init__(self, kernel="gaussian", *, kernel_params=None, sketch="psr", sketch_size="auto",
                 sketch_params=None, loss="hinge", loss_params=None, solver=None, solver_params=None, lam=1e-3,
                 warm_start=False, random_state=None, memory_budget=None, dtype="float64",
                 backend="auto"):
        store_params(self, locals())

    def _prepare_fit(self, X, y):
        loss, self.loss_spec_ = resolve_loss(self.loss, self.loss_params)
        if is_collection(X):
            X, y = validate_X(self, X, reset=True), np.asarray(y)
        else:
            X, y = wrap_value_error(
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
        return X, Y, loss, None

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


finish_machine_class(SketchedKernelClassifier, "Fit the classifier.",
                     "array-like of shape (n_samples,)\n            Class labels (at least two classes).")
