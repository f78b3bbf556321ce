"""molecule_scores (skframe.graphs.metrics): exact match top-1 and top-k, candidates, Tanimoto, against plain counts."""

import numpy as np
import pytest

pytest.importorskip("rdkit")

from skframe.graphs import GraphBatch  # noqa: E402
from skframe.graphs.metrics import fingerprint_tanimoto, molecule_scores  # noqa: E402


def test_molecule_scores_equal_plain_counts():
    true = GraphBatch.from_smiles(["CCO", "c1ccccc1", "CCN"])
    pred = GraphBatch.from_smiles(["OCC", "CCO", "CCC"])  # right, wrong, wrong
    candidates = GraphBatch.from_smiles(["CCO", "CCC", "c1ccccc1"])  # CCN is no candidate
    ranked = np.array([[0, 1], [0, 2], [1, -1]])
    out = molecule_scores(true, pred, candidates, k=2, topk_indices=ranked)
    assert out["exact_match_top1"] == pytest.approx(1 / 3)
    assert out["truth_among_candidates"] == pytest.approx(2 / 3)
    assert out["exact_match_top2"] == pytest.approx(2 / 3)  # rows 0 and 1 find their truth among two
    tanimoto = np.mean([fingerprint_tanimoto([p], [t]) for p, t in zip(pred.to_smiles(), true.to_smiles())])
    assert out["tanimoto_top1"] == pytest.approx(tanimoto)
    assert out["n_candidates"] == 3
    assert list(molecule_scores(true, pred, candidates)) == ["exact_match_top1", "truth_among_candidates",
                                                              "tanimoto_top1", "n_candidates"]
