"""Sketch-size selection for output kernel regression.

Follows El Ahmad, "Learning Deep Kernel Networks: Application to Efficient and Robust
Structured Prediction", PhD thesis, Institut Polytechnique de Paris 2024, §5.3.

Three routines, combined by :func:`select_sketch_sizes`:

:func:`approximate_leverage_scores` (:mod:`skframe.core.leverage`)
    Ridge leverage scores ``l_i(lam) = [K (K + n lam I)^{-1}]_ii`` approximated from a
    uniform Nyström factor of ``n_s`` columns (Alaoui & Mahoney 2015). Their sum is the
    effective dimension ``d_eff(lam)``, a first estimate of the sketch size needed for
    the input (``C_X``) or output (``C_Y``) covariance; the sorted scores are the curve.
:func:`perfect_h_curve`
    "Perfect h" (PhD thesis eq. 5.20): replace the learned surrogate by the projection of the
    true output onto the sketched output basis, ``h(y) = P~_Y psi(y)``, decode it against
    the candidates and score the result on validation outputs, for increasing ``m_Y``
    until the score stops improving or decoding exceeds an inference time budget.
:func:`input_size_curve`
    SIOKR's validation surrogate MSE (output kernel trick) for increasing ``m_X``
    until it converges or fitting exceeds a training time budget.

The figure of a selection is drawn by :func:`skframe.model_selection.plots.plot_selection`.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import NamedTuple

import numpy as np

from skframe.contract.collections import n_items, take
from skframe.contract.protocols import kernel_diag, kernel_prepare
from skframe.contract.registry import get_kernel, get_sketch
from skframe.core.leverage import approximate_leverage_scores, effective_dimension
from skframe.core.output_basis import SketchedOutputBasis, unique_rows
from skframe.core.sketching import draw_sketch
from skframe.exceptions import InvalidParameterError
from skframe.metrics import example_based_f1
from skframe.models import OutputKernelRegressor
from skframe.models._folds import check_cv_order
from skframe.validation import check_seed

# the clock the time budgets are measured with (replaced by a fake one in tests)
_clock = time.perf_counter

__all__ = [
    "approximate_leverage_scores",
    "effective_dimension",
    "perfect_h_curve",
    "input_size_curve",
    "select_sketch_sizes",
    "SelectionResult",
    "size_grid",
]


def _f1(Y_true, Y_pred):
    return float(example_based_f1(Y_true, Y_pred))


def perfect_h_curve(kernel, Y_train, Y_val, sizes, *, sketch="subsample", sketch_params=None, candidates=None,
                    n_repeats=1, time_budget=None, tol=1e-3, patience=None, random_state=None, metric="decode"):
    """Perfect-h validation score as a function of the output sketch size m_Y (PhD thesis cited above, eq. 5.20).

    For each ``m_Y``: draw R_Y, build the sketched output basis, decode
    ``psi~(y_val)`` against ``psi~(c) - k(c, c)/2`` over the candidates, and score the
    decoded outputs (example-based F1 for binary outputs, else minus the MSE).

    Parameters
    ----------
    kernel : kernel object
    Y_train, Y_val : ndarrays of shape (n, d), (n_val, d)
    sizes : sequence of int
        Increasing m_Y values.
    sketch : str, default "subsample"
    sketch_params : dict, optional
    candidates : ndarray, optional
        Default: distinct training outputs.
    n_repeats : int
        Draws averaged per size.
    time_budget : float, optional
        Stop once one size's decoding (inference) time exceeds it.
    tol : float
        Relative tolerance: a size within ``tol`` of the best score is good enough.
    patience : int, optional
        Stop (converged) once this many consecutive sizes improved the best score by no
        more than ``tol`` (relative); None evaluates every size.
    metric : {"decode", "surrogate"}, default "decode"
        ``"decode"``: decode and score the decoded outputs as above. ``"surrogate"``: no
        decoding; the score is minus the mean squared distance in the output RKHS between
        ``psi(y_val)`` and its projection, ``k(y, y) - ||psi~(y)||^2`` (for a linear output
        kernel, the squared error of the projected outputs, as in the thesis's synthetic
        least-squares study of DSOKR, §5.3.1). Suited to real-valued outputs.

    Returns
    -------
    dict with ``sizes``, ``scores``, ``seconds``, ``chosen`` (smallest size within ``tol``
    of the best score) and ``stopped`` (why the loop ended).
    """
    if metric not in ("decode", "surrogate"):
        raise InvalidParameterError(f"metric={metric!r}; use 'decode' or 'surrogate'")
    rng = np.random.default_rng(check_seed(random_state))
    loop = _CurveLoop(sizes, (sketch, sketch_params, get_sketch), n_repeats, time_budget, tol, patience, rng)
    if metric == "surrogate":
        return _projection_curve(kernel, Y_train, Y_val, loop)
    C = unique_rows(Y_train)[0] if candidates is None else candidates
    Cd = C.toarray() if hasattr(C, "toarray") else np.asarray(C)
    Yv = Y_val.toarray() if hasattr(Y_val, "toarray") else np.asarray(Y_val)
    binary = np.isin(Yv, (0.0, 1.0)).all() and np.isin(Cd, (0.0, 1.0)).all()

    def decode_score(basis):
        t0 = _clock()
        Ev, Ec = basis.embed(Y_val), basis.embed(C)
        S = Ev @ Ec.T
        if not basis.normalized:
            S -= 0.5 * basis.self_kernel(C)[None, :]
        pred = Cd[np.argmax(S, axis=1)]
        seconds = _clock() - t0
        return (_f1(Yv, pred) if binary else -float(np.mean((Yv - pred) ** 2))), seconds

    out = _basis_curve(kernel, Y_train, loop, decode_score,
                       {"sizes": [], "scores": [], "seconds": [], "stopped": "all sizes"})
    out["metric"] = "example_based_f1" if binary else "-mse"
    return out


class _CurveLoop(NamedTuple):
    """The loop of a Perfect-h curve: the sizes, the sketch ``(name or object, params, get_sketch)``, repeats,
    budget, tolerance, patience and random stream."""

    sizes: object
    sketch: tuple
    n_repeats: int
    time_budget: object
    tol: float
    patience: object
    rng: object


def _projection_curve(kernel, Y_train, Y_val, loop):
    """Perfect h without decoding: minus the mean ``k(y, y) - ||psi~(y)||^2`` over the validation outputs."""
    kyy = kernel_diag(kernel, Y_val)

    def projection_score(basis):
        t0 = _clock()
        Ev = basis.embed(Y_val)
        seconds = _clock() - t0
        return -float(np.mean(np.clip(kyy - np.einsum("ij,ij->i", Ev, Ev), 0.0, None))), seconds

    return _basis_curve(kernel, Y_train, loop, projection_score,
                        {"sizes": [], "scores": [], "seconds": [], "stopped": "all sizes", "metric": "-surrogate_mse"})


def _basis_curve(kernel, Y_train, loop, score, out):
    """Perfect h's loop: for each m_Y, ``n_repeats`` sketched output bases, each scored by ``score(basis)``.

    ``score`` returns ``(value, inference seconds)``; the values and times are recorded in ``out``
    until the curve stops improving or the time budget is exceeded, and ``out["chosen"]`` is set.
    """
    n = Y_train.shape[0]
    (sketch, sketch_params, get_sketch), rng = loop.sketch, loop.rng
    time_budget, tol, patience = loop.time_budget, loop.tol, loop.patience
    for m in loop.sizes:
        m = int(m)
        if m > n:
            out["stopped"] = f"m_Y={m} > n={n}"
            break
        sk = get_sketch(sketch, size=m, **dict(sketch_params or {})) if isinstance(sketch, str) else sketch
        scores, secs = [], []
        for _ in range(loop.n_repeats):
            R = draw_sketch(sk, n, rng, X=Y_train, kernel=kernel)
            basis, _ = SketchedOutputBasis.fit(kernel, Y_train, R)
            value, seconds = score(basis)
            scores.append(value)
            secs.append(seconds)
        if _record(out, m, scores, secs, "inference", time_budget, tol, patience):
            break
    out["chosen"] = _chosen(out, tol, time_budget)
    return out


def input_size_curve(X_train, Y_train, X_val, Y_val, sizes, *, input_kernel, output_kernel, lam,
                     sketch="subsample", sketch_params=None, n_repeats=1, time_budget=None, tol=1e-3,
                     patience=None, random_state=None):
    """SIOKR validation score (minus the surrogate MSE) as a function of m_X.

    Stops once a fit exceeds ``time_budget`` seconds, or once converged (see ``patience`` in
    :func:`perfect_h_curve`). Returns the same dict as :func:`perfect_h_curve` (``scores``
    are ``-surrogate MSE``).
    """
    n = n_items(X_train)
    seeds = np.random.default_rng(check_seed(random_state)).integers(0, 2**31 - 1, size=(len(sizes), n_repeats))
    out = {"sizes": [], "scores": [], "seconds": [], "stopped": "all sizes", "metric": "-surrogate_mse"}
    for i, m in enumerate(sizes):
        m = int(m)
        if m > n:
            out["stopped"] = f"m_X={m} > n={n}"
            break
        scores, secs = [], []
        for r in range(n_repeats):
            model = OutputKernelRegressor(input_kernel, output_kernel=output_kernel, input_sketch=sketch,
                                          input_sketch_size=m, input_sketch_params=sketch_params, lam=lam,
                                          random_state=int(seeds[i, r]))
            t0 = _clock()
            model.fit(X_train, Y_train)
            secs.append(_clock() - t0)
            scores.append(model.score(X_val, Y_val))
        if _record(out, m, scores, secs, "fit", time_budget, tol, patience):
            break
    out["chosen"] = _chosen(out, tol, time_budget)
    return out


def _record(out, m, scores, secs, what, time_budget, tol, patience):
    """Append one size's mean score and time to a curve; return True (and say why) when it must stop."""
    out["sizes"].append(m)
    out["scores"].append(float(np.mean(scores)))
    out["seconds"].append(float(np.mean(secs)))
    if time_budget is not None and out["seconds"][-1] > time_budget:
        out["stopped"] = f"{what} time {out['seconds'][-1]:.3g}s > budget {time_budget}s"
        return True
    if _converged(out["scores"], tol, patience):
        out["stopped"] = f"converged: {patience} sizes without a relative gain above tol={tol}"
        return True
    return False


def _converged(scores, tol, patience):
    """True when the last ``patience`` scores did not beat the earlier best by more than ``tol`` (relative)."""
    if not patience or len(scores) <= patience:
        return False
    before = max(scores[:-patience])
    return max(scores[-patience:]) <= before + tol * max(abs(before), 1e-12)


def size_grid(n, start=10, factor=1.5):
    """Increasing sketch sizes ``start, start*factor, ...`` up to ``n`` (n included)."""
    sizes, m = [], float(start)
    while m < n:
        sizes.append(int(round(m)))
        m *= factor
    sizes.append(int(n))
    return sorted(set(sizes))


def _chosen(curve, tol, time_budget=None):
    """The smallest size within ``tol`` (relative) of the best score among the sizes within the time budget.

    A size whose time exceeded the budget (the one that stopped the curve) is never
    chosen; when even the first size exceeded it, that smallest size is returned and
    ``curve["within_budget"]`` is False.
    """
    if not curve["scores"]:
        return None
    s = np.asarray(curve["scores"])
    ok_time = np.ones(s.size, dtype=bool)
    if time_budget is not None:
        ok_time = np.asarray(curve["seconds"]) <= time_budget
    curve["within_budget"] = bool(ok_time.any())
    if not ok_time.any():
        return int(curve["sizes"][0])
    best = s[ok_time].max()
    ok = np.flatnonzero(ok_time & (s >= best - tol * max(abs(best), 1e-12)))
    return int(curve["sizes"][ok[0]])


@dataclass
class SelectionResult:
    """Outcome of :func:`select_sketch_sizes` (JSON-serialisable with :meth:`as_dict`)."""

    m_x: int | None
    m_y: int | None
    d_eff_x: float
    d_eff_y: float
    leverage_x: list = field(default_factory=list)
    leverage_y: list = field(default_factory=list)
    input_curve: dict = field(default_factory=dict)
    output_curve: dict = field(default_factory=dict)
    validation: str = ""  # which rows were held out for the curves

    def as_dict(self):
        return asdict(self)


def select_sketch_sizes(X, Y, *, input_kernel, output_kernel, lam, sizes_x=None, sizes_y=None,
                        input_sketch="subsample", output_sketch="subsample", val_fraction=0.2,
                        fit_budget=None, inference_budget=None, n_repeats=1, n_leverage=None, tol=1e-3,
                        random_state=0, model="sisokr", perfect_h_metric="decode", cv_order="shuffle"):
    """Choose m_X and m_Y: leverage scores for the range, then SIOKR and Perfect-h curves.

    With ``model="dsokr"`` only m_Y is chosen (the input is a neural network): the output
    leverage scores and the Perfect-h curve; ``X`` and ``input_kernel`` are not used (X may be None).

    Parameters
    ----------
    X, Y : training data (a validation part of ``val_fraction`` is held out)
    input_kernel, output_kernel : kernel objects (or names)
    lam : float
    sizes_x, sizes_y : sequences of int, optional
        Default: sizes growing geometrically from 10 (:func:`size_grid`) until the score
        converges (two sizes without a relative gain above ``tol``) or a budget is reached.
    fit_budget, inference_budget : float, optional
        Time budgets (seconds) that stop the m_X and m_Y curves.
    model : {"sisokr", "dsokr"}, default "sisokr"
    perfect_h_metric : {"decode", "surrogate"}, default "decode"
        See ``metric`` in :func:`perfect_h_curve`.
    cv_order : {"shuffle", "keep"}, default "shuffle"
        The validation rows: a random ``val_fraction`` of the rows (drawn from ``random_state``), or with
        ``"keep"`` the last ``val_fraction`` of them in the given order (rows ordered in time).

    Returns
    -------
    SelectionResult
    """
    if model not in ("sisokr", "dsokr"):
        raise InvalidParameterError(f"model={model!r}; use 'sisokr' or 'dsokr'")
    keep = check_cv_order(cv_order) == "keep"
    if model == "dsokr":
        return _select_output_size(Y, output_kernel, lam, (sizes_y, output_sketch, val_fraction, n_leverage), {
            "time_budget": inference_budget, "n_repeats": n_repeats, "tol": tol, "random_state": random_state,
            "metric": perfect_h_metric}, keep)

    kx = get_kernel(input_kernel) if isinstance(input_kernel, str) else input_kernel
    ky = get_kernel(output_kernel) if isinstance(output_kernel, str) else output_kernel
    rng = np.random.default_rng(check_seed(random_state))
    tr, va = _holdout(n_items(X), val_fraction, rng, keep)
    Xtr, Xva, Ytr, Yva = take(X, tr), take(X, va), Y[tr], Y[va]
    kx, ky = kernel_prepare(kx, Xtr), kernel_prepare(ky, Ytr)  # e.g. gamma='scale', set on the training part
    lev_x = approximate_leverage_scores(kx, Xtr, lam, n_samples=n_leverage, random_state=rng)
    lev_y = approximate_leverage_scores(ky, Ytr, lam, n_samples=n_leverage, random_state=rng)
    dx, dy = effective_dimension(lev_x), effective_dimension(lev_y)

    # start small and grow until the score converges or a time budget is reached
    patience_x = None if sizes_x else 2
    patience_y = None if sizes_y else 2
    sizes_x = list(sizes_x) if sizes_x else size_grid(len(tr))
    sizes_y = list(sizes_y) if sizes_y else size_grid(len(tr))
    cx = input_size_curve(Xtr, Ytr, Xva, Yva, sizes_x, input_kernel=kx, output_kernel=ky, lam=lam,
                          sketch=input_sketch, n_repeats=n_repeats, time_budget=fit_budget, tol=tol,
                          patience=patience_x, random_state=rng)
    cy = perfect_h_curve(ky, Ytr, Yva, sizes_y, sketch=output_sketch, n_repeats=n_repeats,
                         time_budget=inference_budget, tol=tol, patience=patience_y, random_state=rng)
    top = 400
    return SelectionResult(
        m_x=cx["chosen"], m_y=cy["chosen"], d_eff_x=dx, d_eff_y=dy,
        leverage_x=np.sort(lev_x)[::-1][:top].tolist(), leverage_y=np.sort(lev_y)[::-1][:top].tolist(),
        input_curve=cx, output_curve=cy, validation=_holdout_words(len(va), keep, random_state),
    )


def _holdout(n, val_fraction, rng, keep=False):
    """Sorted training and validation indices: a random ``val_fraction`` of ``range(n)`` (at least 1) held out;
    with ``keep`` the last rows (no draw from ``rng``)."""
    n_val = max(1, int(round(val_fraction * n)))
    if keep:
        return np.arange(n - n_val), np.arange(n - n_val, n)
    perm = rng.permutation(n)
    return np.sort(perm[n_val:]), np.sort(perm[:n_val])


def _holdout_words(n_val, keep, random_state):
    """How :func:`_holdout` chose the ``n_val`` validation rows, for the report."""
    if keep:
        return f"the last {n_val} rows (file order kept)"
    seed = "unseeded" if random_state is None else \
        f"seed {random_state}" if isinstance(random_state, (int, np.integer)) else "seeded by the random_state"
    return f"{n_val} rows drawn at random ({seed})"


def _select_output_size(Y, output_kernel, lam, search, curve, keep=False):
    """m_Y alone (DSOKR): output leverage scores and the Perfect-h curve on a held-out part of Y.

    ``search = (sizes_y, output_sketch, val_fraction, n_leverage)``; ``curve``: the keywords of
    :func:`perfect_h_curve` (``time_budget``, ``n_repeats``, ``tol``, ``random_state``, ``metric``)."""
    sizes_y, output_sketch, val_fraction, n_leverage = search
    ky = get_kernel(output_kernel) if isinstance(output_kernel, str) else output_kernel
    rng = np.random.default_rng(curve["random_state"])
    tr, va = _holdout(n_items(Y), val_fraction, rng, keep)
    Ytr, Yva = Y[tr], Y[va]
    ky = kernel_prepare(ky, Ytr)
    lev_y = approximate_leverage_scores(ky, Ytr, lam, n_samples=n_leverage, random_state=rng)
    patience = None if sizes_y else 2
    sizes_y = list(sizes_y) if sizes_y else size_grid(len(tr))
    cy = perfect_h_curve(ky, Ytr, Yva, sizes_y, sketch=output_sketch, n_repeats=curve["n_repeats"],
                         time_budget=curve["time_budget"], tol=curve["tol"], patience=patience, random_state=rng,
                         metric=curve["metric"])
    return SelectionResult(m_x=None, m_y=cy["chosen"], d_eff_x=float("nan"), d_eff_y=effective_dimension(lev_y),
                           leverage_y=np.sort(lev_y)[::-1][:400].tolist(), output_curve=cy,
                           validation=_holdout_words(len(va), keep, curve["random_state"]))
