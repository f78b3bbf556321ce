"""Input collections: how models and sketches touch their inputs.

The core only needs three things from training inputs: their number, a subset by
index, and (to save a model) a state made of arrays. NumPy arrays and SciPy sparse
matrices already behave so; any other batch (graphs, strings, ...) implements
:class:`InputCollection`, and then flows through sketches, chunked kernels and
persistence unchanged.

>>> import numpy as np
>>> X = np.arange(6.0).reshape(3, 2)
>>> n_items(X), take(X, [2, 0]).tolist()
(3, [[4.0, 5.0], [0.0, 1.0]])
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

__all__ = ["InputCollection", "is_collection", "n_items", "take", "chunks"]


class InputCollection(ABC):
    """A batch of inputs that is not a 2-D array (graphs, strings, ...).

    Required
    --------
    ``__len__()``
        Number of items.
    ``take(indices)``
        A new collection of the same type holding the given items, in that order.
    ``to_state()`` / ``from_state(state)`` (classmethod)
        A dict of JSON values and NumPy arrays, and back; used to save models.
    """

    @abstractmethod
    def __len__(self):
        """Number of items."""

    @abstractmethod
    def take(self, indices):
        """The items at ``indices`` as a collection of the same type."""

    @abstractmethod
    def to_state(self):
        """A dict of JSON values and NumPy arrays describing the collection."""

    @classmethod
    @abstractmethod
    def from_state(cls, state):
        """Rebuild a collection from :meth:`to_state`'s output."""

    def __getitem__(self, index):
        if isinstance(index, slice):
            return self.take(np.arange(len(self))[index])
        return self.take(np.atleast_1d(np.asarray(index)))

    @property
    def shape(self):
        """``(len(self),)``: lets array-minded code ask for the number of items."""
        return (len(self),)


def is_collection(X):
    """True for an :class:`InputCollection` (not for arrays and sparse matrices)."""
    return isinstance(X, InputCollection)


def n_items(X):
    """Number of items (rows) of an array, sparse matrix or collection."""
    if isinstance(X, InputCollection):
        return len(X)
    return int(X.shape[0])


def take(X, indices):
    """Items ``indices`` of an array, sparse matrix or collection."""
    if isinstance(X, InputCollection):
        return X.take(indices)
    return X[indices]


def chunks(n, step):
    """``(start, stop)`` pairs covering ``range(n)`` in steps of ``step``."""
    step = max(int(step), 1)
    for start in range(0, int(n), step):
        yield start, min(int(n), start + step)
