"""Molecule data files: SDF records, SMILES columns of CSV files, candidate lists (RDKit).

How a file is read is described by a *representation*, a plain dict (the one ``skframe fit``
saves in the model file, so that ``predict`` and ``evaluate`` read new files the same way):

``kind``
    ``"csv"``, ``"sdf"`` or ``"jsonl"`` (:func:`skframe.io.graphs.file_kind`).
``inputs``
    ``"smiles"`` (strings, a :class:`~skframe.graphs.StringBatch`) or ``"graphs"``
    (molecular graphs, a :class:`~skframe.graphs.GraphBatch`).
``outputs``
    ``"table"`` (numeric targets) or ``"smiles"`` (output molecules, as graphs).
``input_column``, ``output_column``
    CSV columns of the input and output SMILES.
``target_fields``, ``targets``
    Names of the target columns (CSV) or data fields (SDF); without names, the last
    ``targets`` CSV columns that are neither the input nor the split column.
``featurize``, ``featurize_params``
    ``"morgan"``: SMILES inputs become sparse Morgan fingerprint bits
    (:func:`skframe.graphs.chem.morgan_fingerprints` with ``radius`` and ``n_bits``); ``"none"``.
``split_column``
    Optional CSV column marking each row ``train`` or ``test``.

The fields are the data options of ``skframe fit`` (``--inputs``, ``--input-column``,
``--target-field``, ...), which the error messages name. A SMILES that RDKit cannot parse is
an error naming its file and line, or, with ``drop``, a row left out.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from skframe.exceptions import DataFormatError, InvalidInputError, InvalidParameterError
from skframe.graphs.batch import GraphBatch
from skframe.graphs.chem import canonical_smiles, mol_from_smiles, morgan_fingerprints
from skframe.graphs.chem import read_sdf as read_sdf_records
from skframe.graphs.strings import StringBatch
from skframe.io.graphs import file_kind, read_graph_jsonl, stack_targets, target_row
from skframe.limits import LIMITS, limit, quoted

__all__ = ["read_molecule_file", "read_smiles_csv", "read_sdf", "read_csv_header", "read_candidates",
           "parse_smiles", "smiles_inputs"]


def parse_smiles(smiles, lines, path):
    """Molecular graphs of SMILES strings; a SMILES RDKit cannot parse is an error naming its line."""
    for s, lineno in zip(smiles, lines):
        if not s or mol_from_smiles(s, f"{path}, line {lineno}") is None:
            raise InvalidInputError(f"{path}, line {lineno}: SMILES {quoted(s)} cannot be parsed; fix or drop that row")
    return GraphBatch.from_smiles(smiles)


def smiles_inputs(smiles, rep, path, lines=None):
    """Model inputs of SMILES strings as the representation says: fingerprints, graphs or strings.

    Every SMILES must parse, even for string inputs (whose kernels read characters).
    """
    lines = lines if lines is not None else range(1, len(smiles) + 1)
    if rep["featurize"] == "morgan":
        for s, lineno in zip(smiles, lines):
            if not s or mol_from_smiles(s, f"{path}, line {lineno}") is None:
                raise InvalidInputError(f"{path}, line {lineno}: SMILES {quoted(s)} cannot be parsed; fix or drop "
                                        "that row")
        return morgan_fingerprints(smiles, **rep["featurize_params"]).astype(np.float64)
    G = parse_smiles(smiles, lines, path)
    return G if rep["inputs"] == "graphs" else StringBatch(smiles)


def read_sdf(path, rep, with_targets=True):
    """Inputs (molecular graphs or SMILES inputs) and targets (data fields) of an SDF file."""
    nodes, edges, elabels, props, smiles = read_sdf_records(path)
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
            rows.append(target_row([p[f] for f in rep["target_fields"]], f"{path}: SDF record {i}, field"))
        Y = stack_targets(rows, path)
    if rep["inputs"] == "graphs":
        return GraphBatch.from_edge_lists(nodes, edges, elabels), Y
    return smiles_inputs(smiles, rep, path), Y


def _csv_rows(path):
    """``(record number, fields)`` of the non-empty, non-comment records of a text CSV; fields are bounded in length.

    A field longer than the ``field_chars`` limit (:mod:`skframe.limits`), a NUL byte or
    invalid UTF-8 is a :class:`DataFormatError` naming the line.
    """
    reader = None
    previous = csv.field_size_limit(limit("field_chars"))
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            reader = csv.reader(fh)
            return [(i, r) for i, r in enumerate(reader, 1) if r and not r[0].startswith("#")]
    except csv.Error as exc:
        line = reader.line_num if reader is not None else 1
        if "field larger than field limit" in str(exc):
            env = LIMITS["field_chars"].env
            raise DataFormatError(f"{path}, line {line}: a field is longer than the limit of {limit('field_chars')} "
                                  f"characters; if the file is genuine, raise the limit with the environment "
                                  f"variable {env} (e.g. {env}={4 * limit('field_chars')})") from None
        raise DataFormatError(f"{path}, line {line}: not a readable CSV record ({exc})") from None
    except UnicodeDecodeError as exc:
        raise DataFormatError(f"{path}: byte {exc.object[exc.start:exc.start + 1]!r} is not valid UTF-8; save the "
                              "file as UTF-8") from None
    finally:
        csv.field_size_limit(previous)


def read_csv_header(path):
    """Header and ``(line number, row)`` pairs of a text CSV (SMILES are text: the numeric reader does not apply)."""
    rows = _csv_rows(path)
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


def _target_columns(header, j_in, rep, path):
    if rep["target_fields"]:
        return [_column(header, f, path, "--target-field") for f in rep["target_fields"]]
    free = [j for j in range(len(header)) if j != j_in and header[j] != rep.get("split_column")]
    if len(free) < rep["targets"]:
        raise InvalidParameterError(f"{path} has {len(free)} columns besides {header[j_in]!r} but --targets is "
                                    f"{rep['targets']}; name the target columns with --target-field")
    return free[len(free) - rep["targets"]:]


def read_smiles_csv(path, rep, with_targets=True, drop=False, split=None):
    """Inputs, targets (or output molecules) and split marks of a SMILES CSV.

    With ``drop``, rows whose SMILES cannot be parsed or whose targets are not numbers are
    left out (``--missing drop``) instead of stopping with an error naming the line.
    ``split`` names the column marking rows ``train`` or ``test``.

    Returns
    -------
    X, Y, info
        ``info`` has ``n_dropped`` and ``marks`` (the ``train``/``test`` mark of each kept
        row, or None without ``split``).
    """
    header, body = read_csv_header(path)
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
                if j is not None and (not r[j].strip() or mol_from_smiles(r[j].strip(), f"{path}, line {lineno}")
                                      is None):
                    raise InvalidInputError(f"{path}, line {lineno}: SMILES {quoted(r[j].strip())} cannot be "
                                            "parsed; fix or drop that row (--missing drop leaves such rows out)")
            if cols is not None:
                where = f"{path}, line {lineno}: target {[header[j] for j in cols]}"
                try:
                    rows.append(target_row([r[j] for j in cols], where))
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
    X = smiles_inputs([r[j_in].strip() for _, r in kept], rep, path, lines)
    Y = None
    if j_out is not None:
        Y = parse_smiles([r[j_out].strip() for _, r in kept], lines, path)
    elif cols is not None:
        Y = np.asarray(rows, dtype=np.float64)
    marks = None
    if j_split is not None:
        marks = [r[j_split].strip().lower() for _, r in kept]
        for lineno, mark in zip(lines, marks):
            if mark not in ("train", "test"):
                raise DataFormatError(f"{path}, line {lineno}: {split} is {mark!r}; mark each row train or test")
    return X, Y, {"n_dropped": n_dropped, "marks": marks}


def read_molecule_file(path, rep, with_targets=True, drop=False):
    """Inputs (and targets, or output molecules) of one molecule or graph file, read as ``rep`` says.

    ``.jsonl`` files hold graphs (:func:`skframe.io.graphs.read_graph_jsonl`), ``.sdf`` files
    molecules (:func:`read_sdf`), any other file a SMILES CSV (:func:`read_smiles_csv`).
    ``drop``: leave out CSV rows whose SMILES or targets cannot be read (``--missing drop``).

    Returns
    -------
    X, Y
        Y is None without ``with_targets``.
    """
    if not Path(str(path)).exists():
        raise InvalidParameterError(f"{path}: no such file")
    kind = file_kind(path)
    if kind == "jsonl":
        if rep["inputs"] != "graphs":
            raise InvalidParameterError(f"{path}: the model was trained on {rep['inputs']} inputs, not on graphs")
        return read_graph_jsonl(path, rep["target_fields"], with_targets)
    if kind == "sdf":
        if rep["outputs"] != "table":
            raise InvalidParameterError(f"{path}: the model predicts molecules from a SMILES column; give a .csv")
        return read_sdf(path, rep, with_targets)
    return read_smiles_csv(path, rep, with_targets, drop=drop)[:2]


def read_candidates(path, rep, drop=False):
    """Candidate molecules: ``.smi``/``.txt`` (one SMILES per line), ``.csv`` (the output column), ``.sdf``, ``.jsonl``.

    With ``drop`` (``--missing drop``), SMILES that cannot be parsed are left out; otherwise
    they are an error naming their line.
    """
    path = Path(str(path))
    if not path.exists():
        raise InvalidParameterError(f"--candidates {path}: no such file")
    suffix = path.suffix.lower()
    if suffix == ".sdf":
        return GraphBatch.from_sdf(path)
    if suffix == ".jsonl":
        return read_graph_jsonl(path, [], False)[0]
    if suffix == ".csv":
        header, body = read_csv_header(path)
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
        ok = [c is not None for c in canonical_smiles(smiles)]
        smiles, lines = [s for s, k in zip(smiles, ok) if k], [n for n, k in zip(lines, ok) if k]
    if not smiles:
        raise DataFormatError(f"--candidates {path} holds no SMILES; write one per line")
    return parse_smiles(smiles, lines, path)
