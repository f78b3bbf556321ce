"""skframe.plugin.api is the one module plugin authors import; the built-in plugins import nothing else."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import skframe.plugin.api as api

ROOT = Path(__file__).resolve().parents[2]
PLUGIN_FILES = sorted((ROOT / "src").glob("skframe_*/*.py"))
ALLOWED = ("skframe.plugin.api", "skframe.graphs", "skframe.exceptions")


def _skframe_imports(path):
    """(line, module) of every import of skframe in a file, inside functions too."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "skframe"]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module.split(".")[0] == "skframe":
            out += [(node.lineno, node.module)] if node.module != "skframe" else \
                [(node.lineno, f"skframe.{a.name}") for a in node.names]
    return out


@pytest.mark.parametrize("path", PLUGIN_FILES, ids=[f"{p.parent.name}/{p.name}" for p in PLUGIN_FILES])
def test_builtin_plugin_imports_only_the_public_module(path):
    bad = [f"{path.name}:{line} imports {mod}" for line, mod in _skframe_imports(path) if mod not in ALLOWED]
    assert not bad, "built-in plugins import skframe only through skframe.plugin.api:\n" + "\n".join(bad)


def test_the_check_sees_a_private_import(tmp_path):
    made_up = tmp_path / "plugin.py"
    made_up.write_text("import skframe\nfrom skframe.core.sketching import rows_within_budget\n"
                       "def f():\n    from skframe.compute.backend import serial_blas\n")
    assert [m for _, m in _skframe_imports(made_up)] == ["skframe", "skframe.core.sketching", "skframe.compute.backend"]


def test_the_public_module_exports_what_a_component_needs():
    for name in api.__all__:
        assert getattr(api, name) is not None, name
    kinds = {"Kernel", "Sketch", "Loss", "Solver", "Decoder", "OutputMatrix"}
    tags = {k + "Tags" for k in kinds}
    kit = {"check_kernel", "check_sketch", "check_loss", "check_solver", "check_decoder",
           "check_output_matrix_component", "check_component"}
    helpers = {"hookimpl", "get_tags", "validate_component", "Interval", "Options"}
    assert kinds | tags | kit | helpers <= set(api.__all__)
    assert "the one module a skframe plugin imports" in api.__doc__


def test_importing_skframe_and_the_contract_stays_light():
    code = ("import skframe, skframe.plugin, skframe.plugin.tags, sys; "
            "print(','.join(m for m in ('numba', 'scipy', 'sklearn', 'skframe.plugin.api') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ""
