"""Molecules and graphs as the data of ``skframe fit``, ``predict`` and ``evaluate``: the command-line glue.

The files are read by :mod:`skframe.io.graphs` (JSON lines) and :mod:`skframe.io.molecules`
(SDF, SMILES columns, candidate lists); predicted molecules are scored by
:func:`skframe.graphs.metrics.molecule_scores`. Here: the options into a representation, the
kernels checked against what was read, and the molecule files of ``predict`` and ``evaluate``.

What the files hold
-------------------
``.jsonl`` (graphs)
    One JSON object per graph and line: ``{"nodes": [labels], "edges": [[u, v], ...],
    "edge_labels": [labels], "y": 1.25}``. ``edge_labels`` may be left out (every edge
    gets ``-``); the target is the number (or list of numbers) under ``y``, or under the
    keys named by ``--target-field``. Files to predict need no target.
``.sdf`` (molecules, RDKit)
    One record per molecule; the target is the data field named by ``--target-field``.
    Inputs are the molecular graphs, or their SMILES with ``--inputs smiles``.
``.csv`` with ``--inputs smiles|graphs`` or ``--outputs smiles``
    A header row; SMILES in the ``--input-column`` column, read as strings (``--inputs
    smiles``) or as molecular graphs (``--inputs graphs``); output molecules in the
    ``--output-column`` column; numeric targets in the ``--target-field`` columns (default:
    the last ``--targets`` columns that hold no SMILES). ``--split-column NAME`` takes the
    training and test rows from one file, marked ``train`` or ``test`` in that column, and
    ``--missing drop`` leaves out rows whose SMILES or target cannot be read.

With ``--featurize morgan`` SMILES inputs become sparse Morgan fingerprint bits. The
choices are saved in the model file (``representation``) so that ``skframe predict`` and
``skframe evaluate`` read new files the same way without repeating the options.
"""

from __future__ import annotations

import csv
import io
import time
from pathlib import Path

import numpy as np

from skframe.automatic._services import call_predict, echo, task_module, write_predictions
from skframe.automatic.options import TableOptions
from skframe.contract.collections import is_collection, take
from skframe.contract.registry import get_kernel
from skframe.exceptions import DataFormatError, InvalidInputError, InvalidParameterError
from skframe.graphs.chem import morgan_fingerprints
from skframe.graphs.metrics import molecule_scores
from skframe.io import atomic_write
from skframe.io.graphs import file_kind
from skframe.io.molecules import read_candidates, read_csv_header, read_molecule_file, read_smiles_csv

__all__ = ["wanted", "load", "model_extra", "representation_of", "molecule_metrics", "write_molecules",
           "is_molecule_output", "check_kernels"]

INPUTS = ("table", "smiles", "graphs")
OUTPUTS = ("table", "smiles")
FEATURIZERS = ("none", "morgan")


def _choice(value, allowed, option):
    v = str(value).lower()
    if v not in allowed:
        raise InvalidParameterError(f"{option} {value!r} is not one of {', '.join(allowed)}")
    return v


def wanted(opts):
    """True when the fit options ask for molecules or graphs instead of a numeric table."""
    asked = (opts.inputs not in (None, "table") or (opts.outputs or "table") != "table" or opts.featurize is not None
             or bool(opts.target_field) or opts.split_column is not None)
    if opts.train is None:
        if asked:
            raise InvalidParameterError("--inputs, --outputs, --featurize, --target-field and --split-column describe "
                                        "a data file: give one (e.g. skframe fit molecules.csv --inputs smiles)")
        return False
    return (opts.inputs not in (None, "table") or (opts.outputs or "table") != "table" or opts.featurize is not None
            or file_kind(opts.train) != "csv" or bool(opts.target_field) or opts.split_column is not None)


def representation_of(opts):
    """The data settings saved with the model: how to read inputs (and targets) again."""
    kind = file_kind(opts.train)
    inputs = _choice(opts.inputs or ("graphs" if kind != "csv" else "table"), INPUTS, "--inputs")
    outputs = _choice(opts.outputs or "table", OUTPUTS, "--outputs")
    featurize = _choice(opts.featurize or "none", FEATURIZERS, "--featurize")
    if kind == "jsonl" and inputs != "graphs":
        raise InvalidParameterError(f"--inputs {inputs}: a .jsonl file holds graphs; use --inputs graphs")
    if kind == "csv" and inputs == "table":
        raise InvalidParameterError("--outputs, --featurize and --target-field on a CSV need SMILES inputs: add "
                                    "--inputs smiles (and --input-column NAME)")
    if opts.scale not in ("none", "auto"):
        raise InvalidParameterError(f"--scale {opts.scale} scales numeric columns; molecules and graphs are not "
                                    "scaled: leave --scale out")
    if featurize != "none" and (inputs != "smiles" or kind == "jsonl"):
        raise InvalidParameterError(f"--featurize {featurize} turns SMILES into features; add --inputs smiles")
    if outputs == "smiles":
        if kind != "csv":
            raise InvalidParameterError("--outputs smiles reads a CSV column of SMILES; the training file must be "
                                        "a .csv")
        if opts.task != "structured":
            raise InvalidParameterError("--outputs smiles predicts molecules: add --task structured")
    if featurize == "morgan":
        morgan_fingerprints([], **_featurize_params(opts.featurize_params))  # checks radius and n_bits now
    if getattr(opts, "columns", None) or getattr(opts, "drop", None):
        raise InvalidParameterError("--columns and --drop choose the numeric columns of a table; molecules are read "
                                    "from --input-column, their targets from --target-field (or --target)")
    fields = list(opts.target_field or []) or [t.strip() for v in (getattr(opts, "target", None) or [])
                                               for t in v.split(",") if t.strip()]
    if opts.split_column and (kind != "csv" or opts.test is not None):
        raise InvalidParameterError("--split-column splits a CSV file into training and test rows; give it without "
                                    "--test, on a .csv file")
    return {"split_column": opts.split_column, "kind": kind, "inputs": inputs, "outputs": outputs,
            "input_column": opts.input_column,
            "output_column": opts.output_column or opts.input_column, "target_fields": fields,
            "targets": int(opts.targets), "featurize": featurize,
            "featurize_params": _featurize_params(opts.featurize_params) if featurize != "none" else {}}


def _featurize_params(params):
    params = dict(params or {})
    unknown = sorted(set(params) - {"radius", "n_bits"})
    if unknown:
        raise InvalidParameterError(f"--featurize-param {unknown[0]} is not a Morgan parameter; use radius or n_bits")
    return params


def load(opts):
    """``(X_train, Y_train, X_test, Y_test, info)`` of molecule or graph files (see the module docstring)."""
    rep = representation_of(opts)
    drop = opts.missing == "drop"
    if rep["kind"] == "csv":
        if not Path(str(opts.train)).exists():
            raise InvalidParameterError(f"{opts.train}: no such file")
        X_tr, Y_tr, details = read_smiles_csv(opts.train, rep, True, drop=drop, split=rep.get("split_column"))
    else:
        (X_tr, Y_tr), details = read_molecule_file(opts.train, rep), {}
    check_kernels(opts, X_tr, Y_tr)
    info = {"name": Path(opts.train).name, "source": str(opts.train), "representation": rep}
    if drop:
        info["n_dropped"] = details.get("n_dropped", 0)
    if opts.outputs == "smiles" and opts.candidates:
        opts.candidate_molecules = read_candidates(opts.candidates, rep, drop=drop)
    if rep.get("split_column"):
        marks = np.asarray(details["marks"])
        train, test = np.flatnonzero(marks == "train"), np.flatnonzero(marks == "test")
        if train.size == 0:
            raise DataFormatError(f"{opts.train}: no row is marked train in column {rep['split_column']!r}")
        info["split"] = {"column": rep["split_column"], "n_train": int(train.size), "n_test": int(test.size)}
        if test.size == 0:
            return take(X_tr, train), take(Y_tr, train), None, None, info
        return take(X_tr, train), take(Y_tr, train), take(X_tr, test), take(Y_tr, test), info
    if opts.test is None:
        return X_tr, Y_tr, None, None, info
    if rep["kind"] == "csv" and Path(str(opts.test)).exists():
        X_te, Y_te, details = read_smiles_csv(opts.test, rep, True, drop=drop)
        if drop:
            info["n_dropped_test"] = details["n_dropped"]
    else:
        X_te, Y_te = read_molecule_file(opts.test, rep)
    info["test"] = str(opts.test)
    if not isinstance(Y_tr, np.ndarray) or Y_tr.shape[1] == Y_te.shape[1]:
        return X_tr, Y_tr, X_te, Y_te, info
    raise InvalidParameterError(f"the test file has {Y_te.shape[1]} targets but the training file has "
                                f"{Y_tr.shape[1]}; check --target-field")


_KERNEL_HINTS = {
    "StringBatch": "ngram (e.g. --kernel-param n=3), or --featurize morgan with tanimoto",
    "GraphBatch": "a graph kernel: wl-subtree, shortest-path, vertex-histogram, edge-histogram, nspd or core-wl",
}


def _check_kernel(name, params, X, option, what):
    """Refuse, in one line, a kernel that cannot compare these inputs (a vector kernel on strings or graphs)."""
    if not is_collection(X):
        return
    kernel = get_kernel(name, **dict(params or {}))
    try:
        first = take(X, [0])
        kernel(first, first)
    except (InvalidInputError, TypeError, ValueError) as exc:
        if isinstance(exc, InvalidParameterError):
            raise
        kind = type(X).__name__
        raise InvalidParameterError(f"{option} {name} cannot compare {what} ({kind}); use "
                                    f"{_KERNEL_HINTS.get(kind, 'a kernel for these objects')}") from None


def check_kernels(opts, X, Y):
    """The input (and output) kernel of the fit options accept the molecules or graphs read."""
    structured = opts.task == "structured"
    name = (opts.input_kernel or opts.kernel) if structured else opts.kernel
    params = (opts.input_kernel_params if (opts.input_kernel_params or opts.input_kernel) else opts.kernel_params) \
        if structured else opts.kernel_params
    option = "--input-kernel" if structured and opts.input_kernel else "--kernel"
    _check_kernel(name, params, X, option, "the inputs")
    if structured:
        _check_kernel(opts.output_kernel or "gaussian", opts.output_kernel_params, Y, "--output-kernel",
                      "the output molecules")


def model_extra(opts, data_info):
    """What the model file keeps beside the model: the representation and the candidate molecules."""
    rep = data_info.get("representation") if isinstance(data_info, dict) else None
    if rep is None:
        return {}
    out = {"representation": rep}
    if opts.candidate_molecules is not None:
        out["candidate_molecules"] = opts.candidate_molecules
    return out


def is_molecule_output(opts):
    return (getattr(opts, "outputs", None) or "table") == "smiles"


# ---------------------------------------------------------------------------------- metrics and output
def molecule_metrics(model, X_test, Y_test, Y_pred, opts):
    """Exact match of the top-1 (and with ``--top-k K`` of the top-K) molecules and mean Morgan
    Tanimoto similarity of the top-1 molecule to the truth (:func:`skframe.graphs.metrics.molecule_scores`),
    and the surrogate MSE of the model."""
    topk = getattr(opts, "topk", None)
    candidates = (topk or {}).get("candidates")
    if candidates is None:
        candidates = model.candidates_
    out = molecule_scores(Y_test, Y_pred, candidates, k=None if topk is None else topk["k"],
                          topk_indices=None if topk is None else topk["indices"])
    n_candidates = out.pop("n_candidates")
    out["surrogate_mse"] = float(model.surrogate_mse(X_test, Y_test))
    out["n_candidates"] = n_candidates
    return out


def write_molecules(out, G):
    """Predicted molecules as a CSV column ``smiles`` (canonical SMILES) to ``out``, or to stdout."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["smiles"])
    for s in G.to_smiles():
        w.writerow([s if s is not None else ""])
    if out is None:
        echo(buf.getvalue())
        return
    if Path(str(out)).suffix.lower() != ".csv":
        raise InvalidParameterError(f"--out {out}: predicted molecules are written as SMILES; use a .csv file name")

    with atomic_write(str(out), "w") as fh:
        fh.write(buf.getvalue())


# ---------------------------------------------------------------------------------- predict / evaluate
def _options(extra):
    """Fit options carrying what the task modules need at prediction time."""
    rep = extra["representation"]
    task = extra.get("task") or "regression"
    means = extra.get("train_target_means")
    opts = TableOptions(task=task if task == "structured" else "regression", top_k=extra.get("top_k"),
                      train_target_means=None if means is None else np.asarray(means, dtype=np.float64))
    opts.outputs = rep["outputs"]
    opts.candidate_molecules = extra.get("candidate_molecules")
    return task, opts


def predict_file(model, extra, data, out, drop=False):
    """``skframe predict`` on a molecule or graph file: numbers as CSV, molecules as SMILES.

    ``drop`` (only on request: it shifts the rows) leaves out rows whose SMILES cannot be read.
    """
    task, opts = _options(extra)
    X, _ = read_molecule_file(data, extra["representation"], with_targets=False, drop=drop)
    P = call_predict(task_module(task), model, X, opts)
    if len(P.shape) < 2 and not isinstance(P, np.ndarray):  # predicted molecules
        return write_molecules(out, P)
    return write_predictions(out, P)


def evaluate_file(model, extra, data, drop=False):
    """``skframe evaluate`` on a labelled molecule or graph file: the report.

    When the model was fitted with ``--split-column NAME`` and the file has that column,
    only the rows marked ``test`` are scored (the figures of the fit's report).
    """
    task, opts = _options(extra)
    rep = extra["representation"]
    split = rep.get("split_column")
    scored = "all rows"
    if split and file_kind(data) == "csv" and Path(str(data)).exists() and split in read_csv_header(data)[0]:
        X, Y, details = read_smiles_csv(data, rep, True, drop=drop, split=split)
        test = np.flatnonzero(np.asarray(details["marks"]) == "test")
        if test.size:
            X, Y, scored = take(X, test), take(Y, test), f"rows marked test in {split}"
    else:
        X, Y = read_molecule_file(data, rep, with_targets=True, drop=drop)
    module = task_module(task)
    t0 = time.perf_counter()
    P = call_predict(module, model, X, opts)
    seconds = time.perf_counter() - t0
    if isinstance(Y, np.ndarray) and Y.shape[1] == 1 and task != "structured":
        Y = Y[:, 0]
    return {"task": task, "metrics": module.metrics(model, X, Y, P, opts), "predict_seconds": seconds,
            "n_samples": int(X.shape[0]), "scored": scored, "model": type(model).__name__}
