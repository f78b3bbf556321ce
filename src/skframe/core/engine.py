"""Which engine runs the inner loops of a numerical routine: plain NumPy, compiled numba, or CuPy.

:func:`select_engine` returns the engine a :class:`~skframe.options.ComputeOptions` names
(``options.engine``: a fit's execution plan decides it once, from the size of the whole fit,
and passes it down in the options); without one, ``"cupy"`` for the CuPy backend, ``"numba"``
when numba is installed, not disabled (``SKFRAME_DISABLE_NUMBA=1``) and the work is large
enough to pay for numba's start in a fresh process (:data:`NUMBA_MIN_WORK` kernel entries),
else ``"numpy"`` (the plain formulas, which the fast engines are tested against). A small fit
therefore never imports numba. :func:`planned` keeps the plan a routine was handed, or builds the one default plan of a
direct call for the work the routine is about to do, so that everything it calls runs on the
same engine; :func:`elementwise_engine` is the rule of entry-by-entry formulas (the losses);
:func:`engine_module` imports the private sibling module that implements an engine. Nothing
is read from ambient state: the engine travels as an argument.

This is the one place the rule lives, for :mod:`skframe.core` and for the plugins (through
:mod:`skframe.plugin.api`); the array namespace of the data is :mod:`skframe.compute.backend`'s.

How an engine plugs in
----------------------
A numerical module ``<package>/<name>.py`` keeps its plain NumPy formulas and puts
each accelerated version of a function in a private sibling module named after
the engine: ``<package>/_<name>_numba.py``, ``<package>/_<name>_cupy.py``. Each
sibling defines the same function names with the same signatures. The module
asks :func:`engine_module` for the sibling of the selected engine and calls its
function, or falls back to its own formula when the engine is ``"numpy"`` or
the sibling lacks the function::

    from skframe.core.engine import engine_module

    def times_mixT(block, mix, out, options=None):
        fast = engine_module("skframe.core.sketching", options)
        if fast is not None and hasattr(fast, "dense_times_csr_t"):
            return fast.dense_times_csr_t(block, mix, out)
        ...  # plain NumPy / SciPy formula

The sibling modules are imported lazily, so ``import skframe`` never imports
numba or CuPy.
"""

from __future__ import annotations

import importlib
import os

from skframe.deps import numba_enabled, require
from skframe.exceptions import InvalidParameterError
from skframe.limits import parse_count
from skframe.options import DEFAULT_OPTIONS

__all__ = [
    "ENGINES",
    "NUMBA_MIN_WORK",
    "SPARSE_ENGINE_SHARE",
    "engine_rule",
    "numba_min_work",
    "select_engine",
    "planned",
    "LOSS_NUMBA_MIN_ENTRIES",
    "elementwise_engine",
    "engine_module",
    "lazy_module",
]

#: engine names returned by :func:`select_engine`
ENGINES = ("numpy", "numba", "cupy")

_ENGINE_MODULES = {}  # (module, engine) -> imported engine module or None


#: Kernel entries (rows x columns of the kernel blocks) of one fit or prediction below which
#: the plain NumPy engine runs it even when numba is installed. A fresh process pays 0.7-1 s
#: to import numba and load its cached compiled functions (measured on 2 cores); on Gaussian
#: p-SR fits the warm NumPy and numba times are equal at about 4e7 entries and numba is faster
#: above (1.6e8 entries: 3.9 s vs 5.3 s), so below this size numba cannot pay for its start
#: (see ``benchmarks/bench_cli_startup.py --sweep``). ``SKFRAME_NUMBA_MIN_WORK`` overrides it
#: (0: numba always).
NUMBA_MIN_WORK = 40_000_000


def numba_min_work():
    """:data:`NUMBA_MIN_WORK`, or the integer in ``SKFRAME_NUMBA_MIN_WORK`` when set."""
    value = os.environ.get("SKFRAME_NUMBA_MIN_WORK", "").strip()
    if value:  # a whole count of kernel entries, 0 or more (skframe.limits.parse_count: one line for nonsense)
        return parse_count("SKFRAME_NUMBA_MIN_WORK", value, minimum=0, example="4e7")
    return NUMBA_MIN_WORK


#: sparse inputs use compiled loops from :func:`numba_min_work` / this many kernel entries (see :func:`engine_rule`)
SPARSE_ENGINE_SHARE = 8


def engine_rule(backend, work, *, sparse=False):
    """The one engine rule: ``(engine, reason)`` for ``work`` kernel entries on ``backend``.

    ``"cupy"`` for the CuPy backend; ``"numpy"`` when numba is not installed or disabled
    (``SKFRAME_DISABLE_NUMBA=1``), or when the work is below :func:`numba_min_work` kernel entries
    (None: unknown, counted as large); else ``"numba"``. Sparse inputs lower the threshold
    :data:`SPARSE_ENGINE_SHARE` times: SciPy's sparse-times-dense product costs far more per kernel
    entry than the compiled CSR loops (Bibtex, 4 880 x 2 250 entries of 1 836 sparse features: 1.1 s
    with NumPy and SciPy, 0.1 s compiled), so compiled code pays for its start on much smaller problems.
    The fit's plan (:func:`skframe.compute.plan.plan_fit`), a prediction's plan and every routine called
    without a plan apply this rule and nothing else.

    >>> engine_rule("numpy", 100)[0]
    'numpy'
    """
    if str(backend or "numpy").lower() == "cupy":
        return "cupy", "the CuPy backend"
    if not numba_enabled():
        return "numpy", "numba is not installed or disabled (SKFRAME_DISABLE_NUMBA)"
    if work is None:
        return "numba", "the size of the work is unknown (counted as large)"
    limit = numba_min_work()
    if sparse:
        limit = limit // SPARSE_ENGINE_SHARE
    kind = "sparse kernel entries" if sparse else "kernel entries"
    if work < limit:
        return "numpy", f"n x s' = {work:.3g} {kind} < {limit:.0e}: compiled code would not pay for its start"
    return "numba", f"n x s' = {work:.3g} {kind} >= {limit:.0e}"


def select_engine(options=None, work=None, *, sparse=False):
    """The engine that runs the inner loops for ``options`` (a ComputeOptions or None) and ``work``.

    ``options.engine`` when set (the execution plan's choice); else :func:`engine_rule` for the
    options' backend.

    Parameters
    ----------
    options : ComputeOptions, optional
    work : int, optional
        Kernel entries of the computation (rows x columns of its kernel blocks, all blocks
        together); None when unknown, which counts as large. Below :func:`numba_min_work` the
        plain NumPy engine is chosen: the choice depends on the problem size only, never on
        what the process ran before, so a model fitted or loaded in any process computes the
        same numbers.
    sparse : bool, default=False
        The rows are a sparse matrix (a lower threshold, see :func:`engine_rule`).

    Examples
    --------
    >>> from skframe.options import ComputeOptions
    >>> select_engine(work=100), select_engine(ComputeOptions(engine="numpy"), work=10**12)
    ('numpy', 'numpy')
    """
    chosen = getattr(options, "engine", None)
    if chosen:
        if chosen not in ENGINES:
            raise InvalidParameterError(f"engine={chosen!r} is not known; choose one of {', '.join(ENGINES)}")
        return str(chosen)
    return engine_rule(getattr(options, "backend", "numpy"), work, sparse=sparse)[0]


def planned(options, work, *, sparse=False):
    """The options a routine runs with: the plan it was handed, else the one default plan of a direct call.

    When ``options`` names an engine (a fit's or a prediction's plan decided it), they are returned
    unchanged: a routine handed a plan never decides again. Otherwise (a direct call of a low-level
    routine, with no plan) this is the one place its plan is built: the engine of
    :func:`engine_rule` for ``work``, the size of everything the routine is about to do (e.g.
    ``n x s'`` for a fit, ``n_rows x s'`` for a prediction), so that every block it computes runs on
    the same engine, whatever the size of the block. BLAS threads stay as they are (``blas_threads``
    None); the row threads of a block follow :func:`skframe.core.threads.threads_for`.

    Parameters
    ----------
    options : ComputeOptions or None
        None means :data:`skframe.options.DEFAULT_OPTIONS`.
    work : int or None
        Kernel entries of the whole computation (None: unknown, counted as large).
    sparse : bool, default=False
        The rows are a sparse matrix (see :func:`engine_rule`).

    Returns
    -------
    ComputeOptions

    >>> planned(None, 100).engine
    'numpy'
    """
    options = options or DEFAULT_OPTIONS
    if getattr(options, "engine", None):
        return options
    return options.replace(engine=select_engine(options, work, sparse=sparse))


#: the former name of :func:`planned` (kept for code written against it; new code calls :func:`planned`)
with_engine = planned


#: Entries of an array below which an entry-by-entry formula (a loss's values and sub-gradients) runs on the
#: plain NumPy engine: such a formula costs a few operations per entry, so compiled code pays for its start in
#: a fresh process only on large arrays. ``SKFRAME_NUMBA_MIN_WORK=0`` forces the compiled engine, as for kernels.
LOSS_NUMBA_MIN_ENTRIES = 1_000_000


def elementwise_engine(entries):
    """The engine of an entry-by-entry formula on ``entries`` entries: ``"numba"`` or ``"numpy"``.

    ``"numba"`` when numba is installed and enabled and the array has at least
    :data:`LOSS_NUMBA_MIN_ENTRIES` entries (or ``SKFRAME_NUMBA_MIN_WORK=0``); else ``"numpy"``. The losses'
    values and sub-gradients are evaluated on the engine this rule gives (their ``value(F, Y)`` receives no
    plan: the rule is the plan's, written here once).

    >>> elementwise_engine(10)
    'numpy'
    """
    if numba_enabled() and (numba_min_work() == 0 or int(entries) >= LOSS_NUMBA_MIN_ENTRIES):
        return "numba"
    return "numpy"


class _LazyModule:
    """A module imported at its first attribute access (see :func:`lazy_module`)."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return getattr(importlib.import_module(self._name), attr)

    def __repr__(self):
        return f"<lazy module {self._name!r}>"


def lazy_module(name):
    """A stand-in for the module ``name`` that imports it at the first attribute access.

    Plugins keep their compiled (numba) siblings behind one, so that discovering the plugins
    never imports numba.
    """
    return _LazyModule(name)


def engine_module(module, options=None, engine=None, work=None):
    """The private engine sibling of ``module`` for the selected engine, or None for plain NumPy.

    Parameters
    ----------
    module : str
        Dotted name of the numerical module, e.g. ``"skframe.core.sketching"``; the numba
        engine of it is ``"skframe.core._sketching_numba"``.
    options : ComputeOptions, optional
        Decides the engine through :func:`select_engine` (its ``engine`` when set).
    engine : str, optional
        The engine (``"numpy"``, ``"numba"`` or ``"cupy"``), e.g. the one a caller received as an
        argument; it wins over ``options``.
    work : int, optional
        Kernel entries of the computation, for :func:`select_engine` when neither names an engine.

    Returns
    -------
    module or None
        None when the engine is ``"numpy"`` or when no sibling exists for a GPU
        engine (the caller then runs its plain formula, on CuPy arrays for the
        CuPy backend).
    """
    engine = engine or select_engine(options, work)
    key = (module, engine)
    if key in _ENGINE_MODULES:
        return _ENGINE_MODULES[key]
    if engine not in ENGINES:
        raise InvalidParameterError(f"engine={engine!r} is not known; choose one of {', '.join(ENGINES)}")
    found = None
    if engine != "numpy":
        package, _, stem = module.rpartition(".")
        name = f"{package}._{stem}_{engine}" if package else f"_{stem}_{engine}"
        if engine == "numba":
            require("numba", f"the compiled engine of {module}")
        try:
            found = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
    _ENGINE_MODULES[key] = found
    return found
