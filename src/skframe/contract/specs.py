"""Component specs: which registered component an estimator uses, and with which parameters.

An estimator stores a :class:`ComponentSpec` for each of its components and saves
that, so models are saved and rebuilt by name, whether the component was given by
name or built directly (``GaussianKernel(gamma=1.0)``). A spec is a plain value: the
registry finds the spec of an object (:func:`skframe.contract.registry.spec_of`) and builds
the object of a spec (:func:`skframe.contract.registry.build_component`, or any ``get_*``
function, which accept a spec in place of a name).
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["ComponentSpec"]


@dataclass(frozen=True)
class ComponentSpec:
    """(kind, registered name, params) of a component.

    >>> spec = ComponentSpec("kernel", "gaussian", {"gamma": 0.5})
    >>> ComponentSpec.from_dict(spec.to_dict()) == spec
    True
    """

    kind: str
    name: str
    params: dict = field(default_factory=dict)

    def to_dict(self):
        """JSON-ready dict."""
        return {"kind": self.kind, "name": self.name, "params": dict(self.params)}

    @classmethod
    def from_dict(cls, data):
        """Inverse of :meth:`to_dict`."""
        return cls(str(data["kind"]), str(data["name"]), dict(data.get("params") or {}))

    def to_state(self):
        """The state saved in model files (see :mod:`skframe.persistence`)."""
        return self.to_dict()

    @classmethod
    def from_state(cls, state):
        """Inverse of :meth:`to_state`."""
        return cls.from_dict(state)
