"""``skframe plugins``: what is installed, who provides it, and what is broken or disabled."""

from __future__ import annotations

from typing import Annotated

import typer

from skframe.cli._common import echo_json, handle_errors


def plugins(
    json_out: Annotated[
        bool, typer.Option("--json", help="Print one JSON object with components, broken plugins and name collisions.")
    ] = False,
):
    """List every registered kernel, sketch, loss, solver, decoder and output matrix, with aliases.

    Broken plugins and name collisions are listed too.
    """
    from skframe.contract.loader import get_plugin_registry  # lazy: reads the plugins' entry points (~15 ms)
    from skframe.contract.registry import kind_plural, list_components  # lazy: reads the plugins' entry points (~15 ms)

    reg = get_plugin_registry()
    comps = [c.as_dict() for c in list_components()]
    broken = [b.as_dict() for b in reg.broken]
    collisions = [c.as_dict() for c in reg.collisions]
    if json_out:
        echo_json({"components": comps, "broken": broken, "collisions": collisions})
        return
    kind = None
    for c in comps:
        if c["kind"] != kind:
            kind = c["kind"]
            typer.echo(f"{kind_plural(kind)}:")
        aliases = f"  (aliases: {', '.join(c['aliases'])})" if c["aliases"] else ""
        typer.echo(f"  {c['name']:<20} {c['distribution']} {c['version']}{aliases}")
    if broken:
        typer.echo("broken plugins:")
        for b in broken:
            typer.echo(f"  {b['plugin']} ({b['distribution']} {b['version']}): {b['error']}")
    if collisions:
        typer.echo("name collisions (the later registration is disabled):")
        for c in collisions:
            typer.echo(f"  {c['message']}")


plugins = handle_errors(plugins)
