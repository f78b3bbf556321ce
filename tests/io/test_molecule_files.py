"""Graph and molecule files (skframe.io.graphs, skframe.io.molecules): what they read and the errors they raise."""

import json

import pytest

from skframe.exceptions import DataFormatError, InvalidInputError, InvalidParameterError
from skframe.graphs import GraphBatch, StringBatch
from skframe.io.graphs import file_kind, read_graph_jsonl

pytest.importorskip("rdkit")

from skframe.io.molecules import read_candidates, read_molecule_file, read_smiles_csv  # noqa: E402

REP = {"kind": "csv", "inputs": "smiles", "outputs": "table", "input_column": "smiles", "output_column": "smiles",
       "target_fields": [], "targets": 1, "featurize": "none", "featurize_params": {}, "split_column": None}


def _jsonl(path, objects):
    path.write_text("".join(json.dumps(o) + "\n" for o in objects))
    return path


def test_file_kind_by_suffix():
    assert [file_kind(p) for p in ("a.jsonl", "b.SDF", "c.csv", "d.txt")] == ["jsonl", "sdf", "csv", "csv"]


def test_jsonl_graphs_and_targets(tmp_path):
    path = _jsonl(tmp_path / "g.jsonl", [
        {"nodes": ["C", "O"], "edges": [[0, 1]], "edge_labels": ["1"], "y": 1.5, "z": [2, 3]},
        {"nodes": ["N"], "edges": [], "y": -1, "z": [4, 5]},
    ])
    G, Y = read_graph_jsonl(path)
    assert isinstance(G, GraphBatch) and len(G) == 2 and Y.tolist() == [[1.5], [-1.0]]
    assert read_graph_jsonl(path, ["y", "z"])[1].tolist() == [[1.5, 2, 3], [-1, 4, 5]]
    assert read_graph_jsonl(path, with_targets=False)[1] is None


@pytest.mark.parametrize("obj,match", [
    ({"nodes": ["C"], "edges": [[0, 0]], "y": 1}, "self-loop"),
    ({"nodes": ["C", "O"], "edges": [[0, 1]], "edge_labels": [], "y": 1}, "edge labels"),
    ({"nodes": ["C"], "edges": []}, "no target 'y'"),
    ({"nodes": ["C"], "edges": [], "y": "abc"}, "not a number"),
])
def test_jsonl_errors_name_the_line(tmp_path, obj, match):
    path = _jsonl(tmp_path / "bad.jsonl", [{"nodes": ["C"], "edges": [], "y": 0}, obj])
    with pytest.raises(DataFormatError, match=match) as exc:
        read_graph_jsonl(path)
    assert "line 2" in str(exc.value)


def test_smiles_csv_strings_graphs_targets_and_drop(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text("smiles,logS,split\nCCO,0.5,train\nC1CC(,1.0,train\nc1ccccc1,-2.0,test\n")
    rep = dict(REP, split_column="split")
    with pytest.raises(InvalidInputError, match="line 3"):
        read_smiles_csv(path, rep)
    X, Y, info = read_smiles_csv(path, rep, drop=True, split="split")
    assert isinstance(X, StringBatch) and X.tolist() == ["CCO", "c1ccccc1"]
    assert Y.tolist() == [[0.5], [-2.0]] and info == {"n_dropped": 1, "marks": ["train", "test"]}
    G, _ = read_molecule_file(path, dict(rep, inputs="graphs"), with_targets=False, drop=True)
    assert isinstance(G, GraphBatch) and G.to_smiles() == ["CCO", "c1ccccc1"]
    with pytest.raises(InvalidParameterError, match="--input-column"):
        read_smiles_csv(path, dict(REP, input_column="smi"))


def test_candidates_from_a_smiles_list(tmp_path):
    path = tmp_path / "c.smi"
    path.write_text("# candidates\nCCO\nnot-a-smiles\nCCN\n")
    with pytest.raises(InvalidInputError, match="line 3"):
        read_candidates(path, REP)
    C = read_candidates(path, REP, drop=True)
    assert isinstance(C, GraphBatch) and C.to_smiles() == ["CCO", "CCN"]
