"""The figure of a sketch-size selection (skframe.model_selection.plots)."""

import numpy as np
import pytest


@pytest.mark.blas_free
def test_png_log_axis_has_few_plain_tick_labels(tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from skframe.model_selection.curves import SelectionResult
    from skframe.model_selection.plots import _plain_log_ticks, plot_selection

    fig, ax = plt.subplots()
    ax.plot([10, 15, 22, 33, 50, 75, 112, 168, 253, 379, 569, 854, 1281, 1922, 2250], np.arange(15.0))
    ax.set_xscale("log")
    _plain_log_ticks(ax.xaxis)
    fig.canvas.draw()
    labels = [t.get_text() for t in ax.get_xticklabels() if t.get_visible() and t.get_text()]
    lo, hi = ax.get_xlim()
    shown = [v for v in ax.xaxis.get_majorticklocs() if lo <= v <= hi]
    assert 2 <= len(shown) <= 9 and all("$" not in s for s in labels)
    plt.close(fig)
    res = SelectionResult(m_x=569, m_y=50, d_eff_x=3.0, d_eff_y=2.0, leverage_x=[0.5, 0.1], leverage_y=[0.4, 0.2],
                          input_curve={"sizes": [10, 100, 1000, 2250], "scores": [1, 2, 3, 3]},
                          output_curve={"sizes": [10, 50, 200], "scores": [1, 2, 2]})
    plot_selection(res, tmp_path / "c.png")
    assert (tmp_path / "c.png").stat().st_size > 1000
