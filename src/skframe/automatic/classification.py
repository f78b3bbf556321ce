"""The automatic model's classification decisions (``task="classification"``, ``--task classification``): the
rules that read targets as class labels, the loss and calibration chosen for them, and the metrics.

The task fits :class:`skframe.models.SketchedKernelClassifier` through the machine task: with no ``--loss``
(or ``--loss square``) it takes ``logistic`` for two
classes and ``multinomial`` for more; ``--class-weight balanced`` weighs the classes by ``n / (K n_c)``;
``--calibration`` (``lapse`` by default with the logistic loss) maps its scores to probabilities.
The metrics are :func:`skframe.metrics.classifier_report`'s: accuracy, balanced accuracy, and, for a loss that
gives probabilities, log-loss and ROC AUC (one-vs-rest averaged over the classes for more than two); the
confusion matrix (rows: true classes, columns: predicted, in the order of ``classes``); test rows of a class the
training data never had are errors in the accuracies, counted in ``unseen_classes`` and left out of the rest.
"""

from __future__ import annotations

import numpy as np

from skframe.contract.registry import get_loss
from skframe.deps import require
from skframe.exceptions import InvalidParameterError
from skframe.metrics import classifier_report

__all__ = ["save_plots", "looks_like_classes", "looks_like_labels", "numbers_reason", "class_limit", "AUTO_RULE",
           "AUTO_TEXT_RULE", "AUTO_MAX_CLASSES", "AUTO_CALIBRATION", "AUTO_MAX_CLASS_SHARE", "calibration_for",
           "choose_loss", "classification_metrics",
           "probability_columns", "CLASSIFICATION_LOSSES"]

#: the losses --task classification accepts (the others are regression losses)
CLASSIFICATION_LOSSES = ("logistic", "multinomial", "hinge")


#: the most distinct integers ``--task auto`` reads as classes
AUTO_MAX_CLASSES = 10
#: and the most distinct integers per training row (one per 20 rows: 20 rows a class on average); two always
AUTO_MAX_CLASS_SHARE = 0.05
#: the rule of ``--task auto`` for class labels, as printed in the report
AUTO_RULE = ("a single target column of 2 to {max} distinct integers, at most one per 20 rows unless two, each "
             "seen at least twice, and no --loss, --solver, --quantiles or --output-matrix")
#: the rule of ``--task auto`` for labels given as text
AUTO_TEXT_RULE = "a single target column with no number in it: text labels such as yes/no or species names"


def class_limit(n_rows):
    """The most distinct integers ``--task auto`` reads as the classes of ``n_rows`` rows: 2 to
    :data:`AUTO_MAX_CLASSES`, at most :data:`AUTO_MAX_CLASS_SHARE` of the rows (two classes at any size).

    >>> class_limit(30), class_limit(100), class_limit(500)
    (2, 5, 10)
    """
    return max(2, min(AUTO_MAX_CLASSES, int(AUTO_MAX_CLASS_SHARE * n_rows + 1e-9)))


def distinct_labels(Y):
    """The sorted distinct values of one column of labels ``Y`` (text compared as a NumPy string array: on 10^6 text
    labels 0.3 s instead of 1.2 s, see :func:`skframe.models.machine._labels.text_labels`).

    >>> distinct_labels(np.array([["b"], ["a"], ["b"]], dtype=object)).tolist()
    ['a', 'b']
    """
    from skframe.models.machine._labels import text_labels  # lazy: the kernel machines load SciPy

    return np.unique(text_labels(np.asarray(Y).reshape(-1)))


def looks_like_labels(Y):
    """``--task auto``: whether the targets are one column of text labels (:data:`AUTO_TEXT_RULE`): the reason,
    or None."""
    Y = np.asarray(Y)
    if Y.dtype.kind not in "OUS" or Y.ndim == 2 and Y.shape[1] != 1:
        return None
    n_classes = int(distinct_labels(Y).size)
    return f"auto: {n_classes} classes ({AUTO_TEXT_RULE}); --task regression needs a numeric target"


def _integer_classes(Y):
    """``(classes, detail)``: whether numeric targets are class labels under :data:`AUTO_RULE`, and what decided.
    """
    Y = np.asarray(Y.toarray() if hasattr(Y, "toarray") else Y)
    if Y.ndim == 2 and Y.shape[1] != 1:
        return False, f"{Y.shape[1]} target columns"
    y = Y.reshape(-1)
    if y.dtype.kind == "b":
        y = y.astype(np.int8)
    if y.dtype.kind == "f" and not (np.all(np.isfinite(y)) and np.all(y == np.round(y))):
        return False, "values that are not whole numbers"
    values, counts = np.unique(y, return_counts=True)
    limit = class_limit(y.size)
    if values.size < 2:
        return False, "a single value"
    if values.size > limit:
        why = f"at most {limit}" + ("" if limit == AUTO_MAX_CLASSES else ", one per 20 rows")
        return False, f"{values.size} distinct whole numbers in {y.size} rows (class labels: {why})"
    once = int(np.sum(counts < 2))
    if once:
        return False, f"{values.size} distinct whole numbers, {once} of them seen once (class labels: twice or more)"
    return True, f"{values.size} classes"


def looks_like_classes(Y):
    """``--task auto``: whether one target column holds class labels (:data:`AUTO_RULE`): the reason, or None."""
    Y = np.asarray(Y)
    if Y.dtype.kind not in "iufb":
        return None
    classes, detail = _integer_classes(Y)
    if not classes:
        return None
    return f"auto: {detail} ({AUTO_RULE.format(max=AUTO_MAX_CLASSES)}); --task regression fits numbers"


def numbers_reason(Y):
    """``--task auto`` on numeric targets that are not class labels: why they are fitted as numbers."""
    _, detail = _integer_classes(Y)
    return f"auto: {detail}, so numbers; --task classification fits one column as class labels"


def choose_loss(opts, Y):
    """Set ``opts.loss`` for ``--task classification`` from the labels ``Y``; returns the reason (or None)."""
    given = (opts.loss or "square").strip().lower()
    n_classes = int(distinct_labels(Y).size)
    if given == "square":
        opts.loss = "logistic" if n_classes == 2 else "multinomial"
        cal = calibration_for(getattr(opts, "calibration", None), opts.loss)
        return (f"classification: {n_classes} classes, --loss {opts.loss} (probabilities"
                + (f", calibrated: --calibration {cal})" if cal else ")"))
    if given not in CLASSIFICATION_LOSSES:
        raise InvalidParameterError(f"--task classification fits a classification loss "
                                    f"({', '.join(CLASSIFICATION_LOSSES)}), not --loss {opts.loss}")
    return None


#: the calibration the automatic model gives a loss that can be calibrated (the estimators' own default is None)
AUTO_CALIBRATION = "lapse"


def calibration_for(given, loss_name):
    """The classifier's ``calibration`` for ``calibration`` / ``--calibration``: None (the default) gives
    :data:`AUTO_CALIBRATION` to a loss that can be calibrated
    (:func:`skframe.models.machine.calibration_applies`, the classifier's own rule), none to the others."""
    from skframe.models.machine import calibration_applies  # lazy: the kernel machines load SciPy's optimizers

    applies = calibration_applies(get_loss(loss_name))
    if given is None:
        return AUTO_CALIBRATION if applies else None
    if given == "none":
        return None
    if not applies:
        raise InvalidParameterError(f"--calibration {given} maps the scores of --loss logistic (two classes by "
                                    f"default), not --loss {loss_name}; leave --calibration out")
    return given


def classification_metrics(model, X, y, y_pred):
    """Accuracy, balanced accuracy, log-loss and ROC AUC (when the loss gives probabilities), confusion matrix, and
    the labels the model never saw (:func:`skframe.metrics.classifier_report`)."""
    P = model.predict_proba(X) if hasattr(model, "predict_proba") else None
    return classifier_report(y, y_pred, model.classes_, P)


def probability_columns(est, names):
    """``skframe predict --proba``: the header of the probability columns, ``target=class`` per class.

    Refuses, with the fix, a model without probabilities (a regressor, or the hinge loss).
    """
    if not hasattr(est, "predict_proba"):
        raise InvalidParameterError(f"--proba needs a classifier whose loss gives probabilities (fit with --task "
                                    f"classification, or --loss logistic or multinomial); this model is "
                                    f"{type(est).__name__} with loss {getattr(est, 'loss', None)!r}")
    base = names[0] if names else "y"
    if names is None:
        return None
    return [f"{base}={_label(c)}" for c in est.classes_]


def _label(c):
    c = c.item() if isinstance(c, np.generic) else c
    return f"{c:g}" if isinstance(c, float) else str(c)


def save_plots(model, X, Y, path):
    """``--png``: ROC curves (one-vs-rest) and a reliability diagram of ``model`` on ``(X, Y)``; returns the path."""
    if not hasattr(model, "predict_proba"):
        raise InvalidParameterError("--png plots the probabilities of a classifier: fit with --task classification "
                                    "(or --loss logistic or multinomial)")
    matplotlib = require("matplotlib", "--png")  # an optional dependency (pip install "skframe[plot]")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazy: with matplotlib above
    from sklearn.metrics import roc_curve  # lazy: scikit-learn's metrics take ~0.3 s to import

    y = np.asarray(Y).reshape(-1)
    P, classes = model.predict_proba(X), model.classes_
    fig, (ax_roc, ax_cal) = plt.subplots(1, 2, figsize=(10, 4.5))
    for j in range(1 if classes.size == 2 else classes.size):
        k = 1 if classes.size == 2 else j
        if np.any(y == classes[k]) and np.any(y != classes[k]):
            fpr, tpr, _ = roc_curve(y == classes[k], P[:, k])
            ax_roc.plot(fpr, tpr, label=f"{_label(classes[k])}")
    ax_roc.plot([0, 1], [0, 1], "k:", lw=1)
    ax_roc.set(xlabel="false positive rate", ylabel="true positive rate", title="ROC (one-vs-rest)")
    ax_roc.legend(fontsize=8)
    conf, hit = P.max(axis=1), classes[np.argmax(P, axis=1)] == y
    edges = np.linspace(0, 1, 11)
    idx = np.clip(np.digitize(conf, edges[1:-1]), 0, 9)
    mids = [conf[idx == b].mean() for b in range(10) if np.any(idx == b)]
    accs = [hit[idx == b].mean() for b in range(10) if np.any(idx == b)]
    ax_cal.plot([0, 1], [0, 1], "k:", lw=1)
    ax_cal.plot(mids, accs, "o-")
    ax_cal.set(xlabel="confidence (top class)", ylabel="accuracy", title="calibration")
    fig.tight_layout()
    fig.savefig(str(path), dpi=100)
    plt.close(fig)
    return str(path)
