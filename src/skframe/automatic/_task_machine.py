"""The Lipschitz-loss / iterative-solver / k*M task of ``skframe fit``.

``skframe fit`` dispatches here when the loss is not the square loss, the solver is
``adam`` or ``lbfgs``, ``--quantiles`` is given or an ``--output-matrix`` is chosen:

* ``--quantiles`` → :class:`skframe.models.JointQuantileRegressor` (pinball loss and the
  quantile output matrix; ``--output-matrix-param gamma=...`` sets its gamma);
* ``--loss hinge`` → :class:`skframe.models.SketchedKernelClassifier`;
* anything else → :class:`skframe.models.SketchedKernelMachine`.
"""

from __future__ import annotations

import numpy as np

from skframe.automatic._task_regression import SHARED_PARAMS, extrapolation, training_means
from skframe.automatic.classification import calibration_for, classification_metrics
from skframe.contract.registry import get_loss
from skframe.contract.tags import get_tags
from skframe.exceptions import InvalidParameterError
from skframe.metrics import accuracy, crossing_loss, pinball_loss, regression_report
from skframe.models import JointQuantileRegressor, SketchedKernelClassifier, SketchedKernelMachine
from skframe.models.machine import default_solver_name

NAME = "machine"


def _solver_params(opts, solver_name):
    """The solver's parameters: the shortcut options, then every ``--solver-param`` as given."""
    return {**_shortcut_params(opts, solver_name), **(opts.solver_params or {})}


def _shortcut_params(opts, solver_name):
    """The shortcut options (--epochs, --tol, ...) as the chosen solver's parameters."""
    given = {
        "epochs": opts.epochs,
        "batch_size": opts.batch_size,
        "learning_rate": opts.learning_rate,
        "tol": opts.tol,
    }
    given = {k: v for k, v in given.items() if v is not None}
    if solver_name == "adam":
        if opts.early_stopping:
            given["early_stopping"] = True
            given["validation_fraction"] = opts.validation_fraction
        return given
    if opts.early_stopping:
        raise InvalidParameterError(f"--early-stopping needs --solver adam (the solver is {solver_name!r})")
    if solver_name == "lbfgs":
        bad = sorted(set(given) - {"epochs", "tol"})
        if bad:
            raise InvalidParameterError(
                f"--{bad[0].replace('_', '-')} does not apply to solver 'lbfgs' "
                "(it takes --epochs as max iterations and --tol)"
            )
        out = {}
        if "epochs" in given:
            out["max_iter"] = given["epochs"]
        if "tol" in given:
            out["tol"] = given["tol"]
        return out
    if solver_name in ("dual-cd", "admm"):
        bad = sorted(set(given) - {"epochs", "tol"})
        if bad:
            raise InvalidParameterError(
                f"--{bad[0].replace('_', '-')} does not apply to solver {solver_name!r} (it takes --epochs as the "
                "iteration cap and --tol as the relative duality gap)"
            )
        cap = "max_epochs" if solver_name == "dual-cd" else "max_iter"
        return {{"epochs": cap}.get(k, k): v for k, v in given.items()}
    if solver_name == "closed-form" and given:
        opt = sorted(given)[0].replace("_", "-")
        raise InvalidParameterError(f"--{opt} does not apply to the closed-form solver; use --solver adam or lbfgs")
    return given


def _loss_name(opts):
    return (opts.loss or "square").strip().lower()


def build_estimator(opts):
    """Build the estimator the options ask for (see the module docstring)."""
    loss_name = _loss_name(opts)
    common = dict(opts.estimator_params(*SHARED_PARAMS), cv_order=getattr(opts, "cv_order", "shuffle"))
    if opts.quantiles:
        if loss_name not in ("square", "pinball"):
            raise InvalidParameterError(
                f"--quantiles fits the pinball loss; it cannot be combined with --loss {opts.loss}"
            )
        if opts.output_matrix not in (None, "quantile"):
            raise InvalidParameterError(
                "--quantiles uses the quantile output matrix; "
                f"--output-matrix {opts.output_matrix} is not allowed with it"
            )
        om = dict(opts.output_matrix_params or {})
        gamma = om.pop("gamma", 1.0)
        if om:
            raise InvalidParameterError(f"unknown --output-matrix-param {sorted(om)[0]!r} for quantiles; only gamma")
        solver = opts.solver or default_solver_name(get_loss("pinball", quantiles=list(opts.quantiles)))
        solver = solver.strip().lower()
        return JointQuantileRegressor(
            quantiles=list(opts.quantiles),
            kernel=opts.kernel,
            gamma_quantile=gamma,
            solver=solver,
            solver_params=_solver_params(opts, solver) or None,
            **common,
        )
    loss = get_loss(loss_name, **(opts.loss_params or {}))  # validates name and params early
    solver = (opts.solver or default_solver_name(loss)).strip().lower()
    loss_tags = get_tags(loss, "loss")
    if solver == "lbfgs" and not loss_tags.smooth:
        raise InvalidParameterError(
            f"solver 'lbfgs' needs a smooth loss; {loss_name!r} is not smooth, use --solver adam"
        )
    if solver == "closed-form" and not loss_tags.square:
        raise InvalidParameterError(f"solver 'closed-form' only handles the square loss, not {loss_name!r}")
    if loss_tags.classification:
        if opts.output_matrix is not None:
            raise InvalidParameterError(f"--output-matrix does not apply to --loss {loss_name} (classification)")
        if common.pop("fit_intercept", None) is not None:
            raise InvalidParameterError(
                f"--fit-intercept/--no-fit-intercept do not apply to --loss {loss_name} (classification)"
            )
        return SketchedKernelClassifier(
            opts.kernel,
            class_weight=getattr(opts, "class_weight", None),
            calibration=calibration_for(getattr(opts, "calibration", None), loss_name),
            max_classes=getattr(opts, "max_classes", None),  # --max-classes: refused in fit, before any work
            lam_criterion=getattr(opts, "lam_criterion", "auto"),  # --lam-criterion: how lam="auto" is scored
            loss=loss_name,
            loss_params=opts.loss_params or None,  # validated above by get_loss
            solver=solver,
            solver_params=_solver_params(opts, solver) or None,
            **common,
        )
    return SketchedKernelMachine(
        opts.kernel,
        loss=loss_name,
        loss_params=opts.loss_params or None,
        solver=solver,
        solver_params=_solver_params(opts, solver) or None,
        output_matrix=opts.output_matrix,
        output_matrix_params=opts.output_matrix_params or None,
        **common,
    )


def check_targets(opts, Y, multilabel=False):
    """Refuse, with the fix, a loss that fits one target column (hinge, quantiles) when Y has several.

    ``multilabel``: the targets are 0/1 labels (the fix then also names the multi-label task).
    """
    if len(getattr(Y, "shape", ())) < 2 or Y.shape[1] < 2:
        return
    loss_name = _loss_name(opts)
    if opts.quantiles:
        what = "--quantiles fits the quantiles of one target"
    elif get_tags(get_loss(loss_name, **(opts.loss_params or {})), "loss").classification:
        what = f"--loss {loss_name} classifies one target column"
    else:
        return
    fix = "choose it with --target NAME (or --targets 1 for the last column)"
    if multilabel:
        fix += (", or fit the 0/1 labels together as a multi-label problem: leave --loss out (--task auto) or "
                "give --task structured")
    raise InvalidParameterError(f"{what}, but the data have {Y.shape[1]} target columns; {fix}")


def predict(model, X, opts=None):
    """Predictions: values, class labels, or one column per quantile level (increasing)."""
    return model.predict(X)


def _duality_gap(model):
    """Primal and dual objectives and the gap reported by the solver (None when it gives none)."""
    info = getattr(model, "solver_info_", None) or {}
    return {k: info[k] for k in ("primal", "dual", "gap", "relative_gap") if k in info} or None


def metrics(model, X_test, Y_test, Y_pred, opts=None):
    """MSE, MAE, R² (+ ARRMSE/RRMSE for several targets); accuracy for hinge; pinball and crossing for quantiles.

    For joint quantile models the regression metrics are those of the level closest to 0.5,
    and ``crossing`` is ``mean_i sum_j max(0, q_ij - q_i,j+1)`` over levels in increasing
    order (see :func:`skframe.metrics.crossing_loss`).
    """
    if isinstance(model, JointQuantileRegressor):
        y = np.asarray(Y_test, dtype=np.float64).reshape(-1)
        q = model.quantiles_
        j = int(np.argmin(np.abs(q - 0.5)))
        rep = regression_report(y, Y_pred[:, j])
        return {
            "pinball": pinball_loss(y, Y_pred, q),
            "crossing": crossing_loss(Y_pred, q),
            "quantiles": q.tolist(),
            "median_level": float(q[j]),
            "mse": rep["mse"],
            "mae": rep["mae"],
            "r2": rep["r2"],
            "n_samples": rep["n_samples"],
            "stop_reason": model.stop_reason_,
            "duality_gap": _duality_gap(model),
        }
    if isinstance(model, SketchedKernelClassifier):
        y = np.asarray(Y_test).reshape(-1)
        out = {"accuracy": accuracy(y, Y_pred), "n_samples": int(y.shape[0]), "classes": model.classes_.tolist(),
               "stop_reason": model.stop_reason_, "duality_gap": _duality_gap(model)}
        out.update(classification_metrics(model, X_test, y, Y_pred))  # balanced accuracy, log-loss, ROC AUC
        try:
            rep = regression_report(y.astype(np.float64), np.asarray(Y_pred, dtype=np.float64))
            out.update({"mse": rep["mse"], "mae": rep["mae"], "r2": rep["r2"]})
        except (TypeError, ValueError):  # non-numeric labels
            pass
        return out
    rep = regression_report(Y_test, Y_pred, y_train=training_means(opts))
    rep["stop_reason"] = getattr(model, "stop_reason_", None)
    rep["n_iter"] = getattr(model, "n_iter_", None)
    rep["duality_gap"] = _duality_gap(model)
    flags = extrapolation(model, Y_pred)  # far outside the training targets' range, as the square loss's report
    if flags is not None:
        rep["extrapolation"] = flags
    return rep
