"""Figures of sketch-size selection: leverage scores and the m_X / m_Y curves as a PNG (matplotlib).

Reads a :class:`skframe.model_selection.curves.SelectionResult`; matplotlib is imported only
when a figure is drawn (``pip install "skframe[plot]"``).
"""

from __future__ import annotations

import numpy as np

from skframe.exceptions import InvalidParameterError

__all__ = ["plot_selection"]


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
