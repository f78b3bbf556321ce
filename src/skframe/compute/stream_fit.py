"""The streamed representation a model fits with when its execution plan streams (see :mod:`skframe.compute.plan`).

A model's fit draws a sketch and builds a *representation* of the training data, then
asks it for the solver's problem. :func:`streamed_representation` builds one in a single
streamed pass (:mod:`skframe.compute.streaming`): it keeps the accumulated m x m and m x d sums,
never the n x r features. Its :meth:`~StreamedRepresentation.problem` gives the square
loss ``(Z^T Z, Z^T Y)`` from the sums (for targets shifted by any constant row, e.g.
centred for an intercept, without another pass), and iterative losses their feature
blocks: kept in memory when the budget allows, else recomputed chunk by chunk
(:func:`skframe.compute.stream_problems.make_feature_problem`). ``info["representation"]``
records which: ``"accumulated"`` (square loss), ``"in-memory"`` or ``"streamed"``.
"""

from __future__ import annotations

import numpy as np

from skframe.compute.backend import get_array_module, is_memory_mapped, to_numpy
from skframe.compute.distributed import (
    DaskFeatureProblem,
    dask_sums,
    dask_targets,
    fit_sketched_ridge_dask,
    shifted_sums,
)
from skframe.compute.execution import describe_data
from skframe.compute.stream_problems import ProjectedProblem, make_feature_problem
from skframe.compute.streaming import accumulate, fit_sketched_ridge, solve_on
from skframe.contract.problems import ArrayProblem, FactoredArrayProblem
from skframe.core.sketching import draw_sketch
from skframe.deps import is_dask_collection
from skframe.exceptions import InvalidInputError
from skframe.options import ComputeOptions, parse_bytes

__all__ = ["options_from", "streamed_representation", "StreamedRepresentation",
           "SumsProblem", "is_memory_mapped", "validate_dask_XY"]


def validate_dask_XY(estimator, X, Y):
    """Dask training data: X and y stay on their cluster (shapes and finite targets checked by the workers).

    Returns ``(X, Y, one_d)`` as :func:`skframe.models._base.validate_XY` does, Y a float64
    (n, d) dask array (:func:`skframe.compute.distributed.dask_targets`); sets ``n_features_in_``.
    """
    if X.ndim != 2:
        raise InvalidInputError(f"X must be 2-D (n_samples, n_features), got a dask array of shape {X.shape}")
    Y, one_d = dask_targets(X, Y)
    estimator.n_features_in_ = int(X.shape[1])
    return X, Y, one_d


def options_from(estimator):
    """:class:`ComputeOptions` from an estimator's ``memory_budget``, ``dtype`` and ``backend`` parameters.

    ``dtype="auto"`` is float64 kernel blocks and products with the kernel block a Newton fit keeps in memory in
    float32 (``kept_dtype="auto"``, :func:`skframe.compute.plan_newton.kept_block_dtype`); ``"float64"`` and
    ``"float32"`` hold every block in that precision."""
    changes = {}
    for name in ("memory_budget", "dtype", "backend"):
        value = getattr(estimator, name, None)
        if value is not None:
            changes[name] = parse_bytes(value) if name == "memory_budget" else str(value)
    dtype = changes.get("dtype")
    if dtype == "auto":
        changes["dtype"] = "float64"
    elif dtype is not None:
        changes["kept_dtype"] = dtype
    return ComputeOptions().replace(**changes)


class SumsProblem(ProjectedProblem):
    """The problem of a :class:`StreamedRepresentation` for targets ``Y``.

    ``gram()`` comes from the accumulated sums; ``blocks()`` from the feature problem the
    budget allows (built on first use).
    """

    def __init__(self, rep, Y):
        self.rep = rep
        self.Y = Y if Y.ndim == 2 else Y[:, None]
        self._features = None
        self._gram = None  # (Z^T Z, Z^T Y) in the namespace of the sums, formed once for every lam

    @property
    def proj(self):
        return self.rep.proj

    def gram(self):
        """``(Z^T Z, Z^T Y)`` (NumPy float64) from the accumulated sums, without another pass over X."""
        A, B = self._sums_gram()
        return np.array(to_numpy(A)), np.array(to_numpy(B))  # copies: the kept pair stays as formed

    def ridge_weights(self, lam):
        """``W = (Z^T Z + n lam I)^{-1} Z^T Y`` (NumPy), the m x m products and the solve run where the sums
        live: on the GPU for a fit with ``backend="cupy"``, where only W comes back to the host."""
        A, B = self._sums_gram()
        xp = get_array_module(A)
        A = A.copy()
        A[xp.arange(A.shape[0]), xp.arange(A.shape[0])] += self.n * float(lam)
        return to_numpy(solve_on(xp, A, B))

    def _sums_gram(self):
        """``(Z^T Z, Z^T Y)`` in the namespace of the sums (device arrays for sums kept on a GPU); formed on the
        first call and kept (the caller copies before changing them)."""
        if self._gram is None:
            self._gram = self._form_sums_gram()
        return self._gram

    def _form_sums_gram(self):
        rep = self.rep
        if rep.sums is None:  # a representation without sums (streamed_representation(sums=False)): the features
            if callable(getattr(self._feature_problem(), "factors", None)):  # kept as two factors
                return self._feature_problem().gram()
            feats = self._feature_problem().features()
            if feats is None:
                raise InvalidInputError("this streamed representation kept no sums and its features stream: "
                                        "build it with sums=True for a solver that needs Z^T Z")
            Z = np.asarray(feats[0], dtype=np.float64)
            return Z.T @ Z, Z.T @ np.asarray(self.Y, dtype=np.float64)
        C, b, kr = rep.sums.products()
        xp = get_array_module(C)
        # targets shifted by a constant row (centred for an intercept) need no other pass:
        # B^T (Y - 1 s^T) = B^T Y - (B^T 1) s^T
        if is_dask_collection(self.Y):  # checked by the workers: the targets never come to the client
            y_sum = shifted_sums(rep.Y, self.Y) if is_dask_collection(rep.Y) else None
            if y_sum is None:  # targets unrelated to the accumulated ones: one more pass
                b = dask_sums(rep.kernel, rep.X, self.Y, rep.X_basis, rep.mix, shift=rep.sums.shift,
                              products=rep.info.get("products", "float64"),
                              chunk_rows=rep.info["chunk_rows"], loops=rep.options.engine)[0].products()[1]
            else:
                b = b - np.outer(kr, (np.asarray(rep.sums.y_sum) - y_sum) / max(self.n, 1))
        else:
            shift = (to_numpy(rep.sums.y_sum) - self.Y.sum(axis=0)) / max(self.n, 1)
            if not isinstance(rep.Y, np.ndarray) or np.allclose(
                    rep.Y - shift, self.Y, rtol=0, atol=1e-12 * (1.0 + np.abs(self.Y).max(initial=0.0))):
                b = b - xp.outer(kr, xp.asarray(shift))
            else:  # targets unrelated to the accumulated ones: one more pass
                b = accumulate(rep.kernel, rep.X, self.Y, rep.X_basis, rep.mix, options=rep.options,
                               device=xp is not np).products()[1]
        UD = rep.UD
        A = UD.T @ C @ UD
        return 0.5 * (A + A.T), UD.T @ b

    def _feature_problem(self):
        if self._features is None:
            rep = self.rep
            if is_dask_collection(rep.X):  # passes are map-reduces of the workers; the client holds no n rows
                self._features = DaskFeatureProblem(rep.kernel, rep.X, self.Y, rep.X_basis, rep.proj, rep.options)
                how = "streamed"
            elif getattr(rep, "kept", None) is not None:  # formed by an earlier solve of this fit (a λ path)
                how = "in-memory"
                self._features = (ArrayProblem(rep.kept, self.Y) if rep.kept_right is None
                                  else FactoredArrayProblem(rep.kept, rep.kept_right, self.Y))
            else:
                self._features, how = make_feature_problem(rep.kernel, rep.X, self.Y, rep.X_basis, rep.proj,
                                                           rep.options, products=rep.info.get("products"),
                                                           factors=(rep.R, rep.UD), factored=rep.factored)
                if how == "in-memory":  # every later solve of the fit (a λ path, the final fit) reuses them
                    factors = getattr(self._features, "factors", None)
                    if callable(factors):
                        rep.kept, rep.kept_right, _ = factors()
                        rep.info["kept_dtype"] = str(rep.kept.dtype)  # (the rule: plan_newton.kept_block_dtype)
                    else:
                        rep.kept = self._features.features()[0]
            rep.info["representation"] = how
        return self._features

    def blocks(self, chunk_rows=None):
        return self._feature_problem().blocks(chunk_rows)

    def factors(self):
        """``(L, P, Y)`` where the budget kept the features as two factors ``Z = L P``
        (:class:`~skframe.contract.problems.FactoredArrayProblem`), else None."""
        own = getattr(self._feature_problem(), "factors", None)
        return own() if callable(own) else None

    def loss_pass(self, V, C, loss, gradient=True):
        """The feature problem's one-pass loss and gradient without forming Z (see
        :meth:`skframe.compute.stream_problems.StreamedFeatureProblem.loss_pass`), or None."""
        own = getattr(self._feature_problem(), "loss_pass", None)
        return None if own is None else own(V, C, loss, gradient)

    def dual_pass(self, V, C, loss, lam):
        """The feature problem's own duality-certificate pass (the Dask problem's map-reduce), or None."""
        own = getattr(self._feature_problem(), "dual_pass", None)
        return None if own is None else own(V, C, loss, lam)

    def features(self):
        return self._feature_problem().features()


class StreamedRepresentation:
    """Training representation from one streamed pass (same interface as the in-memory one).

    Attributes
    ----------
    kind : str
        ``"sketch"``.
    Z : None
        Features are never held here (see :meth:`problem`).
    info : dict
        Sketch summary, rank, chunking and ``representation``.
    X_basis : array (s', n_features)
        The sampled points ``X_sub``.
    proj : ndarray (s', r)
        ``S_mix^T U D^{-1/2}``: ``coef_ = proj @ W``.
    """

    kind = "sketch"
    Z = None
    K = None
    feature_map = None
    #: the n x r features the budget let the first solve keep (:meth:`SumsProblem.blocks`), formed once a fit;
    #: with ``kept_right`` (r' x r), their left factor (n x r'): the features are ``kept @ kept_right``
    kept = None
    kept_right = None
    #: keep the features as two factors (for the Newton solver, which reads them apart): where no sums are formed
    factored = False

    def kept_rows(self, rows):
        """The kept features of ``rows`` (formed from the two factors where they are kept so), or None."""
        if self.kept is None:
            return None
        return self.kept[rows] if self.kept_right is None else self.kept[rows] @ self.kept_right

    def __init__(self, kernel, X, Y, R, fit, options, UD):
        self.kernel, self.X, self.Y, self.mix, self.options, self.R = kernel, X, Y, R.mix, options, R
        self.sums, self.UD = fit.info.pop("sums"), UD
        self.X_basis, self.proj = fit.X_sub, fit.proj
        self.info = dict(R.summary(), rank=int(fit.proj.shape[1]), representation="accumulated",
                         **{k: v for k, v in fit.info.items() if k != "rank"})

    def problem(self, Y):
        return SumsProblem(self, Y if is_dask_collection(Y) else np.asarray(Y, dtype=np.float64))

    def expansion(self, W):
        return {"coef_": self.proj @ W, "X_fit_": self.X_basis, "feature_map_": None}


def streamed_representation(X, Y, kernel, sketch, rng, options, *, rtol=None, progress=None, executor=None,
                            sums=True):
    """Draw the sketch and accumulate the streamed sums of ``(X, Y)``: a :class:`StreamedRepresentation`.

    The executor is the fit's plan's (:attr:`skframe.compute.plan.ExecutionPlan.executor`): ``"dask"`` sums
    the partitions on their cluster (:func:`skframe.compute.distributed.fit_sketched_ridge_dask`),
    ``"streamed"`` makes one pass in this process (:func:`skframe.compute.streaming.fit_sketched_ridge`).

    Parameters
    ----------
    X : ndarray, np.memmap, sparse matrix or dask array
    Y : ndarray (n, d) (dask array for dask X)
    kernel : kernel object, prepared on X
    sketch : sketch object (``draw`` returning a SketchMatrix)
    rng : numpy.random.Generator
    options : ComputeOptions
    executor : {"streamed", "dask"}, optional
        The plan's executor; by default the one the plan's description of ``X`` implies.
    sums : bool, default=True
        False: no pass over the rows here (in this process only): the fit's solver reads the features (kept by
        its first solve, :meth:`SumsProblem.blocks`), never the square loss's sums.
    """
    if executor is None:
        executor = "dask" if describe_data(X).dask else "streamed"
    dask = executor == "dask"
    n = int(X.shape[0])
    R = draw_sketch(sketch, n, rng, X=None if dask else X, kernel=kernel)
    if dask:
        fit = fit_sketched_ridge_dask(kernel, X, Y, R, None, options=options, rtol=rtol, keep_sums=True)
    else:
        fit = fit_sketched_ridge(kernel, X, Y, R, None, options=options, rtol=rtol, progress=progress,
                                 keep_sums=True, sums=sums)
    UD = fit.info.pop("UD")
    rep = StreamedRepresentation(kernel, X, Y if dask else np.asarray(Y, dtype=np.float64), R, fit, options, UD)
    rep.factored = not (sums or dask)  # the Newton solver reads kept features as two factors apart
    return rep
