"""The plugin contract: what a third-party kernel, sketch, loss, solver or decoder is written against.

Protocols of the component kinds, the hook specifications, component specs, the registry that plugins fill and
the entry-point loader. This room knows no concrete component.
"""
