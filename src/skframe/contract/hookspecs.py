"""Hook specifications: what a skframe plugin may implement.

A plugin is a module listed under the entry-point group ``skframe`` whose
functions are marked with :data:`hookimpl` (``from skframe.plugin.api import hookimpl``;
also ``skframe.hookimpl``). There is one ``register_*`` hook per component kind of
:data:`skframe.contract.kinds.KIND_TABLE` (``register_kernels``, ``register_sketches``,
``register_losses``, ``register_solvers``, ``register_decoders``,
``register_output_matrices``), plus ``register_state_classes`` and ``register_commands``.
Each ``register_*`` hook receives a ``register`` callback::

    register(name, factory, aliases=())

where ``factory(**params)`` builds a component (a class works). Names and
aliases are case-insensitive and are what a user passes to ``--kernel`` or
``kernel=``; an alias is another name of the same entry (``skframe plugins``
lists it beside the name). A name already registered by an earlier plugin of
another distribution disables the later registration with a warning.

Only the hooks below exist: a function of a plugin module whose name starts with
``register_`` but is not one of them (a misspelling such as ``register_kernel``),
or a hook function not marked with :data:`hookimpl`, makes the plugin broken.

Example plugin module::

    from skframe.plugin.api import hookimpl

    @hookimpl
    def register_kernels(register):
        register("mykernel", MyKernel, aliases=("my-kernel",))
"""

import pluggy

from skframe.contract.kinds import KIND_TABLE

hookspec = pluggy.HookspecMarker("skframe")
hookimpl = pluggy.HookimplMarker("skframe")


def _register_hook(kind):
    """The hook specification of one component kind, written from its row of the kinds table."""

    def spec(register):
        pass

    spec.__name__ = spec.__qualname__ = kind.hook
    spec.__module__ = __name__
    spec.__doc__ = (
        f"Register {kind.label} factories.\n\n"
        f"    :param register: callback ``register(name, factory, aliases=())``; {kind.builds}\n"
        f"        (see :class:`skframe.contract.protocols.{kind.protocol}`).\n"
    )
    return hookspec(spec)


# one register_* hook per kind (register_kernels, register_sketches, register_losses, register_solvers,
# register_decoders, register_output_matrices), each documented from the table
for _kind in KIND_TABLE:
    globals()[_kind.hook] = _register_hook(_kind)
del _kind


@hookspec
def register_state_classes(register):
    """Declare classes whose instances may be stored inside saved models.

    :param register: callback ``register(cls)``. Instances are saved through
        ``obj.to_state()`` (a dict of JSON values and arrays) and rebuilt with
        ``cls.from_state(state)``; a class without these methods is saved from its
        ``__dict__``. Registered components (kernels, sketches, ...) need no
        declaration: they are saved by registered name and parameters.
    """


@hookspec
def register_commands(app):
    """Add sub-commands to the ``skframe`` command line.

    :param app: the root ``typer.Typer`` application; call ``app.command()`` or
        ``app.add_typer()`` on it.
    """
