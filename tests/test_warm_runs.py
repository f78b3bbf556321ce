"""tests/warm_runs.py: a command forked from the warm interpreter ends as the same command in a fresh one."""

import os
import subprocess

import pytest

from tests.warm_runs import run_python

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="forks")

PROBE = """
import os, resource, signal, stat, sys
print("args", sys.argv[1:], os.getcwd(), os.environ.get("HOSTILE_REPORT"))
print("stdout is a pipe", stat.S_ISFIFO(os.fstat(1).st_mode), "stderr is a pipe", stat.S_ISFIFO(os.fstat(2).st_mode))
print("Ctrl-C raises", signal.getsignal(signal.SIGINT) is signal.default_int_handler)
print("limits", resource.getrlimit(resource.RLIMIT_AS)[0], resource.getrlimit(resource.RLIMIT_FSIZE)[0])
print("warm", "sklearn" in sys.modules, file=sys.stderr)
sys.exit(3)
"""


def _probe(tmp_path, env, base):
    limits = {"sigint": True, "address_space": 8 << 30, "file_size": 1 << 30}
    return run_python(PROBE, ["a b", "-x"], tmp_path, env, 120, limits=limits, warm_base=base)


def test_a_forked_command_sees_what_a_fresh_one_sees(tmp_path, monkeypatch):
    monkeypatch.delenv("SKFRAME_TEST_FRESH", raising=False)
    base = dict(os.environ)
    env = dict(base, HOSTILE_REPORT="report.json")  # a variable read while the command runs: still forked
    warm, fresh = _probe(tmp_path, env, base), _probe(tmp_path, env, None)
    assert isinstance(warm, subprocess.CompletedProcess) and warm.returncode == fresh.returncode == 3
    assert warm.stdout == fresh.stdout, (warm.stdout, fresh.stdout)
    assert f"args ['a b', '-x'] {tmp_path} report.json" in warm.stdout
    assert "stdout is a pipe True stderr is a pipe True" in warm.stdout and "Ctrl-C raises True" in warm.stdout
    assert f"limits {8 << 30} {1 << 30}" in warm.stdout
    assert warm.stderr == "warm True\n" and fresh.stderr == "warm False\n"


def test_a_start_up_variable_of_its_own_makes_a_fresh_process(tmp_path, monkeypatch):
    monkeypatch.delenv("SKFRAME_TEST_FRESH", raising=False)
    base = dict(os.environ)
    run = _probe(tmp_path, dict(base, SKFRAME_MAX_FEATURES="10"), base)
    assert run.returncode == 3 and run.stderr == "warm False\n"


def test_signals_end_a_forked_command_as_a_fresh_one(tmp_path):
    code = "import os, signal, sys; print('out', flush=True); os.kill(os.getpid(), signal.SIGKILL)"
    run = run_python(code, [], tmp_path, dict(os.environ), 60, warm_base=dict(os.environ))
    assert run.returncode == -9 and run.stdout == "out\n"
    run = run_python("import sys; print('x', file=sys.stderr); raise SystemExit('no')", [], tmp_path,
                     dict(os.environ), 60, warm_base=dict(os.environ))
    assert run.returncode == 1 and run.stderr == "x\nno\n"
    with pytest.raises(subprocess.TimeoutExpired):
        run_python("import time; time.sleep(30)", [], tmp_path, dict(os.environ), 1, warm_base=dict(os.environ))
