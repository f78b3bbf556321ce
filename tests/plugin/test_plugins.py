"""Plugin system: real entry points from a temporary ``*.dist-info`` directory on sys.path.

Each test writes a tiny distribution (METADATA + entry_points.txt + a module) into
``tmp_path``, puts it on sys.path and reloads the plugin registry, so discovery
goes through ``importlib.metadata`` exactly as for an installed third party.
"""

import numpy as np
import pytest

import skframe
from skframe.contract.loader import get_plugin_registry, reset_plugins
from skframe.contract.registry import get_kernel, get_sketch, list_components
from skframe.exceptions import UnknownComponentError

pytestmark = pytest.mark.usefixtures("fresh_registry")  # fixtures in conftest.py


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
    comps = {c.name: c for c in list_components("sketch")}
    assert {"subsample", "leverage", "gaussian", "psr", "psg", "accumulation", "countsketch", "rff"} <= set(comps)
    for c in comps.values():
        assert c.distribution == "skframe" and c.version == skframe.__version__
    # an alias is stored once, on its entry, not as a second component
    assert "nystrom" not in comps and comps["subsample"].aliases == ("nystrom",)
    assert list_components("kernel")[0].kind == "kernel"
    assert {"identity", "quantile", "graph", "covariance"} <= {c.name for c in list_components("output_matrix")}


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


DUP_PSR = """
    import skframe

    @skframe.hookimpl
    def register_sketches(register):
        register("psr", dict)
        register("dup-only-sketch", dict)
"""


def test_collision_with_builtin_disables_the_later_one_with_one_warning(make_dist):
    from skframe.exceptions import PluginCollisionWarning

    make_dist("skf-dup", DUP_PSR, ep_name="dupplugin")
    with pytest.warns(PluginCollisionWarning) as record:
        reg = get_plugin_registry()
    msgs = [str(w.message) for w in record if issubclass(w.category, PluginCollisionWarning)]
    assert len(msgs) == 1
    msg = msgs[0]
    assert "'psr'" in msg and "skframe" in msg and "skf-dup" in msg and "SKFRAME_DISABLE_PLUGINS=skf-dup" in msg
    # the built-in wins, the plugin's other components still work
    assert reg.lookup("sketch", "psr").distribution == "skframe"
    assert get_sketch("psr", size=3).name == "psr"
    assert get_sketch("dup-only-sketch") == {}
    (col,) = reg.collisions
    assert col.as_dict()["name"] == "psr" and "skf-dup" in col.disabled and "skframe" in col.kept
    # the message is printed once per process, even when the plugins are loaded again
    reset_plugins()
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", PluginCollisionWarning)
        assert get_plugin_registry().collisions  # still recorded, not warned again


def test_collision_between_two_third_parties(make_dist, monkeypatch):
    src = """
    import skframe

    class K:
        def __init__(self, who="{who}"):
            self.who = who

    @skframe.hookimpl
    def register_kernels(register):
        register("shared-kernel", K, aliases=("{alias}",))
    """
    make_dist("skf-alpha", src.format(who="alpha", alias="alpha-kernel"), ep_name="alpha")
    make_dist("skf_beta", src.format(who="beta", alias="beta-kernel"), ep_name="beta")
    from skframe.exceptions import PluginCollisionWarning

    with pytest.warns(PluginCollisionWarning, match="SKFRAME_DISABLE_PLUGINS=skf-alpha"):
        assert get_kernel("shared-kernel").who == "alpha"  # the first distribution (by name) wins
    with pytest.raises(UnknownComponentError):
        get_kernel("beta-kernel")  # disabled together with its component
    # the advice works: skipping alpha (by distribution name, any spelling) gives beta's
    for value in ("skf_alpha", "SKF-Alpha", "alpha", "skf-alpha:alpha"):
        monkeypatch.setenv("SKFRAME_DISABLE_PLUGINS", value)
        reset_plugins()
        assert get_kernel("shared-kernel").who == "beta"
        assert not get_plugin_registry().collisions


def test_alias_collision_drops_only_the_alias(make_dist):
    from skframe.exceptions import PluginCollisionWarning

    make_dist(
        "skf-alias",
        """
        import skframe

        @skframe.hookimpl
        def register_kernels(register):
            register("my-gauss", dict, aliases=("rbf", "my-g"))
        """,
    )
    with pytest.warns(PluginCollisionWarning, match="'rbf'"):
        comp = get_plugin_registry().lookup("kernel", "my-gauss")
    assert comp.aliases == ("my-g",)
    assert type(get_kernel("rbf")).__name__ == "GaussianKernel"


def test_collision_keeps_cli_working(make_dist, monkeypatch):
    import json

    from typer.testing import CliRunner

    from skframe.cli import app

    make_dist("skf-dup", DUP_PSR, ep_name="dupplugin")
    reset_plugins()  # importing skframe.cli may have loaded the plugins already
    from skframe.exceptions import PluginCollisionWarning

    with pytest.warns(PluginCollisionWarning):
        result = CliRunner().invoke(app, ["plugins", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout[result.stdout.index("{"):])
    assert any(c["name"] == "psr" for c in out["collisions"])
    gauss = next(c for c in out["components"] if c["kind"] == "kernel" and c["name"] == "gaussian")
    assert gauss["aliases"] == ["rbf"]
    text = CliRunner().invoke(app, ["plugins"])
    assert text.exit_code == 0 and "collisions" in text.stdout and "rbf" in text.stdout


def test_duplicate_within_one_plugin_is_reported(make_dist):
    make_dist(
        "skf-twice",
        """
        import skframe

        @skframe.hookimpl
        def register_losses(register):
            register("my-loss", dict)
            register("MY-LOSS", dict)
        """,
        ep_name="twice",
    )
    reg = get_plugin_registry()
    (b,) = [b for b in reg.broken if b.plugin == "twice"]
    assert "my-loss" in b.error and "twice" in b.error
    assert reg.lookup("loss", "square") is not None


@pytest.mark.parametrize(
    "source, hook, hint",
    [
        ("@skframe.hookimpl\ndef register_kernel(register):\n    register('typo-kernel', dict)\n",
         "register_kernel", "register_kernels"),
        ("def register_kernel(register):\n    register('typo-kernel', dict)\n", "register_kernel", "register_kernels"),
        ("def register_kernels(register):\n    register('typo-kernel', dict)\n", "register_kernels", "hookimpl"),
        ("@skframe.hookimpl\ndef kernels(register):\n    register('typo-kernel', dict)\n", "kernels",
         "not a skframe hook"),
    ],
    ids=["marked-misspelled", "unmarked-misspelled", "unmarked-known", "marked-unknown"],
)
def test_unknown_hook_is_reported(make_dist, source, hook, hint):
    make_dist(
        "skf-typo",
        "import skframe\n\n@skframe.hookimpl\ndef register_losses(register):\n    register('typo-loss', dict)\n\n"
        + source,
        ep_name="typo",
    )
    make_dist("skf-good", GOOD_PLUGIN)
    reg = get_plugin_registry()
    (b,) = [b for b in reg.broken if b.plugin == "typo"]
    assert b.distribution == "skf-typo" and repr(hook) in b.error and hint in b.error
    # the broken plugin registers nothing; the others keep working
    assert reg.lookup("loss", "typo-loss") is None and reg.lookup("kernel", "typo-kernel") is None
    assert get_kernel("ones-kernel") is not None and get_sketch("psr", size=2).name == "psr"


def test_imported_register_function_is_not_a_hook(make_dist):
    make_dist(
        "skf-imports",
        """
        import skframe
        from skframe.persistence import register_class as register_something

        @skframe.hookimpl
        def register_kernels(register):
            register("imports-kernel", dict)
        """,
    )
    assert get_kernel("imports-kernel") == {}
    assert not get_plugin_registry().broken


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


@pytest.mark.parametrize("value", ["1", "all", "myplugin", "skf-good", "other,MYPLUGIN", "skf_good",
                                   "skf-good:myplugin"])
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
    import warnings

    make_dist("skf-dup", DUP_PSR, ep_name="dupplugin")
    monkeypatch.setenv("SKFRAME_DISABLE_PLUGINS", "dupplugin")
    reset_plugins()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert get_sketch("psr", size=2).name == "psr"
    assert not get_plugin_registry().collisions


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
    from skframe.contract.registry import get_component
    from skframe.exceptions import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="kind"):
        get_component("widget", "x")
    with pytest.raises(InvalidParameterError, match="parameters"):
        get_sketch(object(), size=3)
    with pytest.raises(InvalidParameterError, match="invalid parameters"):
        get_sketch("psr", size=3, nonsense=1)


def test_registered_object_remembers_name_and_params():
    from skframe.contract.registry import component_name, component_params

    sk = get_sketch("PSR", size=4, p=0.5)
    assert component_name(sk) == "psr" and component_params(sk) == {"size": 4, "p": 0.5}
    assert not any(a.startswith("_skframe") for a in vars(sk))  # nothing is stuck onto the object


def test_reset_plugins_reloads(make_dist):
    assert "ones-kernel" not in {c.name for c in list_components("kernel")}
    make_dist("skf-good", GOOD_PLUGIN)
    assert "ones-kernel" not in {c.name for c in list_components("kernel")}  # cached
    reset_plugins()
    assert "ones-kernel" in {c.name for c in list_components("kernel")}
