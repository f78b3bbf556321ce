"""Strings (SMILES, text) as one flat batch of character codes."""

from __future__ import annotations

import numpy as np

from skframe.contract.collections import InputCollection
from skframe.exceptions import InvalidInputError

__all__ = ["StringBatch"]


class StringBatch(InputCollection):
    """A batch of strings stored as concatenated Unicode code points and offsets.

    >>> S = StringBatch(["CCO", "c1ccccc1"])
    >>> len(S), S[1].tolist()
    (2, ['c1ccccc1'])
    """

    def __init__(self, strings=None, *, codes=None, ptr=None):
        if strings is not None:
            strings = [s if isinstance(s, str) else None for s in strings]
            bad = [i for i, s in enumerate(strings) if s is None]
            if bad:
                raise InvalidInputError(f"StringBatch takes strings; item {bad[0]} is not a string")
            lengths = np.fromiter((len(s) for s in strings), dtype=np.int64, count=len(strings))
            ptr = np.concatenate([[0], np.cumsum(lengths)])
            joined = "".join(strings)
            codes = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32).astype(np.int64) if joined else \
                np.zeros(0, np.int64)
        self.codes = np.ascontiguousarray(codes, dtype=np.int64)
        self.ptr = np.ascontiguousarray(ptr, dtype=np.int64)
        if self.ptr.ndim != 1 or self.ptr.size < 1 or self.ptr[0] != 0 or self.ptr[-1] != self.codes.size:
            raise InvalidInputError("StringBatch: ptr must rise from 0 to the number of codes")

    def __len__(self):
        return int(self.ptr.size - 1)

    def take(self, indices):
        idx = np.asarray(indices, dtype=np.int64).ravel()
        lengths = np.diff(self.ptr)[idx]
        starts = self.ptr[idx]
        total = int(lengths.sum())
        sel = np.arange(total, dtype=np.int64) + np.repeat(starts - np.concatenate([[0], np.cumsum(lengths)[:-1]]),
                                                           lengths) if total else np.zeros(0, np.int64)
        return StringBatch(codes=self.codes[sel], ptr=np.concatenate([[0], np.cumsum(lengths)]))

    def tolist(self):
        """The strings as Python ``str``."""
        return [self.codes[self.ptr[i]:self.ptr[i + 1]].astype(np.uint32).tobytes().decode("utf-32-le")
                for i in range(len(self))]

    def item_keys(self):
        """One hashable key per string (the string itself)."""
        return self.tolist()

    def to_state(self):
        return {"codes": self.codes, "ptr": self.ptr}

    @classmethod
    def from_state(cls, state):
        return cls(codes=state["codes"], ptr=state["ptr"])

    def __repr__(self):
        return f"StringBatch({len(self)} strings)"
