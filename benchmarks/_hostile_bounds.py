"""Section ``bounds`` of bench_hostile.py: files that once cost memory or time before any bound, at the sizes that did
(tests/hostile_bounds.py makes them; tests/test_hostile_bounds.py holds small variants).

Each row: ``skframe`` on the file in a child process capped at the loaded interpreter + 2 GiB of address space
(RLIMIT_AS, tests/hostile.py): exit status, the error line, the command's time and peak resident memory above the loaded
interpreter. Cases: one 50 000-character cell in a category column; 1-row CSVs of 1e5 and 1e6 text columns; a text
target of 1e4 labels (with and without ``--max-classes 10000``, which the per-class arrays' memory bounds); FIFOs
without a writer as ``--test``, ``predict`` and ``evaluate`` data; a model file whose ``extra`` refers to 1 000 deflated
1 MiB arrays; a Parquet file of dictionary-encoded 1 MiB strings; a Parquet footer stating 10 rows over row groups of
5e7; an Arrow IPC file of zstd buffers decompressing to 1.6 GB; a gzip CSV expanding to 60 MiB.
"""

import os
import sys
from pathlib import Path

import numpy as np

from tests import hostile, hostile_bounds

#: address space a command may take above its loaded interpreter
CAP = 2 << 30


def _row(name, args, folder, timeout=600, **extra):
    code, _, err, info = hostile.run_skframe(args, folder, extra_bytes=CAP, timeout=timeout)
    lines = err.strip().splitlines()
    row = {"case": name, "returncode": code, "stderr_lines": len(lines), "error": lines[-1][:400] if lines else "",
           "traceback": "Traceback" in err, "seconds": round(info.get("seconds", float("nan")), 3),
           "rss_above_mb": round(info.get("rss_above_bytes", 0) / 2**20, 1), **extra}
    print(row, file=sys.stderr)
    return row


def bounds(folder):
    folder = Path(folder, "bounds")
    folder.mkdir()
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    np.savetxt(folder / "small.csv", np.c_[X, X.sum(1)], delimiter=",", header="a,b,c,y", comments="")
    code, _, err, _ = hostile.run_skframe(["fit", "small.csv", "--sketch-size", "20", "--model-out", "m.skf"], folder,
                                          extra_bytes=0)
    assert code == 0, err
    cell = hostile_bounds.wide_cell_csv(folder, rows=18_000)
    rows = [_row("a 50 000-character cell in a category column", ["fit", cell.name, "--target", "y"], folder,
                 file_bytes=os.path.getsize(cell))]
    for columns in (10**5, 10**6):
        wide = hostile_bounds.wide_text_csv(folder, columns=columns)
        rows.append(_row(f"1-row CSV of {columns} text columns", ["fit", wide.name], folder))
    labels = hostile_bounds.labels_csv(folder)
    rows.append(_row("text target of 1e4 labels, --task classification",
                     ["fit", labels.name, "--task", "classification"], folder))
    rows.append(_row("text target of 1e4 labels, --task classification --max-classes 10000",
                     ["fit", labels.name, "--task", "classification", "--max-classes", "10000"], folder))
    os.mkfifo(folder / "pipe")
    for name, args in (("--test FIFO", ["fit", "small.csv", "--test", "pipe"]),
                       ("predict FIFO", ["predict", "m.skf", "pipe"]),
                       ("evaluate FIFO", ["evaluate", "m.skf", "pipe"])):
        rows.append(_row(f"{name} without a writer", args, folder, timeout=120))
    extra = hostile_bounds.model_with_extra_arrays(folder)
    rows.append(_row("model file, extra -> 1 000 deflated 1 MiB arrays", ["predict", extra.name, "small.csv",
                                                                         "--targets", "1"], folder,
                     file_bytes=os.path.getsize(extra)))
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        pyarrow = None
    if pyarrow is not None:
        dictionary = hostile_bounds.parquet_dictionary_strings(folder)
        rows.append(_row("Parquet of dictionary-encoded 1 MiB strings (2 500 rows)",
                         ["fit", dictionary.name, "--target", "y"], folder, file_bytes=os.path.getsize(dictionary)))
        lying = hostile_bounds.parquet_lying_rows(folder, rows=5 * 10**7)
        rows.append(_row("Parquet footer stating 10 rows over a row group of 5e7", ["fit", lying.name], folder,
                         file_bytes=os.path.getsize(lying)))
        arrow = hostile_bounds.arrow_zstd_zeros(folder, rows=1 << 20, batches=100)
        rows.append(_row("Arrow IPC, zstd buffers decompressing to 1.6 GB", ["fit", arrow.name], folder,
                         file_bytes=os.path.getsize(arrow)))
    gz = hostile_bounds.gzip_zeros(folder, text_bytes=60 << 20)
    rows.append(_row("gzip CSV expanding to 60 MiB of 0,0 rows", ["fit", gz.name], folder,
                     file_bytes=os.path.getsize(gz)))
    return rows


SECTIONS = {"bounds": bounds}
