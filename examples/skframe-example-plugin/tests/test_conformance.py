"""The example plugin's components pass skframe's conformance kit: one test per property of each."""

import pytest
from skframe_example_plugin.plugin import RationalQuadraticKernel, UniformCouplingMatrix

from skframe.plugin.api import InvalidParameterError, check_component
from skframe.plugin.testing import parametrize_with_checks


@parametrize_with_checks([RationalQuadraticKernel(alpha=0.5, length_scale=0.7),
                          RationalQuadraticKernel(alpha=2.0), UniformCouplingMatrix(rho=0.3)])
def test_conformance(component, check):
    check(component)


def test_the_declared_tags_are_checked():
    tags = check_component(RationalQuadraticKernel(alpha=2.0, length_scale=0.7))
    assert tags.normalized and tags.thread_safe
    check_component(UniformCouplingMatrix, params={"rho": 1.0})


def test_bad_parameters_name_the_value():
    with pytest.raises(InvalidParameterError, match="alpha=-1"):
        RationalQuadraticKernel(alpha=-1)
    with pytest.raises(InvalidParameterError, match="rho=2"):
        UniformCouplingMatrix(rho=2)
