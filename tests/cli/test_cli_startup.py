"""The command line starts light: help, version and option declarations."""

import os
import subprocess
import sys
import textwrap
import typing
from dataclasses import fields

import pytest
from typer.testing import CliRunner

from skframe.cli import app

HEAVY = ("sklearn", "scipy", "numba", "matplotlib", "pandas", "pyarrow")


def _loaded_after(code, env=None, modules=HEAVY):
    probe = f"{code}\nimport sys\nprint('LOADED:' + ','.join(m for m in {tuple(modules)!r} if m in sys.modules))"
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.rsplit("LOADED:", 1)[1].strip()


#: a third-party plugin as a distribution would write it: a kernel and a command, against the public API
THIRD_PARTY = '''
    import numpy as np

    from skframe.plugin.api import Kernel, KernelTags, hookimpl


    class Cosine(Kernel):
        __skframe_tags__ = KernelTags(normalized=True)
        params = {}

        def __call__(self, X, Y=None):
            Y = X if Y is None else Y
            return (X @ Y.T) / np.outer(np.linalg.norm(X, axis=1), np.linalg.norm(Y, axis=1))


    @hookimpl
    def register_kernels(register):
        register("startup-cosine", Cosine)


    @hookimpl
    def register_commands(app):
        @app.command("startup-hello")
        def hello():
            """Say hello."""
            print("hello")
'''


@pytest.fixture(scope="module")
def third_party(tmp_path_factory):
    """The environment of a process with a third-party plugin installed (a distribution on PYTHONPATH)."""
    root = tmp_path_factory.mktemp("site")
    (root / "startup_plugin.py").write_text(textwrap.dedent(THIRD_PARTY))
    info = root / "startup_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: startup-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[skframe]\nstartup = startup_plugin\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(root), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.pop("SKFRAME_DISABLE_PLUGINS", None)
    return env


def test_importing_the_cli_loads_no_heavy_module():
    assert _loaded_after("import skframe.cli") == ""


def test_help_and_version_load_no_heavy_module():
    for args in (["--help"], ["--version"], ["fit", "--help"], ["evaluate", "--help"]):
        code = f"from skframe.cli import main\ntry:\n    main({args!r})\nexcept SystemExit:\n    pass"
        assert _loaded_after(code) == "", args


def test_help_and_version_load_no_heavy_module_with_a_third_party_plugin(third_party):
    """Finding a third-party plugin (its commands join the help) imports its module and the plugin contract only:
    no SciPy, numba or scikit-learn, no numerical module of skframe and no built-in component."""
    modules = HEAVY + ("skframe.core", "skframe.compute", "skframe.plugin.toolbox", "skframe_kernels",
                       "skframe_sketches", "skframe_losses", "skframe_solvers", "startup_plugin")
    for args in (["--help"], ["--version"], ["fit", "--help"], ["evaluate", "--help"]):
        code = f"from skframe.cli import main\ntry:\n    main({args!r})\nexcept SystemExit:\n    pass"
        loaded = _loaded_after(code, third_party, modules)
        assert loaded == ("startup_plugin" if args == ["--help"] else ""), (args, loaded)
    proc = subprocess.run([sys.executable, "-m", "skframe", "--help"], capture_output=True, text=True,
                          env=third_party)
    assert proc.returncode == 0 and "startup-hello" in proc.stdout, proc.stdout + proc.stderr


def test_a_third_party_command_and_component_work(third_party):
    proc = subprocess.run([sys.executable, "-m", "skframe", "startup-hello"], capture_output=True, text=True,
                          env=third_party)
    assert proc.returncode == 0 and proc.stdout.strip() == "hello", proc.stderr
    proc = subprocess.run([sys.executable, "-m", "skframe", "plugins", "--json"], capture_output=True, text=True,
                          env=third_party)
    assert proc.returncode == 0 and '"startup-cosine"' in proc.stdout, proc.stderr


def test_version():
    from skframe import __version__

    res = CliRunner().invoke(app, ["--version"])
    assert res.exit_code == 0 and res.stdout.strip() == f"skframe {__version__}"


def test_fit_help_is_grouped_and_fits_80_columns():
    res = CliRunner().invoke(app, ["fit", "--help-all"], env={"COLUMNS": "80", "TERMINAL_WIDTH": "80"},
                             terminal_width=80)
    assert res.exit_code == 0, res.output
    for panel in ("Data", "Kernel", "Sketch", "Loss and solver", "Structured outputs", "Output"):
        assert f"─ {panel} ─" in res.stdout, panel
    assert max(len(line) for line in res.stdout.splitlines()) <= 80


def test_each_fit_option_is_declared_once():
    """The fit command's parameters are exactly FitOptions' command-line fields, each with help and a panel."""
    import typer.main

    from skframe.cli._options import FitOptions, _is_cli

    hints = typing.get_type_hints(FitOptions, include_extras=True)
    declared = {f.name for f in fields(FitOptions) if _is_cli(hints[f.name])}
    cmd = typer.main.get_command(app).commands["fit"]
    assert {p.name for p in cmd.params} - {"help", "help_all"} == declared
    for p in cmd.params:
        if p.name not in ("help", "help_all", "train"):
            assert p.help and getattr(p, "rich_help_panel", None), p.name


def test_kv_options_fill_the_matching_parameter_dicts():
    from skframe.cli._options import FitOptions

    opts = FitOptions(kernel_param=["gamma=0.5"], solver_param=["max_iter=7", "init=zeros"],
                      output_kernel_param=["gamma=2"])
    assert opts.kernel_params == {"gamma": 0.5}
    assert opts.solver_params == {"max_iter": 7, "init": "zeros"}
    assert opts.output_kernel_params == {"gamma": 2}


def test_a_small_fit_loads_no_compiled_code():
    """Below NUMBA_MIN_WORK kernel entries a fit and its predictions run on the plain NumPy engine:
    the process never imports numba (whose start costs more than it saves there)."""
    code = ("import numpy as np\nfrom skframe import SketchedKernelRidge\n"
            "X = np.random.default_rng(0).normal(size=(300, 4)); y = X[:, 0]\n"
            "SketchedKernelRidge(sketch_size=30, random_state=0).fit(X, y).predict(X)\n"
            "SketchedKernelRidge(sketch='gaussian', sketch_size=30, random_state=0).fit(X, y).predict(X)\n"
            "SketchedKernelRidge(sketch='subsample', sketch_size=30, random_state=0).fit(X, y).predict(X)")
    assert "numba" not in _loaded_after(code)


def _modules_after_cli(args, prefixes):
    """Which modules starting with one of ``prefixes`` a fresh ``skframe <args>`` process has loaded at its end."""
    code = (f"import atexit, sys\n"
            f"atexit.register(lambda: print('LOADED:' + ','.join(sorted(m for m in sys.modules "
            f"if m.startswith({tuple(prefixes)!r})))))\n"
            f"from skframe.cli import main\nmain({list(args)!r})")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/")
    assert proc.returncode == 0, proc.stderr
    return set(filter(None, proc.stdout.rsplit("LOADED:", 1)[1].strip().split(",")))


def test_the_default_fit_loads_only_what_it_uses():
    """``skframe fit`` on the embedded data (a ridge model, small enough for the NumPy engine) imports neither
    the other estimator families nor compiled code, plots, GPU, Dask or deep-learning libraries."""
    unused = ("skframe.models.machine", "skframe.models.structured", "numba", "matplotlib", "cupy", "dask",
              "distributed", "torch", "rdkit")
    for args in (["fit", "--json"], ["fit", "--kernel", "gaussian", "--sketch", "psr", "--json"]):
        loaded = _modules_after_cli(args, unused)
        assert not loaded, (args, sorted(loaded))
