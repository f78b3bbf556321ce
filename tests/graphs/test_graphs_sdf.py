"""GraphBatch.from_sdf and chem.read_sdf: SDF molecules labelled exactly as SMILES ones."""

import sys

import pytest

from skframe.exceptions import DataFormatError, DependencyError
from skframe.graphs import GraphBatch

Chem = pytest.importorskip("rdkit.Chem")

SMILES = ["CCO", "c1cc[nH]c1", "C[N+](C)(C)C", "CC(=O)[O-]", "c1ccccc1O", "C#N", "OCCO"]


def _write_sdf(path, smiles, add_hs=(), values=None):
    w = Chem.SDWriter(str(path))
    for i, s in enumerate(smiles):
        mol = Chem.MolFromSmiles(s)
        if i in add_hs:  # hydrogens written as atoms: removed on reading
            mol = Chem.AddHs(mol)
        mol.SetProp("logS", str(values[i] if values is not None else 0.5 * i))
        mol.SetProp("_Name", f"mol{i}")
        w.write(mol)
    w.close()
    return path


def test_from_sdf_labels_like_from_smiles(tmp_path):
    path = _write_sdf(tmp_path / "m.sdf", SMILES, add_hs=(0, 4))
    G = GraphBatch.from_sdf(path)
    assert len(G) == len(SMILES)
    assert G.item_keys() == GraphBatch.from_smiles(SMILES).item_keys()
    assert G.to_smiles() == [Chem.MolToSmiles(Chem.MolFromSmiles(s)) for s in SMILES]


def test_read_sdf_gives_data_fields_and_smiles(tmp_path):
    from skframe.graphs.chem import read_sdf

    path = _write_sdf(tmp_path / "m.sdf", SMILES[:3], values=[1.5, -2, 3.25])
    nodes, edges, elabels, props, smiles = read_sdf(path)
    assert [p["logS"] for p in props] == ["1.5", "-2", "3.25"]
    assert nodes[0] == ["C", "C", "O"] and edges[0] == [(0, 1), (1, 2)] and elabels[0] == ["single", "single"]
    assert smiles == ["CCO", "c1cc[nH]c1", "C[N+](C)(C)C"]


def test_malformed_record_names_its_number(tmp_path):
    good = _write_sdf(tmp_path / "good.sdf", SMILES[:3]).read_text()
    records = good.split("$$$$\n")
    lines = records[1].split("\n")
    lines[3] = "  x  y  counts line broken"
    broken = "\n".join(lines)
    (tmp_path / "bad.sdf").write_text("$$$$\n".join([records[0], broken, records[2]]))
    with pytest.raises(DataFormatError, match=r"record 2\b"):
        GraphBatch.from_sdf(tmp_path / "bad.sdf")
    (tmp_path / "empty.sdf").write_text("")
    with pytest.raises(DataFormatError, match="no SDF record"):
        GraphBatch.from_sdf(tmp_path / "empty.sdf")


def test_missing_rdkit_names_the_extra(tmp_path, monkeypatch):
    path = _write_sdf(tmp_path / "m.sdf", SMILES[:2])
    monkeypatch.setitem(sys.modules, "rdkit", None)  # import rdkit now fails
    with pytest.raises(DependencyError, match=r"\.\[chem\]"):
        GraphBatch.from_sdf(path)
