"""Safe persistence: exact round trips, components by name, state classes, missing plugins, foreign classes."""

import json
import zipfile

import numpy as np
import pytest

import skframe
from skframe import SketchedKernelRidge
from skframe.exceptions import PersistenceError


def _regression_data():
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(80, 3))
    return X, np.sin(3 * X[:, 0]) + X[:, 1]


@pytest.fixture
def data():
    return _regression_data()


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


def test_missing_plugin_named(tmp_path, data):
    path = _saved(tmp_path, data)

    def rename(m):
        state = m["model"]["__object__"] and m["model"]["state"]["__dict__"]
        state["kernel_"]["name"] = "kernel-from-uninstalled-plugin"

    _edit_manifest(path, rename)
    with pytest.raises(PersistenceError, match="kernel-from-uninstalled-plugin"):
        skframe.load(path)


def test_foreign_class_refused(tmp_path, data):
    path = _saved(tmp_path, data)
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


def _saved(tmp_path, data):
    """A small fitted model saved to ``tmp_path / "m.skf"``."""
    X, y = data
    path = tmp_path / "m.skf"
    skframe.save(SketchedKernelRidge(sketch_size=10, random_state=0).fit(X, y), path)
    return path


# --- components and state classes ---------------------------------------------------------------------------------


def test_directly_constructed_component_is_saved_by_name(tmp_path, data):
    from skframe.models import SketchedKernelMachine
    from skframe_kernels import GaussianKernel
    from skframe_losses.losses import HuberLoss

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
    _edit_manifest(path, lambda m: m["model"].update({"__object__": "skframe.core.linalg:pinv_sym"}))
    with pytest.raises(PersistenceError, match="refusing"):
        skframe.load(path)


def test_math_modules_do_not_import_persistence():
    import subprocess
    import sys

    code = ("import sys, skframe.core.sketching, skframe.core.output_basis, skframe.core.linalg; "
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
    for key, arr in a.items():
        got = b[key]
        assert got.dtype == arr.dtype and got.shape == arr.shape, key
        assert got.flags.f_contiguous == arr.flags.f_contiguous, key
        assert got.flags.c_contiguous == arr.flags.c_contiguous, key
        assert got.tobytes(order="A") == arr.tobytes(order="A"), key
    np.testing.assert_array_equal(m2.decision_function(X[:7]), before)


def test_format_1_class_names_resolve():
    """Format 1 named classes "module:qualname"; skframe's are found by qualname, components by their class."""
    from skframe.core.feature_map import SketchedFeatureMap
    from skframe.persistence import _class_named

    assert _class_named("skframe.core.sketching:SketchedFeatureMap") is SketchedFeatureMap
    assert _class_named("skframe.somewhere_else:SketchedFeatureMap") is SketchedFeatureMap  # moved since
    assert _class_named("skframe_losses.losses:HuberLoss").__name__ == "HuberLoss"  # a registered component class
    with pytest.raises(PersistenceError, match="refusing"):
        _class_named("elsewhere:SketchedFeatureMap")


def test_component_spec_inside_a_model_round_trips(tmp_path):
    from skframe.contract.specs import ComponentSpec
    from skframe.persistence import load_bundle, save

    spec = ComponentSpec("kernel", "gaussian", {"gamma": np.float32(0.5), "w": np.arange(2)})
    save(SketchedKernelRidge(), tmp_path / "m.skf", extra={"spec": spec})
    _, extra = load_bundle(tmp_path / "m.skf")
    back = extra["spec"]
    assert isinstance(back, ComponentSpec) and back.name == "gaussian" and type(back.params["gamma"]) is np.float32
    assert back.params["w"].tolist() == [0, 1]
