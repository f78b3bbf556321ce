"""The help of the commands: install extras shown literally (the terminal's markup must not swallow ``[deep]``);
``--help`` shows the common options in a screen, ``--help-all`` every option; at 80 columns each option's help
takes one or two lines and no option's name is cut; the long texts are kept in docs/cli.md's option reference."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

COMMANDS = ("fit", "tune", "select", "predict", "evaluate")


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


def _rows(text):
    """``{option: [its lines]}`` of the option rows of a help page: a row starts at the panel's left edge (an
    option's name, or an argument's after the required mark); its continuation lines are indented to the help
    column."""
    rows, current = {}, None
    for line in text.splitlines():
        body = line[1:] if line.startswith("│") else None
        inner = body.lstrip() if body is not None else ""
        if inner and len(body) - len(inner) <= 4:
            current = inner.lstrip("* ").split()[0]
            rows[current] = [line]
        elif inner and current is not None:
            rows[current].append(line)
        else:
            current = None
    return rows


def _lines_per_option(text):
    return {name: len(lines) for name, lines in _rows(text).items()}


def test_the_row_parser_counts_continuation_lines_that_start_with_an_option():
    text = ("╭─ Data ─╮\n"
            "│ --patience  <int>  Early stopping: hold out  │\n"
            "│                    --validation-fraction     │\n"
            "│ --seed      <int>  Seed. [default: 0]        │\n"
            "╰──────────╯\n")
    assert _lines_per_option(text) == {"--patience": 2, "--seed": 1}


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


def test_tune_help_shows_the_common_options_and_the_tuning_panel_in_a_screen():
    text = _help("tune", "--help")
    assert len(text.splitlines()) <= 85, len(text.splitlines())
    counts = _lines_per_option(text)
    assert {"--test", "--target", "--kernel-param", "--lam", "--model-out", "--seed", "--cv", "--scoring",
            "--sketch-sharing", "--n-jobs"} <= set(counts)
    assert "─ Tuning ─" in text and "─ Structured outputs ─" not in text
    last = [line for line in text.splitlines() if line.strip()][-1]
    assert "skframe tune --help-all" in last, last


@pytest.mark.parametrize("args", [(c, "--help-all") for c in COMMANDS] + [("tune", "--help"), ("plugins", "--help"),
                                                                           ("--help",)], ids=lambda a: " ".join(a))
def test_every_option_takes_one_or_two_lines_at_80_columns(args):
    text = _help(*args)
    rows = _rows(text)
    assert len(rows) > 1
    too_long = {name: len(lines) for name, lines in rows.items() if len(lines) > 2}
    assert not too_long, too_long  # the full text is in docs/cli.md's option reference
    cut = [lines[0] for lines in rows.values() if "…" in lines[0]]
    assert not cut, cut  # no option's name (nor type) shortened by an ellipsis
    assert max(len(line) for line in text.splitlines()) <= 80
    split = [line for line in text.splitlines() if re.search(r"\[default:[^\]]*│", line)]
    assert not split, split  # a default is never broken across two lines


def test_a_default_follows_its_help_text():
    rows = _rows(_help("fit", "--help"))
    assert "[default: 1]" in rows["--targets"][0]  # on the text's line when it fits there
    assert "[default: 0.2]" in "".join(rows["--holdout"])


def _command(command):
    import typer.main

    from skframe.cli import app

    return typer.main.get_command(app).commands[command]


def _every_option(command):
    """The options ``--help-all`` shows: all but those hidden by their own declaration (a deprecated option)."""
    cmd = _command(command)
    shown = [p for p in cmd.params if p.param_type_name == "option" and (not p.hidden or p in cmd.advanced)]
    return [opt for p in shown for opt in (*p.opts, *p.secondary_opts)]


@pytest.mark.parametrize("command", COMMANDS)
def test_help_all_lists_every_option(command):
    text = _help(command, "--help-all", columns=250)
    missing = [opt for opt in _every_option(command) if opt not in text]
    assert not missing, missing  # a flag's negative form (--no-header) is named in its help text
    assert "--help-all" not in [line.strip() for line in text.splitlines()][-3:]  # no pointer to itself


def test_help_all_leaves_a_deprecated_option_hidden():
    assert "--shuffle" in [opt for p in _command("tune").params for opt in p.opts]
    assert "--shuffle" not in _help("tune", "--help-all", columns=250)


def test_the_help_leaves_the_options_unchanged(capsys):
    """The help's layout changes nothing that parsing reads: the negative forms and shown defaults are restored."""
    cmd = _command("predict")
    before = {p.name: (tuple(p.secondary_opts), p.show_default) for p in cmd.params}
    help_text = cmd.get_help(cmd.context_class(cmd, info_name="predict")) or capsys.readouterr().out  # Rich prints
    assert "--no-header" in help_text
    assert {p.name: (tuple(p.secondary_opts), p.show_default) for p in cmd.params} == before
    assert ("--no-header",) in [names for names, _ in before.values()]
    ctx = cmd.make_context("predict", ["model.skf", "data.csv", "--no-header"])
    assert ctx.params["header"] is False


def _reference(section):
    docs = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text()
    reference = docs[docs.index("## Option reference"):]
    start = reference.index(f"### `skframe {section}`")
    end = reference.find("\n### ", start + 1)
    return reference[start:] if end < 0 else reference[start:end]


def _documented(opt, text):
    return f"`{opt}" in text or f"/ {opt}" in text


def test_the_docs_keep_every_option_in_full():
    fit = _reference("fit")
    for command, section in (("fit", "fit"), ("tune", "tune"), ("select", "select"), ("predict", "predict"),
                             ("evaluate", "evaluate")):
        own = _reference(section)
        missing = [opt for opt in _every_option(command) if opt not in ("--help-all", "--help")
                   and not _documented(opt, own) and not (command == "tune" and _documented(opt, fit))]
        assert not missing, (command, missing)
