"""Short and full help of the commands that take ``skframe fit``'s options (``fit``, ``tune``).

``skframe fit --help`` shows the options a tabular fit needs (:data:`COMMON`: the files, the target, the task,
the kernel, λ, the sketch, intervals, the outputs and the seed) and ends with a line naming
``skframe fit --help-all``, which shows every option in its panel (molecules and graphs, structured outputs,
neural networks, the solver, compute, ...). An option that is not listed in :data:`COMMON` is advanced: an
option added to :class:`skframe.cli._options.FitOptions` appears in ``--help-all`` until it is listed here.

The choice is made when the command is built (:class:`ShortHelpCommand` hides the advanced options) and undone
by the eager ``--help-all`` option before it prints the help; nothing else is imported, so both stay fast.
"""

# No ``from __future__ import annotations``: Typer reads the Annotated types at run time.
import functools
import inspect
from typing import Annotated, Optional

import typer
import typer.core

__all__ = ["COMMON", "ShortHelpCommand", "TuneHelpCommand", "with_help_all", "advanced_options"]

#: the options ``--help`` shows; every other option is shown by ``--help-all`` only
COMMON = frozenset({
    "--test", "--holdout", "--target", "--targets", "--columns", "--task", "--missing", "--seed",
    "--kernel", "--kernel-param", "--lam", "--sketch", "--sketch-size",
    "--interval", "--interval-method", "--json", "--model-out", "--png",
})


def _show_everything(ctx: typer.Context, value: bool):
    """``--help-all``: the help with the advanced options, then exit."""
    if not value or ctx.resilient_parsing:
        return
    command = ctx.command
    hidden = [p for p in command.params if getattr(p, "hidden", False)]
    epilog = command.epilog
    try:
        for p in hidden:
            p.hidden = False
        command.epilog = None
        typer.echo(ctx.get_help(), color=ctx.color)
    finally:
        for p in hidden:
            p.hidden = True
        command.epilog = epilog
    raise typer.Exit()


def with_help_all(func, signature):
    """``func`` as a command of ``signature`` (an ``inspect.Signature``) plus the eager ``--help-all`` option,
    which never reaches ``func``."""

    @functools.wraps(func)
    def command(**options):
        options.pop("help_all", None)  # handled by its callback before the command runs
        return func(**options)

    help_all = inspect.Parameter(
        "help_all", inspect.Parameter.KEYWORD_ONLY, default=False,
        annotation=Annotated[Optional[bool], typer.Option(
            "--help-all", help="Show every option (the advanced panels too) and exit.", is_eager=True,
            expose_value=False, callback=_show_everything, show_default=False)])
    command.__signature__ = signature.replace(parameters=[*signature.parameters.values(), help_all])
    return command


def _is_common(param, common, panels):
    names = set(getattr(param, "opts", ())) | set(getattr(param, "secondary_opts", ()))
    return (param.name in ("help", "help_all") or param.param_type_name == "argument" or bool(names & common)
            or getattr(param, "rich_help_panel", None) in panels)


def advanced_options(command, common=COMMON, panels=()):
    """The parameters of a built command that ``--help`` leaves to ``--help-all``."""
    return [p for p in command.params if not _is_common(p, common, panels)]


class ShortHelpCommand(typer.core.TyperCommand):
    """A command whose ``--help`` shows :data:`COMMON` (and the panels of :attr:`common_panels`) only, and says
    that ``--help-all`` shows the rest."""

    common = COMMON
    common_panels = ()

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        hidden = advanced_options(self, self.common, self.common_panels)
        for p in hidden:
            p.hidden = True
        if hidden:  # the last line of --help
            self.epilog = f"{len(hidden)} more options (solver, structured outputs, ...): skframe {self.name} " \
                          "--help-all"


class TuneHelpCommand(ShortHelpCommand):
    """``skframe tune``: the tuning options are common too."""

    common_panels = ("Tuning",)
