"""Tests of skframe.core.preprocessing.FeatureScaler: scikit-learn conformance, sparse handling, saving."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.utils.estimator_checks import parametrize_with_checks

from skframe.core.preprocessing import FeatureScaler, scale_features
from skframe.exceptions import InvalidInputError, InvalidParameterError, NotFittedError


@parametrize_with_checks([FeatureScaler(), FeatureScaler("none"), FeatureScaler(with_mean=False)])
def test_scikit_learn_conformance(estimator, check):
    check(estimator)


def test_dense_is_standardised_against_plain_formula(rng):
    X = rng.normal(loc=3.0, scale=[1.0, 10.0, 0.1], size=(50, 3))
    Z = FeatureScaler().fit_transform(X)
    np.testing.assert_allclose(Z, (X - X.mean(axis=0)) / X.std(axis=0), rtol=1e-12)


def test_sparse_stays_sparse_and_is_only_divided(rng):
    X = sp.random(40, 6, density=0.3, random_state=0, format="csr")
    sc = FeatureScaler().fit(X)
    Z = sc.transform(X)
    assert sp.issparse(Z) and not sc.with_mean_
    D = X.toarray()
    np.testing.assert_allclose(Z.toarray(), D / D.std(axis=0), rtol=1e-12)


def test_centring_cancels_in_squared_distances(rng):
    X = rng.normal(size=(10, 4)) + 5.0
    centred = FeatureScaler().fit_transform(X)
    scaled = FeatureScaler(with_mean=False).fit_transform(X)
    d_c = ((centred[:, None] - centred[None]) ** 2).sum(-1)
    d_s = ((scaled[:, None] - scaled[None]) ** 2).sum(-1)
    np.testing.assert_allclose(d_c, d_s, rtol=1e-10, atol=1e-12)


def test_constant_column_left_unscaled_and_errors():
    X = np.array([[1.0, 2.0], [1.0, 4.0]])
    sc = FeatureScaler().fit(X)
    assert sc.scale_[0] == 1.0
    with pytest.raises(NotFittedError):
        FeatureScaler().transform(X)
    with pytest.raises(InvalidParameterError, match="method"):
        FeatureScaler("minmax").fit(X)
    with pytest.raises(InvalidParameterError, match="densify"):
        FeatureScaler(with_mean=True).fit(sp.csr_matrix(X))
    with pytest.raises(InvalidInputError, match="features"):
        sc.transform(np.ones((2, 3)))
    with pytest.raises(InvalidInputError, match="NaN"):
        FeatureScaler().fit(np.array([[np.nan], [1.0]]))


def test_feature_names_out_and_scale_features(rng):
    X = rng.normal(size=(5, 2))
    sc = FeatureScaler().fit(X)
    assert list(sc.get_feature_names_out()) == ["x0", "x1"]
    A, B, sc2 = scale_features(X, X[:2])
    np.testing.assert_allclose(B, A[:2])
    assert isinstance(sc2, FeatureScaler)


def test_old_import_path_and_saved_in_model_files(tmp_path, rng):
    from skframe.datasets import FeatureScaler as F1
    from skframe.datasets.loaders import FeatureScaler as F2
    from skframe.persistence import STATE_CLASSES

    assert F1 is FeatureScaler and F2 is FeatureScaler
    assert STATE_CLASSES["FeatureScaler"] == "skframe.core.preprocessing:FeatureScaler"
    from skframe.persistence import _Decoder, _Encoder

    X = rng.normal(size=(8, 3))
    sc = FeatureScaler().fit(X)
    enc = _Encoder()
    node = enc.encode(sc)
    back = _Decoder(enc.arrays).decode(node)
    np.testing.assert_allclose(back.transform(X), sc.transform(X))
