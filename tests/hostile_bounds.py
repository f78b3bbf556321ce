"""Hostile files that cost memory or time before any bound (see tests/hostile.py): each maker writes its file into a
folder and returns the path. Small by default; the benchmark (benchmarks/bench_hostile.py, section ``bounds``)
writes them at the sizes that once cost gigabytes."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path

import numpy as np


def wide_cell_csv(folder, rows=9000, chars=50_000, seed=0):
    """A CSV of ``rows`` rows whose category column holds one cell of ``chars`` characters (np.unique on
    fixed-width strings sized every cell as that one: rows x chars x 4 bytes)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=rows)
    cats = rng.choice(["red", "green", "blue"], rows).astype(object)
    cats[rows // 2] = "x" * chars
    path = Path(folder, "wide_cell.csv")
    with open(path, "w") as fh:
        fh.write("x,c,y\n")
        fh.writelines(f"{x[i]:.4f},{cats[i]},{2 * x[i]:.4f}\n" for i in range(rows))
    return path


def wide_text_csv(folder, columns=100_000):
    """A 1-row CSV of ``columns`` text columns and a numeric target."""
    path = Path(folder, "wide_text.csv")
    path.write_text(",".join(f"c{j}" for j in range(columns)) + ",y\n"
                    + ",".join(f"t{j}" for j in range(columns)) + ",1\n")
    return path


def labels_csv(folder, rows=20_000, labels=10_000, seed=0):
    """A CSV whose text target holds up to ``labels`` distinct labels."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(rows, 3))
    lab = rng.integers(0, labels, rows)
    path = Path(folder, "labels.csv")
    with open(path, "w") as fh:
        fh.write("a,b,c,y\n")
        fh.writelines(f"{X[i, 0]:.3f},{X[i, 1]:.3f},{X[i, 2]:.3f},L{lab[i]}\n" for i in range(rows))
    return path


def model_with_extra_arrays(folder, n_arrays=1000, nbytes=1 << 20):
    """A model file (40 rows) whose manifest's ``extra`` refers to ``n_arrays`` more arrays of ``nbytes`` zeros each,
    deflated (each one within the 1 MiB a small entry may inflate to; together ``n_arrays`` x ``nbytes``)."""
    import skframe  # lazy: the makers are also imported by scripts that only write files

    folder = Path(folder)
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 3))
    base = folder / "base.skf"
    skframe.save(skframe.SketchedKernelRidge(sketch="subsample", sketch_size=10, random_state=0).fit(X, X.sum(1)),
                 base)
    with zipfile.ZipFile(base) as zf:
        entries = {info.filename: zf.read(info) for info in zf.infolist()}
    manifest = json.loads(np.load(io.BytesIO(entries.pop("__manifest__.npy"))).tobytes())
    zeros = np.zeros(nbytes // 8)
    digest = hashlib.sha256(zeros.tobytes()).hexdigest()
    names = [f"extra{i}" for i in range(n_arrays)]
    for name in names:
        manifest["arrays"][name] = {"dtype": "<f8", "shape": [zeros.size], "fortran_order": False, "sha256": digest}
    manifest["extra"] = {"__dict__": {name: {"__array__": name} for name in names}}
    npy = io.BytesIO()
    np.lib.format.write_array(npy, zeros)
    out = folder / "extra.skf"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zf:
        buf = io.BytesIO()
        np.lib.format.write_array(buf, np.frombuffer(json.dumps(manifest).encode(), np.uint8))
        zf.writestr("__manifest__.npy", buf.getvalue())
        for name, data in entries.items():
            zf.writestr(name, data)
        for name in names:
            zf.writestr(f"{name}.npy", npy.getvalue(), compress_type=zipfile.ZIP_DEFLATED)
    return out


def _varint(value, width=None):
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        if value or (width is not None and len(out) + 1 < width):
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def parquet_lying_rows(folder, rows=1 << 22, stated=10):
    """A Parquet file of ``rows`` zeros in two int8 columns (one row group) whose footer states ``stated`` rows (its
    FileMetaData.num_rows rewritten in place; the row group keeps its true count)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(folder, "lying.parquet")
    zeros = pa.array(np.zeros(rows, dtype=np.int8))
    pq.write_table(pa.table({"a": zeros, "y": zeros}), path, row_group_size=rows, compression="zstd")
    data = bytearray(path.read_bytes())
    footer_len = int.from_bytes(data[-8:-4], "little")
    start = len(data) - 8 - footer_len
    true = _varint(rows << 1)  # zigzag: a positive i64 is written doubled
    at = data.index(b"\x16" + true, start) + 1  # field 3 (num_rows, i64) follows field 2 (the schema)
    data[at:at + len(true)] = _varint(stated << 1, width=len(true))  # same length: nothing else moves
    path.write_bytes(bytes(data))
    return path


def parquet_dictionary_strings(folder, rows=2500, chars=1 << 20):
    """A Parquet file whose text column holds one ``chars``-character value in every row, dictionary-encoded (a
    small file: the value is stored once; decoded row by row it takes rows x chars bytes)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(folder, "dictionary.parquet")
    column = pa.DictionaryArray.from_arrays(pa.array(np.zeros(rows, dtype=np.int32)), pa.array(["a" * chars]))
    pq.write_table(pa.table({"s": column, "y": pa.array(np.arange(rows, dtype=np.float64))}), path,
                   compression="zstd")
    return path


def arrow_zstd_zeros(folder, rows=1 << 20, batches=1):
    """An Arrow IPC file of ``batches`` record batches of two float64 columns of ``rows`` zeros whose buffers are
    zstd-compressed (a small file that decompresses to 16 x rows x batches bytes)."""
    import pyarrow as pa
    import pyarrow.ipc

    path = Path(folder, "zstd.arrow")
    table = pa.table({"x": pa.array(np.zeros(rows)), "y": pa.array(np.zeros(rows))})
    with pyarrow.ipc.new_file(path, table.schema, options=pyarrow.ipc.IpcWriteOptions(compression="zstd")) as w:
        for _ in range(batches):
            w.write_table(table)
    return path


def gzip_zeros(folder, text_bytes=4 << 20):
    """A gzip CSV of ``0,0`` rows expanding to ``text_bytes`` (about 500 times its size)."""
    import gzip

    path = Path(folder, "zeros.csv.gz")
    path.write_bytes(gzip.compress(b"a,y\n" + b"0,0\n" * ((text_bytes - 4) // 4), compresslevel=9, mtime=0))
    return path
