"""Griffe extension for the API reference: numpydoc cross-reference roles become links.

The docstrings keep the roles that read well in ``help()`` (``:func:`fit_curve```, ``:class:`~pkg.mod.Name```,
``:mod:`skframe.core```...). While the site is built, each role is rewritten to an optional ``<autoref>`` element
that mkdocs-autorefs turns into a link when the target is rendered somewhere on the site, and into plain code text
when it is not (a NumPy function, a private helper): no literal role, and no broken link.

A short name is resolved the way Python would resolve it from the documented object (its own members, then the
names its module defines or imports); failing that, by the unique object of that name in the package.
"""

from __future__ import annotations

import html
import re

import griffe

ROLE = re.compile(r":(?:py:)?(?P<role>func|class|mod|meth|attr|data|exc|obj|const|term):`(?P<body>[^`]+)`")
EXPLICIT_TITLE = re.compile(r"^(?P<title>.+?)\s*<(?P<target>[^<>]+)>$")


def _walk(obj):
    yield obj
    for member in list(obj.members.values()):
        if member.is_alias:
            continue
        yield from _walk(member)


def _resolve(obj, target, by_name):
    """The full path of ``target`` seen from ``obj``, or ``target`` itself when it cannot be found."""
    head, _, rest = target.partition(".")
    scope = obj
    while scope is not None:
        try:
            resolved = scope.resolve(head)
        except (griffe.NameResolutionError, AttributeError, KeyError):
            scope = scope.parent
            continue
        return f"{resolved}.{rest}" if rest else resolved
    candidates = by_name.get(head, ())
    if len(candidates) == 1:
        return f"{candidates[0]}.{rest}" if rest else candidates[0]
    return target


def rewrite(text, resolve):
    """``text`` with every role replaced by an optional autoref; ``resolve`` maps a written target to a path."""

    def replace(match):
        body = match["body"].strip()
        explicit = EXPLICIT_TITLE.match(body)
        if explicit:
            title, target = explicit["title"], explicit["target"].strip()
        else:
            short = body.startswith("~")
            target = body.lstrip("~!")
            title = target.rsplit(".", 1)[-1] if short else target
            title = f"<code>{html.escape(title)}</code>"
        if match["role"] == "term":
            return title
        target = target.lstrip("~!").removesuffix("()")
        identifier = html.escape(resolve(target), quote=True)
        return f'<autoref identifier="{identifier}" optional>{title}</autoref>'

    return ROLE.sub(replace, text)


class SphinxRoles(griffe.Extension):
    """Rewrite the cross-reference roles of every docstring of a loaded package."""

    def on_package(self, *, pkg, **kwargs):
        objects = list(_walk(pkg))
        by_name = {}
        for obj in objects:
            by_name.setdefault(obj.name, []).append(obj.path)
        for obj in objects:
            docstring = obj.docstring
            if docstring is None or ":`" not in docstring.value:
                continue
            docstring.value = rewrite(docstring.value, lambda target, obj=obj: _resolve(obj, target, by_name))
