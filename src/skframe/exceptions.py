"""Exceptions raised by skframe.

Every error that skframe raises on purpose derives from :class:`SkframeError`.
Messages name the offending value and say how to fix it; the command-line
interface prints them as a single line on stderr.

Several classes also derive from the built-in exception a Python user would
expect (``ValueError`` for bad values, ``LookupError`` for unknown names), so
``except ValueError`` keeps working in scikit-learn style code.
"""

__all__ = [
    "SkframeError",
    "InvalidParameterError",
    "InvalidInputError",
    "MissingValuesError",
    "DataFormatError",
    "UnknownComponentError",
    "PluginError",
    "DuplicateComponentError",
    "PersistenceError",
    "DependencyError",
    "NotFittedError",
    "MemoryBudgetError",
    "DistributedError",
    "SkframeWarning",
    "PluginCollisionWarning",
    "SketchSizeWarning",
    "DegenerateDataWarning",
]


class SkframeError(Exception):
    """Base class of every error raised on purpose by skframe."""


class InvalidParameterError(SkframeError, ValueError):
    """A parameter has an impossible value (negative bandwidth, p outside (0, 1], ...)."""


class InvalidInputError(SkframeError, ValueError):
    """Input data are unusable: wrong shape, NaN or inf, empty, mismatched lengths."""


class MissingValuesError(InvalidInputError):
    """The data contain missing values and no strategy to handle them was chosen."""


class DataFormatError(SkframeError, ValueError):
    """A data or model file is malformed, truncated or of an unknown format."""


class UnknownComponentError(SkframeError, LookupError):
    """A kernel, sketch, loss, solver or decoder name is not registered."""

    def __str__(self):  # LookupError would otherwise quote the message like a KeyError
        return str(self.args[0]) if self.args else ""


class PluginError(SkframeError):
    """A plugin is broken or misbehaves."""


class DuplicateComponentError(PluginError):
    """A plugin registers the same component name twice (across distributions, see :class:`PluginCollisionWarning`)."""


class PersistenceError(SkframeError):
    """A saved model cannot be written or read back (tampered, truncated, newer format, missing plugin)."""


class DependencyError(SkframeError, ImportError):
    """An optional dependency (CuPy, matplotlib, ...) is needed but not installed or usable."""


class MemoryBudgetError(InvalidParameterError):
    """An allocation cannot fit the ``memory_budget``; raised before anything is allocated."""


class DistributedError(SkframeError, RuntimeError):
    """A distributed (Dask) computation failed, e.g. workers kept dying; no model was produced."""


class SkframeWarning(UserWarning):
    """Base class of skframe's warnings."""


class PluginCollisionWarning(SkframeWarning):
    """Two distributions register the same component name; the later one is disabled."""


def _not_fitted_error():
    # lazy: scikit-learn costs ~0.5 s, and the command line imports this module at start-up
    from sklearn.exceptions import NotFittedError as _SkNotFittedError

    class NotFittedError(SkframeError, _SkNotFittedError):
        """An estimator is used before ``fit``; also a scikit-learn ``NotFittedError``."""

    NotFittedError.__module__ = __name__
    NotFittedError.__qualname__ = "NotFittedError"
    return NotFittedError


# Declared here, bound on first access by the module ``__getattr__`` below.
NotFittedError: type


def __getattr__(name):
    if name == "NotFittedError":
        cls = _not_fitted_error()
        globals()["NotFittedError"] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class SketchSizeWarning(SkframeWarning):
    """An explicit sketch size larger than the number of training points was clamped to it."""


class DegenerateDataWarning(SkframeWarning):
    """The kernel is numerically constant on the training points, or the sketch's rank collapsed."""
