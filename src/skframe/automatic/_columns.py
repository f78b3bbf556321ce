"""Which columns of a data file the table commands read: chosen at fit time, matched by name afterwards.

``skframe fit`` reads the features and targets that ``--columns``, ``--drop`` and ``--target``
choose (names, or positions counted from 1), else all columns with the last ``--targets``
as targets. What it read is the model's :class:`Layout`, saved with it: the feature and
target names when the file has a header (CSV header, ARFF attributes, names stored in an
NPZ archive), and where they stood in the training file.

``predict``, ``evaluate`` and the test file of ``fit`` read their data through
:func:`read_plan`:

* a file with names, for a model that has names: the features are taken **by name**, in the
  model's order; a feature missing from the file, or a column the model does not know (not
  a target, not dropped at fit time, not left out with ``--drop``), is refused in one line
  naming them;
* a file without names: a features-only file (as many columns as the model has features),
  a file laid out as the training file (the same columns, targets included) or the
  features followed by the targets are recognised by their number of columns;
  ``--columns``/``--drop``/``--targets K`` say it otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from skframe.exceptions import InvalidParameterError
from skframe.io import Columns, column_names, load_dataset
from skframe.io._common import iter_lines, name_of, split_fields
from skframe.io.columns import check_unique_names
from skframe.io.formats import resolve_format

__all__ = ["Layout", "cli_columns", "fit_layout", "read_plan", "n_columns", "SHOWN"]

#: Names shown in a message before "..."
SHOWN = 6


def _shown(names):
    names = list(names)
    return ", ".join(names[:SHOWN]) + (f", ... ({len(names)} in all)" if len(names) > SHOWN else "")


def cli_columns(columns=None, drop=None, target=None):
    """A :class:`~skframe.io.Columns` from the command line's ``--columns``, ``--drop`` and ``--target``, or None.

    Positions count from 1 on the command line.
    """
    return Columns.make(columns or None, drop or None, target or None, base=1)


def n_columns(path, fmt=None):
    """The number of columns of a data file without names (None when its format has no fixed columns)."""
    fmt = resolve_format(str(path), fmt)
    if fmt == "csv":
        for _, raw in iter_lines(path):
            line = raw.strip()
            if line and not line.startswith("#"):
                return len(split_fields(line))
        return None
    if fmt in ("npy", "npz"):
        ds = load_dataset(path, targets=0, fmt=fmt)
        return ds.X.shape[1] + ds.Y.shape[1]
    return None  # LIBSVM: the labels are apart from the features


@dataclass
class Layout:
    """The columns a model was fitted on (saved with the model under ``columns``).

    Attributes
    ----------
    feature_names, target_names : list of str or None
        The names, when the training file had names.
    n_file_columns : int or None
        Columns of the training file (None when unknown, e.g. LIBSVM).
    feature_positions, target_positions : list of int or None
        Where the features and targets stood in the training file (from 0).
    drop : list of str
        Columns of the training file left out at fit time (``--drop``, or not listed by
        ``--columns``): names, or positions from 1 when the file had no names.
    chosen : bool
        True when ``--columns`` listed the features (other columns were ignored).
    n_features, n_targets : int
    """

    n_features: int
    n_targets: int
    feature_names: list | None = None
    target_names: list | None = None
    n_file_columns: int | None = None
    feature_positions: list | None = None
    target_positions: list | None = None
    drop: list = field(default_factory=list)
    chosen: bool = False

    def to_extra(self):
        # a shallow copy: dataclasses.asdict deep-copies each of a wide file's names and positions, one by one
        return {f.name: list(v) if isinstance(v := getattr(self, f.name), list) else v for f in fields(self)}

    @classmethod
    def of_model(cls, est, extra):
        """The layout saved with a model; for model files saved before layouts, what the model itself says."""
        saved = extra.get("columns") if isinstance(extra, dict) else None
        names = getattr(est, "feature_names_in_", None)
        if isinstance(saved, dict):
            out = cls(**{k: saved.get(k) for k in ("n_features", "n_targets", "feature_names", "target_names",
                                                   "n_file_columns", "feature_positions", "target_positions")},
                      drop=list(saved.get("drop") or []), chosen=bool(saved.get("chosen")))
        else:
            n_targets = int(extra.get("targets", 1)) if isinstance(extra, dict) else 1
            out = cls(n_features=int(getattr(est, "n_features_in_", 0) or 0), n_targets=n_targets)
        if names is not None and out.feature_names is None:
            out.feature_names = [str(n) for n in names]
        return out

    @property
    def target_labels(self):
        """Names of the targets (``y0``, ``y1``, ... when the training file had none)."""
        return list(self.target_names) if self.target_names else [f"y{j}" for j in range(self.n_targets)]


def _unique(names, path):
    """Refuse a file whose header names a column twice (fit, predict and evaluate alike), naming the duplicates."""
    check_unique_names(names, path)


def fit_layout(path, fmt, choice, n_targets, shape):
    """The :class:`Layout` of a training file read with ``choice`` (a Columns or None).

    ``n_targets`` is ``--targets``; ``shape`` is ``(n_features, n_targets)`` as read.
    """
    names = column_names(path, fmt=fmt)
    _unique(names, path)
    n_file = len(names) if names is not None else n_columns(path, fmt)
    layout = Layout(n_features=int(shape[0]), n_targets=int(shape[1]), n_file_columns=n_file,
                    chosen=choice is not None and choice.features is not None)
    if n_file is None:
        return layout
    if choice is None:
        if n_file != sum(shape):
            return layout
        f, t = list(range(shape[0])), list(range(shape[0], n_file))
    else:
        f, t = choice.resolve(names, n_file, n_targets, path)
    layout.feature_positions, layout.target_positions = f, t
    taken = set(f) | set(t)  # sets: linear in the number of columns (10^6 columns read in seconds)
    left_out = [j for j in range(n_file) if j not in taken]
    if names is not None:
        layout.feature_names, layout.target_names = [names[j] for j in f], [names[j] for j in t]
        layout.drop = [names[j] for j in left_out]
    else:
        layout.drop = [str(j + 1) for j in left_out]
    return layout


def read_plan(layout, path, fmt=None, *, with_targets, targets=None, choice=None):
    """How to read DATA for a fitted model: ``(columns, targets)`` for :func:`skframe.io.load_dataset`.

    Parameters
    ----------
    layout : Layout
        What the model was fitted on.
    path : str
        The data file.
    with_targets : bool
        True to read the targets too (``evaluate``, a test file).
    targets : int, optional
        ``--targets K`` as given on the command line: the last K columns are targets (ignored by ``predict``).
    choice : Columns, optional
        ``--columns``/``--drop``/``--target`` as given on the command line.

    Returns
    -------
    columns : Columns or None
    targets : int
        The ``targets`` argument of the reader.
    """
    fmt_name = resolve_format(str(path), fmt)
    if fmt_name == "libsvm":  # labels apart from the features: nothing to choose
        return choice, (targets if targets is not None else (layout.n_targets if with_targets else 0))
    names = column_names(path, fmt=fmt)
    _unique(names, path)
    if names is not None and layout.feature_names:
        return _by_name(layout, path, names, with_targets, targets, choice), 0
    if choice is not None:
        k = targets if targets is not None else (layout.n_targets if with_targets and choice.targets is None else 0)
        return choice, k
    if targets is not None:
        return None, targets
    return _by_position(layout, path, fmt, with_targets)


def _by_name(layout, path, names, with_targets, targets, choice):
    where = name_of(path)
    features = list(layout.feature_names)
    ignored = set(layout.drop)
    wanted_targets = None
    if choice is not None:  # --columns / --drop / --target of this command, resolved on DATA's names
        chosen_f, chosen_t = choice.resolve(names, len(names), 0, path)
        chosen = set(chosen_f) | set(chosen_t)
        ignored |= {n for j, n in enumerate(names) if j not in chosen}
        wanted_targets = [names[j] for j in chosen_t] or None
    if targets:  # --targets K: the last K columns are targets
        trailing = names[len(names) - int(targets):]
        ignored |= set(trailing)
        wanted_targets = wanted_targets or trailing
    target_names = wanted_targets or list(layout.target_names or [])
    in_file = set(names)  # membership in sets: linear in the number of columns
    present_targets = [t for t in target_names if t in in_file]
    missing = [f for f in features if f not in in_file or f in ignored]
    unexpected = []
    if not (layout.chosen or (choice is not None and choice.features is not None)):
        known = set(features) | ignored | set(present_targets)
        unexpected = [n for n in names if n not in known]
    if missing or unexpected:
        parts = ([f"lacks the model's feature column(s) {_shown(missing)}"] if missing else []) + \
                ([f"has column(s) the model was not fitted on: {_shown(unexpected)}"] if unexpected else [])
        fix = ("rename the columns as in the training file" if missing else
               f"leave them out with --drop {unexpected[0]}" + (" (comma-separated for several)"
                                                                 if len(unexpected) > 1 else ""))
        known = "" if len(missing) == len(features) else f"; the model's features are {_shown(features)}"
        raise InvalidParameterError(f"{where} {' and '.join(parts)}{known}: {fix}")
    if with_targets:
        lacking = [t for t in target_names if t not in in_file]
        if not target_names or lacking:
            raise InvalidParameterError(
                f"{where} lacks the target column(s) {_shown(lacking or ['(none known)'])}; name them with --target")
        return Columns(features=tuple(features), targets=tuple(target_names))
    return Columns(features=tuple(features), targets=())


def _by_position(layout, path, fmt, with_targets):
    n = n_columns(path, fmt)
    d, t = layout.n_features, layout.n_targets
    if n is None or d == 0:
        return None, (t if with_targets else 0)
    fpos, tpos = layout.feature_positions, layout.target_positions
    if not with_targets and n == d:
        return None, 0
    if layout.n_file_columns is not None and n == layout.n_file_columns and fpos is not None:
        if fpos == list(range(d)) and (not with_targets or tpos == list(range(d, d + t))) and n == d + t:
            return None, (t if with_targets else n - d)
        return Columns(features=tuple(fpos), targets=tuple(tpos or ()) if with_targets else ()), 0
    if n == d + t:
        return None, t
    where = name_of(path)
    layouts = [f"{d} feature columns"] if not with_targets else []
    layouts.append(f"{d + t} columns (the {d} features, then the {t} target{'s' if t != 1 else ''})")
    if layout.n_file_columns not in (None, d + t, d):
        layouts.append(f"{layout.n_file_columns} columns laid out as the training file")
    raise InvalidParameterError(
        f"{where} has {n} columns; the model takes {' or '.join(layouts)}: say which columns are features with "
        "--columns / --drop (names or positions from 1) or --targets K")
