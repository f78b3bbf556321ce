"""Parameters of components: declared constraints, checked once, values made plain.

A component declares the values each constructor parameter accepts in ``_parameter_constraints``
(the vocabulary of :mod:`skframe.constraints`, as the estimators do) and an optional fix per
parameter in ``_parameter_hints``; its ``__init__`` stores the arguments and calls
:func:`validate_component` (``Sketchy`` below). The accepted values are then made plain, so that
``params`` is JSON-ready and its ``repr`` stable: a number becomes a Python ``int`` or ``float``
after the :class:`~skframe.constraints.Interval` it satisfies, a boolean a Python ``bool``, and a
string accepted by :class:`~skframe.constraints.Options` (which compares case-insensitively) the
option as declared.

>>> from skframe.constraints import Interval, Options
>>> class Sketchy:
...     _parameter_constraints = {"size": [Interval("int", 1, None)], "kind": [Options("dot", "minmax")]}
...     _parameter_hints = {"size": "e.g. size=100"}
...     def __init__(self, size, kind="dot"):
...         self.size, self.kind = size, kind
...         validate_component(self)
>>> import numpy as np
>>> s = Sketchy(np.int64(3), "MinMax")
>>> type(s.size).__name__, s.kind
('int', 'minmax')
>>> Sketchy(0)
Traceback (most recent call last):
...
skframe.exceptions.InvalidParameterError: Sketchy: size=0 is invalid; it must be an integer in [1, inf) (e.g. size=100)
"""

from __future__ import annotations

from skframe.constraints import Interval, Options, satisfies, validate_params

__all__ = ["validate_component"]


def _plain(value, allowed):
    for constraint in allowed:
        if isinstance(constraint, Interval) and value in constraint:
            return int(value) if constraint.kind == "int" else float(value)
        if constraint == "boolean" and satisfies(value, "boolean"):
            return bool(value)
        if isinstance(constraint, Options) and isinstance(value, str) and value in constraint:
            return next(v for v in constraint.values if isinstance(v, str) and v.lower() == value.strip().lower())
        if satisfies(value, constraint):
            return value
    return value


def validate_component(component):
    """Check every parameter declared in ``_parameter_constraints`` and store its plain value.

    Parameters
    ----------
    component : object
        Holds each declared parameter as an attribute of the same name.

    Raises
    ------
    skframe.exceptions.InvalidParameterError
        Naming the class, the first invalid parameter, its value, the accepted values and the
        declared hint.
    """
    validate_params(component)
    for name, allowed in getattr(type(component), "_parameter_constraints", {}).items():
        if allowed != "no_validation":
            setattr(component, name, _plain(getattr(component, name), allowed))
