"""The plan's rule for a Newton step: form the Hessian, or apply it by conjugate gradients (Newton–CG).

A Newton step of the ``newton`` solver on n rows of r features with k outputs either forms the Hessian,
``n r^2 k (k + 1) / 2`` flops of weighted Gram products and an ``(r k)^3 / 3`` Cholesky factorisation, or
solves for the step by preconditioned conjugate gradients, :data:`NEWTON_CG_ITERATIONS` Hessian-vector
products of ``4 n r k`` flops each and a preconditioner of ``k (s r^2 + r^3 / 3)`` flops from ``s`` rows
(:mod:`skframe_solvers.newton_cg`). :func:`choose_newton_step` takes the cheaper by these counts, CG only
when it is at least :data:`NEWTON_CG_MARGIN` times cheaper (the formed Hessian is reused in Newton's
fast phase, which the counts leave out), and always the direct step when each pass recomputes the
features (a CG iteration would recompute them twice).

:func:`kept_block_dtype` decides the precision of the n x m kernel block a Newton fit keeps in memory (its
features ``Z = L P`` kept as two factors, :func:`skframe.compute.stream_problems.make_feature_problem`).
"""

from __future__ import annotations

from skframe.exceptions import InvalidParameterError

__all__ = ["NEWTON_CG_ITERATIONS", "NEWTON_CG_MARGIN", "NEWTON_MAX_DENSE", "NEWTON_PRECOND_PRODUCTS",
           "newton_precond_rows", "newton_step_flops", "choose_newton_step", "kept_block_dtype"]

#: conjugate-gradient iterations a Newton–CG step is counted with (``benchmarks/out/newton_cg.json``: the
#: subsampled preconditioner needs about 5 to 25 per step on the measured problems)
NEWTON_CG_ITERATIONS = 20
#: CG is chosen when the formed Hessian costs at least this many times the CG step
NEWTON_CG_MARGIN = 2.0
#: Hessian-vector products (in flops) the subsampled preconditioner's rows cost to form (:func:`newton_precond_rows`)
NEWTON_PRECOND_PRODUCTS = 25
#: largest ``r k`` whose (r k) x (r k) Hessian is formed (the ``newton`` solver's ``max_dense``)
NEWTON_MAX_DENSE = 3000


def newton_precond_rows(n, r):
    """Rows of the subsampled preconditioner: ``min(n, max(r, 1000, 4 n NEWTON_PRECOND_PRODUCTS / r))``, rows whose
    r x r Gram product costs :data:`NEWTON_PRECOND_PRODUCTS` Hessian-vector products (``4 n r`` flops each); the
    Gram product runs as BLAS ``syrk``, several times faster a flop than the memory-bound products. At small
    ``lam`` a thousand rows miss the small eigenvalues of the Hessian (``benchmarks/out/
    classification_million.json``, ``precond_rows``: at n = 1e5, r = 633, the warm-started solves at lam = 1e-7
    took 138 CG products with 1 000 rows, 43 with 4 000, 17 with this rule's 15 798; the path 308 s, 130 s, 105 s).

    >>> newton_precond_rows(20_000, 1000), newton_precond_rows(100_000, 633), newton_precond_rows(10**6, 1000)
    (2000, 15798, 100000)
    """
    return int(min(int(n), max(int(r), 1000, -(-4 * NEWTON_PRECOND_PRODUCTS * int(n) // max(int(r), 1)))))


def newton_step_flops(n, r, k):
    """``(direct, cg)``: the flops of one Newton step that forms the Hessian and of one Newton–CG step."""
    n, r, k = int(n), int(r), int(k)
    direct = n * r * r * k * (k + 1) / 2 + (r * k) ** 3 / 3
    cg = 4.0 * n * r * k * NEWTON_CG_ITERATIONS + k * (newton_precond_rows(n, r) * r * r + r ** 3 / 3)
    return float(direct), float(cg)


def choose_newton_step(n, r, k, *, kept=True, max_dense=NEWTON_MAX_DENSE):
    """``("direct" or "cg", reason)``: how a Newton step on n rows, r features and k outputs is computed.

    >>> choose_newton_step(2000, 100, 1)[0], choose_newton_step(200_000, 1000, 1)[0]
    ('direct', 'cg')
    >>> choose_newton_step(200_000, 1000, 1, kept=False)[0], choose_newton_step(1000, 1000, 10, kept=False)[0]
    ('direct', 'cg')
    """
    if int(r) * int(k) > max_dense:
        return "cg", f"r k = {int(r) * int(k)} > max_dense = {max_dense}: the (r k)^2 Hessian is not formed"
    if not kept:
        return "direct", ("the features are recomputed on every pass: one pass forms the Hessian, where each "
                          "conjugate-gradient iteration would take two")
    direct, cg = newton_step_flops(n, r, k)
    if direct >= NEWTON_CG_MARGIN * cg:
        return "cg", (f"forming the Hessian ({direct:.2g} flops a step) costs {direct / cg:.1f}x a preconditioned "
                      f"Newton-CG step ({cg:.2g} flops, {NEWTON_CG_ITERATIONS} Hessian-vector products)")
    return "direct", (f"forming the Hessian ({direct:.2g} flops a step) costs less than {NEWTON_CG_MARGIN:g}x a "
                      f"preconditioned Newton-CG step ({cg:.2g} flops)")


def kept_block_dtype(options=None):
    """``(dtype, reason)``: the precision (``"float32"`` or ``"float64"``) of the n x m kernel block ``L`` a Newton
    fit keeps, its features ``Z = L P`` kept as two factors (``ComputeOptions.kept_dtype``).

    ``"auto"`` keeps it in float32. The block is then computed in float32 (the Gaussian kernel's float32 blocks:
    relative error at most about ``2e-7 (1 + gamma ||x - y||^2)``), and the Newton solver reads it as it is,
    every product and sum in float64 (:class:`skframe.contract.problems.FactoredArrayProblem`): each pass reads
    half the bytes (the passes of a Newton–CG solve are bound by reading the block), the block takes half the
    memory, and the certified duality gap is that of the problem on the rounded kernel values, whose
    difference from float64's is far below the sketch's own approximation. At n = 10^6, d = 10, m = 1 000,
    10 classes (``benchmarks/out/classification_million_1e6.json``) the final solve took 33.5 s instead of
    41.8 s with the same Newton and CG steps, the same λ and the same test log-loss to four digits.
    ``"float64"`` keeps the block exact; ``options.dtype == "float32"`` makes every kernel block float32.

    >>> from skframe.options import ComputeOptions
    >>> kept_block_dtype(ComputeOptions())[0], kept_block_dtype(ComputeOptions(kept_dtype="float64"))[0]
    ('float32', 'float64')
    """
    dtype = str(getattr(options, "dtype", None) or "float64")
    kept = str(getattr(options, "kept_dtype", None) or "auto")
    if kept not in ("auto", "float64", "float32"):
        raise InvalidParameterError(f"kept_dtype={kept!r} is not a precision; use 'auto', 'float64' or 'float32'")
    if dtype == "float32":
        return "float32", "dtype='float32': every kernel block is float32"
    if kept != "auto":
        return kept, f"kept_dtype={kept!r} given"
    return "float32", ("auto: float32 (the solver's products and sums run in float64; half the bytes a pass reads "
                       "and half the memory; the gap is certified on the rounded kernel values)")
