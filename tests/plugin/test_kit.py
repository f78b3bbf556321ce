"""The conformance kit as a third party lives with it: the documented minimal kernel passes, every failure is
reported and named, one pytest test per property, expected failures, and no state of skframe changed."""

import threading

import numpy as np
import pytest

import skframe
import skframe.core.block_engine as block_engine
import skframe.core.threads as threads
from skframe import SketchedKernelRidge
from skframe.contract.loader import get_plugin_registry
from skframe.exceptions import PluginError
from skframe.plugin.api import Kernel, KernelTags, Loss, LossTags, check_component
from skframe.plugin.testing import PROPERTIES, ConformanceError, check_kernel, parametrize_with_checks


class Minimal:
    """The README's minimal kernel: an object with ``__call__(X, Y) -> (len(X), len(Y))``, nothing else."""

    def __call__(self, X, Y):
        return np.exp(-((X[:, None, :] - Y[None, :, :]) ** 2).sum(-1))


class Broken(Kernel):
    """Asymmetric, with a NaN, and a diagonal that is not k(x, x): three failures in one check."""

    params = {}

    def __call__(self, X, Y=None):
        Y = X if Y is None else Y
        K = np.exp(-((X[:, None, :] - Y[None, :, :]) ** 2).sum(-1)) + 0.1 * X[:, :1]
        K[0, -1] = np.nan
        return K

    def diag(self, X):
        return np.zeros(len(X))


class WrongShape(Minimal):
    def __call__(self, X, Y):
        return super().__call__(X, Y)[:, :-1]


class WithNaN(Minimal):
    def __call__(self, X, Y):
        K = super().__call__(X, Y)
        K[0, 0] = np.nan
        return K


class Asymmetric(Minimal):
    def __call__(self, X, Y):
        return super().__call__(X, Y) + 0.1 * X[:, :1]


class Absolute(Loss):
    __skframe_tags__ = LossTags(lipschitz=1.0)
    params = {}

    def value(self, F, Y):
        return np.abs(F - Y).sum(axis=1)

    def gradient(self, F, Y):
        return np.sign(F - Y)


# ----------------------------------------------------------------------------- the documented minimal kernel
def test_the_minimal_kernel_passes_the_kit():
    tags = check_kernel(Minimal())
    assert tags == KernelTags()
    assert check_component(Minimal()) == tags


def test_the_minimal_kernel_fits_and_predicts():
    """What the kit accepts the framework runs: a fit and a prediction with the minimal kernel."""
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(80, 3))
    y = np.sin(3 * X[:, 0])
    model = SketchedKernelRidge(Minimal(), sketch_size=20, lam=1e-4, random_state=0).fit(X, y)
    assert model.predict(X).shape == (80,)


# ----------------------------------------------------------------------------- every failure, named
def test_a_broken_kernel_reports_every_failure_each_named():
    with pytest.raises(ConformanceError) as info:
        check_kernel(Broken())
    failed = [prop for prop, _ in info.value.failures]
    assert {"finite", "symmetry", "diag"} <= set(failed)
    lines = str(info.value).splitlines()
    for prop in ("finite", "symmetry", "diag"):
        assert any(line.startswith(f"check_kernel(Broken): {prop}: ") and "; " in line for line in lines), prop
    assert isinstance(info.value, PluginError)


@pytest.mark.parametrize("cls,prop", [(WrongShape, "shape"), (WithNaN, "finite"), (Asymmetric, "symmetry")])
def test_each_broken_kernel_names_its_failure(cls, prop):
    with pytest.raises(ConformanceError, match=rf"(?m)^check_kernel\({cls.__name__}\): {prop}: .*; ") as info:
        check_kernel(cls())
    assert prop in [p for p, _ in info.value.failures]


def test_a_kernel_that_cannot_be_called_stops_the_check_and_says_so():
    with pytest.raises(ConformanceError, match="(?m)^check_kernel\\(WrongShape\\): shape: ") as info:
        check_kernel(WrongShape())
    assert info.value.stopped and "not checked" in str(info.value)


# ----------------------------------------------------------------------------- no state of skframe changed
class Watching(Minimal):
    """Records, at each call, the thread and tiling settings of skframe and the registry another thread sees."""

    __skframe_tags__ = KernelTags(thread_safe=True)

    def __init__(self):
        self.seen = set()

    @property
    def params(self):
        return {}

    def __call__(self, X, Y):
        seen = {}
        probe = threading.Thread(target=lambda: seen.update(names=tuple(get_plugin_registry().components["kernel"])))
        probe.start()
        probe.join()
        self.seen.add((threads.THREADED_ENTRIES, threads.available_cores, block_engine._TILE_ENTRIES, seen["names"]))
        return super().__call__(X, Y)


def test_checking_changes_no_state_of_skframe():
    before = (threads.THREADED_ENTRIES, threads.available_cores, block_engine._TILE_ENTRIES,
              tuple(get_plugin_registry().components["kernel"]))
    kernel = Watching()
    check_kernel(kernel)
    assert kernel.seen == {before}  # during the check, from the kit's calls and the framework's, on every thread
    assert (threads.THREADED_ENTRIES, threads.available_cores, block_engine._TILE_ENTRIES,
            tuple(get_plugin_registry().components["kernel"])) == before


# ----------------------------------------------------------------------------- one pytest test per property
@parametrize_with_checks([Minimal(), Absolute()])
def test_the_helper_makes_one_test_per_property(component, check):
    check(component)


@parametrize_with_checks([Asymmetric(), WithNaN()], expected_failed_checks=lambda c: (
    {"symmetry": "asymmetric on purpose", "sketch product": "follows from the asymmetry"}
    if isinstance(c, Asymmetric) else {"finite": "a NaN on purpose", "sketch product": "follows from the NaN"}))
def test_expected_failures_are_marked_xfail(component, check):
    check(component)


def _marks(decorator):
    return {p.id: [m.name for m in p.marks] for p in decorator.args[1]}


def test_the_helper_names_each_test_by_component_and_property():
    marks = _marks(parametrize_with_checks([Minimal(), Asymmetric()], expected_failed_checks={"symmetry": "why"}))
    kernel_tests = [i for i in marks if i.startswith("Minimal")]
    assert len(kernel_tests) == len(PROPERTIES["kernel"])
    assert any(i.endswith("-symmetry") for i in kernel_tests)
    assert marks[next(i for i in marks if i.startswith("Asymmetric") and i.endswith("-symmetry"))] == ["xfail"]
    assert marks[next(i for i in marks if i.startswith("Minimal") and i.endswith("-symmetry"))] == ["xfail"]


def test_an_expected_failure_may_depend_on_the_component():
    decorator = parametrize_with_checks([Minimal(), Asymmetric()], expected_failed_checks=lambda c: (
        {"symmetry": "asymmetric on purpose"} if isinstance(c, Asymmetric) else {}))
    marks = _marks(decorator)
    assert marks[next(i for i in marks if i.startswith("Asymmetric") and i.endswith("-symmetry"))] == ["xfail"]
    assert marks[next(i for i in marks if i.startswith("Minimal") and i.endswith("-symmetry"))] == []


def test_a_misspelt_expected_failure_is_an_error():
    with pytest.raises(PluginError, match="symetry"):
        parametrize_with_checks([Minimal()], expected_failed_checks={"symetry": "typo"})
    with pytest.raises(PluginError, match="no known component kind"):
        parametrize_with_checks([object()])


def test_a_failed_property_raises_its_own_failure_only():
    decorator = parametrize_with_checks([Broken()])
    checks = {p.id.rsplit("-", 1)[1]: p.values for p in decorator.args[1]}
    component, check = checks["symmetry"]
    with pytest.raises(ConformanceError) as info:
        check(component)
    assert {p for p, _ in info.value.failures} == {"symmetry"}
    component, check = checks["tags"]
    check(component)  # passes


MINIMAL_PLUGIN = """
import numpy as np
from skframe.plugin.api import hookimpl


class MinimalKernel:
    def __call__(self, X, Y):
        return np.exp(-((X[:, None, :] - Y[None, :, :]) ** 2).sum(-1))


@hookimpl
def register_kernels(register):
    register("minimal-gauss", MinimalKernel)
"""


@pytest.mark.usefixtures("fresh_registry")
def test_a_registered_minimal_kernel_passes_the_kit_and_fits_through_the_cli(make_dist, tmp_path):
    from typer.testing import CliRunner

    from skframe.cli import app
    from skframe.plugin.api import get_component

    make_dist("skf-minimal", MINIMAL_PLUGIN)
    check_component(get_component("kernel", "minimal-gauss"))
    model = str(tmp_path / "model.skf")
    res = CliRunner().invoke(app, ["fit", "--kernel", "minimal-gauss", "--sketch-size", "20", "--json",
                                   "--model-out", model])
    assert res.exit_code == 0, res.output
    assert skframe.load(model).kernel == "minimal-gauss"
