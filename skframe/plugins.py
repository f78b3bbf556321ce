"""Plugin discovery: entry points of group ``skframe``, loaded with pluggy.

Built-in components are ordinary plugins shipped in the ``skframe``
distribution; third-party distributions add theirs through the same entry-point
group. Loading is lazy (on first registry access) and robust: a plugin that
fails to import or raises inside a hook is recorded as broken, with its error,
and the other plugins keep working.

Set ``SKFRAME_DISABLE_PLUGINS=1`` to load only the built-in plugins, or to a
comma-separated list of entry-point names (or distribution names) to skip those.
"""

from __future__ import annotations

import importlib
import os
import threading
from dataclasses import dataclass, field
from importlib import metadata

import pluggy

from . import hookspecs
from .exceptions import DuplicateComponentError, PluginError

__all__ = ["KINDS", "Component", "BrokenPlugin", "PluginRegistry", "get_plugin_registry", "reset_plugins"]

KINDS = ("kernel", "sketch", "loss", "solver", "decoder")
_HOOK_OF_KIND = {
    "kernel": "register_kernels",
    "sketch": "register_sketches",
    "loss": "register_losses",
    "solver": "register_solvers",
    "decoder": "register_decoders",
}
_OWN_DIST = "skframe"
# Used only when skframe runs from a source tree that was never installed.
_BUILTIN_MODULES = {
    "kernels": "skframe_kernels.plugin",
    "sketches": "skframe_sketches.plugin",
    "losses": "skframe_losses.plugin",
    "solvers": "skframe_solvers.plugin",
    "decoders": "skframe_decoders.plugin",
}


@dataclass
class Component:
    """One registered component."""

    name: str
    kind: str
    factory: object
    plugin: str
    distribution: str
    version: str

    def as_dict(self):
        return {
            "name": self.name,
            "kind": self.kind,
            "plugin": self.plugin,
            "distribution": self.distribution,
            "version": self.version,
        }


@dataclass
class BrokenPlugin:
    """A plugin that could not be loaded or whose hook raised."""

    plugin: str
    distribution: str
    version: str
    error: str

    def as_dict(self):
        return {
            "plugin": self.plugin,
            "distribution": self.distribution,
            "version": self.version,
            "error": self.error,
        }


@dataclass
class _Source:
    name: str
    distribution: str
    version: str
    module: object = None


@dataclass
class PluginRegistry:
    """All components of every loaded plugin, by kind and name."""

    components: dict = field(default_factory=lambda: {k: {} for k in KINDS})
    broken: list = field(default_factory=list)
    sources: list = field(default_factory=list)
    manager: pluggy.PluginManager = None

    def add(self, kind, name, factory, source):
        if not isinstance(name, str) or not name.strip():
            raise PluginError(
                f"plugin {source.name!r} ({source.distribution}) registered a {kind} with invalid name {name!r}; "
                "names must be non-empty strings"
            )
        if not callable(factory):
            raise PluginError(
                f"plugin {source.name!r} ({source.distribution}) registered {kind} {name!r} with a "
                f"non-callable factory {factory!r}; pass a class or function"
            )
        key = name.strip().lower()
        table = self.components[kind]
        if key in table:
            other = table[key]
            raise DuplicateComponentError(
                f"{kind} name {key!r} is registered twice: by {other.distribution} {other.version} "
                f"(plugin {other.plugin!r}) and by {source.distribution} {source.version} (plugin {source.name!r}); "
                f"uninstall one of them or set SKFRAME_DISABLE_PLUGINS={source.name}"
            )
        table[key] = Component(key, kind, factory, source.name, source.distribution, source.version)

    def commands_hooks(self):
        """Hook implementations of ``register_commands`` with their sources."""
        if self.manager is None:
            return []
        return [(impl, self._source_of(impl.plugin)) for impl in self.manager.hook.register_commands.get_hookimpls()]

    def _source_of(self, module):
        for src in self.sources:
            if src.module is module:
                return src
        return _Source(getattr(module, "__name__", "?"), "?", "?", module)


def _disabled_names():
    value = os.environ.get("SKFRAME_DISABLE_PLUGINS", "").strip()
    if not value or value.lower() in ("0", "false", "no"):
        return None
    if value.lower() in ("1", "true", "yes", "all"):
        return "all"
    return {v.strip().lower() for v in value.split(",") if v.strip()}


def _entry_points():
    eps = metadata.entry_points()
    if hasattr(eps, "select"):
        return list(eps.select(group="skframe"))
    return list(eps.get("skframe", []))  # pragma: no cover - Python < 3.10


def _discover_sources(registry):
    disabled = _disabled_names()
    sources = []
    own_seen = False
    seen_names = set()
    for ep in _entry_points():
        dist = getattr(ep, "dist", None)
        dist_name = dist.metadata["Name"] if dist is not None else "?"
        version = dist.version if dist is not None else "?"
        is_own = (dist_name or "").lower() == _OWN_DIST
        own_seen = own_seen or is_own
        key = (dist_name, ep.name, ep.value)
        if key in seen_names:  # the same distribution visible twice on sys.path
            continue
        seen_names.add(key)
        if not is_own and disabled is not None:
            if disabled == "all" or ep.name.lower() in disabled or (dist_name or "").lower() in disabled:
                continue
        src = _Source(ep.name, dist_name, version)
        try:
            src.module = ep.load()
        except Exception as exc:  # a broken plugin must not stop the others
            registry.broken.append(BrokenPlugin(ep.name, dist_name, version, f"{type(exc).__name__}: {exc}"))
            continue
        sources.append(src)
    if not own_seen:
        from . import __version__

        for name, modname in _BUILTIN_MODULES.items():
            src = _Source(name, _OWN_DIST, __version__)
            try:
                src.module = importlib.import_module(modname)
            except Exception as exc:
                registry.broken.append(BrokenPlugin(name, _OWN_DIST, __version__, f"{type(exc).__name__}: {exc}"))
                continue
            sources.append(src)
    return sources


def _load():
    registry = PluginRegistry()
    pm = pluggy.PluginManager("skframe")
    pm.add_hookspecs(hookspecs)
    registry.manager = pm
    for src in _discover_sources(registry):
        try:
            pm.register(src.module, name=f"{src.distribution}:{src.name}")
        except Exception as exc:
            registry.broken.append(BrokenPlugin(src.name, src.distribution, src.version, f"{type(exc).__name__}: {exc}"))
            continue
        registry.sources.append(src)
    for kind in KINDS:
        hook = getattr(pm.hook, _HOOK_OF_KIND[kind])
        # Call each implementation on its own so that every component is attributed to its
        # distribution and one failing plugin does not hide the others.
        for impl in reversed(hook.get_hookimpls()):
            src = registry._source_of(impl.plugin)

            def register(name, factory, _kind=kind, _src=src):
                registry.add(_kind, name, factory, _src)

            try:
                impl.function(register=register)
            except DuplicateComponentError:
                raise
            except Exception as exc:
                registry.broken.append(
                    BrokenPlugin(src.name, src.distribution, src.version, f"{type(exc).__name__} in {impl.function.__name__}: {exc}")
                )
    return registry


_REGISTRY = None
_LOCK = threading.Lock()


def get_plugin_registry():
    """Load every plugin once and return the :class:`PluginRegistry`."""
    global _REGISTRY
    if _REGISTRY is None:
        with _LOCK:
            if _REGISTRY is None:
                _REGISTRY = _load()
    return _REGISTRY


def reset_plugins():
    """Forget loaded plugins; the next registry access discovers them again."""
    global _REGISTRY
    with _LOCK:
        _REGISTRY = None
