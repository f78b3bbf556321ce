"""Short and full help of the commands: ``--help`` in a screen, ``--help-all`` with every option.

``skframe fit --help`` shows the options a tabular fit needs (:data:`COMMON`: the files, the target, the task,
the kernel, λ, the sketch, intervals, the outputs and the seed) and ends with a line naming
``skframe fit --help-all``, which shows every option in its panel (molecules and graphs, structured outputs,
neural networks, the solver, compute, ...). An option that is not listed in :data:`COMMON` is advanced: an
option added to :class:`skframe.cli._options.FitOptions` appears in ``--help-all`` until it is listed here.

The choice is made when the command is built (:class:`ShortHelpCommand` hides the advanced options) and undone
by the eager ``--help-all`` option before it prints the help; nothing else is imported, so both stay fast.

Every command's help (:class:`HelpCommand`, and :class:`HelpGroup` for ``skframe --help``) gives each option one
or two lines at 80 columns: the help texts are short (docs/cli.md's option reference has them in full), and the
layout leaves the help texts the width of the panel less the option's name and type: the negative form of a flag
(``--no-header``) is named in its help text rather than in a column of its own, the columns Typer leaves empty are
dropped, and a default (``[default: 0.2]``) follows the text on its last line when it fits there. Typer and Rich
are not changed: their table and help cell are swapped only while a help is printed (:func:`_compact_layout`).
"""

# No ``from __future__ import annotations``: Typer reads the Annotated types at run time.
import contextlib
import functools
import inspect
from typing import Annotated, Optional

import typer
import typer.core

__all__ = ["COMMON", "HelpCommand", "HelpGroup", "ShortHelpCommand", "TuneHelpCommand", "with_help_all",
           "help_all_command", "advanced_options"]

#: the options ``--help`` shows; every other option is shown by ``--help-all`` only
COMMON = frozenset({
    "--test", "--holdout", "--target", "--targets", "--columns", "--task", "--missing", "--seed",
    "--kernel", "--kernel-param", "--lam", "--sketch", "--sketch-size",
    "--interval", "--interval-method", "--json", "--model-out", "--png",
})


def _show_everything(ctx: typer.Context, value: bool):
    """``--help-all``: the help with the advanced options (not those hidden by their own declaration, as a
    deprecated option is), then exit."""
    if not value or ctx.resilient_parsing:
        return
    command = ctx.command
    hidden = [p for p in getattr(command, "advanced", ()) if p.hidden]
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
            "--help-all", help="Show every option and exit.", is_eager=True,
            expose_value=False, callback=_show_everything, show_default=False)])
    command.__signature__ = signature.replace(parameters=[*signature.parameters.values(), help_all])
    return command


def help_all_command(func):
    """``func`` (a command function, or a wrapper of one) with the ``--help-all`` option of :func:`with_help_all`."""
    return with_help_all(func, inspect.signature(func, eval_str=True))


def _is_common(param, common, panels):
    names = set(getattr(param, "opts", ())) | set(getattr(param, "secondary_opts", ()))
    return (param.name in ("help", "help_all") or param.param_type_name == "argument" or bool(names & common)
            or getattr(param, "rich_help_panel", None) in panels)


def advanced_options(command, common=COMMON, panels=()):
    """The parameters of a built command that ``--help`` leaves to ``--help-all`` (an option hidden by its own
    declaration, such as a deprecated one, is shown by neither)."""
    return [p for p in command.params if not _is_common(p, common, panels) and not getattr(p, "hidden", False)]


def _filled(cell):
    return bool(cell.plain if hasattr(cell, "plain") else cell)


def _compact_table(table_class):
    """``table_class`` (Rich's table) less the columns that are empty in every row: Typer's option tables keep a
    column of short names and two of negative forms, two characters each even when empty."""

    class CompactTable(table_class):
        def _prune(self):
            self.columns = [c for c in self.columns if any(_filled(cell) for cell in c._cells)] or self.columns

        def __rich_measure__(self, console, options):
            self._prune()
            return super().__rich_measure__(console, options)

        def __rich_console__(self, console, options):
            self._prune()
            return super().__rich_console__(console, options)

    return CompactTable


class _HelpCell:
    """An option's help text followed by its default (``[default: 0.2]``): on the text's last line when it fits
    there, else on the next line; never split across two lines."""

    def __init__(self, items):
        self.items = items

    def __rich_measure__(self, console, options):
        from rich.measure import Measurement  # lazy: as Typer's help

        return Measurement.get(console, options, type(self.items[0])(" ").join(self.items))

    def __rich_console__(self, console, options):
        width = options.max_width
        lines = self.items[0].wrap(console, width)
        for item in self.items[1:]:
            if lines and lines[-1].cell_len + 1 + item.cell_len <= width:
                lines[-1].append(" ")
                lines[-1].append(item)
            else:
                lines.append(item)
        for line in lines:
            line.end = "\n"
            yield line


def _inline(columns_class):
    """Typer's help cell of an option (``columns_class([help, default])``) as a :class:`_HelpCell`: Rich's columns
    would give the default a line of its own whenever the help text wraps."""

    def help_cell(items):
        if len(items) > 1 and all(hasattr(item, "wrap") for item in items):
            return _HelpCell(items)
        return columns_class(items)

    return help_cell


@contextlib.contextmanager
def _compact_layout(params):
    """While a help is printed: flags without their negative forms (named in their help texts), Typer's option
    tables without their empty columns, and each default on the last line of its help text."""
    from typer import rich_utils  # lazy: Typer's help printer loads Rich (~0.4 s), only when a help is printed

    folded = [(p, p.secondary_opts, p.show_default) for p in params if getattr(p, "secondary_opts", None)]
    swapped = {name: getattr(rich_utils, name) for name in ("Table", "Columns") if hasattr(rich_utils, name)}
    try:
        for p, _, _ in folded:
            p.secondary_opts = []  # its default would read True: the help text says it
            p.show_default = False
        if "Table" in swapped:
            rich_utils.Table = _compact_table(swapped["Table"])
        if "Columns" in swapped:
            rich_utils.Columns = _inline(swapped["Columns"])
        yield
    finally:
        for p, names, show in folded:
            p.secondary_opts, p.show_default = names, show
        for name, value in swapped.items():
            setattr(rich_utils, name, value)


class HelpCommand(typer.core.TyperCommand):
    """A command whose help gives each option's text the width of its panel less the option's name and type.

    A flag's negative form (``--no-header``) and its default are named in its help text only (Typer's column of
    negative forms would narrow every help text of the panel), the columns empty in every row of a panel are left
    out, and a default follows the help text instead of taking a line of its own.
    """

    #: the options that ``--help`` hides and ``--help-all`` shows (:class:`ShortHelpCommand`)
    advanced = ()

    def format_help(self, ctx, formatter):
        with _compact_layout(self.params):
            return super().format_help(ctx, formatter)


class HelpGroup(typer.core.TyperGroup):
    """A group (``skframe`` itself) whose options are shown as :class:`HelpCommand` shows them."""

    def format_help(self, ctx, formatter):
        with _compact_layout(self.params):
            return super().format_help(ctx, formatter)


class ShortHelpCommand(HelpCommand):
    """A command whose ``--help`` shows :data:`COMMON` (and the panels of :attr:`common_panels`) only, and says
    that ``--help-all`` shows the rest."""

    common = COMMON
    common_panels = ()

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.advanced = hidden = advanced_options(self, self.common, self.common_panels)
        for p in hidden:
            p.hidden = True
        if hidden:  # the last line of --help
            self.epilog = f"{len(hidden)} more options (solver, structured outputs, ...): skframe {self.name} " \
                          "--help-all"


class TuneHelpCommand(ShortHelpCommand):
    """``skframe tune``: the tuning options are common too."""

    common_panels = ("Tuning",)
