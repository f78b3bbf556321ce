"""The fit core of every skframe estimator, as named steps.

A sketched kernel estimator is fitted in the same order whatever its loss or task
(the structure follows Meanti et al., "Kernel methods through the roof: handling
billions of points efficiently", NeurIPS 2020, and scikit-learn's kernel
approximation transformers):

1. **validate** the parameters (:func:`skframe.constraints.validate_params`);
2. **resolve** the components: names (+ params) or objects become objects, and a
   :class:`skframe.contract.specs.ComponentSpec` is recorded for those given by name
   (:func:`resolve_kernel`, :func:`resolve_sketch`, :func:`resolve_loss`,
   :func:`resolve_solver`); kernels are bound to the training data with
   :func:`skframe.contract.protocols.kernel_prepare`;
3. **seed**: one helper turns ``random_state`` into NumPy Generators (:func:`make_rngs`);
4. **size** the sketch (``"auto"``: the execution plan's size, :func:`skframe.compute.plan.plan_fit`;
   an explicit size is clamped to n with a :class:`skframe.exceptions.SketchSizeWarning`,
   :func:`choose_sketch_size`);
5. **draw and represent**: :func:`build_representation` returns the training features
   ``Z`` and how a weight matrix ``W`` becomes a kernel expansion
   (:meth:`Representation.expansion`): ``coef_ = proj W`` on ``X_fit_`` for a sketch,
   ``feature_map_`` for an explicit feature map (random Fourier features), the full
   Gram matrix for the exact model;
6. **solve** a :class:`skframe.contract.problems.Problem` (:func:`run_solver`).

Prediction is :func:`predict_expansion` (kernel expansion or feature map). Steps 4
and 6 live in :mod:`skframe.models._sizes` and :mod:`skframe.models._solve` and are
re-exported here: import every step from this module.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state

from skframe.compute.plan_rules import EXACT_SKETCH_NAMES, is_exact
from skframe.contract import registry
from skframe.contract.collections import n_items
from skframe.contract.problems import ArrayProblem
from skframe.contract.protocols import kernel_block, kernel_prepare
from skframe.contract.registry import component_name, component_params, get_component
from skframe.contract.specs import ComponentSpec
from skframe.contract.tags import get_tags
from skframe.core.engine import planned
from skframe.core.feature_map import build_feature_map, kernel_times
from skframe.core.sketching import SketchMatrix, draw_sketch
from skframe.exceptions import InvalidParameterError
from skframe.models._sizes import _clamp_sketch_object, _is_feature_map_name, auto_sketch_size, choose_sketch_size
from skframe.models._solve import lam_path, run_solver, target_offset

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
    "lam_path",
]

# ----------------------------------------------------------------------------- names and seeds
#: ``is_exact_sketch(sketch)``: True for ``None``, ``"none"`` and ``"exact"`` (any case), the unsketched model
#: (the plan's rule, :func:`skframe.compute.plan_rules.is_exact`)
is_exact_sketch = is_exact


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

    rs = check_random_state(random_state)
    return [np.random.default_rng(rs.randint(0, 2**31 - 1)) for _ in range(k)]


# ----------------------------------------------------------------------------- components
def component_spec(kind, obj, given_name=None, given_params=None):
    """The :class:`ComponentSpec` of a component, or None for an object the registry does not know.

    ``given_name``/``given_params`` are what the user passed; the object's own ``params``
    (after e.g. ``kernel_prepare`` resolved ``gamma="scale"``) take precedence.
    """
    spec_of = getattr(registry, "spec_of", None)  # the registry's reverse map, where it has one
    found = spec_of(kind, obj) if spec_of is not None else None
    if found is not None:
        return found
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
                prepared = get_component("kernel", spec)  # registry-built: saved and rebuilt by name
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
    if not hasattr(obj, "draw") and not get_tags(obj, "sketch").feature_map:
        raise InvalidParameterError(f"sketch={sketch!r} has no draw(n, rng) method; it is not a sketch")
    return obj, spec


def size_and_resolve_sketch(sketch, sketch_size, sketch_params, n, *, plan=None, param="sketch_size"):
    """Steps 2 and 4 for a sketch: ``(sketch or None, spec or None, {"size_rule": ...})``.

    A named sketch of size ``"auto"`` takes the size of the fit's execution ``plan``
    (:class:`skframe.compute.execution.ExecutionPlan`: the sqrt(n) rule capped by what the
    chosen path holds); else its size comes from :func:`choose_sketch_size`. A sketch object
    keeps its own size, except that a size above n is clamped (on a copy) with a warning.
    """
    if is_exact_sketch(sketch):
        return None, None, {"size_rule": "none: exact model"}
    if isinstance(sketch, str):
        if plan is not None and plan.sketch_size is not None and plan.size_rule.startswith("auto"):
            obj, spec = resolve_sketch(sketch, plan.sketch_size, sketch_params)
            return obj, spec, {"size_rule": plan.size_rule}
        fmap = _is_feature_map_name(sketch)
        m, info = choose_sketch_size(sketch_size, n, feature_map=fmap, param=param)
        obj, spec = resolve_sketch(sketch, m, sketch_params)
        return obj, spec, info
    obj, spec = resolve_sketch(sketch, None, sketch_params)
    return _clamp_sketch_object(obj, spec, n, param)


def resolve_loss(loss, loss_params=None):
    """Loss object and spec."""
    return _resolve("loss", loss, loss_params, what="e.g. 'huber'")


def default_solver_name(loss):
    """Default solver of a loss, from its capabilities.

    The loss's tag ``default_solver`` when it declares one; else ``"closed-form"`` for the
    square loss, ``"lbfgs"`` for smooth losses and ``"adam"`` otherwise.
    """
    tags = get_tags(loss, "loss")
    if tags.default_solver:
        return tags.default_solver
    if tags.square:
        return "closed-form"
    return "lbfgs" if tags.smooth else "adam"


def resolve_solver(solver, solver_params, loss):
    """Solver object and spec; ``solver=None`` takes :func:`default_solver_name` of the loss."""
    if solver is None:
        solver = default_solver_name(loss)
    obj, spec = _resolve("solver", solver, solver_params, what="e.g. 'lbfgs'")
    if not hasattr(obj, "solve"):
        raise InvalidParameterError(f"solver={solver!r} has no solve(problem, loss, lam) method; it is not a solver")
    return obj, spec

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
    mix, UD : sparse or dense matrix (m, s') and ndarray (m, r), or None
        The sketch's mixing matrix and ``U_r D_r^{-1/2}`` (``proj = mix^T UD``), for a sketch.
    """

    kind: str
    Z: np.ndarray | None
    info: dict = field(default_factory=dict)
    X_basis: object = None
    proj: np.ndarray | None = None
    feature_map: object = None
    K: np.ndarray | None = None
    mix: object = None
    UD: np.ndarray | None = None

    def problem(self, Y):
        """The :class:`skframe.contract.problems.ArrayProblem` ``(Z, Y)`` handed to solvers."""
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


def build_representation(X, kernel, sketch, rng, *, rtol=None, progress=None, exact="features", options=None):
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
    options : ComputeOptions, optional
        The fit's decisions (:meth:`skframe.compute.execution.ExecutionPlan.compute_options`):
        the engine of the kernel blocks, their budget and precision. Without an engine, the
        routines choose it from the size of their work.

    Returns
    -------
    Representation
    """
    n = n_items(X)
    if sketch is None:
        if exact == "gram":
            K = kernel_block(kernel, X, X, engine=planned(options, n * n).engine)
            if progress is not None:
                progress(n)
            return Representation("exact_gram", None, {"name": "none", "m": n, "n": n, "s_prime": n}, X_basis=X, K=K)

        R = SketchMatrix(n=n, indices=np.arange(n), mix=sp.identity(n, format="csr"), info={"name": "none"})
        fmap, Z, _ = build_feature_map(kernel, X, R, rtol=rtol, progress=progress, options=options,
                                       prepared=True)
        info = {"name": "none", "m": n, "n": n, "s_prime": n, "rank": fmap.rank}
        return Representation("exact", Z, info, X_basis=fmap.X_sub, proj=fmap.proj)
    if get_tags(sketch, "sketch").feature_map:
        fmap = sketch.fit_features(kernel, X, rng)
        Z = fmap.transform(X)
        if progress is not None:
            progress(n)
        name = getattr(sketch, "name", type(sketch).__name__)
        info = {"name": name, "m": int(Z.shape[1]), "n": n, "s_prime": 0, "feature_map": True}
        return Representation("feature_map", Z, info, feature_map=fmap)
    R = draw_sketch(sketch, n, rng, X=X, kernel=kernel)
    fmap, Z, _ = build_feature_map(kernel, X, R, rtol=rtol, progress=progress, options=options,
                                       prepared=True)
    info = R.summary()
    info["rank"] = fmap.rank
    return Representation("sketch", Z, info, X_basis=fmap.X_sub, proj=fmap.proj, mix=fmap.mix, UD=fmap.UD)


def predict_expansion(kernel, X, coef, X_fit=None, feature_map=None, options=None):
    """``k(X, X_fit) @ coef``, or ``feature_map.transform(X) @ coef`` for an explicit feature map.

    ``options``: the prediction's plan (:func:`skframe.compute.plan.plan_predict`); without it the kernel
    blocks follow the same engine rule from the size of the prediction."""
    if feature_map is not None:
        return feature_map.transform(X) @ coef

    return kernel_times(kernel, X, X_fit, coef, options=options)
