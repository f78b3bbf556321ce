"""The model-file container: a zip archive of ``.npy`` entries with a JSON manifest, read defensively.

Writing is atomic (:func:`skframe.io.atomic_write`: one temporary file in the
destination's directory, flushed to disk, checked, then renamed over it), so an interrupted
or refused save leaves the previous file intact. Reading never trusts the file: the manifest
is read and validated first, each entry's declared uncompressed size and its ``.npy`` header (dtype, shape,
memory order) must agree with what the manifest declares, and every array read
is bounded by that declaration, so a tampered or truncated file is refused before
anything large is allocated. A compressed entry may expand by the ``expansion`` limit of
:mod:`skframe.limits` only, and an array that the model does not refer to is refused
unread: a loaded model takes the memory it needs and no more. Arrays keep their dtype, shape and memory order (C
or Fortran), so values and the BLAS results computed from them are bit-identical.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import zipfile

import numpy as np

from skframe.exceptions import PersistenceError
from skframe.io.atomic import atomic_write
from skframe.limits import archive_member_impossible, check, exceeded, limit

__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "write_model_file", "read_model_file", "describe_array"]

FORMAT_NAME = "skframe-model"
FORMAT_VERSION = 2
MANIFEST = "__manifest__"
MAX_MANIFEST_BYTES = 64 << 20
_MAX_NPY_HEADER = 1 << 16
#: bytes the compressed entries of a model file may inflate to beyond the `expansion` limit, all together
_TOTAL_SLACK = 1 << 20
_ALLOWED_KINDS = "biufcSU"  # numbers, booleans and fixed-width strings: never objects or records


def _raw(arr):
    """The array's bytes in its own memory order, as a flat uint8 view (no copy)."""
    flat = (arr.T if _fortran(arr) else arr).reshape(-1)
    return flat.view(np.uint8) if flat.size else np.zeros(0, np.uint8)


def _fortran(arr):
    return bool(arr.flags.f_contiguous and not arr.flags.c_contiguous)


def prepare_array(arr):
    """The array as it will be stored: C- or Fortran-contiguous (other strides become C order)."""
    if not (arr.flags.c_contiguous or arr.flags.f_contiguous):
        arr = np.ascontiguousarray(arr)
    return arr


def describe_array(arr):
    """The manifest entry of an array: dtype, shape, memory order and SHA-256 of its bytes."""
    return {
        "dtype": arr.dtype.str,
        "shape": [int(s) for s in arr.shape],
        "fortran_order": _fortran(arr),
        "sha256": hashlib.sha256(_raw(arr)).hexdigest(),
    }


def write_model_file(path, manifest, arrays, *, verify=None):
    """Write ``manifest`` (JSON-ready dict) and ``arrays`` ({key: ndarray}) to ``path`` atomically.

    ``verify(tmp)``, when given, is called with the complete temporary file before it replaces
    ``path``: an exception it raises leaves ``path`` untouched.
    """
    path = os.fspath(path)
    blob = np.frombuffer(json.dumps(manifest, allow_nan=False).encode("utf-8"), dtype=np.uint8)
    try:
        # a temporary file renamed over `path` once complete: an interrupted save leaves the previous file
        with atomic_write(path, "wb", verify=verify) as fh, \
                zipfile.ZipFile(fh, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
            for key, arr in ((MANIFEST, blob), *arrays.items()):
                with zf.open(f"{key}.npy", "w", force_zip64=arr.nbytes > (1 << 30)) as out:
                    np.lib.format.write_array(out, arr, allow_pickle=False)
    except OSError as exc:
        raise PersistenceError(f"cannot write model file {path!r}: {exc.strerror or exc}") from exc
    return path


def _corrupt(path, what):
    return PersistenceError(
        f"{path!r} is not a valid skframe model file: {what}; it was truncated, corrupted or tampered with"
    )


def _check_declaration(path, key, decl):
    """Validate one manifest array declaration; return (dtype, shape, fortran_order, nbytes)."""
    if not isinstance(decl, dict) or not isinstance(decl.get("dtype"), str) or not isinstance(decl.get("shape"), list):
        raise _corrupt(path, f"array {key!r} has a malformed declaration in the manifest")
    try:
        dtype = np.dtype(decl["dtype"])
    except (TypeError, ValueError) as exc:
        raise _corrupt(path, f"array {key!r} declares an unknown dtype {decl['dtype']!r}") from exc
    if dtype.kind not in _ALLOWED_KINDS or dtype.hasobject:
        raise _corrupt(
            path, f"array {key!r} declares dtype {decl['dtype']!r}; only numeric and string arrays are allowed"
        )
    shape = decl["shape"]
    if not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape):
        raise _corrupt(path, f"array {key!r} declares an invalid shape {shape!r}")
    nbytes = dtype.itemsize
    for s in shape:
        nbytes *= s
    return dtype, tuple(shape), bool(decl.get("fortran_order", False)), nbytes


class _Reader:
    def __init__(self, path, zf, file_size):
        self.path = path
        self.zf = zf
        self.infos = {}
        for info in zf.infolist():
            name = info.filename
            if name in self.infos:
                raise _corrupt(path, f"entry {name!r} appears twice")
            if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                raise _corrupt(path, f"entry {name!r} uses an unsupported compression")
            # the sizes the directory claims must be possible for a file of this length; skframe writes its
            # entries uncompressed, so a compressed one may expand by the `expansion` limit (skframe.limits) only
            tail = f"which a {file_size}-byte file cannot hold unless its data"
            if archive_member_impossible(info, file_size, f"{path!r}: entry {name!r}", tail, PersistenceError):
                raise _corrupt(path, f"entry {name!r} declares sizes that a {file_size}-byte file cannot hold")
            self.infos[name] = info
        # all compressed entries together, before any is read: the `decompressed` limit of every archive reader,
        # and the `expansion` limit charged to their total (the 1 MiB a small entry may always inflate to counted
        # once, not once an entry: 1 000 deflated 1 MiB arrays in a 1 MB file are refused, whatever refers to them)
        packed = [info for info in self.infos.values() if info.compress_type != zipfile.ZIP_STORED]
        inflated, compressed = sum(i.file_size for i in packed), sum(i.compress_size for i in packed)
        check("decompressed", inflated, f"{path!r}: the model file (its compressed entries together)",
              error=PersistenceError)
        if inflated > limit("expansion") * compressed + _TOTAL_SLACK:
            ratio = -(-inflated // max(compressed, 1))  # rounded up: 64.2 times is over a limit of 64
            raise PersistenceError(exceeded("expansion", ratio, f"{path!r}: its {len(packed)} compressed entries "
                                            f"together declare {inflated} bytes from {compressed} compressed, so "
                                            "the model file"))

    def entry(self, key):
        info = self.infos.get(f"{key}.npy")
        if info is None:
            raise _corrupt(self.path, f"array {key!r} is missing")
        return info

    def read(self, key, expect=None, limit=None):
        """Read entry ``key``; ``expect`` = (dtype, shape, fortran_order, nbytes) bounds and checks it."""
        info = self.entry(key)
        if expect is not None and not expect[3] <= info.file_size <= expect[3] + _MAX_NPY_HEADER:
            raise _corrupt(
                self.path, f"entry {key!r} declares {info.file_size} bytes but the manifest declares {expect[3]}"
            )
        if limit is not None and info.file_size > limit:
            raise _corrupt(self.path, f"entry {key!r} is {info.file_size} bytes, more than the {limit} allowed")
        with self.zf.open(info) as fp:
            try:
                version = np.lib.format.read_magic(fp)
                fmt = np.lib.format
                reader = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
                shape, fortran, dtype = reader(fp, max_header_size=_MAX_NPY_HEADER)
            except (ValueError, SyntaxError, EOFError) as exc:
                raise _corrupt(self.path, f"entry {key!r} has no valid array header ({exc})") from exc
            header_end = fp.tell()
            if expect is not None and (dtype, tuple(shape), bool(fortran)) != expect[:3]:
                raise _corrupt(
                    self.path,
                    f"array {key!r} holds {dtype.str} {tuple(shape)} "
                    f"but the manifest declares {expect[0].str} {expect[1]}",
                )
            if dtype.kind not in _ALLOWED_KINDS or dtype.hasobject:
                raise _corrupt(
                    self.path, f"array {key!r} has dtype {dtype.str}; only numeric and string arrays are allowed"
                )
            nbytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
            if header_end + nbytes != info.file_size:
                raise _corrupt(
                    self.path,
                    f"entry {key!r} is {info.file_size} bytes, not the {header_end + nbytes} its header implies",
                )
            buf = bytearray(nbytes)  # bounded: equal to the entry's declared (and checked) size
            view, got = memoryview(buf), 0
            while got < nbytes:
                n = fp.readinto(view[got:])
                if not n:
                    raise _corrupt(self.path, f"array {key!r} is truncated")
                got += n
            fp.read(1)  # reach the end of the entry: the zip CRC is checked there
        arr = np.frombuffer(buf, dtype=dtype)
        return arr.reshape(shape, order="F" if fortran else "C")


def _read_manifest(path, reader):
    if f"{MANIFEST}.npy" not in reader.infos:
        raise PersistenceError(f"{path!r} is not an skframe model file (no manifest); save models with skframe.save")
    blob = reader.read(MANIFEST, limit=MAX_MANIFEST_BYTES)
    if blob.dtype != np.uint8 or blob.ndim != 1:
        raise _corrupt(path, "the manifest is not a byte string")
    try:
        manifest = json.loads(blob.tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise PersistenceError(f"{path!r} has a corrupted manifest; the file was modified or truncated") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_NAME:
        raise PersistenceError(f"{path!r} is not an skframe model file")
    version = manifest.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version > FORMAT_VERSION or version < 1:
        raise PersistenceError(
            f"{path!r} uses model format version {version!r}, newer than this skframe supports ({FORMAT_VERSION}); "
            f"upgrade skframe (the file was written by skframe {manifest.get('skframe_version')})"
        )
    return manifest


def _declarations(path, manifest, reader):
    """{key: (dtype, shape, fortran_order, nbytes, sha256)} from the manifest (format 2) or the checked headers (1)."""
    if manifest["format_version"] >= 2:
        declared = manifest.get("arrays")
        if not isinstance(declared, dict):
            raise _corrupt(path, "the manifest does not declare its arrays")
        return {k: (*_check_declaration(path, k, d), d.get("sha256")) for k, d in declared.items()}
    # Format 1 declared only checksums. Its files are written uncompressed, so an entry's size is bounded
    # by the bytes actually present in the file (checked by _Reader): refuse compressed entries.
    checksums = manifest.get("checksums")
    if not isinstance(checksums, dict):
        raise _corrupt(path, "the manifest does not list its arrays")
    out = {}
    for key, digest in checksums.items():
        info = reader.entry(key)
        if info.compress_type != zipfile.ZIP_STORED or info.compress_size != info.file_size:
            raise _corrupt(path, f"entry {key!r} of a format-1 file is compressed")
        out[key] = (None, None, None, None, digest)
    return out


# the manifest nodes that name arrays (see skframe.persistence's encoder): {node key: fields holding array keys}
_ARRAY_NODES = {"__array__": ("__array__",), "__scalar__": ("__scalar__",),
                "__sparse__": ("data", "indices", "indptr")}


def _used_arrays(manifest):
    """The array keys the manifest's model and extra data refer to (walked without recursion)."""
    used, stack = set(), [manifest.get("model"), manifest.get("extra")]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            for tag, fields in _ARRAY_NODES.items():
                if tag in node:
                    used.update(node[f] for f in fields if isinstance(node.get(f), str))
            stack.extend(node.values())
    return used


def read_model_file(path, *, max_bytes=None):
    """Read and check the file at ``path``; return ``(manifest, {key: ndarray})``.

    ``max_bytes`` (optional) refuses files whose arrays declare more bytes in total.
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise PersistenceError(f"model file {path!r} does not exist; check the path")
    if not stat.S_ISREG(os.stat(path).st_mode):  # /dev/zero, a FIFO (whose open would wait): no size to bound by
        raise PersistenceError(f"model file {path!r} is not a regular file (a device, a FIFO or a directory); give "
                               "the path of a file written by skframe.save or skframe fit --model-out")
    try:
        with open(path, "rb") as fh, zipfile.ZipFile(fh) as zf:
            reader = _Reader(path, zf, os.fstat(fh.fileno()).st_size)
            manifest = _read_manifest(path, reader)
            declared = _declarations(path, manifest, reader)
            present = {name[:-4] for name in reader.infos if name.endswith(".npy")} - {MANIFEST}
            if present != set(declared) or len(reader.infos) != len(declared) + 1:
                raise PersistenceError(
                    f"{path!r} does not hold the arrays its manifest lists; the file was tampered with"
                )
            unused = sorted(set(declared) - _used_arrays(manifest))
            if unused:  # a model loads what it needs and no more: an array nothing refers to is refused unread
                size = declared[unused[0]][3] or reader.entry(unused[0]).file_size
                raise _corrupt(path, f"it holds {len(unused)} array(s) that the model does not use ({unused[0]!r}, "
                                     f"{size} bytes)")
            total = sum(d[3] or reader.entry(k).file_size for k, d in declared.items())
            if max_bytes is not None and total > max_bytes:
                raise PersistenceError(f"{path!r} holds {total} bytes of arrays, more than max_bytes={max_bytes}")
            arrays = {}
            for key, (dtype, shape, fortran, nbytes, digest) in declared.items():
                expect = None if dtype is None else (dtype, shape, fortran, nbytes)
                arr = reader.read(key, expect)
                if hashlib.sha256(_raw(arr)).hexdigest() != digest:
                    raise PersistenceError(
                        f"array {key!r} in {path!r} fails its checksum; the file was tampered with or corrupted"
                    )
                arrays[key] = arr
    except PersistenceError:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError, EOFError, KeyError,
            NotImplementedError) as exc:
        raise PersistenceError(
            f"{path!r} is not a readable skframe model file ({type(exc).__name__}: {exc}); it may be truncated or "
            "corrupted, or not written by skframe.save / skframe fit --model-out"
        ) from exc
    return manifest, arrays
