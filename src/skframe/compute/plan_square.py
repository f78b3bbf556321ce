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

The plan's choice (:func:`choose_square_solver`) is what the fit runs: where it says ``"pcg"``,
:class:`skframe.models.SketchedKernelRidge` keeps the sketch's m sampled rows as centres and solves over them
with the registered ``"pcg"`` solver (:mod:`skframe.models._fit_square`), never forming the n x m features; the
fit's ``solver_info_`` holds the residual, the passes and the stop reason. :func:`grown_auto_size` would grow
the automatic size past the sqrt(n) rule's cap of 1 000 where the conjugate gradients run; it is off
(:data:`PCG_AUTO_GROW`: measured on a public table of 261 877 rows, more centres did not pay for their passes).

An m whose m x m array does not fit the budget needs a low-rank preconditioner (the idea of EigenPro: Ma and
Belkin, "Diving into the shallows: a computational perspective on large-scale shallow learning", NeurIPS 2017;
Abedsoltan, Belkin and Pandit, "Toward large kernel models", ICML 2023): :class:`skframe_solvers.pcg.NystromPCG`
takes one (``preconditioner="auto"``) where Falkon's factor exceeds the memory budget. Neither the closed form's
sums nor Falkon's factor fit there, so the plan chooses conjugate gradients with it (:func:`cheaper_square_solver`)
when its ``O(m q)`` bytes (:func:`preconditioner_bytes`) fit the budget, and sizes the fit's
memory from it (:func:`pcg_peak_bytes`) instead of from m x m sums: a given m beyond m^2 memory runs, with fewer
passes' worth of accuracy than the full factor gives where the kernel has more than q strong directions (the
docs of the solvers give the figures).
"""

from __future__ import annotations

import math

from skframe.compute.memory import format_bytes
from skframe.compute.plan_rules import AUTO_FACTOR, AUTO_MAX

__all__ = ["PCG_MIN_CENTRES", "PCG_MAX_PASSES", "PCG_AUTO_FACTOR", "PCG_AUTO_MAX", "PCG_BUDGET_SHARE", "PCG_AUTO_GROW",
           "LOWRANK_SUBSAMPLE", "LOWRANK_RANK", "cheaper_square_solver", "choose_square_solver", "grown_auto_size",
           "lowrank_bytes", "lowrank_sizes", "pcg_peak_bytes", "preconditioner_bytes"]

#: centres from which the square loss over Nyström centres is solved by conjugate gradients (see the module)
PCG_MIN_CENTRES = 4000
#: passes over the rows the conjugate gradients may take (``K^T y`` included)
PCG_MAX_PASSES = 25


#: the low-rank preconditioner's sub-sampled centres and rank at most (:func:`lowrank_sizes`)
LOWRANK_SUBSAMPLE, LOWRANK_RANK = 4000, 400


def lowrank_sizes(m, subsample=None, rank=None):
    """``(s, q)``: the low-rank preconditioner's sub-sampled centres (default ``min(m, 4000)``) and rank (default
    ``min(s - 1, 400)``) for m centres.

    >>> lowrank_sizes(10**5), lowrank_sizes(1000, rank=50)
    ((4000, 400), (1000, 50))
    """
    s = min(int(m), LOWRANK_SUBSAMPLE) if subsample is None else subsample
    q = min(s - 1, LOWRANK_RANK) if rank is None else rank
    return s, q


def lowrank_bytes(m, s, q):
    """Bytes the low-rank preconditioner holds at its peak: ``Phi`` (m x q, which becomes ``Q`` in place), the
    sub-sampled kernel ``K_ss`` (s x s) and its eigenvectors (s x (q + 1)).

    >>> lowrank_bytes(10**5, *lowrank_sizes(10**5)) / 1e6  # against 80 000 MB for Falkon's factor
    460.832
    """
    return 8 * (m * q + s * s + s * (q + 1))


def preconditioner_bytes(m, budget):
    """``(kind, bytes)`` of the conjugate gradients' preconditioner over m centres within ``budget``: Falkon's
    m x m factor (``"falkon"``) where its 8 m^2 bytes fit, else the low-rank one (``"lowrank"``, at
    :func:`lowrank_sizes`), which may not fit either.

    >>> preconditioner_bytes(10**4, 8 * 10**9), preconditioner_bytes(10**5, 8 * 10**9)
    (('falkon', 800000000), ('lowrank', 460832000))
    """
    square = 8 * int(m) * int(m)
    if square <= budget:
        return "falkon", square
    return "lowrank", lowrank_bytes(m, *lowrank_sizes(m))


def pcg_peak_bytes(m, n_features, n_outputs, preconditioner, block_bytes, cores=2):
    """Peak bytes of a conjugate-gradient fit over m centres beyond the data: the preconditioner's bytes, the
    centres, the solver's m x k vectors (about ten), the fused pass's per-thread sums and one kernel block of
    ``block_bytes`` (the blocked pass's; the compiled one needs less)."""
    k = max(int(n_outputs), 1)
    return int(preconditioner + 8 * m * (int(n_features or 1) + (10 + int(cores)) * k) + int(block_bytes))


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
    >>> solver, reason = cheaper_square_solver(10**6, 10**5, 10**5, 8 * 10**9, "numpy")  # beyond m^2 memory
    >>> solver, reason.split("; ")[1].split(" (")[0]
    ('pcg', 'a low-rank preconditioner of rank 400 from 4000 sub-sampled centres')
    """
    if m is None or s_prime is None or s_prime > m:
        return "closed-form", "the sketch does not sample its m points (conjugate gradients run over Nyström centres)"
    if str(backend).lower() == "cupy":
        return "closed-form", "the GPU forms the m x m sums fast"
    if m < PCG_MIN_CENTRES:
        return "closed-form", f"m = {m} < {PCG_MIN_CENTRES} centres: the exact closed form costs little more"
    square = 8 * m * m
    kind, need = preconditioner_bytes(m, budget)
    if kind == "lowrank":
        s, q = lowrank_sizes(m)
        if need > budget:
            return "closed-form", (f"neither the m x m preconditioner ({format_bytes(square)}) nor a low-rank one "
                                   f"({format_bytes(need)}) fits the budget ({format_bytes(budget)})")
        return "pcg", (f"m = {m} centres: the m x m sums and preconditioner ({format_bytes(square)}) exceed the budget "
                       f"({format_bytes(budget)}); a low-rank preconditioner of rank {q} from {s} sub-sampled centres "
                       f"({format_bytes(need)}) takes their place, with at most {PCG_MAX_PASSES} passes of n m = "
                       f"{n * m:.0e} kernel entries")
    return "pcg", (f"m = {m} >= {PCG_MIN_CENTRES} Nyström centres: {PCG_MAX_PASSES} passes of n m = {n * m:.0e} "
                   f"kernel entries cost less than the n m^2 = {n * m * m:.0e} multiply-adds of the sums; the m x m "
                   f"preconditioner ({format_bytes(square)}) fits the budget ({format_bytes(budget)})")


def choose_square_solver(n, m, s_prime, budget, backend):
    """``(solver, reason)`` of the square loss in a fit: ``"closed-form"`` or ``"pcg"``, by the cost rule.

    The parameters are those of :func:`cheaper_square_solver`, whose choice it is. A fit whose plan says
    ``"pcg"`` solves over its centres with the registered ``"pcg"`` solver
    (:mod:`skframe.models._fit_square`); where it cannot (sample weights, inputs that are not one dense array)
    the fit's reason says so and it runs the closed form.

    >>> solver, reason = choose_square_solver(10**6, 10**4, 10**4, 8 * 10**9, "numpy")
    >>> solver, reason.split(" Nyström")[0]
    ('pcg', 'm = 10000 >= 4000')
    """
    return cheaper_square_solver(n, m, s_prime, budget, backend)


#: the grown automatic size over the sqrt(n) rule's ``ceil(2 sqrt(n))`` (see :func:`grown_auto_size`)
PCG_AUTO_FACTOR = 4
#: the grown automatic size at most: its conjugate gradients cost at most about 6 times the closed form at m = 1000
PCG_AUTO_MAX = 10_000
#: share of the memory budget the grown size's m x m preconditioner may take
PCG_BUDGET_SHARE = 0.25
#: whether the automatic size grows past 1 000 (:func:`grown_auto_size`). Off: on ``nycflights13::flights``
#: (261 877 training rows, the same gamma) the closed form at m = 1 000 scored a test RMSE of 10.38 in 22 s,
#: conjugate gradients at the grown size of 4 096 centres 10.67 in 199 s (25 passes stopped at a relative
#: residual of 0.047 at the small lam the folds pick) and at 10 000 centres 10.43 in 470 s
#: (``benchmarks/out/many_centres_table_quiet.json``): more centres did not pay for their passes there
PCG_AUTO_GROW = False


def grown_auto_size(n, budget, backend):
    """``(m, reason)``: the automatic size of a square-loss fit over Nyström centres past the sqrt(n) rule's cap,
    or ``(None, why not)``.

    The sqrt(n) rule (``ceil(2 sqrt(n))``) is capped at 1 000 so that the closed form's ``n m^2`` sums stay
    cheap; it reaches the cap from n = 250 000. Conjugate gradients cost passes of ``n m`` kernel entries
    instead, so from there the rule grows to ``min(4 ceil(2 sqrt(n)), 10 000, n)`` centres (4 000 at n =
    250 000, 8 000 at n = 10^6), where the plan solves them by conjugate gradients: on the CPU, with the m x m
    preconditioner within a quarter of the budget (else the largest m that fits, when at least
    :data:`PCG_MIN_CENTRES`). With at most :data:`PCG_MAX_PASSES` passes, and a kernel entry costing about 25
    multiply-adds, the fit costs about ``m / 1600`` times the closed form's sums at m = 1 000: at most about 6
    times at 10 000 centres (``benchmarks/bench_many_centres_table.py`` measures it).

    Off unless :data:`PCG_AUTO_GROW` is set (see its note: more centres did not pay for their passes on the
    table measured).

    >>> grown_auto_size(10**6, 8 * 10**9, "numpy")  # PCG_AUTO_GROW is off
    (None, 'the automatic size does not grow past its cap (PCG_AUTO_GROW is off)')
    """
    rule = math.ceil(AUTO_FACTOR * math.sqrt(max(int(n), 0)))
    if not PCG_AUTO_GROW:
        return None, "the automatic size does not grow past its cap (PCG_AUTO_GROW is off)"
    if rule <= AUTO_MAX:
        return None, f"the sqrt(n) rule gives {rule} <= {AUTO_MAX} centres"
    if str(backend).lower() == "cupy":
        return None, "the GPU forms the m x m sums fast"
    m = min(PCG_AUTO_FACTOR * rule, PCG_AUTO_MAX, int(n))
    room = int(math.sqrt(PCG_BUDGET_SHARE * budget / 8))
    capped = "" if room >= m else f", capped at {room} by a quarter of the budget ({format_bytes(budget)})"
    m = min(m, room)
    if m < PCG_MIN_CENTRES:
        return None, (f"a quarter of the budget ({format_bytes(budget)}) holds the m x m preconditioner of {room} "
                      "centres")
    return m, (f"grown to min({PCG_AUTO_FACTOR} ceil({AUTO_FACTOR:g} sqrt(n)), {PCG_AUTO_MAX}) = {m} centres past the "
               f"rule's cap of {AUTO_MAX}{capped}: solved by conjugate gradients, about m/1600 = {m / 1600:.1f} x the "
               f"closed form's sums at m = {AUTO_MAX}")
