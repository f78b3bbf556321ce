"""The warnings of the automatic model's report (``report_["warnings"]``, printed by ``skframe fit``)."""

from __future__ import annotations

__all__ = ["fit_warnings"]

_EVALUATED = {"holdout": "held-out rows", "test": "test rows", "train": "training rows",
              "approximate leave-one-out": "training rows, each left out",
              "held-out share": "training rows held out of lam's path"}


def fit_warnings(report):
    """What the report must warn of: a classifier that predicts one class only on the rows evaluated
    (:func:`skframe.preprocessing.targets.one_class_warning`). A list of lines, maybe empty; sets the metrics'
    ``predicted_classes`` (``{label: rows}``, from the confusion matrix) of a classifier."""
    metrics = report.get("metrics") or {}
    classes, confusion = metrics.get("classes"), metrics.get("confusion_matrix")
    if not (isinstance(classes, list) and isinstance(confusion, list) and confusion
            and len(confusion[0]) == len(classes)):
        return []
    from skframe.preprocessing.targets import one_class_warning, predicted_counts  # lazy: loads scikit-learn

    predicted = metrics["predicted_classes"] = predicted_counts(classes=classes, confusion_matrix=confusion)
    line = one_class_warning(predicted, metrics.get("balanced_accuracy"),
                             _EVALUATED.get(report.get("evaluated_on"), "rows evaluated"))
    return [line] if line else []
