"""The command line starts light: help, version and option declarations."""

import subprocess
import sys
import typing
from dataclasses import fields

from typer.testing import CliRunner

from skframe.cli import app

HEAVY = ("sklearn", "scipy", "numba", "matplotlib", "pandas", "pyarrow")


def _loaded_after(code):
    probe = f"{code}\nimport sys\nprint('LOADED:' + ','.join(m for m in {HEAVY!r} if m in sys.modules))"
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.rsplit("LOADED:", 1)[1].strip()


def test_importing_the_cli_loads_no_heavy_module():
    assert _loaded_after("import skframe.cli") == ""


def test_help_and_version_load_no_heavy_module():
    for args in (["--help"], ["--version"], ["fit", "--help"], ["evaluate", "--help"]):
        code = f"from skframe.cli import main\ntry:\n    main({args!r})\nexcept SystemExit:\n    pass"
        assert _loaded_after(code) == "", args


def test_version():
    from skframe import __version__

    res = CliRunner().invoke(app, ["--version"])
    assert res.exit_code == 0 and res.stdout.strip() == f"skframe {__version__}"


def test_fit_help_is_grouped_and_fits_80_columns():
    res = CliRunner().invoke(app, ["fit", "--help"], env={"COLUMNS": "80", "TERMINAL_WIDTH": "80"},
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
    assert {p.name for p in cmd.params} - {"help"} == declared
    for p in cmd.params:
        if p.name not in ("help", "train"):
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
