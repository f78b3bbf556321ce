"""Compressed data files, recognised by their content and read through a byte cap.

A gzip, bz2 or xz file (zstd too when the ``zstandard`` library is installed) is recognised
by its first bytes, whatever its name, and read as the text it holds. What it may expand
to is bounded **before** it is expanded, by the size policy of :mod:`skframe.limits`:

* the cap is the smaller of ``SKFRAME_MAX_DECOMPRESSED`` (8 GiB) and ``SKFRAME_MAX_EXPANSION``
  (64) times the compressed size, but never below 1 MiB (a small file may always expand to
  that much: 64 MiB of memory at :data:`READ_RATE`, the 64 bytes of memory the table readers
  take per byte of the densest text);
* the file is first decompressed as a stream that is counted and thrown away, stopping with a
  one-line refusal as soon as the cap is passed (a gzip bomb of several members, bz2, xz,
  zstd): nothing is parsed or kept before the file is known to fit, so memory stays bounded
  whatever the file claims. The count is remembered for the file (its path, size and
  modification time), so the readers that open it again (the header, then the rows) count it
  once. (A gzip file's last four bytes state its expanded size, but those of a truncated file
  are any four bytes of its middle: the count decides.)

Truncation. A file cut short is refused in one line that says "truncated", never read short:
gzip, bz2 and xz streams end with a marker that Python's readers require. A zstd file is
walked frame by frame first (its frame headers and block headers, without decompressing): every
frame must end with its last block and its checksum within the file; the sizes its frames state
are checked against the cap before a byte is decompressed, and against the count after it.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import stat
import zlib

from skframe.deps import require
from skframe.exceptions import DataFormatError, DependencyError, InvalidInputError
from skframe.limits import limit

__all__ = ["file_head", "not_regular", "check_regular", "compression_of", "open_binary", "expansion_cap",
           "COMPRESSED_SUFFIXES", "inner_suffix"]

_MAGIC = ((b"\x1f\x8b", "gzip"), (b"BZh", "bz2"), (b"\xfd7zXZ\x00", "xz"), (b"\x28\xb5\x2f\xfd", "zstd"))
#: File-name suffixes of compressed files and the compression each one means.
COMPRESSED_SUFFIXES = {".gz": "gzip", ".gzip": "gzip", ".bz2": "bz2", ".xz": "xz", ".zst": "zstd"}
#: Bytes of memory the table readers take per byte of text they read, at most (measured on the densest text, one
#: character a cell: ``0,0`` rows; the typed and the numeric CSV readers alike, 58 to 64). The expansion always
#: allowed to a small compressed file is charged at this rate: 64 MiB of memory, 1 MiB of text.
READ_RATE = 64
_FLOOR = (64 << 20) // READ_RATE
_COUNTED = {}  # (path, size, mtime) -> expanded bytes, for files already counted within the cap


_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"))


def not_regular(path):
    """What ``path`` is when it exists but is no regular file (``"a FIFO (named pipe)"``, ``"a directory"``...),
    judged by its type (``os.stat``, links followed), never by its name; else None.

    The readers read a file more than once (its first bytes, its header, then its rows) and bound it by its size:
    a pipe, a device or a socket has neither, and opening a FIFO that nobody writes to waits forever.
    """
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    if stat.S_ISREG(mode):
        return None
    return next((what for test, what in _KINDS if test(mode)), "not a regular file")


def check_regular(path, what="data file"):
    """Raise an :class:`~skframe.exceptions.InvalidInputError` when ``path`` exists and is no regular file."""
    kind = not_regular(path)
    if kind is not None:
        raise InvalidInputError(f"{what} {str(path)!r} is {kind}, not a regular file; skframe reads only regular "
                                "files (a pipe or device is never opened): save the data to a file and give its path")


def file_head(path, size):
    """The first ``size`` bytes of the file (fewer in a shorter one; none when it cannot be read or is no regular
    file: a FIFO is never opened)."""
    if not_regular(path) is not None:
        return b""
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


def _name(path):
    return os.path.basename(str(path))


def _refusal(path, value, known=False):
    """The refusal of a file that expands to ``value`` bytes (``known``: as its headers state; else: more than
    that, counting stopped there)."""
    size = os.path.getsize(path)
    more = "" if known else "more than "
    if value > limit("decompressed"):
        return DataFormatError(f"{_name(path)} (compressed) decompresses to {more}{value} bytes, more than the limit "
                               f"of {limit('decompressed')}; if the file is genuine, raise the limit with the "
                               f"environment variable SKFRAME_MAX_DECOMPRESSED (e.g. SKFRAME_MAX_DECOMPRESSED="
                               f"{value if known else 4 * limit('decompressed')})")
    lim = limit("expansion")
    ratio = -(-value // max(1, size))  # rounded up: 64.2 times is over a limit of 64
    said = f"expands {ratio} times ({value} bytes)" if known else f"expands to more than {value} bytes"
    return DataFormatError(f"{_name(path)} ({size} bytes compressed) {said}, more than the limit of {lim} times its "
                           f"size (or {_FLOOR >> 20} MiB of text for a small file: the readers hold a byte of text "
                           f"in up to {READ_RATE} bytes of memory); if the file is genuine, raise the limit with the "
                           "environment variable SKFRAME_MAX_EXPANSION (e.g. SKFRAME_MAX_EXPANSION="
                           f"{ratio if known else 4 * lim})")


def _truncated(path, kind, detail):
    return DataFormatError(f"{_name(path)} is truncated: {detail}; the {kind} file was cut short (an interrupted "
                           "copy or download?): copy it again from its source")


class _Capped(io.RawIOBase):
    """A readable stream over a decompressor that refuses to give more than ``cap`` bytes."""

    def __init__(self, stream, cap, path, kind):
        self._stream, self._cap, self._path, self._seen, self._kind = stream, cap, path, 0, kind

    def readable(self):
        return True

    def readinto(self, buffer):
        try:
            data = self._stream.read(len(buffer))
        except EOFError:
            raise _truncated(self._path, self._kind, f"its {self._kind} stream stops before its end marker, after "
                             f"{os.path.getsize(self._path)} bytes") from None
        except (OSError, lzma.LZMAError, zlib.error, ValueError) as exc:
            raise DataFormatError(f"{_name(self._path)} starts as a {self._kind} file but cannot be "
                                  f"decompressed ({exc}); check the file (truncated or corrupt?)") from None
        self._seen += len(data)
        if self._seen > self._cap:
            raise _refusal(self._path, self._seen)
        buffer[:len(data)] = data
        return len(data)

    def close(self):
        self._stream.close()
        super().close()


_ZSTD_MAGIC = 0xFD2FB528


def _zstd_walk(path):
    """Walk the frames of a zstd file by their headers; return the bytes they state they expand to (None when a
    frame does not say). Raises the truncation refusal when a frame or block runs past the end of the file."""
    size, pos, total, frames = os.path.getsize(path), 0, 0, 0

    def need(fh, n, what):
        data = fh.read(n)
        if len(data) < n:
            raise _truncated(path, "zstd", f"its frame {frames + 1} ends inside {what}, at byte {size}")
        return data

    with open(path, "rb") as fh:
        while pos < size:
            fh.seek(pos)
            magic = int.from_bytes(need(fh, 4, "its magic number"), "little")
            if magic & 0xFFFFFFF0 == 0x184D2A50:  # a skippable frame: its length, then that many bytes
                pos += 8 + int.from_bytes(need(fh, 4, "a skippable frame's header"), "little")
                if pos > size:
                    raise _truncated(path, "zstd", f"its skippable frame {frames + 1} ends past byte {size}")
                frames += 1
                continue
            if magic != _ZSTD_MAGIC:  # not a frame: the decompressor says what is wrong
                return None
            desc = need(fh, 1, "its frame header")[0]
            single, flag = bool(desc & 0x20), desc >> 6
            fcs_bytes = (1 if single else 0, 2, 4, 8)[flag]
            head = need(fh, (0 if single else 1) + (0, 1, 2, 4)[desc & 3] + fcs_bytes, "its frame header")
            if fcs_bytes and total is not None:
                fcs = int.from_bytes(head[len(head) - fcs_bytes:], "little")
                total += fcs + 256 if fcs_bytes == 2 else fcs
            elif not fcs_bytes:
                total = None
            while True:
                block = int.from_bytes(need(fh, 3, "a block header"), "little")
                kind, length = (block >> 1) & 3, block >> 3
                fh.seek(1 if kind == 1 else length, os.SEEK_CUR)
                if fh.tell() > size:
                    raise _truncated(path, "zstd", f"a block of its frame {frames + 1} ends past byte {size}")
                if block & 1:
                    break
            if desc & 0x04:
                need(fh, 4, "its checksum")
            pos = fh.tell()
            frames += 1
    return total


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
    check_regular(path)  # a FIFO is refused, never opened (opening one without a writer waits forever)
    kind = compression_of(path) if compression == "detect" else compression
    if kind is None:
        return open(path, "rb")
    size = os.path.getsize(path)
    cap = expansion_cap(size)
    key = (os.path.abspath(str(path)), size, os.stat(path).st_mtime_ns, cap)
    if key not in _COUNTED:
        stated = None
        if kind == "zstd":
            _zstandard(path)  # a missing library is said first, before the file's frames are judged
            stated = _zstd_walk(path)
        if stated is not None and stated > cap:
            raise _refusal(path, stated, known=True)
        counted = 0
        with _open_capped(path, kind, cap) as counting:
            while chunk := counting.read(1 << 20):
                counted += len(chunk)
        if stated is not None and counted != stated:
            raise _truncated(path, kind, f"its frames state {stated} bytes but expand to {counted}")
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
        # every frame, one after another (``cat a.zst b.zst`` is one file), never the first one alone
        stream = _zstandard(path).ZstdDecompressor().stream_reader(open(path, "rb"), closefd=True,
                                                                  read_across_frames=True)
    return io.BufferedReader(_Capped(stream, cap, path, kind), buffer_size=1 << 20)


def _zstandard(path):
    try:
        return require("zstandard", f"the zstd-compressed file {_name(path)}")
    except DependencyError as exc:  # a data-file error: the file cannot be read here as it is
        raise DataFormatError(str(exc)) from None
