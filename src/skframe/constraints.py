"""Declarative parameter constraints for estimators and components.

An estimator declares, for each constructor parameter, the list of values it
accepts; :func:`validate_params` checks them all at the start of ``fit`` and raises
:class:`skframe.exceptions.InvalidParameterError` naming the parameter, the value and
what to pass instead. A value is valid when it satisfies at least one constraint of
its list. Constraints are:

* an :class:`Interval` of integers or reals (``Interval("real", 0, None, closed="neither")``);
* :class:`Options` — a fixed set of values (``Options("auto")``, ``Options("mean", "max")``);
* :class:`HasMethods` — an object with given methods (a kernel object, a solver object);
* a type (``dict``, ``str``, ``np.random.RandomState``) — an instance of it;
* ``None`` — the value None;
* the strings ``"boolean"``, ``"random_state"``, ``"array-like"`` (a list, tuple or array),
  ``"callable"``.

The design follows scikit-learn's ``_parameter_constraints``; this is an independent,
smaller version that skframe's plugins may use too.

>>> class Model:
...     _parameter_constraints = {"lam": [Interval("real", 0, None, closed="neither")]}
...     def __init__(self, lam=1e-3):
...         self.lam = lam
>>> validate_params(Model(lam=0.1))
>>> validate_params(Model(lam=-1.0))
Traceback (most recent call last):
...
skframe.exceptions.InvalidParameterError: Model: lam=-1.0 is invalid; it must be a real number in (0, inf)
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from skframe.exceptions import InvalidParameterError

__all__ = ["Interval", "Options", "HasMethods", "validate_params", "check_param", "satisfies", "describe"]


class Interval:
    """Numbers of a kind in ``[low, high]`` (bounds None mean unbounded).

    Parameters
    ----------
    kind : {"int", "real"}
        ``"int"`` accepts integers only (not bools); ``"real"`` accepts any finite real
        number (integers included).
    low, high : number or None
    closed : {"both", "left", "right", "neither"}, default="both"
        Which bounds belong to the interval.
    """

    def __init__(self, kind, low=None, high=None, *, closed="both"):
        if kind not in ("int", "real"):
            raise ValueError(f"Interval kind={kind!r}; use 'int' or 'real'")
        if closed not in ("both", "left", "right", "neither"):
            raise ValueError(f"Interval closed={closed!r}; use 'both', 'left', 'right' or 'neither'")
        self.kind, self.low, self.high, self.closed = kind, low, high, closed

    def __contains__(self, value):
        base = numbers.Integral if self.kind == "int" else numbers.Real
        if isinstance(value, bool) or not isinstance(value, base):
            return False
        if self.kind == "real" and not math.isfinite(float(value)):
            return False
        if self.low is not None:
            if value < self.low or (value == self.low and self.closed in ("right", "neither")):
                return False
        if self.high is not None:
            if value > self.high or (value == self.high and self.closed in ("left", "neither")):
                return False
        return True

    def __str__(self):
        left = "[" if self.low is not None and self.closed in ("both", "left") else "("
        right = "]" if self.high is not None and self.closed in ("both", "right") else ")"
        lo = "-inf" if self.low is None else repr(self.low)
        hi = "inf" if self.high is None else repr(self.high)
        what = "an integer" if self.kind == "int" else "a real number"
        return f"{what} in {left}{lo}, {hi}{right}"


class Options:
    """One of a fixed set of values; strings compare case-insensitively.

    >>> "Auto" in Options("auto")
    True
    """

    def __init__(self, *values):
        self.values = tuple(values)

    def __contains__(self, value):
        for v in self.values:
            if isinstance(v, str) and isinstance(value, str):
                if v.lower() == value.strip().lower():
                    return True
            elif type(v) is type(value) and v == value:
                return True
        return False

    def __str__(self):
        return "one of " + ", ".join(repr(v) for v in self.values)


class HasMethods:
    """An object with all the given methods (duck typing), e.g. ``HasMethods("solve")``."""

    def __init__(self, *methods):
        self.methods = tuple(methods)

    def __contains__(self, value):
        return not isinstance(value, str) and all(callable(getattr(value, m, None)) for m in self.methods)

    def __str__(self):
        return "an object with method" + ("s " if len(self.methods) > 1 else " ") + ", ".join(
            f"{m}()" for m in self.methods
        )


def satisfies(value, constraint):
    """True when ``value`` satisfies one constraint (see the module docstring)."""
    if constraint is None:
        return value is None
    if isinstance(constraint, (Interval, Options, HasMethods)):
        return value in constraint
    if constraint == "boolean":
        return isinstance(value, (bool, np.bool_))
    if constraint == "random_state":
        return (value is None or isinstance(value, (np.random.RandomState, np.random.Generator))
                or (isinstance(value, numbers.Integral) and not isinstance(value, bool) and 0 <= value < 2**32))
    if constraint == "array-like":
        return isinstance(value, (list, tuple, np.ndarray))
    if constraint == "callable":
        return callable(value)
    if isinstance(constraint, type):
        return isinstance(value, constraint)
    raise ValueError(f"unknown parameter constraint {constraint!r}")


def describe(constraint):
    """A short phrase describing a constraint, for error messages."""
    if constraint is None:
        return "None"
    if isinstance(constraint, (Interval, Options, HasMethods)):
        return str(constraint)
    if constraint == "random_state":
        return "an int seed in [0, 2**32), a RandomState, a Generator"
    if constraint in ("boolean", "array-like", "callable"):
        return {"boolean": "True or False", "array-like": "a list or array", "callable": "a callable"}[constraint]
    if isinstance(constraint, type):
        return f"a {constraint.__name__}"
    return repr(constraint)


def check_param(name, value, constraints, *, owner=None, hint=None):
    """Raise :class:`InvalidParameterError` unless ``value`` satisfies one of ``constraints``."""
    if any(satisfies(value, c) for c in constraints):
        return value
    options = [describe(c) for c in constraints]
    allowed = options[0] if len(options) == 1 else ", ".join(options[:-1]) + " or " + options[-1]
    prefix = f"{owner}: " if owner else ""
    msg = f"{prefix}{name}={value!r} is invalid; it must be {allowed}"
    if hint:
        msg += f" ({hint})"
    raise InvalidParameterError(msg)


def validate_params(estimator, constraints=None):
    """Check every parameter of ``estimator`` declared in ``_parameter_constraints``.

    Parameters
    ----------
    estimator : object
        Reads ``estimator.<name>`` for each declared name; optional
        ``_parameter_hints`` maps names to a fix added to the message.
    constraints : dict, optional
        Overrides ``type(estimator)._parameter_constraints``.

    Raises
    ------
    InvalidParameterError
        Naming the first invalid parameter, its value and the accepted values.
    """
    table = constraints if constraints is not None else getattr(type(estimator), "_parameter_constraints", {})
    hints = getattr(type(estimator), "_parameter_hints", {})
    for name, allowed in table.items():
        if allowed == "no_validation":
            continue
        check_param(name, getattr(estimator, name), allowed, owner=type(estimator).__name__, hint=hints.get(name))
