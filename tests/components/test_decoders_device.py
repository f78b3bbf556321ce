"""The candidate decoder on device arrays: scores and the top-k cut in the namespace of the inputs.

Run with a fake device namespace (:mod:`tests.fake_namespace`, which refuses implicit host
conversions) against the plain top-k of the full score matrix, ties included.
"""

import numpy as np
import pytest

from skframe.contract.registry import get_decoder
from skframe_decoders.decoders import contenders, select_topk
from tests.fake_namespace import FAKE, fake
from tests.naive import naive_decode_topk


def _problem(n=37, n_c=500, p=6, seed=0, ties=False):
    rng = np.random.default_rng(seed)
    G = rng.normal(size=(n, p))
    E = rng.normal(size=(n_c, p))
    if ties:  # integer scores: many equal values, at the k-th place too
        G, E = np.round(G), np.round(E)
    return G, E


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("k", [1, 3, 10])
def test_device_decode_equals_the_full_score_matrix(ties, k):
    G, E = _problem(ties=ties)
    bias = -0.5 * np.round(np.sum(E * E, axis=1))
    decoder = get_decoder("candidates", block_entries=2000)  # several candidate blocks: the merge runs too
    ref_i, ref_s = naive_decode_topk(G @ E.T + bias, k)
    FAKE.reset()
    idx, scores = decoder.decode(fake(G), candidates=fake(E), k=k, bias=fake(bias))
    np.testing.assert_array_equal(idx, ref_i)
    np.testing.assert_allclose(scores, ref_s, rtol=1e-12)
    assert FAKE.transfers < G.shape[0] * E.shape[0]  # the score matrix never came to the host
    host_i, _ = decoder.decode(G, candidates=E, k=k, bias=bias)
    np.testing.assert_array_equal(host_i, ref_i)


def test_device_decode_of_ensembles_and_per_sample_sets():
    G, E = _problem(n=12, n_c=90)
    G2 = G[:, ::-1].copy()
    decoder = get_decoder("candidates")
    for aggregate in ("mean", "max"):
        ref = decoder.decode([G, G2], candidates=[E, E], k=4, aggregate=aggregate)
        dev = decoder.decode([fake(G), fake(G2)], candidates=[fake(E), fake(E)], k=4, aggregate=aggregate)
        np.testing.assert_array_equal(dev[0], ref[0])
        np.testing.assert_allclose(dev[1], ref[1], rtol=1e-12)
    offsets = np.array([0, 5, 5, 30, 31] + list(range(40, 90, 6)) + [90])[: 12 + 1]
    offsets[-1] = 90
    ref = decoder.decode(G, candidates=E, k=3, offsets=offsets)
    dev = decoder.decode(fake(G), candidates=fake(E), k=3, offsets=offsets)
    np.testing.assert_array_equal(dev[0], ref[0])
    np.testing.assert_allclose(dev[1], ref[1], rtol=1e-12)


def test_contenders_keep_every_entry_that_can_reach_the_top_k():
    S = np.array([[5.0, 1.0, 5.0, 3.0, 5.0, 0.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]])
    idx = np.arange(6) + 100
    cut_s, cut_i = contenders(fake(S), idx, 2)
    assert cut_s.shape == (2, 3)  # row 0 has three entries tied at its 2nd best score
    assert sorted(cut_i[0].tolist()) == [100, 102, 104] and sorted(cut_i[1].tolist())[-2:] == [104, 105]
    top_i, top_s = select_topk(cut_s, cut_i, 2)
    assert top_i.tolist() == [[100, 102], [105, 104]] and top_s.tolist() == [[5.0, 5.0], [6.0, 5.0]]
    host_s, host_i = contenders(S, idx, 2)  # host scores: unchanged
    assert host_s is S or np.shares_memory(host_s, S)
    assert host_i.shape == S.shape
