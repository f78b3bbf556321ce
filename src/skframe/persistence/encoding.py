"""Models as a JSON tree plus arrays, and back: the encoder :func:`skframe.save` uses and the decoder of
:func:`skframe.load` (components rebuilt through the registry, state classes through their tables)."""

from __future__ import annotations

import inspect

import numpy as np
import scipy.sparse as sp

from skframe.contract.loader import get_plugin_registry
from skframe.contract.registry import build_component, spec_of
from skframe.contract.specs import ComponentSpec
from skframe.exceptions import PersistenceError, UnknownComponentError
from skframe.persistence.classes import _class_named, _name_of_class
from skframe.persistence.file_format import prepare_array
from skframe.persistence.reproducible import saved_state as _saved_state

__all__ = ["Encoder", "Decoder"]

#: file names a component parameter of a model file may not hold (older files stored a Gram matrix's path)
_ARRAY_FILES = (".npy", ".npz")


def _refuse_file_references(kind, name, params):
    """Refuse a component parameter that would make skframe read a file: a string ending in ``.npy``/``.npz``, or
    any string given to a parameter that the registered component reads a file from when it gets a path (the
    names in its factory's ``path_params``, e.g. the precomputed kernel's ``gram``). A model file holds its arrays
    and never makes skframe read another path."""
    comp = get_plugin_registry().lookup(kind, name) if isinstance(name, str) else None
    reads = tuple(getattr(comp.factory, "path_params", ())) if comp is not None else ()
    for key, value in params.items():
        if isinstance(value, str) and (key in reads or value.lower().endswith(_ARRAY_FILES)):
            raise PersistenceError(
                f"the model's {kind} {name!r} refers to the file {value[:200]!r} ({key}) instead of holding its "
                "contents (a model file written by an older skframe, or edited); skframe does not read files a "
                "model file names: fit the model again, and the new file will hold the array itself")


class _Encoder:
    def __init__(self):
        self.arrays = {}
        self._by_id = {}  # one entry per array object, so shared arrays stay shared
        self._alive = []  # the arrays keyed by id, kept alive so that no id is reused during the save
        self.components = []  # (spec, component, enclosing dicts) of each component encoded, in decoding order
        self._states = []  # the dictionaries being encoded, outermost first (where a component's model is)

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
            if all(type(v) is str for v in value):  # names of a wide file: a million columns at C speed
                return {"__list__": list(value), "tuple": isinstance(value, tuple)}
            items = [self.encode(v, f"{where}[{i}]") for i, v in enumerate(value)]
            return {"__list__": items, "tuple": isinstance(value, tuple)}
        if isinstance(value, dict):
            if not all(isinstance(k, str) for k in value):
                raise PersistenceError(f"{where}: dictionary keys must be strings to be saved")
            self._states.append(value)
            try:
                return {"__dict__": {k: self.encode(v, f"{where}.{k}") for k, v in value.items()}}
            finally:
                self._states.pop()

        spec = spec_of(None, value)
        if spec is not None:
            params = self.encode(dict(spec.params), f"{where}.params")
            self.components.append((spec, value, tuple(self._states)))  # after its params, as the decoder builds
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
        self.components = []  # each component rebuilt, in the order the encoder listed them

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

    def _component(self, kind, name, params):
        if not isinstance(name, str) or not isinstance(params, dict):
            raise PersistenceError("model file describes a component without a name; the file is corrupted")
        _refuse_file_references(kind, name, params)  # a model file holds its arrays: it never makes skframe read
        try:
            component = build_component(ComponentSpec(kind, name, params))
        except UnknownComponentError as exc:
            raise PersistenceError(
                f"the model needs the {kind} {name!r}, which no installed plugin provides; install the plugin "
                f"that registers it ({exc})"
            ) from exc
        self.components.append(component)
        return component

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
            obj = cls.from_state(state)
            if isinstance(obj, ComponentSpec):  # a spec that a refit would build: the same rule as a component
                _refuse_file_references(obj.kind, obj.name, dict(obj.params or {}))
            return obj
        obj = cls.__new__(cls)
        obj.__dict__.update(state)
        _new_parameters_at_default(obj)
        return obj


def _new_parameters_at_default(obj):
    """An estimator saved before a constructor parameter of its class existed gets that parameter's default, so
    that ``get_params``, ``clone`` and a refit work on it (e.g. ``cv_order``)."""
    if not callable(getattr(type(obj), "_get_param_names", None)):
        return
    for name, param in inspect.signature(type(obj).__init__).parameters.items():
        if name != "self" and name not in obj.__dict__ and param.default is not inspect.Parameter.empty:
            obj.__dict__[name] = param.default


Encoder, Decoder = _Encoder, _Decoder
