"""Registry: aliases, component identity (spec_of) without attributes on objects, output matrices as a plugin kind."""

import gc
from pathlib import Path

import numpy as np
import pytest

import skframe
from skframe.contract.loader import get_plugin_registry
from skframe.contract.registry import (
    build_component,
    component_name,
    component_params,
    get_component,
    get_kernel,
    get_output_matrix,
    get_sketch,
    list_components,
    spec_of,
)
from skframe.contract.specs import ComponentSpec
from skframe.exceptions import InvalidParameterError, UnknownComponentError

pytestmark = pytest.mark.usefixtures("fresh_registry")  # fixtures in conftest.py


def test_alias_resolves_to_its_entry():
    k = get_kernel("RBF", gamma=0.5)
    assert type(k).__name__ == "GaussianKernel"
    assert spec_of("kernel", k) == ComponentSpec("kernel", "gaussian", {"gamma": 0.5})
    kernels = [c for c in list_components("kernel") if c.name == "gaussian"]
    assert len(kernels) == 1 and kernels[0].aliases == ("rbf",)
    assert kernels[0].as_dict()["aliases"] == ["rbf"]
    assert "rbf" not in {c.name for c in list_components("kernel")}
    with pytest.raises(UnknownComponentError, match="rbf"):  # aliases are listed among the known names
        get_kernel("rbff")


def test_third_party_aliases(make_dist):
    make_dist(
        "skf-alias",
        """
        import skframe

        class Twice:
            def __init__(self, scale=2.0):
                self.scale = scale

            @property
            def params(self):
                return {"scale": self.scale}

            def __call__(self, X, Y=None):
                Y = X if Y is None else Y
                return self.scale * (X @ Y.T)

        @skframe.hookimpl
        def register_kernels(register):
            register("twice-linear", Twice, aliases=("twice", "TWICE-LIN"))
        """,
    )
    a, b = get_kernel("twice", scale=3.0), get_kernel("twice-lin")
    assert type(a) is type(b)
    assert component_name(a) == "twice-linear" and component_params(a) == {"scale": 3.0}
    assert get_plugin_registry().lookup("kernel", "twice-lin").aliases == ("twice", "twice-lin")


def test_spec_of_object_built_directly():
    from skframe_kernels import GaussianKernel, PolynomialKernel
    from skframe_sketches import PSGSketch, SubSampleSketch

    assert spec_of("kernel", GaussianKernel(gamma=1.0)) == ComponentSpec("kernel", "gaussian", {"gamma": 1.0})
    assert spec_of(None, PolynomialKernel()).name == "polynomial"
    assert spec_of("sketch", SubSampleSketch(5)).name == "subsample"  # the entry, not its alias "nystrom"
    spec = spec_of("sketch", PSGSketch(10, p=0.3))
    assert spec == ComponentSpec("sketch", "psg", {"size": 10, "p": 0.3})
    rebuilt = build_component(spec)
    assert type(rebuilt) is PSGSketch and rebuilt.name == "psg" and rebuilt.params == {"size": 10, "p": 0.3}


def test_spec_of_unknown_and_wrong_kind():
    class NotRegistered:
        name = "psr"  # a name alone is not enough: it must also be a sketch

        def __call__(self, X, Y=None):
            return X @ (X if Y is None else Y).T

    assert spec_of(None, NotRegistered()) is None and component_name(NotRegistered()) is None
    assert spec_of(None, np.zeros(3)) is None and spec_of(None, "gaussian") is None
    assert spec_of("loss", get_kernel("gaussian")) is None
    with pytest.raises(InvalidParameterError, match="kind"):
        spec_of("widget", object())


def test_nothing_is_stored_on_components_and_memory_is_released():
    from skframe.contract import registry

    sk = get_sketch("psr", size=4, p=0.5)
    assert not [a for a in vars(sk) if a.startswith("_skframe")]
    key = id(sk)
    assert key in registry._BUILT
    del sk
    gc.collect()
    assert key not in registry._BUILT


def test_function_factory_object_without_name_is_remembered(make_dist):
    make_dist(
        "skf-fn",
        """
        import skframe

        class Thing:
            def __init__(self, width):
                self.width = width

            def __call__(self, X, Y=None):
                return X @ (X if Y is None else Y).T

        def make_thing(width=3):
            return Thing(width)

        @skframe.hookimpl
        def register_kernels(register):
            register("thing", make_thing)
        """,
    )
    k = get_kernel("thing", width=5)
    assert spec_of("kernel", k) == ComponentSpec("kernel", "thing", {"width": 5})  # the build parameters


def test_component_spec_is_accepted_by_name_lookups():
    spec = ComponentSpec("loss", "huber", {"kappa": 0.25})
    loss = get_component("loss", spec)
    assert type(loss).__name__ == "HuberLoss" and loss.params == {"kappa": 0.25}
    with pytest.raises(InvalidParameterError, match="spec"):
        get_component("kernel", spec)


def test_builtin_output_matrices():
    Y = np.random.default_rng(0).normal(size=(20, 3))
    np.testing.assert_array_equal(get_output_matrix("identity").matrix(Y=Y), np.eye(3))
    q = get_output_matrix("quantile", gamma=2.0)
    assert q.params == {"gamma": 2.0} and spec_of("output_matrix", q).name == "quantile"
    tau = np.array([0.1, 0.5, 0.9])
    np.testing.assert_allclose(q.matrix(quantiles=tau), np.exp(-2.0 * (tau[:, None] - tau[None, :]) ** 2), rtol=1e-15)
    np.testing.assert_allclose(get_output_matrix("covariance").matrix(Y=Y), np.cov(Y.T), rtol=1e-12)
    known = "registered output matrices: covariance, graph, identity, quantile"
    with pytest.raises(UnknownComponentError, match=known):
        get_output_matrix("nope")


# the example distribution's plugin module, loaded as an installed plugin: a kernel with an alias and an output matrix
EXAMPLE_PLUGIN = (Path(__file__).resolve().parents[2]
                  / "examples/skframe-example-plugin/skframe_example_plugin/plugin.py")


def test_plugin_output_matrix_in_a_model_and_saved(make_dist, tmp_path):
    from skframe.core.output_matrices import build_output_matrix
    from skframe.models import SketchedKernelMachine

    make_dist("skframe-example-plugin", EXAMPLE_PLUGIN.read_text(), ep_name="example")
    assert spec_of("kernel", get_kernel("rq", alpha=2.0)) == ComponentSpec("kernel", "rational-quadratic",
                                                                             {"alpha": 2.0, "length_scale": 1.0})
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(40, 2))
    Y = np.c_[np.sin(3 * X[:, 0]), np.cos(3 * X[:, 1])]
    M = build_output_matrix("uniform-coupling", Y, {"rho": 0.25})
    np.testing.assert_allclose(M, [[1.0, 0.25], [0.25, 1.0]])
    model = SketchedKernelMachine(loss="huber", output_matrix="uniform-coupling", output_matrix_params={"rho": 0.25},
                                  sketch_size=10, random_state=0).fit(X, Y)
    np.testing.assert_allclose(model.output_matrix_, M)
    skframe.save(model, tmp_path / "m.skf")
    np.testing.assert_array_equal(skframe.load(tmp_path / "m.skf").predict(X), model.predict(X))


def test_output_matrix_front_functions_resolve_through_the_registry():
    """skframe.core.output_matrices.quantile_matrix & co. use whatever is registered under the built-in names."""
    from skframe.core.output_matrices import identity_matrix, quantile_matrix

    np.testing.assert_array_equal(identity_matrix(2), np.eye(2))
    np.testing.assert_allclose(quantile_matrix([0.2, 0.4], 0.0), np.ones((2, 2)))
    with pytest.raises(InvalidParameterError, match="d=0"):
        identity_matrix(0)


def test_the_registry_resolves_specs_and_a_spec_is_a_plain_value():
    k = get_kernel("laplacian", gamma=0.5)
    spec = spec_of(None, k)
    assert spec == spec_of("kernel", k) == ComponentSpec("kernel", "laplacian", {"gamma": 0.5})
    assert spec_of("sketch", k) is None
    assert build_component(spec) == k and get_kernel(spec) == k
    assert not hasattr(ComponentSpec, "build") and not hasattr(ComponentSpec, "of")
