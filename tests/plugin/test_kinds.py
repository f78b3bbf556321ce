"""One table of the six component kinds: the hook specifications, the loader, the registry, the tags, the protocols
and the conformance kit all read it."""

import inspect

from skframe.contract import hookspecs, loader, protocols, registry, tags
from skframe.contract.kinds import HOOK_OF_KIND, KIND_TABLE, KINDS, kind_label, kind_plural
from skframe.plugin import checks
from skframe.plugin.checks import _dispatch


def test_the_table_holds_the_six_kinds():
    assert KINDS == ("kernel", "sketch", "loss", "solver", "decoder", "output_matrix")
    assert kind_label("output_matrix") == "output matrix" and kind_plural("sketch") == "sketches"


def test_every_part_of_the_contract_reads_the_table():
    for kind in KIND_TABLE:
        spec = getattr(hookspecs, kind.hook)
        assert spec.skframe_spec is not None and list(inspect.signature(spec).parameters) == ["register"]
        assert spec.__doc__.startswith(f"Register {kind.label} factories.") and kind.protocol in spec.__doc__
        assert protocols.PROTOCOL_OF_KIND[kind.name].__name__ == kind.protocol
        assert tags.TAGS_OF_KIND[kind.name].__name__ == kind.tags
        assert _dispatch._CHECKS[kind.name].__name__ == kind.check
        assert set(checks.PROPERTIES[kind.name]) >= {"tags", "params", "save and load"}
    assert loader.HOOK_NAMES[:6] == tuple(HOOK_OF_KIND.values())
    assert registry.KINDS is KINDS


def test_an_object_is_recognised_by_the_methods_of_its_kind():
    class Draws:
        def draw(self, n, rng, *, X=None, kernel=None): ...

    class Values:
        def value(self, F, Y): ...

        def gradient(self, F, Y): ...

    assert tags.kind_of(Draws()) == "sketch" and tags.kind_of(Values()) == "loss"
    assert tags.kind_of(lambda X, Y: X) == "kernel"
    assert registry._looks_like("sketch", Draws()) and not registry._looks_like("loss", Draws())
