"""Data larger than memory at the terminal: chunked reading for ``skframe fit`` and ``skframe predict``.

``skframe fit big.csv --memory-budget 2GB`` parses the CSV / LIBSVM file once, block by
block (:func:`skframe.io.iter_chunks`), into a float64 spill file in a temporary directory
that is memory-mapped: every later pass of the fit (the sampled rows, the streamed
accumulation, each epoch of an iterative loss) reads binary rows from it instead of
parsing text again. A ``.npy`` file is memory-mapped directly (copied, scaled, to a spill
file only when ``--scale standard`` asks for new values: input files are never modified).
The spill is deleted when the command ends (also on Ctrl-C and SIGTERM); its folder,
``skframe-stream-<host>-<pid>-*`` in the system's temporary directory (``TMPDIR``), carries
the process id, so that the next budgeted fit removes the spills of processes that were killed
(:func:`spill_directory`). ``skframe predict MODEL big.csv --out p.csv`` reads, scales,
predicts and writes one block at a time into a temporary file renamed over ``--out`` at the end.
"""

from __future__ import annotations

import contextlib
import os
import tempfile

import numpy as np

from skframe.automatic._columns import cli_columns, fit_layout, read_plan
from skframe.automatic.scaling import column_moments, resolve_scale
from skframe.datasets import FeatureScaler
from skframe.exceptions import InvalidInputError, InvalidParameterError
from skframe.io import atomic_write, iter_chunks, load_dataset, scan_file
from skframe.io.atomic import owned_name, remove_stale
from skframe.io.formats import resolve_format
from skframe.models import check_feature_range
from skframe.options import parse_bytes

__all__ = ["streams_file", "read_rows_for_budget", "spill_file", "chunked_scaler", "load_streamed",
           "predict_streamed", "can_stream_predict", "spill_directory"]

#: Rows per block when no budget sizes them (prediction).
DEFAULT_ROWS = 10_000
#: Bytes a parsed cell costs while a text block is read (the text, the float and temporaries).
BYTES_PER_CELL = 64
STREAMED_FORMATS = ("csv", "libsvm", "npy")


def streams_file(opts):
    """True when ``skframe fit`` reads its files in blocks: a ``.npy`` file, or a budget and a CSV / LIBSVM file."""
    if opts.train is None or opts.task == "structured":
        return False
    if getattr(opts, "inputs", None) not in (None, "table") or getattr(opts, "outputs", None) not in (None, "table"):
        return False  # molecules and graphs (skframe.automatic._graph_data)
    try:
        fmt = resolve_format(opts.train, opts.format)
    except Exception:  # e.g. .jsonl / .sdf graph files: read by their own reader
        return False
    if fmt == "npy":  # memory-mapped: the model streams it whatever the budget (never copied to memory here)
        return True
    return opts.memory_budget is not None and fmt in STREAMED_FORMATS


@contextlib.contextmanager
def spill_directory():
    """A new spill folder in the system's temporary directory, removed on exit (with its files).

    Spill folders of processes of this machine that no longer run (a killed fit) are removed first.
    """
    root = tempfile.gettempdir()
    remove_stale(root, folders=True)
    try:
        spill = tempfile.TemporaryDirectory(prefix=owned_name(kind="stream"), dir=root)
    except OSError as exc:
        raise OSError(exc.errno, f"{exc.strerror or exc} (the spill folder of a budgeted fit; set TMPDIR to a "
                      "folder with room and write access)", root) from exc
    with spill as folder:
        yield folder


def read_rows_for_budget(budget, n_cells):
    """Rows per block of text so that one block costs at most an eighth of the budget (64 to 100 000)."""
    if budget is None:
        return 65_536
    rows = parse_bytes(budget) // (8 * BYTES_PER_CELL * max(int(n_cells), 1))
    return int(min(max(rows, 64), 100_000))


def _cells_per_row(path, fmt, targets):
    """Cells of one row, cheaply: the first line of a CSV, the header of a ``.npy``, a scan of LIBSVM."""
    if fmt == "csv":
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.strip() and not line.lstrip().startswith("#"):
                    return line.count(",") + 1
        return 1

    info = scan_file(path, targets=targets, fmt=fmt)
    return info["n_features"] + info["n_targets"]


def spill_file(path, directory, *, rows, targets=1, fmt=None, missing="error", columns=None):
    """Parse a CSV / LIBSVM file block by block into a memory-mapped float64 spill file.

    ``columns`` (a :class:`skframe.io.Columns`) chooses the feature and target columns.

    Returns
    -------
    X : np.memmap (n, n_features), read-only
    Y : ndarray (n, targets)
    chunks : int
        Blocks read.
    """
    target = os.path.join(directory, "X.f64")
    ys, n, width, chunks = [], 0, None, 0
    try:
        with open(target, "wb") as fh:
            for Xc, Yc in iter_chunks(path, rows=rows, targets=targets, fmt=fmt, missing=missing, sparse=False,
                                      columns=columns):
                Xc = np.ascontiguousarray(Xc, dtype=np.float64)
                if width is None:
                    width = Xc.shape[1]
                fh.write(Xc.tobytes())
                ys.append(np.asarray(Yc))
                n += Xc.shape[0]
                chunks += 1
    except OSError as exc:
        if exc.filename is not None:  # about the input file: as it is
            raise
        # a write to the spill failed (a full disk): say what was written where, and how to move it
        raise OSError(exc.errno, f"{exc.strerror or exc} while writing the parsed rows of "
                      f"{os.path.basename(os.fspath(path))} to the spill file of a budgeted fit (n x d x 8 bytes); "
                      "set TMPDIR to a folder with room", target) from exc
    if n == 0:
        raise InvalidInputError(f"{os.path.basename(os.fspath(path))} has no data rows to fit")
    X = np.memmap(target, dtype=np.float64, mode="r+", shape=(n, width))
    return X, np.concatenate(ys), chunks


def chunked_scaler(X, method, rows):
    """A fitted :class:`~skframe.datasets.FeatureScaler` from block-wise column statistics (two passes)."""
    scaler = FeatureScaler(method)
    d = X.shape[1]
    scaler.n_features_in_ = d
    scaler.with_mean_ = method != "none"
    if method == "none":
        scaler.mean_, scaler.scale_, scaler.with_mean_ = np.zeros(d), np.ones(d), False
        return scaler
    mean, std, constant = column_moments(X, rows)
    scaler.mean_, scaler.scale_ = mean, np.where(constant, 1.0, std)
    return scaler


def _scale_into(X, scaler, out, rows):
    for start in range(0, X.shape[0], rows):
        block = np.asarray(X[start:start + rows], dtype=np.float64)
        out[start:start + rows] = (block - scaler.mean_) / scaler.scale_ if scaler.with_mean_ else block / scaler.scale_
    if hasattr(out, "flush"):
        out.flush()
    return out


def _open(path, directory, opts, rows, name, columns=None, targets=None):
    """(X, Y, chunks) of one file: spilled (CSV / LIBSVM) or memory-mapped (NPY)."""
    fmt = resolve_format(path, opts.format)
    targets = opts.targets if targets is None else targets
    if fmt == "npy":
        ds = load_dataset(path, targets=targets, missing=opts.missing, fmt=fmt, columns=columns)
        return ds.X, np.asarray(ds.Y), 0, False
    sub = os.path.join(directory, name)
    os.makedirs(sub, exist_ok=True)
    X, Y, chunks = spill_file(path, sub, rows=rows, targets=targets, fmt=fmt, missing=opts.missing, columns=columns)
    return X, Y, chunks, True


def load_streamed(opts, directory):
    """Training (and test) data of a budgeted ``skframe fit``, read in blocks; scaled block by block.

    Returns ``(X_train, Y_train, X_test, Y_test, info, scaler)``; the arrays X are memory maps.
    """
    fmt = resolve_format(opts.train, opts.format)
    rows = read_rows_for_budget(opts.memory_budget, _cells_per_row(opts.train, fmt, opts.targets))
    choice = cli_columns(getattr(opts, "columns", None), getattr(opts, "drop", None), getattr(opts, "target", None))
    X, Y, chunks, spilled = _open(opts.train, directory, opts, rows, "train", columns=choice)
    for start in range(0, X.shape[0], rows):  # features whose squares overflow: refused before any statistic
        check_feature_range(np.asarray(X[start:start + rows]))
    opts.layout = fit_layout(opts.train, opts.format, choice, opts.targets, (X.shape[1], Y.shape[1]))
    opts.scale, opts.scale_reason = resolve_scale(opts.scale, X, sparse=fmt == "libsvm")
    scaler = chunked_scaler(X, opts.scale, rows)
    if opts.scale != "none":
        if not spilled:  # never modify an input file: the scaled copy is a spill of its own
            out = np.lib.format.open_memmap(os.path.join(directory, "train_scaled.npy"), mode="w+", shape=X.shape)
            X = _scale_into(X, scaler, out, rows)
        else:
            X = _scale_into(X, scaler, X, rows)
    info = {"name": os.path.basename(opts.train), "source": str(opts.train), "n_missing_train": None,
            "missing": opts.missing, "streamed": {"format": fmt, "rows_per_block": rows, "train_blocks": chunks,
                                                  "spilled": spilled}}
    if opts.test is None:
        return X, Y, None, None, info, scaler
    columns, targets = read_plan(opts.layout, opts.test, opts.format, with_targets=True, choice=choice)
    Xt, Yt, tchunks, tspilled = _open(opts.test, directory, opts, rows, "test", columns=columns, targets=targets)
    if Xt.shape[1] != X.shape[1]:
        raise InvalidParameterError(
            f"the test file has {Xt.shape[1]} features but the training file has {X.shape[1]}; "
            "check --targets and the files"
        )
    if opts.scale != "none":
        out = Xt if tspilled else np.lib.format.open_memmap(os.path.join(directory, "test_scaled.npy"), mode="w+",
                                                            shape=Xt.shape)
        Xt = _scale_into(Xt, scaler, out, rows)
    info["test"] = str(opts.test)
    info["n_missing_test"] = None
    info["streamed"]["test_blocks"] = tchunks
    return X, Y, Xt, Yt, info, scaler


def can_stream_predict(data, fmt, out, task):
    """True when ``skframe predict`` can read DATA and write ``--out`` block by block."""
    if out is None or task == "structured" or os.path.splitext(str(out))[1].lower() != ".csv":
        return False
    try:
        return resolve_format(data, fmt) in STREAMED_FORMATS
    except Exception:
        return False


def predict_streamed(est, extra, data, *, targets, missing, fmt, out, predict_block, check_features, scale,
                     rows=DEFAULT_ROWS, columns=None, header=None):
    """Predict DATA block by block into ``out`` (CSV), written atomically; returns the number of blocks.

    ``columns`` chooses DATA's feature columns (a :class:`skframe.io.Columns`); ``header``, the
    column names written first (None: no header row).
    """
    blocks = 0
    means = None
    if missing == "mean":  # the TRAINING means saved with the model, not those of DATA
        fm = extra.get("train_feature_means") if isinstance(extra, dict) else None
        tm = extra.get("train_target_means") if isinstance(extra, dict) else None
        means = (fm, tm if targets else None)
    with atomic_write(out, "wb") as fh:
        if header:
            fh.write((",".join(header) + "\n").encode("utf-8"))
        for Xc, _ in iter_chunks(str(data), rows=rows, targets=targets, fmt=resolve_format(data, fmt), missing=missing,
                                 means=means, columns=columns):
            if blocks == 0:
                check_features(est, Xc, data, targets)
            P = np.asarray(predict_block(scale(Xc, extra)))
            np.savetxt(fh, P[:, None] if P.ndim == 1 else P, delimiter=",", fmt="%.17g")
            blocks += 1
    return blocks
