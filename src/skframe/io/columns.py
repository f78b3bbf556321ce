"""Choosing the columns of a data file: the features to keep or drop and the targets, by name or position.

A :class:`Columns` says which columns of a file are features and which are targets. Its
entries are column *names* (from a CSV header, ARFF attributes or the names stored in an
NPZ archive) or *positions*; it is resolved against a file's columns by
:meth:`Columns.resolve`, which the readers call once they know the names, so that a
column left out is never parsed (a column of text can be dropped). Without a choice the
readers keep their layout: the last ``targets`` columns are the targets.

Rules (:meth:`Columns.resolve`):

* ``drop`` columns are left out;
* the targets are ``targets`` when given (in that order), else the last ``n_targets``
  columns that are not dropped;
* the features are ``features`` when given (in that order), else every other column that
  is not dropped; a column cannot be both a feature and a target.

The readers of whole files (NPZ, NPY, LIBSVM) read every column and then keep the chosen
ones (:func:`select_columns`); the CSV and ARFF readers parse only those.

Positions count from ``base`` (0 in Python; the command line counts from 1, as the
readers' error messages do). A string entry is a name when the file has a column of that
name, else a position when it is written as a whole number (ARFF attributes may be named
``0`` or ``02``: the name wins).
"""

from __future__ import annotations

import collections
import re
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from skframe.exceptions import DataFormatError, InvalidParameterError
from skframe.io._common import looks_like_smiles, name_of

__all__ = ["Columns", "as_names", "column_choice", "select_columns", "looks_like_smiles", "check_unique_names"]

_SHOWN = 8  # names listed in a message before "..."


def as_names(value, option="columns"):
    """A tuple of column entries from None, one entry, an iterable, or comma-separated text.

    Examples
    --------
    >>> as_names("a,b, c")
    ('a', 'b', 'c')
    >>> as_names(["x", 3])
    ('x', 3)
    >>> as_names(None) is None
    True
    """
    if value is None:
        return None
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        value = [value]
    out = []
    for item in value:
        if isinstance(item, bool):
            raise InvalidParameterError(f"{option}={value!r}: {item!r} is neither a column name nor a position")
        if isinstance(item, str):
            out.extend(t.strip() for t in item.split(",") if t.strip())
        elif isinstance(item, int) or hasattr(item, "__index__"):
            out.append(int(item))
        else:
            raise InvalidParameterError(f"{option}={value!r}: {item!r} is neither a column name nor a position")
    return tuple(out)


def _listed(names):
    names = [repr(n) for n in names]
    return ", ".join(names[:_SHOWN]) + (f", ... ({len(names)} in all)" if len(names) > _SHOWN else "")


def check_unique_names(names, path=None):
    """Refuse a header that names two columns alike (every table reader: one of them would be lost when the
    columns are matched by name): one :class:`DataFormatError` naming each such name, its positions (from 1)
    and the fix. ``names`` None (no header) passes."""
    if names is None or len(set(names)) == len(names):
        return
    positions = collections.defaultdict(list)
    for j, name in enumerate(names):
        positions[name].append(j + 1)
    twice = [(name, where) for name, where in positions.items() if len(where) > 1]
    shown = "; ".join(f"{name!r} (columns {', '.join(map(str, where[:4]))}{', ...' if len(where) > 4 else ''})"
                      for name, where in twice[:3]) + (f"; ... ({len(twice)} names in all)" if len(twice) > 3 else "")
    first = twice[0][0]
    raise DataFormatError(f"{name_of(path) if path is not None else 'the table'} has several columns named {shown}; "
                          f"rename them so that each column has its own name (e.g. {first}_2)")


@dataclass(frozen=True)
class Columns:
    """Which columns of a file are features and which targets (see the module docstring).

    Parameters
    ----------
    features : tuple of (str or int), optional
        The feature columns, in this order (default: every column that is neither a target
        nor dropped).
    drop : tuple of (str or int), default=()
        Columns left out (never parsed).
    targets : tuple of (str or int), optional
        The target columns, in this order (default: the last ``n_targets`` columns not dropped).
    base : {0, 1}, default=0
        Position of the first column.
    """

    features: tuple | None = None
    drop: tuple = ()
    targets: tuple | None = None
    base: int = 0

    @classmethod
    def make(cls, features=None, drop=None, targets=None, base=0):
        """A :class:`Columns` from loose values (None, a name, a list, comma-separated text), or None."""
        features, drop, targets = as_names(features, "columns"), as_names(drop, "drop"), as_names(targets, "target")
        if features is None and not drop and targets is None:
            return None
        return cls(features, drop or (), targets, int(base))

    @property
    def by_position_only(self):
        """True when every entry is a position (so that a file without a header can be resolved)."""
        return all(isinstance(e, int) or (isinstance(e, str) and _is_whole(e)) for e in self._entries())

    def resolve(self, names, n_columns, n_targets, path=None):
        """Positions (from 0) of the features and of the targets in a file's columns.

        Parameters
        ----------
        names : list of str or None
            The file's column names, or None when it has none (then only positions are accepted).
        n_columns : int
        n_targets : int
            How many trailing columns are targets when ``targets`` is not given.
        path : str, optional
            The file, for messages.

        Returns
        -------
        features, targets : list of int
        """
        where = name_of(path) if path is not None else "the data"
        index = {n: j for j, n in enumerate(names)} if names is not None else {}
        if names is not None and len(index) != len(names):
            counts = collections.Counter(names)  # linear: list.count per name is quadratic on a wide file
            dup = sorted({n for n, c in counts.items() if c > 1} & set(self._entries()))
            if dup:
                raise InvalidParameterError(f"{where} has several columns named {_listed(dup)}; rename them to "
                                            "choose columns by name, or choose them by position")

        def position(entry, option):
            if isinstance(entry, str) and entry in index:
                return index[entry]
            if isinstance(entry, str) and not _is_whole(entry):
                if names is None:
                    raise InvalidParameterError(
                        f"{where} has no header row, so its columns are chosen by position (from {self.base}): "
                        f"{option} {entry!r} is not one")
                raise InvalidParameterError(f"{where} has no column named {entry!r} ({option}); its columns are "
                                            f"{_listed(names)}")
            j = int(entry) - self.base
            if not 0 <= j < n_columns:
                raise InvalidParameterError(
                    f"{option} {entry!r}: {where} has {n_columns} columns, at positions {self.base} to "
                    f"{n_columns - 1 + self.base}")
            return j

        def positions(entries, option):
            out = [position(e, option) for e in entries]
            seen = set()
            for e, j in zip(entries, out):
                if j in seen:
                    raise InvalidParameterError(f"{option} names column {e!r} twice")
                seen.add(j)
            return out

        drop = set(positions(self.drop, "drop"))
        kept = [j for j in range(n_columns) if j not in drop]
        if self.targets is not None:
            targets = positions(self.targets, "target")
            dropped = [self._label(j, names) for j in targets if j in drop]
            if dropped:
                raise InvalidParameterError(f"column {dropped[0]} is both a target and dropped; choose one")
        else:
            if n_targets < 0 or (n_targets and n_targets >= len(kept)):
                raise InvalidParameterError(
                    f"{where} keeps {len(kept)} columns: too few for {n_targets} targets and at least one feature")
            targets = kept[len(kept) - n_targets:] if n_targets else []
        if self.features is not None:
            features = positions(self.features, "columns")
            target_set = set(targets)
            both = [self._label(j, names) for j in features if j in target_set]
            if both:
                raise InvalidParameterError(
                    f"column {both[0]} is chosen as a feature but is a target"
                    + ("" if self.targets is not None else f" (the last {n_targets} kept columns are the targets)")
                    + "; name the targets, or leave the column out of the features")
            dropped = [self._label(j, names) for j in features if j in drop]
            if dropped:
                raise InvalidParameterError(f"column {dropped[0]} is both a feature and dropped; choose one")
        else:
            chosen = set(targets)
            features = [j for j in kept if j not in chosen]
        if not features:
            raise InvalidParameterError(f"no feature column of {where} is left; keep at least one")
        return features, targets

    def _entries(self):
        return (self.features or ()) + tuple(self.drop) + (self.targets or ())

    @staticmethod
    def _label(j, names):
        return repr(names[j]) if names is not None else f"at position {j}"


def _is_whole(text):
    return bool(re.fullmatch(r"\s*[+-]?\d+\s*", text))


def column_choice(columns=None, drop=None, target_columns=None):
    """A :class:`Columns` from the readers' ``columns=``, ``drop=`` and ``target_columns=``, or None (the file's
    own layout)."""
    if isinstance(columns, Columns):
        if drop is not None or target_columns is not None:
            raise InvalidParameterError("give drop= and target_columns= inside the Columns object, not beside it")
        return columns
    return Columns.make(columns, drop, target_columns)


def _take(X, Y, positions):
    """Columns of ``[X | Y]`` at ``positions`` (from 0), X's kept sparse; a copy unless they are X's first ones."""
    d = X.shape[1]
    if positions == list(range(len(positions))) and len(positions) <= d:
        return X[:, : len(positions)]
    if all(j < d for j in positions):
        return X[:, positions]
    parts = [X[:, j:j + 1] if j < d else Y[:, j - d:j - d + 1] for j in positions]
    if sp.issparse(X):
        return sp.hstack([sp.csr_matrix(c) for c in parts], format="csr") if parts else X[:, :0]
    return np.hstack([np.asarray(c, dtype=np.float64) for c in parts]) if parts else np.zeros((X.shape[0], 0))


def select_columns(X, Y, feature_names, target_names, choice, path, *, named, n_targets=None):
    """A column choice applied to arrays read whole: ``(X, Y, feature_names, target_names)``.

    The columns are those of ``[X | Y]``; by default the last ``n_targets`` (Y's) are the
    targets. ``named`` says whether the names are the file's own (else only positions choose).
    Without a choice (None) everything is returned as it is.
    """
    if choice is None:
        return X, Y, feature_names, target_names
    names = list(feature_names) + list(target_names)
    n_targets = Y.shape[1] if n_targets is None else n_targets
    features, targets = choice.resolve(names if named else None, len(names), n_targets, path)
    Xs = _take(X, Y, features)
    Ys = _take(X, Y, targets)
    Ys = np.asarray(Ys.toarray() if sp.issparse(Ys) else Ys, dtype=np.float64).reshape(X.shape[0], len(targets))
    return Xs, Ys, [names[j] for j in features], [names[j] for j in targets]
