"""Character tokens of string inputs (SMILES, text) for the sequence networks of DSOKR.

A string becomes a row of int64 token ids: ``0`` pads, ``1`` stands for a character not
seen in training, and the training characters (sorted Unicode code points, the
*vocabulary*) are ``2, 3, ...``. Rows are cut to a maximum length. NumPy only: the
networks that read the tokens are built elsewhere (:mod:`skframe.models.structured._networks`).
"""

from __future__ import annotations

import numpy as np

from skframe.contract.collections import is_collection
from skframe.exceptions import InvalidInputError
from skframe.graphs.strings import StringBatch
from skframe.models._base import validate_X

__all__ = ["PAD", "UNKNOWN", "MAX_LENGTH", "as_strings", "fit_vocabulary", "tokenize", "prepare_inputs"]

PAD = 0  # token id of the padding
UNKNOWN = 1  # token id of a character not seen in training
MAX_LENGTH = 512  # default cut of the longest training string


def as_strings(X):
    """A :class:`~skframe.graphs.StringBatch` when X holds strings, else None.

    Raises
    ------
    InvalidInputError
        X is one string instead of a list of strings.
    """
    if isinstance(X, StringBatch):
        return X
    if isinstance(X, str):
        raise InvalidInputError("X is a single string; pass a list of strings (one per sample)")
    if isinstance(X, (list, tuple)) or (isinstance(X, np.ndarray) and X.dtype.kind in "UO"):
        items = list(X)
        if items and all(isinstance(s, str) for s in items):
            return StringBatch(items)
    return None


def fit_vocabulary(strings, max_length=None):
    """The vocabulary (sorted code points, int64) of the training strings and the token length.

    ``max_length`` wins when given; otherwise the longest training string, at most
    :data:`MAX_LENGTH` (and at least 1).
    """
    lengths = np.diff(strings.ptr)
    vocabulary = np.unique(strings.codes).astype(np.int64)
    longest = int(max(1, lengths.max())) if lengths.size else 1
    return vocabulary, int(max_length) if max_length is not None else min(longest, MAX_LENGTH)


def tokenize(strings, vocabulary, max_length):
    """Token ids of shape ``(len(strings), max_length)``, int64, padded with :data:`PAD`.

    >>> from skframe.graphs.strings import StringBatch
    >>> s = StringBatch(["CCO", "CN"])
    >>> vocabulary, length = fit_vocabulary(s)
    >>> tokenize(s, vocabulary, length).tolist()
    [[2, 2, 4], [2, 3, 0]]
    >>> tokenize(StringBatch(["CS"]), vocabulary, length).tolist()  # S is unknown
    [[2, 1, 0]]
    """
    lengths = np.diff(strings.ptr)
    pos = np.searchsorted(vocabulary, strings.codes)
    pos = np.clip(pos, 0, max(len(vocabulary) - 1, 0))
    known = vocabulary[pos] == strings.codes if len(vocabulary) else np.zeros(0, bool)
    ids = np.where(known, pos + 2, UNKNOWN).astype(np.int64)
    T = np.full((len(strings), int(max_length)), PAD, dtype=np.int64)
    row = np.repeat(np.arange(len(strings)), lengths)
    col = np.arange(ids.size) - np.repeat(strings.ptr[:-1], lengths)
    keep = col < max_length
    T[row[keep], col[keep]] = ids[keep]
    return T


def prepare_inputs(est, X, reset, *, tokens):
    """The inputs of a DSOKR estimator as its network reads them: features, or token ids of strings.

    With ``reset`` (fit) the kind of input is recorded in ``est.input_kind_`` (``"tokens"``
    for strings, ``"features"`` otherwise; ``tokens`` says whether the network reads
    strings) and, for strings, ``est.vocabulary_`` and ``est.max_length_``; later calls
    (prediction) must pass the same kind.

    Returns
    -------
    ndarray or sparse matrix
        Validated feature matrix (dense float64 or CSR), or an (n, max_length) int64 token array.
    """
    strings = as_strings(X)
    if reset:
        if tokens and strings is None:
            raise InvalidInputError(
                f"network={est.network!r} reads strings; pass a list of strings (or a StringBatch), "
                "or use network='mlp' for feature vectors"
            )
        est.input_kind_ = "tokens" if strings is not None else "features"
    elif strings is None and est.input_kind_ == "tokens":
        raise InvalidInputError("this model was trained on strings; pass a list of strings")
    elif strings is not None and est.input_kind_ == "features":
        raise InvalidInputError("this model was trained on feature vectors; pass an array, not strings")
    if est.input_kind_ == "features":
        if is_collection(X):
            raise InvalidInputError(
                f"{type(X).__name__} inputs need a network that reads them; pass feature vectors or strings"
            )
        return validate_X(est, X, reset=reset)
    if len(strings) == 0:
        raise InvalidInputError("X holds no strings; at least one is needed")
    if reset:
        est.vocabulary_, est.max_length_ = fit_vocabulary(strings, est.max_length)
    return tokenize(strings, est.vocabulary_, est.max_length_)
