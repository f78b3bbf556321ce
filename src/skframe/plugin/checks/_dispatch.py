"""The kit's dispatch: :func:`check_component` runs the check of a component's kind, found from the
kinds table (see :mod:`skframe.plugin.checks`)."""

from __future__ import annotations

from skframe.contract.kinds import KIND_TABLE
from skframe.contract.tags import kind_of
from skframe.exceptions import PluginError
from skframe.plugin.checks._common import COMMON_PROPERTIES
from skframe.plugin.checks._decoding import check_decoder, check_output_matrix_component
from skframe.plugin.checks._kernel import check_kernel
from skframe.plugin.checks._loss import check_loss
from skframe.plugin.checks._sketch import check_sketch
from skframe.plugin.checks._solver import check_solver

__all__ = ["PROPERTIES", "check_component"]


_BY_NAME = {check.__name__: check for check in (check_kernel, check_sketch, check_loss, check_solver, check_decoder,
                                                check_output_matrix_component)}
_CHECKS = {kind.name: _BY_NAME[kind.check] for kind in KIND_TABLE}
#: {kind: the properties its check evaluates, each a name of ConformanceError's failures}
PROPERTIES = {kind: COMMON_PROPERTIES + check.properties for kind, check in _CHECKS.items()}


def check_component(component, kind=None, **kwargs):
    """Run the check of the component's kind (found from its tags or methods) on ``component``.

    Parameters
    ----------
    component : component object or class
    kind : str, optional
        ``"kernel"``, ``"sketch"``, ``"loss"``, ``"solver"``, ``"decoder"`` or ``"output_matrix"``.
    **kwargs
        Passed to the check (``params=`` for a class, data such as ``X=`` for a kernel).

    Returns
    -------
    tags
        The component's tags, checked.

    Raises
    ------
    ConformanceError
        Listing every failed property, each named with its fix.

    Examples
    --------
    >>> import numpy as np
    >>> from skframe.plugin.api import Kernel, KernelTags, repr_from_params
    >>> class Cosine(Kernel):
    ...     __skframe_tags__ = KernelTags(normalized=True, thread_safe=True)
    ...     params = {}
    ...     __repr__ = repr_from_params
    ...     def __call__(self, X, Y=None):
    ...         Y = X if Y is None else Y
    ...         nx, ny = np.linalg.norm(X, axis=1), np.linalg.norm(Y, axis=1)
    ...         return (X @ Y.T) / np.outer(nx, ny)
    >>> check_component(Cosine()).normalized
    True
    """
    kind = kind or kind_of(component)
    if kind not in _CHECKS:
        raise PluginError(f"{component!r} is of no known component kind; pass kind= (one of {', '.join(_CHECKS)})")
    return _CHECKS[kind](component, **kwargs)
