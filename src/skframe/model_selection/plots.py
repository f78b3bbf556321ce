"""Figures of sketch-size selection: leverage scores and the m_X / m_Y curves as a PNG (matplotlib).

Reads a :class:`skframe.model_selection.curves.SelectionResult`; matplotlib is imported only
when a figure is drawn (``pip install "skframe[plot]"``).
"""

from __future__ import annotations

import numpy as np

from skframe.exceptions import InvalidParameterError

__all__ = ["plot_selection", "plot_cv_scores"]


def plot_selection(result, path):
    """Write the leverage-score and size curves of a :class:`SelectionResult` as a PNG (matplotlib)."""
    try:
        import matplotlib  # lazy: an optional extra, only for the figure

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # lazy: optional extra
    except ImportError as exc:  # pragma: no cover - optional dependency
        raise InvalidParameterError('writing the PNG needs matplotlib: pip install -e ".[plot]" in the skframe '
                                    "source tree, or pip install matplotlib") from exc
    output_only = not result.input_curve  # DSOKR: m_Y alone
    fig, ax = plt.subplots(1, 2 if output_only else 3, figsize=(9 if output_only else 13, 3.6))
    if not output_only:
        ax[0].plot(result.leverage_x, label=f"inputs (d_eff={result.d_eff_x:.1f})")
    ax[0].plot(result.leverage_y, label=f"outputs (d_eff={result.d_eff_y:.1f})")
    ax[0].set(title="sorted approximate leverage scores", xlabel="rank", yscale="log")
    ax[0].legend()
    panels = [(ax[-1], result.output_curve, "m_Y (Perfect h)", result.m_y)]
    if not output_only:
        panels.insert(0, (ax[1], result.input_curve, "m_X (SIOKR)", result.m_x))
    for a, curve, name, chosen in panels:
        a.plot(curve.get("sizes", []), curve.get("scores", []), "o-")
        if chosen is not None:
            a.axvline(chosen, color="r", ls="--", label=f"chosen {chosen}")
            a.legend()
        a.set(title=name, xlabel="sketch size", ylabel=curve.get("metric", "score"), xscale="log")
        _plain_log_ticks(a.xaxis)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def _plain_log_ticks(axis):
    """A few labelled ticks on a log axis, as plain numbers (``20``, ``500``, ``2000``), no minor labels.

    Ticks at 1-2-5 per decade over at most 1.5 decades, 1-3 over at most 3, else decades only,
    so that the labels never run into each other.
    """
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter  # lazy: optional extra

    lo, hi = sorted(float(v) for v in axis.get_view_interval())
    span = np.log10(max(hi, 1e-300) / max(lo, 1e-300)) if lo > 0 else 9.0
    subs = (1.0, 2.0, 5.0) if span <= 1.5 else (1.0, 3.0) if span <= 3 else (1.0,)
    axis.set_major_locator(LogLocator(base=10, subs=subs, numticks=12))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.0f}" if v >= 1 else f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def _axis_values(points, name):
    return [p[name] for p in points]


def _is_log(values):
    """True when the values are positive numbers spanning more than a decade (a log axis reads them best)."""
    try:
        v = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        return False
    return bool(v.size and np.all(v > 0) and v.max() / v.min() > 10)


def _label(value):
    return f"{value:.3g}" if isinstance(value, (float, np.floating)) else str(value)


def plot_cv_scores(points, mean, std, path, *, best_index=None, score_name="score"):
    """Write the cross-validated scores of a parameter grid as a PNG: curves or a heat map (matplotlib).

    Parameters
    ----------
    points : list of dict
        The grid points, each ``{parameter name: value}`` over the same names (e.g. ``{"gamma": 0.1,
        "lam": 1e-4}``).
    mean, std : array-like of shape (n_points,)
        Mean and standard deviation of the score over the folds (NaN for a failed point).
    path : str or path-like
        The PNG file to write.
    best_index : int, optional
        The chosen point, marked on the figure.
    score_name : str, default="score"
        The score's name, for the axis or colour-bar label.

    Returns
    -------
    path
        ``path``.

    Notes
    -----
    The parameters that take one value only are left out. One parameter left: the mean score
    against it, with a band of ± one standard deviation. Two: a heat map of the mean score (rows
    the first parameter, columns the second). More: one curve against the last parameter per
    combination of the others. An axis whose values are positive and span more than a decade is
    logarithmic.
    """
    try:
        import matplotlib  # lazy: an optional extra, only for the figure

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # lazy: optional extra
    except ImportError as exc:  # pragma: no cover - optional dependency
        raise InvalidParameterError('writing the PNG needs matplotlib: pip install -e ".[plot]" in the skframe '
                                    "source tree, or pip install matplotlib") from exc
    points = [dict(p) for p in points]
    if not points:
        raise InvalidParameterError("plot_cv_scores: the grid has no point to plot")
    mean = np.asarray(mean, dtype=float)
    std = np.asarray(std, dtype=float)
    names = [n for n in points[0] if len({repr(p[n]) for p in points}) > 1] or list(points[0])[-1:]
    if len(names) == 2:
        fig = _heat_map(plt, points, mean, names, best_index, score_name)
    else:
        fig = _curves(plt, points, mean, std, names, best_index, score_name)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def _ordered(values):
    out = []
    for v in values:
        if not any(repr(v) == repr(w) for w in out):
            out.append(v)
    try:
        return sorted(out)
    except TypeError:
        return out


def _heat_map(plt, points, mean, names, best_index, score_name):
    rows, cols = (_ordered(_axis_values(points, n)) for n in names)
    grid = np.full((len(rows), len(cols)), np.nan)
    where = {}
    for k, p in enumerate(points):
        i = next(i for i, r in enumerate(rows) if repr(r) == repr(p[names[0]]))
        j = next(j for j, c in enumerate(cols) if repr(c) == repr(p[names[1]]))
        grid[i, j] = mean[k]
        where[k] = (i, j)
    fig, ax = plt.subplots(figsize=(1.2 + 0.9 * len(cols), 1.2 + 0.6 * len(rows)))
    image = ax.imshow(np.ma.masked_invalid(grid), origin="lower", aspect="auto", cmap="viridis")
    fig.colorbar(image, ax=ax, label=f"mean CV {score_name}")
    ax.set_xticks(range(len(cols)), [_label(c) for c in cols], rotation=45, ha="right")
    ax.set_yticks(range(len(rows)), [_label(r) for r in rows])
    ax.set(xlabel=names[1], ylabel=names[0], title=f"cross-validated {score_name}")
    lo, hi = (np.nanmin(grid), np.nanmax(grid)) if np.isfinite(grid).any() else (0.0, 1.0)
    for i in range(len(rows)):
        for j in range(len(cols)):
            failed = np.isnan(grid[i, j])
            bright = not failed and hi > lo and (grid[i, j] - lo) / (hi - lo) > 0.6  # yellow end of viridis
            ax.text(j, i, "failed" if failed else f"{grid[i, j]:.3g}", ha="center", va="center", fontsize=7,
                    color="k" if failed or bright else "w")
    if best_index is not None and best_index in where:
        i, j = where[best_index]
        ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="r", linewidth=2))
    return fig


def _curves(plt, points, mean, std, names, best_index, score_name):
    x_name, others = names[-1], names[:-1]
    groups = {}
    for k, p in enumerate(points):
        groups.setdefault(tuple(repr(p[n]) for n in others), []).append(k)
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for idx in groups.values():
        idx = sorted(idx, key=lambda k: points[k][x_name])
        x = _axis_values([points[k] for k in idx], x_name)
        label = ", ".join(f"{n}={_label(points[idx[0]][n])}" for n in others) or None
        (line,) = ax.plot(x, mean[idx], "o-", label=label)
        ax.fill_between(x, mean[idx] - std[idx], mean[idx] + std[idx], color=line.get_color(), alpha=0.15)
    if best_index is not None:
        ax.plot([points[best_index][x_name]], [mean[best_index]], "r*", markersize=14, label="chosen")
    if _is_log(_axis_values(points, x_name)):
        ax.set_xscale("log")
    ax.set(xlabel=x_name, ylabel=f"mean CV {score_name} (± std)", title=f"cross-validated {score_name}")
    if len(groups) > 1 or best_index is not None:
        ax.legend(fontsize=7)
    return fig
