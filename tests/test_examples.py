"""The runnable example scripts work (on small data)."""

import runpy
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.mark.parametrize("script, args", [("quickstart.py", ["--n", "1500"]), ("robust_regression.py", ["--n", "1500"])])
def test_example_runs(script, args, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", [script, *args])
    runpy.run_path(str(EXAMPLES / script), run_name="__main__")
    out = capsys.readouterr().out
    assert "rel. MSE" in out
