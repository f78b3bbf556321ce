"""Look components up by name: ``get_kernel("gaussian", gamma=0.1)`` and friends.

Names come from the installed plugins (see :mod:`skframe.contract.loader`); an alias
resolves to the entry it belongs to. An unknown name raises
:class:`skframe.exceptions.UnknownComponentError` listing every registered name
of that kind. Objects are accepted in place of names and returned unchanged, so
every API takes either.

Component identity: :func:`spec_of` answers which registered name and parameters
describe a component, whether it was built by name (``get_kernel("rbf")``) or
constructed directly from a registered class (``GaussianKernel(gamma=1.0)``).
Nothing is stored on the objects: the registry keeps a reverse map from each
factory to its entry, and remembers (weakly) which name built which object.
"""

from __future__ import annotations

import difflib
import inspect
import weakref

from skframe.contract.kinds import KIND, KINDS, kind_label, kind_plural
from skframe.contract.loader import get_plugin_registry
from skframe.contract.specs import ComponentSpec
from skframe.exceptions import InvalidParameterError, UnknownComponentError

__all__ = [
    "get_component",
    "build_component",
    "get_kernel",
    "get_sketch",
    "get_loss",
    "get_solver",
    "get_decoder",
    "get_output_matrix",
    "list_components",
    "spec_of",
    "component_name",
    "component_params",
    "constructor_params",
]


_label = kind_label

def list_components(kind=None):
    """Registered :class:`skframe.contract.loader.Component` entries, optionally of one kind.

    One per entry, aliases included.
    """
    reg = get_plugin_registry()
    kinds = KINDS if kind is None else (kind,)
    out = []
    for k in kinds:
        out.extend(sorted(reg.components[k].values(), key=lambda c: c.name))
    return out


def _lookup(kind, name):
    reg = get_plugin_registry()
    comp = reg.lookup(kind, name)
    if comp is None:
        known = sorted(set(reg.components[kind]) | set(reg.aliases[kind]))
        close = difflib.get_close_matches(name.strip().lower(), known, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        broken = ""
        if reg.broken:
            broken = " Broken plugins (see `skframe plugins`): " + ", ".join(b.plugin for b in reg.broken) + "."
        raise UnknownComponentError(
            f"unknown {_label(kind)} {name!r}; "
            f"registered {kind_plural(kind)}: {', '.join(known) or '(none)'}."
            f"{hint}{broken}"
        )
    return comp


# id(obj) -> (weak reference, kind, canonical name, build params) for objects built by name
_BUILT = {}


def _remember(obj, kind, name, params):
    key = id(obj)
    try:
        ref = weakref.ref(obj, lambda _ref, key=key: _BUILT.pop(key, None))
    except TypeError:  # not weak-referenceable (__slots__, builtins): found through its class only
        return
    _BUILT[key] = (ref, kind, name, dict(params))


def get_component(kind, spec, **params):
    """Build a component of ``kind`` from a registered name, or return an object as is.

    Parameters
    ----------
    kind : {"kernel", "sketch", "loss", "solver", "decoder", "output_matrix"}
    spec : str, ComponentSpec or object
        Registered name or alias (case-insensitive), a :class:`skframe.contract.specs.ComponentSpec`
        of that kind, or an already built component.
    **params
        Passed to the factory; giving parameters together with an object is an error.
    """
    if kind not in KINDS:
        raise InvalidParameterError(f"unknown component kind {kind!r}; use one of {', '.join(KINDS)}")
    if isinstance(spec, ComponentSpec):
        if spec.kind != kind:
            raise InvalidParameterError(f"a {spec.kind} spec was given where a {_label(kind)} is expected: {spec!r}")
        spec, params = spec.name, {**spec.params, **params}
    if not isinstance(spec, str):
        if params:
            raise InvalidParameterError(
                f"{_label(kind)} parameters {sorted(params)} were given with a {_label(kind)} object {spec!r}; "
                f"set them on the object or pass the {_label(kind)} by name"
            )
        return spec
    comp = _lookup(kind, spec)
    try:
        obj = comp.factory(**params)
    except TypeError as exc:
        raise InvalidParameterError(
            f"invalid parameters {params} for {_label(kind)} {comp.name!r} ({comp.distribution}): {exc}"
            f"{_accepted_hint(comp.factory, params)}"
        ) from exc
    _remember(obj, kind, comp.name, params)
    return obj


def build_component(spec):
    """Build the component a :class:`~skframe.contract.specs.ComponentSpec` describes, through the registry.

    Examples
    --------
    >>> build_component(ComponentSpec("kernel", "rbf", {"gamma": 0.5}))
    GaussianKernel(gamma=0.5)
    """
    return get_component(spec.kind, spec)


def _accepted_hint(factory, params):
    """'; accepted parameters: ...' (with a did-you-mean) when the factory's signature is readable."""
    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):
        return ""
    names = [n for n, p in sig.parameters.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    if not names:
        return "; it takes no parameters"
    hint = f"; accepted parameters: {', '.join(names)}"
    for bad in params:
        close = difflib.get_close_matches(bad, names, n=1)
        if bad not in names and close:
            hint += f" (did you mean {close[0]!r} instead of {bad!r}?)"
    return hint


def get_kernel(spec, **params):
    """Build a kernel by name (e.g. ``get_kernel("gaussian", gamma=0.1)``) or return a kernel object."""
    return get_component("kernel", spec, **params)


def get_sketch(spec, **params):
    """Build a sketch by name (e.g. ``get_sketch("psr", size=100, p=0.01)``) or return a sketch object."""
    return get_component("sketch", spec, **params)


def get_loss(spec, **params):
    """Build a loss by name (e.g. ``get_loss("huber", kappa=1.0)``) or return a loss object."""
    return get_component("loss", spec, **params)


def get_solver(spec, **params):
    """Build a solver by name or return a solver object."""
    return get_component("solver", spec, **params)


def get_decoder(spec, **params):
    """Build a decoder by name or return a decoder object."""
    return get_component("decoder", spec, **params)


def get_output_matrix(spec, **params):
    """Build an output matrix by name (e.g. ``get_output_matrix("quantile", gamma=2.0)``) or return the object.

    The object's ``matrix(d=None, *, Y=None, quantiles=None)`` gives the d x d matrix;
    see :mod:`skframe.core.output_matrices`.
    """
    return get_component("output_matrix", spec, **params)


def constructor_params(obj):
    """The constructor's arguments of ``obj`` read back from its attributes of the same names, or None.

    scikit-learn's ``get_params`` convention: every named parameter of ``type(obj).__init__`` must be
    readable as ``obj.<name>`` (``__init__(self, gamma=1.0)`` storing ``self.gamma``); otherwise, or when
    the constructor takes ``*args``, the route does not apply and None is returned. ``**kwargs`` are left out.

    Examples
    --------
    >>> class HelloRBF:
    ...     def __init__(self, gamma=1.0):
    ...         self.gamma = gamma
    >>> constructor_params(HelloRBF(0.05))
    {'gamma': 0.05}
    """
    init = type(obj).__init__
    if init is object.__init__:
        return {}
    try:
        found = list(inspect.signature(init).parameters.values())[1:]  # after self
    except (TypeError, ValueError):  # a builtin or extension type without a signature
        return None
    params = {}
    for p in found:
        if p.kind is p.VAR_POSITIONAL:
            return None
        if p.kind is p.VAR_KEYWORD:
            continue
        try:
            params[p.name] = getattr(obj, p.name)
        except Exception:  # noqa: BLE001 - a missing (or failing) attribute: the route does not apply
            return None
    return params


def _params_of(obj, built_params, factory=None):
    """``obj.params``, else ``get_params()``, else the parameters it was built with by name, else (for an
    object of the registered class ``factory``) its constructor's arguments (:func:`constructor_params`)."""
    params = getattr(obj, "params", None)
    if not isinstance(params, dict):
        get_params = getattr(obj, "get_params", None)
        if callable(get_params) and not isinstance(obj, type):
            try:
                params = get_params(deep=False)
            except TypeError:
                params = get_params()
    if not isinstance(params, dict):
        params = built_params
    if params is None and isinstance(factory, type) and type(obj) is factory:
        params = constructor_params(obj)
    return dict(params or {})


def _entry_of(reg, kinds, obj):
    """The registered entry whose factory is ``type(obj)`` or, for function factories, whose name is ``obj.name``."""
    own_name = getattr(obj, "name", None)
    own_name = own_name.strip().lower() if isinstance(own_name, str) else None
    try:
        candidates = [c for c in reg.by_factory.get(type(obj), ()) if c.kind in kinds]
    except TypeError:
        candidates = []
    if candidates:
        for c in candidates:
            if own_name is not None and (own_name == c.name or own_name in c.aliases):
                return c
        return candidates[0]
    if own_name is not None:
        for k in kinds:
            comp = reg.lookup(k, own_name)
            if comp is not None and not isinstance(comp.factory, type) and _looks_like(k, obj):
                return comp  # a function factory (e.g. "psr" building a PSparsifiedSketch) naming its product
    return None


def _looks_like(kind, obj):
    """The object has what an object of ``kind`` has (the kinds table); checked before trusting its own ``name``."""
    return any(all(hasattr(obj, n) for n in methods) for methods in KIND[kind].methods)


def spec_of(kind, obj):
    """The :class:`~skframe.contract.specs.ComponentSpec` describing ``obj``; None if it is no registered component.

    Parameters
    ----------
    kind : str or None
        Component kind to look in; None looks in every kind.
    obj : object
        A component built by name through the registry, or constructed directly from a
        registered class (``GaussianKernel(gamma=1.0)``).

    Returns
    -------
    ComponentSpec or None
        ``(kind, canonical name, params)``; params come from ``obj.params`` (or
        ``obj.get_params()``), else from the parameters it was built with by name, else, for an
        object of a registered class, from its constructor's arguments read back from the
        attributes of the same names (:func:`constructor_params`); else none.

    Examples
    --------
    >>> spec_of("kernel", get_kernel("rbf", gamma=0.5))
    ComponentSpec(kind='kernel', name='gaussian', params={'gamma': 0.5})
    """
    if obj is None or isinstance(obj, (str, bytes, int, float, dict, list, tuple, type)):
        return None
    if kind is not None and kind not in KINDS:
        raise InvalidParameterError(f"unknown component kind {kind!r}; use one of {', '.join(KINDS)}")
    kinds = KINDS if kind is None else (kind,)
    reg = get_plugin_registry()
    built = _BUILT.get(id(obj))
    if built is not None and built[0]() is obj and built[1] in kinds:
        _, found_kind, name, built_params = built
        comp = reg.lookup(found_kind, name)
    else:
        comp = _entry_of(reg, kinds, obj)
        if comp is None:
            return None
        found_kind, name, built_params = comp.kind, comp.name, None
    return ComponentSpec(found_kind, name, _params_of(obj, built_params, None if comp is None else comp.factory))


def component_name(obj):
    """The registered name describing a component (see :func:`spec_of`), or None."""
    spec = spec_of(None, obj)
    return None if spec is None else spec.name


def component_params(obj):
    """The parameters describing a component (see :func:`spec_of`), or None."""
    spec = spec_of(None, obj)
    return None if spec is None else dict(spec.params)
