"""Tags: declared once per component, read by get_tags, with the defaults of a minimal component."""

import math
import warnings

import numpy as np
import pytest

from skframe.contract.tags import kind_of
from skframe.exceptions import InvalidParameterError, PluginError
from skframe.models._core import default_solver_name
from skframe.plugin.api import (
    DecoderTags,
    KernelTags,
    LossTags,
    OutputMatrixTags,
    SketchTags,
    SolverTags,
    get_component,
    get_tags,
)
from skframe.plugin.testing import check_tags


class MinimalKernel:
    def __call__(self, X, Y=None):
        return X @ (X if Y is None else Y).T


class MinimalLoss:
    def value(self, F, Y):
        return ((F - Y) ** 2).sum(axis=1)

    def gradient(self, F, Y):
        return 2 * (F - Y)


def test_a_minimal_component_gets_the_defaults_of_its_kind_without_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert get_tags(MinimalKernel()) == KernelTags()
        assert get_tags(MinimalLoss()) == LossTags()
    assert KernelTags().backends == ("numpy",) and not KernelTags().thread_safe
    assert math.isinf(LossTags().lipschitz) and DecoderTags().candidates


def test_kind_of_reads_tags_then_methods():
    class Solve:
        def solve(self, problem, loss, lam, **kw): ...

    class Tagged:
        __skframe_tags__ = SketchTags(feature_map=True)

    assert kind_of(Solve()) == "solver" and kind_of(MinimalLoss()) == "loss" and kind_of(MinimalKernel) == "kernel"
    assert kind_of(Tagged()) == "sketch" and kind_of(object()) is None


def test_tags_as_a_method_depend_on_parameters_and_as_an_attribute_are_read_from_the_class():
    huber = get_component("loss", "huber", kappa=2.5)
    assert get_tags(huber).lipschitz == 2.5 and get_tags(huber).smooth
    from skframe_sketches import RandomFourierFeatures

    assert get_tags(RandomFourierFeatures).feature_map and get_tags(RandomFourierFeatures(5)).feature_map
    from skframe_losses.losses import HuberLoss

    assert get_tags(HuberLoss) == LossTags()  # a method needs an instance: the class answers the defaults


def test_every_kind_has_its_tags():
    names = {"kernel": "gaussian", "sketch": "psr", "loss": "pinball", "solver": "dual-cd", "decoder": "identity",
             "output_matrix": "covariance"}
    kinds = {"kernel": KernelTags, "sketch": SketchTags, "loss": LossTags, "solver": SolverTags,
             "decoder": DecoderTags, "output_matrix": OutputMatrixTags}
    for kind, name in names.items():
        params = {"size": 5} if kind == "sketch" else {}
        tags = get_tags(get_component(kind, name, **params))
        assert isinstance(tags, kinds[kind])
        check_tags(tags)
    assert get_tags(get_component("solver", "dual-cd")).requires_dual
    assert not get_tags(get_component("decoder", "identity")).candidates
    assert get_tags(get_component("output_matrix", "covariance")).needs_targets
    assert get_tags(get_component("loss", "pinball", quantiles=[0.1, 0.9])).quantiles == (0.1, 0.9)


def test_one_square_loss_flag():
    square = get_component("loss", "square")
    assert get_tags(square).square and default_solver_name(square) == "closed-form"
    assert not any(get_tags(get_component("loss", n)).square for n in ("huber", "epsilon-ridge", "output-square"))


def test_loose_attributes_are_still_read_and_deprecated():
    class OldKernel(MinimalKernel):
        normalized = True
        thread_safe = True
        dtypes = ("float64", "float32")

        def spectral_sampler(self, d, m, rng):
            return rng.standard_normal((m, d))

    class OldLoss(MinimalLoss):
        quadratic = True
        smooth = True
        name = "my-square"

    with pytest.warns(DeprecationWarning, match=r"OldKernel .*loose attributes.*__skframe_tags__"):
        tags = get_tags(OldKernel())
    assert tags == KernelTags(normalized=True, thread_safe=True, dtypes=("float64", "float32"),
                              spectral_sampler=True)
    with pytest.warns(DeprecationWarning, match="OldLoss"):
        assert get_tags(OldLoss()).square
    with warnings.catch_warnings():  # once per class
        warnings.simplefilter("error")
        get_tags(OldKernel())
    assert default_solver_name(OldLoss()) == "closed-form"


def test_declared_tags_win_over_loose_attributes():
    class Both(MinimalKernel):
        __skframe_tags__ = KernelTags(is_linear=True)
        normalized = True

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert get_tags(Both()) == KernelTags(is_linear=True)


def test_wrong_tags_are_errors_that_say_what_to_return():
    class NotTags(MinimalKernel):
        __skframe_tags__ = {"normalized": True}

    class OtherKind(MinimalKernel):
        __skframe_tags__ = LossTags()

    with pytest.raises(PluginError, match="not a tags object"):
        get_tags(NotTags())
    with pytest.raises(PluginError, match=r"used as a kernel but declares LossTags; return KernelTags"):
        get_tags(OtherKind(), "kernel")
    with pytest.raises(InvalidParameterError, match="not a component"):
        get_tags(object())
    with pytest.raises(InvalidParameterError, match="unknown component kind"):
        get_tags(MinimalKernel(), "kernels")


@pytest.mark.parametrize("tags,field", [
    (KernelTags(backends="numpy"), "backends"),
    (KernelTags(dtypes=("float32",)), "dtypes"),
    (KernelTags(thread_safe=1), "thread_safe"),
    (LossTags(lipschitz=-1.0), "lipschitz"),
    (LossTags(quantiles=(0.5, 1.5)), "quantiles"),
    (LossTags(square=True), "square"),
    (SolverTags(in_memory="yes"), "in_memory"),
])
def test_check_tags_names_the_field(tags, field):
    with pytest.raises(PluginError, match=field):
        check_tags(tags)


def test_tags_are_frozen():
    with pytest.raises(AttributeError):
        KernelTags().normalized = True
    assert np.isinf(LossTags().lipschitz)
