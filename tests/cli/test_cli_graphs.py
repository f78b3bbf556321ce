"""`skframe fit/predict/evaluate` on molecules and graphs: SMILES CSV columns, JSON-lines graphs, SDF files."""

import csv
import json
import sys

import numpy as np
import pytest
from typer.testing import CliRunner

from skframe.cli import app

Chem = pytest.importorskip("rdkit.Chem")

runner = CliRunner()

# a dozen small molecules and a made-up property (roughly: carbons count up, oxygens down)
MOLS = [("CCO", 0.5), ("CCCO", 0.9), ("CCCCO", 1.4), ("CCCCCO", 1.9), ("c1ccccc1", 2.1), ("c1ccccc1O", 1.5),
        ("Cc1ccccc1", 2.6), ("CC(=O)O", -0.2), ("CCC(=O)O", 0.3), ("CCN", 0.1), ("CCCN", 0.6), ("CCCCN", 1.1),
        ("OCCO", -1.0), ("CCOC", 0.8), ("C1CCCCC1", 3.0), ("CC(C)O", 0.6)]
TRAIN, TEST = MOLS[:12], MOLS[12:]
NGRAM = ["--kernel", "ngram", "--kernel-param", "n=3", "--kernel-param", "normalize=true"]


def _csv(path, rows, header=("smiles", "y")):
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)
    return path


@pytest.fixture
def files(tmp_path):
    from skframe.graphs import GraphBatch

    _csv(tmp_path / "train.csv", TRAIN)
    _csv(tmp_path / "test.csv", TEST)
    G = GraphBatch.from_smiles([s for s, _ in MOLS])
    with open(tmp_path / "graphs.jsonl", "w") as fh:
        for g, (_, y) in enumerate(MOLS):
            nodes, edges, elabels = G.graph(g)
            fh.write(json.dumps({"nodes": nodes, "edges": edges, "edge_labels": elabels, "y": y}) + "\n")
    w = Chem.SDWriter(str(tmp_path / "mols.sdf"))
    for s, y in MOLS:
        mol = Chem.MolFromSmiles(s)
        mol.SetProp("logS", str(y))
        w.write(mol)
    w.close()
    return tmp_path


def _run(*args):
    res = runner.invoke(app, [str(a) for a in args])
    assert res.exit_code == 0, res.output
    return res.output


def _json(*args):
    out = _run(*args, "--json")
    return json.loads(out[out.index("{"):])


def _error(*args):
    res = runner.invoke(app, [str(a) for a in args])
    assert res.exit_code != 0
    assert "Traceback" not in res.output
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), res.output
    return lines[0]


def _ridge(X_tr, y_tr, X_te, kernel, lam=1e-3):
    """Plain kernel ridge with an intercept (the exact model of the CLI's default regression)."""
    K = kernel(X_tr, X_tr)
    mu = y_tr.mean()
    alpha = np.linalg.solve(K + len(y_tr) * lam * np.eye(len(y_tr)), y_tr - mu)
    return kernel(X_te, X_tr) @ alpha + mu


def test_smiles_regression_with_ngram_kernel_equals_plain_kernel_ridge(files):
    from skframe.contract.registry import get_kernel
    from skframe.graphs import StringBatch

    model = files / "reg.skf"
    rep = _json("fit", files / "train.csv", "--test", files / "test.csv", "--inputs", "smiles", "--input-column",
                "smiles", "--targets", "1", *NGRAM, "--sketch", "none", "--model-out", model)
    assert rep["data"]["representation"]["inputs"] == "smiles" and rep["n_test"] == len(TEST)
    k = get_kernel("ngram", n=3, normalize=True)
    y_tr = np.array([y for _, y in TRAIN])
    expected = _ridge(StringBatch([s for s, _ in TRAIN]), y_tr, StringBatch([s for s, _ in TEST]), k)
    y_te = np.array([y for _, y in TEST])
    assert rep["metrics"]["mse"] == pytest.approx(np.mean((expected - y_te) ** 2), rel=1e-6)
    # predict needs no repeated flags: the model remembers the SMILES column
    pred = np.loadtxt(_run("predict", model, files / "test.csv").splitlines())
    np.testing.assert_allclose(pred, expected, rtol=1e-6, atol=1e-9)
    ev = _json("evaluate", model, files / "test.csv")
    assert ev["metrics"]["mse"] == pytest.approx(rep["metrics"]["mse"])


def test_morgan_featurizer_feeds_tanimoto_kernel(files):
    from skframe.contract.registry import get_kernel
    from skframe.graphs.chem import morgan_fingerprints

    model = files / "fp.skf"
    rep = _json("fit", files / "train.csv", "--test", files / "test.csv", "--inputs", "smiles", "--featurize",
                "morgan", "--featurize-param", "radius=2", "--featurize-param", "n_bits=512", "--kernel", "tanimoto",
                "--sketch", "none", "--model-out", model)
    assert rep["data"]["representation"]["featurize_params"] == {"radius": 2, "n_bits": 512}
    F_tr = morgan_fingerprints([s for s, _ in TRAIN], 2, 512).astype(float)
    F_te = morgan_fingerprints([s for s, _ in TEST], 2, 512).astype(float)
    expected = _ridge(F_tr, np.array([y for _, y in TRAIN]), F_te, get_kernel("tanimoto"))
    pred = np.loadtxt(_run("predict", model, files / "test.csv").splitlines())
    np.testing.assert_allclose(pred, expected, rtol=1e-6, atol=1e-9)


def test_jsonl_graphs_with_wl_kernel_fit_predict_evaluate(files):
    from skframe.contract.registry import get_kernel
    from skframe.graphs import GraphBatch

    model = files / "g.skf"
    rep = _json("fit", files / "graphs.jsonl", "--kernel", "wl-subtree", "--kernel-param", "h=3", "--kernel-param",
                "normalize=true", "--sketch", "none", "--model-out", model)
    assert rep["data"]["representation"]["inputs"] == "graphs" and rep["n_train"] == len(MOLS)
    G = GraphBatch.from_smiles([s for s, _ in MOLS])
    y = np.array([v for _, v in MOLS])
    expected = _ridge(G, y, G, get_kernel("wl-subtree", h=3, normalize=True))
    pred = np.loadtxt(_run("predict", model, files / "graphs.jsonl").splitlines())
    np.testing.assert_allclose(pred, expected, rtol=1e-6, atol=1e-9)
    assert _json("evaluate", model, files / "graphs.jsonl")["metrics"]["r2"] == pytest.approx(rep["metrics"]["r2"])
    # the same molecules from an SDF file, target in a data field: the same model
    rep_sdf = _json("fit", files / "mols.sdf", "--target-field", "logS", "--kernel", "wl-subtree", "--kernel-param",
                    "h=3", "--kernel-param", "normalize=true", "--sketch", "none")
    assert rep_sdf["metrics"]["r2"] == pytest.approx(rep["metrics"]["r2"])


def test_smiles_to_molecule_structured_prediction(files):
    model = files / "mol.skf"
    cands = files / "cands.smi"
    # the candidates hold every test molecule, written differently from the CSV (OCC for CCO, ...)
    cands.write_text("\n".join(["OCCO", "COCC", "C1CCCCC1", "OC(C)C", "OCC", "c1ccccc1"]) + "\n")
    args = ["fit", files / "train.csv", "--test", files / "test.csv", "--task", "structured", "--inputs", "smiles",
            "--outputs", "smiles", *NGRAM, "--output-kernel", "wl-subtree", "--output-kernel-param", "h=2",
            "--output-kernel-param", "normalize=true", "--sketch", "none", "--lam", "1e-4", "--top-k", "6"]
    rep = _json(*args, "--candidates", cands, "--model-out", model)
    m = rep["metrics"]
    assert m["truth_among_candidates"] == 1.0 and m["n_candidates"] == 6
    assert m["exact_match_top6"] == 1.0  # every candidate is in the top 6
    assert 0.0 <= m["exact_match_top1"] <= 1.0 and 0.0 < m["tanimoto_top1"] <= 1.0
    # default candidates: the training molecules, none of which is a test molecule
    m0 = _json(*args)["metrics"]
    assert m0["truth_among_candidates"] == 0.0 and m0["exact_match_top1"] == 0.0 and m0["n_candidates"] == 12

    out = files / "pred.csv"
    _run("predict", model, files / "test.csv", "--out", out)
    with open(out) as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["smiles"] and len(rows) == len(TEST) + 1
    allowed = {Chem.MolToSmiles(Chem.MolFromSmiles(s)) for s in cands.read_text().split()}
    predicted = [r[0] for r in rows[1:]]
    assert set(predicted) <= allowed  # predictions come from the saved candidate set
    truth = [Chem.MolToSmiles(Chem.MolFromSmiles(s)) for s, _ in TEST]
    assert np.mean([p == t for p, t in zip(predicted, truth)]) == pytest.approx(m["exact_match_top1"])
    ev = _json("evaluate", model, files / "test.csv")
    assert ev["metrics"]["exact_match_top1"] == pytest.approx(m["exact_match_top1"])
    assert ev["metrics"]["tanimoto_top1"] == pytest.approx(m["tanimoto_top1"])


def test_errors_are_one_line(files, monkeypatch):
    bad = _csv(files / "bad.csv", TRAIN + [("C1CC(", 2.0)])
    assert "line 14" in _error("fit", bad, "--inputs", "smiles", *NGRAM) and "C1CC(" in _error(
        "fit", bad, "--inputs", "smiles", *NGRAM)
    assert "--input-column" in _error("fit", files / "train.csv", "--inputs", "smiles", "--input-column", "smi")
    assert "--target-field" in _error("fit", files / "mols.sdf", "--kernel", "wl-subtree")
    assert "--task structured" in _error("fit", files / "train.csv", "--inputs", "smiles", "--outputs", "smiles")
    assert "n_bits" in _error("fit", files / "train.csv", "--inputs", "smiles", "--featurize", "morgan",
                              "--featurize-param", "bits=12")
    (files / "broken.jsonl").write_text('{"nodes": ["C", "O"], "edges": [[0, 1]], "y": 1}\n{"nodes": 3}\n')
    assert "line 2" in _error("fit", files / "broken.jsonl", "--kernel", "wl-subtree")
    assert "ngram" in _error("fit", files / "train.csv", "--inputs", "smiles")  # the default gaussian kernel
    assert "wl-subtree" in _error("fit", files / "graphs.jsonl", "--kernel", "ngram")
    assert "wl-subtree" in _error("fit", files / "train.csv", "--task", "structured", "--inputs", "smiles",
                                  "--outputs", "smiles", *NGRAM)  # the default gaussian output kernel
    model = files / "reg.skf"
    _run("fit", files / "train.csv", "--inputs", "smiles", *NGRAM, "--model-out", model)
    assert "not on graphs" in _error("predict", model, files / "graphs.jsonl")
    with monkeypatch.context() as m:
        m.setitem(sys.modules, "rdkit", None)  # RDKit not installed: the error names the extra
        assert ".[chem]" in _error("fit", files / "train.csv", "--inputs", "smiles", *NGRAM)
    monkeypatch.setenv("SKFRAME_DISABLE_RDKIT", "1")
    assert "rdkit" in _error("fit", files / "train.csv", "--inputs", "smiles", *NGRAM)


def test_split_column_and_dropped_rows(files):
    rows = [(s, y, "test" if i % 4 == 3 else "train") for i, (s, y) in enumerate(MOLS)]
    rows.insert(5, ("C1CC(", 1.0, "train"))  # unreadable SMILES
    rows.insert(9, ("CCCCCCO", "", "test"))  # no target
    path = _csv(files / "split.csv", rows, header=("smiles", "logS", "split"))
    assert "line 7" in _error("fit", path, "--inputs", "smiles", "--target-field", "logS", "--split-column", "split",
                              *NGRAM)
    model = files / "split.skf"
    rep = _json("fit", path, "--inputs", "smiles", "--target-field", "logS", "--split-column", "split",
                "--missing", "drop", *NGRAM, "--sketch", "none", "--model-out", model)
    assert rep["data"]["n_dropped"] == 2
    assert (rep["n_train"], rep["n_test"]) == (12, 4)
    _csv(files / "tr.csv", [r[:2] for r in rows if r[2] == "train" and r[0] != "C1CC("])
    _csv(files / "te.csv", [r[:2] for r in rows if r[2] == "test" and r[1] != ""])
    ref = _json("fit", files / "tr.csv", "--test", files / "te.csv", "--inputs", "smiles", *NGRAM, "--sketch", "none")
    assert rep["metrics"]["mse"] == pytest.approx(ref["metrics"]["mse"])
    # evaluate scores the rows marked test (after dropping the unreadable ones on request)
    assert "line 7" in _error("evaluate", model, path)
    ev = _json("evaluate", model, path, "--missing", "drop")
    assert ev["n_samples"] == 4 and ev["metrics"]["mse"] == pytest.approx(rep["metrics"]["mse"])
