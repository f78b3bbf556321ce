import numpy as np
import pytest

from skframe.contract.registry import get_decoder
from skframe.exceptions import InvalidParameterError
from tests import naive


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    G = rng.normal(size=(37, 4))
    E = np.round(rng.normal(size=(503, 4)), 1)  # rounding creates exact ties
    E[100:110] = E[3]  # duplicated candidates: ties resolved by the smallest index
    return G, E


@pytest.mark.parametrize("block", [7, 100, 10_000, 4_000_000])
@pytest.mark.parametrize("k", [1, 5, 503, 600])
def test_global_topk_equals_full_sort(data, block, k):
    G, E = data
    bias = -0.5 * (E * E).sum(1)
    dec = get_decoder("candidates", block_entries=block, chunk_rows=5)
    idx, sc = dec.decode(G, candidates=E, k=k, bias=bias)
    S = G @ E.T + bias
    ref_i, ref_s = naive.naive_decode_topk(S, k)
    kk = min(k, E.shape[0])
    np.testing.assert_array_equal(idx[:, :kk], ref_i)
    np.testing.assert_allclose(sc[:, :kk], ref_s, rtol=1e-12)
    assert (idx[:, kk:] == -1).all() and np.isneginf(sc[:, kk:]).all()
    np.testing.assert_array_equal(idx[:, 0], np.argmax(S, axis=1))


def test_all_ties_pick_smallest_index():
    G = np.ones((3, 2))
    E = np.ones((50, 2))
    idx, _ = get_decoder("candidates", block_entries=10).decode(G, candidates=E, k=4)
    np.testing.assert_array_equal(idx, np.tile(np.arange(4), (3, 1)))


@pytest.mark.parametrize("agg", ["mean", "max"])
def test_ensemble_aggregation(data, agg):
    G, E = data
    rng = np.random.default_rng(1)
    G2, E2 = rng.normal(size=(37, 3)), rng.normal(size=(503, 3))
    idx, sc = get_decoder("candidates", block_entries=50).decode([G, G2], candidates=[E, E2], k=3, aggregate=agg)
    B = np.array([G @ E.T, G2 @ E2.T])
    S = B.max(0) if agg == "max" else B.mean(0)
    ref_i, ref_s = naive.naive_decode_topk(S, 3)
    np.testing.assert_array_equal(idx, ref_i)
    np.testing.assert_allclose(sc, ref_s, rtol=1e-12)


@pytest.mark.parametrize("block", [16, 400, 4_000_000])
def test_per_sample_sets(data, block):
    G, E = data
    rng = np.random.default_rng(2)
    counts = rng.integers(0, 60, size=G.shape[0])
    counts[0] = 0
    counts[1] = 2
    E_all = E[rng.integers(0, E.shape[0], size=counts.sum())]
    offsets = np.concatenate([[0], np.cumsum(counts)])
    idx, sc = get_decoder("candidates", block_entries=block).decode(G, candidates=E_all, k=3, offsets=offsets)
    for i in range(G.shape[0]):
        s = G[i] @ E_all[offsets[i]:offsets[i + 1]].T
        kk = min(3, s.shape[0])
        ref_i, ref_s = naive.naive_decode_topk(s[None, :], 3)
        np.testing.assert_array_equal(idx[i, :kk], ref_i[0])
        np.testing.assert_allclose(sc[i, :kk], ref_s[0], rtol=1e-12)
        assert (idx[i, kk:] == -1).all()


def test_candidate_source_protocol(data):
    G, E = data

    class Source:
        n_candidates = E.shape[0]
        calls = 0

        def block(self, a, b):
            Source.calls += 1
            return [E[a:b]], None

    idx, _ = get_decoder("candidates", block_entries=200, chunk_rows=10).decode(G, candidates=Source(), k=2)
    np.testing.assert_array_equal(idx, naive.naive_decode_topk(G @ E.T, 2)[0])
    assert Source.calls > 1


def test_identity_decoder_and_errors(data):
    G, E = data
    dec = get_decoder("identity")
    np.testing.assert_array_equal(dec.decode(G), G)
    B = np.ones((4, 2))
    np.testing.assert_allclose(dec.decode([G, G], basis_vectors=[B, B]), G @ B)
    with pytest.raises(InvalidParameterError):
        get_decoder("candidates").decode(G, candidates=E, aggregate="median")
    with pytest.raises(InvalidParameterError):
        get_decoder("candidates").decode(G, candidates=E, offsets=[0, 1])


def test_select_top1_breaks_ties_by_smallest_index():
    from skframe_decoders.decoders import select_topk

    rng = np.random.default_rng(7)
    S = rng.integers(0, 3, size=(50, 9)).astype(float)  # many ties
    index = rng.permutation(9)
    top_i, top_s = select_topk(S, index, 1)
    for row in range(50):
        order = np.lexsort((index, -S[row]))
        assert top_i[row, 0] == index[order[0]] and top_s[row, 0] == S[row, order[0]]
    per_row = np.tile(index, (50, 1))
    np.testing.assert_array_equal(select_topk(S, per_row, 1)[0], top_i)


def test_per_sample_blocks_respect_the_source_width(data):
    """Per-sample blocks hold at most block_entries / width candidates (a wide pool gathers small blocks)."""
    G, E = data
    counts = np.full(G.shape[0], 9)
    offsets = np.concatenate([[0], np.cumsum(counts)])
    E_all = E[: offsets[-1]]
    sizes = []

    class Wide:
        n_candidates = E_all.shape[0]
        width = 50

        def block(self, a, b):
            sizes.append(b - a)
            return [E_all[a:b]], None

    idx, _ = get_decoder("candidates", block_entries=1000).decode(G, candidates=Wide(), k=2, offsets=offsets)
    assert max(sizes) <= 1000 // 50 and sum(sizes) == E_all.shape[0]
    for i in range(G.shape[0]):
        s = G[i] @ E_all[offsets[i]:offsets[i + 1]].T
        np.testing.assert_array_equal(idx[i], naive.naive_decode_topk(s[None, :], 2)[0][0])


@pytest.mark.parametrize("precision", ["float64", "float32"])
def test_per_sample_uneven_sets_and_precision(data, precision):
    """One large set among many tiny ones (the padded layout falls back to rows), mean of two draws."""
    G, E = data
    counts = np.ones(G.shape[0], dtype=np.int64)
    counts[5] = 400
    offsets = np.concatenate([[0], np.cumsum(counts)])
    E_all = E[np.arange(offsets[-1]) % E.shape[0]]
    E2 = E_all[::-1].copy()
    dec = get_decoder("candidates", block_entries=10_000, precision=precision)
    idx, sc = dec.decode([G, G], candidates=[E_all, E2], k=3, offsets=offsets)
    for i in range(G.shape[0]):
        a, z = offsets[i], offsets[i + 1]
        s = 0.5 * (G[i] @ E_all[a:z].T + G[i] @ E2[a:z].T)
        ref_i, ref_s = naive.naive_decode_topk(s[None, :], 3)
        kk = ref_i.shape[1]
        if precision == "float64":
            np.testing.assert_array_equal(idx[i, :kk], ref_i[0])
        np.testing.assert_allclose(sc[i, :kk], ref_s[0], rtol=1e-5 if precision == "float32" else 1e-12,
                                   atol=1e-5 if precision == "float32" else 0)
        assert (idx[i, kk:] == -1).all()
