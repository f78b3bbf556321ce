"""The shared base of the built-in sketches (private)."""

from __future__ import annotations

from skframe.plugin.api import (
    Interval,
    InvalidParameterError,
    Sketch,
    SketchTags,
    repr_from_params,
    validate_component,
)


def _check_size(size, n):
    if size > n:
        raise InvalidParameterError(
            f"sketch size m={size} is larger than the number of training points n_samples={n}; choose m <= n_samples "
            "(or use --sketch none for the exact model)"
        )


class _BaseSketch(Sketch):
    """Shared parameter handling: ``size`` (and the subclass's parameters) checked by their constraints.

    A subclass sets its own parameters, then calls ``super().__init__(size)``, which checks every
    declared constraint.
    """

    name = "sketch"
    __skframe_tags__ = SketchTags()
    _parameter_constraints = {"size": [Interval("int", 1, None)]}
    _parameter_hints = {"size": "the sketch size m must be a positive integer"}

    def __init__(self, size=100):
        self.size = size
        validate_component(self)

    @property
    def params(self):
        """dict: the declared parameters (``_parameter_constraints``), in their order."""
        return {name: getattr(self, name) for name in self._parameter_constraints}

    __repr__ = repr_from_params
