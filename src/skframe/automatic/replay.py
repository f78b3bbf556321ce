"""The replay of a saved automatic model's preprocessing on new data (``TableModel.predict``, ``skframe predict``
and ``evaluate``): the columns matched by name, the table encoding, the missing cells, the training scaler.

A model file keeps its state as data (JSON values and arrays, no pickle): ``encoding`` (the typed columns),
``columns`` (the layout), ``scaler`` (the training statistics), ``train_feature_means`` and ``train_target_means``
(``missing="mean"``), ``task``, ``classes``, ``interval``. Each function here reads one part of it.
"""

from __future__ import annotations

import contextlib

import numpy as np

from skframe.automatic._columns import Layout, cli_columns, read_plan
from skframe.automatic._raw_tables import check_saved
from skframe.automatic._services import call_predict, task_module
from skframe.automatic.options import FORMATS, MISSING, TableOptions, _choice
from skframe.datasets import FeatureScaler, load_dataset
from skframe.exceptions import InvalidParameterError, PersistenceError, SkframeError
from skframe.persistence import load_bundle

__all__ = ["load_model", "scaler_state", "apply_scaler", "read_file", "saved", "fit_settings", "options_for",
           "check_features", "model_layout", "read_plan_for", "prediction_names", "inconsistent", "predict_task"]


def load_model(model_path):
    """``(estimator, state)`` of a model file; the table encoding and the class labels kept beside the model are
    checked (a file edited since is refused in one line)."""
    model, extra = load_bundle(model_path)
    check_saved(model, extra, model_path)
    return model, extra


def inconsistent(model_path):
    """A context in which an estimator's own ValueError, TypeError or IndexError (arrays of a loaded model that do
    not fit together: a file tampered with, checksums and all) becomes one PersistenceError naming the file."""
    @contextlib.contextmanager
    def guard():
        try:
            yield
        except SkframeError:
            raise
        except (ValueError, TypeError, IndexError) as exc:
            raise PersistenceError(f"the model file {str(model_path)!r} holds arrays that do not fit together "
                                   f"({type(exc).__name__}: {str(exc)[:200]}); it was tampered with or written by "
                                   "an incompatible version: fit the model again") from exc

    return guard()


def check_features(est, X, data, targets):
    """Refuse data whose number of feature columns is not the model's, with the fix."""
    expected = getattr(est, "n_features_in_", None)
    if expected is not None and X.shape[1] != expected:
        hint = (f"use --targets {targets + X.shape[1] - expected} if its last columns are targets"
                if X.shape[1] > expected else "check that it is the same kind of data (and --targets)")
        raise InvalidParameterError(
            f"{data} has {X.shape[1]} feature columns but the model was trained on {expected}; {hint}"
        )


def scaler_state(scaler, method):
    """The fitted :class:`~skframe.datasets.FeatureScaler` as data (None when it was not fitted)."""
    if not hasattr(scaler, "scale_"):
        return None
    return {"mean": scaler.mean_, "scale": scaler.scale_, "with_mean": bool(scaler.with_mean_), "method": method}


def apply_scaler(X, extra):
    """Scale X with the training statistics saved beside the model (the fit's FeatureScaler)."""
    sc = extra.get("scaler") if isinstance(extra, dict) else None
    if not sc or sc.get("method", "none") == "none":
        return X
    scaler = FeatureScaler(sc["method"])
    scaler.mean_ = np.asarray(sc["mean"])
    scaler.scale_ = np.asarray(sc["scale"])
    scaler.with_mean_ = bool(sc.get("with_mean"))
    scaler.n_features_in_ = scaler.scale_.shape[0]
    return scaler.transform(X)


def saved(extra, key, default=None):
    """``extra[key]``, or ``default`` when the file does not hold it."""
    value = extra.get(key) if isinstance(extra, dict) else None
    return default if value is None else value


def read_file(data, targets, missing, fmt, extra=None, columns=None, with_targets=None):
    """Features and targets of a numeric data file; ``targets=0`` reads a features-only CSV/ARFF file.

    ``columns`` (a :class:`skframe.io.Columns`) chooses the feature and target columns, and
    ``with_targets`` says whether targets are read (default: ``targets > 0``).
    ``missing="mean"`` fills missing cells with the TRAINING means saved beside the model
    (``train_feature_means``, ``train_target_means``), not with the means of DATA.
    """
    with_targets = bool(targets) if with_targets is None else with_targets
    means = None
    if missing == "mean":
        means = (saved(extra, "train_feature_means"), saved(extra, "train_target_means") if with_targets else None)
    ds = load_dataset(str(data), targets=targets, missing=missing, fmt=fmt, means=means, columns=columns)
    return ds.X, (ds.Y if with_targets else None)


def model_layout(est, extra):
    """The model's columns (a ``Layout``); the model's feature names are matched here, once: DATA's columns are
    chosen by name and put in the model's order, and the model then takes plain arrays."""
    layout = Layout.of_model(est, extra)
    est.__dict__.pop("feature_names_in_", None)
    return layout


def read_plan_for(layout, data, fmt, *, with_targets, targets, columns, drop, target):
    """Which columns of a numeric file DATA are read for this layout: ``(columns, targets)``."""
    return read_plan(layout, str(data), fmt, with_targets=with_targets, targets=targets,
                     choice=cli_columns(columns, drop, target))


def prediction_names(est, layout):
    """Column names of the predictions: the targets' names; one column per level for quantiles (``y@0.5``)."""
    names = layout.target_labels
    levels = getattr(est, "quantiles_", None)
    if levels is not None and len(names) == 1:
        return [f"{names[0]}@{float(q):g}" for q in levels]
    return names


def fit_settings(extra, missing, fmt):
    """The ``missing`` policy and ``format`` asked now, defaulting to those used at fit time."""
    missing = _choice(missing, MISSING, "--missing") or saved(extra, "missing", "error")
    fmt = _choice(fmt, FORMATS, "--format") or saved(extra, "format")
    return missing, fmt


def options_for(extra, task):
    """Fit options carrying what the task modules need at prediction time (training target means)."""
    means = saved(extra, "train_target_means")
    return TableOptions(task=task if task == "structured" else "regression", top_k=saved(extra, "top_k"),
                      train_target_means=None if means is None else np.asarray(means, dtype=np.float64))


def predict_task(est, extra, X):
    """The task module's predictions of ``est`` on encoded, unscaled features X (scaled here)."""
    task = saved(extra, "task", "regression")
    return call_predict(task_module(task), est, apply_scaler(X, extra), options_for(extra, task))
