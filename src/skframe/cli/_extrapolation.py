"""``skframe predict``'s note on predictions far outside the training targets' range, and ``--clip-range``.

The rule is the model's (:meth:`skframe.models.SketchedKernelRidge.extrapolation_report`); this module counts
its flags block by block, clips on request and prints one note on stderr.
"""

from __future__ import annotations

import typer

__all__ = ["RangeFlags"]


class RangeFlags:
    """Counts the predictions outside the model's widened training range over the blocks of one file.

    Parameters
    ----------
    est : fitted estimator
        Flags only for a model with a ``target_range_`` (regression); others pass through.
    clip : bool
        Clip each prediction to the training range (``--clip-range``) after flagging it.
    """

    def __init__(self, est, clip=False):
        self.est, self.clip, self.start, self.count, self.rows, self.values, self.rule = est, clip, 0, 0, [], [], ""
        self.active = getattr(est, "target_range_", None) is not None and hasattr(est, "extrapolation_report")

    def __call__(self, P):
        """Flag the block ``P`` (rows continue the previous blocks); the block, clipped with ``clip``."""
        if not self.active:
            return P
        from skframe.models._extrapolation import LISTED, clip_to_range, out_of_range  # lazy: NumPy

        flags = out_of_range(P, self.est.target_range_, start=self.start, listed=LISTED)
        self.start += int(P.shape[0])
        self.count += flags["count"]
        room = LISTED - len(self.rows)
        self.rows += flags["rows"][:room]
        self.values += flags["values"][:room]
        self.rule = f"{flags['rule']}: {flags['low'][0]:.4g} to {flags['high'][0]:.4g}"
        return clip_to_range(P, self.est.target_range_) if self.clip else P

    def note(self):
        """One stderr line when any prediction was flagged (rows counted from 1, the first data row)."""
        if not self.count:
            return
        shown = ", ".join(f"{r + 1} ({v:.4g})" for r, v in zip(self.rows, self.values))
        more = f" and {self.count - len(self.rows)} more" if self.count > len(self.rows) else ""
        done = "; clipped to the training range (--clip-range)" if self.clip else \
            " (--clip-range clips predictions to the training range)"
        typer.echo(f"note: {self.count} prediction(s) {self.rule}, rows {shown}{more}: far outside the training "
                   f"data; check those rows for data-entry errors{done}", err=True)
