"""Plugin system: real entry points from a temporary ``*.dist-info`` directory on sys.path.

Each test writes a tiny distribution (METADATA + entry_points.txt + a module) into
``tmp_path``, puts it on sys.path and reloads the plugin registry, so discovery
goes through ``importlib.metadata`` exactly as for an installed third party.
"""

import importlib
import sys
import textwrap
import uuid

import numpy as np
import pytest

import skframe
from skframe.exceptions import DuplicateComponentError, UnknownComponentError
from skframe.plugins import get_plugin_registry, reset_plugins
from skframe.registry import get_kernel, get_sketch, list_components


@pytest.fixture(autouse=True)
def fresh_registry(monkeypatch):
    monkeypatch.delenv("SKFRAME_DISABLE_PLUGINS", raising=False)
    reset_plugins()
    yield
    reset_plugins()


@pytest.fixture
def make_dist(tmp_path, monkeypatch):
    """Create a distribution ``dist`` with entry point ``ep_name`` -> a fresh module holding ``source``."""
    made = []

    def make(dist, source, ep_name="myplugin", version="1.2.3"):
        modname = f"skf_test_{dist.replace('-', '_')}_{uuid.uuid4().hex[:8]}"
        root = tmp_path / modname
        root.mkdir()
        (root / f"{modname}.py").write_text(textwrap.dedent(source))
        info = root / f"{dist.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
        (info / "entry_points.txt").write_text(f"[skframe]\n{ep_name} = {modname}\n")
        monkeypatch.syspath_prepend(str(root))
        made.append(modname)
        importlib.invalidate_caches()
        return modname

    yield make
    for modname in made:
        sys.modules.pop(modname, None)


GOOD_PLUGIN = """
    import numpy as np
    import skframe

    class Ones:
        def __init__(self, scale=1.0):
            self.scale = scale
        def __call__(self, X, Y=None):
            Y = X if Y is None else Y
            return np.full((X.shape[0], Y.shape[0]), self.scale)

    @skframe.hookimpl
    def register_kernels(register):
        register("ones-kernel", Ones)
"""


def test_builtins_are_registered():
    names = {c.name for c in list_components("sketch")}
    assert {"subsample", "nystrom", "leverage", "gaussian", "psr", "psg", "accumulation", "countsketch", "rff"} <= names
    for c in list_components("sketch"):
        assert c.distribution == "skframe" and c.version == skframe.__version__


def test_third_party_plugin_is_discovered_and_usable(make_dist):
    make_dist("skf-good", GOOD_PLUGIN)
    k = get_kernel("ones-kernel", scale=2.0)
    np.testing.assert_array_equal(k(np.zeros((2, 1)), np.zeros((3, 1))), np.full((2, 3), 2.0))
    comp = next(c for c in list_components("kernel") if c.name == "ones-kernel")
    assert comp.distribution == "skf-good" and comp.version == "1.2.3" and comp.plugin == "myplugin"
    assert comp.as_dict()["distribution"] == "skf-good"
    # and a model assembles it by name
    from skframe.models import SketchedKernelRidge

    X = np.random.default_rng(0).normal(size=(20, 2))
    m = SketchedKernelRidge(kernel="ones-kernel", sketch="subsample", sketch_size=3, random_state=0).fit(X, X[:, 0])
    assert m.predict(X).shape == (20,)


def test_duplicate_name_names_both_providers(make_dist):
    make_dist(
        "skf-dup",
        """
        import skframe

        @skframe.hookimpl
        def register_sketches(register):
            register("psr", dict)
        """,
        ep_name="dupplugin",
    )
    with pytest.raises(DuplicateComponentError) as ei:
        get_plugin_registry()
    msg = str(ei.value)
    assert "'psr'" in msg and "skframe" in msg and "skf-dup" in msg
    assert "SKFRAME_DISABLE_PLUGINS" in msg


def test_duplicate_within_one_plugin(make_dist):
    make_dist(
        "skf-twice",
        """
        import skframe

        @skframe.hookimpl
        def register_losses(register):
            register("my-loss", dict)
            register("MY-LOSS", dict)
        """,
    )
    with pytest.raises(DuplicateComponentError, match="my-loss"):
        get_plugin_registry()


def test_broken_import_is_reported_and_others_keep_working(make_dist):
    make_dist("skf-broken", "raise ImportError('needs libfoo')\n", ep_name="brokenplugin")
    make_dist("skf-good", GOOD_PLUGIN)
    reg = get_plugin_registry()
    broken = {b.plugin: b for b in reg.broken}
    assert "brokenplugin" in broken
    b = broken["brokenplugin"]
    assert b.distribution == "skf-broken" and b.version == "1.2.3" and "needs libfoo" in b.error
    assert "ImportError" in b.as_dict()["error"]
    # the built-ins and the other third-party plugin are unaffected
    assert get_sketch("psr", size=3).name == "psr"
    assert get_kernel("ones-kernel") is not None
    # an unknown name mentions the broken plugin so the user knows where to look
    with pytest.raises(UnknownComponentError, match="brokenplugin"):
        get_kernel("libfoo-kernel")


def test_hook_that_raises_is_reported(make_dist):
    make_dist(
        "skf-raises",
        """
        import skframe

        @skframe.hookimpl
        def register_kernels(register):
            register("half-registered", dict)
            raise RuntimeError("boom in hook")

        @skframe.hookimpl
        def register_sketches(register):
            register("fine-sketch", dict)
        """,
        ep_name="raiser",
    )
    reg = get_plugin_registry()
    errs = [b.error for b in reg.broken if b.plugin == "raiser"]
    assert errs and "boom in hook" in errs[0] and "register_kernels" in errs[0]
    assert "fine-sketch" in {c.name for c in list_components("sketch")}
    assert "psr" in {c.name for c in list_components("sketch")}


def test_invalid_registration_is_reported(make_dist):
    make_dist(
        "skf-invalid",
        """
        import skframe

        @skframe.hookimpl
        def register_kernels(register):
            register("not-callable", 42)
        """,
        ep_name="invalid",
    )
    reg = get_plugin_registry()
    (b,) = [b for b in reg.broken if b.plugin == "invalid"]
    assert "non-callable" in b.error and "not-callable" in b.error


@pytest.mark.parametrize("value", ["1", "all", "myplugin", "skf-good", "other,MYPLUGIN"])
def test_disable_plugins(make_dist, monkeypatch, value):
    make_dist("skf-good", GOOD_PLUGIN)
    monkeypatch.setenv("SKFRAME_DISABLE_PLUGINS", value)
    reset_plugins()
    names = {c.name for c in list_components("kernel")}
    assert "ones-kernel" not in names
    assert "psr" in {c.name for c in list_components("sketch")}  # built-ins are never disabled


@pytest.mark.parametrize("value", ["", "0", "false", "someoneelse"])
def test_disable_plugins_other_values_keep_plugin(make_dist, monkeypatch, value):
    make_dist("skf-good", GOOD_PLUGIN)
    monkeypatch.setenv("SKFRAME_DISABLE_PLUGINS", value)
    reset_plugins()
    assert "ones-kernel" in {c.name for c in list_components("kernel")}


def test_disabling_resolves_a_duplicate(make_dist, monkeypatch):
    make_dist(
        "skf-dup",
        """
        import skframe

        @skframe.hookimpl
        def register_sketches(register):
            register("psr", dict)
        """,
        ep_name="dupplugin",
    )
    monkeypatch.setenv("SKFRAME_DISABLE_PLUGINS", "dupplugin")
    reset_plugins()
    assert get_sketch("psr", size=2).name == "psr"


def test_unknown_names_list_registered_ones():
    with pytest.raises(UnknownComponentError) as ei:
        get_sketch("pssr", size=3)
    msg = str(ei.value)
    assert msg.startswith("unknown sketch 'pssr'; registered sketches:")
    for name in ("accumulation", "countsketch", "gaussian", "psr", "subsample"):
        assert name in msg
    assert "Did you mean 'psr'?" in msg
    assert isinstance(ei.value, LookupError) and isinstance(ei.value, skframe.SkframeError)


def test_unknown_kind_and_params_with_object():
    from skframe.exceptions import InvalidParameterError
    from skframe.registry import get_component

    with pytest.raises(InvalidParameterError, match="kind"):
        get_component("widget", "x")
    with pytest.raises(InvalidParameterError, match="parameters"):
        get_sketch(object(), size=3)
    with pytest.raises(InvalidParameterError, match="invalid parameters"):
        get_sketch("psr", size=3, nonsense=1)


def test_registered_object_remembers_name_and_params():
    from skframe.registry import component_name, component_params

    sk = get_sketch("PSR", size=4, p=0.5)
    assert component_name(sk) == "psr" and component_params(sk) == {"size": 4, "p": 0.5}


def test_reset_plugins_reloads(make_dist):
    assert "ones-kernel" not in {c.name for c in list_components("kernel")}
    make_dist("skf-good", GOOD_PLUGIN)
    assert "ones-kernel" not in {c.name for c in list_components("kernel")}  # cached
    reset_plugins()
    assert "ones-kernel" in {c.name for c in list_components("kernel")}
