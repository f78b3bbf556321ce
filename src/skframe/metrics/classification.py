"""Classification and multi-label metrics: accuracy, example-based F1, Hamming loss."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from skframe.exceptions import InvalidInputError

__all__ = ["accuracy", "example_based_f1", "hamming_loss"]


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
