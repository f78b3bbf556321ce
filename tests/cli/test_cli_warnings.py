"""Warnings at the terminal are one ``Warning: ...`` line in the command line's words."""

import os
import subprocess
import sys

import numpy as np

from skframe.cli._warnings import cli_wording


def _run(args, cwd):
    env = {k: v for k, v in os.environ.items() if k != "SKFRAME_DEBUG"}
    return subprocess.run([sys.executable, "-m", "skframe", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def test_sketch_size_warning_is_one_line_naming_the_option(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    np.savetxt(tmp_path / "d.csv", np.column_stack([X, X[:, 0]]), delimiter=",")
    res = _run(["fit", "d.csv", "--sketch", "subsample", "--sketch-size", "500"], tmp_path)
    assert res.returncode == 0, res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert lines == ["Warning: --sketch-size 500 is larger than n_samples=40; using --sketch-size 40 (set "
                     "--sketch-size auto or a size <= n_samples to silence this warning)"]
    assert ".py" not in res.stderr


def test_convergence_warning_names_epochs(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    np.savetxt(tmp_path / "d.csv", np.column_stack([X, X[:, 0] + rng.standard_t(2, size=400)]), delimiter=",")
    res = _run(["fit", "d.csv", "--loss", "epsilon-svr", "--solver", "dual-cd", "--epochs", "1", "--tol", "1e-14",
                "--solver-param", "method=epochs"],
               tmp_path)
    assert res.returncode == 0, res.stderr
    warn = [ln for ln in res.stderr.splitlines() if ln.startswith("Warning:")]
    assert len(warn) == 1 and "--epochs" in warn[0] and "max_epochs" not in warn[0], res.stderr
    assert "Traceback" not in res.stderr and ".py:" not in res.stderr


def test_wording_leaves_other_words_alone():
    assert cli_wording("the loss is convex; lam is small") == "the loss is convex; lam is small"
    assert cli_wording("use memory_budget='2GB'") == "use --memory-budget 2GB"
    assert cli_wording("raise max_admm_iter") == "raise --solver-param max_admm_iter=..."
