"""DSOKR (DeepOutputKernelRegressor) and the losses in the output RKHS.

Small data, few epochs: the whole file runs in a few seconds on the CPU.
"""

import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

from skframe.contract.registry import get_loss
from skframe.exceptions import (
    DependencyError,
    InvalidInputError,
    InvalidParameterError,
    NotFittedError,
    PersistenceError,
)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(ROOT, "src"),
                                                   os.environ.get("PYTHONPATH", "")]))

OUTPUT_LOSSES = [("output-square", {}), ("output-huber", {"kappa": 0.8}), ("output-epsilon-svr", {"epsilon": 0.3}),
                 ("output-epsilon-ridge", {"epsilon": 0.3}), ("output-epsilon-ridge", {"epsilon": 0.0})]


# ----------------------------------------------------------------------------- losses (no torch needed)
@pytest.mark.parametrize("name,params", OUTPUT_LOSSES)
def test_output_loss_gradient_equals_finite_differences(name, params):
    loss = get_loss(name, **params)
    rng = np.random.default_rng(1)
    F, Y = rng.normal(size=(12, 4)), rng.normal(size=(12, 4))
    off = rng.uniform(0, 0.5, size=12)
    G = loss.gradient(F, Y, off)
    h = 1e-6
    num = np.zeros_like(F)
    for i in range(F.shape[0]):
        for j in range(F.shape[1]):
            Fp, Fm = F.copy(), F.copy()
            Fp[i, j] += h
            Fm[i, j] -= h
            num[i, j] = (loss.value(Fp, Y, off)[i] - loss.value(Fm, Y, off)[i]) / (2 * h)
    np.testing.assert_allclose(G, num, rtol=1e-5, atol=1e-7)


def test_output_losses_follow_the_thesis_formulas():
    u = np.array([0.04, 0.25, 1.0, 4.0])  # squared distances; s = 0.2, 0.5, 1, 2
    s = np.sqrt(u)
    np.testing.assert_allclose(get_loss("output-square").c(u), u / 2)
    np.testing.assert_allclose(get_loss("output-huber", kappa=0.8).c(u),
                               np.where(s <= 0.8, u / 2, 0.8 * (s - 0.4)))
    np.testing.assert_allclose(get_loss("output-epsilon-svr", epsilon=0.3).c(u), np.maximum(s - 0.3, 0))
    np.testing.assert_allclose(get_loss("output-epsilon-ridge", epsilon=0.3).c(u), np.maximum(s - 0.3, 0) ** 2 / 2)
    with pytest.raises(InvalidParameterError, match="kappa"):
        get_loss("output-huber", kappa=-1)


@pytest.mark.parametrize("name,params", OUTPUT_LOSSES)
def test_torch_loss_gradient_equals_the_numpy_gradient(name, params):
    torch = pytest.importorskip("torch")
    loss = get_loss(name, **params)
    rng = np.random.default_rng(2)
    F, Y, off = rng.normal(size=(10, 3)), rng.normal(size=(10, 3)), rng.uniform(0, 0.5, size=10)
    Ft = torch.tensor(F, requires_grad=True)
    u = ((Ft - torch.tensor(Y)) ** 2).sum(1) + torch.tensor(off)
    val = loss.torch_value(u)
    val.sum().backward()
    np.testing.assert_allclose(val.detach().numpy(), loss.value(F, Y, off), rtol=1e-12)
    np.testing.assert_allclose(Ft.grad.numpy(), loss.gradient(F, Y, off), rtol=1e-10, atol=1e-12)


# ----------------------------------------------------------------------------- choosing m_Y (no torch needed)
def _low_rank_outputs(n=300, d=20, r=3, seed=0):
    rng = np.random.default_rng(seed)
    U = np.linalg.qr(rng.normal(size=(d, r)))[0]
    return rng.normal(size=(n, r)) @ U.T  # exactly rank r: the projection error vanishes from m_Y = r


def test_perfect_h_surrogate_metric_equals_the_projection_error():
    from skframe.contract.registry import get_kernel
    from skframe.model_selection.curves import perfect_h_curve

    Y = _low_rank_outputs()
    Ytr, Yva = Y[:240], Y[240:]
    curve = perfect_h_curve(get_kernel("linear"), Ytr, Yva, [1, 2, 3, 6, 12], metric="surrogate", tol=0.5,
                            random_state=0)
    assert curve["metric"] == "-surrogate_mse" and curve["chosen"] == 3
    # plain NumPy: the same draws (sub-sampling without replacement) project y_val on span(Y_tr[idx])
    from skframe.contract.registry import get_sketch
    from skframe.core.sketching import draw_sketch

    rng = np.random.default_rng(0)
    for m, score in zip(curve["sizes"], curve["scores"]):
        R = draw_sketch(get_sketch("subsample", size=m), 240, rng, X=Ytr, kernel=get_kernel("linear"))
        Q = np.linalg.qr(Ytr[R.indices].T)[0]
        err = np.mean(np.sum((Yva - Yva @ Q @ Q.T) ** 2, axis=1))
        np.testing.assert_allclose(-score, err, rtol=1e-6, atol=1e-10)


def test_linear_output_basis_of_noisy_outputs_keeps_every_direction():
    """Low-rank outputs plus small noise (as in the thesis's synthetic study): the sketched basis keeps all
    m_Y directions (the noise ones too) and psi~(y) E (thesis eq. 5.22) is the orthogonal projection of y
    on the span of the sub-sampled outputs, in plain NumPy."""
    from skframe.contract.registry import get_kernel, get_sketch
    from skframe.core.output_basis import SketchedOutputBasis
    from skframe.core.sketching import draw_sketch

    rng = np.random.default_rng(3)
    Y = _low_rank_outputs(n=400, d=60, r=5, seed=3) * 10 + 0.1 * rng.normal(size=(400, 60))
    Ytr, Yte = Y[:300], Y[300:]
    lin = get_kernel("linear")
    for m in (5, 8, 20):
        R = draw_sketch(get_sketch("subsample", size=m), 300, np.random.default_rng(m), X=Ytr, kernel=lin)
        basis, Psi = SketchedOutputBasis.fit(lin, Ytr, R)
        assert basis.n_components == m
        E = basis.vectors()
        np.testing.assert_allclose(E @ E.T, np.eye(m), atol=1e-8)
        Q = np.linalg.qr(Ytr[R.indices].T)[0]
        np.testing.assert_allclose(basis.embed(Yte) @ E, Yte @ Q @ Q.T, atol=1e-8)
        np.testing.assert_allclose(Psi @ E, Ytr @ Q @ Q.T, atol=1e-8)


def test_output_rank_keeps_the_leading_directions_of_the_sketched_gram():
    """p_Y < m_Y: the basis is the top p_Y right singular vectors of the sub-sampled outputs (plain NumPy SVD)."""
    from skframe.contract.registry import get_kernel, get_sketch
    from skframe.core.output_basis import SketchedOutputBasis
    from skframe.core.sketching import draw_sketch

    rng = np.random.default_rng(4)
    Y = _low_rank_outputs(n=400, d=60, r=5, seed=4) * 10 + 0.1 * rng.normal(size=(400, 60))
    Ytr, Yte = Y[:300], Y[300:]
    lin = get_kernel("linear")
    R = draw_sketch(get_sketch("subsample", size=40), 300, np.random.default_rng(0), X=Ytr, kernel=lin)
    basis, Psi = SketchedOutputBasis.fit(lin, Ytr, R, n_components=5)
    assert basis.n_components == 5 and Psi.shape == (300, 5) and basis.sketch_info["n_components"] == 5
    Vr = np.linalg.svd(Ytr[R.indices], full_matrices=False)[2][:5].T
    np.testing.assert_allclose(basis.embed(Yte) @ basis.vectors(), Yte @ Vr @ Vr.T, atol=1e-8)
    np.testing.assert_allclose(Psi, basis.embed(Ytr), atol=1e-8)
    full = SketchedOutputBasis.fit(lin, Ytr, R, n_components=100)[0]  # more than the rank: all kept
    assert full.n_components == 40


def test_select_for_dsokr_chooses_m_y_only(tmp_path):
    from skframe.model_selection.curves import select_sketch_sizes
    from skframe.model_selection.plots import plot_selection

    Y = _low_rank_outputs()
    res = select_sketch_sizes(None, Y, input_kernel=None, output_kernel="linear", lam=1e-4, model="dsokr",
                              perfect_h_metric="surrogate", sizes_y=[1, 2, 3, 4, 8], tol=0.5)
    assert res.m_x is None and res.m_y == 3 and not res.input_curve
    assert 2.5 < res.d_eff_y < 3.5
    assert plot_selection(res, tmp_path / "c.png") and (tmp_path / "c.png").stat().st_size > 0
    with pytest.raises(InvalidParameterError, match="model"):
        select_sketch_sizes(None, Y, input_kernel=None, output_kernel="linear", lam=1e-4, model="vae")


def test_cli_select_for_dsokr_writes_the_png(tmp_path):
    from typer.testing import CliRunner

    from skframe.cli import app
    from skframe.datasets.loaders import save_dataset

    Y = _low_rank_outputs(n=200)
    save_dataset(str(tmp_path / "d.csv"), np.random.default_rng(1).normal(size=(200, 3)), Y)
    res = CliRunner().invoke(app, ["select", str(tmp_path / "d.csv"), "--targets", "20", "--model", "dsokr",
                                   "--output-kernel", "linear", "--perfect-h-metric", "surrogate",
                                   "--sizes-y", "1,2,3,5", "--tol", "0.5", "--png", str(tmp_path / "s.png")])
    assert res.exit_code == 0, res.output
    assert "chosen  m_Y = 3" in res.output and (tmp_path / "s.png").exists()


# ----------------------------------------------------------------------------- the estimator
torch = pytest.importorskip("torch")

from skframe import load, save  # noqa: E402
from skframe.models import DeepOutputKernelRegressor, OutputKernelRegressor  # noqa: E402


def _data(n=120, d=5, q=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    Y = (X[:, :q] + 0.4 * rng.normal(size=(n, q)) > 0).astype(float)
    return X, Y


FAST = dict(output_kernel_params={"gamma": 0.5}, output_sketch_size=20, epochs=4, batch_size=32,
            network_params={"hidden": (16,)}, random_state=0)
PLAIN = dict(input_scaling=None, target_scaling=False, validation_fraction=0.0)  # the objective as written


@pytest.fixture(scope="module")
def fitted():
    X, Y = _data()
    return X, Y, DeepOutputKernelRegressor(**FAST).fit(X, Y)


def test_linear_network_equals_the_isokr_closed_form():
    """A linear network without bias, square loss, weight decay lam, trained to convergence
    (full-batch L-BFGS in float64) minimises (1/n) sum 1/2 ||W^T x_i - psi~(y_i)||^2 + lam/2 ||W||^2,
    whose solution W = (X^T X + n lam I)^{-1} X^T Psi is ISOKR with the linear input kernel and
    the same output sketch draw. Stated tolerance: 1e-6 relative on the coordinates."""
    X, Y = _data(n=150)
    lam = 1e-3
    isokr = OutputKernelRegressor("linear", output_kernel_params={"gamma": 0.5}, output_sketch="subsample",
                                  output_sketch_size=25, lam=lam, random_state=3).fit(X, Y)
    deep = DeepOutputKernelRegressor(network_params={"hidden": (), "bias": False}, output_kernel_params={"gamma": 0.5},
                                     output_sketch_size=25, optimizer="lbfgs", learning_rate=1.0, epochs=2,
                                     weight_decay=lam, dtype="float64", random_state=3, **PLAIN).fit(X, Y)
    np.testing.assert_array_equal(deep.output_basis_.proj, isokr.output_basis_.proj)  # the same R_Y draw
    g_ref, g = isokr.surrogate_predict(X)[0], deep.surrogate_predict(X)[0]
    assert np.abs(g - g_ref).max() <= 1e-6 * np.abs(g_ref).max()
    np.testing.assert_array_equal(deep.predict(X), isokr.predict(X))


def test_output_rank_network_equals_the_ridge_closed_form(tmp_path):
    """output_rank = p_Y < m_Y: the network predicts the leading p_Y coordinates only; a linear network
    trained to convergence equals W = (X^T X + n lam I)^{-1} X^T Psi_p (plain NumPy) on them."""
    X, Y = _data(n=150)
    lam = 1e-3
    deep = DeepOutputKernelRegressor(network_params={"hidden": (), "bias": False}, output_kernel_params={"gamma": 0.5},
                                     output_sketch_size=25, output_rank=6, optimizer="lbfgs", learning_rate=1.0,
                                     epochs=2, weight_decay=lam, dtype="float64", random_state=3, **PLAIN).fit(X, Y)
    assert deep.output_basis_.n_components == 6 and deep.n_weights_ == X.shape[1] * 6
    Psi = deep.output_basis_.embed(Y)
    W = np.linalg.solve(X.T @ X + len(X) * lam * np.eye(X.shape[1]), X.T @ Psi)
    g = deep.surrogate_predict(X)[0]
    assert np.abs(g - X @ W).max() <= 1e-6 * np.abs(X @ W).max()
    again = load(save(deep, tmp_path / "rank.skf"))
    assert again.get_params()["output_rank"] == 6
    np.testing.assert_array_equal(again.decision_function(X[:5]), deep.decision_function(X[:5]))
    with pytest.raises(InvalidParameterError, match="output_rank"):
        DeepOutputKernelRegressor(output_rank=0).fit(X, Y)


def test_decoding_equals_brute_force(fitted):
    X, Y, model = fitted
    G = model.surrogate_predict(X[:7])[0]
    C = model.candidates_
    E = model.output_basis_.embed(C)
    S = G @ E.T - 0.5 * model.output_kernel_.diag(C) if hasattr(model.output_kernel_, "diag") else None
    if S is None:
        S = G @ E.T - 0.5
    np.testing.assert_allclose(model.decision_function(X[:7]), S, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(model.predict(X[:7]), C[np.argmax(S, axis=1)])
    idx, scores = model.predict_topk(X[:7], 3)
    np.testing.assert_array_equal(idx, np.argsort(-S, axis=1, kind="stable")[:, :3])
    np.testing.assert_allclose(scores, np.take_along_axis(S, idx, 1), rtol=1e-10)
    Cx = np.vstack([C[:5], 1 - C[:2]])  # an explicit candidate set
    Sx = G @ model.output_basis_.embed(Cx).T - 0.5
    np.testing.assert_array_equal(model.predict(X[:7], candidates=Cx), Cx[np.argmax(Sx, axis=1)])


@pytest.mark.parametrize("aggregate", ["mean", "max"])
def test_ensembles_aggregate_members_scores(aggregate):
    X, Y = _data(n=80)
    model = DeepOutputKernelRegressor(**dict(FAST, epochs=2, n_draws=2, n_seeds=2, aggregate=aggregate)).fit(X, Y)
    assert len(model.draws_) == 4
    assert model.draws_[0].basis is model.draws_[1].basis and model.draws_[0].basis is not model.draws_[2].basis
    C = model.candidates_
    blocks = [g @ m.basis.embed(C).T for g, m in zip(model.surrogate_predict(X[:5]), model.draws_)]
    S = (np.max(blocks, axis=0) if aggregate == "max" else np.mean(blocks, axis=0)) - 0.5
    np.testing.assert_allclose(model.decision_function(X[:5]), S, rtol=1e-10, atol=1e-12)


def test_same_seed_same_weights_and_other_seed_other_weights():
    X, Y = _data(n=80)
    a = DeepOutputKernelRegressor(**FAST).fit(X, Y)
    b = DeepOutputKernelRegressor(**FAST).fit(X, Y)
    c = DeepOutputKernelRegressor(**dict(FAST, random_state=1)).fit(X, Y)
    for k, w in a.draws_[0].weights.items():
        np.testing.assert_array_equal(w, b.draws_[0].weights[k])
    assert any(not np.array_equal(w, c.draws_[0].weights[k]) for k, w in a.draws_[0].weights.items())


def test_sparse_inputs_train_like_dense_ones():
    X, Y = _data(n=80)
    X[np.abs(X) < 0.8] = 0.0
    dense = DeepOutputKernelRegressor(**FAST).fit(X, Y)
    sparse = DeepOutputKernelRegressor(**FAST).fit(sp.csr_matrix(X), Y)
    np.testing.assert_allclose(sparse.surrogate_predict(sp.csr_matrix(X))[0], dense.surrogate_predict(X)[0],
                               rtol=1e-6, atol=1e-6)


def test_robust_loss_and_early_stopping():
    X, Y = _data(n=100)
    model = DeepOutputKernelRegressor(**dict(FAST, loss="huber", loss_params={"kappa": 0.5}, epochs=30,
                                             validation_fraction=0.2, patience=2, learning_rate=0.05,
                                             validation_metric="loss")).fit(X, Y)
    h = model.history_[0]
    assert model.loss_.name == "output-huber" and model.sketch_info_["n_validation"] == 20
    assert len(h["val_loss"]) == len(h["train_loss"]) <= 30
    assert h["best_epoch"] == int(np.argmin(h["val_loss"]))
    from skframe.core.output_basis import unique_rows

    np.testing.assert_array_equal(model.candidates_, unique_rows(Y)[0])  # validation outputs are candidates too


def test_progress_is_called_once_per_epoch():
    X, Y = _data(n=60)
    calls = []
    DeepOutputKernelRegressor(**dict(FAST, epochs=3, n_seeds=2)).fit(X, Y, progress=lambda k=1: calls.append(k))
    assert sum(calls) == 6


def test_strings_with_text_networks_and_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    words = ["CCO", "CCN", "c1ccccc1", "CC(=O)O", "CCCl", "OCCO"]
    S = [words[i] for i in rng.integers(0, len(words), 60)]
    Y = np.array([[s.count("C") % 2, "O" in s, "c" in s] for s in S], dtype=float)
    for net, params in (("text-cnn", {"n_filters": 8, "embedding_dim": 8}),
                        ("transformer", {"d_model": 8, "n_heads": 2, "n_layers": 1})):
        model = DeepOutputKernelRegressor(net, network_params=params, output_kernel="linear", output_sketch_size=3,
                                          epochs=3, random_state=0).fit(S, Y)
        assert model.input_kind_ == "tokens" and model.max_length_ == 8
        test = ["CCO", "NCCBr", "c1ccccc1CCCCCCCC"]  # unknown characters and a string longer than max_length
        path = save(model, tmp_path / f"{net}.skf")
        again = load(path)
        np.testing.assert_array_equal(again.decision_function(test), model.decision_function(test))
        with pytest.raises(InvalidInputError, match="strings"):
            model.predict(np.zeros((2, 3)))


def test_save_load_gives_identical_predictions(tmp_path, fitted):
    X, Y, model = fitted
    path = save(model, tmp_path / "dsokr.skf")
    again = load(path)
    np.testing.assert_array_equal(again.decision_function(X), model.decision_function(X))
    np.testing.assert_array_equal(again.predict(X), model.predict(X))
    assert again.get_params() == model.get_params()
    with open(path, "rb") as f:
        assert b"pickle" not in f.read()[:0]  # the format has no pickle entry (see test_persistence)


class _Factory:
    """A user network factory (module-level so that its name can be recorded)."""

    def __call__(self, n_inputs, n_outputs):
        return torch.nn.Sequential(torch.nn.Linear(n_inputs, 8), torch.nn.Tanh(), torch.nn.Linear(8, n_outputs))


def test_callable_factory_must_be_given_again_after_loading(tmp_path):
    X, Y = _data(n=60)
    factory = _Factory()
    model = DeepOutputKernelRegressor(factory, **{k: v for k, v in FAST.items() if k != "network_params"}).fit(X, Y)
    again = load(save(model, tmp_path / "f.skf"))
    with pytest.raises(InvalidParameterError, match="set model.network"):
        again.predict(X)
    again.network = factory
    np.testing.assert_array_equal(again.decision_function(X), model.decision_function(X))
    with pytest.raises(InvalidParameterError, match="torch.nn.Module"):
        DeepOutputKernelRegressor(lambda a, b: "not a module", **{k: v for k, v in FAST.items()
                                                                   if k != "network_params"}).fit(X, Y)


def test_get_params_and_clone():
    from sklearn.base import clone

    model = DeepOutputKernelRegressor(**FAST)
    twin = clone(model)
    assert twin.get_params() == model.get_params() and twin is not model
    twin.set_params(epochs=7, loss="huber")
    assert twin.epochs == 7 and model.epochs == 4


@pytest.mark.parametrize("params,err,match", [
    ({"network": "resnet"}, InvalidParameterError, "network='resnet'"),
    ({"output_sketch": None}, InvalidParameterError, "output sketch"),
    ({"loss": "pinball"}, InvalidParameterError, "pinball"),
    ({"epochs": 0}, InvalidParameterError, "epochs"),
    ({"optimizer": "sgd"}, InvalidParameterError, "optimizer"),
    ({"validation_fraction": 1.5}, InvalidParameterError, "validation_fraction"),
    ({"network_params": {"width": 3}}, InvalidParameterError, "width"),
    ({"network": "text-cnn"}, InvalidInputError, "strings"),
])
def test_bad_parameters_and_inputs_raise_skframe_errors(params, err, match):
    X, Y = _data(n=40)
    with pytest.raises(err, match=match):
        DeepOutputKernelRegressor(**dict(FAST, **params)).fit(X, Y)


def test_bad_shapes_and_unfitted():
    X, Y = _data(n=40)
    with pytest.raises(InvalidInputError, match="40 rows but Y has 39"):
        DeepOutputKernelRegressor(**FAST).fit(X, Y[:-1])
    with pytest.raises(NotFittedError):
        DeepOutputKernelRegressor(**FAST).predict(X)
    if not torch.cuda.is_available():
        with pytest.raises(InvalidParameterError, match="cuda"):
            DeepOutputKernelRegressor(**dict(FAST, device="cuda")).fit(X, Y)


# ----------------------------------------------------------------------------- torch stays optional
def _run(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV, cwd=ROOT)


def test_import_and_help_do_not_import_torch():
    code = ("import skframe, skframe.models\nfrom skframe.models import DeepOutputKernelRegressor\n"
            "from skframe.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "import sys\nprint('TORCH', 'torch' in sys.modules)")
    proc = _run(code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.rstrip().endswith("TORCH False")


def test_without_torch_one_dependency_error_naming_the_extra():
    block = ("import sys, importlib.abc\nclass Block(importlib.abc.MetaPathFinder):\n"
             "    def find_spec(self, name, path, target=None):\n"
             "        if name.split('.')[0] == 'torch':\n            raise ImportError('No module named torch')\n"
             "sys.meta_path.insert(0, Block())\n")
    code = (block + "import numpy as np\n"
            "from skframe.models import DeepOutputKernelRegressor\nfrom skframe.exceptions import DependencyError\n"
            "try:\n    DeepOutputKernelRegressor().fit(np.zeros((4, 2)), np.zeros((4, 2)))\n"
            "except DependencyError as exc:\n    print('ERR', exc)\n")
    proc = _run(code)
    assert proc.returncode == 0, proc.stderr
    assert 'pip install -e ".[deep]"' in proc.stdout and "pip install torch" in proc.stdout
    assert issubclass(DependencyError, ImportError)


def test_persistence_errors_are_skframe_errors(tmp_path):
    bad = tmp_path / "bad.skf"
    bad.write_bytes(b"not a model")
    with pytest.raises(PersistenceError):
        load(bad)


# ----------------------------------------------------------------------------- command line
def _cli_files(tmp_path):
    from skframe.datasets.loaders import save_dataset

    X, Y = _data(n=120, d=5, q=4)
    save_dataset(str(tmp_path / "train.csv"), X[:90], Y[:90])
    save_dataset(str(tmp_path / "test.csv"), X[90:], Y[90:])
    return X, Y


def test_cli_fit_predict_evaluate_dsokr(tmp_path):
    import json

    from typer.testing import CliRunner

    from skframe.cli import app

    runner = CliRunner()
    X, Y = _cli_files(tmp_path)
    model_path = tmp_path / "m.skf"
    args = ["fit", str(tmp_path / "train.csv"), "--test", str(tmp_path / "test.csv"), "--targets", "4", "--task",
            "structured", "--model", "dsokr", "--network", "mlp", "--network-param", "hidden=16",
            "--output-kernel", "gaussian", "--output-kernel-param", "gamma=0.5", "--output-sketch-size", "15",
            "--epochs", "6", "--batch-size", "16", "--learning-rate", "0.01", "--validation-fraction", "0.2",
            "--patience", "3", "--top-k", "3", "--model-out", str(model_path), "--json"]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    rep = json.loads(res.output)
    assert rep["model"]["class"] == "DeepOutputKernelRegressor" and rep["sketch"]["n_validation"] == 18
    t = rep["training"]  # the recipe used, "auto" values resolved, and how each network trained
    assert t["batch_size"] == 16 and t["network_params"]["hidden"] == 16 and t["validation_metric"] == "f1"
    assert t["members"][0]["epochs_run"] <= 6 and t["weight_decay"] == 0.01
    assert 0 <= rep["metrics"]["example_based_f1"] <= 1 and rep["metrics"]["hits_at_3"] <= 1
    ev = runner.invoke(app, ["evaluate", str(model_path), str(tmp_path / "test.csv"), "--json"])
    assert ev.exit_code == 0, ev.output
    assert json.loads(ev.output)["metrics"]["example_based_f1"] == rep["metrics"]["example_based_f1"]
    out = tmp_path / "pred.csv"
    pr = runner.invoke(app, ["predict", str(model_path), str(tmp_path / "test.csv"), "--targets", "4",
                             "--out", str(out)])
    assert pr.exit_code == 0, pr.output
    model = load(model_path)
    assert out.read_text().splitlines()[0] == "y0,y1,y2,y3"  # a header row of the targets' names
    np.testing.assert_array_equal(np.loadtxt(out, delimiter=",", ndmin=2, skiprows=1), model.predict(X[90:]))
    # --output-rank keeps the p_Y leading directions of the output basis
    res = runner.invoke(app, args[:-3] + ["--output-rank", "5", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["model"]["params"]["output_rank"] == 5
    # the default structured model stays SISOKR
    res = runner.invoke(app, args[:8] + ["--output-sketch", "subsample", "--output-sketch-size", "15", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["model"]["class"] == "OutputKernelRegressor"


def test_cli_bad_model_is_one_line_error(tmp_path):
    _cli_files(tmp_path)
    for extra, needle in ((["--model", "resnet"], "--model"), (["--model", "dsokr", "--network", "vgg"], "network")):
        proc = subprocess.run([sys.executable, "-m", "skframe", "fit", str(tmp_path / "train.csv"), "--targets", "4",
                               "--task", "structured", *extra], capture_output=True, text=True, env=ENV, cwd=ROOT)
        assert proc.returncode != 0 and needle in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


# ----------------------------------------------------------------------------- the default recipe
def test_input_scaling_is_learned_on_the_training_rows_and_saved(tmp_path):
    X, Y = _data(n=150)
    X = X * np.array([1.0, 10.0, 0.1, 3.0, 1.0]) + 5.0
    model = DeepOutputKernelRegressor(**dict(FAST, validation_fraction=0.2)).fit(sp.csr_matrix(X), Y)
    tr = np.setdiff1d(np.arange(150), model.validation_rows_)
    np.testing.assert_allclose(model.input_shift_, X[tr].mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(model.input_scale_, X[tr].std(axis=0), rtol=1e-10)
    again = load(save(model, tmp_path / "scaled.skf"))
    np.testing.assert_array_equal(again.input_shift_, model.input_shift_)
    np.testing.assert_array_equal(again.input_scale_, model.input_scale_)
    np.testing.assert_array_equal(again.decision_function(X), model.decision_function(X))
    m = model.draws_[0]
    assert again.draws_[0].target_scale == m.target_scale and m.target_scale > 0
    # the network reads the scaled rows; the coordinates are shift + scale * z
    import torch

    net = m._net if m._net is not None else None
    z = net(torch.from_numpy(((X - model.input_shift_) / model.input_scale_).astype(np.float32))).detach().numpy()
    np.testing.assert_allclose(model.surrogate_predict(X)[0], m.target_shift + m.target_scale * z, rtol=1e-5,
                               atol=1e-6)
    maxabs = DeepOutputKernelRegressor(**dict(FAST, input_scaling="maxabs")).fit(X, Y)
    assert maxabs.input_shift_ is None
    np.testing.assert_allclose(maxabs.input_scale_, np.abs(X).max(axis=0))


def _example_f1(A, B):
    inter, size = (A * B).sum(1), A.sum(1) + B.sum(1)
    return np.mean(np.where(size > 0, 2 * inter / np.maximum(size, 1), 1.0))


def test_early_stopping_restores_the_best_epoch_of_the_decoded_metric():
    X, Y = _data(n=300, d=6, q=6)
    model = DeepOutputKernelRegressor(**dict(FAST, epochs=25, patience=4, learning_rate=0.02, lr_schedule="constant",
                                             validation_fraction=0.3)).fit(X, Y)
    h = model.history_[0]
    assert h["metric"] == "f1" == model.fit_info_["validation_metric"]
    assert len(h["val_score"]) == len(h["val_loss"]) == h["epochs_run"] <= 25
    # the best epoch: highest validation F1, ties to the lower validation loss
    keys = list(zip(h["val_score"], [-v for v in h["val_loss"]]))
    assert h["best_epoch"] == max(range(len(keys)), key=lambda e: (keys[e], -e))
    if h["stopped"] != "epochs":
        assert h["epochs_run"] - 1 - h["best_epoch"] == 4
    # the restored weights score exactly the best epoch's F1 on the held-out rows (plain formula)
    va = model.validation_rows_
    assert len(va) == 90
    np.testing.assert_allclose(_example_f1(model.predict(X[va]), Y[va]), h["best_score"], rtol=1e-12)


def test_decoded_metric_rule_and_top_k():
    X, Y = _data(n=240)
    assert DeepOutputKernelRegressor(**FAST).fit(X, Y).fit_info_["validation_metric"] == "f1"
    real = DeepOutputKernelRegressor(**dict(FAST, output_kernel="linear", output_kernel_params=None))
    real.fit(X, Y + 0.5 * X[:, :4])
    assert real.fit_info_["validation_metric"] == "loss"
    h = real.history_[0]
    assert h["best_epoch"] == int(np.argmin(h["val_loss"])) and h["val_score"] == [-v for v in h["val_loss"]]
    top = DeepOutputKernelRegressor(**dict(FAST, validation_metric="top-3")).fit(X, Y)
    va = top.validation_rows_
    idx, _ = top.predict_topk(X[va], 3)
    C = top.candidates_
    hit = [any(np.array_equal(C[j], Y[i]) for j in row) for i, row in zip(va, idx)]
    np.testing.assert_allclose(np.mean(hit), top.history_[0]["best_score"], rtol=1e-12)
    assert DeepOutputKernelRegressor(**dict(FAST, validation_fraction=0.0)).fit(X, Y).fit_info_["n_validation"] == 0


def test_defaults_are_chosen_from_the_data_size():
    from skframe.models.structured._deep_network import auto_hidden

    assert auto_hidden(100, 5) == (128,) and auto_hidden(4392, 1836) == (1024,) and auto_hidden(2000, 128) == (512,)
    small = DeepOutputKernelRegressor(output_kernel_params={"gamma": 0.5}, output_sketch_size=10, epochs=2,
                                      random_state=0).fit(*_data(n=150))
    info = small.fit_info_
    assert info["n_validation"] == 0 and info["batch_size"] == 150 and info["network_params"]["hidden"] == (128,)
    assert info["inputs_resident"] and info["optimizer"] == "adamw" and info["lr_schedule"] == "cosine"
    big = DeepOutputKernelRegressor(output_kernel_params={"gamma": 0.5}, output_sketch_size=10, epochs=2,
                                    random_state=0).fit(*_data(n=400, d=30))
    info = big.fit_info_
    assert info["n_validation"] == 40 and info["n_train"] == 360 and info["batch_size"] == 256
    assert info["network_params"]["hidden"] == auto_hidden(360, 30)
    assert big.n_weights_ == 30 * 128 + 128 + 129 * big.output_basis_.n_components


def test_default_recipe_is_reproducible_with_a_seed():
    X, Y = _data(n=260)
    kw = dict(output_kernel_params={"gamma": 0.5}, output_sketch_size=15, epochs=6, random_state=5)
    a, b = DeepOutputKernelRegressor(**kw).fit(X, Y), DeepOutputKernelRegressor(**kw).fit(X, Y)
    for k, v in a.draws_[0].weights.items():
        np.testing.assert_array_equal(v, b.draws_[0].weights[k])
    np.testing.assert_array_equal(a.validation_rows_, b.validation_rows_)
    assert a.history_[0]["val_score"] == b.history_[0]["val_score"]


def test_kernel_features_feed_the_mlp(tmp_path):
    """input_features='ngram': one column per training n-gram, its counts (plain Python), unknown n-grams dropped."""
    from collections import Counter

    from skframe.graphs import StringBatch

    S = ["CCO", "CCN", "CCCO", "OCCO", "CNC", "CCOC"] * 5
    Y = (np.arange(30)[:, None] % np.array([2, 3]) == 0).astype(float)
    model = DeepOutputKernelRegressor(input_features="ngram", input_features_params={"n": 2}, epochs=2,
                                      output_kernel_params={"gamma": 0.5}, output_sketch_size=4,
                                      random_state=0).fit(S, Y)
    grams = sorted({s[i : i + 2] for s in S for i in range(len(s) - 1)})
    assert model.n_features_in_ == len(grams) == model.input_codes_.size
    F = model._featurize(StringBatch(["CCOX", "NN"]), reset=False).toarray()
    # columns follow the kernel's codes; compare the multisets of counts row by row
    for row, s in zip(F, ["CCOX", "NN"]):
        want = Counter(s[i : i + 2] for i in range(len(s) - 1))
        assert sorted(row[row > 0].tolist()) == sorted(c for g, c in want.items() if g in grams)
    unit = DeepOutputKernelRegressor(input_features="ngram", input_features_params={"n": 2, "normalize": True},
                                     epochs=2, output_kernel_params={"gamma": 0.5}, output_sketch_size=4,
                                     random_state=0).fit(S, Y)
    np.testing.assert_allclose(np.linalg.norm(unit._featurize(S[:6], reset=False).toarray(), axis=1), 1.0)
    assert unit.predict(["CCO", "CCCC"]).shape == (2, 2)
    again = load(save(unit, tmp_path / "ngram.skf"))  # the kernel and its training codes travel with the model
    np.testing.assert_array_equal(again.input_codes_, unit.input_codes_)
    np.testing.assert_array_equal(again.decision_function(S), unit.decision_function(S))
    with pytest.raises(InvalidParameterError, match="input_features"):
        DeepOutputKernelRegressor("text-cnn", input_features="ngram").fit(S, Y)
    with pytest.raises(InvalidParameterError, match="count features"):
        DeepOutputKernelRegressor(input_features="gaussian").fit(S, Y)


def test_morgan_features_and_randomized_smiles():
    pytest.importorskip("rdkit")
    from skframe.graphs import GraphBatch
    from skframe.graphs.chem import canonical_smiles
    from skframe.models.structured._deep_features import randomized_smiles

    S = ["CCO", "c1ccccc1O", "CC(=O)O", "CCN(C)C", "OCC(O)CO", "c1ccncc1"] * 4
    variants = randomized_smiles(S[:6], 3, seed=0)
    for s, vs in zip(S[:6], variants):
        assert len(vs) == 3 and set(canonical_smiles(vs)) == set(canonical_smiles([s]))
    Y = GraphBatch.from_smiles(S)
    out = dict(output_kernel="wl-subtree", output_kernel_params={"h": 2, "normalize": True}, output_sketch_size=5,
               epochs=2, random_state=0)
    fp = DeepOutputKernelRegressor(input_features="morgan", input_features_params={"n_bits": 128}, **out).fit(S, Y)
    assert fp.n_features_in_ == 128 and fp.predict_topk(S[:3], 2)[0].shape == (3, 2)
    aug = DeepOutputKernelRegressor("text-cnn", smiles_augmentation=2, **out).fit(S, Y)
    assert aug.predict_topk(S[:3], 2)[0].shape == (3, 2)
    with pytest.raises(InvalidParameterError, match="smiles_augmentation"):
        DeepOutputKernelRegressor(smiles_augmentation=2, **out).fit(np.zeros((24, 3)), Y)


@pytest.mark.parametrize("aggregate", ["mean", "max"])
def test_decode_on_the_device_equals_the_decoder(aggregate):
    """The device search (run here on the CPU device) returns the decoder's top-k and scores."""
    import torch

    from skframe.models.structured._deep_training import decode_on_device

    X, Y = _data(n=150)
    model = DeepOutputKernelRegressor(**dict(FAST, n_seeds=2, aggregate=aggregate)).fit(X, Y)
    ref_idx, ref_scores = model.predict_topk(X, 4)
    idx, scores = decode_on_device(model, torch, model.surrogate_predict(X), 4, torch.device("cpu"), rows=64)
    np.testing.assert_allclose(scores + model._offset(), ref_scores, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(idx, ref_idx)


def test_cli_dsokr_mlp_reads_morgan_fingerprints(tmp_path):
    pytest.importorskip("rdkit")
    import csv

    from typer.testing import CliRunner

    from skframe.cli import app

    smiles = ["CCO", "CCN", "CCCO", "c1ccccc1", "CC(=O)O", "CCCC", "CCOC", "CNC", "OCCO", "c1ccncc1"] * 3
    with open(tmp_path / "mols.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["smiles", "out"])
        w.writerows([s, s] for s in smiles)
    res = CliRunner().invoke(app, ["fit", str(tmp_path / "mols.csv"), "--inputs", "smiles", "--outputs", "smiles",
                                   "--input-column", "smiles", "--output-column", "out", "--featurize", "morgan",
                                   "--featurize-param", "n_bits=256", "--task", "structured", "--model", "dsokr",
                                   "--output-kernel", "wl-subtree", "--output-sketch-size", "6", "--epochs", "3"])
    assert res.exit_code == 0, res.output
    assert "inputs=smiles+morgan" in res.output and "training   mlp hidden=128" in res.output


def test_mixed_precision_trains_in_bfloat16_and_keeps_the_decoded_outputs(tmp_path):
    """bfloat16 forward passes: weights move by bfloat16 rounding, the decoded labels of an easy problem stay."""
    from skframe.persistence import load, save

    X, Y = _data(n=300)
    kw = dict(output_kernel_params={"gamma": 0.5}, output_sketch_size=20, epochs=8, random_state=0)
    full = DeepOutputKernelRegressor(**kw).fit(X[:240], Y[:240])
    half = DeepOutputKernelRegressor(mixed_precision=True, **kw).fit(X[:240], Y[:240])
    assert half.fit_info_["mixed_precision"] and not full.fit_info_["mixed_precision"]
    moved = max(float(np.abs(full.draws_[0].weights[k] - v).max()) for k, v in half.draws_[0].weights.items())
    assert 0 < moved < 0.05  # not the same computation, and not a different training either
    agree = np.mean(full.predict(X[240:]) == half.predict(X[240:]))
    assert agree >= 0.9, agree
    save(half, tmp_path / "half.skf")
    again = load(tmp_path / "half.skf")
    assert again.mixed_precision is True
    np.testing.assert_array_equal(again.predict(X[240:]), half.predict(X[240:]))
    with pytest.raises(InvalidParameterError, match="mixed_precision"):
        DeepOutputKernelRegressor(mixed_precision="yes", **kw).fit(X, Y)


def test_cli_mixed_precision_option(tmp_path):
    import json

    from typer.testing import CliRunner

    from skframe.cli import app

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 5))
    np.savetxt(tmp_path / "train.csv", np.c_[X, (X[:, :4] > 0).astype(float)], delimiter=",")
    res = CliRunner().invoke(app, ["fit", str(tmp_path / "train.csv"), "--targets", "4", "--task", "structured",
                                   "--model", "dsokr", "--output-kernel-param", "gamma=0.5", "--output-sketch-size",
                                   "15", "--epochs", "3", "--mixed-precision", "--json"])
    assert res.exit_code == 0, res.output
    rep = json.loads(res.output)
    assert rep["training"]["mixed_precision"] is True and rep["model"]["params"]["mixed_precision"] is True
