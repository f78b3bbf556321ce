"""Plugin discovery: the modules of the entry-point group ``skframe``, in a fixed order.

skframe's own plugins come first, then third-party plugins ordered by distribution and entry-point
name. Set ``SKFRAME_DISABLE_PLUGINS=1`` to load only the built-in plugins, or to a
comma-separated list of entry-point names, distribution names (``-``, ``_`` and ``.`` are
equivalent, case is ignored) or ``distribution:entry-point`` pairs to skip those. A plugin whose
module fails to import is recorded as a :class:`BrokenPlugin` and the others load.
"""

from __future__ import annotations

import importlib
import os
import re
from dataclasses import dataclass
from importlib import metadata

from skframe._version import __version__

__all__ = ["OWN_DIST", "BUILTIN_MODULES", "BrokenPlugin", "Source", "discover_sources"]

OWN_DIST = "skframe"
# Used only when skframe runs from a source tree that was never installed.
BUILTIN_MODULES = {
    "kernels": "skframe_kernels.plugin",
    "sketches": "skframe_sketches.plugin",
    "losses": "skframe_losses.plugin",
    "solvers": "skframe_solvers.plugin",
    "decoders": "skframe_decoders.plugin",
    "graphs": "skframe_graphs.plugin",
}


@dataclass
class BrokenPlugin:
    """A plugin that could not be loaded, defines an unknown hook, or whose hook raised."""

    plugin: str
    distribution: str
    version: str
    error: str

    def as_dict(self):
        return {"plugin": self.plugin, "distribution": self.distribution, "version": self.version, "error": self.error}


@dataclass
class Source:
    """Where a plugin comes from: its entry-point name, distribution, version and loaded module."""

    name: str
    distribution: str
    version: str
    module: object = None

    def label(self):
        return f"{self.distribution} {self.version} (plugin {self.name!r})"


def _norm(name):
    return re.sub(r"[-_.]+", "-", (name or "").strip()).lower()


def _disabled_names():
    value = os.environ.get("SKFRAME_DISABLE_PLUGINS", "").strip()
    if not value or value.lower() in ("0", "false", "no"):
        return None
    if value.lower() in ("1", "true", "yes", "all"):
        return "all"
    return {_norm(v) for v in value.split(",") if v.strip()}


def _is_disabled(disabled, dist_name, ep_name):
    if disabled is None:
        return False
    if disabled == "all":
        return True
    return bool({_norm(ep_name), _norm(dist_name), f"{_norm(dist_name)}:{_norm(ep_name)}"} & disabled)


def _entry_points():
    eps = metadata.entry_points()
    if hasattr(eps, "select"):
        return list(eps.select(group="skframe"))
    return list(eps.get("skframe", []))  # pragma: no cover - Python < 3.10


def discover_sources(broken, *, third_party_only=False):
    """The plugin sources to register, in order; a plugin that fails to import is appended to ``broken``.

    With ``third_party_only``, skframe's own plugins are left out (neither found nor imported).
    """
    disabled = _disabled_names()
    found = {}
    for ep in _entry_points():
        dist = getattr(ep, "dist", None)
        dist_name = (dist.metadata["Name"] if dist is not None else None) or "?"
        version = dist.version if dist is not None else "?"
        # the same distribution visible twice on sys.path counts once
        found.setdefault((dist_name, ep.name, ep.value), (ep, dist_name, version))
    own = [v for v in found.values() if v[1].lower() == OWN_DIST]
    others = sorted((v for v in found.values() if v[1].lower() != OWN_DIST), key=lambda v: (_norm(v[1]), v[0].name))
    sources = []
    for ep, dist_name, version in ([] if third_party_only else own) + others:
        if dist_name.lower() != OWN_DIST and _is_disabled(disabled, dist_name, ep.name):
            continue
        src = Source(ep.name, dist_name, version)
        try:
            src.module = ep.load()
        except Exception as exc:  # a broken plugin must not stop the others
            broken.append(BrokenPlugin(ep.name, dist_name, version, f"{type(exc).__name__}: {exc}"))
            continue
        sources.append(src)
    if not own and not third_party_only:
        builtins = []
        for name, modname in BUILTIN_MODULES.items():
            src = Source(name, OWN_DIST, __version__)
            try:
                src.module = importlib.import_module(modname)
            except Exception as exc:
                broken.append(BrokenPlugin(name, OWN_DIST, __version__, f"{type(exc).__name__}: {exc}"))
                continue
            builtins.append(src)
        sources = builtins + sources
    return sources
