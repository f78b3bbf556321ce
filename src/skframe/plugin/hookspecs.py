"""Hook specifications: what a skframe plugin may implement.

A plugin is a module listed under the entry-point group ``skframe`` whose
functions are marked with :data:`hookimpl` (``from skframe.plugin.api import hookimpl``;
also ``skframe.hookimpl``). Each ``register_*`` hook
receives a ``register`` callback::

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

hookspec = pluggy.HookspecMarker("skframe")
hookimpl = pluggy.HookimplMarker("skframe")


@hookspec
def register_kernels(register):
    """Register kernel factories.

    :param register: callback ``register(name, factory, aliases=())``; ``factory(**params)``
        returns an object with ``__call__(X, Y) -> ndarray (len(X), len(Y))``
        (see :class:`skframe.plugin.protocols.Kernel`).
    """


@hookspec
def register_sketches(register):
    """Register sketch factories.

    :param register: callback ``register(name, factory, aliases=())``; ``factory(size, **params)``
        returns an object with ``draw(n, rng, *, X=None, kernel=None)``
        (see :class:`skframe.plugin.protocols.Sketch`).
    """


@hookspec
def register_losses(register):
    """Register loss factories.

    :param register: callback ``register(name, factory, aliases=())``; ``factory(**params)``
        returns an object with ``value(F, Y)`` and ``gradient(F, Y)``
        (see :class:`skframe.plugin.protocols.Loss`).
    """


@hookspec
def register_solvers(register):
    """Register solver factories.

    :param register: callback ``register(name, factory, aliases=())``; ``factory(**params)``
        returns an object with ``solve(problem, loss, lam, *, M=None, rng=None, init=None, progress=None)``
        returning a :class:`skframe.plugin.problems.SolveResult`
        (see :class:`skframe.plugin.protocols.Solver`).
    """


@hookspec
def register_decoders(register):
    """Register decoder factories.

    :param register: callback ``register(name, factory, aliases=())``; ``factory(**params)``
        returns an object with ``decode(G, **context)``
        (see :class:`skframe.plugin.protocols.Decoder`).
    """


@hookspec
def register_output_matrices(register):
    """Register output-matrix factories (the ``M`` of decomposable kernels ``k(x, x') M``).

    :param register: callback ``register(name, factory, aliases=())``; ``factory(**params)``
        returns an object with ``matrix(d=None, *, Y=None, quantiles=None) -> ndarray (d, d)``
        (see :class:`skframe.plugin.protocols.OutputMatrix`).
    """


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
