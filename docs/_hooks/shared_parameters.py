"""Griffe extension for the API reference: the machines' shared parameters, written in full.

The parameters every sketched kernel machine shares (``kernel`` to ``backend``) are documented once, in
``skframe.models.machine._common.SHARED_PARAMETERS``; each machine's class docstring holds a one-entry stand-in
that the class replaces when it is defined. The reference reads the source, so this extension makes the same
replacement in every docstring that holds the stand-in, before the roles are rewritten (``crossrefs.py``).
"""

from __future__ import annotations

import griffe

from skframe.models.machine._common import SHARED_PARAMETERS_ENTRY, include_shared_parameters


class SharedParameters(griffe.Extension):
    """Set the shared parameter entries in place of their stand-in in every class docstring that holds it."""

    def on_class_instance(self, *, cls, **kwargs):
        docstring = cls.docstring
        if docstring is not None and SHARED_PARAMETERS_ENTRY.split("\n")[0] in docstring.value:
            docstring.value = include_shared_parameters(docstring.value)
