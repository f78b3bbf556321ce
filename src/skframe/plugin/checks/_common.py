"""What every check shares: the failure messages, tags, params round-trip, save and load."""

from __future__ import annotations

import contextlib
import json
import math
import os
import tempfile
from dataclasses import fields

import numpy as np
import scipy.sparse as sp

from skframe.contract.discovery import Source
from skframe.contract.loader import get_plugin_registry, scoped_registry
from skframe.contract.registry import build_component, spec_of
from skframe.contract.tags import TAGS_OF_KIND, KernelTags, LossTags, get_tags
from skframe.exceptions import PluginError, SkframeError
from skframe.persistence import load, save
from skframe.persistence.fidelity import ROUND_TRIP_FIX, round_trip_problem


class ConformanceError(PluginError):
    """A component failed properties of the conformance kit: every failure, each named.

    The message has one line per failure, ``check_<kind>(<class>): <property>: <what happened>; <fix>``.

    Attributes
    ----------
    failures : list of (str, str)
        ``(property, line)`` for each failure, in the order found.
    checked : set of str
        The properties that were evaluated (passed or failed).
    stopped : str or None
        Why the check stopped before its end (a property it could not go past), else None.
    """

    def __init__(self, failures, checked=(), stopped=None):
        self.failures, self.checked, self.stopped = list(failures), set(checked), stopped
        lines = [line for _, line in self.failures]
        if stopped:
            lines.append(f"(the properties after it were not checked: {stopped})")
        super().__init__("\n".join(lines))


class _Stop(Exception):
    """A failure the check cannot go past (the component could not even be called)."""


class _Failures:
    """Collects the kit's failures: ``check_<kind>(<class>): <property>: <what happened>; <fix>``.

    ``require`` records a failed property and goes on; calling the object records one and stops the check.
    """

    def __init__(self, kind, component, properties):
        self.prefix = f"check_{kind}({type(component).__name__})"
        self.properties, self.failures, self.checked, self.stopped = properties, [], set(), None

    def _record(self, prop, what, fix):
        if prop not in self.properties:  # the list parametrize_with_checks makes one test of each
            raise AssertionError(f"{prop!r} is not a property of {self.prefix}; add it to the kind's PROPERTIES")
        self.checked.add(prop)
        self.failures.append((prop, f"{self.prefix}: {prop}: {what}; {fix}"))

    def __call__(self, prop, what, fix):
        self._record(prop, what, fix)
        self.stopped = f"{self.prefix} stopped at {prop}"
        raise _Stop(prop)

    def passed(self, *props):
        """Mark properties evaluated without a failure (those not checked through :meth:`require`)."""
        self.checked.update(props)

    def require(self, ok, prop, what, fix):
        if prop not in self.properties:
            raise AssertionError(f"{prop!r} is not a property of {self.prefix}; add it to the kind's PROPERTIES")
        self.checked.add(prop)
        if not ok:
            self._record(prop, what, fix)
        return bool(ok)


def _rng(rng):
    return rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)


def _build(obj_or_factory, params):
    """The component: an object as is, a class called with ``params``."""
    if isinstance(obj_or_factory, type):
        return obj_or_factory(**dict(params or {}))
    if params:
        raise PluginError(f"params={params!r} given with a component object {obj_or_factory!r}; pass its class instead")
    return obj_or_factory


#: the properties every kind's check evaluates (besides its own)
COMMON_PROPERTIES = ("tags", "params", "params round-trip", "repr", "save and load")


@contextlib.contextmanager
def _checking(kind, obj_or_factory, params, rng, properties):
    """The frame of every check: yields the component, its failure collector, its checked tags and a generator.

    At the end, a :class:`ConformanceError` lists every failure; an unexpected error after a failure ends the
    check with the failures found (the error is a consequence), one before any failure is raised as it is.
    """
    component = _build(obj_or_factory, params)
    fail = _Failures(kind, component, COMMON_PROPERTIES + tuple(properties))
    try:
        tags = _check_tags(fail, component, kind)
    except _Stop:
        raise ConformanceError(fail.failures, fail.checked, fail.stopped) from None
    try:
        yield component, fail, tags, _rng(rng)
    except _Stop:
        pass
    except Exception as exc:
        if not fail.failures:
            raise
        fail.stopped = f"{type(exc).__name__}: {exc}"
    if fail.failures:
        raise ConformanceError(fail.failures, fail.checked, fail.stopped)


def _close(A, B, rtol, atol=0.0):
    A, B = np.asarray(A, dtype=np.float64), np.asarray(B, dtype=np.float64)
    if A.shape != B.shape:
        return False
    both_nan = np.isnan(A) & np.isnan(B)  # a NaN is the "finite" property's failure, not every comparison's
    A, B = np.where(both_nan, 0.0, A), np.where(both_nan, 0.0, B)
    scale = max(1.0, float(np.max(np.abs(B), initial=0.0)))
    return bool(np.all(np.abs(A - B) <= rtol * scale + atol))


def _dense(K):
    return np.asarray(K.toarray() if sp.issparse(K) else K, dtype=np.float64)


def _worst(A, B):
    A, B = np.asarray(A, dtype=np.float64), np.asarray(B, dtype=np.float64)
    if A.shape != B.shape:
        return f"shape {A.shape} instead of {B.shape}"
    return f"largest difference {float(np.max(np.abs(A - B), initial=0.0)):.3g}"


# ----------------------------------------------------------------------------- shared: tags, params, save/load
def _check_tags(fail, component, kind):
    try:
        tags = get_tags(component, kind)
        check_tags(tags)
    except SkframeError as exc:
        fail("tags", str(exc), f"return a well-formed {kind} tags object from __skframe_tags__")
    fail.passed("tags")
    return tags


def _params_of(component):
    params = getattr(component, "params", None)
    if params is None and callable(getattr(component, "get_params", None)):
        params = component.get_params()
    return params


def _json_ready(value):
    def default(v):
        if isinstance(v, np.ndarray) and not v.dtype.hasobject:
            return v.tolist()
        if isinstance(v, np.generic):
            return v.item()
        raise TypeError(f"{type(v).__name__} is not JSON-ready")

    try:
        json.dumps(value, default=default)
        return None
    except (TypeError, ValueError) as exc:
        return str(exc)


def _same_params(a, b):
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_params(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same_params(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a), np.asarray(b))
    return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))


def _check_params(fail, component, kind):
    """The parameters a model file saves rebuild an equal component; returns the rebuilt one.

    They are those :func:`skframe.save` writes (:func:`skframe.contract.registry.spec_of`): the component's
    ``params`` (or ``get_params()``), else the parameters it was built with by name, else its constructor's
    arguments read back from its attributes of the same names; the rebuilt component must compute what the
    component does, by the rule ``save`` applies (:func:`skframe.persistence.fidelity.round_trip_problem`).
    """
    declared = _params_of(component)
    with _registered(component, kind):
        spec = spec_of(kind, component)
        params = declared if declared is not None else dict(spec.params)
        if declared is not None:
            if not (isinstance(params, dict) and all(isinstance(k, str) for k in params)):
                fail("params", f"params is {params!r}", "return the constructor arguments as a dict from a "
                     "`params` property (models using the component are saved from it)")
            problem = _json_ready(params)
            fail.require(problem is None, "params", f"{params!r} is not JSON-ready ({problem})",
                         "return numbers, strings, lists, dicts or NumPy arrays")
        try:
            rebuilt = build_component(spec)
        except (TypeError, SkframeError) as exc:
            how = type(component).__name__ if spec.name.startswith(_SCOPED_PREFIX) else \
                f"the registered factory {spec.name!r}"
            if declared is None:
                fail("params", f"it has no `params` and {how}(**{params!r}) failed ({exc})", ROUND_TRIP_FIX)
            fail("params round-trip", f"{how}(**{params!r}) failed ({exc})",
                 "make `params` return exactly the arguments the factory takes")
    fail.passed("params", "params round-trip")
    problem = round_trip_problem(kind, component, rebuilt)
    fail.require(problem is None, "params round-trip", f"rebuilt from the saved parameters {params!r}, {problem}",
                 ROUND_TRIP_FIX)
    if declared is not None:
        fail.require(_same_params(_params_of(rebuilt), params), "params round-trip",
                     f"rebuilt from {params!r} it has params {_params_of(rebuilt)!r}",
                     "store every constructor argument unchanged and return it in `params`")
    if type(component).__repr__ is not object.__repr__:
        fail.require(repr(rebuilt) == repr(component), "repr", f"{repr(component)!r} but rebuilt {repr(rebuilt)!r}",
                     "derive __repr__ from params (__repr__ = skframe.plugin.api.repr_from_params)")
    return rebuilt


_SCOPED_PREFIX = "conformance-check-"


@contextlib.contextmanager
def _registered(component, kind):
    """The component registered for the duration of the check when no plugin registers it.

    It is added to a copy of the registry that only the current thread sees while the check runs
    (:func:`skframe.contract.loader.scoped_registry`): the loaded registry is never changed.
    """
    if spec_of(kind, component) is not None:
        yield
        return
    registry = get_plugin_registry().copy()
    factory = type(component)
    name = f"{_SCOPED_PREFIX}{factory.__module__}.{factory.__qualname__}".lower()
    registry.add(kind, name, factory, Source("conformance-check", "skframe-conformance-check", "0"))
    with scoped_registry(registry):
        yield


def _saved_and_loaded(fail, component, kind):
    """The component after a save to a model file and a load."""
    with _registered(component, kind), tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "component.skf")
        try:
            save({"component": component}, path)
            loaded = load(path)["component"]
        except SkframeError as exc:
            if getattr(exc, "problem", None) is not None:  # what the params round-trip says, refused by save
                fail("save and load", f"skframe.save refuses it: {exc.problem}", ROUND_TRIP_FIX)
            fail("save and load", f"saving or loading failed ({exc})",
                 "make `params` JSON-ready and the constructor accept them")
    fail.require(type(loaded) is type(component), "save and load",
                 f"loaded a {type(loaded).__name__}", "register the class itself as the factory, or keep its type")
    return loaded


def _copies(fail, component, kind):
    """The component rebuilt from the params a model file saves, then after a save and a load, each with its
    property's name and a few words for a message: ``(copy, prop, how)``, the second made when the first was
    checked."""
    yield _check_params(fail, component, kind), "params round-trip", "rebuilt from params"
    yield _saved_and_loaded(fail, component, kind), "save and load", "saved and loaded"


def _rebuilt_alike(fail, ok, prop, what):
    """The rebuilt (``params round-trip``) or loaded (``save and load``) component behaves as the original on the
    check's own data; a property that failed already (by the rule ``save`` applies) keeps its one reason."""
    if any(failed == prop for failed, _ in fail.failures):
        return False
    return fail.require(ok, prop, what, ROUND_TRIP_FIX)


def _no_state_change(fail, component, before, what):
    after = {k: repr(v) for k, v in vars(component).items()} if hasattr(component, "__dict__") else {}
    fail.require(after == before, "no run state",
                 f"{what} changed the attributes {sorted(set(after.items()) ^ set(before.items()))[:3]}",
                 "keep run state out of the component (return it, e.g. in SolveResult.info)")


def _attributes(component):
    return {k: repr(v) for k, v in vars(component).items()} if hasattr(component, "__dict__") else {}


def check_tags(tags):
    """Check that a tags object is well-formed: each field of the declared type, values that make sense.

    Raises
    ------
    skframe.exceptions.PluginError
        Naming the field, its value and what to give instead.

    Examples
    --------
    >>> from skframe.contract.tags import KernelTags
    >>> check_tags(KernelTags(backends=("numpy", "cupy")))
    >>> from skframe.contract.tags import KernelTags
    >>> check_tags(KernelTags(backends="numpy"))
    Traceback (most recent call last):
    ...
    skframe.exceptions.PluginError: KernelTags.backends='numpy' is invalid; give a tuple of str, e.g. ('numpy',)
    """
    if type(tags) not in TAGS_OF_KIND.values():
        names = ", ".join(c.__name__ for c in TAGS_OF_KIND.values())
        raise PluginError(f"{tags!r} is not a tags object; use one of {names}")
    name = type(tags).__name__
    for f in fields(tags):
        value = getattr(tags, f.name)
        default = f.default
        problem = None
        if isinstance(default, bool):
            problem = None if isinstance(value, bool) else "give True or False"
        elif isinstance(default, tuple):
            ok = isinstance(value, tuple) and value and all(isinstance(v, str) for v in value)
            problem = None if ok else f"give a tuple of str, e.g. {default!r}"
        elif f.name == "lipschitz":
            ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0
            problem = None if ok else "give a positive number, or math.inf when the loss is not Lipschitz"
        elif f.name == "quantiles" and value is not None:
            ok = isinstance(value, tuple) and value and all(
                isinstance(t, (int, float)) and not isinstance(t, bool) and 0 < t < 1 for t in value)
            problem = None if ok else "give None or a tuple of levels in (0, 1)"
        elif f.name == "default_solver" and value is not None:
            problem = None if isinstance(value, str) and value.strip() else "give None or a registered solver name"
        elif f.name == "device_formula" and value is not None:
            problem = None if isinstance(value, str) and value.strip() else "give None or a formula such as 'gaussian'"
        if problem:
            raise PluginError(f"{name}.{f.name}={value!r} is invalid; {problem}")
    if isinstance(tags, KernelTags):
        if "float64" not in tags.dtypes:
            raise PluginError(
                f"KernelTags.dtypes={tags.dtypes!r} lacks 'float64'; every kernel computes float64 blocks"
            )
        if "numpy" not in tags.backends:
            raise PluginError(f"KernelTags.backends={tags.backends!r} lacks 'numpy'; every kernel takes NumPy arrays")
    if isinstance(tags, LossTags) and tags.square and not tags.smooth:
        raise PluginError("LossTags(square=True, smooth=False) is inconsistent; the square loss is smooth")
