"""Doctest collection: modules that exist only for an optional extra are skipped without it.

``--doctest-modules`` imports every module under ``src/`` (skframe and the built-in plugins); the PyTorch
networks of DSOKR cannot be imported without the ``deep`` extra (their tests in
``tests/models/test_dsokr.py`` are skipped then, and run where PyTorch is installed, as in CI).
"""

import importlib.util

collect_ignore = []
if importlib.util.find_spec("torch") is None:
    collect_ignore.append("src/skframe/models/structured/_networks.py")
