"""Numbers written as text: whole numbers beyond 2**53 in CSV and text tables are refused as Parquet's are, never
rounded; memory sizes are whole numbers of bytes or carry a unit, never a fraction read as one byte. Fixed seeds.
"""

from __future__ import annotations

import numpy as np
import pytest

from skframe.exceptions import DataFormatError, InvalidParameterError

BIG = 2**60 + 1  # float64 would round it to 2**60


def _write(path, header, rows):
    path.write_text(header + "\n" + "\n".join(",".join(map(str, r)) for r in rows) + "\n")
    return path


def _rows(n=40, seed=0, big_at=None, text=False):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        ident = BIG + i if big_at is None or i == big_at else i
        row = [ident, f"{rng.normal():.4f}"]
        if text:
            row.append("ab"[i % 2])
        out.append([*row, f"{rng.normal():.4f}"])
    return out


def test_inexact_integer_tells_whole_numbers_from_floats():
    from skframe.io._common import inexact_integer

    assert inexact_integer(str(2**53 + 1)) == 2**53 + 1
    assert inexact_integer(str(-(2**53) - 1)) == -(2**53) - 1
    assert inexact_integer(str(2**53)) is None  # held exactly
    for float_text in ("1e20", "1152921504606846977.0", "3.14159265358979323846264338", "1.5e300", "-2e17"):
        assert inexact_integer(float_text) is None, float_text


def test_numeric_csv_reader_refuses_an_integer_beyond_2_53(tmp_path):
    from skframe.io.csv import read_csv

    path = _write(tmp_path / "n.csv", "a,y", [[1.5, 2.0], [2.5, BIG]])
    with pytest.raises(DataFormatError) as info:
        read_csv(path)
    text = str(info.value)
    assert "line 3" in text and "'y'" in text and str(BIG) in text and "2**53" in text, text
    assert "--column-types y=categorical" in text and "--drop y" in text, text


def test_decimals_and_exponents_beyond_2_53_are_floats(tmp_path):
    from skframe.io.csv import read_csv

    path = _write(tmp_path / "f.csv", "a,y", [[1.5, "1e20"], [2.5, f"{BIG}.0"], [3.5, "123456789012345678.25"]])
    X, Y, *_ = read_csv(path)
    assert Y[:, 0].tolist() == [1e20, float(BIG), 123456789012345678.25]


def test_text_table_column_of_big_identifiers_is_refused_in_one_line(tmp_path):
    from skframe.preprocessing import TableEncoder

    rows = _rows(text=True)
    table = {"id": np.array([str(r[0]) for r in rows], dtype=object), "a": np.array([r[1] for r in rows], object),
             "c": np.array([r[2] for r in rows], dtype=object)}
    with pytest.raises(DataFormatError) as info:
        TableEncoder().fit(table)
    text = str(info.value)
    assert "column 'id'" in text and str(BIG) in text and "--column-types id=categorical" in text, text
    encoded = TableEncoder(column_types={"id": "categorical"}).fit(table)  # the fix the line names works
    assert encoded is not None


def test_one_big_integer_among_small_ones_is_refused(tmp_path):
    from skframe.preprocessing.cells import parse_numbers, text_cells

    cells = np.array(["1", "2", str(-BIG), "4"], dtype=object)
    text, missing = text_cells(cells)
    with pytest.raises(DataFormatError, match=str(-BIG)):
        parse_numbers(text, missing, name="code", linenos=np.array([2, 3, 4, 5]))
    values, bad = parse_numbers(*text_cells(np.array(["1", str(2**53), "1e300"], dtype=object)))
    assert values.tolist() == [1.0, float(2**53), 1e300] and not bad.any()


@pytest.mark.parametrize("text", [False, True])
def test_the_command_line_refuses_big_integers_in_a_csv_in_one_line(tmp_path, text):
    from typer.testing import CliRunner

    from skframe.cli import app

    header = "id,a,c,y" if text else "id,a,y"
    path = _write(tmp_path / "t.csv", header, _rows(text=text))
    result = CliRunner().invoke(app, ["fit", str(path), "--model-out", str(tmp_path / "m.skf")])
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code != 0 and len(lines) == 1 and lines[0].startswith("Error: "), result.output
    assert "'id'" in lines[0] and str(BIG) in lines[0] and "2**53" in lines[0], lines[0]
    assert not (tmp_path / "m.skf").exists()
    fixed = CliRunner().invoke(app, ["fit", str(path), "--column-types", "id=categorical", "--model-out",
                                     str(tmp_path / "m.skf")])
    assert fixed.exit_code == 0, fixed.output


# ------------------------------------------------------------------ memory sizes
@pytest.mark.parametrize("value", [1.5, "1.5", 0.5, "0.3B", "2G", "1500M", "1.5 G", 0, -1, "inf"])
def test_memory_sizes_refuse_fractions_of_bytes_and_one_letter_units(value):
    from skframe.options import parse_bytes

    with pytest.raises(InvalidParameterError) as info:
        parse_bytes(value)
    assert repr(value) in str(info.value) and "GB" in str(info.value), str(info.value)


@pytest.mark.parametrize("value, expected", [("1.5GB", 1_500_000_000), ("1500MB", 1_500_000_000),
                                             ("1.5GiB", 3 * 2**29), ("2e9", 2 * 10**9), (2 * 10**9, 2 * 10**9),
                                             (2e9, 2 * 10**9), ("512 MiB", 2**29), ("1000", 1000)])
def test_memory_sizes_with_units_or_whole_bytes_are_read(value, expected):
    from skframe.options import parse_bytes

    assert parse_bytes(value) == expected


def test_a_fractional_memory_budget_is_one_line_on_the_command_line(tmp_path):
    from typer.testing import CliRunner

    from skframe.cli import app

    rng = np.random.default_rng(0)
    path = _write(tmp_path / "d.csv", "a,y", [[f"{v:.4f}", f"{2 * v:.4f}"] for v in rng.normal(size=60)])
    result = CliRunner().invoke(app, ["fit", str(path), "--memory-budget", "1.5", "--model-out",
                                      str(tmp_path / "m.skf")])
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code != 0 and len(lines) == 1, result.output
    assert "'1.5'" in lines[0] and "1.5GB" in lines[0], lines[0]


def test_a_fractional_memory_budget_is_refused_by_the_python_option():
    from skframe.models import SketchedKernelRidge

    X = np.random.default_rng(0).normal(size=(50, 2))
    with pytest.raises(InvalidParameterError, match="1.5GB"):
        SketchedKernelRidge(memory_budget="1.5", sketch_size=10, random_state=0).fit(X, X[:, 0])
    with pytest.raises(InvalidParameterError, match="memory_budget=1.5"):  # a float is no count of bytes
        SketchedKernelRidge(memory_budget=1.5, sketch_size=10, random_state=0).fit(X, X[:, 0])


def test_libsvm_labels_and_values_beyond_2_53_are_refused(tmp_path):
    from skframe.io.libsvm import read_libsvm

    (tmp_path / "l.svm").write_text(f"{BIG} 1:0.5\n1 1:0.25\n")
    with pytest.raises(DataFormatError, match=rf"l.svm, line 1 \(label\): the integer {BIG} is beyond 2\*\*53"):
        read_libsvm(tmp_path / "l.svm")
    (tmp_path / "v.svm").write_text(f"1 1:0.5\n0 1:{BIG}\n")
    with pytest.raises(DataFormatError, match=rf"v.svm, line 2: the integer {BIG} .*keep codes or identifiers"):
        read_libsvm(tmp_path / "v.svm")
    (tmp_path / "f.svm").write_text("1e20 1:1e20\n1 1:0.25\n")  # floats as written: read
    X, y = read_libsvm(tmp_path / "f.svm")[:2]
    assert float(np.ravel(y)[0]) == 1e20 and X.toarray()[0, 0] == 1e20


def test_arff_nominal_big_integers_stay_categories(tmp_path):
    from skframe.io.arff import read_arff

    (tmp_path / "a.arff").write_text(f"@relation r\n@attribute id {{{BIG},{BIG + 1}}}\n@attribute y numeric\n@data\n"
                                     f"{BIG},1.0\n{BIG + 1},2.0\n")
    X = read_arff(tmp_path / "a.arff")[0]
    assert np.asarray(X.toarray() if hasattr(X, "toarray") else X)[:, 0].tolist() == [0.0, 1.0]  # coded by position
