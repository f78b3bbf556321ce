"""Tags: what a component can do, declared in one typed object per kind.

Every component kind has a frozen dataclass of capabilities: :class:`KernelTags`,
:class:`SketchTags`, :class:`LossTags`, :class:`SolverTags`, :class:`DecoderTags` and
:class:`OutputMatrixTags`. A component declares its tags with ``__skframe_tags__``, either a
method (tags that depend on the parameters, e.g. a Lipschitz constant)::

    def __skframe_tags__(self):
        return LossTags(smooth=True, lipschitz=self.kappa)

or a class attribute (tags shared by every instance; the only form that :func:`get_tags` can
read from the class itself, before the factory is called)::

    __skframe_tags__ = SketchTags(feature_map=True)

Everything in skframe asks :func:`get_tags`, which fills the defaults for a component that
declares nothing: a minimal third-party kernel (``__call__`` only) is a float64, NumPy,
single-threaded kernel that is neither normalised nor linear.

Deprecated: before tags, components declared capabilities as loose attributes (``normalized``,
``is_linear``, ``backends``, ``dtypes``, ``thread_safe``, a ``spectral_sampler`` method on
kernels; ``feature_map`` on sketches; ``closed_form`` or ``quadratic``, ``smooth``,
``lipschitz``, ``classification``, ``quantiles``, ``output_rkhs`` and ``default_solver`` on
losses). :func:`get_tags` still reads them from a component without ``__skframe_tags__``, and
says so once per class with a :class:`DeprecationWarning`; they will stop being read in a
later release.

>>> class Cauchy:
...     __skframe_tags__ = KernelTags(normalized=True, thread_safe=True)
...     def __call__(self, X, Y=None):
...         ...
>>> get_tags(Cauchy()).normalized
True
>>> get_tags(Cauchy).thread_safe
True
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

from skframe.contract.kinds import KIND_TABLE
from skframe.exceptions import InvalidParameterError, PluginError

# No __all__: the public names here are those without a leading underscore; the stable list for plugin
# authors is written once, in skframe.plugin.api.

# One frozen dataclass per component kind, all declared alike on purpose (fields with defaults,
# documented under "Attributes"): a plain declaration per kind reads better than a generated one,
# so the shape repeats from class to class (see also SolverTags).


@dataclass(frozen=True)
class KernelTags:
    """Capabilities of a kernel.

    Attributes
    ----------
    normalized : bool, default False
        ``k(x, x) = 1`` for every x (decoders then skip the constant ``-k(c, c)/2``).
    is_linear : bool, default False
        ``k(x, y) = <x, y>`` (structured models then skip the output basis).
    backends : tuple of str, default ("numpy",)
        Array backends the kernel computes on; with ``"cupy"`` it is called with device arrays.
    dtypes : tuple of str, default ("float64",)
        Precisions the kernel computes natively when called as ``kernel(X, Y, dtype=...)``; a
        float32 block of a kernel without ``"float32"`` is its float64 block rounded once.
    thread_safe : bool, default False
        Several threads may call the kernel at once (it changes no state when called); the plain
        NumPy sketch product then shares tiles of rows among the cores. A kernel without it is
        called from the caller's thread only.
    spectral_sampler : bool, default False
        The kernel is shift-invariant and has a method ``spectral_sampler(d, m, rng)`` giving m
        frequencies of shape (m, d) of its spectral measure (random Fourier features).
    device_formula : str or None, default None
        The family of the kernel's formula (``"gaussian"``, ``"laplacian"``, ``"linear"``,
        ``"polynomial"``), for reports; None otherwise. The GPU engine never reads it: a kernel
        computes on a device when its ``backends`` list ``"cupy"`` (it is then called with device
        arrays and computes with their namespace). A subclass that changes the formula declares its
        own tags.
    """

    normalized: bool = False
    is_linear: bool = False
    backends: tuple = ("numpy",)
    dtypes: tuple = ("float64",)
    thread_safe: bool = False
    spectral_sampler: bool = False
    device_formula: str | None = None


@dataclass(frozen=True)
class SketchTags:
    """Capabilities of a sketch.

    Attributes
    ----------
    feature_map : bool, default False
        A data-independent explicit feature map (random Fourier features): the sketch
        implements ``fit_features(kernel, X, rng)`` instead of ``draw``, and its size may exceed n.
    """

    feature_map: bool = False


@dataclass(frozen=True)
class LossTags:
    """Capabilities of a loss.

    Attributes
    ----------
    square : bool, default False
        The loss is the square loss ``1/2 ||f - y||^2``: the model is solved in closed form, and
        a streamed fit accumulates ``Z^T Z`` instead of iterating.
    smooth : bool, default False
        Differentiable everywhere (L-BFGS applies).
    lipschitz : float, default inf
        Lipschitz constant in the prediction of one output (for a loss with ``quantiles``: in
        the Euclidean norm of the prediction at all its levels); ``inf`` when unbounded. A finite
        one makes the intercept the median (robust losses).
    classification : bool, default False
        A classification loss on ±1 codes (the classifier uses it; regressors refuse it).
    one_of_k : bool, default False
        A classification loss on one vector output over all the classes: its targets hold one +1 per
        row (the class) and -1 elsewhere (the multinomial loss), not independent ±1 columns.
    quantiles : tuple of float or None, default None
        The quantile levels a pinball-type loss is fitted at, one per output column.
    output_rkhs : bool, default False
        The loss acts on the squared distance in an output RKHS (neural output kernel
        regression); it then also has ``torch_value(u)``.
    default_solver : str or None, default None
        Registered name of the solver a model uses when none is given; None lets the model
        choose from the other tags (closed form for the square loss, L-BFGS when smooth, else Adam).
    """

    square: bool = False
    smooth: bool = False
    lipschitz: float = math.inf
    classification: bool = False
    one_of_k: bool = False
    quantiles: tuple | None = None
    output_rkhs: bool = False
    default_solver: str | None = None


# declared like the other tag classes, on purpose (see the note above KernelTags)
@dataclass(frozen=True)
class SolverTags:
    """Capabilities (and requirements) of a solver.

    Attributes
    ----------
    requires_smooth : bool, default False
        Only smooth losses (``LossTags.smooth``), e.g. L-BFGS.
    requires_square : bool, default False
        Only the square loss (``LossTags.square``), e.g. the closed form.
    requires_dual : bool, default False
        Only losses with a Fenchel dual (``loss.dual``), e.g. dual coordinate ascent, ADMM.
    in_memory : bool, default False
        Needs the features in memory (``problem.features()`` not None); refuses streamed problems.
    """

    requires_smooth: bool = False
    requires_square: bool = False
    requires_dual: bool = False
    in_memory: bool = False


@dataclass(frozen=True)
class DecoderTags:
    """Capabilities of a decoder.

    Attributes
    ----------
    candidates : bool, default True
        The decoder searches a candidate set (``decode(G, candidates=..., k=...)`` returns
        ``(indices, scores)``); False for a decoder that maps the surrogate to outputs
        (``decode(G, basis_vectors=...)`` returns them, like the identity decoder).
    """

    candidates: bool = True


@dataclass(frozen=True)
class OutputMatrixTags:
    """Capabilities of an output matrix ``M`` of a decomposable kernel.

    Attributes
    ----------
    needs_targets : bool, default False
        ``matrix(d, Y=...)`` is computed from the training targets (e.g. their covariance);
        without it, ``matrix(d)`` alone gives M.
    """

    needs_targets: bool = False


#: {kind name: its tags class}, from the kinds table
TAGS_OF_KIND = {kind.name: globals()[kind.tags] for kind in KIND_TABLE}
_KIND_OF_TAGS = {cls: kind for kind, cls in TAGS_OF_KIND.items()}

# the methods that make an object one kind of component, from the kinds table; a kernel (only ``callable``,
# which many objects are) is tried last
_METHODS = [(kind.name, methods) for kind in KIND_TABLE for methods in kind.methods if methods != ("__call__",)]


def _has(obj, name):
    if isinstance(obj, type):
        return any(name in vars(c) for c in obj.__mro__ if c is not object)
    return callable(getattr(obj, name, None))


def kind_of(component):
    """The component kind of an object or class, from its tags or its methods; None when unknown.

    >>> class Scale:
    ...     def value(self, F, Y): ...
    ...     def gradient(self, F, Y): ...
    >>> kind_of(Scale())
    'loss'
    """
    declared = _declared(component)
    if isinstance(declared, tuple(_KIND_OF_TAGS)):
        return _KIND_OF_TAGS[type(declared)]
    for kind, methods in _METHODS:
        if all(_has(component, m) for m in methods):
            return kind
    if _has(component, "__call__"):
        return "kernel"
    return None


def _declared(component):
    """The declared tags (a tags object), the unbound method of a class, or None."""
    declared = getattr(component, "__skframe_tags__", None)
    if declared is None or not callable(declared) or isinstance(component, type):
        return declared
    return declared()


# ----------------------------------------------------------------------------- deprecated loose attributes
def _kernel_legacy(obj):
    out = {}
    for name in ("normalized", "is_linear", "thread_safe"):
        if hasattr(obj, name):
            out[name] = bool(getattr(obj, name))
    for name in ("backends", "dtypes"):
        if hasattr(obj, name):
            out[name] = tuple(getattr(obj, name))
    if _has(obj, "spectral_sampler"):
        out["spectral_sampler"] = True
    return out


def _loss_legacy(obj):
    out = {}
    for name in ("closed_form", "quadratic"):
        value = getattr(obj, name, None)
        if value is not None:
            out["square"] = bool(value) or out.get("square", False)
    for name in ("smooth", "classification", "output_rkhs"):
        if hasattr(obj, name):
            out[name] = bool(getattr(obj, name))
    if hasattr(obj, "lipschitz"):
        out["lipschitz"] = float(obj.lipschitz)
    if getattr(obj, "quantiles", None) is not None:
        out["quantiles"] = tuple(float(t) for t in obj.quantiles)
    if getattr(obj, "default_solver", None) is not None:
        out["default_solver"] = str(obj.default_solver)
    return out


def _sketch_legacy(obj):
    return {"feature_map": bool(obj.feature_map)} if hasattr(obj, "feature_map") else {}


def _decoder_legacy(obj):
    name = getattr(obj, "name", None)
    return {"candidates": False} if isinstance(name, str) and name.strip().lower() == "identity" else {}


_LEGACY = {"kernel": _kernel_legacy, "sketch": _sketch_legacy, "loss": _loss_legacy, "decoder": _decoder_legacy}
_WARNED = set()


def _warn_legacy(component, kind, found):
    cls = component if isinstance(component, type) else type(component)
    key = (cls.__module__, cls.__qualname__)
    if key in _WARNED:
        return
    _WARNED.add(key)
    names = ", ".join(sorted(found))
    tags = TAGS_OF_KIND[kind].__name__
    warnings.warn(
        f"{cls.__qualname__} declares its capabilities as loose attributes ({names}); declare them with "
        f"`def __skframe_tags__(self): return {tags}(...)` (skframe.plugin.api.{tags}); loose attributes "
        "will stop being read in a later release",
        DeprecationWarning,
        stacklevel=4,
    )


# ----------------------------------------------------------------------------- reading
def get_tags(component, kind=None):
    """The tags of a component: declared by ``__skframe_tags__``, else the defaults of its kind.

    Parameters
    ----------
    component : object or class
        A component (kernel, sketch, loss, solver, decoder, output matrix), or its class:
        a class answers the tags it declares as a class attribute (tags declared by a method
        need an instance; the class then answers the defaults).
    kind : str, optional
        ``"kernel"``, ``"sketch"``, ``"loss"``, ``"solver"``, ``"decoder"`` or
        ``"output_matrix"``; by default found from the declared tags or the methods.

    Returns
    -------
    KernelTags, SketchTags, LossTags, SolverTags, DecoderTags or OutputMatrixTags

    Raises
    ------
    skframe.exceptions.PluginError
        The declared tags are not a tags object, or of another kind than ``kind``.
    skframe.exceptions.InvalidParameterError
        ``kind`` is unknown, or the object is no component and no ``kind`` is given.

    Examples
    --------
    >>> class Minimal:
    ...     def __call__(self, X, Y=None): ...
    >>> get_tags(Minimal())
    KernelTags(normalized=False, is_linear=False, backends=('numpy',), dtypes=('float64',), \
thread_safe=False, spectral_sampler=False, device_formula=None)
    """
    if kind is not None and kind not in TAGS_OF_KIND:
        raise InvalidParameterError(f"unknown component kind {kind!r}; use one of {', '.join(TAGS_OF_KIND)}")
    declared = _declared(component)
    if declared is not None and not callable(declared):
        if not isinstance(declared, tuple(_KIND_OF_TAGS)):
            raise PluginError(
                f"{_label(component)}.__skframe_tags__ gave {declared!r}, not a tags object; return one of "
                f"{', '.join(c.__name__ for c in _KIND_OF_TAGS)} (skframe.plugin.api)"
            )
        if kind is not None and not isinstance(declared, TAGS_OF_KIND[kind]):
            raise PluginError(
                f"{_label(component)} is used as a {kind} but declares {type(declared).__name__}; "
                f"return {TAGS_OF_KIND[kind].__name__}(...) from __skframe_tags__"
            )
        return declared
    kind = kind or kind_of(component)
    if kind is None:
        raise InvalidParameterError(
            f"{_label(component)} is not a component (no solve, decode, matrix, draw, value/gradient or __call__); "
            "pass kind= to get_tags"
        )
    legacy = {} if declared is not None or kind not in _LEGACY else _LEGACY[kind](component)
    if legacy:
        _warn_legacy(component, kind, legacy)
    return TAGS_OF_KIND[kind](**legacy)


def _label(component):
    return component.__qualname__ if isinstance(component, type) else type(component).__qualname__
