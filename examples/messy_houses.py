"""Write a messy table of house sales, as spreadsheets export them, for docs/your_data.md.

``houses.csv`` (1 500 sales) and ``houses-test.csv`` (500 other sales of the same years): semicolon-separated
with decimal commas (a European spreadsheet's CSV), a city name, a sale date, a postcode written as a number, a
free-text note and a sale identifier, missing cells (some cities, some surfaces), and features on very different
scales (the surface in m², the plot in m², the distance to the centre in metres, the year of construction).
``houses-new.csv`` holds ten houses to price, without the price column, one of them in a city the training file
does not have.

With ``--gzip`` it also writes ``houses.csv.gz`` (the same file, gzip-compressed); with ``--parquet`` (needs
pyarrow) ``houses.parquet``, the training table with typed columns (numbers
as numbers, the sale date as a date), as a data pipeline would.

    python examples/messy_houses.py [--n 1500] [--folder .] [--gzip] [--parquet]
"""

import argparse
import gzip
from pathlib import Path

import numpy as np

CITIES = {"Paris": 9.5, "Lyon": 4.8, "Marseille": 3.6, "Lille": 3.3, "Nantes": 4.0, "Bordeaux": 4.6}
POSTCODES = {"Paris": (75001, 75020), "Lyon": (69001, 69009), "Marseille": (13001, 13016), "Lille": (59000, 59800),
             "Nantes": (44000, 44300), "Bordeaux": (33000, 33800)}
NOTES = ("bright, quiet street", "needs work", "garden", "top floor, lift", "near the station", "renovated kitchen",
         "two balconies", "ground floor", "view of the river", "cellar and parking")


def _sales(rng, n, start, cities=tuple(CITIES)):
    city = rng.choice(cities, size=n)
    surface = np.round(rng.gamma(4.0, 18.0, size=n) + 15, 1)
    plot = np.where(rng.uniform(size=n) < 0.6, 0.0, np.round(rng.gamma(2.0, 250.0, size=n)))
    distance = np.round(rng.gamma(2.0, 2500.0, size=n))
    built = rng.integers(1880, 2024, size=n)
    days = np.sort(rng.integers(0, 3 * 365, size=n)) + start
    sold = np.datetime64("2021-01-01") + days
    per_m2 = np.array([CITIES.get(c, 4.0) for c in city]) * 1000.0
    month = (sold.astype("datetime64[M]").astype(int) % 12) + 1
    price = (surface * per_m2 * (1 + 0.02 * days / 365) * np.exp(-distance / 20_000) * (1 + 0.04 * (month > 4))
             + 40.0 * plot + rng.normal(scale=15_000, size=n))
    postcode = np.array([rng.integers(*POSTCODES.get(c, (10000, 10100))) for c in city])
    rows = []
    for i in range(n):
        cells = [f"S{start + i:06d}", "" if rng.uniform() < 0.03 else city[i], str(sold[i]), str(postcode[i]),
                 "" if rng.uniform() < 0.02 else f"{surface[i]:.1f}".replace(".", ","), f"{plot[i]:.0f}",
                 f"{distance[i]:.0f}", str(built[i]), f'"{rng.choice(NOTES)}; {rng.integers(1, 99)} photos"',
                 f"{price[i]:.2f}".replace(".", ",")]
        rows.append(cells)
    return rows


HEADER = ["sale_id", "city", "sold", "postcode", "surface_m2", "plot_m2", "distance_m", "built", "notes", "price"]


def _write(path, rows, header):
    Path(path).write_text(";".join(header) + "\n" + "".join(";".join(r) + "\n" for r in rows), encoding="utf-8")


def _write_parquet(path, csv_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from skframe.io.table import read_table

    table = read_table(csv_path)  # text cells, decimal commas already read as points
    arrays = {}
    for name, col in zip(table.names, table.columns):
        cells = [None if c == "" else c for c in col]
        if name == "sold":
            arrays[name] = pa.array(np.array(cells, dtype="datetime64[D]"))
        elif name in ("sale_id", "city", "notes"):
            arrays[name] = pa.array(cells, type=pa.string())
        else:
            arrays[name] = pa.array([None if c is None else float(c) for c in cells], type=pa.float64())
    pq.write_table(pa.table(arrays), path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1500, help="training sales (the test file has a third as many)")
    ap.add_argument("--folder", default=".", help="where to write the files")
    ap.add_argument("--parquet", action="store_true", help="also write houses.parquet (needs pyarrow)")
    ap.add_argument("--gzip", action="store_true", help="also write houses.csv.gz, gzip-compressed")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    folder = Path(args.folder)
    _write(folder / "houses.csv", _sales(rng, args.n, 0), HEADER)
    _write(folder / "houses-test.csv", _sales(rng, args.n // 3, 0), HEADER)
    new = _sales(rng, 10, 0)
    new[0][1] = "Rennes"
    _write(folder / "houses-new.csv", [r[:-1] for r in new], HEADER[:-1])
    if args.gzip:
        (folder / "houses.csv.gz").write_bytes(gzip.compress((folder / "houses.csv").read_bytes(), mtime=0))
    if args.parquet:
        _write_parquet(folder / "houses.parquet", folder / "houses.csv")
    print(f"wrote houses.csv ({args.n} sales), houses-test.csv ({args.n // 3}) and houses-new.csv (10, no price)")


if __name__ == "__main__":
    main()
