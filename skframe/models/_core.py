"""The fit core of every skframe estimator, as named steps.

A sketched kernel estimator is fitted in the same order whatever its loss or task
(the structure follows Meanti et al., "Kernel methods through the roof: handling
billions of points efficiently", NeurIPS 2020, and scikit-learn's kernel
approximation transformers):

1. **validate** the parameters (:func:`skframe.constraints.validate_params`);
2. **resolve** the components: names (+ params) or objects become objects, and a
   :class:`skframe.specs.ComponentSpec` is recorded for those given by name
   (:func:`resolve_kernel`, :func:`resolve_sketch`, :func:`resolve_loss`,
   :func:`resolve_solver`); kernels are bound to the training data with
   :func:`skframe.protocols.kernel_prepare`;
3. **seed**: one helper turns ``random_state`` into NumPy Generators (:func:`make_rngs`);
4. **size** the sketch (:func:`choose_sketch_size`: ``"auto"`` or an explicit size,
   clamped to n with a :class:`skframe.exceptions.SketchSizeWarning`);
5. **draw and represent**: :func:`build_representation` returns the training features
   ``Z`` and how a weight matrix ``W`` becomes a kernel expansion
   (:meth:`Representation.expansion`): ``coef_ = proj W`` on ``X_fit_`` for a sketch,
   ``feature_map_`` for an explicit feature map (random Fourier features), the full
   Gram matrix for the exact model;
6. **solve** a :class:`skframe.problems.Problem` (:func:`run_solver`, which also calls
   solvers written to the earlier ``solve(Z, Y, loss, lam)`` contract).

Prediction is :func:`predict_expansion` (kernel expansion or feature map).
"""

from __future__ import annotations

import inspect
import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..collections import n_items, take
from ..exceptions import InvalidParameterError, SketchSizeWarning
from ..problems import ArrayProblem, SolveResult
from ..protocols import kernel_block, kernel_prepare
from ..registry import component_name, component_params, get_component
from ..specs import ComponentSpec

__all__ = [
    "EXACT_SKETCH_NAMES",
    "is_exact_sketch",
    "make_rngs",
    "resolve_kernel",
    "resolve_sketch",
    "resolve_loss",
    "resolve_solver",
    "default_solver_name",
    "component_spec",
    "choose_sketch_size",
    "size_and_resolve_sketch",
    "target_offset",
    "auto_sketch_size",
    "Representation",
    "build_representation",
    "predict_expansion",
    "run_solver",
    "solver_contract",
    "lam_path",
]

EXACT_SKETCH_NAMES = ("none", "exact")
"""Sketch names meaning "no sketch": the exact kernel model."""

AUTO_MIN_SIZE = 100
AUTO_MAX_SIZE = 1000
AUTO_MEMORY_BYTES = 1 << 30  # default budget of the auto rule when ComputeOptions.memory_budget is None


# ----------------------------------------------------------------------------- names and seeds
def is_exact_sketch(sketch):
    """True for ``None``, ``"none"`` and ``"exact"`` (any case): the unsketched model."""
    return sketch is None or (isinstance(sketch, str) and sketch.strip().lower() in EXACT_SKETCH_NAMES)


def make_rngs(random_state, k=1):
    """``k`` independent NumPy Generators from a ``random_state`` (None, int, RandomState or Generator).

    The i-th Generator is seeded with the i-th ``randint(0, 2**31 - 1)`` of
    ``sklearn.utils.check_random_state(random_state)``, so a given integer seed gives
    the same draws as earlier skframe versions (sketch first, then solver).

    Returns
    -------
    list of numpy.random.Generator
    """
    if isinstance(random_state, np.random.Generator):
        return [np.random.default_rng(int(random_state.integers(0, 2**31 - 1))) for _ in range(k)]
    from sklearn.utils import check_random_state

    rs = check_random_state(random_state)
    return [np.random.default_rng(rs.randint(0, 2**31 - 1)) for _ in range(k)]


# ----------------------------------------------------------------------------- components
def component_spec(kind, obj, given_name=None, given_params=None):
    """The :class:`ComponentSpec` of a component, or None for an object the registry does not know.

    ``given_name``/``given_params`` are what the user passed; the object's own ``params``
    (after e.g. ``kernel_prepare`` resolved ``gamma="scale"``) take precedence.
    """
    name = given_name or component_name(obj)
    if name is None:
        return None
    params = getattr(obj, "params", None)
    if not isinstance(params, dict):
        params = component_params(obj) or given_params or {}
    return ComponentSpec(kind, str(name), dict(params))


def _resolve(kind, obj, params, *, what):
    """Name -> built component (+ spec); object -> itself (params must be empty)."""
    params = dict(params or {})
    if obj is None:
        raise InvalidParameterError(f"{kind}=None; pass a registered {kind} name or a {kind} object ({what})")
    if isinstance(obj, str):
        built = get_component(kind, obj, **params)
        return built, component_spec(kind, built, component_name(built) or obj, params)
    if params:
        raise InvalidParameterError(
            f"{kind}_params={params} given with a {kind} object {obj!r}; set them on the object instead"
        )
    return obj, component_spec(kind, obj)


def resolve_kernel(kernel, kernel_params=None, X=None):
    """Kernel object and spec; with training data ``X`` the kernel is bound to it (``kernel_prepare``).

    Returns
    -------
    kernel : kernel object
    spec : ComponentSpec or None
        Records the prepared kernel's parameters (e.g. a numeric ``gamma`` chosen from X).
    """
    obj, spec = _resolve("kernel", kernel, kernel_params, what="e.g. 'gaussian'")
    if not callable(obj):
        raise InvalidParameterError(f"kernel={kernel!r} is neither a registered name nor a callable kernel object")
    if X is not None:
        prepared = kernel_prepare(obj, X)
        if prepared is not obj:
            spec = component_spec("kernel", prepared, spec.name if spec else None)
            if spec is not None and component_name(prepared) is None:
                prepared = spec.build()  # registry-built: saved and rebuilt by name
            obj = prepared
    return obj, spec


def resolve_sketch(sketch, size, sketch_params=None):
    """Sketch object and spec, or ``(None, None)`` for the exact model.

    ``size`` is the already chosen integer m (see :func:`choose_sketch_size`); it is
    passed as ``size=`` to a named sketch and ignored for a sketch object.
    """
    if is_exact_sketch(sketch):
        return None, None
    if isinstance(sketch, str):
        return _resolve("sketch", sketch, dict(sketch_params or {}, size=int(size)), what="e.g. 'psr'")
    obj, spec = _resolve("sketch", sketch, sketch_params, what="e.g. 'psr'")
    if not hasattr(obj, "draw") and not getattr(obj, "feature_map", False):
        raise InvalidParameterError(f"sketch={sketch!r} has no draw(n, rng) method; it is not a sketch")
    return obj, spec


def resolve_loss(loss, loss_params=None):
    """Loss object and spec."""
    return _resolve("loss", loss, loss_params, what="e.g. 'huber'")


def default_solver_name(loss):
    """Default solver of a loss, from its capabilities.

    ``loss.default_solver`` when the loss declares one; else ``"closed-form"`` for the
    square loss, ``"lbfgs"`` for smooth losses and ``"adam"`` otherwise.
    """
    declared = getattr(loss, "default_solver", None)
    if declared:
        return declared
    if getattr(loss, "quadratic", False) or getattr(loss, "name", None) == "square":
        return "closed-form"
    return "lbfgs" if getattr(loss, "smooth", False) else "adam"


def resolve_solver(solver, solver_params, loss):
    """Solver object and spec; ``solver=None`` takes :func:`default_solver_name` of the loss."""
    if solver is None:
        solver = default_solver_name(loss)
    obj, spec = _resolve("solver", solver, solver_params, what="e.g. 'lbfgs'")
    if not hasattr(obj, "solve"):
        raise InvalidParameterError(f"solver={solver!r} has no solve(problem, loss, lam) method; it is not a solver")
    return obj, spec


# ----------------------------------------------------------------------------- sketch size
def auto_sketch_size(n, *, memory_budget=None, itemsize=8):
    """The ``"auto"`` sketch size for n training points, and the rule that gave it.

    ``m = ceil(sqrt(n) log n)`` clamped to ``[min(n, 100), min(n, 1000)]``, the order
    under which uniform Nyström sub-sampling keeps the statistical accuracy of the
    exact estimator (Rudi, Camoriano and Rosasco, "Less is More: Nyström Computational
    Regularization", NeurIPS 2015; El Ahmad et al., "Fast Kernel Methods for Generic
    Lipschitz Losses via p-Sparsified Sketches", TMLR 2023, use the same order), then
    capped so that the n x m blocks of the fit (about three of them) stay within
    ``memory_budget`` bytes (1 GiB when None).

    >>> auto_sketch_size(50)[0], auto_sketch_size(4000)[0], auto_sketch_size(10**6)[0]
    (50, 525, 44)
    """
    n = int(n)
    budget = AUTO_MEMORY_BYTES if memory_budget is None else int(memory_budget)
    rule = math.ceil(math.sqrt(n) * math.log(max(n, 2)))
    m = min(max(rule, min(n, AUTO_MIN_SIZE)), min(n, AUTO_MAX_SIZE))
    cap = max(1, budget // (3 * max(n, 1) * itemsize))
    text = f"auto: ceil(sqrt(n) log n) in [min(n, {AUTO_MIN_SIZE}), min(n, {AUTO_MAX_SIZE})]"
    if cap < m:
        m = cap
        text += f", capped by the memory budget ({budget} bytes)"
    return max(1, int(m)), text


def choose_sketch_size(sketch_size, n, *, feature_map=False, memory_budget=None, param="sketch_size"):
    """The integer sketch size m and ``{"size_rule": ...}`` for ``sketch_info_``.

    ``"auto"`` (or None) applies :func:`auto_sketch_size`; an explicit size larger than
    ``n`` is clamped to ``n`` with a :class:`SketchSizeWarning` (not for explicit feature
    maps such as random Fourier features, whose number of features may exceed n).
    """
    if sketch_size is None or (isinstance(sketch_size, str) and sketch_size.strip().lower() == "auto"):
        m, rule = auto_sketch_size(n, memory_budget=memory_budget)
        return m, {"size_rule": rule}
    m = int(sketch_size)
    if m > n and not feature_map:
        warnings.warn(
            f"{param}={m} is larger than n_samples={n}; using {param}={n} (set {param}='auto' or a size <= "
            "n_samples to silence this warning)",
            SketchSizeWarning,
            stacklevel=3,
        )
        return n, {"size_rule": f"given ({m}), clamped to n_samples={n}"}
    return m, {"size_rule": "given"}


def size_and_resolve_sketch(sketch, sketch_size, sketch_params, n, *, memory_budget=None, param="sketch_size"):
    """Steps 2 and 4 for a sketch: ``(sketch or None, spec or None, {"size_rule": ...})``.

    A named sketch gets the size from :func:`choose_sketch_size`; a sketch object keeps
    its own size, except that a size above n is clamped (on a copy) with a warning.
    """
    if is_exact_sketch(sketch):
        return None, None, {}
    if isinstance(sketch, str):
        fmap = _is_feature_map_name(sketch)
        m, info = choose_sketch_size(sketch_size, n, feature_map=fmap, memory_budget=memory_budget, param=param)
        obj, spec = resolve_sketch(sketch, m, sketch_params)
        return obj, spec, info
    obj, spec = resolve_sketch(sketch, None, sketch_params)
    return _clamp_sketch_object(obj, spec, n, param)


def _is_feature_map_name(name):
    """True when the registered sketch ``name`` is an explicit feature map (its class says so)."""
    from ..plugins import get_plugin_registry

    comp = get_plugin_registry().components["sketch"].get(name.strip().lower())
    return bool(getattr(getattr(comp, "factory", None), "feature_map", False))


def _clamp_sketch_object(sketch, spec, n, param):
    """A sketch object whose ``size`` exceeds n: a copy of size n (the user's object is not modified)."""
    size = getattr(sketch, "size", None)
    if not isinstance(size, (int, np.integer)) or size <= n or getattr(sketch, "feature_map", False):
        return sketch, spec, {"size_rule": "given"}
    m, info = choose_sketch_size(int(size), n, param=param)
    if spec is not None:
        spec = ComponentSpec(spec.kind, spec.name, dict(spec.params, size=m))
        return spec.build(), spec, info
    import copy

    clone = copy.copy(sketch)
    clone.size = m
    return clone, spec, info


# ----------------------------------------------------------------------------- representation
@dataclass
class Representation:
    """Training features of a kernel model and how weights become a kernel expansion.

    Attributes
    ----------
    kind : {"sketch", "feature_map", "exact", "exact_gram"}
        ``"exact"`` has features ``Z = U D^{1/2}`` of the full Gram matrix (any loss);
        ``"exact_gram"`` keeps the Gram matrix ``K`` itself (square loss, Cholesky).
    Z : ndarray of shape (n, r) or None
        Training features (None for ``"exact_gram"``).
    info : dict
        Description of the draw for ``sketch_info_`` (m, n, s', rank, size_rule, ...).
    X_basis : array, sparse matrix, InputCollection or None
        The training points a kernel expansion runs over (None for a feature map).
    proj : ndarray of shape (s', r) or None
        ``coef_ = proj @ W`` for sketches and the exact feature form.
    feature_map : object or None
        An explicit feature map with ``transform(X)`` (random Fourier features).
    K : ndarray of shape (n, n) or None
        The Gram matrix of the ``"exact_gram"`` form.
    """

    kind: str
    Z: np.ndarray | None
    info: dict = field(default_factory=dict)
    X_basis: object = None
    proj: np.ndarray | None = None
    feature_map: object = None
    K: np.ndarray | None = None

    def problem(self, Y):
        """The :class:`skframe.problems.ArrayProblem` ``(Z, Y)`` handed to solvers."""
        return ArrayProblem(self.Z, Y)

    def expansion(self, W):
        """Fitted attributes for weights ``W`` (r x d): ``{"coef_", "X_fit_", "feature_map_"}``.

        ``f(x) = k(x, X_fit_) @ coef_`` for kernel expansions, ``feature_map_.transform(x) @ coef_``
        for explicit feature maps (then ``X_fit_`` is None).
        """
        if self.feature_map is not None:
            return {"coef_": W, "X_fit_": None, "feature_map_": self.feature_map}
        coef = W if self.proj is None else self.proj @ W
        return {"coef_": coef, "X_fit_": self.X_basis, "feature_map_": None}


def build_representation(X, kernel, sketch, rng, *, rtol=None, progress=None, exact="features"):
    """Draw the sketch and build the training representation (the only place it is built).

    Parameters
    ----------
    X : array, sparse matrix or InputCollection of n training inputs
    kernel : kernel object (already prepared on X)
    sketch : sketch object or None
        None gives the exact model, in the form chosen by ``exact``.
    rng : numpy.random.Generator
    rtol : float, optional
        Relative eigenvalue tolerance of ``R K R^T``.
    progress : callable, optional
        Called with a number of rows after each kernel block.
    exact : {"features", "gram"}
        Exact model as features ``Z = U D^{1/2}`` (``R = I``, any loss) or as the Gram
        matrix (square loss solved by Cholesky).

    Returns
    -------
    Representation
    """
    from ..sketching import SketchMatrix, build_feature_map, draw_sketch

    n = n_items(X)
    if sketch is None:
        if exact == "gram":
            K = kernel_block(kernel, X, X)
            if progress is not None:
                progress(n)
            return Representation("exact_gram", None, {"name": "none", "m": n, "n": n, "s_prime": n}, X_basis=X, K=K)
        import scipy.sparse as sp

        R = SketchMatrix(n=n, indices=np.arange(n), mix=sp.identity(n, format="csr"), info={"name": "none"})
        fmap, Z, _ = build_feature_map(kernel, X, R, rtol=rtol, progress=progress)
        info = {"name": "none", "m": n, "n": n, "s_prime": n, "rank": fmap.rank}
        return Representation("exact", Z, info, X_basis=fmap.X_sub, proj=fmap.proj)
    if getattr(sketch, "feature_map", False):
        fmap = sketch.fit_features(kernel, X, rng)
        Z = fmap.transform(X)
        if progress is not None:
            progress(n)
        name = getattr(sketch, "name", type(sketch).__name__)
        info = {"name": name, "m": int(Z.shape[1]), "n": n, "s_prime": 0, "feature_map": True}
        return Representation("feature_map", Z, info, feature_map=fmap)
    R = draw_sketch(sketch, n, rng, X=X, kernel=kernel)
    fmap, Z, _ = build_feature_map(kernel, X, R, rtol=rtol, progress=progress)
    info = R.summary()
    info["rank"] = fmap.rank
    return Representation("sketch", Z, info, X_basis=fmap.X_sub, proj=fmap.proj)


def predict_expansion(kernel, X, coef, X_fit=None, feature_map=None):
    """``k(X, X_fit) @ coef``, or ``feature_map.transform(X) @ coef`` for an explicit feature map."""
    if feature_map is not None:
        return feature_map.transform(X) @ coef
    from ..sketching import kernel_times

    return kernel_times(kernel, X, X_fit, coef)


def sample_rows(X, indices):
    """Rows/items ``indices`` of an array, sparse matrix or input collection."""
    return take(X, np.asarray(indices))


# ----------------------------------------------------------------------------- solving
def solver_contract(solver):
    """``"problem"`` for ``solve(problem, loss, lam, ...)``, ``"arrays"`` for the earlier ``solve(Z, Y, loss, lam, ...)``."""
    try:
        params = list(inspect.signature(solver.solve).parameters.values())
    except (TypeError, ValueError):
        return "problem"
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if positional and positional[0].name == "problem":
        return "problem"
    required = [p for p in positional if p.default is p.empty]
    return "arrays" if len(required) >= 4 else "problem"


def _accepts(func, name):
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def run_solver(solver, problem, loss, lam, *, M=None, rng=None, init=None, progress=None):
    """Call ``solver.solve`` under either contract and return a :class:`SolveResult`.

    Solvers written to the earlier contract ``solve(Z, Y, loss, lam, *, M=None, rng=None)``
    returning W get the problem's in-memory arrays; their ``history_``/``stop_reason_``/
    ``n_iter_`` attributes, when present, fill the result. A progress object with
    ``new_stage(description, total)`` (the CLI's progress bar) gets a stage for the
    solver's epochs or iterations; it is forwarded only to solvers that take ``progress``.
    """
    kwargs = {"M": M, "rng": rng}
    if init is not None and _accepts(solver.solve, "init"):
        kwargs["init"] = init
    new_stage = getattr(progress, "new_stage", None)
    if progress is not None and _accepts(solver.solve, "progress"):
        if new_stage is not None:
            epochs = getattr(solver, "epochs", None)
            total = epochs or getattr(solver, "max_iter", None)
            new_stage(f"{getattr(solver, 'name', 'solver')} {'epochs' if epochs else 'iterations'}", total)
            kwargs["progress"] = progress
    if solver_contract(solver) == "problem":
        out = solver.solve(problem, loss, lam, **kwargs)
        if isinstance(out, SolveResult):
            return out
        return SolveResult(W=np.asarray(out))
    Z, Y = problem.features()
    W = solver.solve(Z, Y, loss, lam, **kwargs)
    return SolveResult(
        W=np.asarray(W),
        history=list(getattr(solver, "history_", []) or []),
        stop_reason=getattr(solver, "stop_reason_", None),
        n_iter=int(getattr(solver, "n_iter_", 0) or 0),
    )


def target_offset(Y, loss=None, fit_intercept=True):
    """The intercept subtracted from the targets before solving and added back at prediction.

    Zeros when ``fit_intercept`` is False. Otherwise the constant that best fits the
    targets under the loss, by capability: the per-level sample quantiles for a loss
    with ``quantiles`` (pinball), the column medians for a loss with a finite Lipschitz
    constant (Huber, epsilon-insensitive: robust to outliers), the column means otherwise
    (square loss, as scikit-learn's linear models).

    Returns
    -------
    ndarray of shape (d,)
    """
    Y = np.asarray(Y, dtype=np.float64)
    d = Y.shape[1]
    if not fit_intercept:
        return np.zeros(d)
    levels = getattr(loss, "quantiles", None)
    if levels is not None and len(levels) == d:
        return np.array([np.quantile(Y[:, j], float(t)) for j, t in enumerate(levels)])
    lip = getattr(loss, "lipschitz", math.inf)
    if loss is not None and np.isfinite(float(lip)):
        return np.median(Y, axis=0)
    return Y.mean(axis=0)


def lam_path(lam):
    """The regularisation values to fit, in order: ``[lam]`` or the given sequence."""
    if isinstance(lam, (list, tuple, np.ndarray)):
        return [float(v) for v in np.asarray(lam, dtype=float).ravel()]
    return [float(lam)]
