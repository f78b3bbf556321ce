"""The five component protocols: the contract a plugin implements.

skframe assembles every model from five kinds of components, each looked up by
name in the registry (see :mod:`skframe.plugin.registry`) and built by a factory that a
plugin registers through the ``register_*`` hooks (see :mod:`skframe.plugin.hookspecs`).

The classes below are abstract bases. A plugin may subclass them, which gives
default implementations of the optional methods, or provide any object with the
required methods (duck typing): the core only calls what is documented here as
required and falls back when an optional method is absent.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

__all__ = [
    "Kernel",
    "Sketch",
    "Loss",
    "Solver",
    "Decoder",
    "kernel_diag",
    "kernel_block",
    "kernel_matvec",
    "kernel_prepare",
    "kernel_is_linear",
    "kernel_backends",
    "repr_from_params",
]


def repr_from_params(component):
    """``Name(key=value, ...)`` from a component's ``params``: its ``__repr__`` (``__repr__ = repr_from_params``).

    Examples
    --------
    >>> class Scaled:
    ...     params = {"factor": 2.0}
    ...     __repr__ = repr_from_params
    >>> Scaled()
    Scaled(factor=2.0)
    """
    args = ", ".join(f"{k}={v!r}" for k, v in component.params.items())
    return f"{type(component).__name__}({args})"


class Kernel(ABC):
    """A positive semi-definite kernel ``k(x, y)``.

    Required
    --------
    ``__call__(X, Y=None)``
        Gram block of shape ``(len(X), len(Y))`` as a NumPy float64 array;
        ``Y=None`` means ``Y = X``. ``X`` and ``Y`` are 2-D NumPy arrays or
        ``scipy.sparse`` matrices (a kernel that cannot handle sparse data
        raises :class:`skframe.exceptions.InvalidInputError`).

    Optional
    --------
    ``diag(X)``
        ``k(x_i, x_i)`` for every row; the default evaluates row by row.
    ``params``
        A JSON-serialisable dict of the parameters the factory was called with,
        used to save models. The default reads ``get_params()`` if present.
    ``normalized``
        True when ``k(x, x) = 1`` for every x (lets decoders skip a term).
    ``matvec(X, Y, W, options=None)``
        ``k(X, Y) @ W`` without returning the whole block (large data, GPUs); the
        default evaluates row blocks within ``options.block_bytes``.
    ``block_bytes(n_rows, n_cols, itemsize=8)``
        Bytes one call ``k(X[:n_rows], Y[:n_cols])`` allocates at its peak (the block
        itself plus temporaries); used to size chunks and refuse impossible budgets.
    ``is_linear``
        True when ``k(x, y) = <x, y>`` (lets structured models skip the output basis).
    ``backends``
        Array backends the kernel computes on (default ``("numpy",)``).
    ``thread_safe``
        True when several threads may call the kernel at once (it keeps no state that a
        call changes); the plain-NumPy sketch product then shares tiles of rows among the
        cores. Default False: the kernel is called from one thread, on whole chunks.
    ``spectral_sampler(d, m, rng)``
        For shift-invariant kernels: ``m`` frequencies of shape ``(m, d)`` drawn from
        the kernel's spectral measure (random Fourier features); absent otherwise.
    ``prepare(X)``
        A kernel bound to training data (e.g. a bandwidth ``gamma="scale"`` set from
        ``X``); the default returns the kernel itself.
    """

    normalized = False
    is_linear = False
    backends = ("numpy",)
    thread_safe = False

    @abstractmethod
    def __call__(self, X, Y=None):
        """Return the Gram block ``K[i, j] = k(X[i], Y[j])``."""

    def diag(self, X):
        """Return ``k(x_i, x_i)`` for each row of ``X``."""
        return np.array([float(self(X[i : i + 1], X[i : i + 1])[0, 0]) for i in range(X.shape[0])])

    def gram_block(self, X, Y=None):
        """Alias of ``__call__``: the Gram block between ``X`` and ``Y``."""
        return self(X, Y)

    def block_bytes(self, n_rows, n_cols, itemsize=8):
        """Peak bytes of one Gram block of ``n_rows x n_cols`` (default: the block itself, twice)."""
        return 2 * int(n_rows) * int(n_cols) * int(itemsize)

    def matvec(self, X, Y, W, options=None):
        """``k(X, Y) @ W`` computed in row blocks within ``options.block_bytes``."""
        return _blocked_matvec(self, X, Y, W, options)

    def prepare(self, X):
        """A kernel bound to training data ``X`` (default: this kernel)."""
        return self


def kernel_diag(kernel, X):
    """``k(x_i, x_i)`` for any kernel object, using ``kernel.diag`` when it exists."""
    diag = getattr(kernel, "diag", None)
    if diag is not None:
        return np.asarray(diag(X), dtype=float).ravel()
    return np.array([float(np.asarray(kernel(X[i : i + 1], X[i : i + 1]))[0, 0]) for i in range(X.shape[0])])


def _blocked_matvec(kernel, X, Y, W, options=None):
    from skframe.options import DEFAULT_OPTIONS
    from skframe.plugin.collections import chunks, is_collection, n_items

    options = options or DEFAULT_OPTIONS
    W = np.asarray(W)
    n = n_items(X)
    n_ref = n_items(Y)
    dtype = np.result_type(W.dtype, np.float32 if options.dtype == "float32" else np.float64)
    out = np.empty((n,) + W.shape[1:], dtype=dtype)
    step = options.rows_per_block(n_ref, np.dtype(dtype).itemsize)
    for start, stop in chunks(n, step):
        Xb = X.take(np.arange(start, stop)) if is_collection(X) else X[start:stop]
        out[start:stop] = kernel_block(kernel, Xb, Y, dtype=dtype) @ W
    return out


def kernel_matvec(kernel, X, Y, W, options=None):
    """``k(X, Y) @ W`` for any kernel object, through ``kernel.matvec`` when it exists."""
    mv = getattr(kernel, "matvec", None)
    if mv is not None:
        try:
            return mv(X, Y, W, options=options)
        except TypeError:  # a third-party matvec without the options keyword
            return mv(X, Y, W)
    return _blocked_matvec(kernel, X, Y, W, options)


def kernel_prepare(kernel, X):
    """The kernel bound to training data: ``kernel.prepare(X)`` when it exists, else the kernel."""
    prep = getattr(kernel, "prepare", None)
    return kernel if prep is None else prep(X)


def kernel_is_linear(kernel):
    """True when the kernel declares ``is_linear`` (``k(x, y) = <x, y>``)."""
    return bool(getattr(kernel, "is_linear", False))


def kernel_backends(kernel):
    """Backends the kernel declares (``("numpy",)`` when it says nothing)."""
    return tuple(getattr(kernel, "backends", ("numpy",)))


def kernel_block(kernel, X, Y, dtype=np.float64):
    """Evaluate ``kernel(X, Y)`` and return a dense float64 array of the right shape."""
    K = kernel(X, Y)
    if hasattr(K, "toarray"):
        K = K.toarray()
    K = np.asarray(K, dtype=dtype)
    nx = len(X) if not hasattr(X, "shape") else X.shape[0]
    ny = len(Y) if not hasattr(Y, "shape") else Y.shape[0]
    if K.shape != (nx, ny):
        from skframe.exceptions import PluginError

        raise PluginError(
            f"kernel {type(kernel).__name__} returned a block of shape {K.shape}, expected "
            f"{(nx, ny)}; a kernel must return shape (len(X), len(Y))"
        )
    return K


class Sketch(ABC):
    """A random sketching distribution producing ``R = S_mix @ S_sub`` (m x n).

    Required
    --------
    ``draw(n, rng, *, X=None, kernel=None)``
        Draw one sketch for ``n`` training points with the NumPy ``Generator``
        ``rng`` and return a :class:`skframe.core.sketching.SketchMatrix`.
        Data-dependent sketches (leverage scores) may use ``X`` and ``kernel``;
        the others ignore them.

    Optional
    --------
    ``size``
        The number of rows m the sketch will have.
    ``feature_map``
        True for data-independent feature maps (random Fourier features) that
        are not of the ``R = S_mix S_sub`` form; such a sketch implements
        ``fit_features(kernel, X, rng)`` returning an object with
        ``transform(X) -> (len(X), m)`` instead of ``draw``.
    """

    feature_map = False

    @abstractmethod
    def draw(self, n, rng, *, X=None, kernel=None):
        """Draw a sketch for ``n`` points; return a ``SketchMatrix``."""


class Loss(ABC):
    """A convex loss ``l(prediction, target)`` on rows of predictions.

    Required
    --------
    ``value(F, Y)``
        Per-sample losses, shape ``(n,)``, for predictions and targets of shape
        ``(n, d)``.
    ``gradient(F, Y)``
        A (sub-)gradient with respect to ``F``, shape ``(n, d)``.

    Optional
    --------
    ``lipschitz``
        Lipschitz constant (``inf`` when unbounded, e.g. the square loss).
    ``smooth``
        True when the loss is differentiable everywhere (L-BFGS applies).
    ``dual``
        Its Fenchel dual, what the duality-gap solvers (``admm``, ``dual-cd``) need: an
        object with ``structure`` ("norm" or "separable"), ``quad``, ``l1``, ``radius`` or
        ``bounds(Y)``, ``values(A, Y)`` and ``project(A, Y)`` (see ``skframe_losses.duals``).
    ``default_solver``
        Registered name of the solver a model uses when none is given.
    """

    lipschitz = float("inf")
    smooth = False
    dual = None
    default_solver = None

    @abstractmethod
    def value(self, F, Y):
        """Per-sample loss values."""

    @abstractmethod
    def gradient(self, F, Y):
        """A sub-gradient with respect to the predictions."""


class Solver(ABC):
    """Turns a sketched problem, a loss and a penalty into weights.

    Required
    --------
    ``solve(problem, loss, lam, *, M=None, rng=None, init=None, progress=None)``
        Minimise ``(1/n) sum_i loss(Z_i W M, Y_i) + (lam/2) tr(W M W^T)`` over
        ``W`` of shape ``(r, d)``, where :class:`skframe.plugin.problems.Problem` ``problem``
        yields the features ``Z`` (n x r) and targets ``Y`` (n x d) in row blocks.
        ``M`` is the output matrix of a decomposable kernel (identity when None),
        ``init`` a starting ``W`` (warm starts), ``progress`` an optional callable
        advanced once per iteration or epoch. Return a
        :class:`skframe.plugin.problems.SolveResult`: the solver keeps no run state on itself.
    """

    @abstractmethod
    def solve(self, problem, loss, lam, *, M=None, rng=None, init=None, progress=None):
        """Return a :class:`skframe.plugin.problems.SolveResult`."""


class Decoder(ABC):
    """Turns surrogate predictions into outputs.

    Required
    --------
    ``decode(G, **context)``
        Map surrogate predictions ``G`` of shape ``(n, p)`` to outputs. The
        identity decoder returns ``G``; candidate decoders search a candidate
        set given in ``context``.
    """

    @abstractmethod
    def decode(self, G, **context):
        """Return decoded outputs."""
