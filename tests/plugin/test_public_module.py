"""skframe.plugin.api is what a component is written against, skframe.plugin.toolbox what it computes with; the
built-in plugins import nothing else of skframe (but its exceptions and data types)."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import skframe.plugin.api as api
import skframe.plugin.toolbox as toolbox

ROOT = Path(__file__).resolve().parents[2]
PLUGIN_FILES = sorted((ROOT / "src").glob("skframe_*/*.py"))
ALLOWED = ("skframe.plugin.api", "skframe.plugin.toolbox", "skframe.graphs", "skframe.exceptions")


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
    assert not bad, "built-in plugins import skframe only through skframe.plugin.api and toolbox:\n" + "\n".join(bad)


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
    helpers = {"hookimpl", "get_tags", "validate_component", "Interval", "Options", "check_component", "SolveResult",
               "SketchMatrix"}
    assert kinds | tags | helpers <= set(api.__all__)
    assert len(api.__all__) <= 30


def test_the_api_names_are_listed_in_the_plugin_guide():
    guide = (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")
    missing = [name for name in api.__all__ + toolbox.__all__ if f"`{name}`" not in guide]
    assert not missing, f"docs/plugins.md does not list {missing}"


def test_the_toolbox_holds_the_numerics_the_builtins_use():
    for name in toolbox.__all__:
        assert getattr(toolbox, name) is not None, name
    assert {"engine_module", "lazy_module", "select_engine", "numba_min_work", "threads_for", "run_row_ranges",
            "serial_blas"} <= set(toolbox.__all__)
    assert not set(api.__all__) & {"engine_module", "lazy_module", "select_engine", "serial_blas"}


@pytest.mark.parametrize("name", sorted(api.MOVED))
def test_the_names_the_api_exported_before_still_import_with_a_deprecation(name):
    with pytest.warns(DeprecationWarning, match=rf"skframe.plugin.api.{name} is deprecated; import it from .* "
                                                rf"\(it leaves skframe.plugin.api in skframe {api.REMOVED_IN}\)"):
        value = getattr(api, name)
    module = __import__(api.MOVED[name], fromlist=[name])
    assert value is getattr(module, name)


def test_importing_skframe_the_contract_and_the_api_stays_light():
    """What finding a plugin imports (the contract, and the API a plugin module imports) loads no SciPy, numba,
    scikit-learn or numerical module of skframe."""
    code = ("import skframe, skframe.plugin, skframe.contract.loader, skframe.contract.registry, sys\n"
            "import skframe.plugin.api\n"
            "from skframe.plugin.api import Kernel, KernelTags, hookimpl, validate_component\n"
            "print(','.join(m for m in sys.modules if m.split('.')[0] in ('numba', 'scipy', 'sklearn') or "
            "m.startswith(('skframe.core', 'skframe.compute', 'skframe.plugin.toolbox', 'skframe.plugin.checks'))))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ""


def test_the_lazy_names_of_the_api_load_on_first_use():
    code = ("import sys\nfrom skframe.plugin.api import SketchMatrix, check_component\n"
            "from skframe.core.sketch_matrix import SketchMatrix as S\n"
            "from skframe.plugin.checks import check_component as c\n"
            "print(SketchMatrix is S, check_component is c)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "True"]
