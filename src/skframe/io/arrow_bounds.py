"""What a Parquet or Arrow file will take once decoded, told from its own metadata before anything is decoded.

* Parquet: rows are counted row group by row group (each row group's ``num_rows`` and its columns' value counts,
  never the footer's total alone, which a file may state falsely), and their uncompressed sizes summed
  (:func:`parquet_declared`); text columns are read as dictionaries, so that a value repeated in every row is
  held once (:func:`parquet_text_columns`, :func:`dictionary_cells`).
* Arrow IPC (file or stream): every message of the file is walked by its metadata (the flatbuffer of each record
  batch and dictionary batch) without decoding it; a buffer compressed with zstd or lz4 states its decompressed
  length in its first eight bytes, which are summed with the other buffers' lengths (:func:`ipc_declared`). The
  total is checked against the size policy before the first buffer is decompressed.
"""

from __future__ import annotations

import os
import struct

import numpy as np

from skframe.exceptions import DataFormatError
from skframe.io._common import EXACT_INTEGERS, name_of

__all__ = ["check_exact_integers", "parquet_declared", "row_group_declared", "row_group_claim",
           "decoded_beyond_claim", "read_row_group", "parquet_text_columns", "ipc_declared", "dictionary_cells"]

_RECORD_BATCH, _DICTIONARY_BATCH = 3, 2


def row_group_declared(group):
    """``(rows, uncompressed_bytes)`` one Parquet row group declares (pyarrow ``RowGroupMetaData``): the larger of
    its ``num_rows`` and its columns' value counts, and the larger of its total size and its columns' uncompressed
    sizes summed."""
    values = [group.column(j).num_values for j in range(group.num_columns)]
    rows = max([int(group.num_rows), *map(int, values)])
    size = max(int(group.total_byte_size),
               sum(int(group.column(j).total_uncompressed_size) for j in range(group.num_columns)))
    return rows, size


def row_group_claim(group, n_columns):
    """The bytes a row group is charged before it is decoded: its uncompressed size, or its rows as float64
    columns (what a table of numbers becomes), whichever is larger (run-length and dictionary encodings make the
    first smaller than the decoded values)."""
    rows, size = row_group_declared(group)
    return rows, max(size, rows * int(n_columns) * 8)


def decoded_beyond_claim(decoded_bytes, claim):
    """Whether a decoded row group took more than its claim allows: twice the claim plus 1 MiB (Arrow's validity
    bitmaps and offsets, wider types than Parquet's physical ones), beyond which the metadata lied."""
    return decoded_bytes > 2 * claim + (1 << 20)


def read_row_group(pf, i, decoded, charge, path):
    """Row group ``i`` of the ``pyarrow.parquet.ParquetFile`` ``pf``, charged before it is decoded: ``charge(total)``
    (which raises beyond the size policy) gets the ``decoded`` bytes of the groups before it plus this group's
    :func:`row_group_claim`; after decoding, a group of more rows than it declares, or of more bytes than its claim
    allows (:func:`decoded_beyond_claim`), is refused with one :class:`~skframe.exceptions.DataFormatError`."""
    meta = pf.metadata
    rows, claim = row_group_claim(meta.row_group(i), meta.num_columns)
    charge(decoded + claim)
    part = pf.read_row_group(i)
    if part.num_rows > rows or decoded_beyond_claim(part.nbytes, claim):
        raise DataFormatError(
            f"{os.path.basename(str(path))}: row group {i} declares {rows} rows and {claim} bytes but decodes to "
            f"{part.num_rows} rows and {part.nbytes} bytes; its metadata is wrong: write the file again (e.g. with "
            "pyarrow or pandas)")
    return part


def parquet_declared(meta):
    """``(rows, uncompressed_bytes)`` a Parquet file's row groups declare (pyarrow ``FileMetaData``): the rows of
    each row group (:func:`row_group_declared`) and their uncompressed sizes, summed."""
    rows = size = 0
    for i in range(meta.num_row_groups):
        r, b = row_group_declared(meta.row_group(i))
        rows, size = rows + r, size + b
    return rows, size


def parquet_text_columns(schema):
    """Names of the text and binary columns of an Arrow schema: read as dictionaries (a repeated value once)."""
    import pyarrow as pa  # lazy: optional (the parquet extra)

    return [f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)
            or pa.types.is_binary(f.type) or pa.types.is_large_binary(f.type)]


def dictionary_cells(chunked):
    """The cells of a dictionary-encoded column (pyarrow ChunkedArray) as an object array of text (None where
    missing), each distinct value one Python string shared by its rows (never one copy per row)."""
    parts = []
    for chunk in chunked.chunks:
        values = np.array([None] + [None if v is None else str(v) for v in chunk.dictionary.to_pylist()],
                          dtype=object)
        codes = chunk.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64) + 1
        parts.append(values[codes])
    return np.concatenate(parts) if parts else np.zeros(0, dtype=object)


# ---------------------------------------------------------------------------------------------- Arrow IPC metadata
def _u32(buf, pos):
    return struct.unpack_from("<I", buf, pos)[0]


def _table_field(buf, table, index):
    """The position of field ``index`` of the flatbuffer table at ``table``, or None when absent."""
    vtable = table - struct.unpack_from("<i", buf, table)[0]
    vt_size = struct.unpack_from("<H", buf, vtable)[0]
    slot = 4 + 2 * index
    if slot + 2 > vt_size:
        return None
    offset = struct.unpack_from("<H", buf, vtable + slot)[0]
    return table + offset if offset else None


def _ref(buf, pos):
    return pos + _u32(buf, pos)


def _batch_bytes(buf, batch, body):
    """Bytes the buffers of one RecordBatch table take decoded: a compressed buffer's stated length, else its own."""
    buffers, compressed = _table_field(buf, batch, 2), _table_field(buf, batch, 3) is not None
    if buffers is None:
        return 0
    vec = _ref(buf, buffers)
    total = 0
    for k in range(_u32(buf, vec)):
        offset, length = struct.unpack_from("<qq", buf, vec + 4 + 16 * k)
        if compressed and length >= 8:
            stated = struct.unpack_from("<q", body, offset)[0]
            total += length - 8 if stated == -1 else stated
        else:
            total += length
    return total


def ipc_declared(source):
    """Bytes the record batches and dictionaries of an Arrow IPC file or stream take decoded, from their metadata
    (see the module docstring); ``source`` is a pyarrow readable file (a memory map), read from its start.

    Raises pyarrow's error for a message that cannot be read (the caller turns it into one line)."""
    import pyarrow as pa  # lazy: optional (the parquet extra)

    head = source.read(8)
    if not head.startswith(b"ARROW1"):
        source.seek(0)
    reader, total = pa.ipc.MessageReader.open_stream(source), 0
    while True:
        try:
            message = reader.read_next_message()
        except StopIteration:
            return total
        if message.type not in ("record batch", "dictionary batch"):
            continue
        buf, body = memoryview(message.metadata), memoryview(message.body) if message.body is not None else b""
        header = _table_field(buf, _ref(buf, 0), 2)
        if header is None:
            continue
        table = _ref(buf, header)
        if message.type == "dictionary batch":
            data = _table_field(buf, table, 1)
            if data is None:
                continue
            table = _ref(buf, data)
        total += _batch_bytes(buf, table, body)


def check_exact_integers(chunked, path, name):
    """Refuse the integer column ``name`` of a Parquet or Arrow file (a pyarrow ChunkedArray) when it holds a value
    float64 cannot hold exactly (beyond +-2**53): such a value is never rounded silently."""
    import pyarrow.compute as pc  # lazy: optional (the parquet extra)

    if chunked.type.bit_width <= 32 or chunked.length() == chunked.null_count:
        return
    span = pc.min_max(chunked)
    low, high = span["min"].as_py(), span["max"].as_py()
    worst = high if abs(high) >= abs(low) else low
    if abs(worst) > EXACT_INTEGERS:
        raise DataFormatError(
            f"{name_of(path)}, column {name!r}: the integer {worst} is beyond 2**53 = {EXACT_INTEGERS}, where "
            f"float64 cannot hold every whole number (it would become {int(float(worst))}); store codes or "
            f"identifiers as a string column and read them with --column-types {name}=categorical (or leave it out "
            f"with --column-types {name}=text), or store the column as float64 to accept the rounding")
