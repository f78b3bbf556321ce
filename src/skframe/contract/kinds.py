"""The six component kinds, in one table: name, hook, protocol, tags class, check and what an object of the kind does.

Every part of the contract that lists the kinds reads them from :data:`KIND_TABLE`: the hook specifications
(:mod:`skframe.contract.hookspecs`, one ``register_*`` hook per row), the loader (which hook fills which kind),
the registry (labels and plurals of its messages, what an object of a kind must have), the tags
(:data:`skframe.contract.tags.TAGS_OF_KIND`), the protocols (:data:`skframe.contract.protocols.PROTOCOL_OF_KIND`)
and the conformance kit (:func:`skframe.plugin.checks.check_component`). A new kind is one new row here, plus its
protocol, tags class and check.

The table names its classes and check functions (their modules import it, not the reverse), so it imports
nothing and every module of the contract can read it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Kind", "KIND_TABLE", "KINDS", "KIND", "HOOK_OF_KIND", "kind_label", "kind_plural"]


@dataclass(frozen=True)
class Kind:
    """One component kind.

    Attributes
    ----------
    name : str
        The kind, as ``get_component(kind, ...)`` and ``skframe plugins --json`` spell it.
    hook : str
        The hook a plugin implements to register factories of the kind.
    protocol : str
        Its abstract base in :mod:`skframe.contract.protocols`.
    tags : str
        Its tags class in :mod:`skframe.contract.tags`.
    check : str
        Its check in the conformance kit (:mod:`skframe.plugin.checks`).
    methods : tuple of tuple of str
        What an object of the kind has: one tuple of method names per accepted form (a sketch draws, or fits
        features); ``("__call__",)`` for a kernel.
    builds : str
        What the registered factory returns, for the hook's documentation.
    label, plural : str
        The kind in messages.
    """

    name: str
    hook: str
    protocol: str
    tags: str
    check: str
    methods: tuple
    builds: str
    label: str
    plural: str


KIND_TABLE = (
    Kind("kernel", "register_kernels", "Kernel", "KernelTags", "check_kernel", (("__call__",),),
         "``factory(**params)`` returns an object with ``__call__(X, Y) -> ndarray (len(X), len(Y))``",
         "kernel", "kernels"),
    Kind("sketch", "register_sketches", "Sketch", "SketchTags", "check_sketch", (("draw",), ("fit_features",)),
         "``factory(size, **params)`` returns an object with ``draw(n, rng, *, X=None, kernel=None)``",
         "sketch", "sketches"),
    Kind("loss", "register_losses", "Loss", "LossTags", "check_loss", (("value", "gradient"),),
         "``factory(**params)`` returns an object with ``value(F, Y)`` and ``gradient(F, Y)``",
         "loss", "losses"),
    Kind("solver", "register_solvers", "Solver", "SolverTags", "check_solver", (("solve",),),
         "``factory(**params)`` returns an object with ``solve(problem, loss, lam, *, M=None, rng=None, "
         "init=None, progress=None)`` returning a :class:`skframe.contract.problems.SolveResult`",
         "solver", "solvers"),
    Kind("decoder", "register_decoders", "Decoder", "DecoderTags", "check_decoder", (("decode",),),
         "``factory(**params)`` returns an object with ``decode(G, **context)``",
         "decoder", "decoders"),
    Kind("output_matrix", "register_output_matrices", "OutputMatrix", "OutputMatrixTags",
         "check_output_matrix_component", (("matrix",),),
         "``factory(**params)`` returns an object with ``matrix(d=None, *, Y=None, quantiles=None) -> ndarray "
         "(d, d)``, the ``M`` of decomposable kernels ``k(x, x') M``",
         "output matrix", "output matrices"),
)

#: the kind names, in the order plugins are registered and listed
KINDS = tuple(k.name for k in KIND_TABLE)
#: {kind name: Kind}
KIND = {k.name: k for k in KIND_TABLE}
#: {kind name: the hook registering it}
HOOK_OF_KIND = {k.name: k.hook for k in KIND_TABLE}


def kind_label(kind):
    """The kind in messages: ``"output matrix"`` for ``"output_matrix"``."""
    return KIND[kind].label if kind in KIND else kind


def kind_plural(kind):
    """The plural of the kind in messages: ``"sketches"``, ``"output matrices"``."""
    return KIND[kind].plural if kind in KIND else kind + "s"
