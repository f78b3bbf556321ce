"""The help text shows install extras literally (the terminal's markup must not swallow ``[deep]``)."""

import os
import subprocess
import sys


def test_extras_show_literally_in_fit_help():
    env = {**os.environ, "COLUMNS": "250"}
    res = subprocess.run([sys.executable, "-m", "skframe", "fit", "--help"], capture_output=True, text=True,
                         env=env, timeout=120)
    assert res.returncode == 0, res.stderr
    for extra in ("deep", "gpu", "dask"):
        assert f'"skframe[{extra}]"' in res.stdout, extra
    assert "\\[" not in res.stdout
