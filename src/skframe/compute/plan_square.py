"""The plan's rule for the square loss's solver: closed form from the m x m sums, or conjugate gradients.

The closed form (the direct solver) accumulates ``B^T B``: n m^2 multiply-adds, and factors an m x m matrix.
Preconditioned conjugate gradients over Nyström centres (:class:`skframe_solvers.pcg.NystromPCG`, Falkon's
preconditioner) never form it: each step is one fused pass ``K^T (K v)`` over the rows (n m kernel entries, each
computed once) and the preconditioner is one m x m array (two Cholesky factors sharing it). With at most
:data:`PCG_MAX_PASSES` passes, the passes cost ``25 n m`` kernel entries against the sums' ``n m^2``
multiply-adds; a kernel entry (its d = 10 squared differences, one exponential and two multiply-adds) costs
about as much as 20 to 30 multiply-adds of BLAS, so the sums cost more from about m = 1 000. The rule keeps the
closed form up to :data:`PCG_MIN_CENTRES` (every automatic size, m <= 1 000, is unchanged: the closed form is
exact, conjugate gradients stop at a residual) and finds conjugate gradients cheaper above, on the CPU, for
sketches that sample their m points (Nyström), when the m x m array fits the memory budget
(:func:`cheaper_square_solver`).

The estimators solve the square loss in closed form at every size: the plan's reason
(:func:`choose_square_solver`) names the closed form, which is what the fit runs, and adds where conjugate
gradients would cost less, to be called from Python (:meth:`skframe_solvers.pcg.NystromPCG.solve_centres`).

An m whose m x m array does not fit the budget needs a low-rank preconditioner (EigenPro: Ma and Belkin,
"Diving into the shallows: a computational perspective on large-scale shallow learning", NeurIPS 2017), which
is not offered here.
"""

from __future__ import annotations

from skframe.compute.memory import format_bytes

__all__ = ["PCG_MIN_CENTRES", "PCG_MAX_PASSES", "cheaper_square_solver", "choose_square_solver"]

#: centres from which the square loss over Nyström centres is solved by conjugate gradients (see the module)
PCG_MIN_CENTRES = 4000
#: passes over the rows the conjugate gradients may take (``K^T y`` included)
PCG_MAX_PASSES = 25


def cheaper_square_solver(n, m, s_prime, budget, backend):
    """``(solver, reason)``: the square loss's cheaper solver by the cost rule, ``"closed-form"`` or ``"pcg"``.

    Parameters
    ----------
    n : int
        Training rows.
    m : int or None
        Sketch size (None: unknown, e.g. a feature map).
    s_prime : int or None
        Sampled points of the sketch (Nyström: m).
    budget : int
        Memory budget in bytes.
    backend : str
        ``"numpy"`` or ``"cupy"``.

    >>> cheaper_square_solver(10**6, 1000, 1000, 8 * 10**9, "numpy")[0]
    'closed-form'
    >>> solver, reason = cheaper_square_solver(10**6, 10**4, 10**4, 8 * 10**9, "numpy")
    >>> solver, reason.split(";")[1]
    ('pcg', ' the m x m preconditioner (800 MB) fits the budget (8 GB)')
    """
    if m is None or s_prime is None or s_prime > m:
        return "closed-form", "the sketch does not sample its m points (conjugate gradients run over Nyström centres)"
    if str(backend).lower() == "cupy":
        return "closed-form", "the GPU forms the m x m sums fast"
    if m < PCG_MIN_CENTRES:
        return "closed-form", f"m = {m} < {PCG_MIN_CENTRES} centres: the exact closed form costs little more"
    square = 8 * m * m
    if square > budget:
        return "closed-form", (f"the m x m preconditioner ({format_bytes(square)}) exceeds the budget "
                               f"({format_bytes(budget)}); a low-rank preconditioner is not offered")
    return "pcg", (f"m = {m} >= {PCG_MIN_CENTRES} Nyström centres: {PCG_MAX_PASSES} passes of n m = {n * m:.0e} "
                   f"kernel entries cost less than the n m^2 = {n * m * m:.0e} multiply-adds of the sums; the m x m "
                   f"preconditioner ({format_bytes(square)}) fits the budget ({format_bytes(budget)})")


def choose_square_solver(n, m, s_prime, budget, backend):
    """``(solver, reason)`` of the square loss in a fit: ``"closed-form"``, the solver the estimators run.

    The parameters are those of :func:`cheaper_square_solver`; where it finds conjugate gradients cheaper, the
    reason says so and names :meth:`skframe_solvers.pcg.NystromPCG.solve_centres`, which solves over the
    centres from Python (the estimators' ``fit`` does not call it).

    >>> solver, reason = choose_square_solver(10**6, 10**4, 10**4, 8 * 10**9, "numpy")
    >>> solver, reason.split(";")[0]
    ('closed-form', 'the estimators solve in closed form')
    """
    cheaper, why = cheaper_square_solver(n, m, s_prime, budget, backend)
    if cheaper == "closed-form":
        return "closed-form", why
    return "closed-form", (f"the estimators solve in closed form; conjugate gradients over the centres would cost "
                           f"less ({why}): skframe_solvers.pcg.NystromPCG.solve_centres runs them from Python")
