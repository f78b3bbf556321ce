"""Model-file container: tampering, truncation, inflated or lying entries, newer and older formats, atomic saves."""

import json
import zipfile

import numpy as np
import pytest

import skframe
from skframe import SketchedKernelRidge
from skframe.exceptions import PersistenceError
from tests.persistence.test_persistence import _edit_manifest, _regression_data, _saved


@pytest.fixture
def data():
    return _regression_data()

def _rewrite(path, mutate):
    with zipfile.ZipFile(path) as zf:
        entries = {name: zf.read(name) for name in zf.namelist()}
    mutate(entries)
    with zipfile.ZipFile(path, "w") as zf:
        for name, blob in entries.items():
            zf.writestr(name, blob)


def _manifest(entries):
    raw = entries["__manifest__.npy"]
    header_end = raw.index(b"\n", raw.index(b"{")) + 1  # npy header ends with a newline
    return raw[:header_end], json.loads(raw[header_end:].decode())


def test_tampered_array_is_detected(tmp_path, data):
    path = _saved(tmp_path, data)

    def flip(entries):
        name = next(n for n in entries if n != "__manifest__.npy")
        blob = bytearray(entries[name])
        blob[-1] ^= 0xFF
        entries[name] = bytes(blob)

    _rewrite(path, flip)
    with pytest.raises(PersistenceError, match="checksum"):
        skframe.load(path)


def test_truncated_file(tmp_path, data):
    path = _saved(tmp_path, data)
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(PersistenceError):
        skframe.load(path)


def test_not_a_model_and_missing_file(tmp_path):
    other = tmp_path / "x.npz"
    np.savez(other, a=np.zeros(3))
    with pytest.raises(PersistenceError, match="not an skframe model"):
        skframe.load(other)
    with pytest.raises(PersistenceError, match="does not exist"):
        skframe.load(tmp_path / "nope.skf")
    text = tmp_path / "t.skf"
    text.write_text("hello")
    with pytest.raises(PersistenceError):
        skframe.load(text)


def test_newer_format_version_refused(tmp_path, data):
    path = _saved(tmp_path, data)
    _edit_manifest(path, lambda m: m.update(format_version=99))
    with pytest.raises(PersistenceError, match="newer"):
        skframe.load(path)


# --- safe loading -------------------------------------------------------------------------------------------------

_GIB_DOUBLES = (1 << 30) // 8


def _npy(shape, dtype="<f8", fortran=False, data=b""):
    import io

    buf = io.BytesIO()
    header = {"descr": dtype, "fortran_order": fortran, "shape": shape}
    np.lib.format.write_array_header_1_0(buf, header)
    return buf.getvalue() + data


def _patch_declared_size(path, name, size):
    """Make the zip directory claim that entry ``name`` is ``size`` bytes uncompressed (local and central headers)."""
    import struct

    raw = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as zf:
        offset = zf.getinfo(name).header_offset
    struct.pack_into("<I", raw, offset + 22, size)
    central = 0
    while True:
        central = raw.index(b"PK\x01\x02", central)
        name_len = struct.unpack_from("<H", raw, central + 28)[0]
        if raw[central + 46: central + 46 + name_len] == name.encode():
            struct.pack_into("<I", raw, central + 24, size)
            break
        central += 4
    path.write_bytes(bytes(raw))


def _replace_entry(path, name, blob, compress=zipfile.ZIP_STORED):
    with zipfile.ZipFile(path) as zf:
        entries = {n: zf.read(n) for n in zf.namelist()}
    entries[name] = blob
    with zipfile.ZipFile(path, "w") as zf:
        for n, b in entries.items():
            zf.writestr(n, b, compress_type=compress if n == name else zipfile.ZIP_STORED)


def _refused_without_allocating(path, match):
    import time
    import tracemalloc

    tracemalloc.start()
    start = time.perf_counter()
    try:
        with pytest.raises(PersistenceError, match=match):
            skframe.load(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 << 20, f"loading allocated {peak / 2**20:.0f} MiB before refusing"
    return time.perf_counter() - start


def test_entry_declaring_one_gib_is_refused_before_allocation(tmp_path, data):
    path = _saved(tmp_path, data)
    name = "a0.npy"
    blob = _npy((_GIB_DOUBLES,), data=bytes(1 << 16))  # deflated: a small file whose header declares 1 GiB
    _replace_entry(path, name, blob, compress=zipfile.ZIP_DEFLATED)
    _patch_declared_size(path, name, len(_npy((_GIB_DOUBLES,))) + (1 << 30))
    assert path.stat().st_size < 1 << 20
    _refused_without_allocating(path, "declares")


def test_entry_larger_than_declared_is_refused_before_reading(tmp_path, data):
    path = _saved(tmp_path, data)
    noise = np.random.default_rng(0).bytes(1 << 20)  # incompressible: the zip sizes are honest, the manifest disagrees
    _replace_entry(path, "a0.npy", _npy(((1 << 20) // 8,), data=noise), compress=zipfile.ZIP_DEFLATED)
    _refused_without_allocating(path, "manifest declares")


def test_lying_npy_header_is_refused_before_allocation(tmp_path, data):
    path = _saved(tmp_path, data)
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo("a0.npy")
    # same entry size as the manifest expects, but the array header claims 1 GiB
    blob = _npy((_GIB_DOUBLES,))
    blob += bytes(max(0, info.file_size - len(blob)))
    _replace_entry(path, "a0.npy", blob)
    _refused_without_allocating(path, "manifest declares|declares")


def test_huge_array_without_manifest_is_refused_before_allocation(tmp_path):
    path = tmp_path / "bomb.skf"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("x.npy", _npy((_GIB_DOUBLES,), data=bytes(1 << 16)))
    _patch_declared_size(path, "x.npy", len(_npy((_GIB_DOUBLES,))) + (1 << 30))
    _refused_without_allocating(path, "no manifest|cannot hold")


def test_extra_or_missing_entries_refused(tmp_path, data):
    path = _saved(tmp_path, data)
    with zipfile.ZipFile(path, "a") as zf:
        zf.writestr("intruder.npy", _npy((1,), data=bytes(8)))
    with pytest.raises(PersistenceError, match="arrays its manifest lists"):
        skframe.load(path)


def test_object_dtype_declaration_refused(tmp_path, data):
    path = _saved(tmp_path, data)
    _edit_manifest(path, lambda m: m["arrays"]["a0"].update(dtype="|O"))
    with pytest.raises(PersistenceError, match="only numeric"):
        skframe.load(path)


def test_max_bytes(tmp_path, data):
    path = _saved(tmp_path, data)
    with pytest.raises(PersistenceError, match="max_bytes"):
        skframe.load(path, max_bytes=100)
    assert skframe.load(path, max_bytes=10**9) is not None


def test_format_1_files_still_load(tmp_path, data):
    """Files written before array declarations (format 1: checksums of C-order bytes, np.savez) load unchanged."""
    import hashlib

    X, y = data
    path = _saved(tmp_path, data)
    expected = skframe.load(path).predict(X)

    def to_v1(m):
        m["format_version"] = 1
        del m["arrays"]

    with np.load(path, allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files}
    manifest = json.loads(arrays.pop("__manifest__").tobytes().decode())
    to_v1(manifest)
    arrays = {k: np.ascontiguousarray(v) for k, v in arrays.items()}
    manifest["checksums"] = {k: hashlib.sha256(v.tobytes()).hexdigest() for k, v in arrays.items()}
    with open(path, "wb") as fh:  # np.savez would append ".npz" to a path
        np.savez(fh, __manifest__=np.frombuffer(json.dumps(manifest).encode(), dtype=np.uint8), **arrays)
    with zipfile.ZipFile(path) as zf:
        assert "arrays" not in json.loads(zf.read("__manifest__.npy").split(b"\n", 1)[1])
    np.testing.assert_array_equal(skframe.load(path).predict(X), expected)


# --- atomic save --------------------------------------------------------------------------------------------------


def test_interrupted_save_keeps_previous_file(tmp_path, data, monkeypatch):
    X, y = data
    path = _saved(tmp_path, data)
    before = path.read_bytes()
    calls = []
    real = np.lib.format.write_array

    def interrupted(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(np.lib.format, "write_array", interrupted)
    with pytest.raises(KeyboardInterrupt):
        skframe.save(SketchedKernelRidge(sketch_size=5, random_state=1).fit(X, y), path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.skf"]  # no temporary file left behind


def test_save_into_missing_directory(tmp_path, data):
    X, y = data
    with pytest.raises(PersistenceError, match="cannot write"):
        skframe.save(SketchedKernelRidge(sketch_size=5, random_state=1).fit(X, y), tmp_path / "nope" / "m.skf")


def test_damaged_files_give_one_clear_error(tmp_path, data):
    """Truncations and flipped bytes anywhere in a model file: always PersistenceError, never another exception."""
    path = _saved(tmp_path, data)
    raw = path.read_bytes()
    rng = np.random.default_rng(0)
    damaged = [raw[:k] for k in np.linspace(0, len(raw) - 1, 25).astype(int)]
    for pos in rng.integers(0, len(raw), 60):
        blob = bytearray(raw)
        blob[pos] ^= int(rng.integers(1, 256))
        damaged.append(bytes(blob))
    target = tmp_path / "d.skf"
    loaded = 0
    for blob in damaged:
        target.write_bytes(blob)
        try:
            skframe.load(target)
            loaded += 1  # a flip in a field nobody reads (zip timestamps, padding) is harmless
        except PersistenceError:
            pass
    assert loaded < len(damaged) // 2


@pytest.mark.parametrize(
    "edit",
    [
        lambda m: m.update(model={"__list__": "not a list"}),
        lambda m: m.update(model={"__dict__": [1, 2]}),
        lambda m: m.update(
            model={"__component__": "kernel", "name": "gaussian", "params": {"__dict__": {"gamma": -1}}}),
        lambda m: m.update(
            model={"__sparse__": "csr", "shape": [2, 2], "data": "a0", "indices": "a0", "indptr": "a0"}),
        lambda m: m.update(model="__DEEP__"),
    ],
    ids=["list", "dict", "bad-params", "bad-sparse", "deep"],
)
def test_malformed_manifest_structure(tmp_path, data, edit):
    path = _saved(tmp_path, data)
    _edit_manifest(path, edit)
    with np.load(path, allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files}
    text = arrays["__manifest__"].tobytes().decode().replace('"__DEEP__"', "[" * 100000 + "]" * 100000)
    arrays["__manifest__"] = np.frombuffer(text.encode(), dtype=np.uint8)
    with open(path, "wb") as fh:  # np.savez would append ".npz" to a path
        np.savez(fh, **arrays)
    with pytest.raises(PersistenceError):
        skframe.load(path)


def test_fuzzed_model_files(tmp_path_factory):
    """Hypothesis: random edits, insertions and truncations of a valid file load or give PersistenceError."""
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies
    base = tmp_path_factory.mktemp("fuzz")
    raw = _saved(base, _regression_data()).read_bytes()
    target = base / "f.skf"

    @hypothesis.settings(max_examples=60, deadline=None, derandomize=True)
    @hypothesis.given(
        edits=st.lists(st.tuples(st.integers(0, len(raw) - 1), st.integers(0, 255)), max_size=4),
        insert=st.binary(max_size=16),
        cut=st.integers(0, len(raw)),
    )
    def check(edits, insert, cut):
        blob = bytearray(raw)
        for pos, value in edits:
            blob[pos] = value
        blob[cut:cut] = insert
        target.write_bytes(bytes(blob))
        try:
            skframe.load(target)
        except PersistenceError:
            pass

    check()
