"""The conformance kit catches each broken property, and names it with its fix."""

import math
import threading

import numpy as np
import pytest
import scipy.sparse as sp

import skframe.core.block_engine as block_engine
import skframe.core.sketching as sketching
import skframe.core.threads as threads
from skframe.exceptions import PluginError
from skframe.plugin.api import (
    Decoder,
    Kernel,
    KernelTags,
    Loss,
    LossTags,
    OutputMatrix,
    Sketch,
    SketchMatrix,
    Solver,
    SolveResult,
    SolverTags,
    check_component,
    repr_from_params,
)
from skframe.plugin.testing import (
    check_decoder,
    check_kernel,
    check_loss,
    check_output_matrix_component,
    check_sketch,
    check_solver,
)

# ----------------------------------------------------------------------------- kernels


class Gauss(Kernel):
    __skframe_tags__ = KernelTags(normalized=True, thread_safe=True)

    def __init__(self, gamma=1.0):
        self.gamma = gamma

    @property
    def params(self):
        return {"gamma": self.gamma}

    __repr__ = repr_from_params

    def __call__(self, X, Y=None):
        Y = X if Y is None else Y
        return np.exp(-self.gamma * ((X[:, None, :] - Y[None, :, :]) ** 2).sum(-1))


class Asymmetric(Gauss):
    def __call__(self, X, Y=None):
        Y = X if Y is None else Y
        return super().__call__(X, Y) + 0.1 * X[:, :1]


class NotPSD(Gauss):
    __skframe_tags__ = KernelTags()

    def __call__(self, X, Y=None):
        return 2.0 - super().__call__(X, Y) * 3.0


class WrongShape(Gauss):
    def __call__(self, X, Y=None):
        return super().__call__(X, Y)[:, :-1]


class Doubled(Gauss):
    def __call__(self, X, Y=None):
        return 2.0 * super().__call__(X, Y)


class LosesItsGamma(Gauss):
    @property
    def params(self):
        return {}


class BadTags(Gauss):
    __skframe_tags__ = KernelTags(backends="numpy")


class SaysFloat32(Gauss):
    __skframe_tags__ = KernelTags(dtypes=("float64", "float32"))


class SaysSampler(Gauss):
    __skframe_tags__ = KernelTags(spectral_sampler=True)


class SaysLinear(Gauss):
    __skframe_tags__ = KernelTags(is_linear=True)


class WrongDiag(Gauss):
    def diag(self, X):
        return np.zeros(len(X))


class WrongMatvec(Gauss):
    def matvec(self, X, Y, W, options=None):
        return self(X, Y) @ W + 1.0


class NotThreadSafe(Gauss):
    __skframe_tags__ = KernelTags(normalized=True)


@pytest.mark.parametrize("cls,prop", [
    (Asymmetric, "symmetry"),
    (NotPSD, "positive semi-definite"),
    (WrongShape, "shape"),
    (Doubled, "tag normalized"),
    (LosesItsGamma, "params round-trip"),
    (BadTags, "tags"),
    (SaysFloat32, "tag dtypes"),
    (SaysSampler, "tag spectral_sampler"),
    (SaysLinear, "tag is_linear"),
    (WrongDiag, "diag"),
    (WrongMatvec, "matvec"),
])
def test_broken_kernel(cls, prop):
    with pytest.raises(PluginError, match=rf"(?m)^check_kernel\({cls.__name__}\): {prop}: .*; "):
        check_kernel(cls(gamma=2.0))


def test_good_kernel_passes_and_is_checked_from_its_class():
    assert check_kernel(Gauss(gamma=2.0)).normalized
    assert check_component(Gauss, params={"gamma": 0.5}).thread_safe


class _Recording:
    """Records whether each call of the kernel ran on the main thread."""

    def __init__(self, kernel):
        self.kernel, self.on_main = kernel, []

    def __skframe_tags__(self):
        return self.kernel.__skframe_tags__

    def __call__(self, X, Y=None, **kwargs):
        self.on_main.append(threading.current_thread() is threading.main_thread())
        return self.kernel(X, Y, **kwargs)


def test_skframe_calls_a_kernel_not_declared_thread_safe_from_the_callers_thread_only(monkeypatch):
    """skframe's tiled sketch product on tiny blocks (tiles of a few rows on three threads): a thread-safe kernel
    is called from the pool's threads, one that is not from the caller's thread only, with the same values."""
    monkeypatch.setattr(threads, "THREADED_ENTRIES", 1)
    monkeypatch.setattr(threads, "available_cores", lambda: 3)
    monkeypatch.setattr(block_engine, "_TILE_ENTRIES", 64)
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(40, 3))
    R = SketchMatrix(n=40, indices=np.arange(0, 40, 5), mix=sp.random(5, 8, density=0.6, random_state=1) + sp.eye(5, 8))
    expected = Gauss(gamma=2.0)(X, X[R.indices]) @ R.mix.toarray().T
    for cls, thread_safe in ((Gauss, True), (NotThreadSafe, False)):
        kernel = _Recording(cls(gamma=2.0))
        KR, _ = sketching.sketched_gram_products(kernel, X, R)
        np.testing.assert_allclose(KR, expected, rtol=1e-12)
        assert all(kernel.on_main) is not thread_safe, cls.__name__


# ----------------------------------------------------------------------------- sketches


class Subsample(Sketch):
    def __init__(self, size=10):
        self.size = size

    @property
    def params(self):
        return {"size": self.size}

    def draw(self, n, rng, *, X=None, kernel=None):
        idx = np.sort(rng.choice(n, size=self.size, replace=False))
        return SketchMatrix(n=n, indices=idx, mix=np.eye(self.size) * np.sqrt(n / self.size))


class GlobalRandom(Subsample):
    def draw(self, n, rng, *, X=None, kernel=None):
        return super().draw(n, np.random.default_rng(np.random.randint(2**31)))


class OneRowShort(Subsample):
    def draw(self, n, rng, *, X=None, kernel=None):
        R = super().draw(n, rng)
        return SketchMatrix(n=n, indices=R.indices, mix=R.mix[:-1])


class ReturnsArray(Subsample):
    def draw(self, n, rng, *, X=None, kernel=None):
        return super().draw(n, rng).toarray()


@pytest.mark.parametrize("cls,prop", [(GlobalRandom, "reproducible"), (OneRowShort, "size"),
                                      (ReturnsArray, "draw")])
def test_broken_sketch(cls, prop):
    with pytest.raises(PluginError, match=rf"(?m)^check_sketch\({cls.__name__}\): {prop}: "):
        check_sketch(cls(size=10))


def test_good_sketch_passes():
    assert not check_sketch(Subsample(size=10)).feature_map


# ----------------------------------------------------------------------------- losses


class LogCosh(Loss):
    __skframe_tags__ = LossTags(smooth=True, lipschitz=1.0)
    params = {}

    def value(self, F, Y):
        return np.logaddexp(F - Y, Y - F).sum(axis=1) - np.log(2.0) * F.shape[1]

    def gradient(self, F, Y):
        return np.tanh(F - Y)


class WrongGradient(LogCosh):
    def gradient(self, F, Y):
        return 2.0 * np.tanh(F - Y)


class Concave(LogCosh):
    def value(self, F, Y):
        return -super().value(F, Y)

    def gradient(self, F, Y):
        return -super().gradient(F, Y)


class TooSteep(LogCosh):
    __skframe_tags__ = LossTags(smooth=True, lipschitz=0.5)


class NotSquare(LogCosh):
    __skframe_tags__ = LossTags(square=True, smooth=True)


class UnknownSolver(LogCosh):
    __skframe_tags__ = LossTags(smooth=True, lipschitz=1.0, default_solver="no-such-solver")


class _Dual:
    structure = "norm"
    quad, l1, radius = 2.0, 0.0, math.inf

    def values(self, A, Y):
        return np.sum(A * Y, axis=1) - 0.5 * self.quad * np.sum(A * A, axis=1)

    def project(self, A, Y):
        return np.asarray(A, dtype=float)


class WrongDual(Loss):
    """The square loss, with the dual of (1/4) ||r||^2."""

    __skframe_tags__ = LossTags(square=True, smooth=True)
    params = {}
    dual = _Dual()

    def value(self, F, Y):
        return 0.5 * ((F - Y) ** 2).sum(axis=1)

    def gradient(self, F, Y):
        return F - Y


class WrongTerms(LogCosh):
    """LogCosh with a one-pass ``value_gradient_dual`` whose gradient is off by a factor."""

    def value_gradient_dual(self, F, Y):
        return self.value(F, Y), 2.0 * self.gradient(F, Y), np.zeros(np.shape(F)[0])


@pytest.mark.parametrize("cls,prop", [(WrongGradient, "gradient"), (Concave, "convexity"), (TooSteep, "tag lipschitz"),
                                      (NotSquare, "tag square"), (UnknownSolver, "tag default_solver"),
                                      (WrongDual, r"dual \(Fenchel-Young equality\)"),
                                      (WrongTerms, "value_gradient_dual")])
def test_broken_loss(cls, prop):
    with pytest.raises(PluginError, match=rf"(?m)^check_loss\({cls.__name__}\): {prop}: "):
        check_loss(cls())


def test_good_loss_passes():
    assert check_loss(LogCosh()).smooth


# ----------------------------------------------------------------------------- solvers


class GradientDescent(Solver):
    def __init__(self, step=0.2, max_iter=500):
        self.step, self.max_iter = step, max_iter

    @property
    def params(self):
        return {"step": self.step, "max_iter": self.max_iter}

    def solve(self, problem, loss, lam, *, M=None, rng=None, init=None, progress=None):
        M = np.eye(problem.d) if M is None else M
        W = np.zeros((problem.r, problem.d)) if init is None else np.array(init, dtype=float)
        for _ in range(self.max_iter):
            G = lam * W @ M
            for _, Zb, Yb in problem.blocks():
                G += Zb.T @ loss.gradient(Zb @ W @ M, Yb) @ M / problem.n
            W = W - self.step * G
        return SolveResult(W=W, history=[], stop_reason="max_iter", n_iter=self.max_iter)


class IgnoresM(GradientDescent):
    def solve(self, problem, loss, lam, *, M=None, **kwargs):
        return super().solve(problem, loss, lam, **kwargs)


class KeepsState(GradientDescent):
    def solve(self, problem, loss, lam, **kwargs):
        res = super().solve(problem, loss, lam, **kwargs)
        self.coef_ = res.W
        return res


class NeedsFeatures(GradientDescent):
    def solve(self, problem, loss, lam, **kwargs):
        problem.features()[0].sum()  # None on a streamed problem
        return super().solve(problem, loss, lam, **kwargs)


class AcceptsAnyLoss(GradientDescent):
    __skframe_tags__ = SolverTags(requires_smooth=True)


class ReturnsW(GradientDescent):
    def solve(self, problem, loss, lam, **kwargs):
        return super().solve(problem, loss, lam, **kwargs).W


@pytest.mark.parametrize("cls,prop", [(IgnoresM, "solve"), (KeepsState, "no run state"),
                                      (NeedsFeatures, "streamed problem"), (AcceptsAnyLoss, "tag requires_smooth"),
                                      (ReturnsW, "solve")])
def test_broken_solver(cls, prop):
    with pytest.raises(PluginError, match=rf"(?m)^check_solver\({cls.__name__}\): {prop}: "):
        check_solver(cls())


def test_good_solver_passes():
    assert not check_solver(GradientDescent()).in_memory


# ----------------------------------------------------------------------------- decoders and output matrices


class Exhaustive(Decoder):
    params = {}

    def decode(self, G, *, candidates, k=1, aggregate="mean", offsets=None, **context):
        E_list, bias = candidates.block(0, candidates.n_candidates)
        per_draw = np.stack([g @ E.T for g, E in zip(G, E_list)])
        S = (per_draw.mean(axis=0) if aggregate == "mean" else per_draw.max(axis=0)) + bias
        idx = np.argsort(-S, axis=1, kind="stable")[:, :k]
        return idx, np.take_along_axis(S, idx, axis=1)


class Worst(Exhaustive):
    def decode(self, G, *, candidates, k=1, **context):
        idx, _ = super().decode([-g for g in G], candidates=candidates, k=k, **context)
        E_list, bias = candidates.block(0, candidates.n_candidates)
        S = np.mean([g @ E.T for g, E in zip(G, E_list)], axis=0) + bias
        return idx, np.take_along_axis(S, idx, axis=1)


class NotPSDMatrix(OutputMatrix):
    def matrix(self, d=None, *, Y=None, quantiles=None):
        return -np.eye(d)


def test_decoders_and_output_matrices():
    assert check_decoder(Exhaustive()).candidates
    with pytest.raises(PluginError, match=r"(?m)^check_decoder\(Worst\): decode top-k: "):
        check_decoder(Worst())
    with pytest.raises(PluginError, match=r"(?m)^check_output_matrix\(NotPSDMatrix\): matrix: .*semi-definite"):
        check_output_matrix_component(NotPSDMatrix())


def test_check_component_dispatches_by_kind():
    assert type(check_component(LogCosh())).__name__ == "LossTags"
    assert type(check_component(GradientDescent())).__name__ == "SolverTags"
    with pytest.raises(PluginError, match="kind"):
        check_component(object())
