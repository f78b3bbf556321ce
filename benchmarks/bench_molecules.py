"""SMILES -> molecule: predict a molecular graph from its SMILES string (solubility set).

Inputs are SMILES strings with the normalised 3-gram kernel; outputs are molecular graphs with a
normalised graph kernel (WL subtree or NSPD); the candidates are all molecules of the set. Reports
top-1 / top-10 exact-match rates, the mean graph edit distance of the top-1 prediction (networkx, with a
per-pair time limit; on the first ``--ged-n`` test molecules) and fit / predict times, for the exact
model (IOKR), a sketched one (sub-sampling input and output, SISOKR) and a nearest-neighbour baseline
(the output of the training input with the largest 3-gram kernel value).

Usage: ``python benchmarks/bench_molecules.py [--output-kernel wl-subtree] [--ged-n 100]``.
"""

from types import SimpleNamespace

import _setup  # runtime settings and sys.path, before NumPy; the measuring helpers
import numpy as np


def solubility_task():
    """SMILES -> molecule on the solubility set (the molecules RDKit reads).

    Inputs ``X_tr``, ``X_te`` as strings, outputs ``Y_tr``, ``Y_te`` as graphs, every molecule of
    the set a candidate (``cands``), ``truth`` the test molecules' rows among the candidates.
    """
    from skframe.datasets import load_solubility
    from skframe.graphs import GraphBatch, StringBatch
    from skframe.graphs.chem import canonical_smiles

    data = _setup.load_or_exit(load_solubility)
    tr = [s for s, c in zip(data.X_train, canonical_smiles(data.X_train)) if c]
    te = [s for s, c in zip(data.X_test, canonical_smiles(data.X_test)) if c]
    return SimpleNamespace(X_tr=StringBatch(tr), X_te=StringBatch(te), Y_tr=GraphBatch.from_smiles(tr),
                           Y_te=GraphBatch.from_smiles(te), cands=GraphBatch.from_smiles(tr + te),
                           truth=len(tr) + np.arange(len(te)), n_train=len(tr), n_test=len(te))


def fit_and_rank(model, task, ged_rows, ged_timeout):
    """Fit ``model`` and rank the candidates of the test inputs: top-1 / top-10 exact-match rates, the
    graph edit distance of the top-1 prediction on ``ged_rows``, fit and predict times."""
    from skframe.graphs.metrics import graph_edit_distance

    _, t_fit = _setup.timed(model.fit, task.X_tr, task.Y_tr)
    (idx, _), t_pred = _setup.timed(model.predict_topk, task.X_te, 10, candidates=task.cands)
    ged, limited = graph_edit_distance(task.cands.take(idx[ged_rows, 0]), task.Y_te.take(ged_rows),
                                       timeout=ged_timeout)
    return {"top1": float(np.mean(idx[:, 0] == task.truth)),
            "top10": float(np.mean((idx == task.truth[:, None]).any(1))),
            "ged_top1": ged, "ged_pairs_at_time_limit": limited, "fit_s": round(t_fit, 3),
            "predict_s": round(t_pred, 3)}


def main():
    ap = _setup.parser(__doc__, lam=1e-4, m_x=400, m_y=400, ged_n=100, ged_timeout=0.5)
    ap.add_argument("--output-kernel", default="wl-subtree", choices=["wl-subtree", "nspd", "core-wl"])
    args = ap.parse_args()

    from skframe.contract.registry import get_kernel
    from skframe.graphs.metrics import graph_edit_distance
    from skframe.models import OutputKernelRegressor

    task = solubility_task()
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
    report = {"n_train": task.n_train, "n_test": task.n_test, "n_candidates": len(task.cands),
              "output_kernel": args.output_kernel, "lam": args.lam, "models": {}}
    ged_rows = np.arange(min(args.ged_n, task.n_test))
    for name, model in models.items():
        report["models"][name] = dict(fit_and_rank(model, task, ged_rows, args.ged_timeout),
                                      sketch=model.sketch_info_)
    # nearest-neighbour baseline: the training output of the most similar training input
    kx = get_kernel("ngram", n=3, normalize=True)
    nn, t_nn = _setup.timed(lambda: kx(task.X_te, task.X_tr).argmax(axis=1))
    ged, limited = graph_edit_distance(task.Y_tr.take(nn[ged_rows]), task.Y_te.take(ged_rows),
                                       timeout=args.ged_timeout)
    report["models"]["nearest neighbour"] = {"top1": 0.0, "top10": 0.0, "ged_top1": ged,
                                             "ged_pairs_at_time_limit": limited, "predict_s": round(t_nn, 3)}
    report["ged_molecules"] = int(ged_rows.size)
    report["versions"] = _setup.versions()
    _setup.emit(report, indent=2, default=str)


if __name__ == "__main__":
    main()
