"""scikit-learn's estimator checks on every DEFAULT constructor (no tuned sizes)."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.utils.estimator_checks import parametrize_with_checks

from skframe.models import JointQuantileRegressor, SketchedKernelClassifier, SketchedKernelMachine, SketchedKernelRidge

# Why JointQuantileRegressor's default constructor is an expected failure of the two sparse-container checks:
# scikit-learn's _check_estimator_sparse_container fits on sparse X and then asserts that predict returns
# shape (n_samples,) (or (n_samples, 1) for a multi-output-only estimator). The joint model's predict returns
# one column per quantile level, (n_samples, 5) with the default five levels, and no estimator tag changes
# the expected shape. Sparse input itself is supported: the fit and predict the check runs succeed, and
# test_joint_quantile_default_fits_sparse_input_like_dense below checks that they equal the dense ones.
# The one-level model (quantiles=(0.5,)) predicts (n_samples,) and passes these checks. The marks are
# strict: the test suite fails if the checks start to pass.
_SHAPE_ONLY = ("predict returns one column per quantile level, shape (n, 5) by default; the sparse-container "
               "check asserts shape (n,) after a sparse fit, which succeeds")

# check_regressors_train asks R^2 > 0.5 on 10 standardised features: that needs the data-scaled
# bandwidth gamma="scale" of the Gaussian kernel (a fixed gamma=1.0 is far too narrow there).
_FIXED_GAMMA = "the Gaussian kernel's default gamma is not data-scaled (gamma='scale') in this installation"


def _scaled_default_gamma():
    from skframe.contract.registry import get_kernel

    return getattr(get_kernel("gaussian"), "gamma", None) == "scale"


# scikit-learn's sample-weight equivalence checks compare a weighted fit with the fit on rows repeated by the
# weights. A sketched model draws its sketch (and sizes it, "auto") from the training rows: repeated rows change
# the features themselves. On the same features the two fits are equal (tests/models/test_sample_weight.py).
_SKETCH_FROM_ROWS = ("the sketch is drawn from the training rows, so repeating rows changes the features; the weighted "
                     "fit equals the repeated-rows fit on the same features (tests/models/test_sample_weight.py)")


def _expected_failures(estimator):
    weights = {"check_sample_weight_equivalence_on_dense_data": _SKETCH_FROM_ROWS,
               "check_sample_weight_equivalence_on_sparse_data": _SKETCH_FROM_ROWS}
    if isinstance(estimator, SketchedKernelClassifier):
        return weights
    if isinstance(estimator, JointQuantileRegressor):
        if len(estimator.quantiles) != 1:
            return dict(weights, check_estimator_sparse_array=_SHAPE_ONLY, check_estimator_sparse_matrix=_SHAPE_ONLY)
        return weights
    out = weights
    if isinstance(estimator, (SketchedKernelRidge, SketchedKernelMachine)) and not _scaled_default_gamma():
        return dict(out, check_regressors_train=_FIXED_GAMMA)
    return out


@parametrize_with_checks(
    [SketchedKernelRidge(), SketchedKernelMachine(), SketchedKernelClassifier(), JointQuantileRegressor(),
     JointQuantileRegressor(quantiles=(0.5,)), SketchedKernelClassifier(loss="logistic"),
     SketchedKernelClassifier(loss="multinomial"), SketchedKernelClassifier(loss="logistic", calibration="lapse")],
    expected_failed_checks=_expected_failures,
    xfail_strict=True,
)
def test_default_constructor_passes_sklearn_checks(estimator, check):
    check(estimator)


def test_joint_quantile_default_fits_sparse_input_like_dense():
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(40, 3))
    X[X < 0.6] = 0
    y = 4 * rng.uniform(size=40)
    dense = JointQuantileRegressor(random_state=0).fit(X, y).predict(X)
    for fmt in ("csr", "csc", "coo"):
        Xs = sp.csr_matrix(X).asformat(fmt)
        P = JointQuantileRegressor(random_state=0).fit(Xs, y).predict(Xs)
        assert P.shape == (40, 5)
        np.testing.assert_allclose(P, dense, rtol=1e-8, atol=1e-10)


def _machine_source_doc(cls):
    """The class docstring as written in the source (what the API reference shows)."""
    import ast
    from pathlib import Path

    import skframe.models.machine as machine

    nodes = (n for f in sorted(Path(machine.__file__).parent.glob("*.py"))
             for n in ast.parse(f.read_text(encoding="utf-8")).body)
    node = next(n for n in nodes if isinstance(n, ast.ClassDef) and n.name == cls.__name__)
    return ast.get_docstring(node, clean=False)


def _shared_parameters_doc(doc):
    """The entries from ``kernel`` to ``backend`` (the parameters every machine shares)."""
    start = doc.index("\n    kernel : ")
    lines = doc[start + 1:].split("\n")
    backend = next(i for i, line in enumerate(lines) if line.startswith("    backend : "))
    end = next(i for i in range(backend + 1, len(lines)) if not lines[i].startswith("        "))
    return "\n".join(lines[:end])


@pytest.mark.parametrize("cls", [SketchedKernelMachine, SketchedKernelClassifier, JointQuantileRegressor])
def test_machine_docstrings_document_every_shared_parameter(cls):
    """The shared entries are written once and stand in full in each class's docstring (the API reference
    makes the same replacement in the source's docstring, see tests/docs/test_docs_site.py)."""
    import inspect
    import textwrap

    from skframe.models.machine._common import SHARED_PARAMETERS, SHARED_PARAMETERS_ENTRY

    source_doc = _machine_source_doc(cls)
    assert source_doc.count(textwrap.indent(SHARED_PARAMETERS_ENTRY, "    ")) == 1
    shared = _shared_parameters_doc(cls.__doc__)
    assert shared == textwrap.indent(SHARED_PARAMETERS, "    ").rstrip("\n")
    names = [line.split(" : ")[0].strip() for line in shared.split("\n") if not line.startswith("        ")]
    assert names == ["kernel", "kernel_params", "sketch", "sketch_size", "sketch_params", "warm_start",
                     "memory_budget", "dtype", "backend"]
    for name in inspect.signature(cls).parameters:
        assert f"\n    {name} : " in cls.__doc__, name


def test_include_shared_parameters_refuses_a_docstring_without_the_entry_once():
    from skframe.models.machine._common import SHARED_PARAMETERS_ENTRY, include_shared_parameters

    with pytest.raises(ValueError, match="0 times"):
        include_shared_parameters("Parameters\n----------\nx : int\n")
    with pytest.raises(ValueError, match="2 times"):
        include_shared_parameters(SHARED_PARAMETERS_ENTRY * 2)
