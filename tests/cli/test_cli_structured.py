import json

import numpy as np
import pytest
from typer.testing import CliRunner

from skframe.cli import app
from skframe.datasets.loaders import save_dataset
from tests._structured_helpers import multilabel_data

runner = CliRunner()


@pytest.fixture
def files(tmp_path):
    X, Y = multilabel_data(n=150, L=6)
    save_dataset(str(tmp_path / "train.csv"), X[:110], Y[:110])
    save_dataset(str(tmp_path / "test.csv"), X[110:], Y[110:])
    return tmp_path, X, Y


def _fit(tmp, *extra):
    args = ["fit", str(tmp / "train.csv"), "--test", str(tmp / "test.csv"), "--targets", "6", "--task", "structured",
            "--input-kernel", "gaussian", "--input-kernel-param", "gamma=0.1", "--output-kernel", "gaussian",
            "--output-kernel-param", "gamma=0.5", "--lam", "1e-3", "--json", *extra]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.mark.parametrize("sketches", [
    ("--input-sketch", "none", "--output-sketch", "none"),
    ("--input-sketch", "subsample", "--input-sketch-size", "50", "--output-sketch", "none"),
    ("--input-sketch", "none",
     "--output-sketch", "psg", "--output-sketch-size", "20", "--output-sketch-param", "p=0.2"),
    ("--input-sketch", "subsample", "--input-sketch-size", "50",
     "--output-sketch", "psg", "--output-sketch-size", "20"),
])
def test_fit_structured_four_models(files, sketches):
    tmp, _, _ = files
    rep = _fit(tmp, *sketches)
    m = rep["metrics"]
    assert 0 <= m["example_based_f1"] <= 1 and 0 <= m["hamming_loss"] <= 1
    assert rep["task"] == "structured" and rep["fit_seconds"] >= 0 and rep["predict_seconds"] >= 0


def test_fit_structured_candidates_files_topk_and_ensembles(files):
    tmp, _, Y = files
    C = np.unique(Y, axis=0)
    np.save(tmp / "cands.npy", C)
    rep = _fit(tmp, "--input-sketch", "subsample", "--input-sketch-size", "50", "--candidates",
               str(tmp / "cands.npy"), "--top-k", "3", "--n-draws", "2", "--aggregate", "max")
    m = rep["metrics"]
    assert m["top_k"]["k"] == 3
    assert 0.5 <= m["hits_at_3"] <= 1  # the true label sets are among the candidates
    # one run reports Hits@1/5/10 (and @K), MRR and mean rank, consistent with each other
    assert m["hits_at_1"] <= m["hits_at_3"] <= m["hits_at_5"] <= m["hits_at_10"] <= 1
    assert m["hits_at_1"] <= m["mrr"] <= 1 and m["mean_rank"] >= 1
    # per-sample sets: each test row gets its true output plus 4 random others
    rng = np.random.default_rng(0)
    Yte = Y[110:]
    sets = [np.vstack([C[rng.choice(len(C), 4)], y[None, :]]) for y in Yte]
    offsets = np.concatenate([[0], np.cumsum([len(s) for s in sets])])
    np.savez(tmp / "per.npz", candidates=np.vstack(sets), offsets=offsets)
    rep = _fit(tmp, "--candidates", str(tmp / "per.npz"), "--top-k", "5")
    assert rep["metrics"]["hits_at_5"] == 1.0
    # a malformed file is one error line, non-zero exit
    np.savez(tmp / "bad.npz", candidates=np.vstack(sets), offsets=offsets[:-3])
    result = runner.invoke(app, ["fit", str(tmp / "train.csv"), "--test", str(tmp / "test.csv"), "--targets", "6",
                                 "--task", "structured", "--candidates", str(tmp / "bad.npz")])
    assert result.exit_code != 0
    assert "offsets" in result.output


def test_select_command(files):
    pytest.importorskip("matplotlib")
    tmp, _, _ = files
    png = tmp / "curves.png"
    result = runner.invoke(app, ["select", str(tmp / "train.csv"), "--targets", "6", "--input-kernel-param",
                                 "gamma=0.1", "--output-kernel-param", "gamma=0.5", "--lam", "1e-3", "--sizes-x",
                                 "10,20,40", "--sizes-y", "5,10", "--png", str(png), "--json"])
    assert result.exit_code == 0, result.output
    rep = json.loads(result.output)
    assert rep["m_x"] in (10, 20, 40) and rep["m_y"] in (5, 10)
    assert png.exists()
    result = runner.invoke(app, ["select", str(tmp / "train.csv"), "--targets", "6", "--sizes-x", "10",
                                 "--sizes-y", "5"])
    assert result.exit_code == 0, result.output
    assert "chosen" in result.output


def test_fit_structured_human_report_and_model_file(files):
    tmp, _, _ = files
    result = runner.invoke(app, ["fit", str(tmp / "train.csv"), "--test", str(tmp / "test.csv"), "--targets", "6",
                                 "--task", "structured", "--input-sketch", "subsample", "--input-sketch-size", "40",
                                 "--output-sketch", "psg", "--output-sketch-size", "20",
                                 "--model-out", str(tmp / "m.skf")])
    assert result.exit_code == 0, result.output
    assert "example_based_f1" in result.output and (tmp / "m.skf").exists()


def test_ranking_metrics_match_full_sort():
    """MRR / mean rank from the CLI task equal a brute-force ranking of the full score matrix."""
    import numpy as np

    from skframe.automatic._task_structured import ranking_metrics
    from skframe.models import OutputKernelRegressor

    rng = np.random.default_rng(3)
    X = rng.standard_normal((60, 4))
    Y = (rng.random((60, 6)) < 0.3).astype(float)
    model = OutputKernelRegressor("gaussian", input_kernel_params={"gamma": 0.3}, lam=1e-3).fit(X[:40], Y[:40])
    C = np.unique(Y[:40], axis=0)
    got = ranking_metrics(model, X[40:], Y[40:], C, chunk_rows=7)
    S = model.decision_function(X[40:], candidates=C)
    ranks = []
    for i in range(20):
        hit = np.flatnonzero((C == Y[40 + i]).all(axis=1))
        if hit.size:
            s_true = S[i, hit[0]]
            ranks.append(1 + np.sum(S[i] > s_true) + 0.5 * (np.sum(S[i] == s_true) - 1))
    assert got["n_ranked"] == len(ranks)
    if ranks:
        assert got["mrr"] == pytest.approx(np.mean(1 / np.asarray(ranks)))
        assert got["mean_rank"] == pytest.approx(np.mean(ranks))
        np.testing.assert_allclose(got["ranks"], ranks)
    per = ranking_metrics(model, X[40:], Y[40:], [C] * 20)
    np.testing.assert_allclose(per.pop("ranks"), got.pop("ranks"))
    assert per == pytest.approx(got)


def test_input_kernel_params_apply_to_the_default_input_kernel():
    """--input-kernel-param is honoured when --input-kernel is left at its default (--kernel)."""
    from skframe.automatic._task_structured import build_estimator
    from skframe.cli._options import FitOptions

    est = build_estimator(FitOptions(task="structured", input_kernel_params={"gamma": 5e-5}, lam=1e-3))
    assert est.input_kernel == "gaussian" and est.input_kernel_params == {"gamma": 5e-5}
    est = build_estimator(FitOptions(task="structured", kernel_params={"gamma": 2.0}, lam=1e-3))
    assert est.input_kernel_params == {"gamma": 2.0}
    est = build_estimator(FitOptions(task="structured", input_kernel="linear", kernel_params={"gamma": 2.0}, lam=1e-3))
    assert est.input_kernel == "linear" and est.input_kernel_params is None


def test_input_sketch_size_and_params_apply_to_the_default_input_sketch():
    from skframe.automatic._task_structured import build_estimator
    from skframe.cli._options import FitOptions

    est = build_estimator(FitOptions(task="structured", input_sketch_size=40, input_sketch_params={"p": 0.1}))
    assert est.input_sketch == "psr" and est.input_sketch_size == 40 and est.input_sketch_params == {"p": 0.1}
    est = build_estimator(FitOptions(task="structured", sketch_size=30, sketch_params={"p": 0.2}))
    assert est.input_sketch_size == 30 and est.input_sketch_params == {"p": 0.2}
    est = build_estimator(FitOptions(task="structured", input_sketch="subsample", sketch_params={"p": 0.2}))
    assert est.input_sketch == "subsample" and est.input_sketch_params is None


@pytest.mark.parametrize("per_sample", [False, True])
def test_topk_prediction_equals_the_model_prediction(per_sample, monkeypatch):
    """With --top-k the best candidate is taken from the K best: the same as model.predict."""
    import skframe.automatic._task_structured as task
    from skframe.cli._options import FitOptions
    from skframe.models import OutputKernelRegressor

    rng = np.random.default_rng(5)
    X = rng.standard_normal((50, 4))
    Y = (rng.random((50, 5)) < 0.4).astype(float)
    model = OutputKernelRegressor("gaussian", input_kernel_params={"gamma": 0.3}, lam=1e-3).fit(X[:35], Y[:35])
    C = np.unique(Y, axis=0)
    cands = [C[rng.choice(len(C), 6, replace=False)] for _ in range(15)] if per_sample else None
    monkeypatch.setattr(task, "_candidates", lambda opts, n_rows: cands)
    opts = FitOptions(task="structured", top_k=3)
    got = task.predict(model, X[35:], opts)
    expected = model.predict(X[35:], candidates=cands)
    np.testing.assert_array_equal(got, expected.toarray() if hasattr(expected, "toarray") else expected)
    assert opts.topk["indices"].shape == (15, 3)
