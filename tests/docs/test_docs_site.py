"""The documentation site builds with warnings as errors (MkDocs ``--strict``)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_documentation_site_builds_strict(tmp_path):
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "plugins")]))
    res = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
                          "-d", str(tmp_path / "site")], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-5000:]
    assert (tmp_path / "site" / "index.html").exists()
    assert (tmp_path / "site" / "reference" / "cli" / "index.html").exists()
