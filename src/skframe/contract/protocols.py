"""The six component protocols: the contract a plugin implements.

skframe assembles every model from six kinds of components — kernels, sketches, losses,
solvers, decoders and output matrices — each looked up by name in the registry (see
:mod:`skframe.contract.registry`) and built by a factory that a plugin registers through the
``register_*`` hooks (see :mod:`skframe.contract.hookspecs`). Losses on an output RKHS (neural
output kernel regression) are losses with the tag ``output_rkhs``, not a kind of their own.

The classes below are abstract bases. A plugin may subclass them, which gives default
implementations of the optional methods, or provide any object with the required methods
(duck typing): the core only calls what is documented here as required and falls back when an
optional method is absent. What a component *can do* (a kernel's precisions, a loss being
smooth, ...) is declared in one typed tags object, ``__skframe_tags__`` (see
:mod:`skframe.contract.tags`), never in loose attributes.

Plugin authors import all of this from :mod:`skframe.plugin.api`.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod

import numpy as np

from skframe.contract.collections import chunks, is_collection, n_items
from skframe.contract.kinds import KIND_TABLE
from skframe.exceptions import PluginError, SkframeError
from skframe.options import DEFAULT_OPTIONS

# No __all__: the public names here are those without a leading underscore; the stable list for plugin
# authors is written once, in skframe.plugin.api.


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
    ``__call__(X, Y)``
        Gram block of shape ``(len(X), len(Y))`` as a NumPy float64 array.
        ``X`` and ``Y`` are 2-D NumPy arrays or ``scipy.sparse`` matrices (a
        kernel that cannot handle sparse data raises
        :class:`skframe.exceptions.InvalidInputError`). skframe always passes ``Y``.

    Optional
    --------
    ``__call__(X, Y=None)``
        ``Y=None`` meaning ``Y = X``, for callers' convenience (this base class and the
        built-in kernels accept it; the conformance kit checks it where the signature has it).
    ``diag(X)``
        ``k(x_i, x_i)`` for every row; the default evaluates row by row.
    ``params``
        A JSON-serialisable dict of the parameters the factory was called with,
        used to save models. The default reads ``get_params()`` if present.
    ``matvec(X, Y, W, options=None)``
        ``k(X, Y) @ W`` without returning the whole block (large data, GPUs); the
        default evaluates row blocks within ``options.block_bytes``.
    ``block_bytes(n_rows, n_cols, itemsize=8)``
        Bytes one call ``k(X[:n_rows], Y[:n_cols])`` allocates at its peak (the block
        itself plus temporaries); used to size chunks and refuse impossible budgets.
    ``spectral_sampler(d, m, rng)``
        For shift-invariant kernels (tag ``spectral_sampler=True``): ``m`` frequencies of
        shape ``(m, d)`` drawn from the kernel's spectral measure (random Fourier features).
    ``prepare(X)``
        A kernel bound to training data (e.g. a bandwidth ``gamma="scale"`` set from
        ``X``); the default returns the kernel itself.
    ``__call__(X, Y=None, *, engine=None)``
        A kernel whose ``__call__`` names an ``engine`` keyword receives the engine of the
        fit's inner loops (``"numpy"``, ``"numba"``; see :func:`skframe.core.engine.select_engine`)
        as an argument; with None it chooses from the size of its block.
    ``__skframe_tags__``
        Its :class:`skframe.contract.tags.KernelTags`: ``normalized``, ``is_linear``,
        ``backends``, ``dtypes``, ``thread_safe``, ``spectral_sampler``.
    """

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
    options = options or DEFAULT_OPTIONS
    W = np.asarray(W)
    n = n_items(X)
    n_ref = n_items(Y)
    dtype = np.result_type(W.dtype, np.float32 if options.dtype == "float32" else np.float64)
    out = np.empty((n,) + W.shape[1:], dtype=dtype)
    step = options.rows_per_block(n_ref, np.dtype(dtype).itemsize)
    for start, stop in chunks(n, step):
        Xb = X.take(np.arange(start, stop)) if is_collection(X) else X[start:stop]
        out[start:stop] = kernel_block(kernel, Xb, Y, dtype=dtype, engine=options.engine) @ W
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


def takes_engine(kernel):
    """True when the kernel's ``__call__`` names an ``engine`` keyword (read once per class)."""
    cls = type(kernel)
    found = _TAKES_ENGINE.get(cls)
    if found is None:
        try:
            params = inspect.signature(cls.__call__).parameters.values()
        except (TypeError, ValueError):  # a builtin or extension type without a signature
            params = ()
        found = any(p.name == "engine" and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
        _TAKES_ENGINE[cls] = found
    return found


_TAKES_ENGINE = {}


def _count(X):
    return len(X) if not hasattr(X, "shape") else X.shape[0]


def kernel_block(kernel, X, Y, dtype=np.float64, engine=None):
    """Evaluate ``kernel(X, Y)`` and return a dense array of ``dtype`` of the right shape.

    ``engine`` (the fit's engine of the inner loops) is passed to kernels whose ``__call__``
    takes it (:func:`takes_engine`).
    """
    name = type(kernel).__name__
    try:
        K = kernel(X, Y, engine=engine) if engine is not None and takes_engine(kernel) else kernel(X, Y)
    except (SkframeError, MemoryError):
        raise
    except Exception as exc:  # noqa: BLE001 - a plugin's own failure, said in one line naming the kernel
        raise PluginError(f"kernel {name} failed on a block of {_count(X)} x {_count(Y)} rows ({type(exc).__name__}: "
                          f"{str(exc)[:200]}); fix the kernel, or choose another with --kernel") from exc
    if hasattr(K, "toarray"):
        K = K.toarray()
    try:
        K = np.asarray(K, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise PluginError(f"kernel {name} returned a {type(K).__name__}, not numbers ({str(exc)[:120]}); a kernel "
                          "must return a numeric array of shape (len(X), len(Y))") from exc
    nx = len(X) if not hasattr(X, "shape") else X.shape[0]
    ny = len(Y) if not hasattr(Y, "shape") else Y.shape[0]
    if K.shape != (nx, ny):
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
    ``fit_features(kernel, X, rng)``
        For data-independent feature maps (random Fourier features) that are not of the
        ``R = S_mix S_sub`` form (tag ``feature_map=True``): an object with
        ``transform(X) -> (len(X), m)``, instead of ``draw``.
    ``__skframe_tags__``
        Its :class:`skframe.contract.tags.SketchTags`: ``feature_map``.
    """

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
    ``dual``
        Its Fenchel dual, what the duality-gap solvers (``admm``, ``dual-cd``) need: an
        object with ``structure`` ("norm" or "separable"), ``quad``, ``l1``, ``radius`` or
        ``bounds(Y)``, ``values(A, Y)`` and ``project(A, Y)`` (see ``skframe_losses.duals``).
    ``conjugate``
        The conjugate of a loss whose dual has no such structure (logistic, multinomial): an object
        with ``values(A, Y)`` (``h(alpha, y) = -l^*(-alpha)``, ``-inf`` outside its domain) and
        ``project(A, Y)``; it certifies the duality gap of any solver's result.
    ``hessian(F, Y)``
        Second derivatives with respect to each row's prediction, shape ``(n, d, d)`` (the ``newton`` solver).
    ``probabilities(F)``
        Class probabilities of the predictions (a probabilistic classification loss).
    ``__skframe_tags__``
        Its :class:`skframe.contract.tags.LossTags`: ``square``, ``smooth``, ``lipschitz``,
        ``classification``, ``one_of_k``, ``quantiles``, ``output_rkhs``, ``default_solver``.
    """

    dual = None
    conjugate = None

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
        ``W`` of shape ``(r, d)``, where :class:`skframe.contract.problems.Problem` ``problem``
        yields the features ``Z`` (n x r) and targets ``Y`` (n x d) in row blocks.
        ``M`` is the output matrix of a decomposable kernel (identity when None),
        ``init`` a starting ``W`` (warm starts), ``progress`` an optional callable
        advanced once per iteration or epoch. Return a
        :class:`skframe.contract.problems.SolveResult`: the solver keeps no run state on itself.
    """

    @abstractmethod
    def solve(self, problem, loss, lam, *, M=None, rng=None, init=None, progress=None):
        """Return a :class:`skframe.contract.problems.SolveResult`."""


class Decoder(ABC):
    """Turns surrogate predictions into outputs.

    Required
    --------
    ``decode(G, **context)``
        Map surrogate predictions ``G`` of shape ``(n, p)`` to outputs. The
        identity decoder returns ``G``; candidate decoders search a candidate
        set given in ``context``.

    Optional
    --------
    ``__skframe_tags__``
        Its :class:`skframe.contract.tags.DecoderTags`: ``candidates`` (False for a decoder
        that maps the surrogate to outputs instead of searching candidates).
    """

    @abstractmethod
    def decode(self, G, **context):
        """Return decoded outputs."""


class OutputMatrix:
    """The output matrix ``M`` of a decomposable kernel ``k(x, x') M`` (d x d, symmetric PSD).

    Subclasses implement :meth:`matrix`; constructor arguments are the component's
    parameters (``params`` returns them, JSON-ready, so that ``type(self)(**self.params)``
    rebuilds the object and models using it can be saved). Tags:
    :class:`skframe.contract.tags.OutputMatrixTags` (``needs_targets``). The built-in matrices
    and the checks live in :mod:`skframe.core.output_matrices`.
    """

    name = "output-matrix"

    @property
    def params(self):
        """dict: the constructor parameters; by default those declared in ``_parameter_constraints``."""
        return {name: getattr(self, name) for name in getattr(type(self), "_parameter_constraints", {})}

    def matrix(self, d=None, *, Y=None, quantiles=None):
        """The d x d matrix.

        Parameters
        ----------
        d : int, optional
            Number of outputs; None lets the component infer it (from ``Y``, its levels, ...).
        Y : ndarray of shape (n, d), optional
            The training targets.
        quantiles : sequence of float, optional
            The quantile levels the model is fitted at, if any.
        """
        raise NotImplementedError

    __repr__ = repr_from_params

    def __eq__(self, other):
        return type(self) is type(other) and self.params == other.params

    __hash__ = object.__hash__


#: {kind name: its protocol}, from the kinds table
PROTOCOL_OF_KIND = {kind.name: globals()[kind.protocol] for kind in KIND_TABLE}
