"""Safe model files: a JSON manifest plus NumPy arrays in one zip archive, never pickle.

A model file (conventionally ``*.skf``) holds the entry ``__manifest__`` (UTF-8
JSON: format name and version, skframe version, the estimator and any extra data,
and for every array its dtype, shape, memory order and SHA-256) and one ``.npy``
entry per array. :func:`load` reads the manifest first and bounds every array read
by what it declares, so a tampered, truncated or inflated file is refused before
anything large is allocated; it never unpickles or runs code from the file.

What is saved, and how it is rebuilt:

* registered components (kernels, sketches, losses, solvers, decoders, output
  matrices) by their :class:`~skframe.contract.specs.ComponentSpec` (registered name and
  parameters, see :func:`skframe.contract.registry.spec_of`), rebuilt through the registry —
  whether they were built by name or constructed directly from a registered class;
* objects of *state classes* through ``obj.to_state()`` (a dict of JSON values and
  arrays) and ``cls.from_state(state)``; a state class without these methods is
  saved from its ``__dict__``. State classes are declared explicitly: skframe's own
  estimators and model parts are listed here, plugins declare theirs through the
  ``register_state_classes`` hook, applications with :func:`register_class`;
* numbers, strings, lists, tuples, dicts with string keys, NumPy arrays and scalars
  (exact dtype, shape and memory order), object arrays of strings (such as scikit-learn's
  ``feature_names_in_``, stored as string arrays) and SciPy CSR/CSC matrices.

A save is verified before it replaces anything: the new file is written to one temporary
file beside ``path``, read back and rebuilt as :func:`load` would (so a model that could not
be loaded, such as a kernel whose bandwidth the data made zero, is refused), its components
evaluated beside the fitted ones on a small probe (so a component that would be rebuilt with other
parameters is refused, naming what differs: :mod:`~skframe.persistence.fidelity`), and only then
renamed over ``path``. See :mod:`skframe.io.atomic` for interruptions and leftovers.

Reproducible files: the same model (same data, options and seed) gives byte-identical files.
Model files therefore hold no timings and no measurements of the machine: the attributes
ending in ``_seconds_`` (``fit_seconds_``, ``solve_seconds_``) are not saved, and the saved
``execution_`` keeps the fit's decisions (executor, backend, engine, chunk rows, precision,
sketch size...) without ``machine`` (free memory, cores, GPU) and, when the memory budget
was taken from the machine rather than given, without that budget and the ``reasons`` that
quote it (see :func:`reproducible_execution`). They stay on the fitted object and in
``skframe fit --json``.

Modules: :mod:`~skframe.persistence.file_format` (the zip container, read defensively),
:mod:`~skframe.persistence.encoding` (models to a JSON tree and arrays, and back),
:mod:`~skframe.persistence.classes` (the classes a file may name),
:mod:`~skframe.persistence.reproducible` (what a file leaves out),
:mod:`~skframe.persistence.fidelity` (a rebuilt component computes what the saved one did) and
:mod:`~skframe.persistence.saving` (``save``, ``load``, ``load_bundle``).
"""

# the private names are kept importable from here, where callers reached them before the package was split
from skframe.persistence.classes import STATE_CLASSES, _class_named, _name_of_class, persistable, register_class  # noqa: F401
from skframe.persistence.encoding import _Decoder, _Encoder  # noqa: F401
from skframe.persistence.file_format import FORMAT_VERSION
from skframe.persistence.reproducible import reproducible_execution
from skframe.persistence.saving import load, load_bundle, save

__all__ = ["save", "load", "load_bundle", "register_class", "persistable", "STATE_CLASSES", "FORMAT_VERSION",
           "reproducible_execution"]
