"""What ``lam="auto"`` and ``gamma="auto"`` chose, for ``skframe fit``'s report: one line each, with the reason."""

from __future__ import annotations

__all__ = ["chosen_info", "training_info", "chosen_lines", "default_auto_gamma", "AUTO_GAMMA_KERNELS"]

_AUTO_KEYS = ("length_scale", "gamma", "lam")
#: the kernels whose ``gamma`` ``skframe fit`` chooses from the data when ``--kernel-param gamma=...`` is not given
AUTO_GAMMA_KERNELS = ("gaussian", "rbf", "laplacian")


def default_auto_gamma(opts, X):
    """``skframe fit`` on a numeric table, without a given ``gamma``: ``gamma="auto"`` for the kernels of
    :data:`AUTO_GAMMA_KERNELS` (not on a Dask cluster, where the probe fits would move rows to the client)."""
    if opts.dask_scheduler is not None or opts.dask_local is not None or len(getattr(X, "shape", ())) != 2:
        return
    if str(opts.kernel).lower() in AUTO_GAMMA_KERNELS and "gamma" not in (opts.kernel_params or {}):
        opts.kernel_params = {**(opts.kernel_params or {}), "gamma": "auto"}
    elif str(opts.kernel).lower() == "gaussian-ard" and "length_scale" not in (opts.kernel_params or {}):
        opts.kernel_params = {**(opts.kernel_params or {}), "length_scale": "learn"}


def chosen_info(model):
    """``{"lam": {...}, "gamma": {...}}`` from ``model.fit_info_`` (the parameters chosen from the data), or None."""
    info = getattr(model, "fit_info_", None)
    if not isinstance(info, dict):
        return None
    out = {k: info[k] for k in _AUTO_KEYS if isinstance(info.get(k), dict)}
    return out or None


def training_info(model):
    """``model.fit_info_`` when it describes a network's training (DSOKR), else None."""
    info = getattr(model, "fit_info_", None)
    return info if isinstance(info, dict) and "members" in info else None


def solver_report(model):
    """An iterative square-loss solve's outcome (``solver_info_`` with a ``residual``: the solver, its relative
    residual and rule, passes over the rows, stop reason, preconditioner and seconds), else None.

    The closed form and the machine losses' solvers are reported elsewhere (the sketch's representation; the
    duality gap in the metrics)."""
    info = getattr(model, "solver_info_", None)
    if not isinstance(info, dict) or "residual" not in info:
        return None
    keys = ("solver", "residual", "residual_rule", "tol", "passes", "stop_reason", "preconditioner",
            "preconditioner_reason", "preconditioner_bytes", "seconds_preconditioner", "seconds_passes")
    return {k: info[k] for k in keys if k in info}


def solver_line(solver):
    """The summary's ``solver`` line: ``pcg: relative residual 3.8e-08 after 8 passes (relative residual ...)``."""
    return (f"solver     {solver.get('solver', '?')}: relative residual {solver['residual']:.2g} after "
            f"{solver.get('passes', '?')} passes over the rows, {solver.get('preconditioner', 'no')} preconditioner "
            f"({solver.get('stop_reason', '')})")


def chosen_lines(chosen):
    """One report line per chosen parameter: ``lam        2.3e-05 chosen: least ... (gcv 0.0123)``; learned
    length-scales as the five largest relevances ``1 / l_j^2`` (scaled to a maximum of 1), by input column."""
    lines = []
    for key in _AUTO_KEYS:
        c = (chosen or {}).get(key)
        if c and key == "length_scale":
            top = sorted(enumerate(c["relevance"]), key=lambda t: -t[1])[:5]
            shown = ", ".join(f"x{j}={r:.2f}" for j, r in top)
            lines.append(f"relevance  {shown} (learned: {c['reason']}; {c['criterion']} {c['value']:.4g})")
        elif c:
            lines.append(f"{key:<10} {c['chosen']:.3g} chosen: {c['reason']} ({c['criterion']} {c['value']:.4g})")
    return lines
