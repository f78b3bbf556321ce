"""Four small tables for the two doors (the command line and TableModel), written as CSV files."""

import numpy as np
import pandas as pd


def regression(rng, n=120):
    """Numbers on different scales and a category; the target a smooth function of both."""
    a, b = rng.normal(size=n), rng.normal(size=n) * 100
    colour = rng.choice(["red", "green", "blue"], n)
    y = np.sin(a) + b / 100 + (colour == "red") + 0.1 * rng.normal(size=n)
    return pd.DataFrame({"a": a.round(6), "b": b.round(4), "colour": colour, "y": y.round(6)}), "y"


def binary(rng, n=120):
    """Two numeric features; the target yes/no (text labels)."""
    x1, x2 = rng.normal(size=n), rng.normal(size=n)
    label = np.where(x1 + 0.5 * x2 + 0.5 * rng.normal(size=n) > 0, "yes", "no")
    return pd.DataFrame({"x1": x1.round(6), "x2": x2.round(6), "default": label}), "default"


def multiclass(rng, n=150):
    """Three species by two measurements and a category."""
    species = rng.choice(["setosa", "versicolor", "virginica"], n)
    centre = {"setosa": 0.0, "versicolor": 2.0, "virginica": 4.0}
    length = np.array([centre[s] for s in species]) + rng.normal(size=n)
    width = rng.normal(size=n)
    site = rng.choice(["north", "south"], n)
    return pd.DataFrame({"length": length.round(5), "width": width.round(5), "site": site,
                         "species": species}), "species"


def dates_and_gaps(rng, n=120):
    """A date column, a number with missing cells and a numeric target."""
    day = pd.Timestamp("2021-01-01") + pd.to_timedelta(rng.integers(0, 700, n), unit="D")
    temp = rng.normal(15, 5, n).round(3)
    y = (temp / 5 + np.asarray(day.month) / 6 + 0.1 * rng.normal(size=n)).round(6)
    frame = pd.DataFrame({"day": day.strftime("%Y-%m-%d"), "temp": temp, "y": y})
    frame.loc[rng.choice(n, 6, replace=False), "temp"] = np.nan
    return frame, "y"


TABLES = {"regression": (regression, {}),
          "binary": (binary, {}),
          "multiclass": (multiclass, {}),
          "dates_and_gaps": (dates_and_gaps, {"missing": "mean", "interval": 0.9})}


def write(name, folder, seed=0):
    """``(path, frame, target, options)`` of table ``name`` written to ``folder`` as CSV."""
    make, options = TABLES[name]
    frame, target = make(np.random.default_rng(seed))
    path = folder / f"{name}.csv"
    frame.to_csv(path, index=False)
    return path, frame, target, dict(options)
