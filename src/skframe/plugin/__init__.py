"""The plugin contract: what a third-party kernel, sketch, loss, solver, decoder or output matrix is written against.

Protocols of the six component kinds and their tags, the hook specifications, component specs, the registry that
plugins fill, the entry-point discovery and loader. This room knows no concrete component. Plugin authors import
one module, :mod:`skframe.plugin.api`, and test their components with its conformance kit
(:mod:`skframe.plugin.checks`); importing this package loads neither.
"""
