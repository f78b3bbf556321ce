import pytest

from skframe.model_selection.curves import input_size_curve, perfect_h_curve, select_sketch_sizes
from skframe.model_selection.plots import plot_selection
from tests._structured_helpers import GaussK, LinK, multilabel_data


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
