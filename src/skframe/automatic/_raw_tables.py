"""Raw tables of the automatic model (``TableModel``, ``skframe fit``): typed columns for ``fit``, the saved encoding
for ``predict`` and ``evaluate``.

A training file with a header row (CSV with any delimiter, compressed or not), or a Parquet or
Arrow/Feather file, is read by :func:`skframe.io.table.read_table` and its feature columns are
typed and encoded by :class:`skframe.preprocessing.TableEncoder` (numbers, one-hot categories,
date features; free text and identifiers left out). Every column that cannot be used as asked is
reported in one message. The encoding is saved with the model (``encoding``, JSON data) and
replayed on new files by name.
"""

from __future__ import annotations

from skframe.exceptions import InvalidInputError, InvalidParameterError, PersistenceError

_SHOWN_LEFT_OUT = 4  # left-out columns named in the message when none is left
_INDEX_LOOKED = 3  # the first columns whose names may send a numeric CSV to the typed reader (a row index)

__all__ = ["wanted", "load_fit", "read_for_model", "read_saved", "check_saved", "column_table", "is_labels"]


def wanted(opts):
    """True when the training file is read as a typed table: Parquet, Arrow, or a text table with a header whose
    delimiter is not a comma, whose first rows hold text or one of whose first columns is named as a row index (a
    comma-separated file of numbers keeps the numeric reader, which streams and matches columns as before), or
    when ``--column-types`` is given; or whose first rows hold a number with a leading zero (``01``, a code that
    may be a class label, kept as written) unless ``--task regression``."""
    from skframe.io.formats import resolve_format  # lazy: skframe.io loads SciPy
    from skframe.io.table import read_table_header  # lazy: skframe.io loads SciPy

    if opts.train is None:
        return False
    fmt = resolve_format(str(opts.train), opts.format)
    if fmt in ("parquet", "feather"):
        return True
    if fmt != "csv":
        return False
    names, info = read_table_header(opts.train, delimiter=opts.delimiter, fmt=fmt)
    from skframe.preprocessing.table_encoder import is_index_name  # lazy: scikit-learn is slow to import

    # a column named as a row index (a blank first header cell: pandas' and R's; rownames, id), which the typed
    # reader recognises by its values and leaves out
    return names is not None and (info["delimiter"] != "," or info["text"] or bool(opts.column_types)
                                  or any(is_index_name(name) for name in names[:_INDEX_LOOKED])
                                  or (info.get("codes", False) and opts.task in ("auto", "classification")))


def _numeric_targets(table, positions, problems, labels=False):
    """The target columns as a 2-D float array; with ``labels`` (one target column of a classification) a text
    column is kept as its labels instead (an object array of stripped strings, shape ``(n, 1)``): ``True``
    (``--task classification``) for any column with text, ``"text"`` (``--task auto``) for a column whose every
    cell is text (one mixing numbers and a few words is more likely a data error, and is refused)."""
    import numpy as np  # lazy: NumPy costs ~0.1 s at start-up

    from skframe.preprocessing.cells import colliding_labels, parse_numbers, text_cells  # lazy: loads scikit-learn

    out = []
    for j in positions:
        col = np.asarray(table.columns[j])
        if col.dtype.kind in "fiub":
            out.append(np.asarray(col, dtype=np.float64))
            continue
        text, missing = text_cells(col)
        values, bad = parse_numbers(text, missing)
        if bad.any() and (labels is True or labels == "text" and int(bad.sum()) == int((~missing).sum())):
            return _label_targets(table, j, text, missing, problems)
        # labels are the text written: "01" and "1" are two classes (with --task auto, when one has a leading zero)
        if labels and not bad.any() and colliding_labels(text, missing, leading_zero=labels is not True):
            return _label_targets(table, j, text, missing, problems)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            problems.append(f"the target column {table.names[j]!r} holds text such as {text[i]!r} "
                            f"({_where(table, i)}); "
                            "targets are numbers: choose a numeric target with --target NAME, or fit the labels "
                            "with --task classification")
            values[bad] = 0.0  # reported above, not as missing numbers
        out.append(values)
    return np.stack(out, axis=1) if out else np.zeros((table.n_rows, 0))


def _where(table, i):
    return f"line {int(table.linenos[i])}" if table.linenos is not None else f"row {i}"


def _label_targets(table, j, text, missing, problems):
    """Class labels of the target column ``j`` (text), ``(n, 1)`` objects; an empty cell is a problem."""
    import numpy as np  # lazy: NumPy costs ~0.1 s at start-up

    if missing.any():
        i = int(np.flatnonzero(missing)[0])
        problems.append(f"the target column {table.names[j]!r} has {int(missing.sum())} empty label(s) (first: "
                        f"{_where(table, i)}): every row needs its class; remove those rows")
    return np.asarray(text, dtype=object).reshape(-1, 1)


def is_labels(Y):
    """True when ``Y`` holds class labels as text (an object array), as :func:`load_fit` reads them."""
    return getattr(Y, "dtype", None) is not None and Y.dtype.kind == "O"


def _check_known(path, name, y, classes):
    """Refuse, in one line, labels of a test file that the model never saw."""
    import numpy as np  # lazy: NumPy costs ~0.1 s at start-up

    from skframe.io._common import name_of  # lazy: skframe.io loads SciPy

    known = set(map(str, classes))
    unknown = sorted({str(v) for v in np.ravel(y)} - known)
    if unknown:
        shown = ", ".join(map(repr, unknown[:5])) + (" ..." if len(unknown) > 5 else "")
        raise InvalidInputError(f"{name_of(path)}: the target column {name!r} holds label(s) {shown} the model "
                                f"never saw; its classes are {', '.join(map(repr, list(classes)[:10]))}: keep only "
                                "rows of those classes, or refit with a training file that has them")


def _weights(table, column, path):
    """``--sample-weight COLUMN`` of a typed table: finite, non-negative weights, not all 0."""
    import numpy as np  # lazy: NumPy costs ~0.1 s at start-up

    from skframe.io._common import name_of  # lazy: skframe.io loads SciPy

    if column in table.index:
        j = table.index[column]
    elif column.isdigit() and 1 <= int(column) <= len(table.names):
        j = int(column) - 1
    else:
        raise InvalidParameterError(f"--sample-weight {column!r} names no column of {name_of(path)} (columns: "
                                    f"{', '.join(table.names[:8])}{' ...' if len(table.names) > 8 else ''})")
    problems = []
    w = _numeric_targets(table, [j], problems)[:, 0]
    if problems or not np.all(np.isfinite(w)):
        raise InvalidInputError(f"--sample-weight {column!r}: every row of {name_of(path)} needs a number there")
    if np.any(w < 0) or not w.sum() > 0:
        raise InvalidInputError(f"--sample-weight {column!r}: the weights must be finite, non-negative, not all 0")
    return w


def _missing_numbers(table, features, Y):
    """The problem line for the missing cells of numeric columns (features and targets), or nothing."""
    import numpy as np  # lazy: NumPy costs ~0.1 s at start-up

    from skframe.limits import limit  # lazy: loads NumPy (through skframe.options)
    from skframe.preprocessing.cells import parse_numbers, text_cells  # lazy: loads scikit-learn

    if len(features) > limit("table_columns"):  # the encoder refused the table already: no per-column work
        return []
    where, count = [], int(np.isnan(Y).sum())
    for j in features:
        col = np.asarray(table.columns[j])
        if col.dtype.kind in "fiub":
            n = int(np.isnan(col.astype(np.float64)).sum())
        else:
            text, missing = text_cells(col)
            n = int(missing.sum()) if missing.any() and not parse_numbers(text, missing)[1].any() else 0
        if n:
            where.append(table.names[j])
            count += n
    if not count:
        return []
    named = f" (in {', '.join(map(repr, where[:6]))}{', ...' if len(where) > 6 else ''})" if where else ""
    return [f"{count} missing number(s){named}: choose --missing zero|mean|drop"]


def _raise_problems(path, problems):
    from skframe.io._common import name_of  # lazy: skframe.io loads SciPy
    from skframe.preprocessing import table_problems  # lazy: loads scikit-learn

    err = table_problems(problems)
    raise InvalidInputError(f"{name_of(path)}: {err}") from None


def load_fit(opts, choice, table=None):
    """Read, type and encode the training (and test) tables: ``(X_tr, Y_tr, X_te, Y_te, info)``.

    ``table``: the training table already in memory (a DataFrame's, :func:`skframe.automatic.tables.frame_table`;
    ``opts.test_table`` likewise). Sets ``opts.layout`` and ``opts.table_encoder``.
    """
    import numpy as np  # lazy: NumPy costs ~0.1 s at start-up

    from skframe.automatic._columns import Layout  # lazy: loads NumPy (~0.1 s at start-up)
    from skframe.automatic.classification import distinct_labels  # lazy: loads NumPy
    from skframe.io._common import check_targets, name_of  # lazy: skframe.io loads SciPy
    from skframe.io.table import read_table  # lazy: skframe.io loads SciPy
    from skframe.preprocessing import TableEncoder, parse_column_types  # lazy: loads scikit-learn

    path = str(opts.train)
    if table is None:
        table = read_table(path, delimiter=opts.delimiter, fmt=_table_format(opts.format))
    names, n = table.names, len(table.names)
    if choice is None:
        k = check_targets(opts.targets, n, path)
        f, t = list(range(n - k)), list(range(n - k, n))
    else:
        f, t = choice.resolve(names, n, opts.targets, path)
    overrides = parse_column_types(opts.column_types)
    feature_set = {names[j] for j in f}
    wrong = [c for c in overrides if c not in feature_set]
    if wrong:
        raise InvalidParameterError(f"--column-types names {', '.join(map(repr, wrong))}, not a feature column of "
                                    f"{name_of(path)}; its feature columns are {', '.join(names[j] for j in f[:8])}")
    from skframe.preprocessing.targets import check_target  # lazy: loads scikit-learn

    # before anything is typed or fitted: an identifier as the last column, too many classes (one line, the fix)
    try:
        target = check_target(names, table.columns, t, chosen=target_choice(opts, choice), task=opts.task,
                              max_classes=opts.max_classes)
    except InvalidInputError as exc:
        raise InvalidInputError(f"{name_of(path)}: {exc}") from None
    problems = []
    # one text target column: class labels (with --task auto, when none of its cells is a number)
    labels = len(t) == 1 and {"classification": True, "auto": "text"}.get(opts.task, False)
    Y = _numeric_targets(table, t, problems, labels=labels)
    if is_labels(Y) and target.get("classes") is not None:  # labels read as text ("01" and "1": two classes)
        target["classes"] = len({v for v in Y[:, 0] if v is not None})
    if opts.sample_weight is not None:  # --sample-weight COLUMN, read from the same table
        opts.sample_weight_values = _weights(table, opts.sample_weight, path)
    # a precomputed kernel's features are row numbers into its Gram matrix: a column of row numbers is its feature
    encoder = TableEncoder(column_types=overrides,
                           row_index="keep" if str(opts.kernel or "").lower() == "precomputed" else "drop")
    X = None
    try:  # the columns typed and encoded in one go: numbers written as text are parsed once
        X = encoder.fit_transform({names[j]: table.columns[j] for j in f}, linenos=table.linenos)
    except InvalidInputError as exc:
        problems.extend(getattr(exc, "problems", [str(exc)]))
    if problems:
        if opts.missing == "error":  # the missing numbers too, so that one run says everything
            problems.extend(_missing_numbers(table, f, np.zeros((0, 0)) if is_labels(Y) else Y))
        _raise_problems(path, problems)
    if not encoder.used_columns:  # every feature column left out (free text, identifiers, an index, empty)
        why = "; ".join(f"{c['name']}: {c['reason']}" for c in encoder.columns_[:_SHOWN_LEFT_OUT])
        raise InvalidInputError(f"{name_of(path)}: no feature column is left to fit ({why}); keep a column with "
                                f"--column-types NAME=numeric or NAME=categorical")
    X, Y, n_missing = _handle_missing(X, Y, opts.missing, path, table.linenos)
    used, target_set = set(encoder.used_columns), set(t)
    left_out = [names[j] for j in range(n) if j not in target_set and names[j] not in used]
    opts.layout = Layout(n_features=int(X.shape[1]), n_targets=int(Y.shape[1]),
                         feature_names=list(encoder.used_columns), target_names=[names[j] for j in t],
                         n_file_columns=n, drop=left_out,
                         chosen=choice is not None and choice.features is not None)
    opts.table_encoder = encoder
    info = {"name": name_of(path), "source": path, "n_missing_train": n_missing, "missing": opts.missing,
            "target": target,
            "read": {k: v for k, v in table.info.items() if v is not None}, "column_types": encoder.summary(),
            "columns": {"features": len(encoder.used_columns), "targets": opts.layout.target_names, "named": True}}
    if opts.test is None:
        return X, Y, None, None, info
    classes = distinct_labels(Y[:, 0]).tolist() if is_labels(Y) else None
    X_te, Y_te, te_info = read_for_model(opts.test, encoder, opts.layout, with_targets=True, missing=opts.missing,
                                         delimiter=opts.delimiter, fmt=_table_format(opts.format), classes=classes,
                                         table=getattr(opts, "test_table", None))
    info.update({"test": str(opts.test), "n_missing_test": te_info["n_missing"],
                 "unknown_categories_test": te_info["unknown_categories"]})
    return X, Y, X_te, Y_te, info


def target_choice(opts, choice):
    """How the target columns were chosen, as the report says it: ``--target``, or ``last column`` (``last K
    columns (--targets K)``) when nobody named them (then an identifier there is refused)."""
    if choice is not None and choice.targets is not None:
        return "--target"
    k = int(opts.targets)
    return "last column" if k == 1 else f"last {k} columns (--targets {k})"


def _table_format(fmt):
    return fmt if fmt in ("csv", "parquet", "feather") else None


def _handle_missing(X, Y, missing, path, linenos, means=None):
    """:func:`skframe.io.missing.handle_missing` on ``(X, Y)``; class labels (text) go round it, and lose the rows
    that ``--missing drop`` removes. Returns ``(X, Y, n_missing)``."""
    import numpy as np  # lazy: NumPy costs ~0.1 s at start-up

    from skframe.io.missing import handle_missing  # lazy: skframe.io loads SciPy

    if not is_labels(Y):
        X, Y, n_missing, _ = handle_missing(X, Y, missing, path, linenos, means=means)
        return X, Y, n_missing
    if means is not None:
        means = (means[0], None)
    X, _, n_missing, rows = handle_missing(X, np.zeros((X.shape[0], 0)), missing, path, linenos, means=means)
    if missing == "drop" and len(rows):
        Y = np.delete(Y, rows, axis=0)
    return X, Y, n_missing


def read_for_model(path, encoder, layout, *, with_targets, missing, means=None, delimiter=None, fmt=None,
                   targets=None, classes=None, table=None):
    """``(X, Y or None, info)``: a table encoded as the model's training table was (columns matched by name).

    ``classes``: the model's class labels (text) when it was fitted on them; the targets are then read as labels,
    and a label it never saw is refused in one line.
    """
    import numpy as np  # lazy: NumPy costs ~0.1 s at start-up

    from skframe.io._common import name_of  # lazy: skframe.io loads SciPy
    from skframe.io.missing import check_means  # lazy: skframe.io loads SciPy
    from skframe.io.table import read_table  # lazy: skframe.io loads SciPy

    path = str(path)
    if table is None:  # else a table in memory (a DataFrame's)
        table = read_table(path, delimiter=delimiter, fmt=fmt)
    target_names = list(targets) if targets else list(layout.target_names or [])
    wanted_cols = list(layout.feature_names or []) + (target_names if with_targets else [])
    absent = [c for c in wanted_cols if c not in table.index]
    if absent:
        raise InvalidParameterError(
            f"{name_of(path)} lacks the column(s) {', '.join(map(repr, absent[:8]))} the model was fitted on; its "
            f"columns are {', '.join(table.names[:8])}{' ...' if len(table.names) > 8 else ''}: rename them as in "
            "the training file")
    problems = []
    labels = classes is not None and len(target_names) == 1
    Y = _numeric_targets(table, [table.index[c] for c in target_names], problems,
                         labels=labels) if with_targets else None
    if labels and is_labels(Y):
        _check_known(path, target_names[0], Y, classes)
    try:
        X = encoder.transform({c: table.column(c) for c in layout.feature_names}, linenos=table.linenos)
    except InvalidInputError as exc:
        problems.extend(getattr(exc, "problems", [str(exc)]))
    if problems:
        _raise_problems(path, problems)
    Y_h = Y if Y is not None else np.zeros((X.shape[0], 0))
    if means is not None:
        means = check_means(means, X, np.zeros((X.shape[0], 0)) if is_labels(Y_h) else Y_h, path)
    X, Y_h, n_missing = _handle_missing(X, Y_h, missing, path, table.linenos, means=means)
    info = {"n_missing": n_missing, "unknown_categories": {k: v for k, v in encoder.unknown_counts_.items() if v}}
    return X, (Y_h if with_targets else None), info


def check_saved(est, extra, path):
    """Refuse, in one :class:`PersistenceError` naming the file, a model file whose table encoding or class labels
    (text) kept beside the model are not what ``fit`` wrote: a file edited since, checksums and all."""
    from skframe.preprocessing import TableEncoder  # lazy: loads scikit-learn

    if not isinstance(extra, dict):
        return
    problem = None
    if extra.get("encoding") is not None:
        try:
            TableEncoder.from_dict(extra["encoding"])
        except InvalidInputError as exc:
            problem = str(exc)
    labels, classes = extra.get("classes"), getattr(est, "classes_", None)
    if problem is None and labels is not None:
        if not isinstance(labels, list) or not all(isinstance(v, str) for v in labels):
            problem = f"its class labels {str(labels)[:60]!r} are not a list of texts"
        elif classes is None or [str(c) for c in classes] != labels:
            problem = (f"its class labels {str(labels)[:60]} are not the model's classes "
                       f"{str(None if classes is None else [str(c) for c in classes])[:60]}")
        if problem is not None:
            problem += "; the file was edited since it was written: fit the model again"
    if problem is not None:
        raise PersistenceError(f"the model file {str(path)!r}: {problem}")


def read_saved(extra, layout, data, *, with_targets, missing, target=None, fmt=None, table=None):
    """``(X, Y or None, info)`` of DATA for a model saved with a table encoding (``predict``, ``evaluate``)."""
    import numpy as np  # lazy: NumPy costs ~0.1 s at start-up

    from skframe.preprocessing import TableEncoder  # lazy: loads scikit-learn

    encoder = TableEncoder.from_dict(extra["encoding"])
    means = None
    if missing == "mean":
        fm, tm = extra.get("train_feature_means"), extra.get("train_target_means")
        means = (None if fm is None else np.asarray(fm), None if (tm is None or not with_targets) else np.asarray(tm))
    from skframe.io.columns import as_names  # lazy: skframe.io loads SciPy

    targets = as_names(target, "target") if target else None
    return read_for_model(data, encoder, layout, with_targets=with_targets, missing=missing, means=means, table=table,
                          fmt=_table_format(fmt), targets=targets, classes=extra.get("classes"))


def column_table(rows):
    """Lines of the column-types table of a fit report (name, type, features, reason), aligned."""
    if not rows:
        return []
    width = min(24, max(len(r["name"]) for r in rows))
    return [f"  {r['name'][:width]:<{width}}  {r['type']:<11} {r['features']:>4}  {r['reason']}" for r in rows]
