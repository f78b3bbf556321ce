"""The conformance kit: checks that a component honours the plugin contract.

A plugin calls these in its own tests, one test per property with
:func:`skframe.plugin.testing.parametrize_with_checks`, or all at once::

    from skframe.plugin.api import check_component

    def test_my_kernel_conforms():
        check_component(MyKernel(gamma=0.5))

:func:`check_component` finds the kind of the component (from its tags or its methods) and runs
:func:`check_kernel`, :func:`check_sketch`, :func:`check_loss`, :func:`check_solver`,
:func:`check_decoder` or :func:`check_output_matrix_component`. Each check evaluates the
component on small random data and raises one :class:`ConformanceError` (a
:class:`skframe.exceptions.PluginError`) listing every property that fails, one line each, starting
with ``check_<kind>(<class>): <property>:`` and saying what to fix (:data:`PROPERTIES` names them, per
kind). A check changes nothing outside the component: a component no plugin registers is registered,
for its save-and-load property, in a copy of the registry seen by the checking thread only. What is
checked:

* every kind: its tags are well-formed (:func:`check_tags`); its ``params`` are JSON-ready; the
  parameters a model file saves (``params``, else ``get_params()``, else those it was built with by
  name, else its constructor's arguments read back from the attributes of the same names:
  :func:`skframe.contract.registry.spec_of`) rebuild a component that computes the same values on a
  probe, by the rule :func:`skframe.persistence.save` applies
  (:func:`skframe.persistence.fidelity.round_trip_problem`), with the same ``repr``; it is saved to a
  model file and loaded back (``save`` / ``load``) with the same behaviour — a component that no
  installed plugin registers is registered for the duration of the check, in a copy of the registry.
  A component fails both when it stores a constructor argument under another name and has no
  ``params``: the fix is to store the constructor's arguments as attributes of the same names, or to
  give it a ``params`` property returning them;
* kernels: shapes of Gram blocks, ``k(X, Y) = k(Y, X)^T``, symmetry and positive
  semi-definiteness of ``k(X, X)``, ``diag``, ``matvec`` and ``block_bytes`` where present,
  and each tag: ``normalized`` (unit diagonal), ``is_linear`` (``X Y^T``), ``dtypes`` (float32
  blocks), ``spectral_sampler`` (random Fourier features approximate the kernel) and
  ``thread_safe`` (calls from several threads at once give the one-call values), and skframe's
  sketch product with it;
  ``Y=None`` is checked only where ``__call__`` gives ``Y`` a default, and the component's ``params``
  only where it has them (a kernel whose constructor's arguments are attributes of the same names, or
  that takes none, may have none);
* sketches: ``draw`` gives a ``SketchMatrix`` of ``size`` rows over n columns, determined by
  the random generator (``fit_features`` and ``transform`` for a ``feature_map``);
* losses: shapes, finite-difference gradients, convexity, the declared Lipschitz constant, the
  square-loss tag, and, for a loss with a Fenchel ``dual``, dual consistency: the Fenchel-Young
  inequality on the dual domain, its equality at ``alpha = -gradient``, ``quad``/``l1`` as
  declared and a projection onto the domain;
* solvers: a ``SolveResult`` whose weights minimise the square-loss objective of a small problem
  (with and without an output matrix ``M``, from zeros and from the optimum), no run state left
  on the solver, the same result on a streamed problem unless the tags say ``in_memory``, and a
  refusal (a skframe error) of a loss or problem that its ``requires_*`` / ``in_memory`` tags
  exclude;
* decoders: the top-k candidates and their scores against the exhaustive search (``candidates``
  tag), or the surrogate mapped through the basis vectors;
* output matrices: a d x d symmetric positive semi-definite matrix.
"""

from __future__ import annotations

from skframe.plugin.checks._common import ConformanceError, check_tags
from skframe.plugin.checks._decoding import check_decoder, check_output_matrix_component
from skframe.plugin.checks._dispatch import PROPERTIES, check_component
from skframe.plugin.checks._kernel import check_kernel
from skframe.plugin.checks._loss import check_loss
from skframe.plugin.checks._sketch import check_sketch
from skframe.plugin.checks._solver import check_solver

__all__ = [
    "check_component",
    "check_kernel",
    "check_sketch",
    "check_loss",
    "check_solver",
    "check_decoder",
    "check_output_matrix_component",
    "check_tags",
    "ConformanceError",
    "PROPERTIES",
]
