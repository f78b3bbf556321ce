"""A plugin that calls sys.exit() (SystemExit) inside a fit ends the command with one error line and a non-zero
exit, never with exit 0, no model and no word."""

import numpy as np
import pytest
from typer.testing import CliRunner

from skframe.cli import app

pytestmark = pytest.mark.usefixtures("fresh_registry")  # fixtures in conftest.py

EXITING_PLUGIN = """
    import sys

    import numpy as np
    import skframe

    class Leaving:
        def __call__(self, X, Y=None):
            sys.exit({code})

    @skframe.hookimpl
    def register_kernels(register):
        register("leaving-kernel", Leaving)
"""


@pytest.mark.parametrize("code", ["0", "None", "'bye'"])
def test_a_system_exit_from_a_plugin_is_one_error_line(make_dist, tmp_path, code):
    make_dist("skf-leaving", EXITING_PLUGIN.format(code=code))
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    path = tmp_path / "t.csv"
    np.savetxt(path, np.column_stack([X, X[:, 0]]), delimiter=",", header="a,b,y", comments="", fmt="%.5f")
    res = CliRunner().invoke(app, ["fit", str(path), "--kernel", "leaving-kernel", "--lam", "1e-3",
                                   "--model-out", str(tmp_path / "m.skf")])
    lines = res.stderr.strip().splitlines()
    assert res.exit_code == 2 and len(lines) == 1, (res.exit_code, res.output)
    assert lines[0].startswith(f"Error: the command was ended from inside by SystemExit({eval(code)!r})"), lines
    assert "it did not finish" in lines[0] and "fix or uninstall that component" in lines[0]
    assert str(tmp_path / "m.skf") not in lines[0]  # (files of earlier commands of this process may be named)
    assert not (tmp_path / "m.skf").exists()
