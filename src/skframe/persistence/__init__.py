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
be loaded, such as a kernel whose bandwidth the data made zero, is refused), and only then
renamed over ``path``. See :mod:`skframe.io.atomic` for interruptions and leftovers.

Reproducible files: the same model (same data, options and seed) gives byte-identical files.
Model files therefore hold no timings and no measurements of the machine: the attributes
ending in ``_seconds_`` (``fit_seconds_``, ``solve_seconds_``) are not saved, and the saved
``execution_`` keeps the fit's decisions (executor, backend, engine, chunk rows, precision,
sketch size...) without ``machine`` (free memory, cores, GPU) and, when the memory budget
was taken from the machine rather than given, without that budget and the ``reasons`` that
quote it (see :func:`reproducible_execution`). They stay on the fitted object and in
``skframe fit --json``.
"""

from __future__ import annotations

import importlib
import os

import numpy as np
import scipy.sparse as sp

from skframe._version import __version__
from skframe.contract.loader import get_plugin_registry
from skframe.contract.registry import build_component, spec_of
from skframe.contract.specs import ComponentSpec
from skframe.exceptions import PersistenceError, SkframeError, UnknownComponentError
from skframe.persistence.file_format import (
    FORMAT_NAME,
    FORMAT_VERSION,
    describe_array,
    prepare_array,
    read_model_file,
    write_model_file,
)

__all__ = ["save", "load", "load_bundle", "register_class", "persistable", "STATE_CLASSES", "FORMAT_VERSION",
           "reproducible_execution"]

# Name in model files -> "module:attribute" where skframe finds the class (public paths where there is one).
# Format 1 named classes "module:qualname"; such names from skframe's modules resolve through their qualname.
# A class can thus move between modules without breaking saved models: update its location here.
STATE_CLASSES = {
    "SketchedKernelRidge": "skframe.models:SketchedKernelRidge",
    "SketchedKernelMachine": "skframe.models:SketchedKernelMachine",
    "SketchedKernelClassifier": "skframe.models:SketchedKernelClassifier",
    "JointQuantileRegressor": "skframe.models:JointQuantileRegressor",
    "OutputKernelRegressor": "skframe.models:OutputKernelRegressor",
    "_Draw": "skframe.models.structured:_Draw",
    "DeepOutputKernelRegressor": "skframe.models:DeepOutputKernelRegressor",
    "_DeepMember": "skframe.models.structured:_DeepMember",
    "_ModelCandidates": "skframe.models.structured:_ModelCandidates",
    "_EmbeddingCache": "skframe.models.structured:_EmbeddingCache",
    "SketchedFeatureMap": "skframe.core.feature_map:SketchedFeatureMap",
    "SketchedOutputBasis": "skframe.core.output_basis:SketchedOutputBasis",
    "TrainingOutputBasis": "skframe.core.output_basis:TrainingOutputBasis",
    "ComponentSpec": "skframe.contract.specs:ComponentSpec",
    "FeatureScaler": "skframe.core.preprocessing:FeatureScaler",
    "GraphBatch": "skframe.graphs:GraphBatch",
    "StringBatch": "skframe.graphs:StringBatch",
}
_EXTRA_CLASSES = {}  # "module:qualname" -> class, from register_class / @persistable


def register_class(cls, name=None):
    """Allow instances of ``cls`` inside saved models (an application's input collection, say).

    Plugins use the ``register_state_classes`` hook instead. ``cls`` is saved through
    ``to_state()``/``from_state(state)`` when it defines them, else from its ``__dict__``.

    Parameters
    ----------
    cls : type
    name : str, optional
        Name stored in model files; defaults to ``"module:qualname"``.

    Returns
    -------
    cls, so that it can be used as a class decorator.
    """
    if not isinstance(cls, type):
        raise PersistenceError(f"register_class expects a class, got {cls!r}")
    _EXTRA_CLASSES[name or f"{cls.__module__}:{cls.__qualname__}"] = cls
    return cls


def persistable(cls):
    """Former class decorator; the same as :func:`register_class` (prefer an explicit declaration)."""
    return register_class(cls)


def _dotted(cls):
    return f"{cls.__module__}:{cls.__qualname__}"


def _resolve(where):
    module, _, qualname = where.partition(":")
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _table_class(name):
    """The class the table lists under ``name``, or None when it cannot be imported (moved, optional part)."""
    where = STATE_CLASSES.get(name)
    if where is None:
        return None
    try:
        cls = _resolve(where)
    except (ImportError, AttributeError):
        return None
    return cls if isinstance(cls, type) else None


def _plugin_classes():
    return get_plugin_registry().state_classes


def _registered_classes():
    return [f for f in get_plugin_registry().by_factory if isinstance(f, type)]


def _name_of_class(cls):
    """The name a state class is saved under, or None when it is not declared."""
    for name in STATE_CLASSES:
        if _table_class(name) is cls:
            return name
    for table in (_EXTRA_CLASSES, _plugin_classes()):
        for name, known in table.items():
            if known is cls:
                return name
    return None


def _class_named(name):
    """The state class saved under ``name`` (a table name or, in format-1 files, "module:qualname")."""
    for table in (_EXTRA_CLASSES, _plugin_classes()):
        if name in table:
            return table[name]
    module, _, qualname = name.rpartition(":")
    cls = _table_class(name)
    if cls is None and (module == "skframe" or module.startswith("skframe.")):
        cls = _table_class(qualname)
    if cls is not None:
        return cls
    for factory in _registered_classes():  # format 1 saved components built directly as objects
        if _dotted(factory) == name:
            return factory
    raise PersistenceError(
        f"model file names class {name!r}, which is outside skframe and not declared by a plugin or register_class "
        "(or this skframe cannot import it); refusing to load it"
    )


#: ``execution_`` entries that depend on the machine's state rather than on the fit's inputs
_MACHINE_KEYS = ("machine",)
_MEASURED_BUDGETS = ("machine", "gpu")


def reproducible_execution(execution):
    """``execution_`` as a model file stores it: the fit's decisions without the machine's measurements.

    ``machine`` is dropped; when the memory budget was measured (``budget_source`` ``"machine"`` or
    ``"gpu"``, not ``"given"``), so are ``memory_budget`` and the ``reasons`` (which quote it).
    Nested plans (the ``"output"`` side of structured models) are treated alike.

    >>> reproducible_execution({"executor": "in-memory", "memory_budget": 8, "budget_source": "machine",
    ...                         "reasons": {"executor": "fits"}, "machine": {"cores": 2}})
    {'executor': 'in-memory', 'budget_source': 'machine'}
    """
    if not isinstance(execution, dict):
        return execution
    out = {}
    measured = execution.get("budget_source") in _MEASURED_BUDGETS
    for key, value in execution.items():
        if key in _MACHINE_KEYS or (measured and key in ("memory_budget", "reasons")):
            continue
        out[key] = reproducible_execution(value) if isinstance(value, dict) and "executor" in value else value
    return out


def _saved_state(state):
    """An object's state as saved: no timings (``*_seconds_``), ``execution_`` without machine state."""
    if not any(isinstance(k, str) and (k.endswith("_seconds_") or k == "execution_") for k in state):
        return state
    out = {k: v for k, v in state.items() if not (isinstance(k, str) and k.endswith("_seconds_"))}
    if "execution_" in out:
        out["execution_"] = reproducible_execution(out["execution_"])
    return out


class _Encoder:
    def __init__(self):
        self.arrays = {}
        self._by_id = {}  # one entry per array object, so shared arrays stay shared
        self._alive = []  # the arrays keyed by id, kept alive so that no id is reused during the save

    def _array(self, arr):
        if arr.dtype.hasobject:
            raise PersistenceError("object arrays cannot be saved safely; convert them to numeric arrays")
        key = self._by_id.get(id(arr))
        if key is None:
            key = f"a{len(self.arrays)}"
            self.arrays[key] = prepare_array(arr)
            self._by_id[id(arr)] = key
            self._alive.append(arr)
        return key

    def encode(self, value, where="model"):
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, int):
            return int(value)
        if isinstance(value, float):
            return {"__float__": repr(value)}
        if isinstance(value, np.generic):  # exact dtype: a 0-d array
            return {"__scalar__": self._array(np.asarray(value))}
        if isinstance(value, np.ndarray) and value.dtype.hasobject and _all_strings(value):
            # names (scikit-learn's feature_names_in_): saved as a string array, rebuilt with dtype object
            return {"__array__": self._array(value.astype(str)), "object": True}
        if isinstance(value, np.ndarray):
            return {"__array__": self._array(value)}
        if _is_sparse(value):
            return self._sparse(value)
        if isinstance(value, (list, tuple)):
            items = [self.encode(v, f"{where}[{i}]") for i, v in enumerate(value)]
            return {"__list__": items, "tuple": isinstance(value, tuple)}
        if isinstance(value, dict):
            if not all(isinstance(k, str) for k in value):
                raise PersistenceError(f"{where}: dictionary keys must be strings to be saved")
            return {"__dict__": {k: self.encode(v, f"{where}.{k}") for k, v in value.items()}}

        spec = spec_of(None, value)
        if spec is not None:
            params = self.encode(dict(spec.params), f"{where}.params")
            return {"__component__": spec.kind, "name": spec.name, "params": params}
        name = _name_of_class(type(value))
        if name is not None:
            if hasattr(value, "to_state"):
                state = value.to_state()
                if not isinstance(state, dict):
                    raise PersistenceError(
                        f"{type(value).__name__}.to_state() returned {type(state).__name__}; it must return a dict"
                    )
                return {"__object__": name, "state": self.encode(_saved_state(state), where), "via": "to_state"}
            return {"__object__": name, "state": self.encode(_saved_state(dict(vars(value))), where)}
        raise PersistenceError(
            f"{where} holds a {type(value).__name__} object that cannot be saved safely; components must be "
            "registered in the registry (through a plugin) to be saved, other objects declared as state classes"
        )

    def _sparse(self, value):
        fmt = value.format if value.format in ("csr", "csc") else "csr"
        m = value.asformat(fmt)
        return {
            "__sparse__": fmt,
            "array": not _is_sparse_matrix(value),
            "shape": [int(s) for s in m.shape],
            "data": self._array(m.data),
            "indices": self._array(m.indices),
            "indptr": self._array(m.indptr),
        }


def _all_strings(arr):
    return arr.size > 0 and all(isinstance(v, str) for v in arr.flat)


def _is_sparse(value):
    mod = type(value).__module__
    if not mod.startswith("scipy."):
        return False

    return sp.issparse(value)


def _is_sparse_matrix(value):
    return isinstance(value, sp.spmatrix)


class _Decoder:
    def __init__(self, arrays):
        self.arrays = arrays

    def _array(self, key):
        if not isinstance(key, str) or key not in self.arrays:
            raise PersistenceError(f"model file is missing array {key!r}; the file is truncated or was tampered with")
        return self.arrays[key]

    def decode(self, node):
        if node is None or isinstance(node, (bool, str, int, float)):
            return node
        if isinstance(node, list):
            return [self.decode(v) for v in node]
        if not isinstance(node, dict):
            raise PersistenceError("model file manifest has an unexpected structure; the file is corrupted")
        if "__float__" in node:
            return float(node["__float__"])
        if "__scalar__" in node:
            return self._array(node["__scalar__"])[()]
        if "__array__" in node:
            arr = self._array(node["__array__"])
            return arr.astype(object) if node.get("object") is True and arr.dtype.kind == "U" else arr
        if "__sparse__" in node:
            return self._sparse(node)
        if "__list__" in node:
            if not isinstance(node["__list__"], list):
                raise PersistenceError("model file manifest has a malformed list; the file is corrupted")
            items = [self.decode(v) for v in node["__list__"]]
            return tuple(items) if node.get("tuple") else items
        if "__dict__" in node:
            if not isinstance(node["__dict__"], dict):
                raise PersistenceError("model file manifest has a malformed dictionary; the file is corrupted")
            return {k: self.decode(v) for k, v in node["__dict__"].items()}
        if "__component__" in node:
            return self._component(node["__component__"], node.get("name"), self.decode(node.get("params")) or {})
        if "__object__" in node:
            return self._object(node["__object__"], self.decode(node.get("state")), node.get("via"))
        raise PersistenceError("model file manifest has an unknown entry; the file is corrupted")

    def _sparse(self, node):
        fmt = node["__sparse__"]
        if fmt not in ("csr", "csc"):
            raise PersistenceError(f"model file holds a sparse matrix of unknown format {fmt!r}; the file is corrupted")
        cls = getattr(sp, f"{fmt}_array" if node.get("array") else f"{fmt}_matrix")
        parts = (self._array(node["data"]), self._array(node["indices"]), self._array(node["indptr"]))
        return cls(parts, shape=tuple(node["shape"]))

    @staticmethod
    def _component(kind, name, params):
        if not isinstance(name, str) or not isinstance(params, dict):
            raise PersistenceError("model file describes a component without a name; the file is corrupted")
        try:
            return build_component(ComponentSpec(kind, name, params))
        except UnknownComponentError as exc:
            raise PersistenceError(
                f"the model needs the {kind} {name!r}, which no installed plugin provides; install the plugin "
                f"that registers it ({exc})"
            ) from exc

    @staticmethod
    def _object(name, state, via):
        if not isinstance(name, str) or not isinstance(state, dict):
            raise PersistenceError(
                "model file describes an object without a class name or state; the file is corrupted"
            )
        cls = _class_named(name)
        if via == "to_state":
            if not hasattr(cls, "from_state"):
                raise PersistenceError(f"class {name!r} has no from_state(); this skframe cannot rebuild it")
            return cls.from_state(state)
        obj = cls.__new__(cls)
        obj.__dict__.update(state)
        return obj


def save(model, path, *, extra=None):
    """Save a fitted skframe estimator to ``path`` (JSON manifest + arrays, no pickle), atomically.

    Parameters
    ----------
    model : estimator
        A skframe estimator (or any declared state class).
    path : str or path-like
        Destination file; conventionally ending in ``.skf``. It is replaced only once
        the new file is completely written and loads back.
    extra : dict, optional
        Additional JSON/array data stored beside the model (e.g. the CLI's
        feature scaling); returned by :func:`load_bundle`.

    Returns
    -------
    str
        The path written.

    Raises
    ------
    PersistenceError
        When the file cannot be written (naming ``path``), or when the written model would
        not load back (e.g. a fitted parameter outside its valid range); ``path`` is then
        left as it was.
    """
    enc = _Encoder()
    manifest = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "skframe_version": __version__,
        "model": enc.encode(model, "model"),
        "extra": enc.encode(dict(extra or {}), "extra"),
    }
    manifest["arrays"] = {k: describe_array(v) for k, v in enc.arrays.items()}
    return write_model_file(path, manifest, enc.arrays, verify=lambda tmp: _loads_back(tmp, path))


def _loads_back(tmp, path):
    """Read and rebuild the written temporary file ``tmp`` as :func:`load` would; refuse it otherwise."""
    try:
        load_bundle(tmp)
    except PersistenceError as exc:
        cause = exc.__cause__  # the rebuild's own error says what is wrong, without the file's name
        reason = str(cause) if cause is not None and not isinstance(cause, PersistenceError) else \
            str(exc).replace(repr(os.fspath(tmp)), "the new file")
        raise PersistenceError(
            f"the model was not saved to {os.fspath(path)!r} (left unchanged): it would not load back: {reason}"
        ) from exc


def load_bundle(path, *, max_bytes=None):
    """Load a model file and return ``(model, extra)``; see :func:`save` and :func:`load`."""
    manifest, arrays = read_model_file(path, max_bytes=max_bytes)
    dec = _Decoder(arrays)
    try:
        return dec.decode(manifest.get("model")), dec.decode(manifest.get("extra", {"__dict__": {}}))
    except PersistenceError:
        raise
    except (SkframeError, TypeError, AttributeError, KeyError, IndexError, ValueError, RecursionError) as exc:
        raise PersistenceError(
            f"{os.fspath(path)!r} describes a model this skframe cannot rebuild ({type(exc).__name__}: {exc}); "
            "the file is corrupted, was tampered with, or was written by an incompatible version"
        ) from exc


def load(path, *, max_bytes=None):
    """Load a model saved with :func:`save`; never unpickles or executes code from the file.

    Parameters
    ----------
    path : str or path-like
    max_bytes : int, optional
        Refuse files whose arrays declare more bytes in total.

    Raises
    ------
    PersistenceError
        Missing, truncated, tampered or inflated file; newer format; a class that is not
        declared; a component whose plugin is not installed.
    """
    return load_bundle(path, max_bytes=max_bytes)[0]
