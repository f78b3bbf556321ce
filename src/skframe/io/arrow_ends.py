"""Whether a Parquet or Arrow file ends where its format says it must: a file cut short is never read short.

Each of these formats closes with bytes of its own, which the reader checks before it reads any row:

* Parquet: the file starts and ends with ``PAR1`` (the footer, which lists every row group, sits just before
  the last four bytes);
* Arrow IPC file (Feather v2): it starts and ends with ``ARROW1``;
* Arrow IPC stream: the stream's end-of-stream marker, ``0xFFFFFFFF`` then a zero length (streams of the
  format before Arrow 0.15, which ended in four zero bytes only, are not told apart from a cut and are
  refused). A stream whose writer was never closed lacks the marker too, and is refused the same way: its
  last batches may be missing.

A file whose end is missing raises one :class:`~skframe.exceptions.DataFormatError` that says "truncated";
cut anywhere else, the Arrow reader's own error is reported as a truncation by :func:`arrow_failure`.
"""

from __future__ import annotations

import os

from skframe.exceptions import DataFormatError
from skframe.io.compressed import file_head

__all__ = ["check_arrow_end", "arrow_failure"]

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
