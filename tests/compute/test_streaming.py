"""Streamed accumulation: equal to the in-memory sketched ridge for every chunking and input kind."""

import numpy as np
import pytest
from sklearn.utils import check_random_state

from skframe import SketchedKernelRidge
from skframe.compute.stream_problems import (
    StreamedFeatureProblem,
    feature_projection,
    make_feature_problem,
)
from skframe.compute.streaming import (
    StreamSums,
    accumulate,
    chunk_sums,
    fit_sketched_ridge,
    gather_rows,
    iter_rows,
    predict_chunks,
    sketch_gram,
)
from skframe.contract.problems import ArrayProblem
from skframe.core.sketching import draw_sketch
from skframe.exceptions import InvalidInputError, InvalidParameterError
from skframe.models._base import resolve_kernel, resolve_sketch
from skframe.options import ComputeOptions
from tests.naive import naive_gaussian
from tests.tolerances import assert_normwise_close, gaussian_float32_perturbation, sketched_ridge_conditions, solve_rtol

GAMMA, LAM, M = 2.0, 1e-3, 40


def _data(n=1200, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    Y = np.column_stack([np.sin(4 * X[:, 0]), X[:, 1] * X[:, 2]]) + 0.05 * rng.normal(size=(n, 2))
    return X, Y


def _reference(X, Y, sketch, seed=1):
    """In-memory model and the same sketch draw it used."""
    model = SketchedKernelRidge(kernel_params={"gamma": GAMMA}, sketch=sketch, sketch_size=M, lam=LAM,
                                fit_intercept=False, random_state=seed).fit(X, Y)
    kernel = resolve_kernel("gaussian", {"gamma": GAMMA})
    rng = np.random.default_rng(check_random_state(seed).randint(0, 2**31 - 1))
    R = draw_sketch(resolve_sketch(sketch, M, None), X.shape[0], rng, X=X, kernel=kernel)
    return model, kernel, R


@pytest.mark.parametrize("sketch", ["subsample", "psr", "gaussian", "countsketch"])
@pytest.mark.parametrize("chunk_rows", [97, 500, 5000])
def test_streamed_equals_in_memory(sketch, chunk_rows):
    X, Y = _data()
    model, kernel, R = _reference(X, Y, sketch)
    res = fit_sketched_ridge(kernel, X, Y, R, LAM, options=ComputeOptions(chunk_rows=chunk_rows))
    np.testing.assert_allclose(res.coef, model.coef_, rtol=1e-8, atol=1e-10 * np.abs(model.coef_).max())
    np.testing.assert_allclose(res.X_sub, model.X_fit_)


def test_memmap_and_chunk_iterables(tmp_path):
    X, Y = _data()
    model, kernel, R = _reference(X, Y, "subsample")
    path = tmp_path / "X.npy"
    np.save(path, X)
    Xm = np.load(path, mmap_mode="r")
    opts = ComputeOptions(chunk_rows=300)
    res = fit_sketched_ridge(kernel, Xm, Y, R, LAM, options=opts)
    np.testing.assert_allclose(res.coef, model.coef_, rtol=1e-8)
    # an iterable of (X_chunk, Y_chunk) pairs, and a callable giving X chunks with y alongside
    pairs = [(X[i:i + 250], Y[i:i + 250]) for i in range(0, len(X), 250)]
    res2 = fit_sketched_ridge(kernel, pairs, None, R, LAM, options=opts)
    np.testing.assert_allclose(res2.coef, model.coef_, rtol=1e-8)
    res3 = fit_sketched_ridge(kernel, lambda: (X[i:i + 333] for i in range(0, len(X), 333)), Y, R, LAM)
    np.testing.assert_allclose(res3.coef, model.coef_, rtol=1e-8)
    # a re-readable source of (X, y) pairs (a chunked file reader): count, draw, fit
    from skframe.compute.streaming import count_rows

    source = lambda: ((X[i:i + 256], Y[i:i + 256]) for i in range(0, len(X), 256))  # noqa: E731
    assert count_rows(source) == len(X) == count_rows(Xm)
    res4 = fit_sketched_ridge(kernel, source, None, R, LAM)
    np.testing.assert_allclose(res4.coef, model.coef_, rtol=1e-8)
    # predictions streamed into a memory-mapped output
    out = np.lib.format.open_memmap(tmp_path / "pred.npy", mode="w+", shape=(len(X), 2))
    predict_chunks(kernel, Xm, res.X_sub, res.coef, chunk_rows=128, out=out)
    np.testing.assert_allclose(np.asarray(out), model.predict(X), rtol=1e-8, atol=1e-10)


def test_accumulated_sums_match_plain_formulas():
    X, Y = _data(300)
    _, kernel, R = _reference(X, Y, "psr")
    X_sub = X[R.indices]
    KR = naive_gaussian(X, X_sub, GAMMA) @ R.mix.T.toarray()
    sums = accumulate(kernel, X, Y, X_sub, R.mix, chunk_rows=64)
    C, b, kr = sums.products()
    np.testing.assert_allclose(C, KR.T @ KR, rtol=1e-10)
    np.testing.assert_allclose(b, KR.T @ Y, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(kr, KR.sum(axis=0), rtol=1e-10)
    assert sums.n == 300
    np.testing.assert_allclose(sums.y_sum, Y.sum(axis=0))
    np.testing.assert_allclose(sums.y_sq, (Y * Y).sum(axis=0))
    K_ss = naive_gaussian(X_sub, X_sub, GAMMA)
    mix = R.mix.toarray()
    np.testing.assert_allclose(sketch_gram(kernel, X_sub, R.mix, chunk_rows=7), mix @ K_ss @ mix.T, rtol=1e-10)


def test_map_reduce_is_order_free():
    X, Y = _data(400)
    _, kernel, R = _reference(X, Y, "subsample")
    X_sub = X[R.indices]
    parts = [chunk_sums(kernel, X[i:i + 100], Y[i:i + 100], X_sub, R.mix) for i in range(0, 400, 100)]
    forward = sum(parts[1:], parts[0]).products()[0]
    backward = sum(parts[-2::-1], parts[-1]).products()[0]
    np.testing.assert_allclose(forward, backward, rtol=1e-12)
    empty = chunk_sums(kernel, X[:0], Y[:0], X_sub, R.mix)
    np.testing.assert_allclose((parts[0] + empty).products()[0], parts[0].products()[0])


@pytest.mark.parametrize("sketch", ["subsample", "psr"])
def test_float32_within_tolerance(sketch):
    """float32 blocks, centred products accumulated in float64: predictions within 1e-3 relative."""
    X, Y = _data(2000)
    model, kernel, R = _reference(X, Y, sketch)
    opts = ComputeOptions(dtype="float32", chunk_rows=512)
    res = fit_sketched_ridge(kernel, X, Y, R, LAM, options=opts)
    pred = predict_chunks(kernel, X, res.X_sub, res.coef, options=opts)
    ref = model.predict(X)
    assert np.max(np.abs(pred - ref)) <= 1e-3 * np.max(np.abs(ref))
    mse32, mse64 = np.mean((pred - Y) ** 2), np.mean((ref - Y) ** 2)
    assert abs(mse32 - mse64) <= 1e-3 * mse64


def test_product_precision_follows_conditioning():
    from skframe.compute.streaming import product_precision

    assert product_precision([1.0, 0.5], "float64") == "float64"
    assert product_precision([1.0, 1e-3], "float32") == "float32"
    assert product_precision([1.0, 1e-6], "float32") == "float64"
    X, Y = _data(600)
    kernel = resolve_kernel("gaussian", {"gamma": 20.0})  # narrow kernel, few points: well conditioned
    R = draw_sketch(resolve_sketch("subsample", 8, None), len(X), np.random.default_rng(0))
    res = fit_sketched_ridge(kernel, X, Y, R, LAM, options=ComputeOptions(dtype="float32"))
    assert res.info["products"] == "float32"
    ref = fit_sketched_ridge(kernel, X, Y, R, LAM)
    # float32 kernel blocks perturb every entry by ~eps32 (1 + gamma ||x||^2); the solve amplifies that by
    # its conditioning (the bound is normwise: one small coefficient may move more, by the BLAS kernel used)
    kappa, kappa_rkr = sketched_ridge_conditions(kernel, X, R, LAM)
    delta = gaussian_float32_perturbation(X, X[R.indices], 20.0)
    assert_normwise_close(res.coef, ref.coef, solve_rtol(kappa * kappa_rkr, delta))
    wide = resolve_kernel("gaussian", {"gamma": 0.5})  # m = 40 on 4 features: kappa ~ 5e6, products in float64
    R = draw_sketch(resolve_sketch("subsample", 40, None), len(X), np.random.default_rng(0))
    res = fit_sketched_ridge(wide, X, Y, R, LAM, options=ComputeOptions(dtype="float32"))
    assert res.info["products"] == "float64"
    ref = fit_sketched_ridge(wide, X, Y, R, LAM)
    pred, pred_ref = naive_gaussian(X, res.X_sub, 0.5) @ res.coef, naive_gaussian(X, ref.X_sub, 0.5) @ ref.coef
    assert np.max(np.abs(pred - pred_ref)) <= 1e-4 * np.max(np.abs(pred_ref))


def test_wrong_lengths_are_refused():
    X, Y = _data(200)
    _, kernel, R = _reference(X, Y, "subsample")
    with pytest.raises(InvalidInputError, match="rows"):
        list(iter_rows(X, Y[:10], 50))
    pairs = [(X[:100], Y[:100])]
    with pytest.raises(InvalidInputError, match="n=200"):
        fit_sketched_ridge(kernel, pairs, None, R, LAM, X_sub=X[R.indices])


def test_gather_rows_from_chunks():
    X, _ = _data(500)
    idx = np.array([499, 3, 250, 3, 0])
    np.testing.assert_array_equal(gather_rows(lambda: (X[i:i + 64] for i in range(0, 500, 64)), idx), X[idx])
    np.testing.assert_array_equal(gather_rows(X, idx), X[idx])


def test_sums_reduce_with_builtin_sum():
    X, Y = _data(200)
    _, kernel, R = _reference(X, Y, "subsample")
    parts = [chunk_sums(kernel, X[i:i + 50], Y[i:i + 50], X[R.indices], R.mix) for i in range(0, 200, 50)]
    total = sum(parts)
    assert isinstance(total, StreamSums) and total.n == 200


# ------------------------------------------------------------------ iterative losses


def _huber():
    from skframe.contract.registry import get_loss

    return get_loss("huber")


# 3 000 x 40 features (0.96 MB): kept beside the stream's buffers in 3 MB, not in 1 MB
@pytest.mark.parametrize("budget,expected", [(None, "in-memory"), ("3MB", "in-memory"), ("1MB", "streamed")])
def test_feature_problem_representation(budget, expected):
    X, Y = _data(3000)
    _, kernel, R = _reference(X, Y, "subsample")
    X_sub = X[R.indices]
    proj, _ = feature_projection(kernel, X_sub, R.mix)
    problem, rep = make_feature_problem(kernel, X, Y, X_sub, proj, ComputeOptions(memory_budget=budget))
    assert rep == expected
    Z = naive_gaussian(X, X_sub, GAMMA) @ proj
    A, B = problem.gram()
    np.testing.assert_allclose(A, Z.T @ Z, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(B, Z.T @ Y, rtol=1e-9, atol=1e-9)
    blocks = list(problem.blocks(1000))
    np.testing.assert_allclose(np.vstack([b[1] for b in blocks]), Z, rtol=1e-9, atol=1e-12)


def _streamed_and_dense(n, chunk_rows):
    """A p-SR streamed feature problem of n rows and the same problem with its features in memory."""
    X, Y = _data(n)
    _, kernel, R = _reference(X, Y, "psr")
    X_sub = X[R.indices]
    proj, _ = feature_projection(kernel, X_sub, R.mix)
    streamed = StreamedFeatureProblem(kernel, X, Y, X_sub, proj, ComputeOptions(chunk_rows=chunk_rows))
    return streamed, ArrayProblem(naive_gaussian(X, X_sub, GAMMA) @ proj, Y)


def test_streamed_iterative_loss_equals_in_memory():
    from skframe.contract.registry import get_solver
    from skframe_solvers._problem import FeatureMapProblem

    loss = _huber()
    streamed, dense = _streamed_and_dense(1500, 211)
    proj = streamed.proj
    W = np.random.default_rng(0).normal(size=(proj.shape[1], 2))
    v1, g1 = FeatureMapProblem(streamed, loss, LAM).value_and_grad(W)
    v2, g2 = FeatureMapProblem(dense, loss, LAM).value_and_grad(W)
    assert v1 == pytest.approx(v2, rel=1e-10)
    np.testing.assert_allclose(g1, g2, rtol=1e-9, atol=1e-12)
    solver = get_solver("lbfgs", max_iter=50, init="zeros")
    r1, r2 = solver.solve(streamed, loss, LAM), solver.solve(dense, loss, LAM)
    np.testing.assert_allclose(r1.W, r2.W, rtol=1e-8, atol=1e-10)
    assert r1.info["function_evaluations"] >= r1.n_iter


# ------------------------------------------------------------------ model representation


@pytest.mark.parametrize("sketch", ["subsample", "psr"])
def test_streamed_representation_gives_in_memory_problem(sketch):
    """Square loss from the sums for shifted (centred) targets, and feature blocks for iterative losses."""
    from skframe.compute.stream_fit import options_from, streamed_representation
    from skframe.core.feature_map import build_feature_map

    X, Y = _data(900)
    kernel = resolve_kernel("gaussian", {"gamma": GAMMA})
    sk = resolve_sketch(sketch, M, None)
    opts = ComputeOptions(memory_budget="1GB", chunk_rows=200)
    rep = streamed_representation(X, Y, kernel, sk, np.random.default_rng(5), opts)
    R = draw_sketch(sk, len(X), np.random.default_rng(5), X=X, kernel=kernel)
    _, Z, _ = build_feature_map(kernel, X, R)
    for Yt in (Y, Y - Y.mean(axis=0), Y[:, ::-1].copy()):  # raw, centred, unrelated (one more pass)
        A, B = rep.problem(Yt).gram()
        Wm = np.linalg.solve(Z.T @ Z + len(X) * LAM * np.eye(Z.shape[1]), Z.T @ Yt)
        W = np.linalg.solve(A + len(X) * LAM * np.eye(A.shape[0]), B)
        np.testing.assert_allclose(rep.expansion(W)["coef_"], rep.proj @ Wm, rtol=1e-7,
                                   atol=1e-9 * np.abs(rep.proj @ Wm).max())
    problem = rep.problem(Y)
    np.testing.assert_allclose(np.vstack([b for _, b, _ in problem.blocks()]), Z, rtol=1e-8, atol=1e-10)
    assert rep.info["representation"] == "in-memory" and rep.info["rank"] == Z.shape[1]

    class Est:
        memory_budget, dtype, backend = "2GB", "float32", None

    o = options_from(Est())
    assert o.memory_budget == 2 * 10**9 and o.dtype == "float32" and o.backend == "numpy"


# ------------------------------------------------------------------ the models


def _model(**kw):
    params = dict(kernel_params={"gamma": GAMMA}, sketch="subsample", sketch_size=M, lam=LAM, random_state=0)
    params.update(kw)
    return SketchedKernelRidge(**params)


def test_model_streams_with_a_budget_or_memmap(tmp_path):
    from skframe import load, save

    X, Y = _data(1500)
    ref = _model().fit(X, Y)
    budget = _model(memory_budget="20MB").fit(X, Y)
    assert budget.sketch_info_["representation"] == budget.representation_ == "accumulated"
    assert ref.representation_ == "in-memory"
    np.testing.assert_allclose(budget.coef_, ref.coef_, rtol=1e-8, atol=1e-10 * np.abs(ref.coef_).max())
    np.testing.assert_allclose(budget.intercept_, ref.intercept_)
    np.save(tmp_path / "X.npy", X)
    mapped = _model(sketch="psr").fit(np.load(tmp_path / "X.npy", mmap_mode="r"), Y)
    assert mapped.sketch_info_["representation"] == "accumulated"
    np.testing.assert_allclose(mapped.predict(X), _model(sketch="psr").fit(X, Y).predict(X), rtol=1e-8, atol=1e-9)
    f32 = _model(dtype="float32", lam=[1e-2, LAM]).fit(X, Y)
    assert np.max(np.abs(f32.predict(X) - ref.predict(X))) < 1e-3 * np.max(np.abs(ref.predict(X)))
    save(f32, tmp_path / "m.skf")
    np.testing.assert_array_equal(load(tmp_path / "m.skf").predict(X), f32.predict(X))


def test_model_refuses_an_impossible_budget():
    from skframe.exceptions import MemoryBudgetError

    X, Y = _data(400)
    with pytest.raises(MemoryBudgetError, match="memory_budget"):
        _model(sketch_size=400, memory_budget="1MB").fit(X, Y)
    with pytest.raises(InvalidParameterError, match="dtype"):
        _model(dtype="float16").fit(X, Y)


def test_sparse_inputs_stream():
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    X, y = sp.random(900, 30, density=0.1, format="csr", random_state=0), rng.normal(size=900)
    ref = _model(kernel_params={"gamma": 0.5}, sketch="psr").fit(X, y)
    streamed = _model(kernel_params={"gamma": 0.5}, sketch="psr", memory_budget="30MB").fit(X, y)
    assert streamed.sketch_info_["representation"] == "accumulated"
    np.testing.assert_allclose(streamed.predict(X), ref.predict(X), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("budget,expected", [("1GB", "in-memory"), ("600kB", "streamed")])
def test_machine_keeps_or_streams_features_by_budget(budget, expected):
    from skframe.models import SketchedKernelMachine

    rng = np.random.default_rng(0)
    X = rng.uniform(size=(3000, 3))
    y = np.sin(4 * X[:, 0]) + X[:, 1]
    params = dict(loss="huber", kernel_params={"gamma": 2.0}, sketch="subsample", sketch_size=30, lam=LAM,
                  random_state=0, solver="lbfgs")
    ref = SketchedKernelMachine(**params).fit(X, y)
    model = SketchedKernelMachine(memory_budget=budget, **params).fit(X, y)
    assert model.representation_ == expected and ref.representation_ == "in-memory"
    np.testing.assert_allclose(model.predict(X), ref.predict(X), rtol=1e-7, atol=1e-8)


def test_streamed_pass_without_features_equals_the_feature_blocks():
    """loss_pass (K (proj V), proj^T K^T G) gives the objective and gradient of the Z = K proj blocks."""
    import skframe_solvers._problem as P

    loss = _huber()
    streamed, dense = _streamed_and_dense(900, 97)
    M = np.array([[2.0, 0.5], [0.5, 1.0]])
    fs, fd = P.FeatureMapProblem(streamed, loss, LAM, M=M), P.FeatureMapProblem(dense, loss, LAM, M=M)
    V = np.random.default_rng(3).normal(size=fs.shape)
    assert streamed.loss_pass(V, fs.C, loss) is not None  # the factored pass is the one that runs
    (v1, g1), (v2, g2) = fs.value_and_grad(V), fd.value_and_grad(V)
    assert v1 == pytest.approx(v2, rel=1e-10)
    np.testing.assert_allclose(g1, g2, rtol=1e-9, atol=1e-12)
    assert fs.mean_loss(V) == pytest.approx(fd.mean_loss(V), rel=1e-10)
    # float32 kernel blocks: the products stay float64, so the pass is as accurate as the blocks
    f32 = StreamedFeatureProblem(streamed.kernel, streamed.X, streamed.Y, streamed.X_sub, streamed.proj,
                                 ComputeOptions(chunk_rows=97, dtype="float32"), products="float32")
    v3, g3 = P.FeatureMapProblem(f32, loss, LAM, M=M).value_and_grad(V)
    assert v3 == pytest.approx(v2, rel=1e-5)
    np.testing.assert_allclose(g3, g2, rtol=1e-4, atol=1e-4 * np.abs(g2).max())


@pytest.mark.parametrize("name", ["psr", "subsample"])
def test_kept_features_from_the_sparse_mix_first_equal_the_projection(name):
    """``(K R^T) UD`` (the sparse product first) keeps the same features as ``K (R^T UD)``."""
    from skframe.core.linalg import spectral_projection

    X, Y = _data(900)
    _, kernel, R = _reference(X, Y, name)
    X_sub = X[R.indices]
    proj, _ = feature_projection(kernel, X_sub, R.mix)
    UD, _ = spectral_projection(sketch_gram(kernel, X_sub, R.mix))
    options = ComputeOptions(chunk_rows=250)
    plain, rep = make_feature_problem(kernel, X, Y, X_sub, proj, options)
    factored, rep2 = make_feature_problem(kernel, X, Y, X_sub, proj, options, factors=(R, UD))
    assert rep == rep2 == "in-memory"
    Z = naive_gaussian(X, X_sub, GAMMA) @ proj
    np.testing.assert_allclose(factored.Z, Z, rtol=1e-9, atol=1e-10 * np.abs(Z).max())
    np.testing.assert_allclose(factored.Z, plain.Z, rtol=1e-9, atol=1e-10 * np.abs(Z).max())


def test_a_streamed_fit_keeping_its_features_equals_one_recomputing_them():
    """The streamed executor's kept features (built sparse product first) give the model of recomputed ones:
    exactly with ``dtype="float64"``; at the default ``dtype="auto"`` the kept kernel block is float32 (every
    product in float64) and the model differs from the recomputed float64 one by the kernel's rounding only."""
    from skframe.models import SketchedKernelClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(8000, 4))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    fits = {(budget, dtype): SketchedKernelClassifier(loss="logistic", lam=1e-3, random_state=0, memory_budget=budget,
                                                      dtype=dtype).fit(X, y)
            for budget in ("10MB", "250MB") for dtype in ("float64", "auto")}
    assert {f.execution_["executor"] for f in fits.values()} == {"streamed"}
    assert [f.representation_ for f in fits.values()] == ["streamed", "streamed", "in-memory", "in-memory"]
    assert fits["250MB", "float64"].execution_["kept_dtype"] == "float64"
    assert fits["250MB", "auto"].execution_["kept_dtype"] == "float32"
    assert fits["250MB", "auto"].execution_["reasons"]["kept_dtype"].startswith("float32: auto")
    assert fits["250MB", "auto"].sketch_info_["kept_dtype"] == "float32"
    streamed = fits["10MB", "float64"].decision_function(X[:500])
    np.testing.assert_allclose(fits["10MB", "auto"].decision_function(X[:500]), streamed, rtol=0, atol=0)
    np.testing.assert_allclose(fits["250MB", "float64"].decision_function(X[:500]), streamed, rtol=1e-8, atol=1e-10)
    auto = fits["250MB", "auto"].decision_function(X[:500])
    assert 0 < np.max(np.abs(auto - streamed)) <= 1e-4 * np.max(np.abs(streamed))


@pytest.mark.parametrize("loss, step, dtype", [("logistic", "cg", np.float64), ("logistic", "direct", np.float64),
                                               ("multinomial", "cg", np.float64),
                                               ("multinomial", "direct", np.float64),
                                               ("multinomial", "cg", np.float32)])
def test_features_kept_as_two_factors_solve_as_the_formed_ones(loss, step, dtype):
    """Newton on ``Z = L P`` read apart (a left factor wider than Z, weights, a multinomial) reaches the solution
    and certified gap of Newton on the formed Z; a solver that does not read factors sees a streaming problem
    (``features()`` None) whose blocks are Z's rows and gets its own answer on Z."""
    from skframe.contract.problems import FactoredArrayProblem
    from skframe.contract.registry import get_loss
    from skframe_solvers.lbfgs import LBFGSSolver
    from skframe_solvers.newton import NewtonSolver

    rng = np.random.default_rng(1)
    n, s, r = 600, 14, 12
    L, P = rng.normal(size=(n, s)).astype(dtype), rng.normal(size=(s, r)) / 3
    Z = L.astype(np.float64) @ P  # a float32 left factor: the problem of its values, every product in float64
    classes = 3 if loss == "multinomial" else 2
    labels = np.argmax(Z[:, :classes] + 0.5 * rng.normal(size=(n, classes)), axis=1)
    Y = (np.where(labels[:, None] == np.arange(classes), 1.0, -1.0) if loss == "multinomial"
         else np.where(labels == 1, 1.0, -1.0)[:, None])
    w = rng.uniform(0.5, 2.0, size=n)
    loss_obj = get_loss(loss)
    solver = NewtonSolver(step=step, precond_rows=200, tol=1e-10)
    formed, factored = ArrayProblem(Z, Y), FactoredArrayProblem(L, P, Y)
    formed.sample_weight = factored.sample_weight = w
    assert factored.features() is None and factored.r == r
    np.testing.assert_allclose(np.vstack([b for _, b, _ in factored.blocks(100)]), Z, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(factored.gram()[0], Z.T @ Z, rtol=1e-10, atol=1e-10)
    a, b = solver.solve(formed, loss_obj, 1e-4), solver.solve(factored, loss_obj, 1e-4)
    np.testing.assert_allclose(b.W, a.W, rtol=1e-6, atol=1e-7 * np.abs(a.W).max())
    assert b.info["relative_gap"] <= 1e-10 and b.info["method"] == a.info["method"]
    lbfgs = LBFGSSolver(tol=1e-10, max_iter=2000)
    c, d = lbfgs.solve(formed, loss_obj, 1e-2), lbfgs.solve(factored, loss_obj, 1e-2)
    np.testing.assert_allclose(d.W, c.W, rtol=1e-5, atol=1e-6 * np.abs(c.W).max())


def test_a_streamed_newton_fit_keeps_its_features_as_two_factors():
    """Where the streamed executor keeps the features for the Newton solver (no sums), it keeps the kernel block
    and the projection apart, and the model equals the in-memory executor's of the same sketch (``dtype="float64"``;
    by default the block is kept in float32, below)."""
    from skframe.models import SketchedKernelClassifier
    from skframe.models._fit import Fit

    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 4))
    y = np.argmax(X[:, :3] + 0.3 * rng.normal(size=(3000, 3)), axis=1)
    params = dict(loss="multinomial", lam=1e-4, random_state=0, sketch="subsample", sketch_size=60)
    est = SketchedKernelClassifier(**params, memory_budget="60MB", dtype="float64")
    fit = Fit.of(est, X, y)
    fit.run()
    rep = fit.represent()
    assert est.execution_["executor"] == "streamed" and est.representation_ == "in-memory"
    assert rep.kept is not None and rep.kept_right is not None and rep.kept.shape == (3000, 60)
    np.testing.assert_allclose(rep.kept_rows(np.arange(5)), fit.predict_rows(X[:5]), rtol=1e-9, atol=1e-12)
    dense = SketchedKernelClassifier(**params).fit(X, y)
    assert dense.execution_["executor"] == "in-memory"
    np.testing.assert_allclose(est.decision_function(X[:300]), dense.decision_function(X[:300]), rtol=1e-6,
                               atol=1e-8)
    # dtype="float32": the kernel block is kept in float32 (half the bytes, no float64 copy for the solver), every
    # product with it in float64: the gap is certified for the rounded block, the model within rounding of float64's
    single = SketchedKernelClassifier(**params, memory_budget="60MB", dtype="float32")
    fit32 = Fit.of(single, X, y)
    fit32.run()
    assert fit32.represent().kept.dtype == np.float32 and fit32.represent().kept_right is not None
    assert single.solver_info_["relative_gap"] <= 1e-8
    np.testing.assert_allclose(single.decision_function(X[:300]), dense.decision_function(X[:300]), rtol=1e-4,
                               atol=1e-4)
    # the default dtype="auto": float64 kernel blocks and products, but the block the Newton fit keeps in float32
    auto = SketchedKernelClassifier(**params, memory_budget="60MB")
    fit_auto = Fit.of(auto, X, y)
    fit_auto.run()
    assert fit_auto.represent().kept.dtype == np.float32 and auto.execution_["kept_dtype"] == "float32"
    assert auto.execution_["dtype"] == "float64" and auto.solver_info_["relative_gap"] <= 1e-8
    np.testing.assert_allclose(auto.decision_function(X[:300]), dense.decision_function(X[:300]), rtol=1e-4,
                               atol=1e-4)
