"""Hook specifications: what a skframe plugin may implement.

A plugin is a module listed under the entry-point group ``skframe`` whose
functions are marked with :data:`skframe.hookimpl`. Each ``register_*`` hook
receives a ``register`` callback::

    register(name, factory)

where ``factory(**params)`` builds a component (a class works). Names are
case-insensitive, must be unique across all installed plugins, and are what a
user passes to ``--kernel`` or ``kernel=``.

Example plugin module::

    import skframe

    @skframe.hookimpl
    def register_kernels(register):
        register("mykernel", MyKernel)
"""

import pluggy

hookspec = pluggy.HookspecMarker("skframe")
hookimpl = pluggy.HookimplMarker("skframe")


@hookspec
def register_kernels(register):
    """Register kernel factories.

    :param register: callback ``register(name, factory)``; ``factory(**params)``
        returns an object with ``__call__(X, Y) -> ndarray (len(X), len(Y))``
        (see :class:`skframe.protocols.Kernel`).
    """


@hookspec
def register_sketches(register):
    """Register sketch factories.

    :param register: callback ``register(name, factory)``; ``factory(size, **params)``
        returns an object with ``draw(n, rng, *, X=None, kernel=None)``
        (see :class:`skframe.protocols.Sketch`).
    """


@hookspec
def register_losses(register):
    """Register loss factories.

    :param register: callback ``register(name, factory)``; ``factory(**params)``
        returns an object with ``value(F, Y)`` and ``gradient(F, Y)``
        (see :class:`skframe.protocols.Loss`).
    """


@hookspec
def register_solvers(register):
    """Register solver factories.

    :param register: callback ``register(name, factory)``; ``factory(**params)``
        returns an object with ``solve(Z, Y, loss, lam, *, M=None, rng=None)``
        (see :class:`skframe.protocols.Solver`).
    """


@hookspec
def register_decoders(register):
    """Register decoder factories.

    :param register: callback ``register(name, factory)``; ``factory(**params)``
        returns an object with ``decode(G, **context)``
        (see :class:`skframe.protocols.Decoder`).
    """


@hookspec
def register_commands(app):
    """Add sub-commands to the ``skframe`` command line.

    :param app: the root ``typer.Typer`` application; call ``app.command()`` or
        ``app.add_typer()`` on it.
    """
