"""What every fit of a skframe estimator shares: its steps, its clock and the record of an automatic λ.

:class:`skframe.models._fit.Fit` (the kernel ridge models and machines) and
:class:`skframe.models.structured._fit.StructuredFit` (the output kernel regressors) are both a
:class:`FitSteps`: built on validated data, they draw and build the training representation once
(``represent``), solve one λ (``solve``) or a path of them sharing that representation (``solve_path``),
choose ``lam="auto"`` (``choose_lam``), hand out a copy of the estimator fitted at one point of a path
(``fitted``: what the cross-validated λ paths of :mod:`skframe.model_selection` score) and run the whole
fit (``run``). What their problems differ in (one solver on sketched features; an ensemble of input and
output sketches) stays in the subclasses.
"""

from __future__ import annotations

import time

from skframe.contract.collections import n_items

__all__ = ["FitSteps"]


class FitSteps:
    """Base of the fits: the estimator, the rows, the clock, and the steps every fit offers.

    Attributes
    ----------
    estimator : estimator
        The estimator whose parameters the fit reads and whose fitted attributes it sets.
    n : int
        The number of training rows.
    t0 : float
        ``time.perf_counter()`` when the fit started (``fit_seconds_`` counts from it).
    """

    def _start(self, estimator, X, t0=None):
        """Record the estimator, the number of rows and the start of the clock (the first step of ``__init__``)."""
        self.estimator = estimator
        self.t0 = time.perf_counter() if t0 is None else t0
        self.n = n_items(X)

    def elapsed(self):
        """Seconds since the fit started."""
        return time.perf_counter() - self.t0

    @staticmethod
    def record_choice(est, info):
        """``est.fit_info_``: what ``lam="auto"`` (or ``gamma="auto"``) chose, or removed when this fit chose
        nothing (a previous automatic choice no longer describes it)."""
        if info:
            est.fit_info_ = info
        elif isinstance(getattr(est, "fit_info_", None), dict) and "lam" in est.fit_info_:
            del est.fit_info_

    # ------------------------------------------------------------------ the steps each fit implements
    def represent(self):
        """Draw the sketches and build the training representation, once; later calls return it."""
        raise NotImplementedError

    def solve(self, lam, *args):
        """The solution at one ``lam``."""
        raise NotImplementedError

    def solve_path(self, lams, *args):
        """The solutions of a λ path sharing one representation."""
        raise NotImplementedError

    def choose_lam(self, *args):
        """The λ of ``lam="auto"``."""
        raise NotImplementedError

    def fitted(self, lam, result, *args):
        """A copy of the estimator fitted at ``lam`` with the solution ``result`` of a path's point."""
        raise NotImplementedError

    def run(self):
        """Represent, solve the estimator's λ, store the fitted attributes; returns the estimator."""
        raise NotImplementedError
