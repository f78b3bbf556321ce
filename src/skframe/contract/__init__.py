"""The plugin contract: what a third-party kernel, sketch, loss, solver, decoder or output matrix is written against.

The six component kinds in one table (:mod:`skframe.contract.kinds`), their protocols and tags, the hook
specifications, component specs, the registry that plugins fill, the entry-point discovery and loader, input
collections and the problems solvers receive. This package is the bottom of skframe above the ground floor: it
imports nothing of skframe but the ground floor, and knows no concrete component. Plugin authors import
:mod:`skframe.plugin.api`, which re-exports what they need from here, and test their components with the
conformance kit (:mod:`skframe.plugin.testing`).
"""
