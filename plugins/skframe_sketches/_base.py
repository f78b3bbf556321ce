"""The shared base of the built-in sketches (private)."""

from __future__ import annotations

from skframe.exceptions import InvalidParameterError
from skframe.plugin.protocols import Sketch, repr_from_params
from skframe.validation import check_scalar


def _check_size(size, n):
    if size > n:
        raise InvalidParameterError(
            f"sketch size m={size} is larger than the number of training points n_samples={n}; choose m <= n_samples "
            "(or use --sketch none for the exact model)"
        )


class _BaseSketch(Sketch):
    name = "sketch"

    def __init__(self, size=100):
        self.size = check_scalar(size, "sketch size", kind=int, low=1, fix="the sketch size m must be a positive integer")

    @property
    def params(self):
        return {"size": self.size}

    __repr__ = repr_from_params
