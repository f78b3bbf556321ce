"""The classes a model file may name: skframe's own state classes, those plugins and applications declare.

A model file names each object's class by a short name (``"SketchedKernelRidge"``); :data:`STATE_CLASSES`
says where skframe finds it, so a class can move between modules without breaking saved models. Nothing
outside these tables (and the registered components) is ever instantiated by :func:`skframe.load`.
"""

from __future__ import annotations

import importlib

from skframe.contract.loader import get_plugin_registry
from skframe.exceptions import PersistenceError

__all__ = ["STATE_CLASSES", "register_class", "persistable"]

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
