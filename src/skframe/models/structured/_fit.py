"""The fit of an output kernel regressor (IOKR, SIOKR, ISOKR, SISOKR) as one object.

:class:`StructuredFit` is the structured models' :class:`skframe.models._fit.Fit`: the validated inputs and
outputs, the resolved kernels and sketches of both sides, their plans and the random stream. ``represent()``
draws, member by member, the output sketch (and builds the output basis and its targets ``T``) and the input
sketch, in the order a fit always drew them; ``solve(lam)`` fits the input side of every member as the
estimator's fit does, and ``solve_path(lams)`` factors each member's input system once so that every λ costs
one small product (:mod:`skframe.models.structured._input_path`).

Sample weights enter the input side only: the output basis and the targets ``T`` are those of the unweighted fit,
and the input map minimises ``(1/n) sum_i w_i ||g(x_i) - T_i||^2 + lam ||g||^2`` with the weights scaled to mean 1
(:func:`positive_rows` drops the rows of weight zero first, so they are no candidates and draw no sketch row).
"""

from __future__ import annotations

import copy
import warnings

import numpy as np

from skframe.contract.collections import is_collection, take
from skframe.contract.protocols import kernel_block
from skframe.contract.registry import get_decoder
from skframe.contract.tags import get_tags
from skframe.core.linalg import solve_psd
from skframe.core.output_basis import SketchedOutputBasis, TrainingOutputBasis, unique_rows
from skframe.core.sketching import draw_sketch
from skframe.models._autotune import KFOLD, KFOLD_LAMS, is_auto, note_edge
from skframe.models._base import execution_record, in_memory_plan
from skframe.models._core import build_representation, make_rngs, resolve_kernel, size_and_resolve_sketch
from skframe.models._fit_steps import FitSteps
from skframe.models._folds import default_folds, fold_options
from skframe.models.structured._input_path import InputPaths, exact_input_path, feature_map_path, sketched_path
from skframe.models.structured._sisokr import _Draw, sketched_input_coef

__all__ = ["StructuredFit", "c_order", "positive_rows"]


def c_order(A):
    """Dense arrays C-contiguous, as a saved model reloads them (the same BLAS path before and after)."""
    return np.ascontiguousarray(A) if isinstance(A, np.ndarray) else A


def positive_rows(X, Y, sample_weight):
    """``(X, Y, w)`` without the rows of weight zero, ``w`` scaled to mean 1 (None: equal weights).

    ``sample_weight`` is checked already (:func:`skframe.models._data.check_sample_weight`). Weights that are all
    equal give None: the fit is then the unweighted one, bit for bit. ``X`` may also be a list of strings or a
    pandas object (rows by position).
    """
    if sample_weight is None:
        return X, Y, None
    keep = np.flatnonzero(sample_weight > 0)
    if keep.size < sample_weight.size:
        X = [X[i] for i in keep] if isinstance(X, list) else X.iloc[keep] if hasattr(X, "iloc") else take(X, keep)
        Y = take(Y, keep)
    w = sample_weight[keep]
    if np.all(w == w[0]):
        return X, Y, None
    return X, Y, w * (w.size / w.sum())


class _Member:
    """One ensemble member's draws: the output basis and targets, and the input sketch (or feature map)."""

    def __init__(self, basis, T, R_X=None, features=None):
        self.basis, self.T, self.R_X, self.features = basis, T, R_X, features


class StructuredFit(FitSteps):
    """One fit of an :class:`~skframe.models.OutputKernelRegressor` on validated ``(X, Y)``.

    Attributes
    ----------
    estimator, X, Y, n, lam
    kx, ky : the bound input and output kernels (with ``kernel_specs``)
    plan_x, plan_y : the execution plans of the input and output sides
    sx, sy : the resolved sketches (None: the exact side), with ``sketch_specs`` and ``size_x``, ``size_y``
    rng : numpy.random.Generator
        The one random stream, drawn from member by member.
    w : ndarray of shape (n,) or None
        Positive row weights of mean 1 (None: equal weights).
    """

    def __init__(self, estimator, X, Y, t0=None, sample_weight=None):
        self._start(estimator, X, t0)
        est = estimator
        self.w = sample_weight  # positive, mean 1 (positive_rows), or None
        self.lam = "auto" if is_auto(est.lam) else float(est.lam)
        # the shared fit core: resolve (+ specs), size, seed
        self.kx, spec_kx = resolve_kernel(est.input_kernel, est.input_kernel_params, X)
        self.ky, spec_ky = resolve_kernel(est.output_kernel, est.output_kernel_params, Y)
        # "auto" sizes: the sqrt(n) rule within what memory holds
        self.plan_x = in_memory_plan(X, self.kx, est.input_sketch, est.input_sketch_size, est.input_sketch_params)
        self.plan_y = in_memory_plan(Y, self.ky, est.output_sketch, est.output_sketch_size,
                                     est.output_sketch_params)
        self.sx, spec_sx, self.size_x = size_and_resolve_sketch(
            est.input_sketch, est.input_sketch_size, est.input_sketch_params, self.n, plan=self.plan_x,
            param="input_sketch_size")
        self.sy, spec_sy, self.size_y = size_and_resolve_sketch(
            est.output_sketch, est.output_sketch_size, est.output_sketch_params, self.n, plan=self.plan_y,
            param="output_sketch_size")
        self.specs = {"input_kernel_spec_": spec_kx, "output_kernel_spec_": spec_ky,
                      "input_sketch_spec_": spec_sx, "output_sketch_spec_": spec_sy}
        self.decoder = get_decoder(est.decoder) if isinstance(est.decoder, str) else est.decoder
        self.rng = make_rngs(est.random_state)[0]
        self.X = c_order(X) if self.sx is None else X  # the exact input model keeps X in every draw
        self.Y = Y
        self._members = None
        self._base = None

    # ------------------------------------------------------------------ steps
    def represent(self):
        """Every member's draws, in the order a fit draws them (output sketch, then input sketch), once."""
        if self._members is not None:
            return self._members
        X, Y, n, rng, est = self.X, self.Y, self.n, self.rng, self.estimator
        exact_out = TrainingOutputBasis.fit(self.ky, Y) if self.sy is None else None
        if exact_out is not None:
            self.candidates, first, inverse = exact_out[0].Y_unique, None, None
        else:
            self.candidates, first, inverse = unique_rows(Y)
        members, self.embeddings = [], []
        for _ in range(int(est.n_draws)):
            # output basis (independent of the input model)
            if exact_out is not None:
                basis, T = exact_out
            else:
                R_Y = draw_sketch(self.sy, n, rng, X=Y, kernel=self.ky)
                basis, T = SketchedOutputBasis.fit(self.ky, Y, R_Y, rtol=est.rtol, distinct=(first, inverse))
            # embeddings of the default candidates (the distinct training outputs), known from the fit:
            # the dual basis' Gram, or the rows of the training targets Psi = embed(Y)
            self.embeddings.append(np.ascontiguousarray(basis.gram if exact_out is not None else T[first]))
            member = _Member(basis, T)
            if self.sx is not None and get_tags(self.sx, "sketch").feature_map:  # random Fourier features
                member.features = build_representation(X, self.kx, self.sx, rng, rtol=est.rtol)
            elif self.sx is not None:
                member.R_X = draw_sketch(self.sx, n, rng, X=X, kernel=self.kx)
            members.append(member)
        self._members = members
        return members

    def solve(self, lam):
        """Every member's input map at ``lam`` (a list of draws), as the estimator's fit computes it."""
        members, X, kx, n = self.represent(), self.X, self.kx, self.n
        if self.sx is None:  # the exact input model: one factorisation for the targets of every draw
            return self._exact_draws(lam)
        draws = []
        for mem in members:
            if mem.features is not None:  # explicit feature map: the ridge on Z
                rep = mem.features
                Zw = rep.Z if self.w is None else rep.Z * self.w[:, None]
                A = Zw.T @ rep.Z
                A[np.diag_indices_from(A)] += n * lam
                W = np.ascontiguousarray(solve_psd(A, Zw.T @ mem.T))
                draws.append(_Draw(None, W, mem.basis, rep.info, fmap=rep.feature_map))
            else:  # the coefficients on the sampled inputs without the m x m eigendecomposition of the core
                coef = sketched_input_coef(kx, X, mem.R_X, mem.T, lam, rtol=self.estimator.rtol,
                                           engine=self.plan_x.engine, prepared=True, sample_weight=self.w)
                draws.append(_Draw(c_order(take(X, mem.R_X.indices)), coef, mem.basis, mem.R_X.summary()))
        return draws

    def _exact_draws(self, lam):
        """IOKR / ISOKR input side: ``(K_X + n lam I)^{-1} [T_1 ... T_D]`` for the targets of all draws.

        With weights, ``W^{1/2} (W^{1/2} K_X W^{1/2} + n lam I)^{-1} W^{1/2} [T_1 ... T_D]``."""
        X, kx, n, members = self.X, self.kx, self.n, self.represent()
        root = None if self.w is None else np.sqrt(self.w)[:, None]

        def weigh(G):  # W^{1/2} G W^{1/2} + n lam I, in place
            if root is not None:
                G *= root
                G *= root.T
            G[np.diag_indices_from(G)] += n * lam
            return G

        K = weigh(build_representation(X, kx, None, self.rng, exact="gram").K)

        def rebuild():  # the matrix again, for the pseudo-inverse fallback (K holds the failed factor)
            return weigh(kernel_block(kx, X, X))

        # K.T: Fortran-ordered, so LAPACK factors it in place (no n x n copy); the same matrix, K being symmetric
        B = members[0].T if len(members) == 1 else np.hstack([m.T for m in members])
        if root is not None:
            B = root * B
        W = solve_psd(K.T, B, overwrite_a=True, rebuild=rebuild)
        if root is not None:
            W = root * W
        del K, B
        info = {"name": "none", "m": n, "n": n, "s_prime": n}
        cuts = np.cumsum([m.T.shape[1] for m in members])[:-1]
        return [_Draw(X, np.ascontiguousarray(w), m.basis, dict(info))
                for w, m in zip(np.split(W, cuts, axis=1), members)]

    def solve_path(self, lams):
        """The input systems of every member factored once: :class:`InputPaths` gives the draws of any λ.

        Their solutions equal :meth:`solve`'s in exact arithmetic (about 1e-8 relative in floating point)."""
        members, X, kx, n, rtol = self.represent(), self.X, self.kx, self.n, self.estimator.rtol
        if self.sx is None:
            return InputPaths([exact_input_path(kx, X, members, n, len(lams), sample_weight=self.w)])
        paths = []
        for mem in members:
            if mem.features is not None:
                paths.append(feature_map_path(mem.features, mem.T, mem.basis, n, sample_weight=self.w))
            else:
                paths.append(sketched_path(kx, X, mem, n, (rtol, self.plan_x.engine), sample_weight=self.w))
        return InputPaths(paths)

    # ------------------------------------------------------------------ the whole fit
    def run(self):
        """Fit the estimator at its own ``lam`` (``"auto"``: :meth:`choose_lam` first); returns the estimator."""
        info = None
        if self.lam == "auto":
            self.lam, info = self.choose_lam()
        self.store(self.estimator, self.solve(self.lam))
        self.record_choice(self.estimator, None if info is None else {"lam": info})
        return self.estimator

    def choose_lam(self, lams=KFOLD_LAMS, folds=KFOLD):
        """``(lam, info)`` for ``lam="auto"``: the best mean held-out ``score`` (minus the surrogate squared error
        in the output space) of ``folds`` folds (:func:`~skframe.models._folds.default_folds`: shuffled from the
        estimator's ``random_state``, or consecutive with its ``cv_order="keep"``), each fold a
        :class:`StructuredFit` whose input systems are factored once for the whole λ grid (:meth:`solve_path`).
        With weights each fold is fitted with its rows' weights (mean 1 in the fold) and scored by its held-out
        rows' weighted error."""
        cuts, words = default_folds(self.n, folds, **fold_options(self.estimator))
        scores = np.zeros((len(cuts), len(lams)))
        for k, (train, held) in enumerate(cuts):
            w_train = None if self.w is None else self.w[train] * (train.size / self.w[train].sum())
            w_held = None if self.w is None else self.w[held]
            fold = StructuredFit(self.estimator, take(self.X, train), take(self.Y, train), sample_weight=w_train)
            with warnings.catch_warnings():  # the final fit warns, not each fold
                warnings.simplefilter("ignore")
                paths = fold.solve_path(lams)
                for j, lam in enumerate(lams):
                    scores[k, j] = fold.fitted(lam, paths.draws(lam)).score(take(self.X, held), take(self.Y, held),
                                                                            sample_weight=w_held)
        mean = scores.mean(axis=0)
        j = int(np.argmax(mean))
        return float(lams[j]), note_edge({
            "chosen": float(lams[j]), "criterion": f"{len(cuts)}-fold surrogate squared error",
            "value": float(-mean[j]), "grid": [float(v) for v in lams], "curve": [float(-v) for v in mean],
            "folds": words, "reason": f"least mean held-out surrogate error of {words} over {len(lams)} values"},
            lams, j)

    def store(self, est, draws):
        """Set the fitted attributes of ``est`` for the input maps ``draws``."""
        for key, value in self.specs.items():
            setattr(est, key, value)
        est._decoder = self.decoder
        infos = [{"input": dict(d.input_info, **self.size_x), "output": dict(d.basis.sketch_info, **self.size_y)}
                 for d in draws]
        est.draws_ = draws
        est.output_basis_ = draws[0].basis
        est.input_kernel_ = self.kx
        est.output_kernel_ = self.ky
        est.candidates_ = self.candidates
        est.candidate_embeddings_ = self.embeddings
        est.candidate_bias_ = None if est.output_basis_.normalized else -0.5 * est.output_basis_.self_kernel(
            self.candidates)
        est.sketch_info_ = {"input": infos[0]["input"], "output": infos[0]["output"], "n_draws": int(est.n_draws)}
        est.sketch_infos_ = infos
        est.n_outputs_ = None if is_collection(self.Y) else self.Y.shape[1]
        est.execution_ = execution_record(self.plan_x, output=self.plan_y)
        est.fit_seconds_ = self.elapsed()
        return est

    def fitted(self, lam, draws):
        """A copy of the estimator fitted at ``lam`` with the input maps ``draws`` (a λ path's point)."""
        if self._base is None:  # the attributes every point shares, stored once
            self._base = self.store(copy.copy(self.estimator), draws)
        out = copy.copy(self._base)
        out.lam = float(lam)
        out.draws_ = draws
        out.output_basis_ = draws[0].basis
        return out
