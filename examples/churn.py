"""Write a table of customers whose label is text (``yes``/``no``: did they leave?), for docs/classification.md.

``churn.csv`` (``--n`` customers, 1 200 by default) and ``churn-test.csv`` (400 others), comma-separated with a
header: the plan (``basic``, ``plus`` or ``pro``: a category), the months as a customer, the monthly fee, the
support calls of the last quarter, and ``churned`` (``yes`` or ``no``). ``churn-new.csv`` holds ten customers
without the label column. The label is drawn from a logistic model of the other columns (seeded).

    python examples/churn.py [--n 1200] [--folder .]
"""

import argparse
from pathlib import Path

import numpy as np

PLANS = {"basic": 0.6, "plus": 0.0, "pro": -0.8}


def _customers(rng, n):
    plan = rng.choice(list(PLANS), size=n, p=[0.5, 0.3, 0.2])
    months = rng.integers(1, 73, size=n)
    fee = np.round(rng.uniform(10, 90, size=n), 2)
    calls = rng.poisson(1.5, size=n)
    score = np.array([PLANS[p] for p in plan]) - 0.05 * months + 0.02 * fee + 0.7 * calls - 0.5
    churned = np.where(rng.uniform(size=n) < 1 / (1 + np.exp(-2.0 * score)), "yes", "no")
    return plan, months, fee, calls, churned


def _write(path, columns, with_label=True):
    names = ["plan", "months", "monthly_fee", "support_calls"] + (["churned"] if with_label else [])
    rows = zip(*columns[: len(names)])
    path.write_text(",".join(names) + "\n" + "".join(",".join(map(str, r)) + "\n" for r in rows))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1200, help="customers in churn.csv")
    parser.add_argument("--folder", default=".", help="where to write the files")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    folder = Path(args.folder)
    folder.mkdir(parents=True, exist_ok=True)
    _write(folder / "churn.csv", _customers(rng, args.n))
    _write(folder / "churn-test.csv", _customers(rng, 400))
    _write(folder / "churn-new.csv", _customers(rng, 10), with_label=False)
    print(f"wrote churn.csv ({args.n} customers), churn-test.csv (400) and churn-new.csv (10) in {folder}")


if __name__ == "__main__":
    main()
