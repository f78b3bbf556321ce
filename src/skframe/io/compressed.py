"""Compressed data files, recognised by their content and read through a byte cap.

A gzip, bz2 or xz file (zstd too when the ``zstandard`` library is installed) is recognised
by its first bytes, whatever its name, and read as the text it holds. What it may expand
to is bounded **before** it is expanded, by the size policy of :mod:`skframe.limits`:

* the cap is the smaller of ``SKFRAME_MAX_DECOMPRESSED`` (8 GiB) and ``SKFRAME_MAX_EXPANSION``
  (64) times the compressed size, but never below 64 MiB (a small file may always expand to
  that much);
* a gzip file states its expanded size in its last four bytes: a claim over the cap is
  refused at once, before a byte is decompressed;
* otherwise the file is first decompressed as a stream that is counted and thrown away,
  stopping with the same one-line refusal as soon as the cap is passed (a lying trailer, a
  gzip file of several members, bz2, xz, zstd): nothing is parsed or kept before the file is
  known to fit, so memory stays bounded whatever the file claims. The count is remembered for
  the file (its path, size and modification time), so the readers that open it again (the
  header, then the rows) count it once.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import zlib

from skframe.deps import require
from skframe.exceptions import DataFormatError, DependencyError
from skframe.limits import exceeded, limit

__all__ = ["file_head", "compression_of", "open_binary", "expansion_cap", "COMPRESSED_SUFFIXES", "inner_suffix"]

_MAGIC = ((b"\x1f\x8b", "gzip"), (b"BZh", "bz2"), (b"\xfd7zXZ\x00", "xz"), (b"\x28\xb5\x2f\xfd", "zstd"))
#: File-name suffixes of compressed files and the compression each one means.
COMPRESSED_SUFFIXES = {".gz": "gzip", ".gzip": "gzip", ".bz2": "bz2", ".xz": "xz", ".zst": "zstd"}
_FLOOR = 64 << 20
_COUNTED = {}  # (path, size, mtime) -> expanded bytes, for files already counted within the cap


def file_head(path, size):
    """The first ``size`` bytes of the file (fewer in a shorter one; none when it cannot be read)."""
    try:
        with open(path, "rb") as fh:
            return fh.read(size)
    except OSError:
        return b""


def compression_of(path):
    """``"gzip"``, ``"bz2"``, ``"xz"`` or ``"zstd"`` when the file's first bytes say so, else None."""
    head = file_head(path, 6)
    for magic, name in _MAGIC:
        if head.startswith(magic):
            return name
    return None


def inner_suffix(path):
    """The suffix of ``path`` once a compression suffix is removed (``data.csv.gz`` -> ``.csv``)."""
    root, ext = os.path.splitext(str(path))
    if ext.lower() in COMPRESSED_SUFFIXES:
        return os.path.splitext(root)[1].lower()
    return ext.lower()


def expansion_cap(compressed_bytes):
    """The most bytes a compressed file of ``compressed_bytes`` may expand to (see the module docstring)."""
    return min(limit("decompressed"), max(_FLOOR, limit("expansion") * int(compressed_bytes)))


def _refusal(path, value, claimed=False):
    where = os.path.basename(str(path))
    size = os.path.getsize(path)
    what = f"its gzip trailer states {value} bytes" if claimed else f"{value}+ bytes expanded"
    if value > limit("decompressed"):
        return DataFormatError(exceeded("decompressed", value, f"{where} (compressed; {what})"))
    ratio = value // max(1, size)
    return DataFormatError(exceeded("expansion", ratio, f"{where} ({size} bytes compressed, {what})"))


class _Capped(io.RawIOBase):
    """A readable stream over a decompressor that refuses to give more than ``cap`` bytes."""

    def __init__(self, stream, cap, path, kind):
        self._stream, self._cap, self._path, self._seen, self._kind = stream, cap, path, 0, kind

    def readable(self):
        return True

    def readinto(self, buffer):
        try:
            data = self._stream.read(len(buffer))
        except (EOFError, OSError, lzma.LZMAError, zlib.error, ValueError) as exc:
            raise DataFormatError(f"{os.path.basename(str(self._path))} starts as a {self._kind} file but cannot be "
                                  f"decompressed ({exc}); check the file (truncated or corrupt?)") from None
        self._seen += len(data)
        if self._seen > self._cap:
            raise _refusal(self._path, self._seen)
        buffer[:len(data)] = data
        return len(data)

    def close(self):
        self._stream.close()
        super().close()


def _gzip_claim(path):
    """The expanded size a gzip file states in its trailer (modulo 2**32)."""
    with open(path, "rb") as fh:
        fh.seek(-4, os.SEEK_END)
        return int.from_bytes(fh.read(4), "little")


def open_binary(path, compression="detect"):
    """Open ``path`` for reading bytes, decompressing it through the cap when it is compressed.

    Parameters
    ----------
    path : str
    compression : {"detect", None, "gzip", "bz2", "xz", "zstd"}
        ``"detect"`` looks at the first bytes.

    Returns
    -------
    file object
        A buffered binary stream; close it (or use it in a ``with`` block).
    """
    kind = compression_of(path) if compression == "detect" else compression
    if kind is None:
        return open(path, "rb")
    size = os.path.getsize(path)
    cap = expansion_cap(size)
    if kind == "gzip" and size >= 18:
        claim = _gzip_claim(path)
        if claim > cap:
            raise _refusal(path, claim, claimed=True)
    key = (os.path.abspath(str(path)), size, os.stat(path).st_mtime_ns, cap)
    if key not in _COUNTED:
        with _open_capped(path, kind, cap) as counting:
            while counting.read(1 << 20):
                pass
        _COUNTED[key] = True
    return _open_capped(path, kind, cap)


def _open_capped(path, kind, cap):
    if kind == "gzip":
        stream = gzip.open(path, "rb")
    elif kind == "bz2":
        stream = bz2.open(path, "rb")
    elif kind == "xz":
        stream = lzma.open(path, "rb")
    else:
        try:
            zstd = require("zstandard", f"the zstd-compressed file {os.path.basename(str(path))}")
        except DependencyError as exc:  # a data-file error: the file cannot be read here as it is
            raise DataFormatError(str(exc)) from None
        stream = zstd.ZstdDecompressor().stream_reader(open(path, "rb"), closefd=True)
    return io.BufferedReader(_Capped(stream, cap, path, kind), buffer_size=1 << 20)
