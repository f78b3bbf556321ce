import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.utils import check_random_state

from skframe.models import OutputKernelRegressor, SketchedKernelRidge, structured
from skframe.registry import get_sketch
from tests import naive
from tests._structured_helpers import GaussK, LinK, multilabel_data


def _model(**kw):
    base = dict(input_kernel=GaussK(0.2), output_kernel=GaussK(0.3), lam=1e-3, random_state=0)
    base.update(kw)
    return OutputKernelRegressor(**base)


def _naive_iokr(X, Y, Xte, C, kx, ky, lam):
    return naive.naive_iokr_scores(kx(X, X), kx(Xte, X), ky(Y, C), ky.diag(C), lam)


@pytest.mark.parametrize("sketch", ["subsample", "gaussian"])
@pytest.mark.parametrize("which", ["SIOKR", "ISOKR", "SISOKR"])
def test_full_sketches_equal_exact_iokr(sketch, which):
    X, Y = multilabel_data(n=60)
    Xte, _ = multilabel_data(n=15, seed=1)
    n = X.shape[0]
    kw = {}
    if which in ("SIOKR", "SISOKR"):
        kw.update(input_sketch=sketch, input_sketch_size=n)
    if which in ("ISOKR", "SISOKR"):
        kw.update(output_sketch=sketch, output_sketch_size=n)
    exact = _model().fit(X, Y)
    model = _model(**kw).fit(X, Y)
    S_ref = _naive_iokr(X, Y, Xte, exact.candidates_, GaussK(0.2), GaussK(0.3), 1e-3)
    np.testing.assert_allclose(exact.decision_function(Xte), S_ref, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(model.decision_function(Xte), S_ref, rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(model.predict(Xte), exact.predict(Xte))


def test_sisokr_matches_prop1_dense():
    X, Y = multilabel_data(n=70)
    Xte, _ = multilabel_data(n=10, seed=2)
    kx, ky, lam = GaussK(0.2), GaussK(0.3), 1e-3
    sx, sy = get_sketch("subsample", size=25), get_sketch("psg", size=20, p=0.2)
    model = _model(input_sketch=sx, output_sketch=sy, lam=lam, random_state=3).fit(X, Y)
    # replay the model's draws: output sketch first, then input sketch
    rng = np.random.default_rng(check_random_state(3).randint(0, 2**31 - 1))
    Ry = sy.draw(X.shape[0], rng).toarray()
    Rx = sx.draw(X.shape[0], rng).toarray()
    Kx, Ky = kx(X, X), ky(Y, Y)
    C = model.candidates_
    S_ref = naive.naive_sisokr_scores(Kx, Ky, Rx, Ry, lam, kx(Xte, X), ky(Y, C), ky.diag(C))
    np.testing.assert_allclose(model.decision_function(Xte), S_ref, rtol=1e-7, atol=1e-9)
    # the closed form helper on sketched products equals the dense evaluation
    Om = structured.sisokr_omega(Kx @ Rx.T, Rx @ Kx @ Rx.T, Ry @ Ky, Ry @ Ky @ Ry.T, lam)
    Om_ref = naive.naive_sisokr_omega(Kx, Ky, Rx, Ry, lam)
    np.testing.assert_allclose(Om, Om_ref, rtol=1e-7, atol=1e-9 * np.abs(Om_ref).max())


def test_iokr_non_normalized_kernel_bias_term():
    X, Y = multilabel_data(n=50)
    Xte, _ = multilabel_data(n=8, seed=4)
    model = _model(output_kernel=LinK()).fit(X, Y)
    C = model.candidates_
    S_ref = _naive_iokr(X, Y, Xte, C, GaussK(0.2), LinK(), 1e-3)
    np.testing.assert_allclose(model.decision_function(Xte), S_ref, rtol=1e-8, atol=1e-10)


def test_linear_output_identity_decoder_is_kernel_ridge():
    from sklearn.kernel_ridge import KernelRidge

    X, _ = multilabel_data(n=60)
    rng = np.random.default_rng(0)
    Y = X @ rng.normal(size=(5, 3)) + 0.1 * rng.normal(size=(60, 3))
    Xte = rng.normal(size=(7, 5))
    lam, n = 1e-3, 60
    ref = KernelRidge(alpha=n * lam, kernel="rbf", gamma=0.2).fit(X, Y).predict(Xte)
    krr = SketchedKernelRidge(GaussK(0.2), sketch=None, lam=lam, fit_intercept=False).fit(X, Y).predict(Xte)
    for out_sketch in (None, "subsample"):
        m = _model(output_kernel=LinK(), decoder="identity", lam=lam, output_sketch=out_sketch,
                   output_sketch_size=n).fit(X, Y)
        np.testing.assert_allclose(m.predict(Xte), ref, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(m.predict(Xte), krr, rtol=1e-6, atol=1e-8)


def test_candidates_global_per_sample_and_cache():
    X, Y = multilabel_data(n=80)
    Xte, _ = multilabel_data(n=12, seed=5)
    model = _model(input_sketch="subsample", input_sketch_size=30, output_sketch="subsample",
                   output_sketch_size=25).fit(X, Y)
    rng = np.random.default_rng(1)
    C = (rng.random((300, Y.shape[1])) > 0.5).astype(float)
    S = model.decision_function(Xte, candidates=C)
    pred = model.predict(Xte, candidates=C)
    np.testing.assert_array_equal(pred, C[np.argmax(S, axis=1)])
    assert len(model._cache) == 2  # the default set's embeddings (from fit) + the global set's
    model.predict(Xte, candidates=C)
    assert len(model._cache) == 2
    idx, sc = model.predict_topk(Xte, 7, candidates=C)
    ref_i, ref_s = naive.naive_decode_topk(S, 7)
    np.testing.assert_array_equal(idx, ref_i)
    np.testing.assert_allclose(sc, ref_s, rtol=1e-12)
    # per-sample sets of different sizes, incl. a sparse one
    sets = [C[rng.choice(300, size=int(s), replace=False)] for s in rng.integers(1, 40, size=len(Xte))]
    per = model.predict(Xte, candidates=sets)
    S_list = model.decision_function(Xte, candidates=sets)
    for i, (s, c) in enumerate(zip(S_list, sets)):
        np.testing.assert_array_equal(per[i], c[np.argmax(s)])
    sets_sp = [sp.csr_matrix(c) for c in sets]
    np.testing.assert_array_equal(model.predict(Xte, candidates=sets_sp).toarray(), per)


def test_default_candidates_and_sparse_outputs():
    X, Y = multilabel_data(n=80)
    m1 = _model(output_sketch="subsample", output_sketch_size=30).fit(X, Y)
    m2 = _model(output_sketch="subsample", output_sketch_size=30).fit(sp.csr_matrix(X), sp.csr_matrix(Y))
    np.testing.assert_allclose(m1.decision_function(X[:5]), m2.decision_function(X[:5]), rtol=1e-10)
    pred = m1.predict(X)
    assert pred.shape == Y.shape
    # predictions are training label sets
    U = {tuple(r) for r in Y}
    assert all(tuple(r) in U for r in pred)


def test_ensembles_mean_and_max():
    X, Y = multilabel_data(n=80)
    Xte, _ = multilabel_data(n=10, seed=6)
    single = [_model(output_sketch="psg", output_sketch_size=20, output_sketch_params={"p": 0.2},
                     input_sketch="subsample", input_sketch_size=40, random_state=r).fit(X, Y)
              for r in range(1)]
    for agg in ("mean", "max"):
        ens = _model(output_sketch="psg", output_sketch_size=20, output_sketch_params={"p": 0.2},
                     input_sketch="subsample", input_sketch_size=40, n_draws=3, aggregate=agg).fit(X, Y)
        assert len(ens.draws_) == 3
        S = ens.decision_function(Xte)
        G = ens.surrogate_predict(Xte)
        E = [d.basis.embed(ens.candidates_) for d in ens.draws_]
        blocks = np.array([g @ e.T for g, e in zip(G, E)])
        ref = (blocks.max(0) if agg == "max" else blocks.mean(0)) - 0.5
        np.testing.assert_allclose(S, ref, rtol=1e-10)
        idx, _ = ens.predict_topk(Xte, 3)
        np.testing.assert_array_equal(idx, naive.naive_decode_topk(S, 3)[0])
    assert single[0].score(X, Y) <= 0


def test_score_is_negative_surrogate_mse_and_gridsearch():
    from sklearn.model_selection import GridSearchCV

    X, Y = multilabel_data(n=60)
    model = _model().fit(X, Y)
    kx, ky, lam, n = GaussK(0.2), GaussK(0.3), 1e-3, 60
    Xte, Yte = multilabel_data(n=10, seed=7)
    A = np.linalg.solve(kx(X, X) + n * lam * np.eye(n), kx(Xte, X).T).T
    Ky = ky(Y, Y)
    mse = np.mean(np.einsum("ij,jk,ik->i", A, Ky, A) - 2 * np.einsum("ij,ij->i", A, ky(Yte, Y)) + 1.0)
    assert model.score(Xte, Yte) == pytest.approx(-mse, rel=1e-8)
    sk = _model(output_sketch="subsample", output_sketch_size=60).fit(X, Y)
    assert sk.score(Xte, Yte) == pytest.approx(-mse, rel=1e-6)
    gs = GridSearchCV(_model(), {"lam": [1e-4, 1e-2]}, cv=3).fit(X, Y)
    assert gs.best_params_["lam"] in (1e-4, 1e-2)


def test_embed_outputs_orthonormal_basis():
    X, Y = multilabel_data(n=60)
    m = _model(output_sketch="gaussian", output_sketch_size=20).fit(X, Y)
    P = m.embed_outputs(Y)
    assert P.shape[0] == 60 and P.shape[1] <= 20
    # <psi~(y_i), psi~(y_j)> approximates K_Y (exact on the projection): P P^T <= K_Y in the PSD order
    D = GaussK(0.3)(Y, Y) - P @ P.T
    assert np.linalg.eigvalsh(D).min() > -1e-8


def test_registered_names_and_errors():
    X, Y = multilabel_data(n=40)
    m = OutputKernelRegressor(input_kernel_params={"gamma": 0.2}, output_kernel_params={"gamma": 0.3},
                              input_sketch="subsample", input_sketch_size=20, output_sketch="psg",
                              output_sketch_size=10, random_state=0).fit(X, Y)
    assert m.predict(X[:3]).shape == (3, Y.shape[1])
    from skframe.exceptions import InvalidInputError, InvalidParameterError, NotFittedError

    with pytest.raises(InvalidParameterError):
        _model(aggregate="median").fit(X, Y)
    with pytest.raises(InvalidInputError):
        m.predict(X[:3], candidates=np.ones((4, Y.shape[1] + 1)))
    with pytest.raises(NotFittedError):
        _model().predict(X)


def test_duplicated_inputs_singular_system_still_exact():
    X, Y = multilabel_data(n=50)
    X = np.vstack([X, X[:10]])
    Y = np.vstack([Y, Y[:10]])
    Xte, _ = multilabel_data(n=9, seed=8)
    n = X.shape[0]
    exact = _model().fit(X, Y)
    sk = _model(input_sketch="subsample", input_sketch_size=n).fit(X, Y)
    np.testing.assert_allclose(sk.decision_function(Xte), exact.decision_function(Xte), rtol=1e-6, atol=1e-8)
    assert structured._has_duplicate_rows(X) and not structured._has_duplicate_rows(X[:50])


from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402


@parametrize_with_checks([OutputKernelRegressor(input_kernel_params={"gamma": 0.1},
                                                output_kernel_params={"gamma": 0.1}, lam=1e-3)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize("out_kernel", ["linear", "cosine", "tanimoto", "gaussian-tanimoto", "precomputed"])
def test_registered_output_kernels(out_kernel):
    from skframe.registry import get_kernel

    X, Y = multilabel_data(n=70)
    Y[:, 0] = 1.0  # no empty label set (cosine / Tanimoto of the zero vector)
    Xte, _ = multilabel_data(n=6, seed=9)
    if out_kernel == "precomputed":  # outputs are ids into a Gram over training outputs + extra candidates
        rng = np.random.default_rng(0)
        C_extra = (rng.random((20, Y.shape[1])) > 0.5).astype(float)
        allY = np.vstack([Y, C_extra])
        ky = get_kernel("precomputed", gram=allY @ allY.T)
        Yfit, C = np.arange(70, dtype=float)[:, None], np.arange(90, dtype=float)[:, None]
        ky_ref, Yref, Cref = LinK(), Y, allY
    else:
        ky = get_kernel(out_kernel)
        Yfit, C = Y, Y[:30]
        ky_ref, Yref, Cref = ky, Y, Y[:30]
    for out_sketch in (None, "subsample"):
        m = _model(output_kernel=ky, output_sketch=out_sketch, output_sketch_size=70).fit(X, Yfit)
        S = m.decision_function(Xte, candidates=C)
        kcc = np.diag(np.asarray(ky_ref(Cref, Cref)))
        ref = naive.naive_iokr_scores(GaussK(0.2)(X, X), GaussK(0.2)(Xte, X), np.asarray(ky_ref(Yref, Cref)), kcc, 1e-3)
        np.testing.assert_allclose(S, ref, rtol=1e-6, atol=1e-8)
        np.testing.assert_array_equal(m.predict(Xte, candidates=C), C[np.argmax(S, axis=1)])


@pytest.mark.parametrize("sketches", [{}, {"input_sketch": "subsample", "input_sketch_size": 30,
                                           "output_sketch": "psg", "output_sketch_size": 15, "n_draws": 2}])
def test_save_load_round_trip(tmp_path, sketches):
    from skframe.persistence import load, save

    X, Y = multilabel_data(n=60)
    m = OutputKernelRegressor(input_kernel_params={"gamma": 0.2}, output_kernel_params={"gamma": 0.3}, lam=1e-3,
                              random_state=0, **sketches).fit(X, Y)
    before = m.decision_function(X[:7])
    m.predict(X[:3])  # fills the default-candidate cache
    save(m, tmp_path / "m.skf")
    m2 = load(tmp_path / "m.skf")
    np.testing.assert_allclose(m2.decision_function(X[:7]), before, rtol=1e-12)
    np.testing.assert_array_equal(m2.predict(X[:7]), m.predict(X[:7]))


@pytest.mark.parametrize("out_sketch", [None, "subsample"])
def test_default_candidate_embeddings_from_fit_equal_embed(out_sketch):
    """The default candidates' embeddings cached at fit (Psi rows / the basis Gram) equal embed(candidates_)."""
    X, Y = multilabel_data(n=80)
    model = _model(input_sketch="subsample", input_sketch_size=30, output_sketch=out_sketch,
                   output_sketch_size=25, n_draws=2).fit(X, Y)
    src = model._cache.get("default")
    assert src is not None and src.cached is not None
    for E, d in zip(src.cached, model.draws_):
        ref = d.basis.embed(model.candidates_)
        np.testing.assert_allclose(E, ref, rtol=1e-10, atol=1e-10 * np.abs(ref).max())


def test_solve_psd_jitter_paths_agree():
    """Plain Cholesky, jittered Cholesky (upper triangle only) and the pseudo-inverse fallback."""
    import scipy.linalg as sla

    from skframe.linalg import pinv_sym
    from skframe.models.structured import _solve_psd_jitter

    rng = np.random.default_rng(0)
    A = rng.standard_normal((30, 20))
    B = rng.standard_normal((30, 3))
    M_full = A @ A.T + 1e-3 * np.eye(30)  # positive definite
    x = _solve_psd_jitter(np.triu(M_full).copy(order="F"), B)
    np.testing.assert_allclose(x, np.linalg.solve(M_full, B), rtol=1e-8)
    S = A @ A.T  # singular (rank 20): the jittered factorisation solves it in the range
    x = _solve_psd_jitter(np.asfortranarray(np.triu(S)), A @ rng.standard_normal((20, 3)), singular=True)
    assert np.all(np.isfinite(x))
    Indef = M_full - 5 * np.eye(30) * np.abs(np.linalg.eigvalsh(M_full)).max()  # no Cholesky succeeds
    x = _solve_psd_jitter(np.asfortranarray(sla.block_diag(Indef)), B, rebuild=lambda: M_full)
    np.testing.assert_allclose(x, pinv_sym(M_full) @ B, rtol=1e-8)
