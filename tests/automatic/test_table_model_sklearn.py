"""TableModel in scikit-learn's tools: clone, get_params and cross_val_score (its ``score``)."""

import numpy as np
from sklearn.base import clone
from sklearn.metrics import accuracy_score, r2_score
from sklearn.model_selection import cross_val_score

from skframe import TableModel


def _data(n=120):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 3))
    return X, X[:, 0] + 0.1 * rng.normal(size=n)


def test_clone_keeps_the_options():
    model = TableModel(kernel="laplacian", lam=1e-3)
    copy = clone(model)
    assert copy.get_params() == model.get_params() and copy is not model


def test_score_is_r2_for_values_and_accuracy_for_labels():
    X, y = _data()
    reg = TableModel(holdout=0).fit(X, y)
    assert reg.score(X, y) == r2_score(y, reg.predict(X))
    labels = np.where(y > 0, "up", "down")
    clf = TableModel(holdout=0).fit(X, labels)
    assert clf.score(X, labels) == accuracy_score(labels, clf.predict(X))


def test_cross_val_score_runs_on_the_automatic_model():
    X, y = _data()
    scores = cross_val_score(TableModel(holdout=0), X, y, cv=3)
    assert scores.shape == (3,) and np.all(scores > 0.8)
