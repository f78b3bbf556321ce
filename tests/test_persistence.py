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
