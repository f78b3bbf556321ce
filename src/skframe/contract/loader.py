"""Plugin loading: the plugins found by :mod:`skframe.contract.discovery`, registered with pluggy.

Built-in components are ordinary plugins shipped in the ``skframe``
distribution; third-party distributions add theirs through the same entry-point
group. Loading is lazy (on first registry access) and robust: a plugin that
fails to import, defines a function that looks like a hook but is not one
(``register_kernel`` for ``register_kernels``), or raises inside a hook is
recorded as broken, with its error, and the other plugins keep working.

Name collisions: the built-in plugins are loaded first, then third-party plugins
in the order of their distribution and entry-point names. When a plugin
registers a name (or alias) that an earlier plugin of another distribution
already registered, the later component is disabled and one
:class:`skframe.exceptions.PluginCollisionWarning` (once per process) names both
distributions and how to choose.

``SKFRAME_DISABLE_PLUGINS`` skips plugins (see :mod:`skframe.contract.discovery`).
"""

from __future__ import annotations

import contextlib
import contextvars
import difflib
import threading
import warnings
from dataclasses import dataclass, field, replace

import pluggy

from skframe.contract import hookspecs
from skframe.contract.discovery import OWN_DIST as _OWN_DIST
from skframe.contract.discovery import BrokenPlugin, Source, discover_sources
from skframe.contract.kinds import HOOK_OF_KIND, KINDS
from skframe.exceptions import DuplicateComponentError, PluginCollisionWarning, PluginError

__all__ = [
    "KINDS",
    "HOOK_OF_KIND",
    "Component",
    "BrokenPlugin",
    "Collision",
    "PluginRegistry",
    "get_plugin_registry",
    "command_registry",
    "scoped_registry",
    "reset_plugins",
]

HOOK_NAMES = tuple(HOOK_OF_KIND.values()) + ("register_state_classes", "register_commands")


@dataclass
class Component:
    """One registered component: its canonical name, aliases, factory and provider."""

    name: str
    kind: str
    factory: object
    plugin: str
    distribution: str
    version: str
    aliases: tuple = ()

    def as_dict(self):
        return {
            "name": self.name,
            "kind": self.kind,
            "aliases": list(self.aliases),
            "plugin": self.plugin,
            "distribution": self.distribution,
            "version": self.version,
        }


@dataclass
class Collision:
    """A name registered by two distributions: the later registration is disabled."""

    kind: str
    name: str
    kept: str  # "distribution (plugin 'entry point')"
    disabled: str
    message: str

    def as_dict(self):
        return {"kind": self.kind, "name": self.name, "kept": self.kept, "disabled": self.disabled,
                "message": self.message}


@dataclass
class PluginRegistry:
    """All components of every loaded plugin, by kind and canonical name, plus their aliases."""

    components: dict = field(default_factory=lambda: {k: {} for k in KINDS})
    aliases: dict = field(default_factory=lambda: {k: {} for k in KINDS})
    broken: list = field(default_factory=list)
    collisions: list = field(default_factory=list)
    state_classes: dict = field(default_factory=dict)
    by_factory: dict = field(default_factory=dict)
    sources: list = field(default_factory=list)
    manager: pluggy.PluginManager = None

    def copy(self):
        """A copy to add components to, leaving this registry unchanged (the components are shared)."""
        return replace(self, components={k: dict(v) for k, v in self.components.items()},
                       aliases={k: dict(v) for k, v in self.aliases.items()}, broken=list(self.broken),
                       collisions=list(self.collisions), state_classes=dict(self.state_classes),
                       by_factory={f: list(c) for f, c in self.by_factory.items()}, sources=list(self.sources))

    def lookup(self, kind, name):
        """The :class:`Component` registered under ``name`` or one of its aliases, or None."""
        key = name.strip().lower()
        table = self.components[kind]
        return table.get(key) or table.get(self.aliases[kind].get(key, ""))

    def add(self, kind, name, factory, source, aliases=()):
        """Register ``factory`` under ``name`` (and ``aliases``) for ``source``; see the module doc for collisions."""
        where = f"plugin {source.name!r} ({source.distribution})"
        if isinstance(aliases, str):
            aliases = (aliases,)
        for value in (name, *aliases):
            if not isinstance(value, str) or not value.strip():
                raise PluginError(
                    f"{where} registered a {kind} with invalid name {value!r}; names must be non-empty strings"
                )
        if not callable(factory):
            raise PluginError(
                f"{where} registered {kind} {name!r} with a non-callable factory {factory!r}; pass a class or function"
            )
        key = name.strip().lower()
        alias_keys = tuple(dict.fromkeys(a.strip().lower() for a in aliases if a.strip().lower() != key))
        kept_aliases = []
        for k in (key, *alias_keys):
            other = self.lookup(kind, k)
            if other is None:
                if k != key:
                    kept_aliases.append(k)
                continue
            if other.plugin == source.name and other.distribution == source.distribution:
                raise DuplicateComponentError(
                    f"{where} registers the {kind} name {k!r} twice; register each name once (use aliases=...)"
                )
            self._collide(kind, k, other, source)
            if k == key:
                return None  # the whole component is disabled
        comp = Component(key, kind, factory, source.name, source.distribution, source.version, tuple(kept_aliases))
        self.components[kind][key] = comp
        try:
            self.by_factory.setdefault(factory, []).append(comp)
        except TypeError:  # an unhashable callable object: found by name only
            pass
        for a in kept_aliases:
            self.aliases[kind][a] = key
        return comp

    def _collide(self, kind, name, other, source):
        kept = f"{other.distribution} {other.version} (plugin {other.plugin!r})"
        if other.distribution == _OWN_DIST:
            choose = (
                "built-in names cannot be replaced: use the built-in one, "
                f"or ask {source.distribution} for another name; "
                f"SKFRAME_DISABLE_PLUGINS={source.distribution} skips {source.distribution} and silences this warning"
            )
        else:
            choose = (
                f"to use {source.distribution}'s instead set SKFRAME_DISABLE_PLUGINS={other.distribution} "
                f"(skips all of {other.distribution}); "
                f"SKFRAME_DISABLE_PLUGINS={source.distribution} keeps {other.distribution}'s "
                "and silences this warning"
            )
        message = (
            f"{kind} name {name!r} is registered by {kept} and by {source.label()}; "
            f"{source.distribution}'s {kind} {name!r} is disabled. {choose[0].upper()}{choose[1:]}."
        )
        self.collisions.append(Collision(kind, name, kept, source.label(), message))
        _warn_once(message)

    def commands_hooks(self):
        """Hook implementations of ``register_commands`` with their sources."""
        if self.manager is None:
            return []
        return [(impl, self._source_of(impl.plugin)) for impl in self.manager.hook.register_commands.get_hookimpls()]

    def _source_of(self, module):
        for src in self.sources:
            if src.module is module:
                return src
        return Source(getattr(module, "__name__", "?"), "?", "?", module)


_WARNED = set()


def _warn_once(message):
    """Emit ``message`` as a :class:`PluginCollisionWarning` once per process."""
    if message in _WARNED:
        return
    _WARNED.add(message)
    warnings.warn(message, PluginCollisionWarning, stacklevel=5)  # points at the plugin's register() call


def _unknown_hooks(pm, src):
    """Names of functions in a plugin that look like hooks but are not valid skframe hooks.

    The check of pluggy's ``check_pending``, for one plugin.
    """
    problems = []
    for caller in pm.get_hookcallers(src.module) or ():
        if not caller.has_spec() and any(not impl.optionalhook for impl in caller.get_hookimpls()):
            problems.append((caller.name, "is not a skframe hook"))
    module_name = getattr(src.module, "__name__", None)
    for attr in dir(src.module):
        fn = getattr(src.module, attr, None)
        if not attr.startswith("register_") or not callable(fn) or getattr(fn, "__module__", None) != module_name:
            continue
        if getattr(fn, "skframe_impl", None) is not None:
            continue  # marked: pluggy knows it (checked above)
        if attr in HOOK_NAMES:
            problems.append((attr, "is not marked with @skframe.hookimpl, so skframe would never call it"))
        else:
            problems.append((attr, "is not a skframe hook"))
    out = []
    for name, why in problems:
        close = difflib.get_close_matches(name, HOOK_NAMES, n=1)
        hint = f"; did you mean {close[0]!r}?" if close and close[0] != name else ""
        out.append(f"plugin {src.name!r} ({src.distribution}) defines {name!r}, which {why}{hint} "
                   f"(hooks: {', '.join(HOOK_NAMES)})")
    return out


def _call_hook(registry, hook_name, make_register):
    """Call every implementation of ``hook_name`` in plugin order; a raising plugin is recorded as broken."""
    hook = getattr(registry.manager.hook, hook_name)
    by_plugin = {id(impl.plugin): impl for impl in hook.get_hookimpls()}
    for src in registry.sources:
        impl = by_plugin.get(id(src.module))
        if impl is None:
            continue
        try:
            impl.function(register=make_register(src))
        except Exception as exc:
            registry.broken.append(
                BrokenPlugin(src.name, src.distribution, src.version,
                             f"{type(exc).__name__} in {impl.function.__name__}: {exc}")
            )


def _registered_sources(broken, *, third_party_only=False):
    """A plugin manager holding the hooks of the plugins found, and their sources in order.

    A plugin that fails to import or defines an unknown hook is appended to ``broken`` and left out.
    """
    pm = pluggy.PluginManager("skframe")
    pm.add_hookspecs(hookspecs)
    sources = []
    for src in discover_sources(broken, third_party_only=third_party_only):
        try:
            pm.register(src.module, name=f"{src.distribution}:{src.name}")
        except Exception as exc:
            broken.append(BrokenPlugin(src.name, src.distribution, src.version, f"{type(exc).__name__}: {exc}"))
            continue
        errors = _unknown_hooks(pm, src)
        if errors:
            pm.unregister(src.module)
            broken.append(BrokenPlugin(src.name, src.distribution, src.version, "; ".join(errors)))
            continue
        sources.append(src)
    return pm, sources


def _load():
    registry = PluginRegistry()
    registry.manager, registry.sources = _registered_sources(registry.broken)
    for kind in KINDS:

        def make_register(src, _kind=kind):
            def register(name, factory, aliases=()):
                registry.add(_kind, name, factory, src, aliases)

            return register

        _call_hook(registry, HOOK_OF_KIND[kind], make_register)

    def make_class_register(src):
        def register(cls):
            if not isinstance(cls, type):
                raise PluginError(
                    f"plugin {src.name!r} ({src.distribution}) registered {cls!r} as a state class; pass a class"
                )
            registry.state_classes[f"{cls.__module__}:{cls.__qualname__}"] = cls

        return register

    _call_hook(registry, "register_state_classes", make_class_register)
    return registry


_REGISTRY = None
_LOCK = threading.Lock()
# the registry of the current context while a check runs (see scoped_registry); None: the loaded one
_SCOPED = contextvars.ContextVar("skframe_scoped_registry", default=None)


def get_plugin_registry():
    """Load every plugin once and return the :class:`PluginRegistry`."""
    global _REGISTRY
    scoped = _SCOPED.get()
    if scoped is not None:
        return scoped
    if _REGISTRY is None:
        with _LOCK:
            if _REGISTRY is None:
                _REGISTRY = _load()
    return _REGISTRY


def command_registry():
    """A registry of the third-party plugins' command hooks only, for ``skframe`` to add their sub-commands.

    Only third-party distributions add commands, so this imports their plugin modules and nothing
    else: no component hook is called and no built-in plugin is imported (``skframe --help`` stays
    light with plugins installed). The loaded registry is returned when there is one already.
    """
    if _REGISTRY is not None or _SCOPED.get() is not None:
        return get_plugin_registry()
    registry = PluginRegistry()
    registry.manager, registry.sources = _registered_sources(registry.broken, third_party_only=True)
    return registry


@contextlib.contextmanager
def scoped_registry(registry):
    """Within the block, and in the current thread (context) only, :func:`get_plugin_registry` answers ``registry``.

    The conformance kit registers a component nobody registers on a copy (:meth:`PluginRegistry.copy`)
    this way: the loaded registry, and every other thread, never see it.
    """
    token = _SCOPED.set(registry)
    try:
        yield registry
    finally:
        _SCOPED.reset(token)


def reset_plugins():
    """Forget loaded plugins; the next registry access discovers them again (collision warnings are not repeated)."""
    global _REGISTRY
    with _LOCK:
        _REGISTRY = None
