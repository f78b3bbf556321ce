"""The five component protocols: the contract a plugin implements.

skframe assembles every model from five kinds of components, each looked up by
name in the registry (see :mod:`skframe.registry`) and built by a factory that a
plugin registers through the ``register_*`` hooks (see :mod:`skframe.hookspecs`).

The classes below are abstract bases. A plugin may subclass them, which gives
default implementations of the optional methods, or provide any object with the
required methods (duck typing): the core only calls what is documented here as
required and falls back when an optional method is absent.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

__all__ = ["Kernel", "Sketch", "Loss", "Solver", "Decoder", "kernel_diag", "kernel_block"]


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
    """

    normalized = False

    @abstractmethod
    def __call__(self, X, Y=None):
        """Return the Gram block ``K[i, j] = k(X[i], Y[j])``."""

    def diag(self, X):
        """Return ``k(x_i, x_i)`` for each row of ``X``."""
        return np.array([float(self(X[i : i + 1], X[i : i + 1])[0, 0]) for i in range(X.shape[0])])

    def gram_block(self, X, Y=None):
        """Alias of ``__call__``: the Gram block between ``X`` and ``Y``."""
        return self(X, Y)


def kernel_diag(kernel, X):
    """``k(x_i, x_i)`` for any kernel object, using ``kernel.diag`` when it exists."""
    diag = getattr(kernel, "diag", None)
    if diag is not None:
        return np.asarray(diag(X), dtype=float).ravel()
    return np.array([float(np.asarray(kernel(X[i : i + 1], X[i : i + 1]))[0, 0]) for i in range(X.shape[0])])


def kernel_block(kernel, X, Y):
    """Evaluate ``kernel(X, Y)`` and return a dense float64 array of the right shape."""
    K = kernel(X, Y)
    if hasattr(K, "toarray"):
        K = K.toarray()
    K = np.asarray(K, dtype=np.float64)
    if K.shape != (X.shape[0], Y.shape[0]):
        from .exceptions import PluginError

        raise PluginError(
            f"kernel {type(kernel).__name__} returned a block of shape {K.shape}, expected "
            f"{(X.shape[0], Y.shape[0])}; a kernel must return shape (len(X), len(Y))"
        )
    return K


class Sketch(ABC):
    """A random sketching distribution producing ``R = S_mix @ S_sub`` (m x n).

    Required
    --------
    ``draw(n, rng, *, X=None, kernel=None)``
        Draw one sketch for ``n`` training points with the NumPy ``Generator``
        ``rng`` and return a :class:`skframe.sketching.SketchMatrix`.
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
    """

    lipschitz = float("inf")
    smooth = False

    @abstractmethod
    def value(self, F, Y):
        """Per-sample loss values."""

    @abstractmethod
    def gradient(self, F, Y):
        """A sub-gradient with respect to the predictions."""


class Solver(ABC):
    """Turns a feature representation, a loss and a penalty into weights.

    Required
    --------
    ``solve(Z, Y, loss, lam, *, M=None, rng=None)``
        Minimise ``(1/n) sum_i loss(Z_i W M, Y_i) + (lam/2) tr(W M W^T)`` over
        ``W`` of shape ``(r, d)`` and return ``W``. ``Z`` has shape ``(n, r)``.
        ``M`` is the output matrix of a decomposable kernel (identity when None).
    """

    @abstractmethod
    def solve(self, Z, Y, loss, lam, *, M=None, rng=None):
        """Return the weight matrix ``W``."""


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
