"""Reading the data of ``skframe fit``: the embedded default, molecules and graphs, numeric files and raw tables."""

from __future__ import annotations

from pathlib import Path

from skframe.automatic import _raw_tables as _tables
from skframe.exceptions import InvalidInputError, InvalidParameterError

__all__ = ["DEFAULT_LAM", "GRAPH_LAM", "EMBEDDED_DATA_SEED", "load_data"]

#: ``--lam`` left out: chosen from the data as part of the fit (GCV for the square loss, 3 folds otherwise)
DEFAULT_LAM = "auto"
#: the fixed λ of the molecule and graph fits (their kernels are slow enough that folds would cost several fits)
GRAPH_LAM = 1e-3
EMBEDDED_DATA_SEED = 0



def _apply_suggestions(opts, suggested):
    """Fill in the embedded data set's hyper-parameters that the user left unset; return what was used."""
    used = {}
    kernel_is_suggested = (opts.input_kernel or opts.kernel) == suggested.get("kernel")
    if kernel_is_suggested and not opts.kernel_params and not opts.input_kernel_params:
        opts.kernel_params = dict(suggested.get("kernel_params", {}))
        used["kernel_params"] = opts.kernel_params
    if opts.lam is None:
        if kernel_is_suggested and "lam" in suggested:
            opts.lam = suggested["lam"]
            used["lam"] = opts.lam
        else:
            opts.lam = DEFAULT_LAM
    loss_defaults = suggested.get("loss_params", {}).get(str(opts.loss or "").lower())
    if loss_defaults and not opts.loss_params:
        opts.loss_params = dict(loss_defaults)
        used["loss_params"] = opts.loss_params
    return used


class _Columns:
    """The columns of ``[X | Y]`` one at a time (for the target rules; a wide file is not copied)."""

    def __init__(self, X, Y):
        self.X, self.Y, self.d = X, Y, X.shape[1]

    def __len__(self):
        return self.d + self.Y.shape[1]

    def __getitem__(self, j):
        return self.X[:, j] if j < self.d else self.Y[:, j - self.d]


def _check_numeric_target(tr, opts, choice):
    """:func:`skframe.preprocessing.targets.check_target` on a numeric file's targets (dense files); what the
    report says of the target, or None."""
    import numpy as np  # lazy: NumPy costs ~0.1 s at start-up

    from skframe.preprocessing.targets import check_target  # lazy: loads scikit-learn

    if not isinstance(tr.X, np.ndarray) or tr.Y.shape[1] == 0:
        return None
    names = [str(n) for n in list(tr.feature_names) + list(tr.target_names)]
    d = tr.X.shape[1]
    if len(names) != d + tr.Y.shape[1]:  # a file without names: positions from 1, as --target takes them
        names = [str(j + 1) for j in range(d + tr.Y.shape[1])]
    try:
        return check_target(names, _Columns(tr.X, tr.Y), list(range(d, len(names))),
                            chosen=_tables.target_choice(opts, choice), task=opts.task,
                            max_classes=opts.max_classes)
    except InvalidInputError as exc:
        raise InvalidInputError(f"{Path(opts.train).name}: {exc}") from None


class _Arrays:
    """Arrays given in memory, as :func:`_check_numeric_target` reads a file's (no column names)."""

    def __init__(self, X, Y):
        self.X, self.Y, self.feature_names, self.target_names = X, Y, [], []


def _load_in_memory(opts):
    """The data of :class:`skframe.automatic.TableModel` given in memory: a DataFrame (typed and encoded as a table
    file is) or arrays (features as given, targets checked by the rules of a numeric file)."""
    import numpy as np  # lazy: NumPy costs ~0.1 s at start-up

    from skframe.automatic._columns import Layout, cli_columns  # lazy: loads NumPy (~0.1 s at start-up)
    from skframe.io.missing import handle_missing  # lazy: skframe.io loads SciPy

    if opts.lam is None:
        opts.lam = DEFAULT_LAM
    opts.sample_weight_values = None
    choice = cli_columns(opts.columns, opts.drop, opts.target)
    if getattr(opts, "train_table", None) is not None:
        return _tables.load_fit(opts, choice, table=opts.train_table)
    if opts.test is not None and getattr(opts, "test_arrays", None) is None:
        raise InvalidParameterError("array features take their test data as arrays too: test=(X_test, y_test)")
    data = []
    for which in ("train", "test"):
        arrays = getattr(opts, f"{which}_arrays", None)
        if arrays is None:
            data += [None, None]
            continue
        X, Y = arrays
        labels = Y.dtype.kind not in "fiub"
        if not labels:
            X, Y, n_missing, _ = handle_missing(X, np.asarray(Y, dtype=np.float64), opts.missing, which)
        else:
            X, _, n_missing, rows = handle_missing(X, np.zeros((X.shape[0], 0)), opts.missing, which)
            Y = np.delete(Y, rows, axis=0) if opts.missing == "drop" and len(rows) else Y
        data += [X, Y]
    X, Y = data[0], data[1]
    target = _check_numeric_target(_Arrays(X, Y), opts, choice)
    opts.layout = Layout(n_features=int(X.shape[1]), n_targets=int(Y.shape[1]))
    info = {"name": "arrays", "source": "arrays", "missing": opts.missing, "target": target}
    return X, Y, data[2], data[3], info


def load_data(opts):
    """Return (X_train, Y_train, X_test, Y_test, dataset_info); Y are 2-D."""
    from skframe.automatic import _graph_data  # lazy: loads NumPy (~0.1 s at start-up)
    from skframe.datasets import load_dataset, load_default  # lazy: loads scikit-learn (~0.6 s at start-up)

    if getattr(opts, "train_table", None) is not None or getattr(opts, "train_arrays", None) is not None:
        return _load_in_memory(opts)  # a DataFrame or arrays (skframe.automatic.TableModel)
    if _graph_data.wanted(opts):  # molecules (SMILES, SDF) or graphs (JSON lines)
        if opts.sample_weight is not None:  # their readers take every other column as a target: refuse, not ignore
            raise InvalidParameterError("--sample-weight reads a column of a numeric table (CSV, Parquet, Arrow); "
                                        "molecule and graph files take no weight column: fit in Python with "
                                        "model.fit(X, Y, sample_weight=w)")
        opts.lam = GRAPH_LAM if opts.lam is None else opts.lam
        return _graph_data.load(opts)
    if opts.train is None:
        # The embedded data are always drawn with the same seed; --seed only seeds the model.
        ds = load_default(random_state=EMBEDDED_DATA_SEED)
        info = {"name": ds.name, "source": "embedded", "description": ds.description, "seed": EMBEDDED_DATA_SEED}
        info["suggested_defaults_used"] = _apply_suggestions(opts, ds.suggested)
        return ds.X_train, ds.y_train[:, None], ds.X_test, ds.y_test[:, None], info
    if opts.lam is None:
        opts.lam = DEFAULT_LAM
    from skframe.automatic import _sample_weight  # lazy: loads NumPy (~0.1 s at start-up)
    from skframe.automatic._columns import cli_columns, fit_layout, read_plan  # lazy: loads NumPy (~0.1 s at start-up)

    weight_column = _sample_weight.prepare_weights(opts)  # --sample-weight: a column left out of the features
    choice = cli_columns(opts.columns, opts.drop, opts.target)
    opts.sample_weight_values = None
    # a table with a header, Parquet, Arrow: typed columns (numbers, categories, dates); a file with its test data
    # in memory (TableModel.fit(path, test=DataFrame)) too, as only the typed reader encodes a table given in memory
    if _tables.wanted(opts) or getattr(opts, "test_table", None) is not None:
        return _tables.load_fit(opts, choice)  # --sample-weight read there, from the same table
    if weight_column is not None:
        opts.sample_weight_values = _sample_weight.read_weight_column(opts.train, weight_column)
    if opts.column_types:
        raise InvalidParameterError("--column-types applies to tables with a header row (CSV, Parquet, Arrow); "
                                    f"{Path(opts.train).name} has none: name its columns in a header row")
    tr = load_dataset(opts.train, targets=opts.targets, missing=opts.missing, fmt=opts.format, columns=choice)
    target = _check_numeric_target(tr, opts, choice)  # before the fit: an identifier last, too many classes
    opts.layout = fit_layout(opts.train, opts.format, choice, opts.targets, (tr.X.shape[1], tr.Y.shape[1]))
    info = {"name": Path(opts.train).name, "source": str(opts.train), "n_missing_train": tr.n_missing,
            "missing": opts.missing, "target": target}
    if choice is not None or opts.layout.feature_names is not None:
        info["columns"] = {"features": len(tr.feature_names), "targets": list(tr.target_names),
                           "named": opts.layout.feature_names is not None}
    if opts.test is None:
        return tr.X, tr.Y, None, None, info
    columns, targets = read_plan(opts.layout, opts.test, opts.format, with_targets=True, choice=choice)
    te = load_dataset(opts.test, targets=targets, missing=opts.missing, fmt=opts.format, columns=columns)
    info["test"] = str(opts.test)
    info["n_missing_test"] = te.n_missing
    if te.X.shape[1] != tr.X.shape[1]:
        raise InvalidParameterError(
            f"the test file has {te.X.shape[1]} features but the training file has {tr.X.shape[1]}; "
            "check --targets and the files"
        )
    return tr.X, tr.Y, te.X, te.Y, info
