"""Data larger than memory at the terminal: budgeted fits read files in blocks, predict streams, Dask options."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from skframe.cli import app

runner = CliRunner()
SKETCH = ["--sketch", "subsample", "--sketch-size", "60", "--kernel-param", "gamma=2", "--lam", "1e-4", "--seed", "3"]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("scale")
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(2000, 4))
    y = np.sin(4 * X[:, 0]) + X[:, 1] ** 2 + 0.05 * rng.normal(size=2000)
    np.savetxt(d / "train.csv", np.column_stack([X, y]), delimiter=",", fmt="%.17g")
    np.savetxt(d / "test.csv", np.column_stack([X[:300], y[:300]]), delimiter=",", fmt="%.17g")
    np.savetxt(d / "features.csv", X[:777], delimiter=",", fmt="%.17g")
    with open(d / "train.libsvm", "w") as fh:
        for row, t in zip(X, y):
            fh.write(f"{float(t)!r} " + " ".join(f"{j + 1}:{float(v)!r}" for j, v in enumerate(row)) + "\n")
    np.save(d / "train.npy", np.column_stack([X, y]))
    return d


def _fit(args):
    res = runner.invoke(app, ["fit", *args])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


@pytest.mark.parametrize("scale", ["none", "standard"])
def test_budgeted_csv_fit_reads_blocks_and_equals_in_memory_fit(data, tmp_path, scale):
    base = [str(data / "train.csv"), "--test", str(data / "test.csv"), "--scale", scale, *SKETCH, "--json"]
    plain = _fit(base + ["--model-out", str(tmp_path / "plain.skf")])
    streamed = _fit(base + ["--memory-budget", "1MB", "--model-out", str(tmp_path / "streamed.skf")])
    info = streamed["data"]["streamed"]
    # 1 MB: blocks of 1e6 / (8 * 64 * 5 cells) = 390 rows -> 6 blocks of 2000 rows, one of 300 test rows
    assert info == {"format": "csv", "rows_per_block": 390, "train_blocks": 6, "spilled": True, "test_blocks": 1}
    assert streamed["sketch"]["representation"] == "accumulated"
    from skframe.persistence import load

    a, b = load(tmp_path / "plain.skf"), load(tmp_path / "streamed.skf")
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-8, atol=1e-10 * np.abs(a.coef_).max())
    np.testing.assert_allclose(streamed["metrics"]["mse"], plain["metrics"]["mse"], rtol=1e-8)


def test_budgeted_libsvm_and_npy_fits_equal_the_csv_fit(data):
    ref = _fit([str(data / "train.csv"), *SKETCH, "--json"])
    lib = _fit([str(data / "train.libsvm"), "--memory-budget", "1MB", *SKETCH, "--json"])
    assert lib["data"]["streamed"]["spilled"] and lib["data"]["streamed"]["train_blocks"] > 1
    npy = _fit([str(data / "train.npy"), "--memory-budget", "1MB", *SKETCH, "--json"])
    assert npy["data"]["streamed"] == {"format": "npy", "rows_per_block": 390, "train_blocks": 0, "spilled": False}
    for rep in (lib, npy):
        np.testing.assert_allclose(rep["metrics"]["mse"], ref["metrics"]["mse"], rtol=1e-8)


def test_budgeted_iterative_loss_fits_from_the_spill(data):
    args = [str(data / "train.csv"), *SKETCH, "--loss", "huber", "--solver", "lbfgs", "--json"]
    ref = _fit(args)
    streamed = _fit(args + ["--memory-budget", "1MB"])
    assert streamed["data"]["streamed"]["train_blocks"] == 6
    np.testing.assert_allclose(streamed["metrics"]["mse"], ref["metrics"]["mse"], rtol=1e-6)


def test_predict_streams_blocks_to_out_and_equals_in_memory_predict(data, tmp_path, monkeypatch):
    from skframe.automatic import _streamed
    from skframe.persistence import load

    model = tmp_path / "m.skf"
    _fit([str(data / "train.csv"), "--scale", "standard", *SKETCH, "--model-out", str(model), "--json"])
    calls = []
    original = _streamed.predict_streamed

    def counting(*args, **kwargs):
        kwargs["rows"] = 100
        calls.append(original(*args, **kwargs))
        return calls[-1]

    monkeypatch.setattr(_streamed, "predict_streamed", counting)
    out = tmp_path / "p.csv"
    res = runner.invoke(app, ["predict", str(model), str(data / "features.csv"), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert calls == [8]  # 777 rows in blocks of 100
    X = np.loadtxt(data / "features.csv", delimiter=",")
    est = load(model)
    from skframe.cli.model_commands import _apply_scaler, _load

    _, extra = _load(model)
    expected = est.predict(_apply_scaler(X, extra))
    got = np.loadtxt(out, delimiter=",", skiprows=1)
    np.testing.assert_array_equal(got, expected)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".p.csv")]  # temp file renamed away


def test_predict_does_not_replace_out_when_a_block_fails(data, tmp_path):
    model = tmp_path / "m.skf"
    _fit([str(data / "train.csv"), *SKETCH, "--model-out", str(model), "--json"])
    out = tmp_path / "p.csv"
    out.write_text("previous\n")
    bad = tmp_path / "bad.csv"
    rows = np.loadtxt(data / "features.csv", delimiter=",")[:30]
    text = "\n".join(",".join(repr(float(v)) for v in r) for r in rows) + "\n1,2,3\n"  # a short last row
    bad.write_text(text)
    res = runner.invoke(app, ["predict", str(model), str(bad), "--out", str(out)])
    assert res.exit_code != 0 and "Traceback" not in res.output
    assert out.read_text() == "previous\n"


def test_dask_local_option_fits_on_a_local_cluster(data):
    pytest.importorskip("distributed")
    ref = _fit([str(data / "train.csv"), *SKETCH, "--holdout", "0", "--json"])  # a Dask fit has no holdout
    rep = _fit([str(data / "train.csv"), *SKETCH, "--dask-local", "2", "--json"])
    assert rep["data"]["dask"]["workers"] == 2 and rep["sketch"]["backend"] == "dask"
    np.testing.assert_allclose(rep["metrics"]["mse"], ref["metrics"]["mse"], rtol=1e-8)


def test_dask_options_errors_are_one_line(data, monkeypatch):
    res = runner.invoke(app, ["fit", str(data / "train.csv"), "--dask-local", "0"])
    assert res.exit_code == 2 and "--dask-local" in res.output and "Traceback" not in res.output
    res = runner.invoke(app, ["fit", str(data / "train.csv"), "--dask-local", "2", "--dask-scheduler",
                              "tcp://127.0.0.1:8786"])
    assert res.exit_code == 2 and "not both" in res.output
    monkeypatch.setenv("SKFRAME_DISABLE_DASK", "1")
    res = runner.invoke(app, ["fit", str(data / "train.csv"), "--dask-scheduler", "tcp://127.0.0.1:8786"])
    assert res.exit_code == 2 and "dask" in res.output.lower() and "Traceback" not in res.output


def test_dask_options_in_the_compute_panel():
    res = runner.invoke(app, ["fit", "--help-all"], env={"COLUMNS": "200"})  # advanced: not in the short --help
    assert "--dask-scheduler" in res.output and "--dask-local" in res.output


def test_block_statistics_equal_the_in_memory_scaler(tmp_path):
    from skframe.automatic._streamed import chunked_scaler, spill_file
    from skframe.datasets import FeatureScaler

    rng = np.random.default_rng(1)
    X = np.column_stack([rng.normal(3.0, 2.0, size=1000), np.full(1000, 7.0), rng.uniform(size=1000)])
    y = rng.normal(size=1000)
    np.savetxt(tmp_path / "d.csv", np.column_stack([X, y]), delimiter=",", fmt="%.17g")
    Xs, Ys, blocks = spill_file(tmp_path / "d.csv", str(tmp_path), rows=128)
    assert blocks == 8 and isinstance(Xs, np.memmap)
    np.testing.assert_array_equal(Xs, X)
    np.testing.assert_array_equal(Ys[:, 0], y)
    ref = FeatureScaler("standard").fit(X)
    sc = chunked_scaler(Xs, "standard", 128)
    np.testing.assert_allclose(sc.mean_, ref.mean_, rtol=1e-12)
    np.testing.assert_allclose(sc.scale_, ref.scale_, rtol=1e-10)
    assert sc.scale_[1] == 1.0  # a constant column stays unscaled
    np.testing.assert_allclose(sc.transform(X), ref.transform(X), rtol=1e-10, atol=1e-12)
