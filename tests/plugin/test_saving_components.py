"""A third-party component is saved so that the loaded model predicts what the fitted one did.

A component without ``params`` is saved from its constructor's arguments read back from the attributes of the
same names; ``skframe.save`` refuses, in one line and without writing the file, a model whose components would
be rebuilt computing other values; the conformance kit accepts exactly what ``save`` round-trips, for the same
reason. The kernels are registered by an installed-looking distribution (``make_dist``, see conftest.py).
"""

import importlib

import numpy as np
import pytest

from skframe import SketchedKernelRidge, load, save
from skframe.contract.registry import constructor_params, get_kernel, spec_of
from skframe.exceptions import PersistenceError
from skframe.persistence.fidelity import ROUND_TRIP_FIX, round_trip_problem
from skframe.plugin.api import check_component
from skframe.plugin.testing import ConformanceError

pytestmark = pytest.mark.usefixtures("fresh_registry")  # fixtures in conftest.py

PLUGIN = """
    import numpy as np
    import skframe

    class HelloRBF:
        # the README's minimal kernel with a constructor argument, stored under its own name
        def __init__(self, gamma=1.0):
            self.gamma = gamma

        def __call__(self, X, Y):
            sq = (X ** 2).sum(1)[:, None] + (Y ** 2).sum(1)[None, :] - 2 * X @ Y.T
            return np.exp(-self.gamma * np.maximum(sq, 0.0))

    class HiddenRBF(HelloRBF):
        # the same kernel, its argument stored under another name: it cannot be rebuilt from the constructor
        def __init__(self, gamma=1.0):
            self._g = gamma

        def __call__(self, X, Y):
            sq = (X ** 2).sum(1)[:, None] + (Y ** 2).sum(1)[None, :] - 2 * X @ Y.T
            return np.exp(-self._g * np.maximum(sq, 0.0))

    class WideOnly(HiddenRBF):
        # defined on five input columns only (as a kernel of one data set's features may be)
        def __call__(self, X, Y):
            assert X.shape[1] == 5 and Y.shape[1] == 5
            return super().__call__(X, Y)

    class ScaledSquare:
        __skframe_tags__ = skframe.plugin.api.LossTags(smooth=True)

        def __init__(self, scale=1.0):
            self._scale = scale

        def value(self, F, Y):
            return 0.5 * self._scale * ((F - Y) ** 2).sum(axis=1)

        def gradient(self, F, Y):
            return self._scale * (F - Y)

    @skframe.hookimpl
    def register_kernels(register):
        register("hello-rbf", HelloRBF)
        register("hidden-rbf", HiddenRBF)
        register("wide-only", WideOnly)

    @skframe.hookimpl
    def register_losses(register):
        register("scaled-square", ScaledSquare)
"""


@pytest.fixture
def plugin(make_dist):
    return importlib.import_module(make_dist("skf-hello", PLUGIN))


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    return X, np.sin(X[:, 0]) + 0.1 * X[:, 1]


def _fit(kernel, X, y):
    return SketchedKernelRidge(kernel=kernel, sketch_size=20, random_state=0).fit(X, y)


def test_constructor_arguments_stored_as_attributes_are_saved(plugin, data, tmp_path):
    X, y = data
    kernel = plugin.HelloRBF(gamma=0.05)
    check_component(kernel)  # the kit accepts it
    assert spec_of("kernel", kernel).params == {"gamma": 0.05}
    model = _fit(kernel, X, y)
    path = tmp_path / "hello.skf"
    save(model, path)
    loaded = load(path)
    assert loaded.kernel_.gamma == 0.05
    np.testing.assert_array_equal(loaded.predict(X[:10]), model.predict(X[:10]))
    # the default gamma would have predicted other values: the probe has something to see
    assert not np.allclose(_fit(plugin.HelloRBF(), X, y).predict(X[:10]), model.predict(X[:10]))


def test_a_component_that_cannot_round_trip_is_refused_in_one_line_and_nothing_written(plugin, data, tmp_path):
    X, y = data
    model = _fit(plugin.HiddenRBF(gamma=0.05), X, y)
    where = tmp_path / "models"
    where.mkdir()
    with pytest.raises(PersistenceError) as err:
        save(model, where / "new.skf")
    msg = str(err.value)
    assert "\n" not in msg and "'hidden-rbf' (HiddenRBF)" in msg
    assert "_g=0.05 was rebuilt as 1.0" in msg and msg.endswith(ROUND_TRIP_FIX)
    assert list(where.iterdir()) == []  # no file, no leftover temporary file
    old = where / "old.skf"
    save(_fit(plugin.HelloRBF(gamma=0.05), X, y), old)
    before = old.read_bytes()
    with pytest.raises(PersistenceError):
        save(model, old)
    assert old.read_bytes() == before  # an existing file is left as it was


def test_the_kit_rejects_it_for_the_same_reason_as_save(plugin, tmp_path):
    kernel = plugin.HiddenRBF(gamma=0.05)
    with pytest.raises(PersistenceError) as saved:
        save({"kernel": kernel}, tmp_path / "k.skf")
    with pytest.raises(ConformanceError) as checked:
        check_component(kernel)
    lines = dict(checked.value.failures)
    assert saved.value.problem in lines["params round-trip"] and saved.value.problem in lines["save and load"]
    assert all(line.endswith(ROUND_TRIP_FIX) for line in lines.values())


def test_a_kernel_built_by_name_keeps_the_arguments_it_was_built_with(plugin, data, tmp_path):
    X, y = data
    model = _fit(get_kernel("hidden-rbf", gamma=0.05), X, y)  # the registry remembers {"gamma": 0.05}
    save(model, tmp_path / "m.skf")
    np.testing.assert_array_equal(load(tmp_path / "m.skf").predict(X[:5]), model.predict(X[:5]))


def test_the_probe_uses_the_model_s_own_training_rows(plugin, data, tmp_path):
    X, y = data
    X5 = np.hstack([X, X[:, :2] ** 2])
    model = _fit(plugin.WideOnly(gamma=0.05), X5, y)
    with pytest.raises(PersistenceError, match="'wide-only' .*_g=0.05 was rebuilt as 1.0"):
        save(model, tmp_path / "m.skf")
    # a fixed block of three columns does not fit this kernel: alone, it is not judged
    assert round_trip_problem("kernel", plugin.WideOnly(0.05), plugin.WideOnly()) is None
    assert "_g=0.05" in round_trip_problem("kernel", plugin.WideOnly(0.05), plugin.WideOnly(), data=5)


def test_a_loss_that_cannot_round_trip_is_refused_too(plugin, tmp_path):
    with pytest.raises(PersistenceError, match=r"loss 'scaled-square' \(ScaledSquare\).*_scale=2.0 was rebuilt as 1"):
        save({"loss": plugin.ScaledSquare(scale=2.0)}, tmp_path / "l.skf")
    save({"loss": plugin.ScaledSquare()}, tmp_path / "l.skf")  # the default: nothing differs
    assert load(tmp_path / "l.skf")["loss"]._scale == 1.0


def test_constructor_params_follows_scikit_learn_s_convention():
    class Stored:
        def __init__(self, a, b=2, **extra):
            self.a, self.b = a, b

    class Renamed:
        def __init__(self, a=1):
            self.alpha = a

    class Star:
        def __init__(self, *parts):
            self.parts = parts

    class Plain:
        pass

    assert constructor_params(Stored(1)) == {"a": 1, "b": 2}  # **kwargs left out
    assert constructor_params(Renamed()) is None
    assert constructor_params(Star(1, 2)) is None
    assert constructor_params(Plain()) == {}


def test_sketches_and_output_matrices_are_probed_and_large_sketches_are_not():
    from skframe.plugin.api import SketchMatrix

    class Scaled:
        def __init__(self, size=10, scale=1.0):
            self.size, self._scale = size, scale

        def draw(self, n, rng, *, X=None, kernel=None):
            idx = np.sort(rng.choice(n, size=self.size, replace=False))
            return SketchMatrix(n=n, indices=idx, mix=self._scale * np.eye(self.size))

    class Shrunk:
        def __init__(self, shrink=0.0):
            self._shrink = shrink

        def matrix(self, d=None, *, Y=None, quantiles=None):
            return (1 - self._shrink) * np.cov(Y.T) + self._shrink * np.eye(d)

    assert "_scale=2.0 was rebuilt as 1.0" in round_trip_problem("sketch", Scaled(10, 2.0), Scaled(10))
    assert round_trip_problem("sketch", Scaled(10, 2.0), Scaled(10, 2.0)) is None
    assert round_trip_problem("sketch", Scaled(100, 2.0), Scaled(100)) is None  # 100 rows: no cheap probe
    assert "_shrink=0.5 was rebuilt as 0.0" in round_trip_problem("output_matrix", Shrunk(0.5), Shrunk())
