"""Sketched kernel classifiers: SVM (hinge), logistic and multinomial (probabilities), on ±1 label codes."""

from __future__ import annotations

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.utils._available_if import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from skframe.constraints import HasMethods, Interval, Options
from skframe.contract.collections import is_collection
from skframe.contract.tags import get_tags
from skframe.exceptions import InvalidInputError, InvalidParameterError
from skframe.models import _autotune
from skframe.models._base import store_params, validate_X
from skframe.models._core import resolve_loss
from skframe.models._data import wrap_value_error
from skframe.models._folds import CV_ORDERS
from skframe.models.machine import _alo, _calibration, _holdout
from skframe.models.machine._common import COMMON_CONSTRAINTS, MachineBase, finish_machine_class
from skframe.models.machine._labels import (
    class_probabilities,
    class_row_weights,
    encode_labels,
    row_codes,
    text_labels,
)

__all__ = ["SketchedKernelClassifier"]


# The parameters shared by the machines (kernel ... backend) are documented once, in
# skframe.models.machine._common.SHARED_PARAMETERS; the entry below stands in their place (see
# include_shared_parameters).
class SketchedKernelClassifier(ClassifierMixin, MachineBase):
    """Sketched kernel classifier: SVM (hinge), kernel logistic regression (logistic, multinomial), or any loss.

    Binary problems fit one column with labels -1 (``classes_[0]``) and +1
    (``classes_[1]``); with more classes one column per class, one-vs-rest for the losses summed
    over the columns (hinge, logistic: independent columns with ``M = I``). The ``multinomial``
    loss (softmax cross-entropy) fits one coupled problem on K columns, one per class, even for two
    classes. The labels may be of any type (strings, integers, booleans); ``classes_`` keeps them.
    The default solver is the one the loss declares (its tag ``default_solver``): ``dual-cd`` for the
    hinge, ``newton`` for the logistic and multinomial losses.

    ``predict_proba`` and ``predict_log_proba`` exist when the loss defines probabilities (logistic:
    ``1 / (1 + exp(-f))``, normalised over the one-vs-rest columns for more than two classes;
    multinomial: ``softmax(f)``); ``predict`` is their argmax. With the hinge loss they are not
    available (``hasattr(clf, "predict_proba")`` is False); wrap the model in scikit-learn's
    ``CalibratedClassifierCV``, which calibrates ``decision_function`` on held-out folds.

    An ``"auto"`` sketch that the fit's ``lam`` would saturate (the effective dimension of a Nystrom probe of the
    auto size on at most 2 000 rows above 0.9 of its size: the sketch, not ``lam``, would regularise the model) is
    drawn four times larger within ``min(n, 1000)``, where the features still fit in memory;
    ``sketch_info_["grown_from"]``, ``["probe_saturation"]`` and ``["size_rule"]`` then say so. A given
    ``sketch_size`` and ``lam="auto"`` keep the auto size.

    Parameters
    ----------
    kernel, kernel_params, sketch, sketch_size, sketch_params, warm_start, memory_budget, dtype, backend
        The parameters every sketched kernel machine shares, documented in full in the class's rendered docstring.
    loss : str or loss object, default="hinge"
        ``"hinge"`` (SVM), ``"logistic"``, ``"multinomial"``, or a regression loss on the ±1 codes
        (e.g. ``"square"``).
    loss_params : dict, optional
    solver : str, solver object or None, default=None
        A registered solver name (``"closed-form"``, ``"lbfgs"``, ``"adam"``, ...) or
        object; None takes the loss's default solver.
    solver_params : dict, optional
    lam : float, sequence of float or "auto", default=1e-3
        Regularisation strength (a sequence: regularisation path, see
        :class:`SketchedKernelMachine`); ``"auto"``: chosen on the grid ``1e-8 ... 1e-1`` by ``lam_criterion``.
    lam_criterion : {"auto", "alo", "holdout", "kfold"}, default="auto"
        How ``lam="auto"`` scores the grid. ``"alo"``: one warm-started λ path on all rows, each λ scored by the
        mean approximate leave-one-out loss from the solution's Hessian (one Newton step per left-out row:
        :mod:`skframe.models.machine._alo`); it applies to the logistic and multinomial losses with the features in
        memory (the multinomial up to 3 000 features x classes), and the calibration reuses the chosen λ's values.
        ``"holdout"``: one warm-started path on all rows but a held-out share (a tenth, stratified by class, seed
        0), each λ scored by the held-out rows' mean loss (:mod:`skframe.models.machine._holdout`); above 100 000
        rows the path runs on a stratified sample of 100 000 of them (the final fit on every row); the calibration
        reuses the held-out values. ``"kfold"`` (and the other cases, which ``fit_info_["lam"]["reason"]``
        then names, among them ``cv_order="keep"``: rows in time order are not exchangeable): the mean held-out
        loss of 3 folds, stratified by class (see ``cv_order``), each fold a path of its own. ``"auto"``: ALO where
        the Newton solver forms the Hessian anyway (the execution plan's rule), the held-out share where it does
        not (many rows: leave-one-out would form it at every λ), where the features stream or where the
        multinomial's Hessian is too large to invert, the folds where neither applies; ``["criterion_rule"]`` says
        why. ``fit_info_["lam"]["lam_criterion"]`` names the criterion used and ``["folds"]`` the folds
        (``"none (approximate leave-one-out on all N rows)"`` for ALO); a λ at an end of the grid is named in
        ``["edge"]`` and warned about (``LamAtEdgeWarning``).
    random_state : int, RandomState or None
    class_weight : None, "balanced" or dict, default=None
        Weight of each class in the data term: ``"balanced"`` gives class c the weight
        ``n / (n_classes n_c)``, a dict maps labels to weights (1 for the others). Multiplied
        with the ``sample_weight`` given to ``fit``.
    calibration : None, "sigmoid" or "lapse", default=None
        With ``loss="logistic"``: map each column's decision value f to ``P(+1) = eps + (1 - 2 eps)
        sigma(a f + b)``, fitted by weighted likelihood on approximate leave-one-out decision values of at most
        5 000 rows (no refit; the Newton solver's Hessian reused). ``"sigmoid"``: Platt's map (``eps = 0``);
        ``"lapse"``: with a lapse rate ``eps`` (the share of randomly flipped labels, which caps how sure a
        prediction may be). A map is kept only where it saves log-loss on held-out fifths of those values (fitted
        on the other four) by two standard errors; else the column keeps ``sigma(f)``. ``calibration_`` holds the
        map; ``decision_function`` returns ``a f + b`` and ``predict`` stays the argmax of ``predict_proba``.
    cv_order : {"shuffle", "keep"}, default="shuffle"
        The folds of ``lam="auto"`` by k folds: ``"shuffle"`` cuts them from the rows
        shuffled with ``random_state`` and stratified by class (each fold holds every class in about its share;
        shuffled only where a class has fewer rows than folds); ``"keep"`` cuts consecutive blocks of rows in the
        given order (rows ordered in time), and then replaces ``lam_criterion="alo"`` too (leaving one row out
        treats the rows as exchangeable). ``fit_info_["lam"]["folds"]`` names the folds used.
    max_classes : int or None, default=None
        The most classes ``fit`` accepts: more raise :class:`~skframe.exceptions.InvalidInputError` before any
        work (a fit's cost grows with the square of the class count K: the Newton solver forms K (K + 1) / 2 Gram
        products per pass). None: the ``classes`` limit of :mod:`skframe.limits` (1 000, environment variable
        ``SKFRAME_MAX_CLASSES``); ``skframe fit`` refuses more than ``--max-classes``, 50, before reading the
        features (:func:`skframe.preprocessing.targets.check_target`).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    held_out_ : dict or None
        With ``lam="auto"`` chosen by ``"alo"``: the classification metrics (:func:`skframe.metrics.classifier_report`)
        of every training row's approximate leave-one-out probabilities at the chosen λ, ``{"method", "lam",
        "rows", "metrics"}``: a held-out estimate without a second fit (slightly optimistic: λ minimises the same
        values); else None.
    calibration_ : dict
        With ``calibration``: ``method``, per column ``slope`` (a), ``offset`` (b), ``lapse`` (eps), whether the
        map was ``kept`` and its ``held_out_gain`` (log-loss saved, z), the number of ``rows`` whose held-out
        values fitted them.
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


    _grows_saturated_sketch = True  # an "auto" sketch saturated at lam is grown once (models/_grow.py)
    _parameter_constraints = dict(COMMON_CONSTRAINTS, loss=[str, HasMethods("value", "gradient")],
                                  loss_params=[dict, None], class_weight=[Options("balanced"), dict, None],
                                  calibration=[Options(*_calibration.METHODS), None],
                                  cv_order=[Options(*CV_ORDERS)], max_classes=[Interval("int", 2, None), None],
                                  lam_criterion=[Options(*_alo.CRITERIA)])

    def __init__(self, kernel="gaussian", *, kernel_params=None, sketch="psr", sketch_size="auto",
                 sketch_params=None, loss="hinge", loss_params=None, solver=None, solver_params=None, lam=1e-3,
                 warm_start=False, random_state=None, memory_budget=None, dtype="auto",
                 backend="auto", class_weight=None, calibration=None, cv_order="shuffle", max_classes=None,
                 lam_criterion="auto"):
        store_params(self, locals())

    @staticmethod
    def _fold_labels(Y):
        """The class of each row of the ±1 targets the solver fits: what the folds of ``lam="auto"`` stratify on."""
        return row_codes(Y)

    def _fit_weights(self, sample_weight, Y):
        weights = MachineBase._fit_weights(self, sample_weight, Y)
        per_class = class_row_weights(self.class_weight, self.classes_, row_codes(Y))
        if per_class is None:
            return weights
        weights = per_class if weights is None else weights * per_class
        return MachineBase._fit_weights(self, weights, Y)  # checked again: e.g. every weight zero

    def _new_fit(self, X, y, progress=None, sample_weight=None):
        fit = MachineBase._new_fit(self, X, y, progress=progress, sample_weight=sample_weight)
        if hasattr(self, "calibration_"):  # a previous fit's map no longer describes this one
            del self.calibration_
        if self.calibration is not None:
            loss = fit.recipe.loss
            if not _calibration.calibration_applies(loss):
                raise InvalidParameterError(
                    f"calibration={self.calibration!r} maps the decision values of loss='logistic' (one "
                    f"independent column per class); loss={getattr(loss, 'name', self.loss)!r} has no such "
                    "columns: use loss='logistic', or calibration=None")
            method = self.calibration
            fit.recipe.finish = lambda f, est, res: _calibration.calibrate(f, est, res, method)
        self.held_out_ = None
        if _autotune.is_auto(self.lam):
            fit.choose_lam = lambda: _choose_lam(fit, self.lam_criterion)  # this fit's own choice of lam="auto"
        if _autotune.is_auto(self.lam) and self.lam_criterion != "kfold":
            calibrate = fit.recipe.finish

            def finish(f, est, res):  # the calibration map first: the held-out probabilities go through it
                if calibrate is not None:
                    calibrate(f, est, res)
                _alo.held_out_report(f, est)
            fit.recipe.finish = finish
        return fit

    def _prepare_fit(self, X, y):
        loss, self.loss_spec_ = resolve_loss(self.loss, self.loss_params)
        if is_collection(X):
            X, y = validate_X(self, X, reset=True), np.asarray(y)
        else:
            X, y = wrap_value_error(
                validate_data, self, X, y, reset=True, accept_sparse="csr", dtype=np.float64, ensure_min_samples=1
            )
        labels = text_labels(y)  # text labels compared in C (classes_ stay Python strings, as given)
        try:
            check_classification_targets(labels)
        except ValueError as exc:
            raise InvalidInputError(f"{exc} (y must hold class labels)") from exc
        # more classes than max_classes are refused before the n x K targets are made
        classes, _, Y = encode_labels(labels, get_tags(loss, "loss").one_of_k, self.max_classes)
        self.classes_ = classes.astype(object) if labels is not y else classes
        return X, Y, loss, None

    def decision_function(self, X):
        """Scores: shape (n_samples,) for two classes (positive means ``classes_[1]``), else (n_samples, n_classes).

        For the multinomial loss with two classes the score is ``f_1 - f_0`` (the log-odds).
        """
        F = self._decision(X)
        if getattr(self, "calibration_", None) is not None:
            F = _calibration.calibrated_logits(F, self.calibration_)
        if F.shape[1] == 2 and self.classes_.size == 2:
            return F[:, 1] - F[:, 0]
        return F[:, 0] if F.shape[1] == 1 else F

    def predict(self, X):
        """Predicted class labels, shape (n_samples,) (the argmax of :meth:`predict_proba` when it exists)."""
        if getattr(self, "calibration_", None) is not None and self.classes_.size > 2:
            return self.classes_[np.argmax(self.predict_proba(X), axis=1)]  # columns with their own lapse rates
        F = self.decision_function(X)
        if F.ndim == 1:
            return self.classes_[(F > 0).astype(int)]
        return self.classes_[np.argmax(F, axis=1)]

    def _has_probabilities(self):
        loss = getattr(self, "loss_", None)
        if loss is None:
            loss = resolve_loss(self.loss, self.loss_params)[0]
        return callable(getattr(loss, "probabilities", None))

    @available_if(_has_probabilities)
    def predict_proba(self, X):
        """Class probabilities, shape (n_samples, n_classes), columns in the order of ``classes_``.

        Available when the loss defines probabilities (``logistic``, ``multinomial``); for the hinge
        loss use scikit-learn's ``CalibratedClassifierCV``.
        """
        F = self._decision(X)  # refuses an unfitted model first
        return class_probabilities(self.loss_, F, getattr(self, "calibration_", None))

    @available_if(_has_probabilities)
    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba` (``-inf`` where a probability underflows to 0)."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))


    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = True
        return tags


def _choose_lam(fit, criterion):
    """``lam="auto"``: by approximate leave-one-out on one path (``criterion="alo"``, :func:`_alo.choose_lam_alo`),
    by a held-out share on one path (``"holdout"``, :func:`_holdout.choose_lam_holdout`), as
    :func:`_holdout.auto_criterion` decides (``"auto"``), else, or where ALO does not apply (the reason added to
    theirs), by the k folds of :meth:`Fit.choose_lam`. ``fit.auto_info["lam"]["lam_criterion"]`` names the criterion
    used (``"alo"``, ``"holdout"`` or ``"kfold"``), ``["folds"]`` the folds and, for ``"auto"``,
    ``["criterion_rule"]`` why that criterion."""
    rule = None
    if criterion == "auto":
        criterion, rule = _holdout.auto_criterion(fit)
    info = None
    if criterion == "holdout":
        lam, info = _holdout.choose_lam_holdout(fit, _autotune.KFOLD_LAMS)
    elif criterion == "alo":
        lam, info = _alo.choose_lam_alo(fit, _autotune.KFOLD_LAMS)
        if lam is None:
            lam, info = _kfold(fit, f"not approximate leave-one-out: {info}")
    else:
        lam, info = _kfold(fit, None if rule is None else f"neither leave-one-out nor a held-out share: {rule}")
    if rule is not None:
        info["criterion_rule"] = rule
    fit.auto_info["lam"] = info
    return lam


def _kfold(fit, why):
    """``(lam, info)`` of the k folds (:meth:`Fit.choose_lam`), ``why`` (the other criterion's refusal) in the
    reason."""
    lam = type(fit).choose_lam(fit)
    chosen = fit.auto_info["lam"]
    chosen["lam_criterion"] = "kfold"
    if why is not None:
        base, at_edge, edge = chosen["reason"].partition("; at the ")  # the grid-end note stays last
        chosen["reason"] = f"{base} ({why}){at_edge}{edge}"
    return lam, chosen


finish_machine_class(SketchedKernelClassifier, "Fit the classifier.",
                     "array-like of shape (n_samples,)\n            Class labels of any type (at least two classes).")
