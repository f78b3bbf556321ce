"""MkDocs hook: typeset the formulas as MathML while the site is built.

``pymdownx.arithmatex`` (generic mode) marks ``$...$`` and ``$$...$$`` in the pages and docstrings; this hook
replaces each marked formula by MathML (``latex2mathml``), which browsers render natively. The site needs no
script and no network connection to show its formulas.
"""

from __future__ import annotations

import html
import logging
import re

log = logging.getLogger("mkdocs.hooks.typeset_math")

INLINE = re.compile(r'<span class="arithmatex">\\\((?P<tex>.*?)\\\)</span>', re.DOTALL)
BLOCK = re.compile(r'<div class="arithmatex">\\\[(?P<tex>.*?)\\\]</div>', re.DOTALL)


def typeset(text, page="?"):
    """``text`` (HTML) with the formulas arithmatex marked replaced by MathML."""
    try:
        from latex2mathml.converter import convert
    except ImportError:  # pragma: no cover - the docs extra installs it
        if INLINE.search(text) or BLOCK.search(text):
            log.warning("%s: formulas left as TeX: pip install latex2mathml (in the docs extra)", page)
        return text

    def replace(display):
        def inner(match):
            tex = html.unescape(match["tex"]).strip()
            try:
                mathml = convert(tex, display=display)
            except Exception as exc:  # noqa: BLE001 - the converter raises several kinds
                log.warning("%s: formula %r cannot be typeset (%s)", page, tex, exc)
                return match.group(0)
            if display == "block":
                return f'<div class="arithmatex">{mathml}</div>'
            return f'<span class="arithmatex">{mathml}</span>'

        return inner

    text = BLOCK.sub(replace("block"), text)
    return INLINE.sub(replace("inline"), text)


def on_page_content(html_text, page, **kwargs):
    return typeset(html_text, page.file.src_uri)
