"""What plugin authors import: the facade above the contract, their toolbox and their conformance kit.

:mod:`skframe.plugin.api` re-exports from the contract (:mod:`skframe.contract`) what a component is written
against; :mod:`skframe.plugin.toolbox` holds the numerical helpers skframe's own components use;
:mod:`skframe.plugin.testing` (with :mod:`skframe.plugin.checks`) is the conformance kit. This package sits above
``core`` and ``compute``, whose helpers the toolbox and the kit re-export; nothing inside skframe below the
models imports it, and importing this package loads none of its modules.
"""
