"""SMILES -> molecule: predict a molecular graph from its SMILES string (solubility set).

Inputs are SMILES strings with the normalised 3-gram kernel; outputs are molecular graphs with a
normalised graph kernel (WL subtree or NSPD); the candidates are all molecules of the set. Reports
top-1 / top-10 exact-match rates, the mean graph edit distance of the top-1 prediction (networkx, with a
per-pair time limit; on the first ``--ged-n`` test molecules) and fit / predict times, for the exact
model (IOKR), a sketched one (sub-sampling input and output, SISOKR) and a nearest-neighbour baseline
(the output of the training input with the largest 3-gram kernel value).

Usage: ``python benchmarks/bench_molecules.py [--output-kernel wl-subtree] [--ged-n 100]``.
"""

import argparse
import json
import time

import _setup  # noqa: F401  (runtime settings first)
import numpy as np


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--output-kernel", default="wl-subtree", choices=["wl-subtree", "nspd", "core-wl"])
    ap.add_argument("--lam", type=float, default=1e-4)
    ap.add_argument("--m-x", type=int, default=400)
    ap.add_argument("--m-y", type=int, default=400)
    ap.add_argument("--ged-n", type=int, default=100)
    ap.add_argument("--ged-timeout", type=float, default=0.5)
    args = ap.parse_args()

    from _setup import load_or_exit, versions

    from skframe.datasets import load_solubility
    from skframe.graphs import GraphBatch, StringBatch
    from skframe.graphs.chem import canonical_smiles
    from skframe.graphs.metrics import graph_edit_distance
    from skframe.models import OutputKernelRegressor
    from skframe.plugin.registry import get_kernel

    data = load_or_exit(load_solubility)
    tr = [s for s, c in zip(data.X_train, canonical_smiles(data.X_train)) if c]
    te = [s for s, c in zip(data.X_test, canonical_smiles(data.X_test)) if c]
    X_tr, X_te = StringBatch(tr), StringBatch(te)
    Y_tr, Y_te = GraphBatch.from_smiles(tr), GraphBatch.from_smiles(te)
    cands = GraphBatch.from_smiles(tr + te)
    truth = len(tr) + np.arange(len(te))  # the test molecules' rows among the candidates
    out_params = {"h": 3} if args.output_kernel != "nspd" else {"r": 2, "d": 3}
    common = dict(input_kernel="ngram", input_kernel_params={"n": 3, "normalize": True},
                  output_kernel=args.output_kernel, output_kernel_params=dict(out_params, normalize=True),
                  lam=args.lam, random_state=0)
    models = {
        "IOKR (exact)": OutputKernelRegressor(**common),
        "SISOKR (sub-sampling in and out)": OutputKernelRegressor(
            input_sketch="subsample", input_sketch_size=args.m_x, output_sketch="subsample",
            output_sketch_size=args.m_y, **common),
    }
    report = {"n_train": len(tr), "n_test": len(te), "n_candidates": len(cands), "output_kernel": args.output_kernel,
              "lam": args.lam, "models": {}}
    ged_rows = np.arange(min(args.ged_n, len(te)))
    for name, model in models.items():
        t0 = time.perf_counter()
        model.fit(X_tr, Y_tr)
        t_fit = time.perf_counter() - t0
        t0 = time.perf_counter()
        idx, _ = model.predict_topk(X_te, 10, candidates=cands)
        t_pred = time.perf_counter() - t0
        ged, limited = graph_edit_distance(cands.take(idx[ged_rows, 0]), Y_te.take(ged_rows), timeout=args.ged_timeout)
        report["models"][name] = {
            "top1": float(np.mean(idx[:, 0] == truth)), "top10": float(np.mean((idx == truth[:, None]).any(1))),
            "ged_top1": ged, "ged_pairs_at_time_limit": limited, "fit_s": round(t_fit, 3),
            "predict_s": round(t_pred, 3),
            "sketch": model.sketch_info_}
    # nearest-neighbour baseline: the training output of the most similar training input
    kx = get_kernel("ngram", n=3, normalize=True)
    t0 = time.perf_counter()
    nn = kx(X_te, X_tr).argmax(axis=1)
    t_nn = time.perf_counter() - t0
    ged, limited = graph_edit_distance(Y_tr.take(nn[ged_rows]), Y_te.take(ged_rows), timeout=args.ged_timeout)
    report["models"]["nearest neighbour"] = {"top1": 0.0, "top10": 0.0, "ged_top1": ged,
                                             "ged_pairs_at_time_limit": limited, "predict_s": round(t_nn, 3)}
    report["ged_molecules"] = int(ged_rows.size)
    report["versions"] = versions()
    print(json.dumps(report, indent=2, default=str))


if __name__ == "__main__":
    main()
