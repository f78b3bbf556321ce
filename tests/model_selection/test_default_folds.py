"""The default folds of every automatic choice: shuffled from the seed, stratified for a classifier, in file order
with ``cv_order="keep"``; ``lam="auto"`` on a table sorted by class chooses as on the same rows shuffled."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_iris, load_wine
from sklearn.model_selection import KFold
from sklearn.preprocessing import StandardScaler

import skframe
from skframe.exceptions import InvalidInputError, InvalidParameterError
from skframe.model_selection import KernelSearchCV, default_folds, fold_splitter
from skframe.models import (
    JointQuantileRegressor,
    OutputKernelRegressor,
    SketchedKernelClassifier,
    SketchedKernelMachine,
    SketchedKernelRidge,
)
from skframe.models._autotune import LamAtEdgeWarning

SORTED = np.repeat([0, 1, 2], [50, 40, 30])  # a label column stored sorted by class


# ----------------------------------------------------------------------------- the function
def test_shuffled_stratified_folds_hold_every_class_in_its_share():
    folds, words = default_folds(SORTED.size, 3, labels=SORTED, random_state=0)
    assert words == "3 shuffled stratified folds (seed 0)"
    held = np.concatenate([test for _, test in folds])
    assert np.array_equal(np.sort(held), np.arange(SORTED.size))  # a partition of the rows
    for train, test in folds:
        assert np.intersect1d(train, test).size == 0 and train.size + test.size == SORTED.size
        counts = np.bincount(SORTED[test], minlength=3)
        assert np.all(np.abs(counts - np.array([50, 40, 30]) / 3) <= 1), counts  # every class, in its share
        assert np.all(np.diff(test) > 0) and np.all(np.diff(train) > 0)  # sorted indices


def test_the_seed_fixes_the_folds_and_changes_them():
    a, _ = default_folds(100, 3, random_state=7)
    b, words = default_folds(100, 3, random_state=7)
    c, _ = default_folds(100, 3, random_state=8)
    assert words == "3 shuffled folds (seed 7)"
    assert all(np.array_equal(x[1], y[1]) for x, y in zip(a, b))
    assert not all(np.array_equal(x[1], y[1]) for x, y in zip(a, c))
    assert not np.array_equal(a[0][1], np.arange(a[0][1].size))  # not the first rows


def test_keep_cuts_consecutive_folds_in_file_order():
    folds, words = default_folds(10, 3, labels=SORTED[:10], cv_order="keep", random_state=0)
    assert words == "3 consecutive folds (file order kept)"
    expected = list(KFold(3).split(np.zeros((10, 1))))
    for (train, test), (tr, te) in zip(folds, expected):
        assert np.array_equal(test, te) and np.array_equal(train, tr)
        assert np.array_equal(test, np.arange(test[0], test[-1] + 1))  # one block


def test_a_class_with_fewer_rows_than_folds_gives_shuffled_folds_and_says_so():
    labels = np.r_[np.zeros(20, int), np.ones(2, int)]
    splitter, words = fold_splitter(3, labels=labels, random_state=0)
    assert type(splitter) is KFold and splitter.shuffle
    assert words == "3 shuffled folds (seed 0; not stratified: class 1 has 2 rows, fewer than 3 folds)"


def test_seed_from_a_random_state_object_and_unseeded():
    _, words = fold_splitter(3, random_state=np.random.RandomState(0))
    assert words.startswith("3 shuffled folds (seed ") and words.endswith("drawn from the random_state)")
    assert fold_splitter(3)[1] == "3 shuffled folds (unseeded)"


def test_bad_order_and_too_few_rows_are_refused():
    with pytest.raises(InvalidParameterError, match="cv_order='sorted'.*'shuffle'.*'keep'"):
        default_folds(10, 3, cv_order="sorted")
    with pytest.raises(InvalidInputError, match="1 row"):
        default_folds(1, 3)
    folds, words = default_folds(2, 3, random_state=0)  # at most one fold per row
    assert len(folds) == 2 and words.startswith("2 shuffled folds")


# ----------------------------------------------------------------------------- lam="auto" of the classifier
def _sorted_table(loader):
    X, y = loader(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    order = np.argsort(y, kind="stable")  # as stored: iris and wine are sorted by class already
    return X[order], y[order]


def _held_out_accuracy(est, X, y, seed=1):
    """Accuracy of ``est`` fitted on two thirds of the rows (drawn at random), scored on the rest."""
    rows = np.random.default_rng(seed).permutation(y.size)
    fit, held = np.sort(rows[: 2 * y.size // 3]), np.sort(rows[2 * y.size // 3:])
    return clone(est).fit(X[fit], y[fit]).score(X[held], y[held])


@pytest.mark.parametrize("loader", [load_iris, load_wine])
def test_a_table_sorted_by_class_chooses_as_the_same_rows_shuffled(loader):
    X, y = _sorted_table(loader)
    perm = np.random.default_rng(3).permutation(y.size)
    est = SketchedKernelClassifier(loss="multinomial", lam="auto", random_state=0)
    on_sorted, on_shuffled = clone(est).fit(X, y), clone(est).fit(X[perm], y[perm])
    info = on_sorted.fit_info_["lam"]
    # the default criterion, approximate leave-one-out on every row, does not see the order of the rows at all
    assert info["lam_criterion"] == "alo" and info["folds"] == f"none (approximate leave-one-out on all {y.size} rows)"
    assert info["chosen"] == on_shuffled.fit_info_["lam"]["chosen"]
    np.testing.assert_allclose(on_sorted.predict_proba(X[perm]), on_shuffled.predict_proba(X[perm]), atol=0.01)
    assert info["chosen"] < 0.1 and info["edge"] is None  # not the grid's edge the consecutive folds drove it to
    assert info["value"] < np.log(3)  # the held-out log-loss beats uniform guessing
    assert abs(_held_out_accuracy(est, X, y) - _held_out_accuracy(est, X[perm], y[perm], seed=2)) < 0.1
    kfold = clone(est).set_params(lam_criterion="kfold")  # the k folds are shuffled and stratified
    lam_sorted, lam_shuffled = (clone(kfold).fit(A, b).fit_info_["lam"] for A, b in ((X, y), (X[perm], y[perm])))
    assert lam_sorted["lam_criterion"] == "kfold" and lam_sorted["chosen"] < 0.1
    assert abs(np.log10(lam_sorted["chosen"] / lam_shuffled["chosen"])) <= 1.0  # within one step of the grid
    assert "3 shuffled stratified folds (seed 0)" in lam_sorted["reason"]


@pytest.mark.parametrize("criterion", ["alo", "kfold"])
def test_keep_reproduces_the_consecutive_folds_on_a_sorted_table(criterion):
    X, y = _sorted_table(load_iris)
    kept = SketchedKernelClassifier(loss="multinomial", lam="auto", random_state=0, cv_order="keep",
                                    lam_criterion=criterion)
    with pytest.warns(LamAtEdgeWarning, match="upper end"):
        kept.fit(X, y)
    info = kept.fit_info_["lam"]
    assert info["lam_criterion"] == "kfold"  # leaving one row out would treat the rows as exchangeable
    assert info["folds"] == "3 consecutive folds (file order kept)"
    assert info["chosen"] == pytest.approx(0.1) and info["edge"] == "upper"  # every fold lacks a class
    assert min(info["curve"]) > np.log(3)  # worse than uniform guessing at every lam
    assert ("cv_order='keep'" in info["reason"]) == (criterion == "alo")  # the fallback says why
    assert kept.held_out_ is None


@pytest.mark.parametrize("loss, classes", [("logistic", 2), ("logistic", 3), ("multinomial", 3)])
def test_every_classifier_loss_stratifies_on_the_class_labels(monkeypatch, loss, classes):
    from skframe.models import _folds

    seen = []
    real = _folds.default_folds

    def spy(n, n_splits=3, **kw):
        out = real(n, n_splits, **kw)
        seen.append((kw.get("labels"), out[0]))
        return out

    monkeypatch.setattr("skframe.models._autotune.default_folds", spy)
    X, y = _sorted_table(load_iris)
    keep = y < classes
    X, y = X[keep], np.array(["a", "b", "c"])[y[keep]]
    clf = SketchedKernelClassifier(loss=loss, lam="auto", sketch_size=30, random_state=0, lam_criterion="kfold")
    clf.fit(X, y)
    labels, folds = seen[0]
    assert labels is not None and np.array_equal(clf.classes_[labels], y)  # the classes, not the ±1 columns
    for _, test in folds:
        assert set(y[test]) == set(y)
    assert clf.fit_info_["lam"]["folds"] == "3 shuffled stratified folds (seed 0)"
    seen.clear()  # the default criterion cuts no folds: every row is left out in turn, approximately
    with warnings.catch_warnings():  # two classes of iris are separable: the grid's lower end, rightly
        warnings.simplefilter("ignore", LamAtEdgeWarning)
        info = clf.set_params(lam_criterion="alo").fit(X, y).fit_info_["lam"]
    assert not seen and info["lam_criterion"] == "alo" and clf.held_out_["rows"] == y.size
    assert info["folds"] == f"none (approximate leave-one-out on all {y.size} rows)"


# ----------------------------------------------------------------------------- the other estimators
def _regression(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 2))
    return X, np.sin(3 * X[:, 0]) + 0.1 * rng.normal(size=n)


@pytest.mark.parametrize("make", [
    lambda: SketchedKernelMachine(loss="huber", lam="auto", sketch_size=30, random_state=0),
    lambda: JointQuantileRegressor([0.2, 0.8], lam="auto", sketch_size=30, random_state=0),
])
def test_regressors_use_shuffled_folds_and_keep_on_request(make):
    X, y = _regression()
    assert make().fit(X, y).fit_info_["lam"]["folds"] == "3 shuffled folds (seed 0)"
    kept = make().set_params(cv_order="keep").fit(X, y)
    assert "3 consecutive folds (file order kept)" in kept.fit_info_["lam"]["reason"]


def test_structured_model_uses_shuffled_folds():
    X, y = _regression(90)
    Y = np.c_[y, -y]
    est = OutputKernelRegressor(input_kernel_params={"gamma": 1.0}, output_kernel_params={"gamma": 1.0},
                                input_sketch="subsample", input_sketch_size=30, decoder="identity", lam="auto",
                                random_state=0)
    info = est.fit(X, Y).fit_info_["lam"]
    assert info["folds"] == "3 shuffled folds (seed 0)" and "shuffled folds (seed 0)" in info["reason"]
    assert "consecutive" in est.set_params(cv_order="keep").fit(X, Y).fit_info_["lam"]["folds"]


@pytest.mark.parametrize("cls", [SketchedKernelClassifier, SketchedKernelMachine, JointQuantileRegressor,
                                 OutputKernelRegressor])
def test_cv_order_is_a_parameter_like_the_others(cls):
    est = cls(cv_order="keep")
    assert est.get_params()["cv_order"] == "keep" and clone(est).cv_order == "keep"
    assert cls().get_params()["cv_order"] == "shuffle"
    X, y = _regression(20)
    y = np.arange(20) % 2 if cls is SketchedKernelClassifier else np.c_[y, y] if cls is OutputKernelRegressor else y
    with pytest.raises(InvalidParameterError, match="cv_order"):
        cls(cv_order="sorted").fit(X, y)


def test_cv_order_is_saved_with_the_model_and_old_files_load_with_the_default(tmp_path):
    X, y = _regression(60)
    model = SketchedKernelMachine(loss="huber", sketch_size=20, random_state=0, cv_order="keep").fit(X, y)
    path = tmp_path / "m.skf"
    skframe.save(model, path)
    assert skframe.load(path).get_params()["cv_order"] == "keep"
    from pathlib import Path

    old = skframe.load(Path(__file__).parents[1] / "data" / "saved_models" / "classifier_hinge.skf")
    assert old.get_params()["cv_order"] == "shuffle" and clone(old).cv_order == "shuffle"


# ----------------------------------------------------------------------------- KernelSearchCV
def test_search_with_a_number_of_folds_shuffles_them_from_the_seed():
    X, y = _regression(80)
    grid = {"lam": [1e-4, 1e-2]}
    search = KernelSearchCV(SketchedKernelRidge(sketch_size=20, random_state=3), grid, cv=4).fit(X, y)
    assert search.search_info_["folds"] == "4 shuffled folds (seed 3)"  # the estimator's seed
    same = KernelSearchCV(SketchedKernelRidge(sketch_size=20, random_state=3), grid, cv=KFold(4, shuffle=True,
                                                                                            random_state=3)).fit(X, y)
    assert np.allclose(search.cv_results_["mean_test_score"], same.cv_results_["mean_test_score"])
    assert same.search_info_["folds"] is None and "KFold" in same.search_info_["splitter"]
    kept = KernelSearchCV(SketchedKernelRidge(sketch_size=20, random_state=3), grid, cv=4, cv_order="keep",
                          random_state=5).fit(X, y)
    plain = KernelSearchCV(SketchedKernelRidge(sketch_size=20, random_state=3), grid, cv=KFold(4)).fit(X, y)
    assert kept.search_info_["folds"] == "4 consecutive folds (file order kept)"
    assert np.allclose(kept.cv_results_["mean_test_score"], plain.cv_results_["mean_test_score"])
    with pytest.raises(InvalidParameterError, match="cv_order"):
        KernelSearchCV(SketchedKernelRidge(), grid, cv_order="sorted").fit(X, y)


def test_search_of_a_classifier_stratifies_its_default_folds():
    X, y = _sorted_table(load_iris)
    search = KernelSearchCV(SketchedKernelClassifier(loss="logistic", sketch_size=20), {"lam": [1e-3]}, cv=3,
                            random_state=0, refit=False).fit(X, y)
    assert search.search_info_["folds"] == "3 shuffled stratified folds (seed 0)"
    assert search.best_score_ > 0.8  # consecutive folds would each miss a class: about 0
