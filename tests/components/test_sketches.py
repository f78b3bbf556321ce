"""Statistical and contract tests of the built-in sketching distributions.

Statistical claims are checked with fixed seeds against CLT bounds (5 sigma), so a
correct implementation fails with negligible probability and the outcome is
deterministic.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics.pairwise import rbf_kernel

from skframe.contract.registry import get_sketch
from skframe.core.sketching import SketchMatrix, from_entries
from skframe.exceptions import InvalidParameterError
from skframe_sketches.sketches import (
    AccumulationSketch,
    CountSketch,
    GaussianSketch,
    LeverageScoreSketch,
    PSGSketch,
    PSparsifiedSketch,
    PSRSketch,
    RandomFourierFeatures,
    SubSampleSketch,
)
from tests.naive import RBF, ArrayRows, ArrayRowsRBF, naive_rff_features, naive_truncated_binomial_pmf

N_SMALL = 8
X_SMALL = np.random.default_rng(123).normal(size=(N_SMALL, 3))

RANDOM_SKETCHES = {
    "subsample": lambda: SubSampleSketch(4),
    "subsample-replace": lambda: SubSampleSketch(4, replace=True),
    "leverage": lambda: LeverageScoreSketch(4, lam=1e-2),
    "gaussian": lambda: GaussianSketch(4),
    "psr": lambda: PSparsifiedSketch(4, p=0.3, distribution="rademacher"),
    "psg": lambda: PSparsifiedSketch(4, p=0.3, distribution="gaussian"),
    "psr-p1": lambda: PSparsifiedSketch(4, p=1.0),
    "accumulation": lambda: AccumulationSketch(4, n_terms=3),
    "countsketch": lambda: CountSketch(4),
}


def _draw(sketch, n, seed):
    return sketch.draw(n, np.random.default_rng(seed), X=X_SMALL[:n], kernel=RBF(0.5))


def _within(mean, sd, draws, expected, sigmas=5.0):
    """|mean - expected| <= sigmas * sd / sqrt(draws), elementwise (CLT bound)."""
    bound = sigmas * sd / np.sqrt(draws) + 1e-12
    bad = np.abs(mean - expected) > bound
    return not bad.any(), np.argwhere(bad)


@pytest.mark.parametrize("name", sorted(RANDOM_SKETCHES))
def test_isometry_in_expectation(name):
    """E[R^T R] = I_n, entrywise within a 5-sigma CLT bound over 400 fixed-seed draws."""
    sketch = RANDOM_SKETCHES[name]()
    draws = 400
    acc = np.zeros((N_SMALL, N_SMALL))
    acc2 = np.zeros((N_SMALL, N_SMALL))
    for seed in range(draws):
        R = _draw(sketch, N_SMALL, seed).toarray()
        G = R.T @ R
        acc += G
        acc2 += G * G
    mean = acc / draws
    sd = np.sqrt(np.clip(acc2 / draws - mean**2, 0, None) * draws / (draws - 1))
    ok, where = _within(mean, sd, draws, np.eye(N_SMALL))
    assert ok, f"{name}: E[R^T R] differs from I at {where.tolist()}: mean=\n{mean}"


@pytest.mark.parametrize("name", sorted(RANDOM_SKETCHES))
def test_same_seed_same_sketch(name):
    sketch = RANDOM_SKETCHES[name]()
    a, b = _draw(sketch, N_SMALL, 7), _draw(sketch, N_SMALL, 7)
    np.testing.assert_array_equal(a.indices, b.indices)
    np.testing.assert_array_equal(a.toarray(), b.toarray())
    c = _draw(sketch, N_SMALL, 8)
    assert not np.array_equal(a.toarray(), c.toarray())


@pytest.mark.parametrize("name", ["psr", "psg", "subsample", "gaussian", "accumulation", "countsketch", "leverage"])
def test_registered_names_same_seed(name):
    sketch = get_sketch(name, size=3)
    a = sketch.draw(N_SMALL, np.random.default_rng(1), X=X_SMALL, kernel=RBF(0.5))
    b = get_sketch(name, size=3).draw(N_SMALL, np.random.default_rng(1), X=X_SMALL, kernel=RBF(0.5))
    assert a.shape == (3, N_SMALL)
    np.testing.assert_array_equal(a.toarray(), b.toarray())


def test_nystrom_alias_is_subsample():
    assert isinstance(get_sketch("nystrom", size=3), SubSampleSketch)


# ------------------------------------------------------------------ p-sparsified laws


def _psparse_draws(m, n, p, draws, distribution="rademacher", seed0=0):
    sk = PSparsifiedSketch(m, p=p, distribution=distribution)
    return [sk.draw(n, np.random.default_rng(seed0 + i)) for i in range(draws)]


def _check_moments(samples, mean, var, mu4, label):
    """Sample mean and sample variance against their exact values, 5-sigma bounds."""
    samples = np.asarray(samples, dtype=float)
    N = samples.size
    m_hat = samples.mean()
    assert abs(m_hat - mean) <= 5 * np.sqrt(var / N), f"{label}: mean {m_hat} vs {mean}"
    v_hat = samples.var(ddof=1)
    sd_v = np.sqrt((mu4 - var**2) / N)  # asymptotic sd of the sample variance
    assert abs(v_hat - var) <= 5 * sd_v, f"{label}: variance {v_hat} vs {var} (sd {sd_v})"


def _binomial_mu4(N, q):
    v = N * q * (1 - q)
    return v * (1 + 3 * (N - 2) * q * (1 - q))


def test_psparsified_s_prime_and_nnz_binomial_laws():
    m, n, p, draws = 6, 60, 0.04, 2000
    Rs = _psparse_draws(m, n, p, draws)
    q = 1 - (1 - p) ** m
    s = [R.s_prime for R in Rs]
    _check_moments(s, n * q, n * q * (1 - q), _binomial_mu4(n, q), "s'")
    # The entries are i.i.d. Bernoulli(p) non-zeros, so nnz ~ Binomial(m n, p).
    nnz = [R.nnz for R in Rs]
    _check_moments(nnz, m * n * p, m * n * p * (1 - p), _binomial_mu4(m * n, p), "nnz")
    # The number of non-null columns of the dense matrix is s' (no stored all-zero column).
    for R in Rs[:50]:
        assert np.count_nonzero(np.abs(R.toarray()).sum(0)) == R.s_prime


def test_psparsified_column_counts_truncated_binomial():
    m, n, p, draws = 6, 40, 0.3, 300
    counts = np.zeros(m + 1)
    for R in _psparse_draws(m, n, p, draws):
        per_col = np.diff(sp.csc_matrix(R.mix).indptr)
        assert per_col.min() >= 1
        counts += np.bincount(per_col, minlength=m + 1)
    total = counts.sum()
    freq = counts[1:] / total
    pmf = naive_truncated_binomial_pmf(m, p)
    sd = np.sqrt(pmf * (1 - pmf) / total)
    assert np.all(np.abs(freq - pmf) <= 5 * sd + 1e-12), (freq, pmf)


def test_psparsified_entries_uniform_bernoulli():
    """Every entry of R is non-zero with probability p (columns and rows are uniform)."""
    m, n, p, draws = 5, 12, 0.2, 1500
    hits = np.zeros((m, n))
    for R in _psparse_draws(m, n, p, draws, seed0=10_000):
        hits += R.toarray() != 0
    freq = hits / draws
    sd = np.sqrt(p * (1 - p) / draws)
    assert np.all(np.abs(freq - p) <= 5 * sd), freq


def test_psr_values_and_signs():
    m, n, p = 7, 300, 0.05
    Rs = _psparse_draws(m, n, p, 50)
    vals = np.concatenate([R.mix.data for R in Rs])
    np.testing.assert_allclose(np.abs(vals), 1 / np.sqrt(m * p), rtol=1e-15)
    frac = np.mean(vals > 0)
    assert abs(frac - 0.5) <= 5 * np.sqrt(0.25 / vals.size)


def test_psg_values_gaussian():
    m, n, p = 7, 300, 0.05
    Rs = _psparse_draws(m, n, p, 100, distribution="gaussian")
    z = np.concatenate([R.mix.data for R in Rs]) * np.sqrt(m * p)
    N = z.size
    assert abs(z.mean()) <= 5 / np.sqrt(N)
    assert abs(z.var() - 1) <= 5 * np.sqrt(2 / N)
    assert abs(np.mean(z**4) - 3) <= 5 * np.sqrt(96 / N)


def test_psparsified_p_one_is_dense_rademacher():
    m, n = 4, 9
    R = PSparsifiedSketch(m, p=1.0).draw(n, np.random.default_rng(0))
    assert R.s_prime == n and R.nnz == m * n
    np.testing.assert_allclose(np.abs(R.toarray()), 1 / np.sqrt(m))


def test_psparsified_default_p_is_20_over_n():
    sk = PSparsifiedSketch(10)
    assert sk.resolved_p(1000) == pytest.approx(0.02)
    assert sk.resolved_p(10) == 1.0
    R = sk.draw(1000, np.random.default_rng(0))
    assert R.summary()["p"] == pytest.approx(0.02)
    assert get_sketch("psr", size=5).name == "psr"
    assert get_sketch("psg", size=5).name == "psg"


def test_subsample_without_replacement_distinct_and_scaled():
    n, m = 20, 6
    R = SubSampleSketch(m).draw(n, np.random.default_rng(0))
    assert R.s_prime == m and len(set(R.indices.tolist())) == m
    D = R.toarray()
    np.testing.assert_allclose(np.sort(np.abs(D[D != 0])), np.full(m, np.sqrt(n / m)))
    np.testing.assert_array_equal((D != 0).sum(1), np.ones(m))


def test_countsketch_one_entry_per_column():
    R = CountSketch(3).draw(10, np.random.default_rng(0))
    D = R.toarray()
    np.testing.assert_array_equal((D != 0).sum(0), np.ones(10))
    np.testing.assert_allclose(np.abs(D[D != 0]), 1.0)


def test_leverage_scores_match_exact_when_presample_is_everything():
    """With n_approx = n the Nyström factor is exact, so the scores are the exact ridge leverage scores."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    kern = RBF(0.3)
    lam = 1e-2
    sk = LeverageScoreSketch(5, lam=lam, n_approx=30)
    lev = sk.scores(X, kern, np.random.default_rng(1))
    K = kern(X)
    exact = np.diag(K @ np.linalg.inv(K + 30 * lam * np.eye(30)))
    np.testing.assert_allclose(lev, exact, rtol=1e-6, atol=1e-10)


def test_leverage_needs_data():
    with pytest.raises(InvalidParameterError, match="training data"):
        LeverageScoreSketch(3).draw(10, np.random.default_rng(0))


def test_rff_is_not_a_sketch_matrix():
    rff = RandomFourierFeatures(5)
    with pytest.raises(InvalidParameterError, match="feature map"):
        rff.draw(10, np.random.default_rng(0))


@pytest.mark.parametrize("name", ["gaussian", "rbf", "laplacian"])
def test_rff_approximates_shift_invariant_kernels(name):
    from skframe.contract.registry import get_kernel

    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 3))
    kern = get_kernel(name, gamma=0.2)
    fmap = RandomFourierFeatures(20000).fit_features(kern, X, np.random.default_rng(1))
    Z = fmap.transform(X)
    assert np.abs(Z @ Z.T - kern(X)).max() < 0.05
    np.testing.assert_allclose(Z, naive_rff_features(X, fmap.W.T, fmap.b), rtol=1e-12, atol=1e-12)


def test_rff_uses_the_kernel_spectral_sampler_not_its_name():
    """A third-party kernel named like nothing known works through its sampler; the stream is reproducible."""

    from skframe.plugin.api import KernelTags

    class Bump(RBF):
        __skframe_tags__ = KernelTags(spectral_sampler=True)

        def spectral_sampler(self, d, m, rng):
            return rng.standard_normal((m, d)) * np.sqrt(2.0 * self.gamma)

    X = np.random.default_rng(0).normal(size=(15, 2))
    fmap = RandomFourierFeatures(20000).fit_features(Bump(0.3), X, np.random.default_rng(4))
    Z = fmap.transform(X)
    assert np.abs(Z @ Z.T - rbf_kernel(X, gamma=0.3)).max() < 0.05
    again = RandomFourierFeatures(20000).fit_features(Bump(0.3), X, np.random.default_rng(4))
    np.testing.assert_array_equal(again.W, fmap.W)


def test_rff_prepares_a_scale_kernel_on_the_data():
    from skframe_kernels import GaussianKernel

    X = np.random.default_rng(0).normal(size=(30, 3)) * 5.0
    fmap = RandomFourierFeatures(30000).fit_features(GaussianKernel(), X, np.random.default_rng(2))
    Z = fmap.transform(X)
    assert np.abs(Z @ Z.T - GaussianKernel().prepare(X)(X)).max() < 0.05


@pytest.mark.parametrize("kern", [RBF(0.2), "linear"])
def test_rff_without_spectral_sampler_names_the_kernels_that_have_one(kern):
    from skframe.contract.registry import get_kernel

    kern = get_kernel(kern) if isinstance(kern, str) else kern
    with pytest.raises(InvalidParameterError, match="spectral_sampler.*gaussian.*laplacian"):
        RandomFourierFeatures(5).fit_features(kern, np.ones((4, 2)), np.random.default_rng(0))


def test_psr_psg_signatures_list_p():
    """Unknown-parameter messages list every accepted parameter, p included."""
    from skframe.contract.registry import _accepted_hint

    for cls, dist in ((PSRSketch, "rademacher"), (PSGSketch, "gaussian")):
        hint = _accepted_hint(cls, {"q": 0.1})
        assert "size" in hint and "p" in hint.split(":")[1]
        sk = cls(7, p=0.2)
        assert sk.distribution == dist and sk.params == {"size": 7, "p": 0.2}
        assert type(sk)(**sk.params).params == sk.params
        with pytest.raises(TypeError):
            cls(7, q=0.1)


def test_leverage_sketch_accepts_an_input_collection():
    X = np.random.default_rng(0).normal(size=(40, 3))
    sk = LeverageScoreSketch(6, lam=1e-2)
    R_arr = sk.draw(40, np.random.default_rng(3), X=X, kernel=RBF(0.5))
    R_col = sk.draw(40, np.random.default_rng(3), X=ArrayRows(X), kernel=ArrayRowsRBF(0.5))
    np.testing.assert_array_equal(R_arr.indices, R_col.indices)
    np.testing.assert_allclose(R_arr.toarray(), R_col.toarray(), rtol=1e-12)


# ------------------------------------------------------------------ parameter validation


@pytest.mark.parametrize("p", [0, -0.1, 1.5, np.nan])
def test_bad_p(p):
    with pytest.raises(InvalidParameterError, match="p"):
        PSparsifiedSketch(5, p=p)


@pytest.mark.parametrize("size", [0, -3])
@pytest.mark.parametrize("cls", [SubSampleSketch, GaussianSketch, PSparsifiedSketch, AccumulationSketch, CountSketch,
                                 LeverageScoreSketch])
def test_bad_size(cls, size):
    with pytest.raises(InvalidParameterError):
        cls(size)


@pytest.mark.parametrize("name", ["psr", "psg", "gaussian", "countsketch", "subsample"])
def test_size_larger_than_n(name):
    sk = get_sketch(name, size=11)
    with pytest.raises(InvalidParameterError, match=r"m=11.*n_samples=10"):
        sk.draw(10, np.random.default_rng(0))


def test_registry_size_zero():
    with pytest.raises(InvalidParameterError):
        get_sketch("psr", size=0)


def test_other_bad_parameters():
    with pytest.raises(InvalidParameterError):
        SubSampleSketch(3, replace="yes")
    with pytest.raises(InvalidParameterError):
        AccumulationSketch(3, n_terms=0)
    with pytest.raises(InvalidParameterError):
        PSparsifiedSketch(3, distribution="cauchy")
    with pytest.raises(InvalidParameterError):
        LeverageScoreSketch(3, lam=0)


# ------------------------------------------------------------------ SketchMatrix


@pytest.mark.parametrize("name", ["psr", "gaussian", "accumulation", "subsample-replace", "countsketch"])
def test_sketch_matrix_apply_consistency(name):
    n = N_SMALL
    R = _draw(RANDOM_SKETCHES[name](), n, 3)
    D = R.toarray()
    rng = np.random.default_rng(0)
    V = rng.normal(size=(n, 3))
    v = rng.normal(size=n)
    G = rng.normal(size=(R.m, 2))
    np.testing.assert_allclose(R.apply(V), D @ V, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(R.apply(v), D @ v, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(R.apply_transpose(G), D.T @ G, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(R.apply_transpose(G[:, 0]), D.T @ G[:, 0], rtol=1e-12, atol=1e-12)
    assert R.shape == D.shape
    assert R.nnz == np.count_nonzero(D)
    s = R.summary()
    assert s["m"] == R.m and s["n"] == n and s["s_prime"] == R.s_prime and s["nnz"] == R.nnz


def test_sketch_matrix_repeated_indices_are_summed():
    R = SketchMatrix(n=4, indices=[1, 1, 3], mix=np.array([[1.0, 2.0, 0.0], [0.0, 1.0, 5.0]]))
    D = R.toarray()
    np.testing.assert_array_equal(D, [[0, 3, 0, 0], [0, 1, 0, 5]])
    V = np.arange(8.0).reshape(4, 2)
    np.testing.assert_allclose(R.apply(V), D @ V)
    np.testing.assert_allclose(R.apply_transpose(np.ones(2)), D.T @ np.ones(2))


def test_from_entries_sums_duplicates():
    R = from_entries(5, 2, rows=[0, 0, 1], cols=[3, 3, 1], values=[1.0, 2.0, -1.0])
    np.testing.assert_array_equal(R.indices, [1, 3])
    np.testing.assert_array_equal(R.toarray(), [[0, 0, 0, 3, 0], [0, -1, 0, 0, 0]])
    assert R.nnz == 2


def test_sketch_matrix_validation():
    from skframe.exceptions import PluginError

    with pytest.raises(PluginError):
        SketchMatrix(n=3, indices=[0, 1], mix=np.ones((2, 3)))
    with pytest.raises(PluginError):
        SketchMatrix(n=3, indices=[0, 5], mix=np.ones((2, 2)))


@pytest.mark.parametrize("m,c", [(6, 3), (7, 2), (6, 5)])
def test_distinct_rows_uniform_subsets(m, c):
    """Rows of a column are a uniform c-subset of range(m) (collision redraws keep the law exact)."""
    from itertools import combinations

    from skframe_sketches._psparsified import _distinct_rows

    cols = 20000
    rows, col = _distinct_rows(np.full(cols, c), m, np.random.default_rng(0))
    np.testing.assert_array_equal(col, np.repeat(np.arange(cols), c))
    sets = np.sort(rows.reshape(cols, c), axis=1)
    assert np.all(np.diff(sets, axis=1) > 0)
    subsets = {s: i for i, s in enumerate(combinations(range(m), c))}
    freq = np.bincount([subsets[tuple(r)] for r in sets.tolist()], minlength=len(subsets)) / cols
    q = 1 / len(subsets)
    assert np.all(np.abs(freq - q) <= 5 * np.sqrt(q * (1 - q) / cols)), freq
