"""Molecules and graphs as the data of ``skframe fit``, ``predict`` and ``evaluate``.

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
from pathlib import Path

import numpy as np

from skframe.exceptions import DataFormatError, InvalidInputError, InvalidParameterError

__all__ = ["wanted", "load", "read", "model_extra", "representation_of", "load_molecule_candidates",
           "molecule_metrics", "write_molecules", "is_molecule_output"]

INPUTS = ("table", "smiles", "graphs")
OUTPUTS = ("table", "smiles")
FEATURIZERS = ("none", "morgan")


def _kind(path):
    """``jsonl``, ``sdf`` or ``csv`` (any other name is read as CSV)."""
    suffix = Path(str(path)).suffix.lower()
    return {".jsonl": "jsonl", ".sdf": "sdf"}.get(suffix, "csv")


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
            or _kind(opts.train) != "csv" or bool(opts.target_field) or opts.split_column is not None)


def representation_of(opts):
    """The data settings saved with the model: how to read inputs (and targets) again."""
    kind = _kind(opts.train)
    inputs = _choice(opts.inputs or ("graphs" if kind != "csv" else "table"), INPUTS, "--inputs")
    outputs = _choice(opts.outputs or "table", OUTPUTS, "--outputs")
    featurize = _choice(opts.featurize or "none", FEATURIZERS, "--featurize")
    if kind == "jsonl" and inputs != "graphs":
        raise InvalidParameterError(f"--inputs {inputs}: a .jsonl file holds graphs; use --inputs graphs")
    if kind == "csv" and inputs == "table":
        raise InvalidParameterError("--outputs, --featurize and --target-field on a CSV need SMILES inputs: add "
                                    "--inputs smiles (and --input-column NAME)")
    if opts.scale != "none":
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
        from skframe.graphs.chem import morgan_fingerprints

        morgan_fingerprints([], **_featurize_params(opts.featurize_params))  # checks radius and n_bits now
    fields = list(opts.target_field or [])
    if opts.split_column and (kind != "csv" or opts.test is not None):
        raise InvalidParameterError("--split-column splits a CSV file into training and test rows; give it without "
                                    "--test, on a .csv file")
    return {"split_column": opts.split_column, "kind": kind, "inputs": inputs, "outputs": outputs, "input_column": opts.input_column,
            "output_column": opts.output_column or opts.input_column, "target_fields": fields,
            "targets": int(opts.targets), "featurize": featurize,
            "featurize_params": _featurize_params(opts.featurize_params) if featurize != "none" else {}}


def _featurize_params(params):
    params = dict(params or {})
    unknown = sorted(set(params) - {"radius", "n_bits"})
    if unknown:
        raise InvalidParameterError(f"--featurize-param {unknown[0]} is not a Morgan parameter; use radius or n_bits")
    return params


# ---------------------------------------------------------------------------------- readers
def _read_jsonl(path, fields, with_targets):
    """Graphs of a JSON-lines file, and their targets (``None`` when not asked)."""
    from skframe.graphs import GraphBatch
    from skframe.graphs.batch import JSONL_LINE, iter_jsonl_graphs

    nodes, edges, elabels, Y = [], [], [], []
    keys = fields or ["y"]
    line_format = JSONL_LINE[:-1] + ', "y": target}'
    for lineno, obj, n, e, el in iter_jsonl_graphs(path, line_format):
        bad = [(u, v) for u, v in e if u == v or not (0 <= u < len(n) and 0 <= v < len(n))]
        if bad or len(el) != len(e):
            problem = (f"edge {list(bad[0])} is a self-loop or names a node outside 0..{len(n) - 1}" if bad
                       else f"{len(e)} edges but {len(el)} edge labels")
            raise DataFormatError(f"{path}, line {lineno}: {problem}; fix that graph")
        if with_targets:
            row = []
            for key in keys:
                if key not in obj:
                    raise DataFormatError(f"{path}, line {lineno}: no target {key!r}; give each graph a "
                                          f'"{key}" number, or name its key with --target-field')
                value = obj[key]
                row.extend(value if isinstance(value, list) else [value])
            Y.append(_numbers(row, f"{path}, line {lineno}: target"))
        nodes.append(n)
        edges.append(e)
        elabels.append(el)
    if not nodes:
        raise DataFormatError(f"{path} holds no graph; write one JSON object per line")
    try:
        G = GraphBatch.from_edge_lists(nodes, edges, elabels)
    except InvalidInputError as exc:  # name the file: "graph 3" is its fourth graph
        raise DataFormatError(f"{path}: {exc}") from exc
    return G, (_stack(Y, path) if with_targets else None)


def _numbers(values, where):
    try:
        out = [float(v) for v in values]
    except (TypeError, ValueError):
        raise DataFormatError(f"{where} {values!r} is not a number") from None
    if not all(np.isfinite(out)):
        raise DataFormatError(f"{where} {values!r} is missing or not finite; drop or fill that row")
    return out


def _stack(rows, path):
    widths = {len(r) for r in rows}
    if len(widths) != 1:
        raise DataFormatError(f"{path}: the targets have {sorted(widths)} values on different rows; give every row "
                              "the same number")
    return np.asarray(rows, dtype=np.float64)


def _read_sdf(path, rep, with_targets):
    from skframe.graphs import GraphBatch
    from skframe.graphs.chem import read_sdf

    nodes, edges, elabels, props, smiles = read_sdf(path)
    Y = None
    if with_targets:
        if not rep["target_fields"]:
            raise InvalidParameterError(f"name the SDF data field holding the target with --target-field; the first "
                                        f"record of {path} has {sorted(props[0]) or 'no fields'}")
        rows = []
        for i, p in enumerate(props, 1):
            missing = [f for f in rep["target_fields"] if f not in p]
            if missing:
                raise DataFormatError(f"{path}: SDF record {i} has no data field {missing[0]!r} (it has "
                                      f"{sorted(p) or 'none'}); check --target-field")
            rows.append(_numbers([p[f] for f in rep["target_fields"]], f"{path}: SDF record {i}, field"))
        Y = _stack(rows, path)
    if rep["inputs"] == "graphs":
        return GraphBatch.from_edge_lists(nodes, edges, elabels), Y
    return _smiles_inputs(smiles, rep, path), Y


def _read_csv_columns(path):
    """Header and rows of a text CSV (SMILES are text, so the numeric CSV reader does not apply)."""
    with open(path, newline="", encoding="utf-8") as fh:
        rows = [(i, r) for i, r in enumerate(csv.reader(fh), 1) if r and not r[0].startswith("#")]
    if not rows:
        raise DataFormatError(f"{path} is empty; a SMILES CSV needs a header row and one row per molecule")
    header = [h.strip() for h in rows[0][1]]
    body = rows[1:]
    if not body:
        raise DataFormatError(f"{path} has a header but no rows")
    for lineno, r in body:
        if len(r) != len(header):
            raise DataFormatError(f"{path}, line {lineno}: {len(r)} fields but the header has {len(header)}")
    return header, body


def _column(header, name, path, option):
    if name not in header:
        raise InvalidParameterError(f"{path} has no column {name!r} (its columns: {', '.join(header)}); "
                                    f"name the right one with {option}")
    return header.index(name)


def _parse_smiles(smiles, lines, path):
    """Molecular graphs of SMILES strings; a bad one is an error naming its line."""
    from skframe.graphs import GraphBatch
    from skframe.graphs.chem import _chem

    Chem = _chem()
    for s, lineno in zip(smiles, lines):
        if not s or Chem.MolFromSmiles(s) is None:
            raise InvalidInputError(f"{path}, line {lineno}: SMILES {s!r} cannot be parsed; fix or drop that row")
    return GraphBatch.from_smiles(smiles)


def _smiles_inputs(smiles, rep, path, lines=None):
    lines = lines if lines is not None else range(1, len(smiles) + 1)
    if rep["featurize"] == "morgan":
        from skframe.graphs.chem import _chem, morgan_fingerprints

        Chem = _chem()
        for s, lineno in zip(smiles, lines):
            if not s or Chem.MolFromSmiles(s) is None:
                raise InvalidInputError(f"{path}, line {lineno}: SMILES {s!r} cannot be parsed; fix or drop that row")
        return morgan_fingerprints(smiles, **rep["featurize_params"]).astype(np.float64)
    from skframe.graphs import StringBatch

    G = _parse_smiles(smiles, lines, path)  # a bad SMILES is refused even though the kernel reads characters
    return G if rep["inputs"] == "graphs" else StringBatch(smiles)


def _target_columns(header, j_in, rep, path):
    if rep["target_fields"]:
        return [_column(header, f, path, "--target-field") for f in rep["target_fields"]]
    free = [j for j in range(len(header)) if j != j_in and header[j] != rep.get("split_column")]
    if len(free) < rep["targets"]:
        raise InvalidParameterError(f"{path} has {len(free)} columns besides {header[j_in]!r} but --targets is "
                                    f"{rep['targets']}; name the target columns with --target-field")
    return free[len(free) - rep["targets"]:]


def _read_csv(path, rep, with_targets, drop=False, split=None):
    """Inputs, targets (or output molecules) and split marks of a SMILES CSV.

    With ``drop``, rows whose SMILES cannot be parsed or whose targets are not numbers are
    left out (``--missing drop``) instead of stopping with an error naming the line.
    Returns ``(X, Y, info)``; ``info`` has ``n_dropped`` and ``marks`` (``train``/``test``).
    """
    from skframe.graphs.chem import _chem

    Chem = _chem()
    header, body = _read_csv_columns(path)
    j_in = _column(header, rep["input_column"], path, "--input-column")
    j_out = cols = None
    if with_targets and rep["outputs"] == "smiles":
        j_out = _column(header, rep["output_column"], path, "--output-column")
    elif with_targets:
        cols = _target_columns(header, j_in, rep, path)
    j_split = _column(header, split, path, "--split-column") if split else None
    kept, rows, n_dropped = [], [], 0
    for lineno, r in body:
        try:
            for j in (j_in, j_out):
                if j is not None and (not r[j].strip() or Chem.MolFromSmiles(r[j].strip()) is None):
                    raise InvalidInputError(f"{path}, line {lineno}: SMILES {r[j].strip()!r} cannot be parsed; fix "
                                            "or drop that row (--missing drop leaves such rows out)")
            if cols is not None:
                where = f"{path}, line {lineno}: target {[header[j] for j in cols]}"
                try:
                    rows.append(_numbers([r[j] for j in cols], where))
                except DataFormatError as exc:
                    raise DataFormatError(f"{exc}; name the numeric target columns with --target-field, or "
                                          "leave such rows out with --missing drop") from None
        except (InvalidInputError, DataFormatError):
            if not drop:
                raise
            n_dropped += 1
            continue
        kept.append((lineno, r))
    if not kept:
        raise DataFormatError(f"{path}: no usable row is left")
    lines = [lineno for lineno, _ in kept]
    X = _smiles_inputs([r[j_in].strip() for _, r in kept], rep, path, lines)
    Y = None
    if j_out is not None:
        Y = _parse_smiles([r[j_out].strip() for _, r in kept], lines, path)
    elif cols is not None:
        Y = np.asarray(rows, dtype=np.float64)
    marks = None
    if j_split is not None:
        marks = [r[j_split].strip().lower() for _, r in kept]
        for lineno, mark in zip(lines, marks):
            if mark not in ("train", "test"):
                raise DataFormatError(f"{path}, line {lineno}: {split} is {mark!r}; mark each row train or test")
    return X, Y, {"n_dropped": n_dropped, "marks": marks}


def read(path, rep, with_targets=True, drop=False):
    """Inputs (and targets, or output molecules) of one file, read as the representation says.

    ``drop``: leave out CSV rows whose SMILES or targets cannot be read (``--missing drop``).
    """
    if not Path(str(path)).exists():
        raise InvalidParameterError(f"{path}: no such file")
    kind = _kind(path)
    if kind == "jsonl":
        if rep["inputs"] != "graphs":
            raise InvalidParameterError(f"{path}: the model was trained on {rep['inputs']} inputs, not on graphs")
        return _read_jsonl(path, rep["target_fields"], with_targets)
    if kind == "sdf":
        if rep["outputs"] != "table":
            raise InvalidParameterError(f"{path}: the model predicts molecules from a SMILES column; give a .csv")
        return _read_sdf(path, rep, with_targets)
    return _read_csv(path, rep, with_targets, drop=drop)[:2]


def load(opts):
    """``(X_train, Y_train, X_test, Y_test, info)`` of molecule or graph files (see the module docstring)."""
    rep = representation_of(opts)
    drop = opts.missing == "drop"
    if rep["kind"] == "csv":
        if not Path(str(opts.train)).exists():
            raise InvalidParameterError(f"{opts.train}: no such file")
        X_tr, Y_tr, details = _read_csv(opts.train, rep, True, drop=drop, split=rep.get("split_column"))
    else:
        (X_tr, Y_tr), details = read(opts.train, rep), {}
    check_kernels(opts, X_tr, Y_tr)
    info = {"name": Path(opts.train).name, "source": str(opts.train), "representation": rep}
    if drop:
        info["n_dropped"] = details.get("n_dropped", 0)
    if opts.outputs == "smiles" and opts.candidates:
        opts.candidate_molecules = load_molecule_candidates(opts.candidates, rep, drop=drop)
    if rep.get("split_column"):
        from skframe.plugin.collections import take

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
        X_te, Y_te, details = _read_csv(opts.test, rep, True, drop=drop)
        if drop:
            info["n_dropped_test"] = details["n_dropped"]
    else:
        X_te, Y_te = read(opts.test, rep)
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
    from skframe.plugin.collections import is_collection, take
    from skframe.plugin.registry import get_kernel

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


# ---------------------------------------------------------------------------------- candidates
def load_molecule_candidates(path, rep, drop=False):
    """Candidate molecules: ``.smi``/``.txt`` (one SMILES per line), ``.csv`` (the output column), ``.sdf``, ``.jsonl``.

    With ``drop`` (``--missing drop``), SMILES that cannot be parsed are left out; otherwise
    they are an error naming their line.
    """
    from skframe.graphs import GraphBatch

    path = Path(str(path))
    if not path.exists():
        raise InvalidParameterError(f"--candidates {path}: no such file")
    suffix = path.suffix.lower()
    if suffix == ".sdf":
        return GraphBatch.from_sdf(path)
    if suffix == ".jsonl":
        return _read_jsonl(path, [], False)[0]
    if suffix == ".csv":
        header, body = _read_csv_columns(path)
        name = rep["output_column"] if rep["output_column"] in header else header[0]
        j = header.index(name)
        smiles, lines = [r[j].strip() for _, r in body], [n for n, _ in body]
    else:
        smiles, lines = [], []
        with open(path, encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                parts = line.split()
                if parts and not parts[0].startswith("#"):
                    smiles.append(parts[0])
                    lines.append(lineno)
    if drop:
        from skframe.graphs.chem import canonical_smiles

        ok = [c is not None for c in canonical_smiles(smiles)]
        smiles, lines = [s for s, k in zip(smiles, ok) if k], [n for n, k in zip(lines, ok) if k]
    if not smiles:
        raise DataFormatError(f"--candidates {path} holds no SMILES; write one per line")
    return _parse_smiles(smiles, lines, path)


def is_molecule_output(opts):
    return (getattr(opts, "outputs", None) or "table") == "smiles"


# ---------------------------------------------------------------------------------- metrics and output
def _smiles_of(G):
    return G.to_smiles()


def _same(a_smiles, b_smiles, A, B, i, j):
    if a_smiles[i] is not None and b_smiles[j] is not None:
        return a_smiles[i] == b_smiles[j]
    from skframe.graphs.metrics import exact_match

    return exact_match(A.take([i]), B.take([j])) == 1.0


def molecule_metrics(model, X_test, Y_test, Y_pred, opts):
    """Exact match of the top-1 (and with ``--top-k K`` of the top-K) molecules and mean Morgan
    Tanimoto similarity of the top-1 molecule to the truth; molecules are compared by canonical
    SMILES (labelled-graph isomorphism where a graph is no valid molecule)."""
    true_smiles = _smiles_of(Y_test)
    pred_smiles = _smiles_of(Y_pred)
    n = len(Y_test)
    out = {"exact_match_top1": float(np.mean([_same(pred_smiles, true_smiles, Y_pred, Y_test, i, i)
                                              for i in range(n)]))}
    topk = getattr(opts, "topk", None)
    candidates = (topk or {}).get("candidates")
    if candidates is None:
        candidates = model.candidates_
    cand_smiles = _smiles_of(candidates)
    known = {s for s in cand_smiles if s is not None}
    out["truth_among_candidates"] = float(np.mean([s is not None and s in known for s in true_smiles]))
    if topk is not None:
        k = int(topk["k"])
        idx = np.asarray(topk["indices"])
        hits = [any(j >= 0 and _same(cand_smiles, true_smiles, candidates, Y_test, int(j), i) for j in idx[i, :k])
                for i in range(n)]
        out[f"exact_match_top{k}"] = float(np.mean(hits))
    out["tanimoto_top1"] = _mean_tanimoto(pred_smiles, true_smiles)
    out["surrogate_mse"] = float(model.surrogate_mse(X_test, Y_test))
    out["n_candidates"] = int(len(candidates))
    return out


def _mean_tanimoto(pred_smiles, true_smiles):
    """Mean Tanimoto similarity of Morgan fingerprints (radius 2, 2048 bits); 0 where a graph is no molecule."""
    from skframe.graphs.metrics import fingerprint_tanimoto

    valid = [i for i, (p, t) in enumerate(zip(pred_smiles, true_smiles)) if p is not None and t is not None]
    if not valid:
        return 0.0
    mean_valid = fingerprint_tanimoto([pred_smiles[i] for i in valid], [true_smiles[i] for i in valid])
    return float(mean_valid * len(valid) / len(true_smiles))


def write_molecules(out, G):
    """Predicted molecules as a CSV column ``smiles`` (canonical SMILES) to ``out``, or to stdout."""
    import io

    import typer

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["smiles"])
    for s in G.to_smiles():
        w.writerow([s if s is not None else ""])
    if out is None:
        typer.echo(buf.getvalue(), nl=False)
        return
    if Path(str(out)).suffix.lower() != ".csv":
        raise InvalidParameterError(f"--out {out}: predicted molecules are written as SMILES; use a .csv file name")
    from skframe.io import atomic_write

    with atomic_write(str(out), "w") as fh:
        fh.write(buf.getvalue())


# ---------------------------------------------------------------------------------- predict / evaluate
def _options(extra):
    """Fit options carrying what the task modules need at prediction time."""
    from skframe.cli._options import FitOptions

    rep = extra["representation"]
    task = extra.get("task") or "regression"
    means = extra.get("train_target_means")
    opts = FitOptions(task=task if task == "structured" else "regression", top_k=extra.get("top_k"),
                      train_target_means=None if means is None else np.asarray(means, dtype=np.float64))
    opts.outputs = rep["outputs"]
    opts.candidate_molecules = extra.get("candidate_molecules")
    return task, opts


def predict_file(model, extra, data, out, drop=False):
    """``skframe predict`` on a molecule or graph file: numbers as CSV, molecules as SMILES.

    ``drop`` (only on request: it shifts the rows) leaves out rows whose SMILES cannot be read.
    """
    from skframe.cli._services import call_predict, task_module, write_predictions

    task, opts = _options(extra)
    X, _ = read(data, extra["representation"], with_targets=False, drop=drop)
    P = call_predict(task_module(task), model, X, opts)
    if len(P.shape) < 2 and not isinstance(P, np.ndarray):  # predicted molecules
        return write_molecules(out, P)
    return write_predictions(out, P)


def evaluate_file(model, extra, data, drop=False):
    """``skframe evaluate`` on a labelled molecule or graph file: the report.

    When the model was fitted with ``--split-column NAME`` and the file has that column,
    only the rows marked ``test`` are scored (the figures of the fit's report).
    """
    import time

    from skframe.cli._services import call_predict, task_module
    from skframe.plugin.collections import take

    task, opts = _options(extra)
    rep = extra["representation"]
    split = rep.get("split_column")
    scored = "all rows"
    if split and _kind(data) == "csv" and Path(str(data)).exists() and split in _read_csv_columns(data)[0]:
        X, Y, details = _read_csv(data, rep, True, drop=drop, split=split)
        test = np.flatnonzero(np.asarray(details["marks"]) == "test")
        if test.size:
            X, Y, scored = take(X, test), take(Y, test), f"rows marked test in {split}"
    else:
        X, Y = read(data, rep, with_targets=True, drop=drop)
    module = task_module(task)
    t0 = time.perf_counter()
    P = call_predict(module, model, X, opts)
    seconds = time.perf_counter() - t0
    if isinstance(Y, np.ndarray) and Y.shape[1] == 1 and task != "structured":
        Y = Y[:, 0]
    return {"task": task, "metrics": module.metrics(model, X, Y, P, opts), "predict_seconds": seconds,
            "n_samples": int(X.shape[0]), "scored": scored, "model": type(model).__name__}
