"""Date columns: every format read (in Python and through `skframe fit`), day and month told apart, clock words."""

import json
import re
import warnings
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from skframe.cli import app
from skframe.exceptions import DegenerateDataWarning, InvalidInputError, InvalidParameterError
from skframe.preprocessing import TableEncoder, parse_column_types
from skframe.preprocessing.dates import DATE_FORMATS, DAY_MONTH_PAIRS

DOCS = Path(__file__).resolve().parents[2] / "docs" / "your_data.md"
runner = CliRunner()


def _stamps(n=40, seed=0):
    """``n`` dates of 2023-2024 with a fixed seed, the first a 17th (a day above 12 tells day from month)."""
    rng = np.random.default_rng(seed)
    days = np.concatenate([[502], rng.integers(0, 700, size=n - 1)])
    return [datetime(2023, 1, 1) + timedelta(days=int(d)) for d in days]


def _cell(stamp, fmt):
    """``stamp`` written in ``fmt``; ``%Y-%m-%d`` without leading zeros (padded, it is ISO 8601)."""
    return f"{stamp.year}-{stamp.month}-{stamp.day}" if fmt == "%Y-%m-%d" else stamp.strftime(fmt)


def _days(stamps):
    return np.array([(s - datetime(1970, 1, 1)).total_seconds() / 86400.0 for s in stamps])


@pytest.mark.parametrize("fmt", DATE_FORMATS)
def test_every_date_format_is_read(fmt):
    stamps = _stamps()
    cells = np.array([_cell(s, fmt) for s in stamps], dtype=object)
    enc = TableEncoder().fit({"d": cells})
    spec = enc.columns_[0]
    assert spec["type"] == "date" and spec["date_format"] == fmt, spec
    Z = enc.transform({"d": cells})
    np.testing.assert_allclose(Z[:, 0], _days(stamps))
    np.testing.assert_array_equal(Z[:, 1:], [[s.year, s.month, s.weekday()] for s in stamps])
    again = TableEncoder.from_dict(json.loads(json.dumps(enc.to_dict())))  # as a model file keeps it
    np.testing.assert_array_equal(again.transform({"d": cells}), Z)


@pytest.mark.parametrize("cells,days", [
    (["2024-05-17", "2024-05-18 13:30", "2024-05-19T06:00:00"], [19860.0, 19861 + 13.5 / 24, 19862.25]),
    (["2024-05-17T13:30:00Z", "2024-05-17T15:30:00+02:00", "2024-05-17T08:30-05:00"], [19860 + 13.5 / 24] * 3),
    (["2024-05", "2024-06"], [19844.0, 19875.0]),
    (["17/05/2024 13:30", "18/05/2024", "19/05/2024 06:00:00"], [19860 + 13.5 / 24, 19861.0, 19862.25]),
])
def test_iso_dates_times_and_offsets(cells, days):
    Z = TableEncoder().fit_transform({"d": np.array(cells, dtype=object)})
    np.testing.assert_allclose(Z[:, 0], days)


def test_the_documented_formats_are_the_formats_read():
    text = DOCS.read_text()
    example = datetime(2024, 5, 17)
    for fmt in DATE_FORMATS:
        assert f"`{_cell(example, fmt)}`" in text, fmt
    assert "date-mdy" in text and "day first" in text


@pytest.mark.parametrize("day_first,month_first", DAY_MONTH_PAIRS)
def test_day_and_month_are_told_apart_by_a_day_above_12(day_first, month_first):
    stamps = _stamps()
    for fmt in (day_first, month_first):
        cells = np.array([s.strftime(fmt) for s in stamps], dtype=object)
        spec = TableEncoder().fit({"d": cells}).columns_[0]
        assert spec["date_format"] == fmt and "has a day above 12" in spec["reason"], spec
        assert ("day first" if fmt == day_first else "month first") in spec["reason"]


def test_when_no_day_tells_day_first_is_assumed_and_said_and_date_mdy_reads_month_first():
    cells = np.array(["05/06/2024", "06/06/2024", "07/06/2024", "12/01/2024"], dtype=object)
    enc = TableEncoder().fit({"sold": cells})
    spec = enc.columns_[0]
    assert spec["date_format"] == "%d/%m/%Y"
    assert "day first assumed" in spec["reason"] and "--column-types sold=date-mdy" in spec["reason"]
    assert enc.transform({"sold": cells})[0, 2] == 6.0  # June
    enc = TableEncoder(column_types=parse_column_types(["sold=date-mdy"])).fit({"sold": cells})
    assert enc.columns_[0]["date_format"] == "%m/%d/%Y" and "month first as given" in enc.columns_[0]["reason"]
    assert enc.transform({"sold": cells})[0, 2] == 5.0  # May
    with pytest.raises(InvalidInputError, match=r"'sold' was given as dates day first but not every cell is one, "
                                                r"e\.g\. '05/17/2024' \(row 1\)"):
        TableEncoder(column_types={"sold": "date-dmy"}).fit({"sold": np.array(["05/06/2024", "05/17/2024"],
                                                                               dtype=object)})


def test_a_column_of_both_orders_is_refused_in_one_line():
    cells = np.array(["17/05/2024", "05/18/2024", "01/01/2024"] * 3, dtype=object)
    with pytest.raises(InvalidInputError, match=r"'d' holds dates written day first \('17/05/2024'\) and month "
                                                r"first \('05/18/2024'\).*--column-types d=categorical"):
        TableEncoder().fit({"d": cells})


@pytest.mark.parametrize("words", [["today", "now"], ["yesterday", "tomorrow", "today"], ["Today", "NOW"]])
def test_clock_words_are_text_never_dates(words):
    cells = np.array(words * 5, dtype=object)
    spec = TableEncoder().fit({"when": cells}).columns_[0]
    assert spec["type"] == "categorical" and spec["categories"] == sorted(set(words))
    with pytest.raises(InvalidInputError, match=r"'when' was given as dates but not every cell is one"):
        TableEncoder(column_types={"when": "date"}).fit({"when": cells})
    # a date column whose new data says "today" reads it as a missing date, with a warning: never the clock
    enc = TableEncoder().fit({"when": np.array(["2024-05-17", "2024-05-18"], dtype=object)})
    with pytest.warns(DegenerateDataWarning, match=r"'when' was read as dates \(ISO 2024-05-17\) at fit time but "
                                                   r"holds 1 cell\(s\) that are not, such as 'today' \(row 1\)"):
        Z = enc.transform({"when": np.array(["2024-05-17", "today"], dtype=object)})
    assert np.isnan(Z[1]).all() and Z[0, 0] == 19860.0


def test_a_wrong_column_type_is_refused_in_one_line():
    with pytest.raises(InvalidParameterError, match=r"--column-types 'sold=day' must be NAME=TYPE.*date-mdy"):
        parse_column_types(["sold=day"])
    with pytest.raises(InvalidParameterError, match=r"column_types gives column 'a' the type 'dates'"):
        TableEncoder(column_types={"a": "dates"}).fit({"a": np.array(["x", "y"], dtype=object)})


def test_missing_cells_in_a_date_column_stay_missing():
    cells = np.array(["17/05/2024", "", "?", "18/05/2024"], dtype=object)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Z = TableEncoder().fit_transform({"d": cells})
    assert np.isnan(Z[1:3]).all() and Z[3, 0] - Z[0, 0] == 1.0


# ------------------------------------------------------------------------------------------ through skframe fit
def _fit_csv(tmp_path, fmt, *extra):
    stamps = _stamps(60, seed=1)
    rng = np.random.default_rng(1)
    x = rng.normal(size=60)
    path = tmp_path / "sales.csv"
    lines = ["x;sold;price"] + [f"{x[i]:.4f};{_cell(s, fmt)};{(x[i] + s.month / 6):.4f}"
                                for i, s in enumerate(stamps)]
    path.write_text("\n".join(lines) + "\n")
    res = runner.invoke(app, ["fit", str(path), "--json", "--lam", "1e-3", *extra])
    return res


@pytest.mark.parametrize("fmt", DATE_FORMATS)
def test_skframe_fit_reads_every_date_format(tmp_path, fmt):
    res = _fit_csv(tmp_path, fmt)
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout[res.stdout.find("{"):])
    sold = next(c for c in report["data"]["column_types"] if c["name"] == "sold")
    assert sold["type"] == "date" and sold["features"] == 4, sold
    assert sold["reason"].startswith("dates (" + datetime(2024, 5, 17).strftime(fmt)), sold  # as an example


def test_skframe_fit_says_which_order_it_assumed_and_takes_date_mdy(tmp_path):
    path = tmp_path / "t.csv"
    rng = np.random.default_rng(2)
    rows = [f"{m:02d}/{d:02d}/2024,{rng.normal():.3f}" for m in range(1, 13) for d in (1, 5, 9)]
    path.write_text("sold,y\n" + "\n".join(rows) + "\n")
    res = runner.invoke(app, ["fit", str(path), "--lam", "1e-3"])
    assert res.exit_code == 0, res.output
    line = next(ln for ln in res.stdout.splitlines() if ln.strip().startswith("sold"))
    assert re.search(r"date +4 +dates \(17/05/2024, day first assumed.*--column-types sold=date-mdy", line), line
    res = runner.invoke(app, ["fit", str(path), "--lam", "1e-3", "--column-types", "sold=date-mdy"])
    assert res.exit_code == 0 and "05/17/2024, month first as given" in res.stdout, res.output


def test_skframe_fit_refuses_a_date_column_of_both_orders_in_one_line(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("sold,y\n17/05/2024,1\n05/18/2024,2\n01/02/2024,3\n03/04/2024,4\n")
    res = runner.invoke(app, ["fit", str(path)])
    lines = res.stderr.strip().splitlines()
    assert res.exit_code == 2 and len(lines) == 1 and "written day first ('17/05/2024')" in lines[0], res.output
