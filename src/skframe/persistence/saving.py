"""``save``, ``load`` and ``load_bundle``: a model to a verified file and back (see :mod:`skframe.persistence`)."""

from __future__ import annotations

import os

import numpy as np

from skframe._version import __version__
from skframe.exceptions import PersistenceError, SkframeError
from skframe.persistence.encoding import _Decoder, _Encoder
from skframe.persistence.fidelity import probe_data, refuse_round_trip, round_trip_problem
from skframe.persistence.file_format import (
    FORMAT_NAME,
    FORMAT_VERSION,
    describe_array,
    read_model_file,
    write_model_file,
)

__all__ = ["save", "load", "load_bundle"]


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
        When the file cannot be written (naming ``path``), when the written model would
        not load back (e.g. a fitted parameter outside its valid range), or when a component
        rebuilt from the file would compute other values than the fitted one on a small probe
        (a kernel whose constructor's arguments are neither in ``params`` nor readable as
        attributes of the same names; see :mod:`skframe.persistence.fidelity`); ``path`` is
        then left as it was.
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
    return write_model_file(path, manifest, enc.arrays, verify=lambda tmp: _loads_back(tmp, path, enc.components))


def _loads_back(tmp, path, components):
    """Read and rebuild the written temporary file ``tmp`` as :func:`load` would; refuse it otherwise.

    ``components`` lists the encoder's ``(spec, component, enclosing states)``: each rebuilt component must
    compute what the saved one does on a probe (:func:`skframe.persistence.fidelity.round_trip_problem`).
    """
    try:
        rebuilt = _read(tmp)[2]
    except PersistenceError as exc:
        cause = exc.__cause__  # the rebuild's own error says what is wrong, without the file's name
        reason = str(cause) if cause is not None and not isinstance(cause, PersistenceError) else \
            str(exc).replace(repr(os.fspath(tmp)), "the new file")
        raise PersistenceError(
            f"the model was not saved to {os.fspath(path)!r} (left unchanged): it would not load back: {reason}"
        ) from exc
    judged = set()
    for (spec, component, states), again in zip(components, rebuilt):
        if id(component) in judged:  # one object saved in several places is probed once
            continue
        judged.add(id(component))
        problem = round_trip_problem(spec.kind, component, again, probe_data(spec.kind, states))
        if problem is not None:
            raise refuse_round_trip(os.fspath(path), spec, component, problem)


def load_bundle(path, *, max_bytes=None):
    """Load a model file and return ``(model, extra)``; see :func:`save` and :func:`load`."""
    return _read(path, max_bytes=max_bytes)[:2]


def _read(path, max_bytes=None):
    """``(model, extra, the components rebuilt, in the order the file lists them)``."""
    manifest, arrays = read_model_file(path, max_bytes=max_bytes)
    dec = _Decoder(arrays)
    try:
        model, extra = dec.decode(manifest.get("model")), dec.decode(manifest.get("extra", {"__dict__": {}}))
        _check_counts(model, path)
        _check_classes(model, path)
        return model, extra, dec.components
    except PersistenceError:
        raise
    except (SkframeError, TypeError, AttributeError, KeyError, IndexError, ValueError, RecursionError) as exc:
        raise PersistenceError(
            f"{os.fspath(path)!r} describes a model this skframe cannot rebuild ({type(exc).__name__}: {exc}); "
            "the file is corrupted, was tampered with, or was written by an incompatible version"
        ) from exc


def _check_counts(model, path):
    """The loaded model's ``n_features_in_`` must be a count (a file may say ``"five"``, checksums and all)."""
    count = getattr(model, "__dict__", {}).get("n_features_in_")
    if count is not None and (isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 0):
        raise PersistenceError(f"{os.fspath(path)!r} gives n_features_in_={str(count)[:40]!r}, which is not a "
                               "number of features; the file was tampered with: fit the model again")


def _check_classes(model, path):
    """A loaded classifier's ``classes_`` (two or more distinct labels) and ``calibration_`` (per decision column
    a finite slope >= 0, a finite offset and a lapse rate in [0, 0.5)) must be what a fit leaves: a file edited
    with its checksums would otherwise predict NaN probabilities, or a class named twice, with no word."""
    state = getattr(model, "__dict__", {})
    classes, calibration = state.get("classes_"), state.get("calibration_")
    problem = None
    if classes is not None:
        labels = np.asarray(classes)
        if labels.ndim != 1 or labels.size < 2:
            problem = f"classes_ of shape {labels.shape}, not two labels or more"
        elif labels.dtype.kind == "f" and not np.all(np.isfinite(labels)):
            problem = "a class label that is not a finite number"
        elif len({str(v) for v in labels.tolist()}) != labels.size:
            problem = f"a class named twice in classes_ {str(labels.tolist())[:80]}"
    if problem is None and calibration is not None:
        problem = _calibration_problem(calibration, 0 if classes is None else np.asarray(classes).size)
    if problem is not None:
        raise PersistenceError(f"{os.fspath(path)!r} gives {problem}; the file was tampered with: fit the model "
                               "again")


def _calibration_problem(calibration, n_classes):
    if not isinstance(calibration, dict):
        return "a calibration_ that is not a mapping"
    columns = None
    for key, low, high in (("slope", 0.0, np.inf), ("offset", -np.inf, np.inf), ("lapse", 0.0, 0.5)):
        try:
            v = np.asarray(calibration.get(key), dtype=np.float64)
        except (TypeError, ValueError):
            return f"a calibration {key} {str(calibration.get(key))[:40]!r} that is not numbers"
        if v.ndim != 1 or not np.all(np.isfinite(v)) or np.any(v < low) or np.any(v >= high):
            return f"a calibration {key} {str(v.tolist())[:60]} outside its range (finite, {low:g} to {high:g})"
        columns = v.size if columns is None else columns
        if v.size != columns or n_classes and columns not in (1, n_classes):
            return f"a calibration {key} of {v.size} values for {n_classes} classes"
    return None


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
