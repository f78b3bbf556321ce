"""The example plugin's components pass skframe's conformance kit."""

import pytest
from skframe_example_plugin.plugin import RationalQuadraticKernel, UniformCouplingMatrix

from skframe.plugin.api import InvalidParameterError, check_component


@pytest.mark.parametrize("alpha", [0.5, 2.0])
def test_rational_quadratic_kernel_conforms(alpha):
    tags = check_component(RationalQuadraticKernel(alpha=alpha, length_scale=0.7))
    assert tags.normalized and tags.thread_safe


def test_uniform_coupling_conforms():
    check_component(UniformCouplingMatrix(rho=0.3))
    check_component(UniformCouplingMatrix, params={"rho": 1.0})


def test_bad_parameters_name_the_value():
    with pytest.raises(InvalidParameterError, match="alpha=-1"):
        RationalQuadraticKernel(alpha=-1)
    with pytest.raises(InvalidParameterError, match="rho=2"):
        UniformCouplingMatrix(rho=2)
