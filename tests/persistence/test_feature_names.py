"""Feature names (scikit-learn's ``feature_names_in_``) survive a model file, as an object array of strings."""

import numpy as np
import pytest

import skframe
from skframe.models import SketchedKernelRidge
from skframe.persistence import load_bundle, save


def _fitted():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(60, 3))
    return SketchedKernelRidge("gaussian", sketch="subsample", sketch_size=20, random_state=0).fit(X, X.sum(axis=1)), X


def test_feature_names_round_trip_as_object_strings(tmp_path):
    model, X = _fitted()
    model.feature_names_in_ = np.asarray(["a", "b", "ç"], dtype=object)
    extra = {"names": np.asarray(["y"], dtype=object), "plain": np.asarray(["u", "v"])}
    save(model, tmp_path / "m.skf", extra=extra)
    again, extra_again = load_bundle(tmp_path / "m.skf")
    assert again.feature_names_in_.dtype == object and list(again.feature_names_in_) == ["a", "b", "ç"]
    assert extra_again["names"].dtype == object and extra_again["plain"].dtype.kind == "U"
    np.testing.assert_array_equal(again.predict(X), model.predict(X))


def test_other_object_arrays_are_still_refused(tmp_path):
    model, _ = _fitted()
    model.feature_names_in_ = np.asarray(["a", 1, None], dtype=object)
    with pytest.raises(skframe.exceptions.PersistenceError, match="object arrays"):
        save(model, tmp_path / "m.skf")


def test_a_model_fitted_on_a_dataframe_keeps_its_names(tmp_path):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(1)
    df = pd.DataFrame(rng.uniform(size=(50, 3)), columns=["f0", "f1", "f2"])
    model = SketchedKernelRidge("gaussian", sketch_size=10, random_state=0).fit(df, df.sum(axis=1))
    path = tmp_path / "df.skf"
    save(model, path)
    again = skframe.load(path)
    assert list(again.feature_names_in_) == ["f0", "f1", "f2"]
    np.testing.assert_array_equal(again.predict(df), model.predict(df))
    with pytest.raises(ValueError, match="feature names"):
        again.predict(df[["f2", "f1", "f0"]])  # scikit-learn's check: reordered columns are refused
