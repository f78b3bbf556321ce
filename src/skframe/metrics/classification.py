"""Classification and multi-label metrics: accuracy, example-based F1, Hamming loss; a classifier's report
(:func:`classifier_report`: accuracy, balanced accuracy, log-loss, ROC AUC, confusion matrix, unseen labels)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from skframe.exceptions import InvalidInputError

__all__ = ["accuracy", "example_based_f1", "hamming_loss", "classifier_report"]


def _check_binary(Y, name):
    if sp.issparse(Y):
        Y = sp.csr_matrix(Y)
        vals = Y.data
    else:
        Y = np.asarray(Y)
        if Y.ndim == 1:
            Y = Y.reshape(-1, 1)
        if Y.ndim != 2:
            raise InvalidInputError(f"{name} must be a 2-D indicator matrix, got shape {Y.shape}")
        vals = Y
    if Y.shape[0] == 0:
        raise InvalidInputError(f"{name} is empty (shape {Y.shape})")
    if not np.all((vals == 0) | (vals == 1)):
        raise InvalidInputError(
            f"{name} must be a binary indicator matrix (0/1); threshold scores first, e.g. (scores > 0.5)"
        )
    return Y


def _pair_binary(Y_true, Y_pred):
    A = _check_binary(Y_true, "Y_true")
    B = _check_binary(Y_pred, "Y_pred")
    if A.shape != B.shape:
        raise InvalidInputError(
            f"Y_true has shape {A.shape} but Y_pred has shape {B.shape}; they must have the same samples and labels"
        )
    return A, B


def _row_sums(M):
    return np.asarray(M.sum(axis=1), dtype=np.float64).ravel()


def accuracy(y_true, y_pred):
    """Fraction of samples predicted exactly (subset accuracy for 2-D label matrices).

    One output: :func:`sklearn.metrics.accuracy_score` (imported on first use); label matrices:
    the same subset accuracy, computed directly (it accepts any label values per column).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,) or (n_samples, n_labels)

    Returns
    -------
    float

    Examples
    --------
    >>> accuracy([0, 1, 1, 0], [0, 1, 0, 0])
    0.75
    """
    if sp.issparse(y_true):
        y_true = y_true.toarray()
    if sp.issparse(y_pred):
        y_pred = y_pred.toarray()
    a, b = np.asarray(y_true), np.asarray(y_pred)
    if a.ndim == 1:
        a = a.reshape(-1, 1)
    if b.ndim == 1:
        b = b.reshape(-1, 1)
    if a.shape != b.shape or a.ndim != 2:
        raise InvalidInputError(f"y_true has shape {np.shape(y_true)} but y_pred has shape {np.shape(y_pred)}")
    if a.shape[0] == 0:
        raise InvalidInputError("y_true is empty; at least one sample is needed")
    if a.shape[1] == 1:
        from sklearn.metrics import accuracy_score  # lazy: sklearn.metrics adds ~0.1 s to importing the estimators

        return float(accuracy_score(a.ravel(), b.ravel()))
    # subset accuracy of label matrices (any values, not only 0/1 indicators)
    return float(np.mean(np.all(a == b, axis=1)))


def example_based_f1(Y_true, Y_pred):
    """Example-based F1 of multi-label predictions (the Bibtex experiments of El Ahmad et al.,
    *Sketch In, Sketch Out: Accelerating both Learning and Inference for Structured Prediction
    with Kernels*, AISTATS 2024).

    ``F1 = (1/n) Σ_i 2 |y_i ∩ ŷ_i| / (|y_i| + |ŷ_i|)``, with the convention that a sample
    whose true and predicted label sets are both empty scores 1. Equals
    ``sklearn.metrics.f1_score(Y_true, Y_pred, average="samples", zero_division=1)``.

    Parameters
    ----------
    Y_true, Y_pred : array-like or sparse matrix of shape (n_samples, n_labels)
        Binary indicator matrices.

    Returns
    -------
    float
        The mean of the per-sample F1 scores, in [0, 1].

    Examples
    --------
    >>> example_based_f1([[1, 1, 0], [0, 0, 0]], [[1, 0, 0], [0, 0, 0]])
    0.8333333333333333
    """
    A, B = _pair_binary(Y_true, Y_pred)
    if sp.issparse(A) or sp.issparse(B):
        inter = _row_sums(sp.csr_matrix(A).multiply(sp.csr_matrix(B)))
    else:
        inter = np.sum((A == 1) & (B == 1), axis=1).astype(np.float64)
    size = _row_sums(A) + _row_sums(B)
    f1 = np.ones_like(size)
    ok = size > 0
    f1[ok] = 2.0 * inter[ok] / size[ok]
    return float(np.mean(f1))


def hamming_loss(Y_true, Y_pred):
    """Fraction of wrong labels over all samples and labels.

    Computed by :func:`sklearn.metrics.hamming_loss` (imported on first use).

    Parameters
    ----------
    Y_true, Y_pred : array-like or sparse matrix of shape (n_samples, n_labels)
        Binary indicator matrices: entry (i, j) is 1 when sample i has label j.

    Returns
    -------
    float
        In [0, 1]; 0 when every label is right.

    Examples
    --------
    >>> hamming_loss([[1, 0], [0, 1]], [[1, 1], [0, 1]])
    0.25
    """
    # lazy: sklearn.metrics adds ~0.1 s to importing the estimators
    from sklearn.metrics import hamming_loss as _sk_hamming_loss

    A, B = _pair_binary(Y_true, Y_pred)
    if A.shape[1] == 1 and not (sp.issparse(A) or sp.issparse(B)):
        A, B = A.ravel(), B.ravel()
    else:
        A = sp.csr_matrix(A, dtype=np.int8) if sp.issparse(A) else np.asarray(A, dtype=np.int8)
        B = sp.csr_matrix(B, dtype=np.int8) if sp.issparse(B) else np.asarray(B, dtype=np.int8)
    return float(_sk_hamming_loss(A, B))


def _label_key(c):
    """A class label as a JSON key: ``2`` for the float 2.0, the text of a text label."""
    c = c.item() if isinstance(c, np.generic) else c
    return f"{c:g}" if isinstance(c, float) else str(c)


def _roc_auc(y, P, classes):
    """ROC AUC over the classes present in ``y`` (all of them among ``classes``); None under two classes.

    Two classes present: the binary AUC of the second one's share of the two probabilities; more: one-vs-rest
    averaged, the probabilities of the present classes renormalised.
    """
    from sklearn.metrics import roc_auc_score  # lazy: scikit-learn's metrics take ~0.3 s to import

    present = np.flatnonzero(np.isin(classes, y))
    if present.size < 2:
        return None
    Pp = P[:, present] / np.maximum(P[:, present].sum(axis=1, keepdims=True), np.finfo(float).tiny)
    if present.size == 2:
        return float(roc_auc_score(y == classes[present[1]], Pp[:, 1]))
    return float(roc_auc_score(y, Pp, multi_class="ovr", labels=classes[present]))


def classifier_report(y_true, y_pred, classes, proba=None):
    """Accuracy, balanced accuracy, confusion matrix, and with probabilities log-loss and ROC AUC, of a classifier.

    Defined whatever labels ``y_true`` holds. Rows whose true label is not one of ``classes`` (a class the training
    data never had) are errors in ``accuracy`` and make a class of recall 0 in ``balanced_accuracy``; log-loss, ROC
    AUC and the confusion matrix (rows: true classes, columns: predicted, both in the order of ``classes``) are
    computed on the other rows, and ``unseen_classes`` counts them per label. ROC AUC needs two classes among the
    known rows (:func:`_roc_auc`); it is left out otherwise, and log-loss when no row is of a known class.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
        True and predicted labels.
    classes : array-like of shape (n_classes,)
        The classifier's classes (``classes_``), the order of the columns of ``proba``.
    proba : array-like of shape (n_samples, n_classes), optional
        Predicted probabilities.

    Returns
    -------
    dict
        ``accuracy``, ``balanced_accuracy``, ``log_loss`` and ``roc_auc`` (with ``proba``, when defined),
        ``confusion_matrix``; with unseen labels, ``unseen_classes`` (``{label: rows}``) and ``unseen_rows``.

    Examples
    --------
    >>> import numpy as np
    >>> rep = classifier_report([0, 1, 2, 1], [0, 1, 1, 0], [0, 1], np.array([[.8, .2], [.3, .7], [.4, .6], [.6, .4]]))
    >>> rep["accuracy"], rep["unseen_classes"], rep["roc_auc"]
    (0.5, {'2': 1}, 1.0)
    """
    from sklearn import metrics as skm  # lazy: scikit-learn's metrics take ~0.3 s to import

    y, y_pred, classes = np.asarray(y_true).reshape(-1), np.asarray(y_pred).reshape(-1), np.asarray(classes)
    if y.shape != y_pred.shape:
        raise InvalidInputError(f"y_true has {y.size} labels but y_pred has {y_pred.size}; give one per row")
    if y.size == 0:
        raise InvalidInputError("no rows to score: y_true is empty")
    seen = np.isin(y, classes)
    recalls = [np.mean(y_pred[y == c] == c) for c in np.unique(y)]  # per true class, unseen ones included
    out = {"accuracy": float(np.mean(y == y_pred)), "balanced_accuracy": float(np.mean(recalls))}
    if proba is not None and seen.any():
        P = np.asarray(proba, dtype=np.float64)[seen]
        out["log_loss"] = float(skm.log_loss(y[seen], P, labels=classes))
        auc = _roc_auc(y[seen], P, classes)
        if auc is not None:
            out["roc_auc"] = auc
    out["confusion_matrix"] = skm.confusion_matrix(y[seen], y_pred[seen], labels=classes).tolist() if seen.any() \
        else [[0] * classes.size for _ in range(classes.size)]
    if not seen.all():
        labels, counts = np.unique(y[~seen], return_counts=True)
        out["unseen_classes"] = {_label_key(c): int(k) for c, k in zip(labels, counts)}
        out["unseen_rows"] = int((~seen).sum())
    return out
