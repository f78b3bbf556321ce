"""The conformance kit in a plugin's tests: every check, and a pytest helper that makes one test per property.

A plugin's test module::

    from skframe.plugin.testing import parametrize_with_checks

    @parametrize_with_checks([MyKernel(gamma=0.5), MyLoss()],
                             expected_failed_checks={"tag dtypes": "float32 blocks come in the next release"})
    def test_conformance(component, check):
        check(component)

collects one test per property of each component's kind (:data:`PROPERTIES`), named
``<component>-<property>``; a failed test shows the property, what happened and the fix. The properties
named in ``expected_failed_checks`` are marked ``xfail`` with the reason given. A property that the check
could not reach (after a kernel that cannot even be called) is skipped, saying why; one that does not apply
to the component (``diag`` of a kernel without one) passes.

Outside pytest, :func:`check_component` and the check of each kind run every property and raise one
:class:`ConformanceError` listing all the failures, each named. Checking changes no state of skframe.
"""

from skframe.contract.tags import kind_of
from skframe.exceptions import PluginError
from skframe.plugin import checks
from skframe.plugin.checks import (  # noqa: F401 (the kit's names, published again here)
    PROPERTIES,
    ConformanceError,
    check_component,
    check_decoder,
    check_kernel,
    check_loss,
    check_output_matrix_component,
    check_sketch,
    check_solver,
    check_tags,
)

# every name of the kit, and the pytest helper
__all__ = ["parametrize_with_checks", *checks.__all__]


class _Run:
    """The check of one component, run once (on the first of its tests) and remembered."""

    def __init__(self, component, kind):
        self.component, self.kind, self._outcome = component, kind, None

    def outcome(self):
        if self._outcome is None:
            try:
                check_component(self.component, self.kind)
                self._outcome = ConformanceError([], PROPERTIES[self.kind])  # passed: every property evaluated
            except ConformanceError as exc:
                self._outcome = exc
        return self._outcome


class _PropertyCheck:
    """One property of one component's check: ``check(component)`` raises when it failed."""

    def __init__(self, run, prop):
        self.run, self.prop = run, prop
        self.__name__ = f"check_{run.kind}[{prop}]"

    def __repr__(self):
        return self.__name__

    def __call__(self, component):
        # lazy: pytest is a test-time dependency (the skip of a property that does not apply)
        import pytest

        if component is not self.run.component:
            raise PluginError(f"{self.__name__} was made for {self.run.component!r}, not {component!r}; "
                              "call check(component) with the component it was parametrized with")
        outcome = self.run.outcome()
        failed = [(prop, line) for prop, line in outcome.failures if prop == self.prop]
        if failed:
            raise ConformanceError(failed, {self.prop})
        if outcome.stopped and self.prop not in outcome.checked:
            pytest.skip(f"not checked: {outcome.stopped}")


def _test_id(component):
    text = repr(component)
    plain = type(component).__repr__ is object.__repr__
    return type(component).__name__ if plain or len(text) > 60 or "\n" in text else text


def parametrize_with_checks(components, *, expected_failed_checks=None):
    """A ``pytest.mark.parametrize`` of ``(component, check)``: one test per property of each component's check.

    Parameters
    ----------
    components : list of component objects
        Kernels, sketches, losses, solvers, decoders or output matrices (their kind is found from their tags or
        methods, as :func:`check_component` does).
    expected_failed_checks : dict or callable, optional
        ``{property: reason}`` of the properties expected to fail, marked ``xfail`` with the reason; or a
        function of a component returning such a dict. A property applies to the components whose check has it;
        a name that no check of the components has is an error (a misspelt name would hide nothing).

    Returns
    -------
    pytest.MarkDecorator
        Decorates ``def test_...(component, check): check(component)``.

    Raises
    ------
    skframe.exceptions.PluginError
        A component of no known kind, or an unknown property in ``expected_failed_checks``.
    """
    # lazy: pytest is a test-time dependency, not one of skframe
    import pytest

    kinds = []
    for component in components:
        kind = kind_of(component)
        if kind not in PROPERTIES:
            raise PluginError(f"{component!r} is of no known component kind (no solve, decode, matrix, draw, "
                              "value/gradient or __call__)")
        kinds.append(kind)
    known = {prop for kind in kinds for prop in PROPERTIES[kind]}
    params = []
    for component, kind in zip(components, kinds):
        expected = expected_failed_checks(component) if callable(expected_failed_checks) else expected_failed_checks
        expected = dict(expected or {})
        unknown = sorted(set(expected) - known)
        if unknown:
            raise PluginError(f"expected_failed_checks names {unknown}, which no check of these components has; "
                              f"use some of: {', '.join(sorted(known))}")
        run = _Run(component, kind)
        for prop in PROPERTIES[kind]:
            marks = [pytest.mark.xfail(reason=expected[prop], strict=False)] if prop in expected else []
            params.append(pytest.param(component, _PropertyCheck(run, prop), id=f"{_test_id(component)}-{prop}",
                                       marks=marks))
    return pytest.mark.parametrize("component, check", params)
