"""The structured-prediction task of ``skframe fit`` (IOKR / SIOKR / ISOKR / SISOKR, and DSOKR with ``--model dsokr``).

Candidate files (``--candidates FILE``)
---------------------------------------
``.npy``
    One 2-D array ``(n_c, d)``: a global candidate set searched for every test row.
``.npz`` with key ``candidates`` only
    Same, a global set.
``.npz`` with keys ``candidates`` (``(N, d)``) and ``offsets`` (``(n_test + 1,)``)
    Per-sample candidate sets: test row ``i`` searches
    ``candidates[offsets[i]:offsets[i + 1]]`` (e.g. metabolite identification).
    ``offsets`` starts at 0, is non-decreasing and ends at ``N``.
Any other extension is read with :func:`skframe.datasets.load_dataset` with all
columns as features (CSV, ARFF, LIBSVM), as a global set.

Without ``--candidates`` the distinct training outputs are the candidates.
With ``--outputs smiles`` (molecules) the candidates are molecules instead: ``.smi``/``.txt``
(one SMILES per line), ``.csv``, ``.sdf`` or ``.jsonl`` (see :mod:`skframe.automatic._graph_data`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp

from skframe.automatic._graph_data import is_molecule_output, molecule_metrics
from skframe.contract.collections import is_collection
from skframe.datasets import load_dataset
from skframe.exceptions import InvalidInputError, InvalidParameterError
from skframe.metrics import example_based_f1, hamming_loss, mean_rank, mean_reciprocal_rank, rank_of_true
from skframe.models import DeepOutputKernelRegressor, OutputKernelRegressor

NAME = "structured"


def _none(sketch):
    return None if sketch is None or str(sketch).lower() in ("none", "exact") else sketch


MODELS = ("sisokr", "dsokr")


def build_deep_estimator(opts):
    """A :class:`DeepOutputKernelRegressor` (``--model dsokr``) from the fit options.

    ``--early-stopping`` or ``--patience`` hold out ``--validation-fraction``; without them the
    model's default recipe holds out a tenth from 200 rows. The output sketch defaults to sub-sampling.
    """
    early = bool(opts.early_stopping or opts.patience is not None)
    params = {k: v for k, v in (("epochs", opts.epochs), ("batch_size", opts.batch_size),
                                ("learning_rate", opts.learning_rate), ("weight_decay", opts.weight_decay),
                                ("patience", opts.patience)) if v is not None}
    if early:  # otherwise the model's own default (a tenth held out from 200 rows)
        params["validation_fraction"] = opts.validation_fraction
    if opts.output_sketch_size is not None:
        params["output_sketch_size"] = int(opts.output_sketch_size)
    if getattr(opts, "output_rank", None) is not None:
        params["output_rank"] = int(opts.output_rank)
    return DeepOutputKernelRegressor(
        opts.network,
        network_params=dict(opts.network_params or {}) or None,
        output_kernel=opts.output_kernel or "gaussian",
        output_kernel_params=dict(opts.output_kernel_params or {}) or None,
        output_sketch=_none(opts.output_sketch) or "subsample",
        output_sketch_params=dict(opts.output_sketch_params or {}) or None,
        loss=opts.loss or "square",
        loss_params=dict(opts.loss_params or {}) or None,
        n_draws=int(opts.n_draws or 1),
        n_seeds=int(opts.n_seeds or 1),
        aggregate=opts.aggregate or "mean",
        device=opts.device,
        mixed_precision=bool(opts.mixed_precision),
        random_state=opts.seed,
        **params,
    )


def build_estimator(opts):
    """An :class:`OutputKernelRegressor` from the fit options (``input_*`` fall back to ``kernel``/``sketch``);
    a :class:`DeepOutputKernelRegressor` with ``--model dsokr``."""
    model = str(getattr(opts, "model", "sisokr") or "sisokr").lower()
    if model not in MODELS:
        raise InvalidParameterError(f"--model {opts.model!r} is not one of {', '.join(MODELS)}")
    if model == "dsokr":
        return build_deep_estimator(opts)
    input_kernel = opts.input_kernel or opts.kernel
    own_input_kernel = opts.input_kernel_params or opts.input_kernel
    input_kernel_params = opts.input_kernel_params if own_input_kernel else opts.kernel_params
    # each input_* option wins when given; otherwise the generic --sketch/--sketch-size/--sketch-param
    input_sketch = opts.input_sketch if opts.input_sketch is not None else opts.named_sketch()
    size = opts.input_sketch_size or opts.sketch_size
    sizes = {}  # "auto" (or nothing given): the model's own default
    if size not in (None, "auto"):
        sizes["input_sketch_size"] = int(size)
    if opts.output_sketch_size is not None:
        sizes["output_sketch_size"] = int(opts.output_sketch_size)
    if opts.input_sketch_params or opts.input_sketch is not None:
        params = opts.input_sketch_params
    else:
        params = opts.sketch_params
    return OutputKernelRegressor(
        input_kernel,
        input_kernel_params=dict(input_kernel_params or {}) or None,
        output_kernel=opts.output_kernel or "gaussian",
        output_kernel_params=dict(opts.output_kernel_params or {}) or None,
        input_sketch=_none(input_sketch),
        input_sketch_params=dict(params or {}) or None,
        output_sketch=_none(opts.output_sketch),
        output_sketch_params=dict(opts.output_sketch_params or {}) or None,
        lam=opts.lam,
        n_draws=int(opts.n_draws or 1),
        aggregate=opts.aggregate or "mean",
        random_state=opts.seed,
        cv_order=getattr(opts, "cv_order", "shuffle"),
        **sizes,
    )


def load_candidates(path, n_rows=None):
    """Read a candidates file (see the module docstring).

    Returns
    -------
    ndarray of shape (n_c, d), or a list of ``n_rows`` arrays (per-sample sets).
    """
    path = Path(path)
    if not path.exists():
        raise InvalidParameterError(f"--candidates {path}: no such file")
    suffix = path.suffix.lower()
    if suffix == ".npy":
        C = np.load(path, allow_pickle=False)
        offsets = None
    elif suffix == ".npz":
        with np.load(path, allow_pickle=False) as f:
            if "candidates" not in f:
                raise InvalidInputError(
                    f"{path}: an NPZ candidates file needs an array named 'candidates'; found {list(f)}"
                )
            C = f["candidates"]
            offsets = f["offsets"] if "offsets" in f else None
    else:
        ds = load_dataset(str(path), targets=0)
        C, offsets = ds.X, None
        if hasattr(C, "toarray"):
            C = C.toarray()
    C = np.asarray(C, dtype=np.float64)
    if C.ndim != 2:
        raise InvalidInputError(
            f"{path}: candidates must be a 2-D array (n_candidates, n_outputs); got shape {C.shape}"
        )
    if offsets is None:
        return C
    offsets = np.asarray(offsets, dtype=np.int64).ravel()
    if offsets[0] != 0 or offsets[-1] != C.shape[0] or np.any(np.diff(offsets) < 0):
        raise InvalidInputError(f"{path}: 'offsets' must start at 0, be non-decreasing and end at {C.shape[0]}")
    if n_rows is not None and offsets.shape[0] != n_rows + 1:
        raise InvalidInputError(
            f"{path}: 'offsets' describes {offsets.shape[0] - 1} per-sample sets but there are {n_rows} rows to predict"
        )
    return [C[a:b] for a, b in zip(offsets[:-1], offsets[1:])]


def _candidates(opts, n_rows):
    if is_molecule_output(opts):  # molecules read at load time (None: the training molecules)
        return opts.candidate_molecules
    if not opts.candidates:
        return None
    return load_candidates(opts.candidates, n_rows)


def predict(model, X, opts):
    """Decode the best candidate per row; with ``--top-k`` also keep the K best (in ``opts.topk``).

    With ``--top-k`` and the candidate decoder, the best candidate is the first of the K
    best: the candidates are scored once, not twice.
    """
    C = _candidates(opts, X.shape[0])
    if not opts.top_k or getattr(model, "decoder", "candidates") != "candidates":
        Y_pred = model.predict(X, candidates=C)
    if opts.top_k:
        idx, scores = model.predict_topk(X, int(opts.top_k), candidates=C)
        opts.topk = {"k": int(opts.top_k), "indices": idx, "scores": scores, "candidates": C}
        if getattr(model, "decoder", "candidates") == "candidates":
            Y_pred = _rows_at(model.candidates_ if C is None else C, idx[:, 0])
    return Y_pred.toarray() if hasattr(Y_pred, "toarray") else Y_pred


def _rows_at(C, best):
    """Row ``best[i]`` of the candidate set (of row i's own set for per-sample candidates)."""
    if not isinstance(C, list):
        return C[best]
    if np.any(best < 0):
        raise InvalidInputError("a per-sample candidate set is empty; give at least one candidate per row")
    rows = [c[i : i + 1] for c, i in zip(C, best)]
    return sp.vstack(rows, format="csr") if any(sp.issparse(r) for r in rows) else np.vstack(rows)


def _row_keys(C):
    C = np.ascontiguousarray(np.asarray(C.toarray() if hasattr(C, "toarray") else C, dtype=np.float64))
    return {row.tobytes(): i for i, row in reversed(list(enumerate(C)))}


def ranking_metrics(model, X_test, Y_test, candidates, chunk_rows=1000):
    """Rank of each true output among the candidates (rows whose truth is not a candidate are skipped).

    Returns MRR, mean rank, the number of ranked rows and ``ranks`` (their ranks, an array);
    ties count as the average rank.
    """
    Y_test = np.ascontiguousarray(Y_test, dtype=np.float64)
    per_sample = isinstance(candidates, list)
    global_keys = None if per_sample else _row_keys(candidates)
    true_idx = np.full(Y_test.shape[0], -1, dtype=np.int64)
    for i in range(Y_test.shape[0]):
        keys = _row_keys(candidates[i]) if per_sample else global_keys
        true_idx[i] = keys.get(Y_test[i].tobytes(), -1)
    rows = np.flatnonzero(true_idx >= 0)
    if rows.size == 0:
        return {"n_ranked": 0, "ranks": np.zeros(0)}
    ranks = []
    for start in range(0, rows.size, chunk_rows):
        part = rows[start : start + chunk_rows]
        if per_sample:
            S = model.decision_function(X_test[part], candidates=[candidates[i] for i in part])
            ranks.extend(float(rank_of_true(np.asarray(s)[None, :], [true_idx[i]])[0]) for s, i in zip(S, part))
        else:
            S = model.decision_function(X_test[part], candidates=candidates)
            ranks.extend(rank_of_true(S, true_idx[part]).tolist())
    ranks = np.asarray(ranks)
    return {"mrr": float(mean_reciprocal_rank(ranks)), "mean_rank": float(mean_rank(ranks)), "n_ranked": int(rows.size),
            "ranks": ranks}


def metrics(model, X_test, Y_test, Y_pred, opts):
    """Example-based F1 and Hamming loss (binary outputs), surrogate MSE; with ``--top-k K`` also
    Hits@1, @5, @10 and @K, MRR and mean rank of the true output among the candidates.

    Hits@h is the fraction of *all* test rows whose true output ranks h-th or better (a true
    output that is not a candidate is a miss); MRR and mean rank are over the ranked rows.
    """
    if is_collection(Y_test):  # molecules: exact match, top-k, fingerprint similarity
        return molecule_metrics(model, X_test, Y_test, Y_pred, opts)
    Y_test = np.asarray(Y_test.toarray() if hasattr(Y_test, "toarray") else Y_test, dtype=np.float64)
    out = {}
    binary = np.isin(Y_test, (0.0, 1.0)).all() and np.isin(Y_pred, (0.0, 1.0)).all()
    if binary:
        out["example_based_f1"] = float(example_based_f1(Y_test, Y_pred))
        out["hamming_loss"] = float(hamming_loss(Y_test, Y_pred))
    else:
        out["mse"] = float(np.mean((Y_test - Y_pred) ** 2))
    out["surrogate_mse"] = float(model.surrogate_mse(X_test, Y_test))
    topk = getattr(opts, "topk", None)
    if topk is not None:
        if opts.candidates is None:
            topk = dict(topk, candidates=model.candidates_)
        k = topk["k"]
        ranking = ranking_metrics(model, X_test, Y_test, topk["candidates"])
        ranks = ranking.pop("ranks")
        for h in sorted({1, 5, 10, k}):
            # Hits@h over every test row: a true output that is not a candidate is never a hit
            out[f"hits_at_{h}"] = float(np.sum(ranks <= h) / Y_test.shape[0])
        out.update(ranking)
        out["top_k"] = {
            "k": k,
            "indices_first_rows": topk["indices"][:5].tolist(),
            "scores_first_rows": topk["scores"][:5].tolist(),
        }
    return out
