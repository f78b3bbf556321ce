""":class:`TableModel`: the model ``skframe fit`` builds on a table, as a scikit-learn estimator.

``TableModel(**options).fit(data)`` runs the pipeline of :mod:`skframe.automatic.pipeline`, the one the command
line runs: the same readers, the same decisions (task, target, column types, scaling, lambda and gamma, loss and
calibration, intervals, the held-out report), each recorded with its reason in ``report_`` (the dict ``skframe fit
--json`` prints) and summed up in ``decisions_``. Its parameters are the command's options of the same names,
with the same defaults (``skframe.automatic.options.TableOptions``). A fitted model saves to the file ``skframe fit
--model-out`` writes; :func:`load` reads both back as a TableModel.
"""

from __future__ import annotations

import contextlib
import os

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from skframe.automatic._columns import Layout
from skframe.automatic._raw_tables import check_saved, read_saved
from skframe.automatic._values import to_jsonable
from skframe.automatic.classification import AUTO_CALIBRATION
from skframe.automatic.options import TableOptions
from skframe.automatic.pipeline import fit_prepared, parse_lam, prepare, table_state
from skframe.automatic.replay import (
    apply_scaler,
    check_features,
    fit_settings,
    load_model,
    predict_task,
    read_file,
    read_plan_for,
    saved,
)
from skframe.automatic.tables import array_table, frame_table, is_frame
from skframe.exceptions import InvalidParameterError
from skframe.models._extrapolation import flag_predictions
from skframe.persistence import save
from skframe.uncertainty import interval_bounds

__all__ = ["TableModel", "fit_table", "load", "from_bundle", "save_state", "decisions", "options_state"]

#: the parameters of a TableModel: the fit options that are about the model (names and defaults: TableOptions')
PARAMS = ("task", "target", "targets", "columns", "drop", "column_types", "delimiter", "format", "missing", "scale",
          "holdout", "seed", "cv_order", "max_classes", "kernel", "kernel_params", "sketch", "sketch_size",
          "sketch_params", "fit_intercept", "lam", "loss", "loss_params", "class_weight", "calibration",
          "lam_criterion", "solver", "solver_params", "epochs", "batch_size", "learning_rate", "tol",
          "early_stopping", "validation_fraction", "quantiles", "output_matrix", "output_matrix_params",
          "memory_budget", "dtype", "backend", "interval", "interval_method", "cqr_score")
_LISTS = ("target", "columns", "drop", "column_types")


class TableModel(BaseEstimator):
    """The automatic model of ``skframe fit``: a table in, every decision taken from the data and reported.

    The estimators (:class:`~skframe.models.SketchedKernelRidge`, ...) keep explicit defaults (``lam=1e-3``, a
    fixed gamma, no calibration); this object chooses them as the command line does: the task from the targets,
    ``lam="auto"``, ``gamma="auto"`` for the Gaussian and Laplacian kernels, ``scale="auto"``, the logistic loss
    with ``calibration="lapse"`` for two classes, and metrics on ``holdout`` rows.

    Parameters
    ----------
    task : {"auto", "regression", "classification", "structured"}, default="auto"
    target, columns, drop : str or list of str, optional
        Target, feature and left-out columns by name (or position from 1), as ``--target``, ``--columns``,
        ``--drop``.
    targets : int, default=1
        Trailing target columns when no ``target`` is named.
    column_types : list of str, optional
        ``NAME=numeric|categorical|date|text`` overrides of the detected types.
    delimiter, format : str, optional
        How a table file is read (default: detected).
    missing : {"error", "zero", "mean", "drop"}, default="error"
    scale : {"auto", "none", "standard"}, default="auto"
    holdout : float, default=0.2
        Share of the rows held out for the report when no ``test`` data is given (the model kept is fitted on
        every row).
    seed : int, default=0
    kernel, kernel_params, sketch, sketch_size, sketch_params, lam, loss, loss_params, solver, solver_params
        As the options of ``skframe fit`` (``lam=None``: chosen from the data).
    calibration : {None, "none", "sigmoid", "lapse"}, default=None
        None: ``"lapse"`` for the logistic loss.
    interval : float, optional
        Fit prediction intervals at this coverage level (``interval_method``: cv+ by default).

    The other parameters (``cv_order``, ``lam_criterion``, ``max_classes``, ``fit_intercept``, ``class_weight``,
    ``epochs``, ``batch_size``, ``learning_rate``, ``tol``, ``early_stopping``, ``validation_fraction``, ``quantiles``,
    ``output_matrix``, ``output_matrix_params``, ``memory_budget``, ``dtype``, ``backend``, ``cqr_score``) are
    the options of the same names.

    Attributes
    ----------
    estimator_ : estimator
        The fitted skframe estimator (on encoded, scaled features).
    state_ : dict
        What the model file keeps beside it: encoding, layout, scaler, class labels, intervals (data).
    report_ : dict
        The fit report, as ``skframe fit --json`` prints it.
    decisions_ : dict
        Each decision and its reason: task, target, scale, loss, calibration, lam, gamma, evaluation.
    task_ : str
    classes_ : ndarray
        The class labels of a classifier.

    The estimator's other fitted attributes (``n_features_in_``, ``sketch_info_``, ``coef_``, ...) are read
    through; they describe the encoded, scaled features. A model loaded from a file has ``report_ = None`` (its
    ``decisions_`` are kept in the file).

    Examples
    --------
    >>> import skframe
    >>> model = skframe.fit_table("loans.csv", target="default")          # doctest: +SKIP
    >>> model.decisions_["task"]                                          # doctest: +SKIP
    >>> model.predict(new_rows)                                           # doctest: +SKIP
    """

    def __init__(self, *, task="auto", target=None, targets=1, columns=None, drop=None, column_types=None,
                 delimiter=None, format=None, missing="error", scale="auto", holdout=0.2, seed=0, cv_order="shuffle",
                 max_classes=50, kernel="gaussian", kernel_params=None, sketch="auto", sketch_size="auto",
                 sketch_params=None, fit_intercept=None, lam=None, loss="square", loss_params=None, class_weight=None,
                 calibration=None, lam_criterion="auto", solver=None, solver_params=None, epochs=None, batch_size=None,
                 learning_rate=None, tol=None, early_stopping=False, validation_fraction=0.1, quantiles=None,
                 output_matrix=None, output_matrix_params=None, memory_budget=None, dtype="auto", backend="auto",
                 interval=None, interval_method=None, cqr_score=None):
        values = locals()
        for name in PARAMS:
            setattr(self, name, values[name])

    # ------------------------------------------------------------------ fitting
    def _options(self, data, y, test):
        params = self.get_params()
        for name in _LISTS:
            if isinstance(params[name], str):
                params[name] = [params[name]]
        for name in ("kernel", "sketch", "sketch_size", "loss", "output_matrix"):
            params[name] = params[name] if params[name] is not None else TableOptions.__dataclass_fields__[name].default
        params = {k: (dict(v) if isinstance(v, dict) else ({} if v is None and k.endswith("_params") else v))
                  for k, v in params.items()}
        data, params = _with_y(data, y, params)
        if not isinstance(data, (str, os.PathLike)) and not is_frame(data) and not isinstance(data, tuple):
            data = (data, y)  # array features and their targets
        opts = TableOptions(json=True, **{k: v for k, v in params.items()})
        _set_input(opts, data, "train")
        if test is not None:
            _set_input(opts, _with_y(test[0], test[1], params)[0] if isinstance(test, tuple) and is_frame(test[0])
                       else test, "test")
        opts.lam = parse_lam(opts.lam)
        opts.auto_gamma = True  # gamma="auto" for the Gaussian and Laplacian kernels when no gamma is given
        return opts

    def fit(self, data, y=None, *, test=None):
        """Read ``data``, take every decision, fit, evaluate.

        Parameters
        ----------
        data : pandas.DataFrame, str or path-like, or array-like of shape (n_samples, n_features)
            A table (its target column(s) in it, named by ``target`` or last), a table file (CSV, Parquet,
            Arrow, ...), or the features (with ``y``).
        y : array-like, optional
            The targets, for array features (or a column added to a DataFrame, named ``y.name`` or ``"y"``).
        test : like ``data`` (a tuple ``(X, y)`` for arrays), optional
            Test data, scored in the report instead of ``holdout`` rows.

        Returns
        -------
        self
        """
        opts = self._options(data, y, test)
        with contextlib.ExitStack() as stack:
            prep = prepare(opts, stack)
            report = fit_prepared(prep, opts)
        self.estimator_ = prep.model
        self.state_ = table_state(prep.model, prep, opts)
        self.report_ = to_jsonable(report)
        self.decisions_ = decisions(self.report_)
        self.state_["decisions"] = self.decisions_
        self._set_fitted()
        return self

    def _set_fitted(self):
        self.task_ = saved(self.state_, "task", "regression")
        if hasattr(self.estimator_, "classes_"):
            self.classes_ = self.estimator_.classes_
        self.decisions_ = saved(self.state_, "decisions", getattr(self, "decisions_", None))

    # ------------------------------------------------------------------ prediction
    def _features(self, data):
        """Encoded, unscaled features of new data, read as the model's training data was."""
        check_is_fitted(self, "estimator_")
        est, extra = self.estimator_, self.state_
        layout = Layout.of_model(est, extra)
        missing, fmt = fit_settings(extra, None, None)
        if missing == "drop":
            missing = "error"  # dropping rows would misalign the predictions with the data
        if isinstance(data, (str, os.PathLike)):
            if saved(extra, "encoding"):
                X, _, _ = read_saved(extra, layout, data, with_targets=False, missing=missing, fmt=fmt)
            else:
                cols, targets = read_plan_for(layout, data, fmt, with_targets=False, targets=None, columns=None,
                                              drop=None, target=None)
                X, _ = read_file(data, targets, missing, fmt, extra, columns=cols, with_targets=False)
        elif saved(extra, "encoding"):
            table = frame_table(data) if is_frame(data) else array_table(data, layout.feature_names)
            X, _, _ = read_saved(extra, layout, "the data", with_targets=False, missing=missing, table=table)
        else:
            if is_frame(data) and layout.feature_names:
                data = data[[str(n) for n in layout.feature_names]]
            X = np.asarray(data, dtype=np.float64)
            X = X.reshape(-1, 1) if X.ndim == 1 else X
        check_features(est, X, "the data", 0)
        return X

    def _plain(self):
        """The estimator without its feature names for the time of a call (it takes the encoded arrays)."""
        est = self.estimator_

        @contextlib.contextmanager
        def plain():
            names = est.__dict__.pop("feature_names_in_", None)
            try:
                yield est
            finally:
                if names is not None:
                    est.feature_names_in_ = names

        return plain()

    def predict(self, data):
        """Predictions for new rows with the raw columns: class labels (as fitted) or values; values far outside
        the training targets' range are counted and listed in an ``ExtrapolationWarning`` (never clipped)."""
        return self.extrapolation_report(data, warn=True)["predictions"]

    def extrapolation_report(self, data, *, warn=False):
        """``predict(data)`` as ``"predictions"``, with the rows predicted outside the training targets' range
        widened by half its span (``count``, ``rows`` from 0, ``values``, ``rule``; ``count`` None for a classifier):
        :func:`skframe.models._extrapolation.flag_predictions`."""
        X = self._features(data)
        with self._plain() as est:
            P = predict_task(est, self.state_, X)
        flags = flag_predictions(est, P, warn=warn, stacklevel=4) or {"count": None, "rows": [], "values": [],
                                                                       "rule": None}
        return {**{k: v for k, v in flags.items() if k != "mask"}, "predictions": P}

    def predict_proba(self, data):
        """Class probabilities (columns in the order of ``classes_``) of a classifier with a probabilistic loss."""
        X = self._features(data)
        with self._plain() as est:
            if not hasattr(est, "predict_proba"):
                raise InvalidParameterError(f"predict_proba needs a classifier whose loss gives probabilities; this "
                                            f"model is {type(est).__name__} (task={self.task_!r})")
            return est.predict_proba(apply_scaler(X, self.state_))

    def decision_function(self, data):
        """The estimator's decision values (scores of a classifier, of a structured model's outputs) for new rows
        with the raw columns."""
        X = self._features(data)
        with self._plain() as est:
            return est.decision_function(apply_scaler(X, self.state_))

    def __getattr__(self, name):
        """A fitted attribute the estimator has and this object does not (``n_features_in_``, ``sketch_info_``,
        ``coef_``, ...): the estimator's, which describes the encoded, scaled features."""
        if name.startswith("__") or not name.endswith("_") or name in ("estimator_", "state_"):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        estimator = self.__dict__.get("estimator_")
        if estimator is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return getattr(estimator, name)

    def score(self, data, y):
        """scikit-learn's score of predictions for ``data`` against ``y``: the accuracy of a classifier (the
        share of label sets predicted exactly, for a multi-label model), else R² averaged over the targets."""
        from sklearn.metrics import accuracy_score, r2_score  # lazy: scikit-learn costs ~0.6 s at start-up

        pred = self.predict(data)
        if hasattr(self, "classes_") or self.task_ == "structured":
            return float(accuracy_score(np.asarray(y), pred))
        return float(r2_score(np.asarray(y, dtype=np.float64), pred))

    def predict_interval(self, data, level=None):
        """``(lower, upper)``, each of shape (n_samples, n_targets): the prediction intervals fitted with
        ``interval`` (at that level, or at ``level``)."""
        state = saved(self.state_, "interval")
        if state is None:
            raise InvalidParameterError("this model has no prediction intervals; fit it with interval=0.9 "
                                        "(skframe fit ... --interval 0.9)")
        X = self._features(data)
        with self._plain() as est:
            return interval_bounds(state, est, apply_scaler(X, self.state_), level)

    # ------------------------------------------------------------------ files
    def save(self, path):
        """Save to ``path``: the file ``skframe fit --model-out`` writes (no pickle); ``skframe predict`` and
        ``evaluate`` use it, :func:`skframe.load` reads it back as a TableModel."""
        check_is_fitted(self, "estimator_")
        state = dict(self.state_, options=_plain_params(self.get_params()))
        save_state(self.estimator_, state, path)
        return str(path)

    @classmethod
    def from_saved(cls, estimator, state):
        """A fitted TableModel from a model file's estimator and state (:func:`load`)."""
        options = saved(state, "options", {})
        model = cls(**{k: v for k, v in options.items() if k in PARAMS})
        model.estimator_, model.state_ = estimator, {k: v for k, v in state.items() if k != "options"}
        model.report_ = None
        model._set_fitted()
        return model


def options_state(opts):
    """The TableModel parameters a fit's options hold, as plain data (kept in the model file)."""
    return _plain_params({name: getattr(opts, name, None) for name in PARAMS})


def save_state(estimator, state, path):
    """Write ``estimator`` and the table ``state`` beside it to ``path`` (atomically; no pickle)."""
    save(estimator, path, extra=state)


def load(path):
    """A model file as an object: a :class:`TableModel` for a file written by ``skframe fit --model-out`` or
    :meth:`TableModel.save`, else the estimator :func:`skframe.save` wrote."""
    estimator, state = load_model(path)
    if isinstance(state, dict) and "task" in state:
        return TableModel.from_saved(estimator, state)
    return estimator


def from_bundle(estimator, state, path):
    """The TableModel of a model file already read (``(estimator, state)`` of
    :func:`skframe.persistence.load_bundle`), its table state checked as :func:`load` checks it."""
    check_saved(estimator, state, path)
    return TableModel.from_saved(estimator, state)


def fit_table(data, target=None, y=None, *, test=None, **options):
    """Fit the automatic model on a table: ``TableModel(target=target, **options).fit(data, y, test=test)``."""
    return TableModel(target=target, **options).fit(data, y, test=test)


def decisions(report):
    """Each decision of a fit report, with its reason: ``{name: {"value": ..., "reason": ...}}``."""
    data, params = report.get("data") or {}, (report.get("model") or {}).get("params") or {}
    chosen = report.get("chosen") or {}
    out = {"task": {"value": report.get("task"), "reason": data.get("task_reason")},
           "target": data.get("target"),
           "scale": data.get("scale"),
           "loss": {"value": params.get("loss", "square")},
           "calibration": {"value": params.get("calibration"),
                           "reason": f"{AUTO_CALIBRATION} for a loss that can be calibrated"
                           if params.get("calibration") == AUTO_CALIBRATION else None},
           "evaluated_on": {"value": report.get("evaluated_on"), "reason": data.get("holdout")}}
    for key in ("lam", "gamma", "length_scale"):
        if key in chosen:
            out[key] = {k: chosen[key].get(k) for k in ("chosen", "criterion", "value", "reason")}
    if "lam" not in out:
        out["lam"] = {"value": params.get("lam"), "reason": "given"}
    if report.get("interval"):
        out["interval"] = {k: report["interval"].get(k) for k in ("level", "method", "coverage", "mean_width")}
    return out


def _plain_params(params):
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in params.items()
            if v is None or isinstance(v, (str, int, float, bool, list, tuple, dict))}


def _with_y(data, y, params):
    """A DataFrame with ``y`` as its target column (named by ``y.name`` or ``"y"``); arrays as they are."""
    if y is None or not is_frame(data):
        return data, params
    name = str(getattr(y, "name", None) or "y")
    params = dict(params, target=[name])
    return data.assign(**{name: np.asarray(y)}), params


def _set_input(opts, data, which):
    """Put ``data`` in the options: a path as the file to read, a DataFrame as a table, arrays as arrays."""
    if isinstance(data, (str, os.PathLike)):
        setattr(opts, which, str(data))
    elif is_frame(data):
        setattr(opts, which, "DataFrame")
        setattr(opts, f"{which}_table", frame_table(data))
    else:
        X, Y = data if isinstance(data, tuple) else (data, None)
        setattr(opts, which, "arrays")
        setattr(opts, f"{which}_arrays", _arrays(X, Y))


def _arrays(X, Y):
    X = np.asarray(X)
    X = X.reshape(-1, 1) if X.ndim == 1 else X
    if Y is None:
        raise InvalidParameterError("TableModel.fit(X, y): array features need their targets y (or give a table "
                                    "with its target column)")
    Y = np.asarray(Y)
    return np.asarray(X, dtype=np.float64), (Y.reshape(-1, 1) if Y.ndim == 1 else Y)
