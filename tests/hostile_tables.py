"""Hostile tables: compressed and Parquet files that claim far more than they hold (see tests/hostile.py).

Each maker writes its file into a folder and returns the command-line arguments that exercise it.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np


def gzip_bomb(folder, nbytes=2 << 30, member=64 << 20):
    """A gzip CSV of several members that expands to ``nbytes`` of ``0,0`` rows (2 GiB: a ~2 MB file).

    Each member says its own size in its trailer (64 MiB), so only counting the whole stream finds the total.
    """
    block = gzip.compress(b"a,y\n" + b"0,0\n" * ((member - 4) // 4), compresslevel=9, mtime=0)
    path = Path(folder, "bomb.csv.gz")
    with open(path, "wb") as fh:
        for _ in range(max(1, nbytes // member)):
            fh.write(block)
    return ["fit", path, "--sketch", "none"]


def parquet_bomb(folder, rows=1 << 28, group=1 << 24):
    """A Parquet file of ``rows`` zeros in one int8 column and a float column (RLE: a small file) whose table would
    take rows x 2 x 8 bytes (4 GiB for 2**28 rows)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(folder, "bomb.parquet")
    chunk = pa.table({"a": pa.array(np.zeros(group, dtype=np.int8)), "y": pa.array(np.zeros(group, dtype=np.int8))})
    with pq.ParquetWriter(path, chunk.schema, compression="zstd") as writer:
        for _ in range(rows // group):
            writer.write_table(chunk, row_group_size=group)
    return ["fit", path, "--sketch", "none"]
