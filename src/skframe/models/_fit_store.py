"""The fitted attributes a :class:`skframe.models._fit.Fit` stores on its estimator once it is solved."""

from __future__ import annotations

import copy

import numpy as np

from skframe.models._sizes import effective_dimension, saturation_spectrum

__all__ = ["store_fitted"]


def store_fitted(fit, est, lams, results, coefs, attrs, solve_seconds):
    """Set the fitted attributes of ``est`` from the solutions ``results`` of ``lams`` (the last one is the model's),
    their coefficients ``coefs``, the expansion ``attrs`` of the last and the seconds of the solves."""
    rep, res = fit.represent(), results[-1]
    for key, value in attrs.items():
        setattr(est, key, value)
    est.weights_, est.intercept_ = res.W, fit.offset
    est.kernel_, est.kernel_spec_ = fit.kernel, fit.kernel_spec
    est.sketch_spec_ = fit.sketch_spec
    est.sketch_info_ = dict(rep.info, **fit.size_info)
    if rep.kind in ("sketch", "feature_map"):  # how much of the sketch the fitted lam uses
        if fit._spectrum is None:  # the features' covariance spectrum, once per fit (a lam path reuses it)
            fit._spectrum = (saturation_spectrum(rep.Z, fit.sample_weight),)
        if fit._spectrum[0] is not None:
            est.sketch_info_.update(zip(("effective_dimension", "saturation"), effective_dimension(
                None, lams[-1], spectrum=fit._spectrum[0]) or ()))
    # "in-memory" features, "streamed" (recomputed each pass) or "accumulated" (square loss: m x m sums only)
    est.representation_ = est.sketch_info_.get("representation", "in-memory")
    plan = fit.plan
    if fit._plan_dict is None:  # the plan as JSON types (saved with the model), once per fit
        fit._plan_dict = plan.to_dict()
    est.execution_ = dict(fit._plan_dict, **{k: rep.info[k] for k in ("chunk_rows", "products")
                                              if k in rep.info and plan.streams})
    if plan.streams and plan.loss == "iterative":  # the rank r <= m the features were sized with
        est.execution_["keep_features"] = est.representation_ == "in-memory"
    est.lam_path_ = np.asarray(lams)
    est.coef_path_ = coefs if len(lams) > 1 else None
    est.objective_path_ = [float(r.history[-1]) if r.history else None for r in results] \
        if len(lams) > 1 else None
    est.history_ = [float(v) for v in res.history]
    est.stop_reason_ = res.stop_reason
    est.n_iter_ = int(res.n_iter)
    est.solver_info_ = dict(res.info)
    est.n_outputs_ = fit.Y.shape[1]
    # what lam="auto" / gamma="auto" chose, the criterion and its curve
    fit.record_choice(est, copy.deepcopy(fit.auto_info) if fit.auto_info else None)
    est.solve_seconds_ = solve_seconds
    est.fit_seconds_ = fit.elapsed()
    for key, value in (fit.recipe.attributes or {}).items():
        setattr(est, key, value)
    if fit.recipe.finish is not None:
        fit.recipe.finish(fit, est, res)
