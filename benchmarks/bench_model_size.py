"""The model file of the README's first command, ``skframe fit --kernel gaussian --sketch psr``, and what its
posterior state (``predict(X, return_std=True)``) adds to it.

Prints ONE JSON object (and writes ``benchmarks/out/model_size.json``):

* ``bytes``: the file as this version writes it (``now``), with the posterior state rewritten in the earlier
  layout (``earlier_layout``: the dense s' x r map ``P_z`` beside its factors ``mix`` and ``UD``, the square
  r x r system ``A``), and without any posterior state (``without_posterior``: what a point prediction needs);
  the same after one ``return_std`` (the factor ``P_v`` in place of ``A``: ``now_after_std`` and
  ``earlier_layout_after_std``);
* ``arrays``: the bytes of each array of the posterior state in both layouts, and the sketch's m, s' and rank;
* ``std``: the largest relative difference between the standard deviations of the 10 000 test rows computed
  from the two layouts, and the seconds each took (one run each, after one warm-up on 100 rows).

    python benchmarks/bench_model_size.py
"""

import tempfile
import time
from pathlib import Path

import _setup  # noqa: F401  (runtime settings and sys.path, before NumPy)
import numpy as np
from _setup import OUT, emit, versions


def _earlier(state, factor=False):
    """The posterior state as the earlier version stored it: with the square ``A``, or (``factor=True``, after a
    ``return_std``) the square ``P_v``."""
    import scipy.linalg as sla

    from skframe.models._posterior import _cholesky, unpack_lower

    old = {k: v for k, v in state.items() if k not in ("A_tril", "P_v_triu")}
    old["P_z"] = np.asarray(state["mix"].T @ state["UD"])
    A = unpack_lower(state["A_tril"], symmetric=True)
    if factor:
        L = _cholesky(A, state["noise"])
        old["P_v"] = sla.solve_triangular(L, np.eye(L.shape[0]), lower=True).T
    else:
        old["A"] = A
    return old


def _size(model, extra, path):
    from skframe.persistence import save

    save(model, path, extra=extra)
    return path.stat().st_size


def main():
    from skframe.cli._options import FitOptions
    from skframe.cli.fit import EMBEDDED_DATA_SEED, run_fit
    from skframe.datasets import load_default
    from skframe.persistence import load_bundle

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        first = tmp / "first.skf"
        report = run_fit(FitOptions(json=True, kernel="gaussian", sketch="psr", model_out=first))
        now = first.stat().st_size
        model, extra = load_bundle(first)
        state = dict(model.posterior_)
        old = _earlier(state)
        arrays = {"now": {k: int(v.nbytes) for k, v in state.items() if isinstance(v, np.ndarray)},
                  "earlier_layout": {k: int(v.nbytes) for k, v in old.items() if isinstance(v, np.ndarray)}}
        arrays["now"]["mix"] = arrays["earlier_layout"]["mix"] = int(
            state["mix"].data.nbytes + state["mix"].indices.nbytes + state["mix"].indptr.nbytes)
        sizes = {"now": now}
        model.posterior_ = old
        sizes["earlier_layout"] = _size(model, extra, tmp / "earlier.skf")
        model.posterior_ = None
        sizes["without_posterior"] = _size(model, extra, tmp / "without.skf")

        X_test = load_default(random_state=EMBEDDED_DATA_SEED).X_test  # the command's test rows, scaled as it did
        scaler = extra.get("scaler") or {"method": "none"}
        if scaler["method"] != "none":
            X_test = (X_test - scaler["mean"]) / scaler["scale"]
        std, seconds = {}, {}
        for name, posterior in (("now", dict(state)), ("earlier_layout", _earlier(state, factor=True))):
            model.posterior_ = posterior
            model.predict(X_test[:100], return_std=True)  # warm-up, and the factor P_v in place of A
            t0 = time.perf_counter()
            std[name] = model.predict(X_test, return_std=True)[1]
            seconds[name] = time.perf_counter() - t0
            sizes[f"{name}_after_std"] = _size(model, extra, tmp / f"{name}-std.skf")
    out = {
        "command": "skframe fit --kernel gaussian --sketch psr --model-out FILE",
        "sketch": {k: report["sketch"][k] for k in ("m", "s_prime", "rank")},
        "bytes": sizes,
        "kB": {k: round(v / 1000, 1) for k, v in sizes.items()},
        "earlier_over_now": round(sizes["earlier_layout"] / sizes["now"], 2),
        "arrays": arrays,
        "std": {"max_relative_difference": float(np.max(np.abs(std["now"] / std["earlier_layout"] - 1))),
                "seconds": seconds, "n_test": int(len(X_test))},
        "versions": versions(),
    }
    emit(out, OUT / "model_size.json")


if __name__ == "__main__":
    main()
