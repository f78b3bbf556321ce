"""Safe model files: JSON manifest plus NumPy arrays in one zip archive, never pickle.

A model file (conventionally ``*.skf``) is a zip archive written by
:func:`numpy.savez`: the entry ``__manifest__`` holds UTF-8 JSON (format name and
version, skframe version, the estimator class, its parameters and fitted
attributes), every other entry is a plain numeric array. :func:`load` reads it
with ``allow_pickle=False`` and rebuilds components (kernels, sketches, ...) by
their registry name and parameters, so loading never unpickles or runs code
from the file. Each array carries a SHA-256 checksum in the manifest: a
tampered or truncated file gives :class:`skframe.exceptions.PersistenceError`.

Only classes declared with :func:`persistable` can be rebuilt, and only from
modules of skframe and its built-in plugins.
"""

from __future__ import annotations

import hashlib
import importlib
import io
import json
import os
import zipfile

import numpy as np
import scipy.sparse as sp

from .exceptions import PersistenceError, UnknownComponentError

__all__ = ["save", "load", "load_bundle", "persistable", "FORMAT_VERSION"]

FORMAT_NAME = "skframe-model"
FORMAT_VERSION = 1
_PERSISTABLE = {}
_SAFE_PREFIXES = ("skframe.", "skframe_")


def persistable(cls):
    """Class decorator: allow instances of ``cls`` inside saved models (rebuilt from ``__dict__``)."""
    _PERSISTABLE[f"{cls.__module__}:{cls.__qualname__}"] = cls
    return cls


class _Encoder:
    def __init__(self):
        self.arrays = {}

    def _array(self, arr):
        key = f"a{len(self.arrays)}"
        arr = np.ascontiguousarray(arr)
        if arr.dtype == object:
            raise PersistenceError("object arrays cannot be saved safely; convert them to numeric arrays")
        self.arrays[key] = arr
        return key

    def encode(self, value, where="model"):
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, (int, np.integer)):
            return int(value)
        if isinstance(value, (float, np.floating)):
            return {"__float__": repr(float(value))}
        if isinstance(value, np.ndarray):
            return {"__array__": self._array(value)}
        if sp.issparse(value):
            m = sp.csr_matrix(value)
            return {
                "__sparse__": "csr",
                "shape": list(m.shape),
                "data": self._array(m.data),
                "indices": self._array(m.indices),
                "indptr": self._array(m.indptr),
            }
        if isinstance(value, (list, tuple)):
            return {"__list__": [self.encode(v, where) for v in value], "tuple": isinstance(value, tuple)}
        if isinstance(value, dict):
            if not all(isinstance(k, str) for k in value):
                raise PersistenceError(f"{where}: dictionary keys must be strings to be saved")
            return {"__dict__": {k: self.encode(v, f"{where}.{k}") for k, v in value.items()}}
        kind = getattr(value, "_skframe_kind", None)
        name = getattr(value, "_skframe_name", None)
        if kind is not None and name is not None:
            params = getattr(value, "params", None)
            if not isinstance(params, dict):
                params = getattr(value, "_skframe_params", {}) or {}
            return {"__component__": kind, "name": name, "params": self.encode(dict(params), f"{where}.params")}
        key = f"{type(value).__module__}:{type(value).__qualname__}"
        if key in _PERSISTABLE:
            return {"__object__": key, "state": self.encode(dict(vars(value)), where)}
        raise PersistenceError(
            f"{where} holds a {type(value).__name__} object that cannot be saved safely; components must be "
            "built by name from the registry (register custom ones through a plugin) to be saved"
        )


class _Decoder:
    def __init__(self, arrays):
        self.arrays = arrays

    def _array(self, key):
        if key not in self.arrays:
            raise PersistenceError(f"model file is missing array {key!r}; the file is truncated or was tampered with")
        return self.arrays[key]

    def decode(self, node):
        if node is None or isinstance(node, (bool, str, int)):
            return node
        if isinstance(node, float):
            return node
        if not isinstance(node, dict):
            raise PersistenceError("model file manifest has an unexpected structure; the file is corrupted")
        if "__float__" in node:
            return float(node["__float__"])
        if "__array__" in node:
            return self._array(node["__array__"])
        if "__sparse__" in node:
            return sp.csr_matrix(
                (self._array(node["data"]), self._array(node["indices"]), self._array(node["indptr"])),
                shape=tuple(node["shape"]),
            )
        if "__list__" in node:
            items = [self.decode(v) for v in node["__list__"]]
            return tuple(items) if node.get("tuple") else items
        if "__dict__" in node:
            return {k: self.decode(v) for k, v in node["__dict__"].items()}
        if "__component__" in node:
            from .registry import get_component

            kind, name = node["__component__"], node["name"]
            params = self.decode(node["params"])
            try:
                return get_component(kind, name, **params)
            except UnknownComponentError as exc:
                raise PersistenceError(
                    f"the model needs the {kind} {name!r}, which no installed plugin provides; install the plugin "
                    f"that registers it ({exc})"
                ) from exc
        if "__object__" in node:
            return self._object(node["__object__"], node["state"])
        raise PersistenceError("model file manifest has an unknown entry; the file is corrupted")

    def _object(self, key, state):
        module, _, qualname = key.partition(":")
        if not (module == "skframe" or module.startswith(_SAFE_PREFIXES)):
            raise PersistenceError(f"model file names class {key!r} outside skframe; refusing to load it")
        if key not in _PERSISTABLE:
            try:
                importlib.import_module(module)
            except ImportError as exc:
                raise PersistenceError(f"model file names class {key!r} whose module cannot be imported: {exc}") from exc
        cls = _PERSISTABLE.get(key)
        if cls is None:
            raise PersistenceError(f"model file names class {key!r}, which is not a persistable skframe class")
        obj = cls.__new__(cls)
        obj.__dict__.update(self.decode(state))
        return obj


def _sha(arr):
    return hashlib.sha256(np.ascontiguousarray(arr).tobytes()).hexdigest()


def save(model, path, *, extra=None):
    """Save a fitted skframe estimator to ``path`` (JSON manifest + arrays, no pickle).

    Parameters
    ----------
    model : estimator
        A skframe estimator (its class must be :func:`persistable`).
    path : str or path-like
        Destination file; conventionally ending in ``.skf``.
    extra : dict, optional
        Additional JSON/array data stored beside the model (e.g. the CLI's
        feature scaling); returned by :func:`load_bundle`.
    """
    from . import __version__

    enc = _Encoder()
    manifest = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "skframe_version": __version__,
        "model": enc.encode(model, "model"),
        "extra": enc.encode(dict(extra or {}), "extra"),
    }
    manifest["checksums"] = {k: _sha(v) for k, v in enc.arrays.items()}
    blob = np.frombuffer(json.dumps(manifest).encode("utf-8"), dtype=np.uint8)
    path = os.fspath(path)
    tmp = path + ".tmp"
    try:
        with open(tmp, "wb") as fh:
            np.savez(fh, __manifest__=blob, **enc.arrays)
        os.replace(tmp, path)
    except OSError as exc:
        raise PersistenceError(f"cannot write model file {path!r}: {exc.strerror or exc}") from exc
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return path


def _read(path):
    path = os.fspath(path)
    if not os.path.exists(path):
        raise PersistenceError(f"model file {path!r} does not exist; check the path")
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
        with np.load(io.BytesIO(raw), allow_pickle=False) as data:
            if "__manifest__" not in data.files:
                raise PersistenceError(f"{path!r} is not an skframe model file (no manifest); save models with skframe.save")
            arrays = {k: data[k] for k in data.files}
    except PersistenceError:
        raise
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, KeyError) as exc:
        # numpy's own message for a non-zip file suggests unpickling it: never relay that advice
        detail = "not a zip archive of arrays" if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"
        raise PersistenceError(
            f"{path!r} is not a readable skframe model file ({detail}); it may be truncated or corrupted, "
            "or not written by skframe.save / skframe fit --model-out"
        ) from exc
    try:
        manifest = json.loads(arrays.pop("__manifest__").tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PersistenceError(f"{path!r} has a corrupted manifest; the file was modified or truncated") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_NAME:
        raise PersistenceError(f"{path!r} is not an skframe model file")
    version = manifest.get("format_version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise PersistenceError(
            f"{path!r} uses model format version {version!r}, newer than this skframe supports ({FORMAT_VERSION}); "
            f"upgrade skframe (the file was written by skframe {manifest.get('skframe_version')})"
        )
    checksums = manifest.get("checksums", {})
    if set(checksums) != set(arrays):
        raise PersistenceError(f"{path!r} does not hold the arrays its manifest lists; the file was tampered with")
    for key, digest in checksums.items():
        if _sha(arrays[key]) != digest:
            raise PersistenceError(f"array {key!r} in {path!r} fails its checksum; the file was tampered with or corrupted")
    return manifest, arrays


def load_bundle(path):
    """Load a model file and return ``(model, extra)``; see :func:`save`."""
    import skframe.models  # noqa: F401  (declares the persistable estimator classes)

    manifest, arrays = _read(path)
    dec = _Decoder(arrays)
    return dec.decode(manifest["model"]), dec.decode(manifest.get("extra", {"__dict__": {}}))


def load(path):
    """Load a model saved with :func:`save`; never unpickles or executes code from the file.

    Raises
    ------
    PersistenceError
        Missing, truncated, tampered file; newer format; a component whose plugin is not installed.
    """
    return load_bundle(path)[0]
