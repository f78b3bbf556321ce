"""Doctest collection: modules that exist only for an optional extra are skipped without it.

``--doctest-modules`` imports every module under ``src/`` (skframe and the built-in plugins); the PyTorch
networks of DSOKR cannot be imported without the ``deep`` extra (their tests in
``tests/models/test_dsokr.py`` are skipped then, and run where PyTorch is installed, as in CI).
"""

import importlib.util

collect_ignore = []
if importlib.util.find_spec("torch") is None:
    collect_ignore.append("src/skframe/models/structured/_networks.py")


# ---------------------------------------------------------------------------------------------------------------
# Two test processes (pytest-xdist, part of the ``test`` extra): ``pyproject.toml`` runs the suite with
# ``-n auto --dist loadgroup``. Every module is one group, so its module- and session-scoped fixtures (data files,
# the memory of normal runs, warm interpreters) are built once and its tests keep their order; the documentation's
# commands and the figures checked against their outputs share one group, so the figures reuse the outputs.
# ``-n 0`` runs everything in one process, as before.
import os  # noqa: E402

import pytest  # noqa: E402

#: the most test processes ``-n auto`` starts: the suite's subprocesses and BLAS threads use the cores too
MAX_WORKERS = 2
_SHARED_GROUPS = {"tests/docs/test_docs.py": "docs", "tests/docs/test_documented_figures.py": "docs"}


def pytest_xdist_auto_num_workers(config):
    """``-n auto``: pytest-xdist's own count (its cores, or ``PYTEST_XDIST_AUTO_NUM_WORKERS``, which wins), at most
    :data:`MAX_WORKERS` processes unless that variable asks for more."""
    from xdist.plugin import pytest_xdist_auto_num_workers as xdist_count  # lazy: called only where xdist runs

    count = xdist_count(config)
    return count if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS") else max(1, min(MAX_WORKERS, count))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Give every test the group of its module (before pytest-xdist reads the groups)."""
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            module = item.nodeid.split("::", 1)[0]
            item.add_marker(pytest.mark.xdist_group(_SHARED_GROUPS.get(module, module)))
