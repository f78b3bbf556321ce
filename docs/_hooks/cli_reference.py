"""MkDocs hook: write docs/reference/cli.md from the Typer application's own help texts."""

from __future__ import annotations

import os
from pathlib import Path


def _help(args):
    from typer.testing import CliRunner

    from skframe.cli import app

    result = CliRunner().invoke(app, args, env={"TERMINAL_WIDTH": "100", "_TYPER_FORCE_DISABLE_TERMINAL": "1",
                                                "NO_COLOR": "1"})
    return result.output.rstrip()


def render():
    """The CLI reference page: the help of ``skframe`` and of every sub-command."""
    import click
    import typer

    from skframe.cli import app

    command = typer.main.get_command(app)
    parts = ["# CLI reference", "",
             "Generated from the command-line application itself (`skframe COMMAND --help`).", "",
             "## skframe", "", "```text", _help(["--help"]), "```", ""]
    if hasattr(command, "list_commands"):
        for name in sorted(command.list_commands(click.Context(command))):
            parts += [f"## skframe {name}", "", "```text", _help([name, "--help"]), "```", ""]
    return "\n".join(parts)


def on_pre_build(config, **kwargs):
    os.environ.setdefault("SKFRAME_DISABLE_PLUGINS", "")
    target = Path(config["docs_dir"]) / "reference" / "cli.md"
    text = render()
    if not target.exists() or target.read_text(encoding="utf-8") != text:
        target.write_text(text, encoding="utf-8")
