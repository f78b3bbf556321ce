"""The source layout: a checkout never shadows the installed package.

The package and the built-in plugins live under ``src/``, so the checkout's own folder (often named
``skframe`` by ``git clone``) holds no importable ``skframe``. Before, running Python from the folder
that holds the clone found the clone as an empty namespace package, and ``from skframe import ...``
failed with "unknown location".
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_the_checkout_holds_no_top_level_package():
    assert not (ROOT / "skframe").exists(), "the package lives in src/skframe; a top-level skframe/ would shadow it"
    assert (ROOT / "src" / "skframe" / "__init__.py").is_file()


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symbolic links")
def test_import_from_the_folder_that_holds_the_clone(tmp_path):
    # the clone, as `git clone ... skframe` names it, seen from its parent folder
    os.symlink(ROOT, tmp_path / "skframe", target_is_directory=True)
    code = ("import skframe; from skframe import SketchedKernelRidge; "
            "print(skframe.__file__); print(SketchedKernelRidge.__name__)")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSAFEPATH"}
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=env,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    where, name = proc.stdout.split()
    assert name == "SketchedKernelRidge"
    assert Path(where).name == "__init__.py" and Path(where).parent.name == "skframe"
