"""Safe persistence: round trips, tampering, truncation, newer formats, missing plugins."""

import json
import zipfile

import numpy as np
import pytest

import skframe
from skframe import SketchedKernelRidge
from skframe.exceptions import PersistenceError


@pytest.fixture
def data():
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(80, 3))
    return X, np.sin(3 * X[:, 0]) + X[:, 1]


@pytest.mark.parametrize("sketch", ["psr", "gaussian", "subsample", "rff", None])
def test_roundtrip_predictions_identical(tmp_path, data, sketch):
    X, y = data
    model = SketchedKernelRidge(kernel_params={"gamma": 1.5}, sketch=sketch, sketch_size=15, random_state=3).fit(X, y)
    path = tmp_path / "m.skf"
    skframe.save(model, path)
    loaded = skframe.load(path)
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    assert loaded.get_params() == model.get_params()
    assert loaded.sketch_info_ == model.sketch_info_


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
    X, y = data
    path = tmp_path / "m.skf"
    skframe.save(SketchedKernelRidge(sketch_size=10, random_state=0).fit(X, y), path)

    def flip(entries):
        name = next(n for n in entries if n != "__manifest__.npy")
        blob = bytearray(entries[name])
        blob[-1] ^= 0xFF
        entries[name] = bytes(blob)

    _rewrite(path, flip)
    with pytest.raises(PersistenceError, match="checksum"):
        skframe.load(path)


def test_truncated_file(tmp_path, data):
    X, y = data
    path = tmp_path / "m.skf"
    skframe.save(SketchedKernelRidge(sketch_size=10, random_state=0).fit(X, y), path)
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


def _edit_manifest(path, edit):
    import io

    with np.load(path, allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files}
    manifest = json.loads(arrays["__manifest__"].tobytes().decode())
    edit(manifest)
    arrays["__manifest__"] = np.frombuffer(json.dumps(manifest).encode(), dtype=np.uint8)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    path.write_bytes(buf.getvalue())


def test_newer_format_version_refused(tmp_path, data):
    X, y = data
    path = tmp_path / "m.skf"
    skframe.save(SketchedKernelRidge(sketch_size=10, random_state=0).fit(X, y), path)
    _edit_manifest(path, lambda m: m.update(format_version=99))
    with pytest.raises(PersistenceError, match="newer"):
        skframe.load(path)


def test_missing_plugin_named(tmp_path, data):
    X, y = data
    path = tmp_path / "m.skf"
    skframe.save(SketchedKernelRidge(sketch_size=10, random_state=0).fit(X, y), path)

    def rename(m):
        state = m["model"]["__object__"] and m["model"]["state"]["__dict__"]
        state["kernel_"]["name"] = "kernel-from-uninstalled-plugin"

    _edit_manifest(path, rename)
    with pytest.raises(PersistenceError, match="kernel-from-uninstalled-plugin"):
        skframe.load(path)


def test_foreign_class_refused(tmp_path, data):
    X, y = data
    path = tmp_path / "m.skf"
    skframe.save(SketchedKernelRidge(sketch_size=10, random_state=0).fit(X, y), path)
    _edit_manifest(path, lambda m: m["model"].update({"__object__": "os:system"}))
    with pytest.raises(PersistenceError, match="outside skframe"):
        skframe.load(path)


def test_unsaveable_component_object(tmp_path, data):
    X, y = data

    class MyKernel:
        def __call__(self, A, B=None):
            B = A if B is None else B
            return (A @ B.T + 1.0) ** 2

    model = SketchedKernelRidge(MyKernel(), sketch_size=10, random_state=0).fit(X, y)
    with pytest.raises(PersistenceError, match="registry"):
        skframe.save(model, tmp_path / "m.skf")
    assert not (tmp_path / "m.skf").exists()


def _machine_models():
    from skframe.models import JointQuantileRegressor, SketchedKernelClassifier, SketchedKernelMachine

    return [
        ("huber", SketchedKernelMachine(loss="huber", loss_params={"kappa": 0.5}, kernel_params={"gamma": 1.0},
                                        sketch_size=20, random_state=0)),
        ("svr-rff", SketchedKernelMachine(loss="epsilon-svr", loss_params={"epsilon": 0.1}, sketch="rff",
                                          sketch_size=20, random_state=0)),
        ("exact-huber", SketchedKernelMachine(loss="huber", sketch=None, random_state=0)),
        ("hinge", SketchedKernelClassifier(sketch_size=20, random_state=0)),
        ("quantile", JointQuantileRegressor(quantiles=[0.1, 0.5, 0.9], sketch_size=20, random_state=0)),
    ]


@pytest.mark.parametrize("name, model", _machine_models(), ids=[n for n, _ in _machine_models()])
def test_machine_models_roundtrip(tmp_path, data, name, model):
    X, y = data
    target = (y > np.median(y)).astype(int) if name == "hinge" else y
    model.fit(X, target)
    path = tmp_path / "m.skf"
    skframe.save(model, path)
    loaded = skframe.load(path)
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    assert type(loaded) is type(model)


# --- exact arrays -------------------------------------------------------------------------------------------------


def _exact_values():
    rng = np.random.default_rng(0)
    F = np.asfortranarray(rng.normal(size=(5, 3)))
    return {
        "fortran": F,
        "c": rng.normal(size=(4, 2)),
        "strided": rng.normal(size=(6, 4))[::2, 1:],
        "float32": rng.normal(size=(3, 3)).astype(np.float32),
        "int32": np.arange(5, dtype=np.int32),
        "bool": np.array([True, False]),
        "complex": np.array([1 + 2j, 3.5 - 1e-300j]),
        "strings": np.array(["a", "bcd"]),
        "zero_d": np.array(np.pi),
        "empty": np.zeros((0, 3)),
        "scalar32": np.float32(0.1),
        "scalar_int": np.int64(7),
        "float": 0.1 + 0.2,
        "nan": float("nan"),
        "big_int": 2**80,
        "tuple": (1, "x", None),
        "shared": [F, F],
    }


def test_arrays_and_scalars_round_trip_exactly(tmp_path):
    import scipy.sparse as sp

    values = _exact_values()
    values["csr"] = sp.random(5, 4, density=0.5, format="csr", random_state=0)
    values["csc_array"] = sp.csc_array(sp.random(4, 6, density=0.5, random_state=1))
    from skframe.persistence import load_bundle, register_class, save

    class Holder:  # a plain dict cannot be the model: save a declared state class
        pass

    register_class(Holder, name="tests.Holder")
    h = Holder()
    h.__dict__.update(values)
    save(h, tmp_path / "x.skf")
    back, _ = load_bundle(tmp_path / "x.skf")
    for key, value in values.items():
        got = getattr(back, key)
        if isinstance(value, np.ndarray):
            assert got.dtype == value.dtype and got.shape == value.shape, key
            assert got.flags.f_contiguous == value.flags.f_contiguous or not value.flags.f_contiguous, key
            assert got.tobytes() == value.tobytes(), key
        elif isinstance(value, np.generic):
            assert type(got) is type(value) and got == value, key
        elif sp.issparse(value):
            assert type(got) is type(value) and got.format == value.format, key
            assert (got != value).nnz == 0
        elif key == "nan":
            assert np.isnan(got)
        elif key == "shared":
            assert got[0] is got[1] and got[0].flags.f_contiguous and not got[0].flags.c_contiguous
        else:
            assert got == value and type(got) is type(value), key
    assert back.fortran.flags.f_contiguous and not back.fortran.flags.c_contiguous  # memory order kept
    assert back.fortran.flags.writeable


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


def _saved(tmp_path, data):
    X, y = data
    path = tmp_path / "m.skf"
    skframe.save(SketchedKernelRidge(sketch_size=10, random_state=0).fit(X, y), path)
    return path


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
    manifest["checksums"] = {k: hashlib.sha256(np.ascontiguousarray(v).tobytes()).hexdigest() for k, v in arrays.items()}
    arrays = {k: np.ascontiguousarray(v) for k, v in arrays.items()}
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


# --- components and state classes ---------------------------------------------------------------------------------


def test_directly_constructed_component_is_saved_by_name(tmp_path, data):
    from skframe_kernels import GaussianKernel
    from skframe_losses.losses import HuberLoss

    from skframe.models import SketchedKernelMachine

    X, y = data
    model = SketchedKernelMachine(kernel=GaussianKernel(gamma=1.5), loss=HuberLoss(kappa=0.5), sketch_size=15,
                                  random_state=0).fit(X, y)
    path = tmp_path / "m.skf"
    skframe.save(model, path)
    manifest = json.loads(zipfile.ZipFile(path).read("__manifest__.npy").split(b"\n", 1)[1])
    text = json.dumps(manifest["model"])
    assert '"__component__": "kernel", "name": "gaussian"' in text and '"name": "huber"' in text
    loaded = skframe.load(path)
    assert isinstance(loaded.kernel, GaussianKernel) and loaded.kernel.params == {"gamma": 1.5}
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_to_state_protocol(tmp_path):
    from skframe.persistence import load, register_class, save

    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b
            self.cache = object()  # not saved: to_state chooses what to keep

        def to_state(self):
            return {"a": self.a, "b": self.b}

        @classmethod
        def from_state(cls, state):
            return cls(state["a"], state["b"])

    register_class(Pair, name="tests.Pair")
    save(Pair(np.arange(3.0), "x"), tmp_path / "p.skf")
    p = load(tmp_path / "p.skf")
    assert isinstance(p, Pair) and p.b == "x" and p.a.tolist() == [0.0, 1.0, 2.0]


def test_undeclared_class_refused_on_load(tmp_path, data):
    path = _saved(tmp_path, data)
    _edit_manifest(path, lambda m: m["model"].update({"__object__": "skframe.linalg:pinv_sym"}))
    with pytest.raises(PersistenceError, match="refusing"):
        skframe.load(path)


def test_math_modules_do_not_import_persistence():
    import subprocess
    import sys

    code = ("import sys, skframe.sketching, skframe.output_basis, skframe.linalg; "
            "print('skframe.persistence' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"


def test_declared_state_classes_resolve():
    """Every class the persistence table declares can be imported where the table says (guards moves)."""
    from skframe.persistence import STATE_CLASSES, _class_named, _name_of_class

    for name in STATE_CLASSES:
        cls = _class_named(name)
        assert isinstance(cls, type) and _name_of_class(cls) == name


def _arrays_of(obj, path="m", out=None, seen=None):
    """Every ndarray reachable from ``obj`` through attributes, dicts, lists and tuples, by path."""
    out = {} if out is None else out
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return out
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        out[path] = obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            _arrays_of(v, f"{path}.{k}", out, seen)
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            _arrays_of(v, f"{path}[{i}]", out, seen)
    elif hasattr(obj, "__dict__") and not isinstance(obj, type):
        for k, v in vars(obj).items():
            _arrays_of(v, f"{path}.{k}", out, seen)
    return out


def test_structured_model_arrays_keep_memory_order_and_predictions_are_bit_identical(tmp_path):
    from skframe.models import OutputKernelRegressor
    from tests._structured_helpers import multilabel_data

    X, Y = multilabel_data(n=60)
    m = OutputKernelRegressor(input_kernel_params={"gamma": 0.2}, output_kernel_params={"gamma": 0.3}, lam=1e-3,
                              random_state=0).fit(X, Y)
    before = m.decision_function(X[:7])
    m.predict(X[:3])
    skframe.save(m, tmp_path / "m.skf")
    m2 = skframe.load(tmp_path / "m.skf")
    a, b = _arrays_of(m), _arrays_of(m2)
    assert any(not v.flags.c_contiguous for v in a.values())  # the fitted coefficients are Fortran-ordered
    for key, arr in a.items():
        got = b[key]
        assert got.dtype == arr.dtype and got.shape == arr.shape, key
        assert got.flags.f_contiguous == arr.flags.f_contiguous and got.flags.c_contiguous == arr.flags.c_contiguous, key
        assert got.tobytes(order="A") == arr.tobytes(order="A"), key
    np.testing.assert_array_equal(m2.decision_function(X[:7]), before)


def test_format_1_class_names_resolve():
    """Format 1 named classes "module:qualname"; skframe's are found by qualname, components by their class."""
    from skframe.persistence import _class_named
    from skframe.sketching import SketchedFeatureMap

    assert _class_named("skframe.sketching:SketchedFeatureMap") is SketchedFeatureMap
    assert _class_named("skframe.somewhere_else:SketchedFeatureMap") is SketchedFeatureMap  # moved since
    assert _class_named("skframe_losses.losses:HuberLoss").__name__ == "HuberLoss"  # a registered component class
    with pytest.raises(PersistenceError, match="refusing"):
        _class_named("elsewhere:SketchedFeatureMap")


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


def test_component_spec_inside_a_model_round_trips(tmp_path):
    from skframe.persistence import load_bundle, save
    from skframe.specs import ComponentSpec

    spec = ComponentSpec("kernel", "gaussian", {"gamma": np.float32(0.5), "w": np.arange(2)})
    save(SketchedKernelRidge(), tmp_path / "m.skf", extra={"spec": spec})
    _, extra = load_bundle(tmp_path / "m.skf")
    back = extra["spec"]
    assert isinstance(back, ComponentSpec) and back.name == "gaussian" and type(back.params["gamma"]) is np.float32
    assert back.params["w"].tolist() == [0, 1]


@pytest.mark.parametrize(
    "edit",
    [
        lambda m: m.update(model={"__list__": "not a list"}),
        lambda m: m.update(model={"__dict__": [1, 2]}),
        lambda m: m.update(model={"__component__": "kernel", "name": "gaussian", "params": {"__dict__": {"gamma": -1}}}),
        lambda m: m.update(model={"__sparse__": "csr", "shape": [2, 2], "data": "a0", "indices": "a0", "indptr": "a0"}),
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
