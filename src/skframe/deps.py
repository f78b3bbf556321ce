"""Optional dependencies, detected in one place.

Every optional library skframe can use (numba for the compiled CPU engine, CuPy
for GPUs, Dask for many machines, PyTorch for neural models, RDKit and networkx
for molecules and graphs) is looked up here, lazily: nothing is imported until a
feature asks for it, so ``import skframe`` stays light.

Each library can be switched off with an environment variable
``SKFRAME_DISABLE_<NAME>=1`` (e.g. ``SKFRAME_DISABLE_NUMBA=1`` runs the plain NumPy
formulas), which is also how the test suite checks the fast paths against the
plain ones.

Examples
--------
>>> from skframe import deps
>>> deps.available("numpy")
True
>>> deps.available("a_library_that_does_not_exist")
False
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys

from skframe.exceptions import DependencyError

__all__ = ["EXTRAS", "lazy_exports", "available", "require", "check", "install_hint", "disabled", "numba_enabled",
           "is_dask_collection"]

#: optional library -> the ``pip install "skframe[extra]"`` that brings it
EXTRAS = {
    "numba": None,  # a core dependency; listed so that it can be disabled like the others
    "cupy": "gpu",
    "dask": "dask",
    "distributed": "dask",
    "torch": "deep",
    "rdkit": "chem",
    "networkx": "graphs",
    "matplotlib": "plot",
    "pyarrow": "parquet",
}

#: extra -> the packages it brings, for an install without the skframe source tree at hand
EXTRA_PACKAGES = {
    "gpu": "cupy-cuda12x",
    "dask": '"dask[array]" distributed',
    "deep": "torch (its CPU build on a machine without an NVIDIA GPU: see the getting-started guide)",
    "chem": "rdkit networkx",
    "graphs": "networkx",
    "plot": "matplotlib",
    "parquet": "pyarrow",
}

_CACHE = {}


def disabled(name):
    """True when ``SKFRAME_DISABLE_<NAME>`` is set to a true value (1, true, yes)."""
    value = os.environ.get(f"SKFRAME_DISABLE_{name.upper()}", "")
    return value.strip().lower() in ("1", "true", "yes", "on")


def _installed(name):
    """True when ``name`` can be found on the import path (nothing is imported, nothing cached)."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def available(name):
    """True when the library ``name`` can be imported and is not disabled; does not import it."""
    if disabled(name):
        return False
    if name not in _CACHE:
        _CACHE[name] = _installed(name)
    return _CACHE[name]


def install_hint(name):
    """The command that installs the optional library ``name``: the skframe extra that brings it, else pip.

    >>> install_hint("zstandard")
    'pip install zstandard'
    """
    extra = EXTRAS.get(name)
    if not extra:
        return f"pip install {name}"
    return (f'pip install -e ".[{extra}]" in the skframe source tree (the {extra} extra), or pip install '
            f"{EXTRA_PACKAGES.get(extra, name)}")


def check(needs):
    """Check, before any work, that the optional libraries a task will import are there; imports none of them.

    Parameters
    ----------
    needs : iterable of (str, str)
        ``(library, feature)`` pairs, e.g. ``("matplotlib", "--png")``; the feature is named in the error.

    Raises
    ------
    DependencyError
        For the first library that is disabled (``SKFRAME_DISABLE_<NAME>``) or not installed: one line naming
        it, what needs it and the command that installs it.

    Examples
    --------
    >>> check([("numpy", "arrays")])
    >>> check([("a_library_that_does_not_exist", "a test")])
    Traceback (most recent call last):
    ...
    skframe.exceptions.DependencyError: a_library_that_does_not_exist is needed for a test but is not installed; \
install it with pip install a_library_that_does_not_exist
    """
    for name, feature in needs:
        if disabled(name):
            raise DependencyError(f"{name} is needed for {feature} but disabled by SKFRAME_DISABLE_{name.upper()}; "
                                  "unset that variable")
        if not _installed(name):
            raise DependencyError(f"{name} is needed for {feature} but is not installed; install it with "
                                  f"{install_hint(name)}")


def require(name, feature=None):
    """Import and return the optional library ``name`` or raise :class:`DependencyError`.

    Parameters
    ----------
    name : str
        Module name, e.g. ``"cupy"``.
    feature : str, optional
        What the user asked for (e.g. ``"backend='cupy'"``), named in the error.
    """
    what = f" for {feature}" if feature else ""
    if disabled(name):
        raise DependencyError(
            f"{name} is needed{what} but disabled by SKFRAME_DISABLE_{name.upper()}; unset that variable"
        )
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise DependencyError(f"{name} is needed{what} but cannot be imported ({exc}); install it with "
                              f"{install_hint(name)}") from exc


def is_dask_collection(x):
    """True when ``x`` is a Dask collection (a ``dask.array``, a Dask dataframe, ...); Dask is not imported.

    Told by the type's home package (``dask``, or ``dask_expr`` for the dataframes of recent
    releases) and Dask's collection protocol (``__dask_graph__``), without building the graph.

    >>> import numpy as np
    >>> is_dask_collection(np.zeros(3))
    False
    """
    root = type(x).__module__.split(".", 1)[0]
    return root in ("dask", "dask_expr") and hasattr(x, "__dask_graph__")


def numba_enabled():
    """True when the compiled numba engine is used (installed and not disabled)."""
    return available("numba")


def lazy_exports(package, homes, names):
    """``(__getattr__, __dir__)`` for a package whose public names load from their modules on first use.

    Parameters
    ----------
    package : str
        The package's ``__name__`` (the package being initialised).
    homes : dict
        Public name -> the module that defines it.
    names : list of str
        The package's ``__all__`` (listed by ``dir`` before they load).

    Returns
    -------
    tuple of callables
        The module-level ``__getattr__`` (imports the home module of a name, keeps the value in the package) and
        ``__dir__``.
    """
    namespace = sys.modules[package].__dict__

    def __getattr__(name):
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        namespace[name] = value
        return value

    def __dir__():
        return sorted(set(namespace) | set(names))

    return __getattr__, __dir__
