"""Fixtures of the plugin tests: a clean registry per test, and installed-looking distributions."""

import importlib
import sys
import textwrap
import uuid

import pytest

from skframe.contract.loader import reset_plugins


@pytest.fixture
def fresh_registry(monkeypatch):
    """Reload the plugins before and after the test, with its own once-per-process warnings."""
    monkeypatch.delenv("SKFRAME_DISABLE_PLUGINS", raising=False)
    monkeypatch.setattr("skframe.contract.loader._WARNED", set())
    reset_plugins()
    yield
    reset_plugins()


@pytest.fixture
def make_dist(tmp_path, monkeypatch):
    """Create a distribution ``dist`` with entry point ``ep_name`` -> a fresh module holding ``source``."""
    made = []

    def make(dist, source, ep_name="myplugin", version="1.2.3"):
        modname = f"skf_test_{dist.replace('-', '_')}_{uuid.uuid4().hex[:8]}"
        root = tmp_path / modname
        root.mkdir()
        (root / f"{modname}.py").write_text(textwrap.dedent(source))
        info = root / f"{dist.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
        (info / "entry_points.txt").write_text(f"[skframe]\n{ep_name} = {modname}\n")
        monkeypatch.syspath_prepend(str(root))
        made.append(modname)
        importlib.invalidate_caches()
        return modname

    yield make
    for modname in made:
        sys.modules.pop(modname, None)
