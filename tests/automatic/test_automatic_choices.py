"""The automatic choices on tables no one cleaned, through the Python door (``skframe.fit_table``): a λ at the end
of a fold-searched grid is named and warned about, predictions far outside the training targets are counted and
listed for every regression loss and by ``TableModel.predict``, and a file sorted by its target chooses as the
same rows shuffled."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_diabetes

import skframe
from skframe.models import OutputKernelRegressor, SketchedKernelMachine
from skframe.models._autotune import LamAtEdgeWarning, note_edge
from skframe.models._extrapolation import ExtrapolationWarning


def _recorded(fit):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        out = fit()
    return out, [w for w in seen if issubclass(w.category, LamAtEdgeWarning)]


def test_note_edge_names_either_end_and_nothing_inside():
    for best, edge in ((0, "upper"), (3, "lower"), (1, None)):
        info = {"criterion": "3-fold held-out loss", "reason": "least"}
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            note_edge(info, [1e-1, 1e-2, 1e-3, 1e-4], best)  # the k-fold search's order: largest first
        assert info["edge"] == edge
        assert len(seen) == (edge is not None)
        if edge is not None:
            assert f"at the {edge} end of the grid (1e-04 to 1e-01)" in info["reason"]
            assert "give lam explicitly" in str(seen[0].message)


@pytest.fixture(scope="module")
def noise():
    rng = np.random.default_rng(0)
    return rng.normal(size=(120, 3)), rng.normal(size=120), (rng.normal(size=(120, 4)) > 0).astype(float)


def test_a_lipschitz_loss_at_the_end_of_its_grid_is_not_taken_silently(noise):
    X, y, _ = noise  # targets that nothing predicts: the most regularisation the grid holds
    model, edge = _recorded(lambda: SketchedKernelMachine(kernel_params={"gamma": 1.0}, sketch_size=30, lam="auto",
                                                          random_state=0).fit(X, y))
    info = model.fit_info_["lam"]
    assert info["chosen"] == pytest.approx(0.1) and info["edge"] == "upper"
    assert "at the upper end of the grid (1e-08 to 1e-01)" in info["reason"] and len(edge) == 1


def test_a_structured_model_at_the_end_of_its_grid_is_not_taken_silently(noise):
    X, _, Y = noise
    model, edge = _recorded(lambda: OutputKernelRegressor(lam="auto", random_state=0).fit(X, Y))
    assert model.fit_info_["lam"]["edge"] == "upper" and len(edge) == 1


@pytest.fixture(scope="module")
def diabetes():
    """Diabetes as a table and a test part of every fifth row."""
    frame = load_diabetes(as_frame=True).frame
    test = np.arange(len(frame)) % 5 == 0
    return frame[~test].reset_index(drop=True), frame[test].reset_index(drop=True)


@pytest.mark.parametrize("options", [{}, {"loss": "huber"}], ids=["square", "huber"])
def test_far_predictions_are_counted_in_the_report_and_by_predict(options):
    rng = np.random.default_rng(0)
    x = rng.uniform(size=(200, 2))
    train = pd.DataFrame({"a": x[:, 0], "b": x[:, 1], "y": 10 * x[:, 0] + x[:, 1] + 0.1 * rng.normal(size=200)})
    bad = pd.DataFrame({"a": [4.0, 0.5, -3.0], "b": [0.5, 0.5, 0.5], "y": [40.5, 5.5, -29.5]})  # rows 0, 2: typos
    fixed = {"kernel_params": {"gamma": 0.05}, "lam": 1e-6, "scale": "none"}  # a long length-scale: near linear
    model = skframe.fit_table(train, test=bad, **fixed, **options)
    flags = model.report_["metrics"]["extrapolation"]
    assert flags["count"] == 2 and flags["rows"] == [0, 2] and flags["listed"].startswith("row 0:")
    rows = bad[["a", "b"]]
    with pytest.warns(ExtrapolationWarning, match=r"2 prediction\(s\) outside the training targets' range"):
        predictions = model.predict(rows)
    report = model.extrapolation_report(rows)
    np.testing.assert_array_equal(report["predictions"], predictions)
    assert report["count"] == 2 and report["rows"] == [0, 2]
    assert all(v < report["low"][0] or v > report["high"][0] for v in report["values"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", ExtrapolationWarning)
        model.predict(train[["a", "b"]].iloc[:20])  # training rows: nothing to say


def test_a_classifier_has_no_range_to_flag():
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"a": rng.normal(size=60), "b": rng.normal(size=60)})
    frame["kind"] = np.where(frame.a > 0, "up", "down")
    model = skframe.fit_table(frame, lam=1e-3)
    assert model.extrapolation_report(frame[["a", "b"]])["count"] is None


def test_a_file_sorted_by_its_target_fits_as_the_same_rows_shuffled(diabetes, tmp_path):
    train, held = diabetes
    order = np.random.default_rng(5).permutation(len(train))
    files = {"sorted": train.sort_values("target", kind="stable"), "shuffled": train.iloc[order]}
    r2, lam = {}, {}
    for name, table in files.items():
        table.to_csv(tmp_path / f"{name}.csv", index=False)
        model = skframe.fit_table(tmp_path / f"{name}.csv", test=held)
        r2[name], lam[name] = model.report_["metrics"]["r2"], model.decisions_["lam"]
        assert "5 shuffled folds (seed 0)" in lam[name]["reason"]
    assert abs(r2["sorted"] - r2["shuffled"]) < 0.03, r2  # the same rows in another order: within the folds' noise
    assert abs(np.log10(lam["sorted"]["chosen"] / lam["shuffled"]["chosen"])) < 1.0
    kept = skframe.fit_table(tmp_path / "sorted.csv", test=held, cv_order="keep")
    assert "5 consecutive folds (file order kept)" in kept.decisions_["lam"]["reason"]


def test_the_square_loss_keeps_file_order_on_request(diabetes, tmp_path):
    from typer.testing import CliRunner

    from skframe.cli import app
    from skframe.models import SketchedKernelRidge

    train, _ = diabetes
    X, y = train.drop(columns="target").to_numpy(), train["target"].to_numpy()
    kept = SketchedKernelRidge(lam="auto", kernel_params={"gamma": "auto"}, cv_order="keep", random_state=0).fit(X, y)
    assert kept.fit_info_["lam"]["folds"] == "5 consecutive folds (file order kept)"
    assert kept.fit_info_["gamma"]["folds"] == "5 consecutive folds (file order kept)"
    train.sort_values("target").to_csv(tmp_path / "sorted.csv", index=False)
    out = CliRunner().invoke(app, ["fit", str(tmp_path / "sorted.csv"), "--cv-order", "keep"]).stdout
    lines = [line for line in out.splitlines() if line.startswith(("lam ", "gamma "))]
    assert len(lines) == 2 and all("5 consecutive folds (file order kept)" in line for line in lines), out


def test_a_gamma_still_at_an_end_of_its_extended_grid_is_named():
    from skframe.models._autotune import choose_gamma

    gamma, info = choose_gamma(lambda g: g, 1.0)  # the smaller the better: the grid extends down, twice
    assert info["edge"] == "lower" and gamma == pytest.approx(10.0 ** -2)
    assert choose_gamma(lambda g: (np.log10(g)) ** 2 + 1.0, 1.0)[1]["edge"] is None
