"""Install the example third-party plugin distribution for real and use it through the CLI."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "skframe-example-plugin"


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    # built from a private copy: setuptools writes build/ and *.egg-info beside the sources, so two test workers
    # building the checkout's folder at once collided ("File exists: build/bdist..."), as did a build/ another
    # Python environment had left there
    source = tmp_path_factory.mktemp("example") / EXAMPLE.name
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", "dist"))
    target = tmp_path_factory.mktemp("site")
    cmd = [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--no-build-isolation",
           "--quiet", "--target", str(target), str(source)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:  # e.g. setuptools not importable here: let pip build in isolation
        cmd = [c for c in cmd if c not in ("--no-index", "--no-build-isolation")]
        proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert any(p.name.startswith("skframe_example_plugin") and p.suffix == ".dist-info" for p in target.iterdir())
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(target), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.pop("SKFRAME_DISABLE_PLUGINS", None)
    return env


def _skframe(env, *args):
    return subprocess.run([sys.executable, "-m", "skframe", *args], capture_output=True, text=True, env=env)


def test_plugin_listed_with_its_distribution(installed):
    proc = _skframe(installed, "plugins", "--json")
    assert proc.returncode == 0, proc.stderr
    comps = json.loads(proc.stdout)["components"]
    mine = [c for c in comps if c["name"] == "rational-quadratic"]
    assert mine and mine[0]["distribution"] == "skframe-example-plugin" and mine[0]["version"] == "0.1.0"


def test_fit_with_plugin_kernel(installed):
    proc = _skframe(installed, "fit", "--kernel", "rational-quadratic", "--kernel-param", "alpha=2",
                    "--sketch", "psr", "--sketch-size", "30", "--json")
    assert proc.returncode == 0, proc.stderr
    rep = json.loads(proc.stdout)
    assert rep["model"]["params"]["kernel"] == "rational-quadratic"
    assert rep["metrics"]["r2"] > 0


def test_plugin_command_and_disable(installed):
    proc = _skframe(installed, "example-info")
    assert proc.returncode == 0 and "rational-quadratic" in proc.stdout
    env = dict(installed, SKFRAME_DISABLE_PLUGINS="1")
    proc = _skframe(env, "fit", "--kernel", "rational-quadratic", "--sketch-size", "30")
    assert proc.returncode != 0 and "unknown kernel" in proc.stderr


def test_the_example_passes_the_conformance_kit_in_its_own_tests(installed):
    """The example distribution runs the conformance kit in its tests, one test per property, as a third party would."""
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
                          capture_output=True, text=True, env=installed, cwd=EXAMPLE)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout


def test_the_example_imports_only_the_public_module():
    import ast

    source = (EXAMPLE / "skframe_example_plugin" / "plugin.py").read_text(encoding="utf-8")
    mods = {n.module for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ImportFrom) and n.module}
    assert {m for m in mods if m.startswith("skframe")} == {"skframe.plugin.api"}
