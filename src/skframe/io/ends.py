"""Whether a binary data file ends where its format says it must: a file cut short is never read short.

Each of these formats closes with bytes of its own, or states its size, which the reader checks:

* Parquet: the file starts and ends with ``PAR1`` (the footer, which lists every row group, sits just before
  the last four bytes);
* Arrow IPC file (Feather v2): it starts and ends with ``ARROW1``;
* Arrow IPC stream: the stream's end-of-stream marker, ``0xFFFFFFFF`` then a zero length (streams of the
  format before Arrow 0.15, which ended in four zero bytes only, are not told apart from a cut and are
  refused). A stream whose writer was never closed lacks the marker too, and is refused the same way: its
  last batches may be missing;
* NPZ (a zip archive): its end-of-central-directory record, within the last 64 KiB of the file;
* NPY: the data its header declares (shape times item size) all present after the header.

Compressed text (gzip, bz2, xz, zstd) is checked by :mod:`skframe.io.compressed`. A file whose end is missing
raises one :class:`~skframe.exceptions.DataFormatError` that says "truncated";
cut anywhere else, the Arrow reader's own error is reported as a truncation by :func:`arrow_failure`.
"""

from __future__ import annotations

import os

import numpy as np

from skframe.exceptions import DataFormatError
from skframe.io.compressed import file_head

__all__ = ["check_arrow_end", "arrow_failure", "check_zip_end", "check_npy_end"]

_STREAM_END = b"\xff\xff\xff\xff\x00\x00\x00\x00"


def _tail(path, size):
    try:
        with open(path, "rb") as fh:
            fh.seek(max(0, os.path.getsize(path) - size))
            return fh.read(size)
    except OSError:
        return b""


def _truncated(path, fmt, detail):
    return DataFormatError(f"{os.path.basename(str(path))} is truncated: {detail}; the {fmt} file was cut short "
                           "(an interrupted copy or download, or a writer that was not closed?): write or copy "
                           "it again")


def check_arrow_end(path, fmt):
    """Raise the truncation refusal when the ``"parquet"`` or ``"arrow"`` file at ``path`` lacks its closing bytes.

    Parameters
    ----------
    path : str or path-like
    fmt : {"parquet", "arrow"}

    Raises
    ------
    DataFormatError
        "<file> is truncated: ..." naming what is missing.
    """
    head, tail, size = file_head(path, 8), _tail(path, 8), os.path.getsize(path)
    if fmt == "parquet":
        if head.startswith(b"PAR1") and (size < 12 or not tail.endswith(b"PAR1")):
            raise _truncated(path, "Parquet", "it starts as a Parquet file but does not end with the footer that lists "
                                        "its row groups")
        return
    if head.startswith(b"ARROW1"):
        if not tail.endswith(b"ARROW1") or size < 12:
            raise _truncated(path, "Arrow", "it starts as an Arrow IPC file but does not end with the footer "
                                            "that lists its record batches")
        return
    if not tail.endswith(_STREAM_END):
        raise _truncated(path, "Arrow", "it does not end with the end-of-stream marker of an Arrow IPC stream")


def arrow_failure(path, fmt, exc):
    """The :class:`~skframe.exceptions.DataFormatError` for the Arrow reader's error ``exc``: a truncation when
    the reader ran out of bytes, else the reader's words."""
    text = str(exc)
    if any(w in text for w in ("but only read", "Expected to be able to read", "only 0 bytes", "bytes available",
                               "Unexpected end of stream", "Unexpected end", "end of file")):
        return _truncated(path, "Arrow" if fmt == "arrow" else "Parquet", f"the reader ran out of bytes ({text})")
    return DataFormatError(f"{os.path.basename(str(path))} cannot be read as a {fmt} file ({exc}); check the file")


def check_zip_end(path, fmt="NPZ"):
    """Raise the truncation refusal when ``path`` starts as a zip archive but lacks its central directory's end.

    Parameters
    ----------
    path : str or path-like
    fmt : str, default="NPZ"
        The format named in the message.
    """
    if not file_head(path, 4).startswith(b"PK\x03\x04"):
        return
    tail = _tail(path, (64 << 10) + 22)
    end = tail.rfind(b"PK\x05\x06")  # the record: 22 bytes, then its comment
    if end < 0 or len(tail) - end < 22 + int.from_bytes(tail[end + 20:end + 22], "little"):
        raise _truncated(path, fmt, "it starts as a zip archive but does not end with the directory that lists "
                                    "its arrays")


def check_npy_end(path):
    """Raise the truncation refusal when the ``.npy`` file at ``path`` holds less data than its header declares.

    A header that cannot be read is left to NumPy's reader, whose error is reported as it is.
    """
    if not file_head(path, 6) == b"\x93NUMPY":
        return
    try:
        with open(path, "rb") as fh:
            version = np.lib.format.read_magic(fh)
            read = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}
            if version not in read:  # a later version: NumPy's reader judges it
                return
            shape, _, dtype = read[version](fh, max_header_size=1 << 20)
            start = fh.tell()
    except (EOFError, ValueError) as exc:  # NumPy says "EOF: reading array header..." in a ValueError
        if isinstance(exc, EOFError) or str(exc).startswith("EOF"):
            raise _truncated(path, "NPY", "it ends inside its header") from None
        return
    except Exception:  # noqa: BLE001 (NumPy raises ValueError, EOFError, SyntaxError...: its own reader says it)
        return
    if dtype.hasobject:
        return
    need = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    have = os.path.getsize(path) - start
    if have < need:
        raise _truncated(path, "NPY", f"its header declares {need} bytes of data, the file holds {have}")
