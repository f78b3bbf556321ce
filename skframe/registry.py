"""Look components up by name: ``get_kernel("gaussian", gamma=0.1)`` and friends.

Names come from the installed plugins (see :mod:`skframe.plugins`). An unknown
name raises :class:`skframe.exceptions.UnknownComponentError` listing every
registered name of that kind. Objects are accepted in place of names and
returned unchanged, so every API takes either.
"""

from __future__ import annotations

import difflib

from .exceptions import InvalidParameterError, UnknownComponentError
from .plugins import KINDS, get_plugin_registry

__all__ = [
    "get_component",
    "get_kernel",
    "get_sketch",
    "get_loss",
    "get_solver",
    "get_decoder",
    "list_components",
    "component_name",
    "component_params",
]


_PLURAL = {"sketch": "sketches", "loss": "losses"}


def list_components(kind=None):
    """Registered :class:`skframe.plugins.Component` entries, optionally of one kind."""
    reg = get_plugin_registry()
    kinds = KINDS if kind is None else (kind,)
    out = []
    for k in kinds:
        out.extend(sorted(reg.components[k].values(), key=lambda c: c.name))
    return out


def _lookup(kind, name):
    reg = get_plugin_registry()
    table = reg.components[kind]
    key = name.strip().lower()
    if key not in table:
        known = sorted(table)
        close = difflib.get_close_matches(key, known, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        broken = ""
        if reg.broken:
            broken = " Broken plugins (see `skframe plugins`): " + ", ".join(b.plugin for b in reg.broken) + "."
        raise UnknownComponentError(
            f"unknown {kind} {name!r}; registered {_PLURAL.get(kind, kind + 's')}: {', '.join(known) or '(none)'}."
            f"{hint}{broken}"
        )
    return table[key]


def get_component(kind, spec, **params):
    """Build a component of ``kind`` from a registered name, or return an object as is.

    Parameters
    ----------
    kind : {"kernel", "sketch", "loss", "solver", "decoder"}
    spec : str or object
        Registered name (case-insensitive) or an already built component.
    **params
        Passed to the factory; giving parameters together with an object is an error.
    """
    if kind not in KINDS:
        raise InvalidParameterError(f"unknown component kind {kind!r}; use one of {', '.join(KINDS)}")
    if not isinstance(spec, str):
        if params:
            raise InvalidParameterError(
                f"{kind} parameters {sorted(params)} were given with a {kind} object {spec!r}; "
                f"set them on the object or pass the {kind} by name"
            )
        return spec
    comp = _lookup(kind, spec)
    try:
        obj = comp.factory(**params)
    except TypeError as exc:
        raise InvalidParameterError(
            f"invalid parameters {params} for {kind} {comp.name!r} ({comp.distribution}): {exc}"
            f"{_accepted_hint(comp.factory, params)}"
        ) from exc
    try:
        obj._skframe_kind = kind
        obj._skframe_name = comp.name
        obj._skframe_params = dict(params)
    except Exception:  # objects with __slots__ etc.
        pass
    return obj


def _accepted_hint(factory, params):
    """'; accepted parameters: ...' (with a did-you-mean) when the factory's signature is readable."""
    import inspect

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


def component_name(obj):
    """The registry name an object was built under, or None."""
    return getattr(obj, "_skframe_name", None)


def component_params(obj):
    """The parameters an object was built with by the registry, or None."""
    return getattr(obj, "_skframe_params", None)
