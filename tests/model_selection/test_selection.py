import numpy as np
import pytest

from skframe.model_selection.curves import (
    approximate_leverage_scores,
    effective_dimension,
    input_size_curve,
    perfect_h_curve,
    plot_selection,
    select_sketch_sizes,
)
from tests._structured_helpers import GaussK, LinK, multilabel_data


def test_leverage_scores_exact_when_all_columns_sampled():
    X, _ = multilabel_data(n=60)
    k, lam, n = GaussK(0.2), 1e-2, 60
    K = k(X, X)
    exact = np.diag(K @ np.linalg.inv(K + n * lam * np.eye(n)))
    approx = approximate_leverage_scores(k, X, lam, n_samples=n, random_state=0)
    np.testing.assert_allclose(approx, exact, rtol=1e-6, atol=1e-8)
    assert effective_dimension(approx) == pytest.approx(exact.sum(), rel=1e-6)


def test_leverage_scores_low_rank_effective_dimension():
    rng = np.random.default_rng(0)
    Y = rng.normal(size=(200, 3)) @ rng.normal(size=(3, 30))  # rank 3 under the linear kernel
    lev = approximate_leverage_scores(LinK(), Y, 1e-8, n_samples=40, random_state=0)
    assert effective_dimension(lev) == pytest.approx(3.0, abs=0.05)


def test_perfect_h_reaches_full_score_on_low_rank_outputs():
    X, Y = multilabel_data(n=150, L=5)
    Ytr, Yva = Y[:120], Y[120:]
    curve = perfect_h_curve(LinK(), Ytr, Yva, [1, 2, 5, 10], random_state=0)
    # with m_Y >= rank(Y) the projection is exact: Perfect h decodes every seen label set
    seen = {tuple(r) for r in Ytr}
    if all(tuple(r) in seen for r in Yva):
        assert curve["scores"][-1] == pytest.approx(1.0)
    assert curve["chosen"] in curve["sizes"]
    assert curve["metric"] == "example_based_f1"


def test_time_budgets_stop_curves():
    X, Y = multilabel_data(n=100)
    c = input_size_curve(X[:80], Y[:80], X[80:], Y[80:], [5, 10, 20, 40], input_kernel=GaussK(0.2),
                         output_kernel=GaussK(0.3), lam=1e-3, time_budget=0.0, random_state=0)
    assert c["sizes"] == [5] and "budget" in c["stopped"]
    c = perfect_h_curve(GaussK(0.3), Y[:80], Y[80:], [5, 10, 20], time_budget=0.0, random_state=0)
    assert c["sizes"] == [5] and "budget" in c["stopped"]


def test_select_and_png(tmp_path):
    pytest.importorskip("matplotlib")
    X, Y = multilabel_data(n=120)
    res = select_sketch_sizes(X, Y, input_kernel=GaussK(0.2), output_kernel=GaussK(0.3), lam=1e-3,
                              sizes_x=[10, 20, 40], sizes_y=[5, 10, 20], random_state=0)
    assert res.m_x in (10, 20, 40) and res.m_y in (5, 10, 20)
    assert res.d_eff_x > 0 and res.d_eff_y > 0
    plot_selection(res, tmp_path / "curves.png")
    assert (tmp_path / "curves.png").stat().st_size > 1000
    assert set(res.as_dict()) >= {"m_x", "m_y", "input_curve", "output_curve"}


def test_size_grid_and_convergence_rule():
    from skframe.model_selection.curves import _converged, size_grid

    g = size_grid(100)
    assert g[0] == 10 and g[-1] == 100 and g == sorted(set(g))
    assert not _converged([1.0, 2.0, 3.0], 1e-3, 2)
    assert _converged([1.0, 3.0, 3.0, 3.0001], 1e-3, 2)
    assert not _converged([1.0, 3.0, 3.0, 3.5], 1e-3, 2)
    assert not _converged([1.0, 3.0, 3.0], 1e-3, None)


class _FakeClock:
    """perf_counter stand-in: each timed call (a start/stop pair) lasts the next of the given durations."""

    def __init__(self, durations):
        self.durations = list(durations)
        self.now, self.calls = 0.0, 0

    def __call__(self):
        self.calls += 1
        if self.calls % 2 == 0:  # a stop: advance by this call's duration
            self.now += self.durations.pop(0)
        return self.now


def test_chosen_size_respects_the_time_budget(monkeypatch):
    """The size whose fit exceeded the budget stops the curve and is never chosen."""
    import skframe.model_selection.curves as sel

    X, Y = multilabel_data(n=120)
    monkeypatch.setattr(sel, "_clock", _FakeClock([0.5, 1.0, 2.5, 9.0]))
    c = sel.input_size_curve(X[:100], Y[:100], X[100:], Y[100:], [5, 10, 40, 80], input_kernel=GaussK(0.2),
                             output_kernel=GaussK(0.3), lam=1e-3, time_budget=2.0, tol=0.0, random_state=0)
    assert c["sizes"] == [5, 10, 40] and "budget" in c["stopped"]
    assert c["chosen"] in (5, 10) and c["within_budget"]
    # the over-budget size scoring best does not change that
    curve = {"sizes": [5, 10, 40], "scores": [1.0, 2.0, 3.0], "seconds": [0.5, 1.0, 2.5]}
    assert sel._chosen(curve, 0.0, 2.0) == 10  # the last size within budget
    assert sel._chosen(dict(curve), 0.0, None) == 40
    assert sel._chosen(dict(curve, seconds=[3.0, 3.0, 3.0]), 0.0, 2.0) == 5
    monkeypatch.setattr(sel, "_clock", _FakeClock([0.1, 0.3, 0.9]))
    c = sel.perfect_h_curve(GaussK(0.3), Y[:100], Y[100:], [5, 10, 20], time_budget=0.2, random_state=0)
    assert c["sizes"] == [5, 10] and c["chosen"] == 5


def test_png_log_axis_has_few_plain_tick_labels(tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from skframe.model_selection.curves import SelectionResult, _plain_log_ticks

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
