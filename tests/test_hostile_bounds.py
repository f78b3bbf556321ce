"""Bounds before work: files that once cost gigabytes or minutes before any check are refused (or read) within a
bound, each in one line naming the value and the fix. Small variants of each (tests/hostile_bounds.py), limits
lowered through their environment variables; the full sizes are measured by benchmarks/bench_hostile.py (section
``bounds``)."""

import os
import subprocess
import sys
import threading
import tracemalloc
from datetime import datetime

import numpy as np
import pytest

from skframe.exceptions import DataFormatError, InvalidInputError, PersistenceError
from tests import hostile, hostile_bounds

hostile.WARM = True  # completed commands fork from a warm interpreter (tests/warm_runs.py)

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _peak(fn):
    tracemalloc.start()
    try:
        result = fn()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# ------------------------------------------------------------------------------------------- wide cells, wide tables
def test_one_long_category_cell_makes_no_fixed_width_copy(tmp_path):
    from skframe.io.table import read_table
    from skframe.preprocessing import TableEncoder
    from skframe.preprocessing.targets import check_target

    table = read_table(hostile_bounds.wide_cell_csv(tmp_path, rows=2000, chars=50_000))

    def typed():
        check_target(table.names, table.columns, [2], chosen="--target")
        return TableEncoder().fit(table).transform(table)

    X, peak = _peak(typed)  # a fixed-width copy: 2000 x 50 000 x 4 bytes = 400 MB
    assert X.shape == (2000, 6) and peak < 50 << 20, peak


def test_distinct_text_sorts_as_numpy_does():
    from skframe.preprocessing.cells import distinct_text

    rng = np.random.default_rng(0)
    cells = np.array(["".join(rng.choice(list("abAB é1"), rng.integers(0, 5))) for _ in range(300)], dtype=object)
    uniques, inverse = distinct_text(cells)
    expected, expected_inverse = np.unique(cells.astype(str), return_inverse=True)
    assert uniques == expected.tolist() and np.array_equal(inverse, expected_inverse.ravel())


def test_a_table_of_too_many_columns_is_refused_before_typing(tmp_path, monkeypatch):
    from skframe.io.table import read_table
    from skframe.preprocessing import TableEncoder
    from skframe.preprocessing.targets import check_target

    table = read_table(hostile_bounds.wide_text_csv(tmp_path, columns=150))
    monkeypatch.setenv("SKFRAME_MAX_TABLE_COLUMNS", "100")
    with pytest.raises(InvalidInputError, match="151 columns to type one by one, more than the limit of 100"
                                                ".*SKFRAME_MAX_TABLE_COLUMNS=151.*--drop"):
        TableEncoder().fit(table)
    # the target is judged on its own column (and a few others to suggest), whatever the width
    assert check_target(table.names, table.columns, [150])["names"] == ["y"]
    monkeypatch.setenv("SKFRAME_MAX_TABLE_COLUMNS", "151")
    assert TableEncoder().fit(table).transform(table).shape == (1, 151)


def test_every_date_format_fits_its_shape():
    """The regular expression tried before strptime admits every cell strptime reads (else a date is lost)."""
    from skframe.preprocessing import dates

    for fmt in dates.DATE_FORMATS:
        for time in dates.TIMES:
            for day in (datetime(2024, 5, 7, 3, 4, 5), datetime(1999, 12, 31, 23, 59, 59)):
                cell = day.strftime(fmt + time)
                for variant in (cell, cell.upper(), cell.lower(), cell.replace("05", "5").replace("07", "7")):
                    try:
                        datetime.strptime(variant, fmt + time)
                    except ValueError:
                        continue
                    assert dates._shape(fmt).fullmatch(variant), (fmt, variant)
                    assert dates.date_format([variant]) is not None, variant
    assert dates.date_format(["t12345", "2024/05/07"]) is None


# ------------------------------------------------------------------------------------------------------------ FIFOs
@pytest.mark.parametrize("name", ["pipe", "pipe.csv"])
def test_a_fifo_is_refused_by_its_type_never_opened(tmp_path, name):
    from skframe.io import load_dataset
    from skframe.io.table import read_table, read_table_header

    fifo = tmp_path / name
    os.mkfifo(fifo)
    errors = []

    def read_all():
        for read in (load_dataset, read_table, read_table_header):
            try:
                read(fifo)
            except InvalidInputError as exc:
                errors.append(str(exc))

    worker = threading.Thread(target=read_all, daemon=True)
    worker.start()
    worker.join(30)
    if worker.is_alive():  # unblock the reader stuck in open(): a writer opens and closes the FIFO
        with open(fifo, "wb"):
            pass
        pytest.fail("a reader opened the FIFO")
    assert len(errors) == 3 and all("is a FIFO (named pipe), not a regular file" in e for e in errors), errors


def test_skframe_fit_test_fifo_is_one_line(tmp_path):
    np.savetxt(tmp_path / "d.csv", np.random.default_rng(0).normal(size=(40, 3)), delimiter=",")
    os.mkfifo(tmp_path / "pipe")
    code, _, err, _ = hostile.run_skframe(["fit", "d.csv", "--test", "pipe", "--sketch-size", "10"], tmp_path,
                                          timeout=60)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "FIFO" in lines[0] and "regular file" in lines[0], err[-2000:]


# ------------------------------------------------------------------------------------------------------------ labels
def test_class_count_is_bounded_before_the_targets_are_made(monkeypatch):
    from skframe.models import SketchedKernelClassifier

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(400, 2)), np.array([f"L{i}" for i in rng.permutation(400) % 200], dtype=object)
    monkeypatch.setenv("SKFRAME_MAX_CLASSES", "100")
    with pytest.raises(InvalidInputError, match=r"y holds 200 classes, more than the limit of 100 for "
                                                r"max_classes=None .*400 x 200 x 8 .*max_classes=200"):
        SketchedKernelClassifier(sketch_size=10).fit(X, y)
    with pytest.raises(InvalidInputError, match="y holds 200 classes, more than max_classes=150"):
        SketchedKernelClassifier(sketch_size=10, max_classes=150).fit(X, y)


def test_an_explicit_max_classes_is_bounded_by_the_memory(monkeypatch):
    from skframe.models import SketchedKernelClassifier
    from skframe.models.machine import _labels

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(600, 2)), np.array([f"L{i}" for i in rng.permutation(600) % 300], dtype=object)
    monkeypatch.setattr(_labels, "_memory_room", lambda: (4 << 20, "half the memory available (a test)"))
    with pytest.raises(InvalidInputError, match=r"y holds 300 classes \(max_classes=10000\): .*6 x 600 x 300 x 8 = "
                                                r"8.64 MB\), more than 4.19 MB, half the memory available .*fewer "
                                                r"classes"):
        SketchedKernelClassifier(sketch_size=10, max_classes=10000).fit(X, y)
    assert _labels.class_work_bytes(600, 300) == 6 * 600 * 300 * 8


def test_the_memory_room_for_classes_honours_an_address_space_limit():
    from skframe.models.machine import _labels

    room, why = _labels._memory_room()
    assert room > 0 and ("available" in why or "address-space" in why)
    script = ("import resource\nfrom skframe.models.machine import _labels\n"
              "size = [int(x.split()[1]) * 1024 for x in open('/proc/self/status') if x.startswith('VmSize')][0]\n"
              "resource.setrlimit(resource.RLIMIT_AS, (size + (300 << 20), resource.RLIM_INFINITY))\n"
              "print(*_labels._memory_room(), sep='|')")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    room, why = proc.stdout.strip().split("|")
    assert 0 < int(room) <= 300 << 20 and "address-space limit" in why, proc.stdout + proc.stderr


# ------------------------------------------------------------------------------------------------------- model files
def test_model_extra_arrays_are_charged_to_the_total(tmp_path, monkeypatch):
    import skframe

    path = hostile_bounds.model_with_extra_arrays(tmp_path, n_arrays=40)
    with pytest.raises(PersistenceError, match=r"its 40 compressed entries together declare 41948\d+ bytes from "
                                               r"\d+ compressed, so the model file expands \d+ times, more than the "
                                               r"limit of 64.*SKFRAME_MAX_EXPANSION"):
        skframe.load(path)
    monkeypatch.setenv("SKFRAME_MAX_EXPANSION", "100000")  # raised: the same file loads
    assert skframe.load(path).predict(np.zeros((2, 3))).shape == (2,)


# --------------------------------------------------------------------------------------------------- Parquet, Arrow
def test_parquet_rows_are_counted_by_row_group_not_by_the_footer(tmp_path, monkeypatch):
    pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    from skframe.io.table import read_table

    path = hostile_bounds.parquet_lying_rows(tmp_path, rows=1 << 20, stated=10)
    assert pq.ParquetFile(path).metadata.num_rows == 10  # the footer lies
    assert read_table(path).n_rows == 1 << 20  # every row read, never the footer's 10
    monkeypatch.setenv("SKFRAME_MAX_DECOMPRESSED", "1MiB")
    with pytest.raises(DataFormatError, match="lying.parquet .* decompresses to 16777216 bytes, more than the limit "
                                              "of 1048576.*SKFRAME_MAX_DECOMPRESSED=16777216"):
        read_table(path)


def _row_groups_file(tmp_path, groups=2, rows=1 << 16):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(0)
    path = tmp_path / "groups.parquet"
    table = pa.table({"a": rng.normal(size=groups * rows), "y": rng.normal(size=groups * rows)})
    pq.write_table(table, path, row_group_size=rows)
    return path


def test_each_parquet_row_group_is_charged_before_it_is_decoded(tmp_path, monkeypatch):
    pq = pytest.importorskip("pyarrow.parquet")
    from skframe.io.table import read_table

    path = _row_groups_file(tmp_path)  # two groups of 2**16 rows x 2 float64 columns: 1 MiB each
    decoded = []
    original = pq.ParquetFile.read_row_group
    monkeypatch.setattr(pq.ParquetFile, "read_row_group",
                        lambda self, i, *a, **k: decoded.append(i) or original(self, i, *a, **k))
    assert read_table(path).n_rows == 1 << 17 and decoded == [0, 1]
    decoded.clear()
    from skframe.io.arrow_bounds import read_row_group

    charged = []

    def charge(total):  # the size policy: 1.5 MiB in all
        charged.append(total)
        if total > 1536 << 10:
            raise DataFormatError(f"{total} bytes")

    pf = pq.ParquetFile(path)
    first = read_row_group(pf, 0, 0, charge, path)
    with pytest.raises(DataFormatError, match="bytes"):
        read_row_group(pf, 1, first.nbytes, charge, path)
    assert decoded == [0] and len(charged) == 2  # the second group refused from its metadata, never decoded
    assert charged[0] >= 1 << 20 and charged[1] >= first.nbytes + (1 << 20)  # at least its rows as float64


def test_a_parquet_row_group_decoding_beyond_its_claim_is_refused(tmp_path, monkeypatch):
    pytest.importorskip("pyarrow.parquet")
    from skframe.io import arrow_bounds
    from skframe.io.table import read_table

    path = _row_groups_file(tmp_path, groups=1)
    monkeypatch.setattr(arrow_bounds, "row_group_claim", lambda group, n_columns: (10, 160))  # a lying group
    with pytest.raises(DataFormatError, match=r"row group 0 declares 10 rows and 160 bytes but decodes to 65536 "
                                              r"rows and \d+ bytes; its metadata is wrong"):
        read_table(path)
    assert not arrow_bounds.decoded_beyond_claim(2 * 1000 + (1 << 20), 1000)  # the allowance: 2 x claim + 1 MiB
    assert arrow_bounds.decoded_beyond_claim(2 * 1000 + (1 << 20) + 1, 1000)


def test_parquet_dictionary_text_is_held_once(tmp_path):
    pytest.importorskip("pyarrow")
    from skframe.io.table import read_table

    path = hostile_bounds.parquet_dictionary_strings(tmp_path, rows=200, chars=1 << 20)
    table, peak = _peak(lambda: read_table(path))  # decoded row by row: 200 x 1 MiB
    cells = table.column("s")
    assert cells.shape == (200,) and cells[0] is cells[199] and len(cells[0]) == 1 << 20
    assert peak < 40 << 20, peak


def test_arrow_compressed_buffers_are_checked_before_decompression(tmp_path, monkeypatch):
    pa = pytest.importorskip("pyarrow")
    from skframe.io.arrow_bounds import ipc_declared
    from skframe.io.table import read_table

    path = hostile_bounds.arrow_zstd_zeros(tmp_path, rows=1 << 18)
    assert os.path.getsize(path) < 10_000
    with pa.memory_map(str(path)) as src:
        assert ipc_declared(src) == 16 << 18  # two float64 columns, from the buffers' stated lengths
    monkeypatch.setenv("SKFRAME_MAX_DECOMPRESSED", "1MiB")
    before = pa.total_allocated_bytes()
    with pytest.raises(DataFormatError, match="zstd.arrow .* decompresses to 4194304 bytes, more than the limit"):
        read_table(path)
    assert pa.total_allocated_bytes() - before < 1 << 20


# -------------------------------------------------------------------------------------------------- compressed text
def test_gzip_text_allowance_is_charged_at_the_readers_rate(tmp_path):
    from skframe.io import load_dataset
    from skframe.io.compressed import READ_RATE

    path = hostile_bounds.gzip_zeros(tmp_path, text_bytes=4 << 20)  # ~500 times its size, under the old 64 MiB
    with pytest.raises(DataFormatError, match=rf"zeros.csv.gz \(\d+ bytes compressed\) expands to more than \d+ "
                                              rf"bytes.*1 MiB of text for a small file.*{READ_RATE} bytes of memory"
                                              r".*SKFRAME_MAX_EXPANSION="):
        load_dataset(path)
    small = hostile_bounds.gzip_zeros(tmp_path, text_bytes=512 << 10)
    assert load_dataset(small).n_samples == (512 << 10) // 4 - 1
