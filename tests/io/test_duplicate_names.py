"""A table naming two columns alike is refused by every reader in one line (name, positions, fix): matched by
name, one of the two would be lost without a word."""

import numpy as np
import pytest
from typer.testing import CliRunner

from skframe.cli import app
from skframe.exceptions import DataFormatError
from skframe.io import load_dataset
from skframe.io.table import read_numeric_table, read_table
from skframe.preprocessing import TableEncoder

MESSAGE = (r"has several columns named 'a' \(columns 1, 2\); rename them so that each column has its own name "
           r"\(e\.g\. a_2\)")


def _columns(n=60, seed=0):
    """Two columns named ``a``: the second predicts the target, the first is noise."""
    rng = np.random.default_rng(seed)
    noise, signal = rng.normal(size=n), rng.normal(size=n)
    city = rng.choice(["x", "y"], size=n)
    return noise, signal, city, 3.0 * signal + 0.01 * rng.normal(size=n)


def _csv(tmp_path, text=False):
    noise, signal, city, y = _columns()
    path = tmp_path / "dup.csv"
    head = "a,a,city,y" if text else "a,a,y"
    rows = [f"{noise[i]:.4f},{signal[i]:.4f}," + (f"{city[i]}," if text else "") + f"{y[i]:.4f}"
            for i in range(len(y))]
    path.write_text(head + "\n" + "\n".join(rows) + "\n")
    return path


def _arrow(tmp_path, kind):
    pa = pytest.importorskip("pyarrow")
    noise, signal, _, y = _columns()
    table = pa.Table.from_arrays([pa.array(noise), pa.array(signal), pa.array(y)], names=["a", "a", "y"])
    path = tmp_path / f"dup.{kind}"
    if kind == "parquet":
        import pyarrow.parquet as pq

        pq.write_table(table, path)
    else:
        import pyarrow.feather as feather

        feather.write_feather(table, path)
    return path


@pytest.mark.parametrize("reader", ["read_table", "read_numeric_table", "load_dataset"])
def test_text_readers_refuse_two_columns_of_one_name(tmp_path, reader):
    path = _csv(tmp_path)
    read = {"read_table": read_table, "read_numeric_table": read_numeric_table, "load_dataset": load_dataset}[reader]
    with pytest.raises(DataFormatError, match="dup.csv " + MESSAGE):
        read(path)


@pytest.mark.parametrize("kind", ["parquet", "feather"])
def test_parquet_and_arrow_readers_refuse_two_columns_of_one_name(tmp_path, kind):
    path = _arrow(tmp_path, kind)
    with pytest.raises(DataFormatError, match=f"dup.{kind} " + MESSAGE):
        read_table(path)
    with pytest.raises(DataFormatError, match=MESSAGE):
        read_numeric_table(path)


def test_a_data_frame_with_two_columns_of_one_name_is_refused():
    pd = pytest.importorskip("pandas")
    noise, signal, _, _ = _columns()
    with pytest.raises(DataFormatError, match="the table " + MESSAGE):
        TableEncoder().fit(pd.DataFrame(np.column_stack([noise, signal]), columns=["a", "a"]))


@pytest.mark.parametrize("kind", ["csv", "csv with text", "parquet", "feather"])
def test_skframe_fit_refuses_them_in_one_line(tmp_path, kind):
    path = _arrow(tmp_path, kind) if kind in ("parquet", "feather") else _csv(tmp_path, text=kind != "csv")
    res = CliRunner().invoke(app, ["fit", str(path), "--model-out", str(tmp_path / "m.skf")])
    lines = res.stderr.strip().splitlines()
    assert res.exit_code == 2 and len(lines) == 1, res.output
    assert lines[0].startswith(f"Error: {path.name} has several columns named 'a' (columns 1, 2)"), lines
    assert not (tmp_path / "m.skf").exists()
