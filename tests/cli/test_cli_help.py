"""The help of ``skframe fit``: install extras shown literally (the terminal's markup must not swallow
``[deep]``); ``--help`` shows the common options in a screen, ``--help-all`` every option."""

import os
import subprocess
import sys

import pytest


def test_extras_show_literally_in_fit_help():
    env = {**os.environ, "COLUMNS": "250"}
    res = subprocess.run([sys.executable, "-m", "skframe", "fit", "--help-all"], capture_output=True, text=True,
                         env=env, timeout=120)
    assert res.returncode == 0, res.stderr
    for extra in ("deep", "gpu", "dask"):
        assert f'"skframe[{extra}]"' in res.stdout, extra
    assert "\\[" not in res.stdout


def _help(*args, columns=80):
    env = {**os.environ, "COLUMNS": str(columns), "TERMINAL_WIDTH": str(columns)}
    res = subprocess.run([sys.executable, "-m", "skframe", *args], capture_output=True, text=True, env=env,
                         timeout=120)
    assert res.returncode == 0, res.stderr
    return res.stdout


def _lines_per_option(text):
    """``{option: lines}`` of the option rows of a help page (an option's row and its continuation lines)."""
    counts, current = {}, None
    for line in text.splitlines():
        inner = line[1:].lstrip() if line.startswith("│") else None
        if inner is not None and inner.startswith(("-", "TRAIN")):
            current = inner.split()[0]
            counts[current] = 1
        elif inner is not None and current is not None:
            counts[current] += 1
        else:
            current = None
    return counts


def test_fit_help_shows_the_common_options_in_a_screen_and_points_to_help_all():
    text = _help("fit", "--help")
    assert len(text.splitlines()) <= 85, len(text.splitlines())
    counts = _lines_per_option(text)
    assert {"--test", "--target", "--task", "--kernel", "--kernel-param", "--lam", "--sketch", "--interval", "--json",
            "--model-out", "--png", "--seed"} <= set(counts)
    too_long = {name: n for name, n in counts.items() if n > 2}
    assert not too_long, too_long  # one or two lines of help each; the full text is in docs/cli.md
    for panel in ("Structured outputs", "Neural network", "Molecules and graphs", "Compute"):
        assert f"─ {panel} ─" not in text, panel
    last = [line for line in text.splitlines() if line.strip()][-1]
    assert "skframe fit --help-all" in last, last


def _every_option(command):
    import typer.main

    from skframe.cli import app

    cmd = typer.main.get_command(app).commands[command]
    return [opt for p in cmd.params if p.param_type_name == "option" for opt in (*p.opts, *p.secondary_opts)]


@pytest.mark.parametrize("command", ["fit", "tune"])
def test_help_all_lists_every_option(command):
    text = _help(command, "--help-all", columns=250)
    missing = [opt for opt in _every_option(command) if opt not in text]
    assert not missing, missing
    assert "--help-all" not in [line.strip() for line in text.splitlines()][-3:]  # no pointer to itself


def test_the_docs_keep_every_fit_option_in_full():
    from pathlib import Path

    docs = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text()
    reference = docs[docs.index("## Option reference"):]
    missing = [opt for opt in _every_option("fit") if opt != "--help-all" and f"`{opt}" not in reference
               and f"/ {opt}" not in reference]
    assert not missing, missing
